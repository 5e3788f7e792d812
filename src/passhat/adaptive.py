"""Adaptive k: add runs round by round until the dataset interval is narrow enough
(`--until-width W`) or the paired verdict against a baseline is decided
(`--until-decided --baseline A`), with error controlled under optional stopping.

Looking at the data after every round and stopping when it looks good is optional
stopping: a 95 % interval checked at L looks misses more often than 5 %, a test at
0.05 checked at L looks rejects more often than 5 %. The rule here is planned
looks with Bonferroni alpha spending: the looks are fixed before the first run (k
at k0, k0 + step, ..., max-k: L of them) and each spends alpha / L. By the union
bound the chance that *any* look's interval misses (or that any look rejects a
true null) is at most alpha, so the interval and the verdict where it stopped keep
their 1 - alpha guarantee whatever the stopping rule did.

`--until-width` adds runs to every case each round. `--until-decided` adds runs only
to the *undecided* cases: those whose baseline runs disagree (some passed, some
failed). Which cases those are is fixed by the baseline before B's first run, so no
run of B chooses which cases get more runs of B: choosing by B's own runs (e.g. "stop
a case once A and B agree") biases B's per-case rates (optional stopping inside a
case) and measured 10-18 % A/A false positives at N = 100 on skewed difficulties.
The other cases keep the runs of the first look: the store records their own
requested k (`Store.hold_cases`), so they are not short. With cases at different k,
each look judges the mean of per-case rate differences (every case weighs the same);
weights that follow the runs would follow the allocation, which follows A's runs, and
bias the sign flip. `--all-cases` keeps the older rule (every case, compare's
run-weighted pass rate). See docs/numbers.md.

Pure decision functions (`schedule`, `width_look`, `decided_look`) and a thin
driver (`drive`) that takes the round as a callback, so the CLI, the tests and the
simulations run the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from passhat._lazy import lazy_import
from passhat.errors import InputError, MetricsError
from passhat.plain import plural
from passhat.stats import DEFAULT_RESAMPLES, Difference, Outcome, cluster_interval, decide

if TYPE_CHECKING:
    from typing import Unpack

    import numpy as np
    from numpy.typing import ArrayLike

    from passhat.accounting import Accounting
    from passhat.stats import Resampling
else:
    np = lazy_import("numpy")  # imported when a look is first computed: --help needs none

Mode = Literal["width", "decided"]
Spending = Literal["bonferroni", "obrien-fleming", "anytime"]
SPENDINGS: tuple[Spending, ...] = ("bonferroni", "obrien-fleming", "anytime")

RULES = {
    "bonferroni": "Bonferroni alpha spending over planned looks",
    "obrien-fleming": "O'Brien-Fleming-like alpha spending over planned looks",
    "anytime": "anytime-valid betting confidence sequence over each round's per-case results",
}
"""The stopping rule's name, as the report and JSON state it."""


@dataclass(frozen=True)
class Schedule:
    """The looks planned before the first run: the k at each, and the alpha each spends."""

    looks: tuple[int, ...]
    """Requested runs per case at each planned look, rising, the last being max-k."""
    confidence: float
    """Overall level, e.g. 0.95: every look together errs with at most 1 - this."""
    alphas: tuple[float, ...]
    """What each look spends; they sum to 1 - confidence (the union bound)."""
    spending: Spending = "bonferroni"

    @property
    def planned(self) -> int:
        """L, the number of planned looks."""
        return len(self.looks)

    def alpha_at(self, k: int) -> float:
        """The alpha the look at k spends."""
        return self.alphas[self.looks.index(k)]

    def confidence_at(self, k: int) -> float:
        """The level of the look at k's interval: 1 - its alpha."""
        return 1.0 - self.alpha_at(k)

    @property
    def anytime(self) -> bool:
        """The looks share no alpha: a confidence sequence holds at every look at once."""
        return self.spending == "anytime"

    def rule(self) -> str:
        """The rule in words."""
        if self.anytime:
            return (
                f"{RULES[self.spending]}: may stop after any round (k = "
                f"{', '.join(str(k) for k in self.looks)}), every look at the full "
                f"{self.confidence:g}, valid whenever it stops"
            )
        spent = ", ".join(f"{a:.3g}" for a in self.alphas)
        return (
            f"{RULES[self.spending]}: {plural(self.planned, 'look')} planned at k = "
            f"{', '.join(str(k) for k in self.looks)}, spending alpha {spent} "
            f"(sum {1.0 - self.confidence:g})"
        )


