"""Benchmark: the adaptive modes under optional stopping, through the same public
decision functions the CLI uses (tests/adaptive_sim.py).

--until-decided: A fixed at k = 3 runs per case, B grown along the planned looks
k = 3, 6, 9, 12 (Bonferroni: 0.05 / 4 per look; O'Brien-Fleming-like: Lan-DeMets
spending, most of it at the last look), cases p ~ Beta(a, b), N cases. Three ways to
choose which cases get B's new runs:
  undecided  the default: cases whose baseline runs disagree; mean of per-case rates
  all        --all-cases, the older rule: every case; compare's pass rate over runs
  agree      for contrast, not offered: stop a case once A's and B's runs all agree
A/A (shift 0): the share of experiments declared different must be <= 6 %; beside it
the naive rule (0.05 at every look, all cases). Shift +0.10: the share decided (power),
the mean k where B stopped and the mean runs of B spent.

--until-width W: looks at k = 3, 6, 9, 12, stop at the first look whose 98.75 %
interval is narrower than W; the interval where it stopped must hold the true mean
pass rate >= 93 % of the time.

Run: .venv/bin/python benchmarks/bench_adaptive.py [R]   (R defaults to 1,000; about
R / 60 minutes on one core, most of it in compare's sign flips, B = 400 per look)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _result import replications as _replications

from adaptive_sim import until_decided, until_width
from passhat.adaptive import SPENDINGS, schedule


def main() -> None:
    replications = _replications(__doc__, 1000)
    plan = schedule(3, 12, 3)
    start = time.perf_counter()
    print(f"--until-decided, looks {plan.looks}, R = {replications} per row")
    print(
        "| cases | N | spending | runs to | A/A declared | A/A declared (naive) "
        "| +0.10 decided | mean k | mean runs of B |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for prior in ((0.5, 0.5), (2.0, 2.0), (8.0, 1.0)):
        for cases in (30, 100):
            runs = {"replications": replications, "cases": cases, "prior": prior}
            naive = until_decided(plan, spend=False, **runs)
            for spending in SPENDINGS:
                planned = schedule(3, 12, 3, spending=spending)
                for runs_to in ("undecided", "all", "agree"):
                    if runs_to == "agree" and spending != "bonferroni":
                        continue
                    spent = until_decided(planned, runs_to=runs_to, **runs)
                    power = until_decided(planned, shift=0.10, runs_to=runs_to, **runs)
                    print(
                        f"| Beta{prior} | {cases} | {spending} | {runs_to} "
                        f"| {spent.declared / replications:.1%} "
                        f"| {naive.declared / replications:.1%} "
                        f"| {power.declared / replications:.1%} | {power.mean_k:.1f} "
                        f"| {power.mean_runs:.0f} |",
                        flush=True,
                    )
    print(f"\n--until-width, looks {plan.looks}, R = {replications} per row")
    print("| cases | N | W | covered (>= 93 %) | stopped early | mean k |")
    print("|---|---|---|---|---|---|")
    for prior, cases, width in (
        ((2.0, 2.0), 30, 0.27),
        ((2.0, 2.0), 100, 0.14),
        ((0.5, 0.5), 30, 0.37),
        ((0.5, 0.5), 100, 0.2),
    ):
        result = until_width(plan, width, replications=replications, cases=cases, prior=prior)
        print(
            f"| Beta{prior} | {cases} | {width} | {result.covered / replications:.1%} "
            f"| {result.stopped_early / replications:.1%} | {result.mean_k:.1f} |"
        )
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
