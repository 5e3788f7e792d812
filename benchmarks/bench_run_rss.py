"""Benchmark: peak memory of `passhat run` at 100,000 runs against 1,000 runs.

Target (issue #15): peak RSS at 100,000 runs at most 1.2× the figure at 1,000
runs. Each is a `passhat run` command of instant agents (its end report
included, as a user sees it) over the same 1,000-case suite, k = 1 and k = 100,
so the figures differ by the runs alone, not by the suite's size;
`--cases 10000 --k-small 1 --k-big 10` measures 100,000 runs of a suite ten
times larger instead. Peak RSS is the child's ru_maxrss, measured small first
(ru_maxrss of children is a running maximum). Memory does not depend on the
machine's load, so this figure is steady on a shared machine.

    .venv/bin/python benchmarks/bench_run_rss.py [--cases 1000] [--k-small 1] [--k-big 100]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _fixtures import make_suite
from _result import result

HERE = Path(__file__).resolve().parent


def peak_rss(suite: Path, k: int, db: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `passhat run`."""
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "passhat",
            "run",
            str(suite),
            "--agent",
            "passhat_agents.py:instant",
            "-k",
            str(k),
            "-q",
            "--db",
            str(db),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--k-small", type=int, default=1)
    parser.add_argument("--k-big", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = make_suite(Path(tmp) / "suite", args.cases)
        shutil.copy(HERE / "vs_inspect" / "passhat_agents.py", suite / "passhat_agents.py")
        figures = []
        for cases, k in [(args.cases, args.k_small), (args.cases, args.k_big)]:
            wall, rss = peak_rss(suite, k, Path(tmp) / f"{k}.db")
            print(f"passhat run, {cases * k:,} runs: {wall:.1f} s wall, peak RSS {rss:.1f} MiB")
            figures.append((cases * k, rss))
    (small, small_rss), (big, big_rss) = figures
    met = result(
        f"peak RSS of `passhat run`, {big:,} vs {small:,} runs",
        big_rss / small_rss,
        1.2,
        f"peak RSS at {big:,} runs / at {small:,} runs",
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