def spend(looks: tuple[int, ...], alpha: float, spending: Spending) -> tuple[float, ...]:
    """Each look's alpha. Bonferroni: alpha / L each. O'Brien-Fleming-like: the Lan-DeMets
    spending function a(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)) at the information
    fraction t = k / max-k, look i spending a(t_i) - a(t_{i-1}): little early, most at
    the end. Either way the alphas sum to alpha, so the union bound holds. Anytime:
    every look uses all of alpha (the confidence sequence needs no union bound)."""
    if spending == "anytime":
        return tuple(alpha for _ in looks)
    if spending == "bonferroni":
        return tuple(alpha / len(looks) for _ in looks)
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - alpha / 2.0)
    top = looks[-1]
    cumulative = [2.0 - 2.0 * normal.cdf(z / math.sqrt(k / top)) for k in looks]
    cumulative[-1] = alpha
    return tuple(b - a for a, b in zip([0.0, *cumulative[:-1]], cumulative, strict=True))


def schedule(
    start_k: int,
    max_k: int,
    step: int,
    confidence: float = 0.95,
    spending: Spending = "bonferroni",
) -> Schedule:
    """Looks at start_k, start_k + step, ... and max_k (the budget), planned up front."""
    if start_k < 1:
        raise InputError(f"-k is {start_k}; ask for at least 1 run per case")
    if step < 1:
        raise InputError(f"--k-step is {step}; add at least 1 run per case a round")
    if max_k < start_k:
        raise InputError(
            f"--max-k is {max_k} but the experiment already asks for "
            f"{plural(start_k, 'run')} per case; give --max-k of at least {start_k}"
        )
    if not 0.5 <= confidence < 1:
        raise InputError(f"confidence is {confidence}; give a level between 0.5 and 1")
    if spending not in SPENDINGS:
        raise InputError(f"--spending is {spending!r}; use one of {', '.join(SPENDINGS)}")
    looks = list(range(start_k, max_k + 1, step))
    if looks[-1] != max_k:
        looks.append(max_k)
    alphas = spend(tuple(looks), 1.0 - confidence, spending)
    return Schedule(tuple(looks), confidence, alphas, spending)


@dataclass(frozen=True)
class Look:
    """What one look saw and whether it stopped."""

    k: int
    """Requested runs per case at this look."""
    runs_counted: int
    """Counted runs (passed or failed) the look's figure rests on."""
    estimate: float
    """The pass rate (width mode) or B - A in pass rate (decided mode)."""
    low: float
    high: float
    """The look's interval at the look's own level, 1 - its alpha (`confidence`): in
    decided mode compare's sign-flip test inverted at that level, so it excludes 0
    exactly when the look decides."""
    p_value: float | None
    """compare's sign-flip p-value (decided mode); None in width mode."""
    outcome: Outcome | None
    """better / worse / none at the per-look alpha (decided mode); None in width mode."""
    stop: bool
    """This look ends the rounds."""
    method: str
    """How the interval was found."""
    runs_added: int | None = None
    """Runs recorded by this look's round (passed, failed or errored); None: not tracked."""
    counted_added: int | None = None
    """Of those, the counted ones (passed or failed)."""
    cases_run: int | None = None
    """Cases asked for this look's k (the undecided ones); None: every case."""
    halt: str | None = None
    """Why the rounds stopped here other than the rule: e.g. every new run errored."""
    confidence: float | None = None
    """The level of `low`/`high`: 1 - the look's alpha; None: not recorded (older records)."""


