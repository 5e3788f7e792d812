"""Benchmark: `passhat compare A B` after an A/A `--until-decided` (issue 24).

A at k = 3 runs per case; `--until-decided` (undecided cases only, the default; looks
at k = 3, 6, 9, 12, Bonferroni) grows B and stops at the look that decides; then the
final data go through `compare_counts`, the function `stats.compare` (and so the CLI)
calls. B's cases then counted 3 or 12 runs, so compare judges the mean of per-case
rates; the share of A/A experiments it declares different must be <= 5 % (before issue
24 it judged the pass rate over runs: 14 % in the review, all "B is better").

Run: .venv/bin/python benchmarks/bench_compare_after_adaptive.py [R]   (R defaults to
1,000; about a minute per row on one core)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _result import replications as _replications

from adaptive_sim import compare_after_until_decided
from passhat.adaptive import schedule

ROWS = (((8.0, 1.0), 100), ((4.0, 1.0), 60), ((0.5, 0.5), 30), ((2.0, 2.0), 100))
TARGET = 0.05


def main() -> None:
    replications = _replications(__doc__, 1000)
    plan = schedule(3, 12, 3)
    print(f"compare after an A/A --until-decided, R = {replications} experiments per row")
    print("| cases | N | A/A declared by compare (<= 5 %) | ratio to 5 % |")
    print("|---|---|---|---|")
    start = time.perf_counter()
    for prior, cases in ROWS:
        rate = compare_after_until_decided(
            plan, replications=replications, prior=prior, cases=cases, resamples=200, seed=99
        )
        name = f"Beta({prior[0]:g}, {prior[1]:g})"
        print(f"| {name} | {cases} | {rate:.1%} | {rate / TARGET:.2f} |", flush=True)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
