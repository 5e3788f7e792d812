"""Benchmark: the anytime-valid adaptive rule (`--spending anytime`) beside the
planned-look rules, through the same public decision functions the CLI uses
(tests/adaptive_sim.py; the anytime looks are `passhat.adaptive.anytime_*_look`,
which `passhat.rounds` calls).

--until-decided: A fixed at k = 3 runs per case, B grown to at most k = 12, case pass
rates p ~ Beta(a, b), N cases; B's p = A's + shift. Rules:
  bonferroni      planned looks at k = 3, 6, 9, 12, 0.05 / 4 each (undecided cases, the default)
  obrien-fleming  the same looks, Lan-DeMets spending (undecided cases)
  anytime 3       the anytime rule, looks at k = 3, 6, 9, 12 (every case)
  anytime 1       the anytime rule, a look after every run: k = 3, 4, ..., 12 (every case)
A/A (shift 0): share declared (must be <= 5 %). Shift +0.10 / +0.20: share decided
(power), mean k of B where the rounds stopped, mean runs of B. Then the anytime rule
alone at 300 and 1,000 cases (cheap; the planned rules' sign flips are not).
Then the anytime rule with the baseline re-run alongside B in every round (issue 33,
`passhat.stats.anytime.paired_sequence`): 100 cases, Beta(2, 2), A/A and power at +0.05 /
+0.10 / +0.20 (the default of `passhat run --spending anytime --until-decided`; the
look is `passhat.adaptive.anytime_paired_look`, which `passhat.rounds` calls).

--until-width W, a look after every run (k = 3, ..., 12), anytime: share of stops
whose interval holds the mean of these cases' pass rates (what it promises), and the
population's mean (what it does not), share stopped early, mean k; beside it the
planned Bonferroni looks (3, 6, 9, 12), whose interval is for the population of
cases (cluster interval: both columns are its coverage of the population mean).

Run: .venv/bin/python benchmarks/bench_anytime.py [R]   (R defaults to 400)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _result import replications as _replications

from adaptive_sim import (
    Decided,
    anytime_until_decided,
    anytime_until_width,
    rerun_until_decided,
    until_decided,
    until_width,
)
from passhat.adaptive import Schedule, schedule


def _row(plan: Schedule, name: str, shift: float, runs: dict[str, object]) -> Decided:
    if plan.anytime:
        return anytime_until_decided(plan, shift=shift, **runs)  # type: ignore[arg-type]
    return until_decided(plan, shift=shift, runs_to="undecided", **runs)  # type: ignore[arg-type]


def main() -> None:
    replications = _replications(__doc__, 400)
    rules = {
        "bonferroni": schedule(3, 12, 3),
        "obrien-fleming": schedule(3, 12, 3, spending="obrien-fleming"),
        "anytime 3": schedule(3, 12, 3, spending="anytime"),
        "anytime 1": schedule(3, 12, 1, spending="anytime"),
    }
    start = time.perf_counter()
    print(f"--until-decided, A at k = 3, B up to k = 12, R = {replications} per cell")
    print(
        "| cases | N | rule | A/A declared (<= 5 %) | +0.10 decided | mean k | runs of B "
        "| +0.20 decided | mean k | runs of B |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for prior in ((0.5, 0.5), (2.0, 2.0)):
        for cases in (30, 100):
            runs: dict[str, object] = {
                "replications": replications,
                "cases": cases,
                "prior": prior,
            }
            for name, plan in rules.items():
                aa = _row(plan, name, 0.0, runs)
                small = _row(plan, name, 0.10, runs)
                big = _row(plan, name, 0.20, runs)
                print(
                    f"| Beta{prior} | {cases} | {name} | {aa.declared / replications:.1%} "
                    f"| {small.declared / replications:.1%} | {small.mean_k:.1f} "
                    f"| {small.mean_runs:.0f} | {big.declared / replications:.1%} "
                    f"| {big.mean_k:.1f} | {big.mean_runs:.0f} |",
                    flush=True,
                )
    print(f"\nthe anytime rule alone at more cases (a look after every run), R = {replications}")
    print("| cases | N | A/A declared | +0.05 decided | mean k | +0.10 decided | mean k |")
    print("|---|---|---|---|---|---|---|")
    for cases in (300, 1000):
        plan = rules["anytime 1"]
        runs = {"replications": replications, "cases": cases, "prior": (2.0, 2.0)}
        aa, small, big = (_row(plan, "anytime 1", shift, runs) for shift in (0.0, 0.05, 0.10))
        print(
            f"| Beta(2.0, 2.0) | {cases} | {aa.declared / replications:.1%} "
            f"| {small.declared / replications:.1%} | {small.mean_k:.1f} "
            f"| {big.declared / replications:.1%} | {big.mean_k:.1f} |",
            flush=True,
        )
    print(
        f"\nanytime with the baseline re-run alongside B every round (issue 33), "
        f"100 cases, Beta(2, 2), A and B from k = 3, a look after every run to k = 12, "
        f"R = {replications}; runs: B's and A's new runs (target: A/A <= 5 %, +0.10 >= 90 %)"
    )
    print("| shift | declared | mean k | runs |")
    print("|---|---|---|---|")
    for shift in (0.0, 0.05, 0.10, 0.20):
        r = rerun_until_decided(replications=replications, shift=shift)
        print(
            f"| {shift:+.2f} | {r.declared / replications:.1%} | {r.mean_k:.1f} "
            f"| {r.mean_runs:.0f} |",
            flush=True,
        )
    print(f"\n--until-width, R = {replications} per row")
    print("| cases | N | W | rule | covered | population mean covered | stopped early | mean k |")
    print("|---|---|---|---|---|---|---|---|")
    for prior, cases, width in (
        ((2.0, 2.0), 30, 0.27),
        ((2.0, 2.0), 100, 0.14),
        ((2.0, 2.0), 100, 0.08),
    ):
        for name, plan in (("bonferroni", rules["bonferroni"]), ("anytime 1", rules["anytime 1"])):
            run = anytime_until_width if plan.anytime else until_width
            result = run(plan, width, replications=replications, cases=cases, prior=prior)
            print(
                f"| Beta{prior} | {cases} | {width} | {name} "
                f"| {result.covered / replications:.1%} "
                f"| {(result.covered_population if plan.anytime else result.covered) / replications:.1%} "
                f"| {result.stopped_early / replications:.1%} | {result.mean_k:.1f} |",
                flush=True,
            )
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