def halted(look: Look, runs_added: int, counted_added: int) -> Look:
    """The look with its round's runs; a round that recorded runs but counted none
    (every new run errored) ends the rounds: more rounds would spend the budget on
    the same errors. A round with nothing to run (all already recorded) goes on."""
    look = replace(look, runs_added=runs_added, counted_added=counted_added)
    if runs_added > 0 and counted_added == 0:
        why = (
            f"the round at k = {look.k} added {plural(runs_added, 'run')} and none was "
            f"counted ({'it' if runs_added == 1 else 'every one'} errored)"
        )
        return replace(look, stop=True, halt=why)
    return look


def undecided(baseline: Iterable[tuple[str, int, int]]) -> frozenset[str]:
    """The cases `--until-decided` adds runs to, from the baseline's (case, counted,
    passes): those whose counted runs disagree (0 < passes < counted). A case whose
    baseline runs all passed or all failed has little spread; a case with no counted
    baseline run is not in the comparison at all."""
    return frozenset(case for case, n, c in baseline if 0 < c < n)


def case_mean_difference(
    a: Iterable[tuple[str, int, int]],
    b: Iterable[tuple[str, int, int]],
    **resampling: Unpack[Resampling],
) -> Difference:
    """B - A in the mean of per-case pass rates over the cases counted on both sides
    (each case weighs the same, whatever its runs), with compare's paired bootstrap
    interval and sign-flip p-value. The statistic `--until-decided` judges when cases
    were asked different k."""
    from passhat.stats import paired_differences

    by_b = {case: (n, c) for case, n, c in b if n}
    pairs = [(n, c, *by_b[case]) for case, n, c in a if n and case in by_b]
    if len(pairs) < 2:
        raise InputError(
            f"a comparison needs at least 2 cases counted on both sides; have {len(pairs)}"
        )
    na, ca, nb, cb = zip(*pairs, strict=True)
    diffs = paired_differences(na, ca, nb, cb, 1, **resampling)
    return replace(diffs[1], label="mean of per-case pass rates")


def varied_k_notes(sides: Iterable[tuple[str, Accounting]]) -> tuple[str, ...]:
    """compare's note for a side whose cases an adaptive rule asked different k: its
    pass rate over runs weighs the cases run further more, and the rule chose them."""
    return tuple(
        f"{name}'s cases were asked different k by an adaptive rule ({a.k_least} to "
        f"{a.k_requested}): its pass rate over runs would weigh the cases run further "
        f"more, so the pass rate compared is the mean of per-case rates, each case once, "
        f"as the rule judged it (`passhat report` shows the stored verdict)"
        for name, a in sides
        if a.k_varies
    )


def width_look(plan: Schedule, k: int, runs: ArrayLike, passes: ArrayLike, width: float) -> Look:
    """The pass rate's interval at the per-look level; stop when narrower than `width`.

    `runs` and `passes` are the counted runs and passes of each case with a counted run.
    """
    n = np.asarray(runs, dtype=np.int64).ravel()
    last = k >= plan.looks[-1]
    if n.size < 2:  # every run of all but one case errored: no dataset interval yet
        method = f"no interval: {plural(int(n.size), 'case')} with counted runs, 2 needed"
        return Look(k, int(n.sum()), math.nan, 0.0, 1.0, None, None, last, method)
    interval = cluster_interval(n, passes, confidence=plan.confidence_at(k))
    return Look(
        k=k,
        runs_counted=int(n.sum()),
        estimate=interval.estimate,
        low=interval.low,
        high=interval.high,
        p_value=None,
        outcome=None,
        stop=interval.high - interval.low < width or last,
        method=interval.method,
        confidence=plan.confidence_at(k),
    )


