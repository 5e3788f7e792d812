"""One pass over an experiment's runs: what the terminal report reads of every run.

The terminal report's parts (the accounting, item stability, tool use, tokens, the
errored and retried runs, the replayed count) each read a few fields of every run.
At 100,000 runs each separate pass cost 5 to 10 ms even in C (`map`, `compress`),
together more than the statistics; `digest` reads each run once and keeps what the
parts need: per case its statuses (what `Ledger.of` takes), per distinct tool-count
value how many runs share it, the errored runs, and a few totals. The parts then work
per case or per distinct value. `report --json` reads columns instead
(`analysis.run_columns`): it lists every run.

A large experiment's terminal report reads no run at all but the errored ones and those
of the cases it lists: `tallied` makes the same digest, and the accounting, from the
runs counted per case in SQL (`Store.tallies`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from passhat._gc import without_gc
from passhat.accounting import MAX_K, Accounting, CaseAccount, MissingRuns, duplicate_run
from passhat.limits import LIMIT

if TYPE_CHECKING:
    from passhat.records import ExperimentRecord, RunRecord, RunSummary
    from passhat.store import Tallies

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
    runs: int = 0
    """Runs read."""
    model_calls: bool = True
    """Some run got a model answer, or none is recorded yet (`parts.made_model_calls`)."""
    limited: dict[str, list[int]] = field(default_factory=dict)
    """Per case (in the order runs come), the counted runs a limit stopped."""
    case_usage: dict[str, tuple[int, int, int]] | None = None
    """Per case with a run, its (runs, input tokens, output tokens), when counted in SQL
    (`tallied`; `runs_of` then has no runs to read)."""
    retry: dict[str, Any] | None = None
    """`experiment.retry_summary` of the runs, when counted in SQL (`tallied`)."""

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
    replayed = input_tokens = output_tokens = count = 0
    calls = False
    limited: dict[str, list[int]] = {}
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
        count += 1
        if status == "errored":
            errored.append(run)
        else:
            if case_id is not graded_last and run.graded_items:
                graded[case_id] = None
                graded_last = case_id
            if run.error_type == LIMIT:
                limited.setdefault(case_id, []).append(index)
        counts = run.tool_counts
        if counts is counts_of:
            streak += 1
        else:  # runs share values, often run after run: counted by the streak
            if counts_of is not None:
                _count(tool_values, tool_runs, counts_of, streak)
            counts_of, streak = counts, 1
        if run.attempt != 1:
            retried = True
        source = run.model_source
        if source == "replayed":
            replayed += 1
        if not calls and (source is not None or run.input_tokens):
            calls = True
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
        runs=count,
        model_calls=calls or not count,
        limited=limited,
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


def pass_rate_dict(runs: int, counted: int, passed: int) -> dict[str, Any]:
    """A group of runs' pass rate as `report --json` writes it (`retried` and
    `first_attempt` of `experiment.retry_summary`)."""
    return {
        "runs": runs,
        "counted": counted,
        "passed": passed,
        "pass_rate": passed / counted if counted else None,
    }


TALLIED_K = 5
"""Runs a case is asked for from which a terminal report counts them in SQL (`tallied`):
counting per case pays when cases have several runs (at 10,000 cases x 10, 21 % of
`passhat report`'s CPU); at one run a case it reads as many rows as there are runs
and makes one account per run as well (100,000 x 1: 11 % more CPU than reading them)."""


def tallied(
    tallies: Tallies, experiment: ExperimentRecord, listed: int
) -> tuple[Digest, Accounting] | None:
    """The digest and the accounting of runs counted per case in SQL (`Store.tallies`):
    what `digest` and `Ledger.close` make of the runs themselves, for a report that
    lists at most `listed` cases. None when the plan cannot hold the runs (k out of
    range, a run beyond its case's k: the runs are then read, and the error said as it
    is of them), and when the report would list every case or run (it then reads them)."""
    k = experiment.k_requested
    if not 1 <= k <= MAX_K:
        return None
    held = experiment.case_k or {}
    errored_at = tallies.errored_at
    counted = {c.case_id: c for c in tallies.cases}
    # cases recorded at the same indices share one MissingRuns, as `Ledger.close` has them
    shared: dict[tuple[int, ...], MissingRuns] = {}
    gapless: dict[tuple[int, ...], MissingRuns] = {}  # runs 1..n: by (k, n)
    accounts = []
    for case in dict.fromkeys(chain(experiment.case_ids, counted)):
        asked = held.get(case, k)
        c = counted.get(case)
        if c is None:
            runs = passes = errored = 0
            missing = _missing(shared, (asked,), asked, ())
        elif c.last > asked:
            return None
        else:
            runs, passes, errored = c.runs, c.passed, c.runs - c.passed - c.failed
            if c.gapless:
                missing = _missing(gapless, (asked, runs), asked, range(1, runs + 1))
            else:
                present = tallies.indices[case]
                missing = _missing(shared, (asked, *present), asked, present)
        indices = tuple(sorted(errored_at.get(case, ()))) if errored else ()
        accounts.append(CaseAccount(case, asked, runs, runs - errored, passes, indices, missing))
    runs = sum(c.runs for c in tallies.cases)
    if min(len(accounts), len(counted), runs) <= listed:
        return None
    tools: dict[int, Mapping[str, tuple[int, int]]] = {
        id(counts): counts for counts, _ in tallies.tool_counts
    }
    read = Digest(
        statuses={},
        order=list(counted),
        ordered=True,
        graded=tallies.graded,
        errored=list(tallies.errored),
        retried=any(c.retried for c in tallies.cases),
        replayed=sum(c.replayed for c in tallies.cases),
        input_tokens=sum(c.input_tokens for c in tallies.cases),
        output_tokens=sum(c.output_tokens for c in tallies.cases),
        tool_values=tools,
        tool_runs={id(counts): n for counts, n in tallies.tool_counts},
        runs=runs,
        model_calls=not tallies.cases or any(c.model_calls for c in tallies.cases),
        limited=tallies.limited,
        case_usage={c.case_id: (c.runs, c.input_tokens, c.output_tokens) for c in tallies.cases},
        retry=_retry(tallies.retried),
    )
    return read, Accounting(k_requested=k, cases=tuple(accounts))


def _missing(
    shared: dict[tuple[int, ...], MissingRuns],
    key: tuple[int, ...],
    asked: int,
    present: Sequence[int],
) -> MissingRuns:
    missing = shared.get(key)
    if missing is None:
        missing = shared[key] = MissingRuns(asked, present)
    return missing


def _retry(
    counts: tuple[tuple[int, int, int, int], tuple[int, int, int]] | None,
) -> dict[str, Any] | None:
    if counts is None or not counts[0][0]:
        return None
    (again, earlier, again_counted, again_passed), first = counts
    return {
        "runs_retried": again,
        "earlier_attempts": earlier,
        "retried": pass_rate_dict(again, again_counted, again_passed),
        "first_attempt": pass_rate_dict(*first),
    }
