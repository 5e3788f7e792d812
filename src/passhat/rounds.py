"""The adaptive rounds of `evaluate` / `resume` (`until_width`, `until_decided`).

The options are checked here, the looks are planned by `passhat.adaptive.schedule`,
and each round raises the experiment's k in the store (as `resume -k` does; with
`until_decided`, for the undecided cases only, the others held at their k by
`Store.hold_cases`) and runs exactly the runs that are missing (the runner's own
plan), so a crash or kill mid-round loses nothing and counts nothing twice. The
record of the rounds is stored with the experiment (`Store.add_adaptive`).

Messages name the command-line options (`--until-width`...); the Python keyword of
each is the same name in snake case.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from passhat.accounting import Accounting
from passhat.adaptive import (
    SPENDINGS,
    Adaptive,
    Look,
    Mode,
    Schedule,
    Spending,
    anytime_decided_look,
    anytime_unreachable,
    anytime_width_look,
    case_mean_difference,
    decided_look,
    drive,
    halted,
    schedule,
    undecided,
    unreachable,
    width_look,
)
from passhat.errors import InputError, MetricsError
from passhat.records import ExperimentRecord
from passhat.store import Store


@dataclass(frozen=True)
class Rounds:
    """Adaptive k: add runs round by round until the pass rate's interval is narrower
    than `width`, or until the verdict against `baseline` is decided; at most `max_k`
    runs per case. Checked when made (`rounds()` checks the command's options first,
    naming them)."""

    width: float | None = None
    """Stop once the pass rate's interval is narrower than this (a fraction, 0-1)."""
    baseline: str | None = None
    """Stop once compare's verdict against this stored experiment is decided."""
    max_k: int | None = None
    """Budget: runs per case at most. Default: 4 x the first k."""
    k_step: int | None = None
    """Runs per case added each round. Default: the first k."""
    json_path: Path | None = None
    """Where the CLI also writes the rounds' record as JSON (the library writes nothing)."""
    spending: Spending = "bonferroni"
    """How the looks share alpha: bonferroni (alpha / L each), obrien-fleming, or
    anytime (a confidence sequence: every case each round, valid wherever it stops)."""
    all_cases: bool = False
    """--until-decided adds runs to every case (the older rule), not the undecided only."""

    def __post_init__(self) -> None:
        if (self.width is None) == (self.baseline is None):
            raise InputError(
                "adaptive rounds need width= (until the interval is narrower) or baseline= "
                "(until the verdict against it is decided), one of them"
            )
        if self.width is not None and not 0 < self.width <= 1:
            raise InputError(f"width is {self.width:g}; give a fraction between 0 and 1")
        if self.spending not in SPENDINGS:
            raise InputError(f"spending is {self.spending!r}; use one of {', '.join(SPENDINGS)}")
        if self.all_cases and self.baseline is None:
            raise InputError("all_cases is for baseline= (until decided); drop it")

    def check(self, cases: int) -> None:
        """Refuse, before anything runs, a width asked of fewer than 2 cases."""
        if self.width is not None and cases < 2:
            raise InputError(
                f"--until-width needs a dataset interval, which needs at least 2 cases; "
                f"this experiment has {cases} (drop --case or add cases)"
            )

    def resolved(self, store: Store, experiment: ExperimentRecord) -> Rounds:
        """The baseline named by its id, looked up and checked (same suite, not the
        experiment itself) before anything runs: `--baseline latest` is the experiment
        before this run's, and a wrong name runs nothing."""
        if self.baseline is None:
            return self
        base = _baseline(store, self.baseline, experiment)
        if self.spending == "anytime":  # refused before the experiment is even stored
            _check_anytime(self.plan(experiment.k_requested), _counts(store, base), experiment)
        return replace(self, baseline=base.id)

    def check_decidable(self, plan: Schedule, cases: int) -> None:
        """Refuse --until-decided rounds that could never decide (too few cases). The
        anytime rule's check needs the baseline's runs: `adapt` makes it before any run."""
        if self.baseline is not None and not plan.anytime:
            why = unreachable(plan, cases)
            if why is not None:
                raise InputError(f"--until-decided: {why}")

    def plan(self, start_k: int) -> Schedule:
        step = self.k_step or start_k
        return schedule(start_k, self.max_k or 4 * start_k, step, spending=self.spending)