def outcome_at(difference: Difference, alpha: float) -> Outcome:
    """better / worse when the sign-flip p-value is below `alpha` (the per-look share)."""
    if difference.p_value < alpha and difference.difference != 0:
        return "better" if difference.difference > 0 else "worse"
    return "none"


def decided_look(plan: Schedule, k: int, difference: Difference, runs_counted: int) -> Look:
    """compare's pass-rate difference judged at the look's alpha; stop when decided or at
    max-k. `difference` must carry the interval at the look's level (1 - its alpha), so
    the interval shown beside the verdict agrees with it: the look decides only when the
    p-value is below its alpha *and* that interval excludes 0."""
    level = plan.confidence_at(k)
    if not math.isclose(difference.confidence, level):
        raise MetricsError(
            f"the look at k = {k} judges at {level:g}; its difference was found at "
            f"{difference.confidence:g}"
        )
    outcome = outcome_at(difference, plan.alpha_at(k))
    if outcome != decide(difference):  # the interval, widened, does not exclude 0
        outcome = "none"
    return Look(
        k=k,
        runs_counted=runs_counted,
        estimate=difference.difference,
        low=difference.low,
        high=difference.high,
        p_value=difference.p_value,
        outcome=outcome,
        stop=outcome != "none" or k >= plan.looks[-1],
        method=difference.method,
        confidence=level,
    )


History = Sequence[tuple["ArrayLike", "ArrayLike"]]
"""Counted runs and passes per case (same order every look) at each look so far."""


def anytime_width_look(plan: Schedule, k: int, history: History, width: float) -> Look:
    """`--spending anytime`, `--until-width`: the confidence sequence's interval for the
    mean of these cases' pass rates; stop when narrower than `width` (or at max-k)."""
    from passhat.stats.anytime import pass_rate_sequence

    alpha = 1.0 - plan.confidence
    estimate, band = pass_rate_sequence(history, alpha)
    runs = int(np.asarray(history[-1][0]).sum())
    return Look(
        k=k,
        runs_counted=runs,
        estimate=estimate,
        low=band.low,
        high=band.high,
        p_value=None,
        outcome=None,
        stop=band.high - band.low < width or k >= plan.looks[-1],
        method=f"betting confidence sequence over {plural(band.observations, 'case-round')}",
        confidence=plan.confidence,
    )


def anytime_decided_look(
    plan: Schedule, k: int, base: tuple[ArrayLike, ArrayLike], history: History
) -> Look:
    """`--spending anytime`, `--until-decided`, the baseline fixed: B - A in the mean of
    per-case pass rates with an interval valid at every round; decided when it
    excludes 0."""
    from passhat.stats.anytime import difference_sequence

    estimate, low, high = difference_sequence(base, history, 1.0 - plan.confidence)
    method = "betting confidence sequence (B's rounds) + Hoeffding (A's runs)"
    return _anytime_verdict(plan, k, history, (estimate, low, high), method)


def anytime_paired_look(plan: Schedule, k: int, history_a: History, history_b: History) -> Look:
    """`--spending anytime`, `--until-decided` with the baseline re-run alongside B in
    every round: B - A in the mean of per-case pass rates, the interval the sequence
    over the per-case, per-round differences y_B - y_A gives at the full alpha (no term
    for a fixed baseline's error); decided when it excludes 0."""
    from passhat.stats.anytime import paired_sequence

    found = paired_sequence(history_a, history_b, 1.0 - plan.confidence)
    method = (
        "betting confidence sequence over paired per-round differences "
        "(the baseline re-run alongside B)"
    )
    return _anytime_verdict(plan, k, history_b, found, method)


