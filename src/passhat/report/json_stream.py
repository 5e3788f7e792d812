"""`report --json` of a large experiment, written as its runs are read, never all held.

The accounting and every total come from the runs counted per case in SQL
(`Store.tallies`, then `digest.tallied`: what the terminal report of a large experiment
reads). The runs themselves are then read a stretch of whole cases at a time
(`Store.summaries(span=...)`, its first case to its last): each stretch's items are written and let go, and only
its tool counts, run indices and token counts are kept (4 bytes each a run where they
fit) for the tools and usage parts that follow the items. At 1,000,000 runs the summaries
of every run, held at once, were ~300 MB of the 500 MB `report --json` peaked at.

The bytes are `experiment_json`'s (tests/test_report_json_stream.py compares them on
stores with errored, retried, limited, missing and unplanned runs and unkind text).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
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
    # made at their whole size at once: grown, each would be copied, twice held, as it
    # grew; 4 bytes a run where the values fit (`_put`), 8 only where they do not
    indices = array("i", [0]) * read.runs
    tokens_in = array("i", [0]) * read.runs
    tokens_out = array("i", [0]) * read.runs
    counts_keys = array("I", [0]) * read.runs  # each run's tool counts, by first appearance
    counts: dict[int, Mapping[str, tuple[int, int]]] = {}  # each distinct value, by key
    keys: dict[int, int] = {}  # the key of each value by id (the values kept alive)
    start = 0
    opening = b',"items":['
    for stretch in stretches(runs_of):
        runs = store.summaries(experiment.id, decode_items=False, span=(stretch[0], stretch[-1]))
        columns = run_columns(runs)
        items = "".join(item_json(runs, columns))[1:-1]  # the stretch's items, no brackets
        if items:
            yield opening + items.encode()
            opening = b","
        at = slice(start, start + len(runs))
        start = at.stop
        indices = _put(indices, at, columns.indices)
        tokens_in = _put(tokens_in, at, list(map(_INPUT_TOKENS, runs)))
        tokens_out = _put(tokens_out, at, list(map(_OUTPUT_TOKENS, runs)))
        values = list(map(_TOOL_COUNTS, runs))  # runs share values: each kept once, alive
        ids = list(map(id, values))
        for key, value in dict(zip(ids, values, strict=True)).items():
            if key not in keys:
                keys[key] = len(counts)
                counts[len(counts)] = value
        counts_keys[at] = array("I", map(keys.__getitem__, ids))
    yield b"]" if opening == b"," else opening + b"]"
    for column in (indices, tokens_in, tokens_out, counts_keys):  # all read (a snapshot's)
        del column[start:]
    del keys
    sizes = {case: n for case, (n, _, _) in runs_of.items()}
    yield b',"tools":'
    for piece in tool_json_of(counts_keys, counts, experiment.tools, sizes):
        yield piece.encode()
    del counts_keys, counts
    yield b',"usage":'
    for piece in usage_pieces(sizes, indices, tokens_in, tokens_out):
        yield piece.encode()
    yield from json_tail(read.errored, limited_dicts(read.limited), read.retry, unseen)


def _put(column: array[int], at: slice, values: Sequence[int]) -> array[int]:
    """`column` with `values` at `at`: the same array, or, when a value does not fit in its
    4 bytes (a count of 2**31 or more), a copy of it at 8 bytes a value."""
    try:
        column[at] = array(column.typecode, values)
    except OverflowError:
        column = array("q", column)
        column[at] = array("q", values)
    return column