def rounds(
    width: float | None,
    until_decided: bool,
    baseline: str | None,
    max_k: int | None,
    k_step: int | None,
    json_path: Path | None,
    spending: str = "bonferroni",
    all_cases: bool = False,
) -> Rounds | None:
    """The adaptive options, checked; None when no adaptive mode was asked for."""
    if spending not in SPENDINGS:
        raise InputError(f"--spending is {spending!r}; use one of {', '.join(SPENDINGS)}")
    if width is not None and until_decided:
        raise InputError("give --until-width or --until-decided, not both")
    if until_decided and baseline is None:
        raise InputError(
            "--until-decided needs --baseline EXPERIMENT: the stored experiment to compare with"
        )
    if baseline is not None and not until_decided:
        raise InputError("--baseline is for --until-decided; add --until-decided or drop it")
    if width is not None and not 0 < width <= 1:
        raise InputError(
            f"--until-width is {width:g}; give the interval's full width as a fraction "
            "between 0 and 1, e.g. 0.1 for 10 points"
        )
    if all_cases and not until_decided:
        raise InputError("--all-cases is for --until-decided; add --until-decided or drop it")
    if width is None and not until_decided:
        extra = [
            name
            for name, value in (
                ("--max-k", max_k),
                ("--k-step", k_step),
                ("--adaptive-json", json_path),
                ("--spending", None if spending == "bonferroni" else spending),
            )
            if value is not None
        ]
        if extra:
            raise InputError(f"{extra[0]} is for --until-width or --until-decided; add one")
        return None
    return Rounds(width, baseline, max_k, k_step, json_path, spending, all_cases)


def _check_anytime(
    plan: Schedule, base_counts: list[tuple[str, int, int]], experiment: ExperimentRecord
) -> None:
    """Refuse anytime rounds that no data could decide, saying what would work."""
    kept = frozenset(experiment.case_ids)
    why = anytime_unreachable(plan, [n for c, n, _ in base_counts if c in kept])
    if why is not None:
        raise InputError(f"--until-decided --spending anytime: {why}")


def _baseline(store: Store, ref: str, experiment: ExperimentRecord) -> ExperimentRecord:
    from passhat.stats import check_suites

    base = store.experiment(ref)
    if base.id == experiment.id:
        raise InputError(
            f"--baseline {ref} is the experiment being run; give the one to compare with"
        )
    check_suites(base.suite_hash, experiment.suite_hash)
    if not any(status != "errored" for _, _, status in store.statuses(base.id)):
        raise InputError(
            f"--baseline {ref} has no counted run (passed or failed) to compare with; "
            f"resume it or give another experiment"
        )
    return base


def _accounting(store: Store, experiment: ExperimentRecord) -> Accounting:
    """The experiment's accounting from each run's status alone (streamed): a look of
    an adaptive round at 100,000 runs does not read their scores and tool calls."""
    from passhat.accounting import account

    statuses = store.statuses(experiment.id)
    return account(statuses, experiment.k_requested, experiment.case_ids, experiment.case_k)


def _counts(store: Store, experiment: ExperimentRecord) -> list[tuple[str, int, int]]:
    """(case, counted runs, passes) of every planned case."""
    return [(c.case, c.counted, c.passes) for c in _accounting(store, experiment).cases]


def _raise_k(
    store: Store, current: ExperimentRecord, k: int, open_cases: frozenset[str] | None
) -> ExperimentRecord:
    """Ask k runs of every case (`open_cases` None) or of the open cases only, the
    others keeping the runs asked of them so far."""
    if k <= current.k_requested:
        return current
    if open_cases is None:
        store.set_k(current.id, k)
    else:
        held = {c: current.k_of(c) for c in current.case_ids if c not in open_cases}
        store.hold_cases(current.id, k, held)
    return store.experiment(current.id)


