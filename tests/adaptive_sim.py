"""Simulations of the adaptive modes through the public decision functions, shared by
tests/test_adaptive.py (small, seeded) and benchmarks/bench_adaptive.py (larger)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from passhat.adaptive import (
    Look,
    Schedule,
    anytime_decided_look,
    anytime_paired_look,
    anytime_width_look,
    drive,
    outcome_at,
    schedule,
    undecided,
    width_look,
)
from passhat.stats import compare_counts, paired_differences

RunsTo = Literal["all", "undecided", "agree"]
"""Which cases get more runs of B each round: every case (compare's run-weighted pass
rate judged); the undecided ones, whose baseline runs disagree (what --until-decided
does: mean of per-case rates judged); or, for contrast, the tempting rule that stops a
case once A's and B's runs all agree (judged like `undecided`), which lets B's own
runs pick which cases get more of them."""


@dataclass(frozen=True)
class Decided:
    """--until-decided over many simulated experiments."""

    replications: int
    declared: int
    """Experiments where some look declared B better or worse."""
    mean_k: float
    """Mean k of B where the rounds stopped."""
    mean_runs: float = 0.0
    """Mean runs of B recorded over all cases where the rounds stopped."""


def until_decided(
    plan: Schedule,
    *,
    replications: int,
    cases: int = 30,
    prior: tuple[float, float] = (0.5, 0.5),
    k_a: int = 3,
    shift: float = 0.0,
    spend: bool = True,
    resamples: int = 400,
    seed: int = 13,
    runs_to: RunsTo = "all",
) -> Decided:
    """A fixed at k_a runs per case; B grows along `plan`, its per-case p = A's + shift
    (clipped to [0, 1]); shift 0 is A/A. `spend=False` is the naive rule: alpha at
    every look, which the planned looks replace. `runs_to`: see `RunsTo`."""
    rng = np.random.default_rng(seed)
    declared = 0
    stopped_k = 0
    runs = 0
    top = plan.looks[-1]
    first = plan.looks[0]
    for r in range(replications):
        p = rng.beta(*prior, cases)
        na = np.full(cases, k_a)
        ca = rng.binomial(k_a, p)
        draws = rng.random((cases, top)) < np.clip(p + shift, 0.0, 1.0)[:, None]
        running = np.ones(cases, dtype=bool)
        if runs_to == "undecided":
            names = undecided(
                (str(i), int(n), int(c)) for i, (n, c) in enumerate(zip(na, ca, strict=True))
            )
            running = np.array([str(i) in names for i in range(cases)])
        nb = np.full(cases, first)
        k_stop = top
        for k in plan.looks:
            nb = np.where(running, k, nb)
            cb = np.cumsum(draws, axis=1)[np.arange(cases), nb - 1]
            if runs_to == "all":
                difference = compare_counts(na, ca, nb, cb, resamples=resamples, seed=r)[0][0]
            else:
                difference = paired_differences(na, ca, nb, cb, 1, resamples=resamples, seed=r)[1]
            alpha = plan.alpha_at(k) if spend else 1.0 - plan.confidence
            if outcome_at(difference, alpha) != "none":
                declared += 1
                k_stop = k
                break
            if runs_to == "agree":
                running &= ~(((ca == 0) & (cb == 0)) | ((ca == na) & (cb == nb)))
            if not running.any():  # no case gets more runs: the rounds end here
                k_stop = k
                break
        stopped_k += k_stop
        runs += int(nb.sum())
    return Decided(replications, declared, stopped_k / replications, runs / replications)


@dataclass(frozen=True)
class Width:
    """--until-width over many simulated experiments."""

    replications: int
    covered: int
    """Experiments whose interval at the stopping look held the true mean pass rate."""
    stopped_early: int
    """Experiments that stopped before max-k."""
    mean_k: float
    covered_population: int = 0
    """Anytime rule: stops whose interval held the population's mean pass rate (the
    prior's mean), which it does not promise to hold."""


def until_width(
    plan: Schedule,
    width: float,
    *,
    replications: int,
    cases: int = 30,
    prior: tuple[float, float] = (2.0, 2.0),
    seed: int = 7,
) -> Width:
    """Cases p ~ Beta(prior); rounds stop at the first look narrower than `width`."""
    rng = np.random.default_rng(seed)
    truth = prior[0] / (prior[0] + prior[1])
    top = plan.looks[-1]
    covered = early = total_k = 0
    for _ in range(replications):
        p = rng.beta(*prior, cases)
        draws = rng.random((cases, top)) < p[:, None]

        def look_at(k: int, draws: np.ndarray = draws) -> Look:
            return width_look(plan, k, np.full(cases, k), draws[:, :k].sum(axis=1), width)

        last = drive(plan, look_at)[-1]
        covered += last.low <= truth <= last.high
        early += last.k < top
        total_k += last.k
    return Width(replications, covered, early, total_k / replications)