def _anytime_verdict(
    plan: Schedule,
    k: int,
    history: History,
    found: tuple[float, float, float],
    method: str,
) -> Look:
    """The anytime look at k from B's history and (estimate, low, high): better / worse
    when the interval excludes 0; stop then, or at max-k."""
    estimate, low, high = found
    outcome: Outcome = "better" if low > 0 else "worse" if high < 0 else "none"
    return Look(
        k=k,
        runs_counted=int(np.asarray(history[-1][0]).sum()),
        estimate=estimate,
        low=low,
        high=high,
        p_value=None,
        outcome=outcome,
        stop=outcome != "none" or k >= plan.looks[-1],
        method=method,
        confidence=plan.confidence,
    )


def anytime_unreachable(
    plan: Schedule, base_runs: Sequence[int], *, rerun: bool = False
) -> str | None:
    """Why `--spending anytime` could never decide: even if B passed every run and A
    failed every one, the interval at max-k would still hold 0. Says what would work.
    With `rerun` the baseline is re-run alongside B (`base_runs`: one entry per case
    shared with B, its counted runs so far; every such case takes part)."""
    from passhat.stats.anytime import best_case_low, best_paired_low, fewest_cases

    alpha = 1.0 - plan.confidence
    counted = list(base_runs) if rerun else [n for n in base_runs if n > 0]
    if rerun:
        if best_paired_low(len(counted), plan.planned, alpha) > 0:
            return None
    elif best_case_low(counted, plan.planned, alpha) > 0:
        return None
    kept = [n for n in counted if n > 0]
    per_case = max(1, round(sum(kept) / len(kept))) if kept else plan.looks[0]
    needed = fewest_cases(per_case, plan.planned, alpha, rerun=rerun)
    more = (
        f"about {needed} cases"
        + ("" if rerun else f" (at {plural(per_case, 'baseline run')} each)")
        if needed is not None
        else "more cases than this check tries"
    )
    planned = _cases_to_reach(alpha / plan.planned, DEFAULT_RESAMPLES)
    whose = "shared with the baseline (re-run alongside B)" if rerun else "counted on the baseline"
    return (
        f"with {plural(len(counted), 'case')} {whose} the anytime rule "
        f"cannot decide within {plural(plan.planned, 'round')}, even if B passed every run "
        f"and A failed every one; it needs {more}, or more rounds (a larger --max-k or a "
        f"smaller --k-step), or planned looks (--spending bonferroni needs {planned} cases "
        f"for these looks)"
    )


def smallest_p(cases: int, resamples: int = DEFAULT_RESAMPLES) -> float:
    """The smallest p-value compare's sign flip can give over `cases` paired cases:
    2 / 2^G when every pattern is enumerated (2^G <= resamples), else 2 / (B + 1)
    (twice the smaller one-sided p-value)."""
    if cases < 63 and 2**cases <= resamples:
        return 2.0 / 2.0**cases
    return 2.0 / (resamples + 1.0)


def unreachable(plan: Schedule, cases: int, resamples: int = DEFAULT_RESAMPLES) -> str | None:
    """Why --until-decided could never decide with this many cases, or None."""
    fewest = smallest_p(cases, resamples)
    if fewest < max(plan.alphas):
        return None
    alpha = 1.0 - plan.confidence
    needed = _cases_to_reach(max(plan.alphas), resamples)
    head = (
        f"with {plural(cases, 'case')} the sign flip's smallest p-value is {fewest:.3g}, not below "
        f"any look's alpha (at most {max(plan.alphas):.3g}): no look can decide"
    )
    if fewest < alpha:  # one look, spending all of alpha, could
        return (
            f"{head}; this plan needs {needed} cases, or plan one look (--max-k equal to the "
            f"first look's k), whose alpha {alpha:g} these cases can reach"
        )
    return (
        f"{head}, and no plan of looks can: even one look at alpha {alpha:g} needs "
        f"{_cases_to_reach(alpha, resamples)} cases ({needed} for this plan); add cases, or "
        f"run a fixed k and read `passhat compare`'s interval instead of a verdict"
    )