def adapt(
    store: Store,
    experiment: ExperimentRecord,
    chosen: Rounds,
    execute: Callable[[ExperimentRecord], None],
) -> tuple[ExperimentRecord, Adaptive]:
    """Run the planned looks: raise k, run what is missing, look; stop when told. The
    record (rule, looks, stop reason, runs spent) is kept with the experiment."""
    chosen.check(len(experiment.case_ids))
    plan = chosen.plan(experiment.k_requested)
    base_counts: list[tuple[str, int, int]] | None = None
    base_name = ""
    open_cases: frozenset[str] | None = None
    if chosen.baseline is not None:
        base = _baseline(store, chosen.baseline, experiment)
        base_name = base.name or base.id
        base_counts = _counts(store, base)
        if plan.anytime:
            _check_anytime(plan, base_counts, experiment)
        elif not chosen.all_cases:
            open_cases = undecided(base_counts) & frozenset(experiment.case_ids)
    runs_before = store.recorded_total(experiment.id)
    current = experiment
    history: list[tuple[list[int], list[int]]] = []

    def look_at(k: int) -> Look:
        nonlocal current
        current = _raise_k(store, current, k, open_cases)
        before = _tally(store, current)
        execute(current)
        after = _tally(store, current)
        cases_run = None if open_cases is None else len(open_cases)
        if plan.anytime:
            look = _anytime(store, current, plan, k, chosen, base_counts, history)
        else:
            look = _judge(store, current, plan, k, chosen, base_counts)
        look = replace(look, cases_run=cases_run)
        look = halted(look, after[0] - before[0], after[1] - before[1])
        if open_cases is not None and not open_cases and not look.stop:
            why = (
                "no case is undecided: in none do the baseline's counted runs disagree "
                "(some passed, some failed)"
            )
            look = replace(look, stop=True, halt=why)
        return look

    looks = drive(plan, look_at)
    goal: float | str = chosen.width if chosen.width is not None else base_name
    spent = store.recorded_total(current.id) - runs_before
    mode: Mode = "width" if chosen.width is not None else "decided"
    undecided_n = None if open_cases is None else len(open_cases)
    result = Adaptive(
        mode, goal, plan, looks, spent, runs_before, undecided_n, len(current.case_ids)
    )
    store.add_adaptive(current.id, result.to_dict())
    return current, result


def _tally(store: Store, experiment: ExperimentRecord) -> tuple[int, int]:
    """Runs recorded and runs counted so far (an errored run run again is one run)."""
    statuses = [status for _, _, status in store.statuses(experiment.id)]
    return len(statuses), sum(1 for s in statuses if s != "errored")


def _anytime(
    store: Store,
    current: ExperimentRecord,
    plan: Schedule,
    k: int,
    chosen: Rounds,
    base_counts: list[tuple[str, int, int]] | None,
    history: list[tuple[list[int], list[int]]],
) -> Look:
    """The look at k under the anytime rule: this round's per-case counts join the
    history the confidence sequence runs over (cases in the experiment's order)."""
    counts = _counts(store, current)
    history.append(([n for _, n, _ in counts], [c for _, _, c in counts]))
    if base_counts is None:
        assert chosen.width is not None
        return anytime_width_look(plan, k, history, chosen.width)
    by_case = {case: (n, c) for case, n, c in base_counts}
    base = (
        [by_case.get(case, (0, 0))[0] for case, _, _ in counts],
        [by_case.get(case, (0, 0))[1] for case, _, _ in counts],
    )
    return anytime_decided_look(plan, k, base, history)


def _judge(
    store: Store,
    current: ExperimentRecord,
    plan: Schedule,
    k: int,
    chosen: Rounds,
    base_counts: list[tuple[str, int, int]] | None,
) -> Look:
    """The look at k: the width of the pass rate's interval, or the verdict against the
    baseline (the mean of per-case rates when cases are asked different k)."""
    from passhat.stats import compare

    counts = _counts(store, current)
    counted = sum(n for _, n, _ in counts)
    level = plan.confidence_at(k)  # the interval shown beside the look's verdict agrees with it
    if base_counts is None:
        assert chosen.width is not None
        runs = [n for _, n, _ in counts if n]
        passes = [c for _, n, c in counts if n]
        return width_look(plan, k, runs, passes, chosen.width)
    try:
        if chosen.all_cases:
            base = store.experiment(chosen.baseline or "")
            a = _accounting(store, base)
            b = _accounting(store, current)
            difference = compare(a, b, confidence=level).pass_at_1
        else:
            difference = case_mean_difference(base_counts, counts, confidence=level)
    except (InputError, MetricsError) as error:  # e.g. every run of B errored so far
        message = "B has no counted run yet" if counted == 0 else str(error)
        last = k >= plan.looks[-1]
        return Look(k, counted, math.nan, -1.0, 1.0, None, "none", last, message)
    return decided_look(plan, k, difference, counted)