def compare_after_until_decided(
    plan: Schedule,
    *,
    replications: int,
    cases: int = 60,
    prior: tuple[float, float] = (4.0, 1.0),
    k_a: int = 3,
    resamples: int = 400,
    seed: int = 17,
) -> float:
    """A/A: A at k_a runs per case; `--until-decided` (undecided cases only, the default)
    grows B along `plan` and stops at the look that decides; then `passhat compare A B`
    judges the final data through `compare_counts` (what `stats.compare` calls). The
    share of experiments compare declares different."""
    rng = np.random.default_rng(seed)
    declared = 0
    top = plan.looks[-1]
    for r in range(replications):
        p = rng.beta(*prior, cases)
        na = np.full(cases, k_a)
        ca = rng.binomial(k_a, p)
        draws = rng.random((cases, top)) < p[:, None]
        names = undecided(
            (str(i), int(n), int(c)) for i, (n, c) in enumerate(zip(na, ca, strict=True))
        )
        running = np.array([str(i) in names for i in range(cases)])
        nb = np.full(cases, plan.looks[0])
        for k in plan.looks:
            nb = np.where(running, k, nb)
            cb = np.cumsum(draws, axis=1)[np.arange(cases), nb - 1]
            look = paired_differences(na, ca, nb, cb, 1, resamples=resamples, seed=r)[1]
            if outcome_at(look, plan.alpha_at(k)) != "none" or not running.any():
                break
        verdict = compare_counts(na, ca, nb, cb, resamples=resamples, seed=r)[1]
        declared += verdict.outcome != "none"
    return declared / replications


def anytime_until_decided(
    plan: Schedule,
    *,
    replications: int,
    cases: int = 30,
    prior: tuple[float, float] = (0.5, 0.5),
    k_a: int = 3,
    shift: float = 0.0,
    seed: int = 13,
) -> Decided:
    """`--until-decided --spending anytime` (`plan.anytime`): A fixed at k_a runs per
    case, every case of B grown along `plan` (with --k-step 1, a look after every run),
    each look judged by `anytime_decided_look` as `passhat.rounds` does; B's per-case
    p = A's + shift, clipped. The share declared is the A/A false-positive rate at
    shift 0, the power otherwise."""
    rng = np.random.default_rng(seed)
    declared = stopped_k = runs = 0
    top = plan.looks[-1]
    for _ in range(replications):
        p = rng.beta(*prior, cases)
        na = np.full(cases, k_a)
        ca = rng.binomial(k_a, p)
        cum = np.cumsum(rng.random((cases, top)) < np.clip(p + shift, 0.0, 1.0)[:, None], axis=1)
        history: list[tuple[np.ndarray, np.ndarray]] = []

        def look_at(
            k: int,
            cum: np.ndarray = cum,
            history: list = history,
            base: tuple[np.ndarray, np.ndarray] = (na, ca),
        ) -> Look:
            history.append((np.full(cases, k), cum[:, k - 1]))
            return anytime_decided_look(plan, k, base, history)

        last = drive(plan, look_at)[-1]
        declared += last.outcome not in (None, "none")
        stopped_k += last.k
        runs += last.k * cases
    return Decided(replications, declared, stopped_k / replications, runs / replications)


def anytime_until_width(
    plan: Schedule,
    width: float,
    *,
    replications: int,
    cases: int = 30,
    prior: tuple[float, float] = (2.0, 2.0),
    seed: int = 7,
) -> Width:
    """`--until-width --spending anytime`: stop at the first look whose confidence
    sequence is narrower than `width`; `covered` counts stops whose interval holds the
    mean of these cases' true pass rates (what the sequence is for)."""
    rng = np.random.default_rng(seed)
    top = plan.looks[-1]
    covered = early = total_k = population = 0
    truth = prior[0] / (prior[0] + prior[1])
    for _ in range(replications):
        p = rng.beta(*prior, cases)
        cum = np.cumsum(rng.random((cases, top)) < p[:, None], axis=1)
        history: list[tuple[np.ndarray, np.ndarray]] = []

        def look_at(k: int, cum: np.ndarray = cum, history: list = history) -> Look:
            history.append((np.full(cases, k), cum[:, k - 1]))
            return anytime_width_look(plan, k, history, width)

        last = drive(plan, look_at)[-1]
        covered += last.low <= p.mean() <= last.high
        population += last.low <= truth <= last.high
        early += last.k < top
        total_k += last.k
    return Width(replications, covered, early, total_k / replications, population)


def rerun_until_decided(
    *,
    replications: int,
    cases: int = 100,
    prior: tuple[float, float] = (2.0, 2.0),
    k_a: int = 3,
    top: int = 12,
    shift: float = 0.0,
    alpha: float = 0.05,
    seed: int = 17,
) -> Decided:
    """The anytime rule with the baseline re-run alongside B (issue 33): A's k_a runs and
    B's first k_a are the first round, then every round adds one run of each side to
    every case, until the look `passhat.rounds` takes (`anytime_paired_look`, over
    `paired_sequence`) decides or B reaches `top` runs.
    mean_runs counts the new runs: B's and A's re-runs (A's first k_a existed)."""
    rng = np.random.default_rng(seed)
    declared = stopped_k = runs = 0
    for _ in range(replications):
        p = rng.beta(*prior, cases)
        q = np.clip(p + shift, 0.0, 1.0)
        cum_a = np.cumsum(rng.random((cases, top)) < p[:, None], axis=1)
        cum_b = np.cumsum(rng.random((cases, top)) < q[:, None], axis=1)
        looks = range(k_a, top + 1)
        history_a = [(np.full(cases, k), cum_a[:, k - 1]) for k in looks]
        history_b = [(np.full(cases, k), cum_b[:, k - 1]) for k in looks]
        k = top
        plan = schedule(k_a, top, 1, confidence=1.0 - alpha, spending="anytime")
        for i, look in enumerate(looks):
            seen = anytime_paired_look(plan, look, history_a[: i + 1], history_b[: i + 1])
            if seen.outcome != "none":
                declared += 1
                k = look
                break
        stopped_k += k
        runs += k * cases + (k - k_a) * cases
    return Decided(replications, declared, stopped_k / replications, runs / replications)
