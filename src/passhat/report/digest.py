"""One pass over an experiment's runs: what the terminal report reads of every run.

The terminal report's parts (the accounting, item stability, tool use, tokens, the
errored and retried runs, the replayed count) each read a few fields of every run.
At 100,000 runs each separate pass cost 5 to 10 ms even in C (`map`, `compress`),
together more than the statistics; `digest` reads each run once and keeps what the
parts need: per case its statuses (what `Ledger.of` takes), per distinct tool-count
value how many runs share it, the errored runs, and a few totals. The parts then work
per case or per distinct value. `report --json` reads columns instead
(`analysis.run_columns`): it lists every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

from passhat._gc import without_gc
from passhat.accounting import duplicate_run

if TYPE_CHECKING:
    from passhat.records import RunRecord, RunSummary

    ReportRun = RunRecord | RunSummary


@dataclass(frozen=True)
class Digest:
    """What the terminal report needs of the runs, read in one pass (`digest`)."""

    statuses: dict[str, dict[int, str]]
    """Per case (the planned ones first, in plan order), run index -> status: what
    `Ledger.of` closes into the accounting (as `experiment_accounting` collects it)."""
    order: list[str]
    """Cases in the order their runs come."""
    ordered: bool
    """The runs come by case (ascending), then by rising run index, as a store gives
    them: each case's runs are then one stretch, in `order`."""
    graded: list[str]
    """Cases with a counted run that has graded items, in the order their runs come."""
    errored: list[ReportRun]
    """The errored runs, in the order they come."""
    retried: bool
    """Some run is not a first attempt (`resume --errored` ran it again)."""
    replayed: int
    """Runs whose model answers came from a cassette."""
    input_tokens: int
    output_tokens: int
    tool_values: dict[int, Mapping[str, tuple[int, int]]]
    """Each distinct tool-count value by id (runs share them, `Store.summaries`), in the
    order they first come."""
    tool_runs: dict[int, int]
    """How many runs have each of them."""

    def runs_of(self, runs: Sequence[ReportRun], cases: Iterable[str]) -> Iterable[ReportRun]:
        """The runs of `cases` (in run order): slices of `runs` when they are ordered."""
        wanted = set(cases)
        if not self.ordered:
            return (r for r in runs if r.case_id in wanted)
        return chain.from_iterable(self._stretches(runs, wanted))

    def _stretches(
        self, runs: Sequence[ReportRun], wanted: set[str]
    ) -> Iterator[Sequence[ReportRun]]:
        start = 0
        left = len(wanted)
        for case in self.order:  # the listed cases come first: stop at the last one
            if not left:
                return
            size = len(self.statuses[case])
            if case in wanted:
                yield runs[start : start + size]
                left -= 1
            start += size


@without_gc
def digest(runs: Iterable[ReportRun], planned: Iterable[str] = ()) -> Digest:
    """Read every run once; the same (case, run) twice is an error (`duplicate_run`)."""
    statuses: dict[str, dict[int, str]] = {case: {} for case in planned}
    order: list[str] = []
    graded: dict[str, None] = {}
    errored: list[ReportRun] = []
    tool_values: dict[int, Mapping[str, tuple[int, int]]] = {}
    tool_runs: dict[int, int] = {}
    ordered = True
    retried = False
    replayed = input_tokens = output_tokens = 0
    previous: str | None = None  # the case of the run before
    case_runs: dict[int, str] = {}
    last = 0
    graded_last: str | None = None
    counts_of: Mapping[str, tuple[int, int]] | None = None  # tool counts of the run before
    streak = 0  # ...and of how many runs in a row before it
    for run in runs:  # 100,000 runs: each field read once, no call per run
        case_id = run.case_id
        index = run.run_index
        if case_id != previous:  # a case's runs begin (once, when they come by case)
            case_runs = statuses.setdefault(case_id, {})
            if previous is not None and case_id < previous:
                ordered = False
            order.append(case_id)
            previous = case_id
        elif index < last:
            ordered = False
        last = index
        if index in case_runs:
            raise duplicate_run(case_id, index)
        status = case_runs[index] = run.status
        if status == "errored":
            errored.append(run)
        elif case_id is not graded_last and run.graded_items:
            graded[case_id] = None
            graded_last = case_id
        counts = run.tool_counts
        if counts is counts_of:
            streak += 1
        else:  # runs share values, often run after run: counted by the streak
            if counts_of is not None:
                _count(tool_values, tool_runs, counts_of, streak)
            counts_of, streak = counts, 1
        if run.attempt != 1:
            retried = True
        if run.model_source == "replayed":
            replayed += 1
        input_tokens += run.input_tokens
        output_tokens += run.output_tokens
    if counts_of is not None:
        _count(tool_values, tool_runs, counts_of, streak)
    if not ordered:  # a case may come in several stretches: name it once
        order = list(dict.fromkeys(order))
    return Digest(
        statuses=statuses,
        order=order,
        ordered=ordered,
        graded=list(graded),
        errored=errored,
        retried=retried,
        replayed=replayed,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        tool_values=tool_values,
        tool_runs=tool_runs,
    )


def _count(
    values: dict[int, Mapping[str, tuple[int, int]]],
    runs: dict[int, int],
    counts: Mapping[str, tuple[int, int]],
    streak: int,
) -> None:
    key = id(counts)
    if key in runs:
        runs[key] += streak
    else:
        values[key] = counts
        runs[key] = streak


@dataclass(frozen=True)
class ToolTally:
    """How one tool was used across the completed runs of every case, tallied: how many
    runs made each number of calls. What the terminal shows when runs are too many to
    list one by one (a `ToolUse` of `tool_profile(per_case=False)`, counted instead of
    listed)."""

    tool: str
    runs: int
    """Completed runs looked at."""
    runs_calling: int
    """Runs that called the tool at least once."""
    tally: dict[int, int]
    """Calls in a run -> how many runs made that many."""
    errors: int
    """Calls that ended in an error."""
    case: None = None
    """No case: the whole experiment."""


def tool_tallies(read: Digest, tools: Iterable[str] = ()) -> list[ToolTally]:
    """Per tool (every known tool, called or not, then the others in the order runs
    first name them): the same rows as `tool_profile(runs, tools, per_case=False)` for
    ordered runs, made per distinct tool-count value instead of per run."""
    names = dict.fromkeys(tools)
    for counts in read.tool_values.values():
        names.update(dict.fromkeys(counts))
    runs = sum(read.tool_runs.values())
    if not runs:
        return []
    zero = (0, 0)
    out = []
    for tool in names:
        tally: dict[int, int] = {}
        errors = 0
        for key, counts in read.tool_values.items():
            calls, failed = counts.get(tool, zero)
            shared = read.tool_runs[key]
            tally[calls] = tally.get(calls, 0) + shared
            errors += failed * shared
        out.append(ToolTally(tool, runs, runs - tally.get(0, 0), tally, errors))
    return out
