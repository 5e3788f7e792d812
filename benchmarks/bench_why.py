"""Benchmark: `passhat why`'s failure signatures (issue #35).

Targets:
- simulated experiments of 50 cases x k = 5 with a planted signature (a run that
  skips the tool `lookup` misses item X with probability 0.9; case difficulty and the
  share of runs that skip vary, and go together across cases): at least 90 % of the
  planted signatures are found at q <= 0.05 (missed share <= 0.10);
- the same with nothing planted (A/A): at most 5 % of the simulations report any
  signature (false share <= 0.05);
- `passhat why` of an experiment of 10,000 cases x k = 10 (100,000 runs) takes at
  most 2x `passhat report --json` of the same store, each in its own process.

The simulation is tests/why_sim.py (tests/test_why.py runs a small version).

    .venv/bin/python benchmarks/bench_why.py [--simulations 100] [--aa 400]
        [--cases 10000] [--k 10] [--repeat 3] [--stores DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _fixtures import kept_store
from _result import measured, median_ratio, result, spread

from why_sim import PLANTED, tally

PASSHAT = [sys.executable, "-m", "passhat"]


def simulated(simulations: int, aa: int) -> bool:
    start = time.perf_counter()
    planted = tally(50, 5, planted=True, simulations=simulations)
    found = planted.recovered / (simulations * len(PLANTED))
    quiet = tally(50, 5, planted=False, simulations=aa, seed=100_000)
    print(
        f"planted: {planted.recovered} of {simulations * len(PLANTED)} signatures found "
        f"({found:.1%}), {planted.false} others in {planted.with_false} simulations; "
        f"A/A: {quiet.false} false signatures in {quiet.with_false} of {aa} simulations "
        f"({time.perf_counter() - start:.0f} s)"
    )
    ok = result(
        "`why` planted signatures missed, 50 cases × k = 5",
        1 - found,
        0.10,
        "share of planted signatures not found at q ≤ 0.05",
    )
    return ok & result(
        "`why` A/A simulations with a false signature, 50 cases × k = 5",
        quiet.with_false / aa,
        0.05,
        "share of simulations with nothing planted that report one",
    )


def timed(cases: int, k: int, repeat: int, stores: Path | None) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        folder = stores if stores is not None else Path(tmp)
        db, eid = kept_store(folder, cases, k)
        why = [*PASSHAT, "why", eid, "--db", str(db), "--json"]
        report = [*PASSHAT, "report", eid, "--db", str(db), "--json"]
        measured(report)  # the file in the page cache
        walls, bases = [], []
        for _ in range(repeat):
            walls.append(measured(why).wall)
            bases.append(measured(report).wall)
        print(f"why --json {spread(walls)}; report --json {spread(bases)}")
        return result(
            f"`why` of {cases * k:,} runs",
            median_ratio(walls, bases),
            2.0,
            "passhat why --json / passhat report --json, wall, own processes",
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--aa", type=int, default=400)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stores", type=Path, default=None)
    args = parser.parse_args()
    ok = simulated(args.simulations, args.aa)
    ok &= timed(args.cases, args.k, args.repeat, args.stores)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
