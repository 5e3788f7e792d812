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
from collections.abc import Callable, Sequence
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
    anytime_paired_look,
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
from passhat.plain import plural
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
    rerun_baseline: bool = True
    """--until-decided with spending anytime: re-run the baseline alongside this
    experiment in every round and bet on the paired per-round differences (False, or a
    baseline that cannot be re-run, e.g. an imported one: the baseline stays fixed and
    its own error is bounded once, which costs power)."""

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
        if not self.rerun_baseline and (self.baseline is None or self.spending != "anytime"):
            raise InputError(
                "rerun_baseline=False is for baseline= with spending='anytime' (the other "
                "rules never re-run the baseline); drop it"
            )

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
            plan = self.plan(experiment.k_requested)
            rerun = self.fixed_why(base) is None
            _check_anytime(plan, _counts(store, base), experiment, rerun=rerun)
        return replace(self, baseline=base.id)

    def fixed_why(self, base: ExperimentRecord) -> str | None:
        """Why the anytime rule keeps the baseline `base` fixed (None: it re-runs it
        alongside this experiment in every round). Only for spending anytime."""
        if self.spending != "anytime" or self.baseline is None:
            return "only the anytime rule re-runs the baseline"
        if not self.rerun_baseline:
            return "--no-rerun-baseline"
        if base.kind != "run":
            return f"it was made by {base.kind!r}, not run by passhat: it has no agent to run"
        return None

    def reruns(self, store: Store) -> ExperimentRecord | None:
        """The (resolved) baseline when these rounds re-run it, else None: the caller
        builds its agent, as `resume` would, before anything runs."""
        if self.baseline is None or self.spending != "anytime":
            return None
        base = store.experiment(self.baseline)
        return base if self.fixed_why(base) is None else None

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
    rerun_baseline: bool = True,
) -> Rounds | None:
    """The adaptive options, checked; None when no adaptive mode was asked for."""
    if spending not in SPENDINGS:
        raise InputError(f"--spending is {spending!r}; use one of {', '.join(SPENDINGS)}")
    if not rerun_baseline and not (until_decided and spending == "anytime"):
        raise InputError(
            "--no-rerun-baseline is for --until-decided --spending anytime (the other rules "
            "never re-run the baseline); drop it"
        )
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
    return Rounds(width, baseline, max_k, k_step, json_path, spending, all_cases, rerun_baseline)


