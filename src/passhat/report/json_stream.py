"""`report --json` of a large experiment, written as its runs are read, never all held.

The accounting and every total come from the runs counted per case in SQL
(`Store.tallies`, then `digest.tallied`: what the terminal report of a large experiment
reads). The runs themselves are then read a stretch of whole cases at a time
(`Store.summaries(cases=...)`): each stretch's items are written and let go, and only
its tool counts, run indices and token counts are kept (a machine word or two per run)
for the tools and usage parts that follow the items. At 1,000,000 runs the summaries
of every run, held at once, were ~300 MB of the 500 MB `report --json` peaked at.

The bytes are `experiment_json`'s (tests/test_report_json_stream.py compares them on
stores with errored, retried, limited, missing and unplanned runs and unkind text).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from operator import attrgetter
from typing import Any

from passhat.accounting import Accounting
from passhat.analysis import run_columns
from passhat.limits import limited_dicts
from passhat.records import ExperimentRecord
from passhat.report.digest import Digest
from passhat.report.experiment import json_head, json_tail
from passhat.report.parts_json import item_json, tool_json_of, usage_pieces
from passhat.store import Store

STRETCH_RUNS = 5_000
"""Runs read at a time, at most (whole cases: a case of more runs is read alone)."""
STRETCH_CASES = 1_000
"""Cases read at a time, at most (each is a bound value of the query)."""

_INPUT_TOKENS = attrgetter("input_tokens")
_OUTPUT_TOKENS = attrgetter("output_tokens")
_TOOL_COUNTS = attrgetter("tool_counts")


def stretches(runs_of: Mapping[str, tuple[int, int, int]]) -> Iterator[list[str]]:
    """The cases of `runs_of` (case -> (runs, input, output tokens), in the store's order)
    in stretches of at most `STRETCH_RUNS` runs and `STRETCH_CASES` cases (one case at
    least)."""
    stretch: list[str] = []
    runs = 0
    for case, (n, _, _) in runs_of.items():
        if stretch and (runs + n > STRETCH_RUNS or len(stretch) == STRETCH_CASES):
            yield stretch
            stretch, runs = [], 0
        stretch.append(case)
        runs += n
    if stretch:
        yield stretch


def streamed_json(
    store: Store,
    experiment: ExperimentRecord,
    counted: tuple[Digest, Accounting],
    *,
    forecast_m: int = 10,
    unseen: Mapping[str, Any] | None = None,
) -> Iterator[bytes]:
    """`experiment_json`'s pieces (no prices) from `counted` (`digest.tallied` of the
    store's tallies, every case listed) and the runs read stretch by stretch. The store's
    case ids must be text and its run indices and token counts integers
    (`Store.plain_columns`), as the plain pieces of `experiment_json` take them; read it
    in one `Store.snapshot`, so the stretches agree with the tallies."""
    read, accounting = counted
    runs_of = read.case_usage or {}
    yield from json_head(experiment, accounting, forecast_m, read.replayed)
    # made at their whole size at once: grown, each would be copied, twice held, as it grew
    indices = array("q", [0]) * read.runs
    tokens_in = array("q", [0]) * read.runs
    tokens_out = array("q", [0]) * read.runs
    counts_ids = array("Q", [0]) * read.runs  # the id of each run's tool counts
    counts: dict[int, Mapping[str, tuple[int, int]]] = {}
    start = 0
    opening = b',"items":['
    for stretch in stretches(runs_of):
        runs = store.summaries(experiment.id, decode_items=False, cases=stretch)
        columns = run_columns(runs)
        items = "".join(item_json(runs, columns))[1:-1]  # the stretch's items, no brackets
        if items:
            yield opening + items.encode()
            opening = b","
        at = slice(start, start + len(runs))
        start = at.stop
        indices[at] = array("q", columns.indices)
        tokens_in[at] = array("q", map(_INPUT_TOKENS, runs))
        tokens_out[at] = array("q", map(_OUTPUT_TOKENS, runs))
        values = list(map(_TOOL_COUNTS, runs))  # runs share values: each kept once, alive
        counts_ids[at] = array("Q", map(id, values))
        counts.update(zip(map(id, values), values, strict=True))
    yield b"]" if opening == b"," else opening + b"]"
    for column in (indices, tokens_in, tokens_out, counts_ids):  # all read (a snapshot's)
        del column[start:]
    sizes = {case: n for case, (n, _, _) in runs_of.items()}
    yield b',"tools":'
    for piece in tool_json_of(counts_ids, counts, experiment.tools, sizes):
        yield piece.encode()
    del counts_ids, counts
    yield b',"usage":'
    for piece in usage_pieces(sizes, indices, tokens_in, tokens_out):
        yield piece.encode()
    yield from json_tail(read.errored, limited_dicts(read.limited), read.retry, unseen)