def _cases_to_reach(alpha: float, resamples: int) -> int:
    """The fewest paired cases whose sign flip can give a p-value below `alpha`."""
    cases = 2
    while smallest_p(cases, resamples) >= alpha and cases < 64:
        cases += 1
    return cases


def drive(plan: Schedule, look_at: Callable[[int], Look]) -> tuple[Look, ...]:
    """Run the planned looks in order, `look_at(k)` raising k, running and judging;
    stop at the first look that says stop. Never looks beyond the plan."""
    seen: list[Look] = []
    for k in plan.looks:
        look = look_at(k)
        seen.append(look)
        if look.stop:
            break
    return tuple(seen)


@dataclass(frozen=True)
class Adaptive:
    """The adaptive rounds as the report and JSON state them."""

    mode: Mode
    goal: float | str
    """The width W asked for (width mode) or the baseline's name (decided mode)."""
    plan: Schedule
    looks: tuple[Look, ...]
    runs_spent: int
    """Runs recorded during these rounds (passed, failed or errored)."""
    runs_before: int
    """Runs the experiment held before the first round."""
    undecided: int | None = None
    """Cases the rounds added runs to (decided mode, undecided cases only); None: every case."""
    cases: int = 0
    """Cases of the experiment."""
    baseline_rerun: bool | None = None
    """Anytime rule, decided mode: the baseline was re-run alongside B in every round
    (True) or kept fixed (False); None: another rule, or width mode."""
    baseline_note: str | None = None
    """How the baseline was treated, in words (re-run, or fixed and why, with what
    re-running it would buy)."""
    baseline_runs_spent: int = 0
    """Runs of the baseline recorded during these rounds (re-run alongside B)."""

    @property
    def target(self) -> str:
        """What was asked, in words."""
        if isinstance(self.goal, float):
            return f"pass-rate interval narrower than {self.goal:g}"
        return f"a decided verdict against baseline {self.goal}"

    @property
    def reason(self) -> str:
        """Why the rounds stopped."""
        last = self.looks[-1]
        if last.halt is not None:
            return f"stopped: {last.halt}"
        if isinstance(self.goal, float) and last.high - last.low < self.goal:
            return f"interval narrower than {self.goal:g} at k = {last.k}"
        if self.mode == "decided" and last.outcome not in (None, "none"):
            return f"decided at k = {last.k}: B is {last.outcome}"
        return f"budget spent: max-k = {self.plan.looks[-1]} reached, not " + (
            "narrow enough" if self.mode == "width" else "decided"
        )

    @property
    def runs_to(self) -> str:
        """Which cases the rounds added runs to, in words."""
        if self.undecided is None:
            return "every case"
        return (
            f"undecided cases only ({self.undecided} of {self.cases}: those whose baseline "
            f"runs disagree); the others keep k = {self.plan.looks[0]}"
        )

    def lines(self) -> list[str]:
        """The summary in plain lines (model output never appears here)."""
        return record_lines(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data: what `--adaptive-json` writes and the store keeps."""
        return {
            "mode": self.mode,
            "target": self.target,
            "width": self.goal if isinstance(self.goal, float) else None,
            "baseline": self.goal if isinstance(self.goal, str) else None,
            "rule": RULES[self.plan.spending],
            "spending": self.plan.spending,
            "rule_text": self.plan.rule(),
            "confidence": self.plan.confidence,
            "alpha_per_look": list(self.plan.alphas),
            "anytime": self.plan.anytime,
            "planned_looks": list(self.plan.looks),
            "looks_taken": len(self.looks),
            "runs_to": self.runs_to,
            "statistic": None
            if self.mode == "width"
            else "mean of per-case pass rates (each case weighs the same), each round's "
            "runs paired with the baseline's runs of the same round"
            if self.baseline_rerun
            else "mean of per-case pass rates (each case weighs the same)"
            if self.undecided is not None or self.plan.anytime
            else "pass rate over runs (compare's)",
            "undecided_cases": self.undecided,
            "cases": self.cases,
            "stopped": self.reason,
            "runs_spent": self.runs_spent,
            "runs_before": self.runs_before,
            "baseline_rerun": self.baseline_rerun,
            "baseline_note": self.baseline_note,
            "baseline_runs_spent": self.baseline_runs_spent,
            "looks": [
                {
                    "k": x.k,
                    "alpha": self.plan.alpha_at(x.k),
                    "runs_counted": x.runs_counted,
                    "runs_added": x.runs_added,
                    "counted_added": x.counted_added,
                    "cases_run": x.cases_run,
                    "estimate": None if math.isnan(x.estimate) else x.estimate,
                    "low": x.low,
                    "high": x.high,
                    "confidence": x.confidence,
                    "width": None if math.isnan(x.estimate) else x.high - x.low,
                    "p_value": x.p_value,
                    "outcome": x.outcome,
                    "stop": x.stop,
                    "halt": x.halt,
                    "method": x.method,
                }
                for x in self.looks
            ],
        }


def record_lines(record: Mapping[str, Any]) -> list[str]:
    """An adaptive record (`Adaptive.to_dict`, as stored) in plain lines: the rule, why
    it stopped, the runs it spent and each look. Used at the end of `run` / `resume` and
    by `report`, so a later report states the rule used and the runs it spent."""
    width = record["mode"] == "width"
    out = [
        f"adaptive k ({record['target']}): {record['stopped']}",
        f"rule: {record['rule_text']}",
        f"runs added to: {record.get('runs_to') or 'every case'}",
        *([f"judged on: {record['statistic']}"] if record.get("statistic") else []),
        *([f"baseline: {record['baseline_note']}"] if record.get("baseline_note") else []),
        f"looks taken: {record['looks_taken']} of {len(record['planned_looks'])}; runs spent: "
        f"{record['runs_spent']} (the experiment held {record['runs_before']} before)"
        + (
            f", and {plural(record['baseline_runs_spent'], 'new run')} of the baseline"
            if record.get("baseline_rerun")
            else ""
        ),
    ]
    for i, look in enumerate(record["looks"], 1):
        k = look["k"]
        alpha = look.get("alpha") or 0.0
        if look["estimate"] is None:
            out.append(f"  look {i}: k = {k}, no figure: {look['method']}")
        elif width:
            out.append(
                f"  look {i}: k = {k}, pass rate {look['estimate']:.1%} "
                f"[{look['low']:.1%}, {look['high']:.1%}] ({level(1.0 - alpha)} interval), "
                f"width {look['high'] - look['low']:.3f}, "
                f"{plural(look['runs_counted'], 'run')} counted"
            )
        else:
            outcome = look["outcome"]
            judged = (
                "anytime-valid"
                if look["p_value"] is None
                else f"p = {look['p_value']:.3g} against {alpha:.4g}"
            )
            out.append(
                f"  look {i}: k = {k}, B - A {look['estimate'] * 100:+.1f} pts"
                f"{_decided_interval(look)}, {judged}: "
                f"{'no difference yet' if outcome == 'none' else outcome}"
            )
        if look.get("halt"):
            out.append(f"    {look['halt']}")
    return out


def level(confidence: float) -> str:
    """An interval's level in words: `95%`, `98.75%`, `99.45%`."""
    return f"{confidence * 100:.4g}%"


def _decided_interval(look: Mapping[str, Any]) -> str:
    """` [-12.0, -3.1] pts (98.75% interval)`: the look's interval at its own level, or
    nothing for a record stored before looks kept their level (its interval was at 95 %
    while the look judged at its own alpha: shown beside the verdict it could disagree)."""
    if look.get("confidence") is None:
        return ""
    return (
        f" [{look['low'] * 100:+.1f}, {look['high'] * 100:+.1f}] pts "
        f"({level(look['confidence'])} interval)"
    )