def _check_anytime(
    plan: Schedule,
    base_counts: list[tuple[str, int, int]],
    experiment: ExperimentRecord,
    *,
    rerun: bool,
) -> None:
    """Refuse anytime rounds that no data could decide, saying what would work."""
    kept = frozenset(experiment.case_ids)
    runs = [n for c, n, _ in base_counts if c in kept]
    why = anytime_unreachable(plan, runs, rerun=rerun)
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
    execute_baseline: Callable[[ExperimentRecord], None] | None = None,
    announce: Callable[[Sequence[str]], None] | None = None,
) -> tuple[ExperimentRecord, Adaptive]:
    """Run the planned looks: raise k, run what is missing, look; stop when told. The
    record (rule, looks, stop reason, runs spent) is kept with the experiment.

    `execute_baseline` runs the baseline's missing runs: given when `chosen.reruns`
    names the baseline (the anytime rule re-runs it alongside this experiment, its k
    rising by the same step every round). `announce` hears the plan before any run."""
    chosen.check(len(experiment.case_ids))
    plan = chosen.plan(experiment.k_requested)
    base_counts: list[tuple[str, int, int]] | None = None
    base: ExperimentRecord | None = None
    open_cases: frozenset[str] | None = None
    if chosen.baseline is not None:
        base = _baseline(store, chosen.baseline, experiment)
        base_counts = _counts(store, base)
        if plan.anytime:
            rerun = chosen.fixed_why(base) is None
            _check_anytime(plan, base_counts, experiment, rerun=rerun)
        elif not chosen.all_cases:
            open_cases = undecided(base_counts) & frozenset(experiment.case_ids)
    again = _Rerun(store, base, experiment, plan) if execute_baseline is not None else None
    if again is None and base is not None and chosen.reruns(store) is not None:
        raise InputError(f"the baseline {base.name or base.id} is to be re-run: give its runner")
    note = _baseline_note(chosen, plan, base, base_counts, experiment)
    if announce is not None:
        announce(_plan_lines(plan, experiment, open_cases, note, again))
    runs_before = store.recorded_total(experiment.id)
    current = experiment
    history: list[tuple[list[int], list[int]]] = []

    def look_at(k: int) -> Look:
        nonlocal current
        current = _raise_k(store, current, k, open_cases)
        before = _tally(store, current)
        execute(current)
        after = _tally(store, current)
        if again is not None and execute_baseline is not None:
            again.round(k, execute_baseline)
        cases_run = None if open_cases is None else len(open_cases)
        if again is not None:
            look = again.look(_counts(store, current), k, history)
        elif plan.anytime:
            counts = _counts(store, current)
            look = _anytime(plan, k, chosen.width, counts, base_counts, history)
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

    if again is not None:
        with store.lease(again.base.id):  # no other process adds to the baseline meanwhile
            looks = drive(plan, look_at)
    else:
        looks = drive(plan, look_at)
    goal: float | str = chosen.width if chosen.width is not None else _name(base)
    spent = store.recorded_total(current.id) - runs_before
    mode: Mode = "width" if chosen.width is not None else "decided"
    undecided_n = None if open_cases is None else len(open_cases)
    result = Adaptive(
        mode,
        goal,
        plan,
        looks,
        spent,
        runs_before,
        undecided_n,
        len(current.case_ids),
        baseline_rerun=None if note is None else again is not None,
        baseline_note=note,
        baseline_runs_spent=0 if again is None else again.spent(),
    )
    store.add_adaptive(current.id, result.to_dict())
    return current, result


def _name(experiment: ExperimentRecord | None) -> str:
    return "" if experiment is None else experiment.name or experiment.id


class _Rerun:
    """The baseline re-run alongside the experiment (the anytime rule's default): its
    k rises by the experiment's step every round on the cases both hold (its other
    cases keep their runs), and each look pairs the two sides' runs of the round."""

    def __init__(
        self,
        store: Store,
        base: ExperimentRecord | None,
        experiment: ExperimentRecord,
        plan: Schedule,
    ) -> None:
        if base is None or not plan.anytime:
            raise InputError("only the anytime rule, with a baseline, re-runs the baseline")
        self.store = store
        self.base = base
        self.plan = plan
        self.shared = frozenset(experiment.case_ids) & frozenset(base.case_ids)
        self.first = {case: base.k_of(case) for case in base.case_ids}
        self.before = store.recorded_total(base.id)
        self.history: list[tuple[list[int], list[int]]] = []

    def new_runs(self) -> int:
        """The most runs of the baseline the rounds can add (every look taken)."""
        return len(self.shared) * (self.plan.looks[-1] - self.plan.looks[0])

    def round(self, k: int, execute: Callable[[ExperimentRecord], None]) -> None:
        """The baseline's runs for the look at k: none at the first look (its runs so
        far are that round's), then the same step as the experiment's on shared cases."""
        extra = k - self.plan.looks[0]
        if extra <= 0:
            return
        top = self.base.k_requested + extra
        targets = {
            case: kept + (extra if case in self.shared else 0) for case, kept in self.first.items()
        }
        held = {case: want for case, want in targets.items() if want < top}
        self.store.hold_cases(self.base.id, top, held)
        execute(self.store.experiment(self.base.id))

    def look(
        self,
        counts: list[tuple[str, int, int]],
        k: int,
        history: list[tuple[list[int], list[int]]],
    ) -> Look:
        """The look at k: both sides' per-case counts join the histories (the
        experiment's case order; a case the baseline lacks has no runs on its side)."""
        base = {
            case: (n, c) for case, n, c in _counts(self.store, self.store.experiment(self.base.id))
        }
        history.append(([n for _, n, _ in counts], [c for _, _, c in counts]))
        self.history.append(
            (
                [base.get(case, (0, 0))[0] for case, _, _ in counts],
                [base.get(case, (0, 0))[1] for case, _, _ in counts],
            )
        )
        return anytime_paired_look(self.plan, k, self.history, history)

    def spent(self) -> int:
        return self.store.recorded_total(self.base.id) - self.before


