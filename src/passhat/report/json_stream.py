"""`report --json` for a pipe, written as the runs are read, never all held.

The accounting and every total come from the runs counted per case in SQL
(`Store.tallies`, then `digest.tallied`: what the terminal report of a large experiment
reads). Of the runs themselves only a few columns are read: every run's index, token
counts and tool counts from the covering index `run_summaries_cases`
(`Store.run_numbers`: 4 bytes each a run where they fit, and each distinct tool-count
value once), then the per-item results of the counted runs a stretch of whole cases at
a time (`Store.counted_items`), but for the cases whose items text the store keeps
(`Store.kept_items`, filled when a writer finished: taken as it is, their runs' items
not read): each stretch's items are written and let go. No run's summary is made
(`Store.summaries` made one for every run, 13 columns each: at 100,000 runs of 10,000
cases that read cost more than a scan of the rows, and at 1,000,000 runs the summaries
held at once were ~300 MB).

The figures and cases are the text the store keeps for the experiment
(`Store.kept_summary`, filled at a run's end) where it keeps one: the intervals are not
computed again, nor numpy imported. The bytes are `experiment_json`'s
(tests/test_report_json_stream.py compares them on stores with errored, retried,
limited, missing and unplanned runs and unkind text).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any

from passhat.accounting import Accounting
from passhat.limits import limited_dicts
from passhat.records import ExperimentRecord
from passhat.report.digest import Digest
from passhat.report.json_frame import (
    KEPT_FORECAST_M,
    json_head,
    json_tail,
    kept_summary_format,
)
from passhat.report.parts_json import CaseValues, case_item_json, tool_json_of, usage_pieces
from passhat.store import RunNumbers, Store

STRETCH_RUNS = 5_000
"""Runs read at a time, at most (whole cases: a case of more runs is read alone)."""
STRETCH_CASES = 1_000
"""Cases read at a time, at most (each is a bound value of the query)."""


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


def kept_or_read(
    store: Store, experiment_id: str, part: list[tuple[str, int]]
) -> Iterator[CaseValues | str]:
    """The items of a stretch of cases (each case id with its count of counted runs, in
    the store's order), case by case: a case's text where the store keeps it
    (`Store.kept_items`), else its counted runs' items, read for a run of such cases
    at a time (`Store.counted_items`)."""
    if not part:
        return
    kept = store.kept_items(experiment_id, part[0][0], part[-1][0])
    unkept: list[tuple[str, int]] = []
    for case, n in part:
        text = kept.get(case)
        if text is None:
            unkept.append((case, n))
            continue
        if unkept:
            yield from store.counted_items(experiment_id, unkept)
            unkept = []
        yield text
    if unkept:
        yield from store.counted_items(experiment_id, unkept)


def streamed_json(
    store: Store,
    experiment: ExperimentRecord,
    counted: tuple[Digest, Accounting],
    numbers: RunNumbers,
    *,
    forecast_m: int = 10,
    unseen: Mapping[str, Any] | None = None,
) -> Iterator[bytes]:
    """`experiment_json`'s pieces (no prices) from `counted` (`digest.tallied` of the
    store's tallies, every case listed) and the runs read column by column: `numbers`,
    every run's index, token counts and tool counts (`Store.run_numbers`, read before
    any JSON: a damaged tool count is said first, and values the plain pieces of
    `experiment_json` do not take are found), then the counted runs' items a stretch of
    cases at a time (`Store.counted_items`). Read the store in one `Store.snapshot`, so
    that every read agrees with the tallies."""
    read, accounting = counted
    runs_of = read.case_usage or {}
    # the figures and cases as the store keeps them for these runs: numpy not imported
    kept = (
        store.kept_summary(experiment.id, kept_summary_format())
        if forecast_m == KEPT_FORECAST_M
        else None
    )
    yield from json_head(experiment, accounting, forecast_m, read.replayed, kept)
    yield b',"items":'
    counted_of = {c.case: c.counted for c in accounting.cases}
    parts = [
        [(case, counted_of[case]) for case in stretch if counted_of.get(case)]
        for stretch in stretches(runs_of)
    ]
    cases = chain.from_iterable(kept_or_read(store, experiment.id, part) for part in parts)
    for piece in case_item_json(cases):
        yield piece.encode()
    sizes = {case: n for case, (n, _, _) in runs_of.items()}
    indices, tokens_in, tokens_out, keys, counts = numbers
    yield b',"tools":'
    for piece in tool_json_of(keys, counts, experiment.tools, sizes):
        yield piece.encode()
    yield b',"usage":'
    for piece in usage_pieces(sizes, indices, tokens_in, tokens_out, runs_of):
        yield piece.encode()
    yield from json_tail(read.errored, limited_dicts(read.limited), read.retry, unseen)