def _baseline_note(
    chosen: Rounds,
    plan: Schedule,
    base: ExperimentRecord | None,
    base_counts: list[tuple[str, int, int]] | None,
    experiment: ExperimentRecord,
) -> str | None:
    """How the anytime rule treats the baseline, in words; None for other rules."""
    if base is None or base_counts is None or not plan.anytime:
        return None
    name = _name(base)
    why = chosen.fixed_why(base)
    if why is None:
        return (
            f"{name} is re-run alongside this experiment in every round (its k rising by "
            f"the same step on the cases both hold); each look bets on the per-case "
            f"differences of the round's runs, at the full {plan.confidence:g}"
        )
    from passhat.stats.anytime import halving_runs, hoeffding

    kept = frozenset(experiment.case_ids)
    runs = [n for case, n, _ in base_counts if case in kept and n > 0]
    penalty = hoeffding(runs, (1.0 - plan.confidence) / 2.0)
    return (
        f"{name} stays fixed ({why}): its own error is bounded once, +-{penalty:.3f} "
        f"(Hoeffding over its {plural(sum(runs), 'counted run')}), and every interval is "
        f"that much wider; {plural(halving_runs(runs), 'more baseline run')} (4 x each "
        f"case's) would halve it to +-{penalty / 2.0:.3f}, and re-running the baseline "
        f"alongside (passhat's default for a baseline it ran) removes it"
    )


def _plan_lines(
    plan: Schedule,
    experiment: ExperimentRecord,
    open_cases: frozenset[str] | None,
    note: str | None,
    again: _Rerun | None,
) -> list[str]:
    """The plan in words, before any run: the rule, how the baseline is treated, and
    the most runs the rounds can cost (the baseline's new runs counted)."""
    top = plan.looks[-1]
    most = sum(
        top if open_cases is None or case in open_cases else experiment.k_of(case)
        for case in experiment.case_ids
    )
    cost = f"cost: at most {plural(most, 'run')} of this experiment (k up to {top} a case)"
    if again is not None:
        extra = again.new_runs()
        cost += (
            f" and {plural(extra, 'new run')} of the baseline {_name(again.base)} "
            f"({most + extra:,} in all)"
        )
    lines = [f"adaptive rounds: {plan.rule()}"]
    if note is not None:
        lines.append(f"baseline: {note}")
    return [*lines, cost]


def _tally(store: Store, experiment: ExperimentRecord) -> tuple[int, int]:
    """Runs recorded and runs counted so far (an errored run run again is one run)."""
    statuses = [status for _, _, status in store.statuses(experiment.id)]
    return len(statuses), sum(1 for s in statuses if s != "errored")


def _anytime(
    plan: Schedule,
    k: int,
    width: float | None,
    counts: list[tuple[str, int, int]],
    base_counts: list[tuple[str, int, int]] | None,
    history: list[tuple[list[int], list[int]]],
) -> Look:
    """The look at k under the anytime rule: this round's per-case counts (cases in the
    experiment's order) join the history the confidence sequence runs over."""
    history.append(([n for _, n, _ in counts], [c for _, _, c in counts]))
    if base_counts is None:
        assert width is not None
        return anytime_width_look(plan, k, history, width)
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
