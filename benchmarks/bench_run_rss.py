"""Benchmark: peak memory of `passhat run` at 100,000 runs against 1,000 runs.

Target (issue #15): peak RSS at 100,000 runs at most 1.2× the figure at 1,000
runs. Each is a `passhat run` command of instant agents (its end report
included, as a user sees it) over the same 1,000-case suite, k = 1 and k = 100,
so the figures differ by the runs alone, not by the suite's size;
`--cases 10000 --k-small 1 --k-big 10` measures 100,000 runs of a suite ten
times larger instead, and `--small-cases 100 --cases 10000 --k-small 10 --k-big 10`
(results/run_rss_10k_cases.txt) the memory that grows with the number of cases:
10,000 cases against 100 at the same k. Peak RSS is the command's own ru_maxrss,
started by a small launcher (`_result.measured`: a child forked from this process
would count this process's RSS too). Memory does not depend on the
machine's load, so this figure is steady on a shared machine.

The cases are copies of the seed ticket, which differ by their id only; `--distinct`
uses cases of which no two are equal instead (`_fixtures.make_distinct_suite`: the
suite's nine tickets in turn, every free text numbered), for what memory would gain
from equal cases (its RESULT line says "distinct cases").

    .venv/bin/python benchmarks/bench_run_rss.py [--cases 1000] [--k-small 1] [--k-big 100]
        [--small-cases N] [--distinct]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _fixtures import make_distinct_suite, make_suite
from _result import measured, result

HERE = Path(__file__).resolve().parent


def peak_rss(suite: Path, k: int, db: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `passhat run`."""
    argv = [sys.executable, "-m", "passhat", "run", str(suite), "--agent"]
    argv += ["passhat_agents.py:instant", "-k", str(k), "-q", "--db", str(db)]
    run = measured(argv)
    return run.wall, run.peak_mb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--k-small", type=int, default=1)
    parser.add_argument("--k-big", type=int, default=100)
    parser.add_argument(
        "--small-cases", type=int, default=None, help="cases of the small run (default: --cases)"
    )
    parser.add_argument(
        "--distinct", action="store_true", help="cases of which no two are equal (see above)"
    )
    args = parser.parse_args()
    make = make_distinct_suite if args.distinct else make_suite
    small_cases = args.cases if args.small_cases is None else args.small_cases
    with tempfile.TemporaryDirectory() as tmp:
        figures = []
        for cases, k in [(small_cases, args.k_small), (args.cases, args.k_big)]:
            suite = Path(tmp) / f"suite-{cases}"
            if not suite.exists():
                make(suite, cases)
                shutil.copy(HERE / "vs_inspect" / "passhat_agents.py", suite / "passhat_agents.py")
            wall, rss = peak_rss(suite, k, Path(tmp) / f"{cases}x{k}.db")
            print(
                f"passhat run, {cases:,} cases x k = {k}, {cases * k:,} runs: {wall:.1f} s wall, "
                f"peak RSS {rss:.1f} MiB"
            )
            figures.append((cases, k, rss))
    (small_n, small_k, small_rss), (big_n, big_k, big_rss) = figures
    if small_n == big_n:  # the same suite: the runs differ
        what = f"{big_n * big_k:,} vs {small_n * small_k:,} runs"
        compares = f"peak RSS at {big_n * big_k:,} runs / at {small_n * small_k:,} runs"
    else:  # the suites differ: memory that grows with the cases
        ks = f"k = {big_k}" if big_k == small_k else f"k = {big_k} vs {small_k}"
        what = f"{big_n:,} vs {small_n:,} {'distinct ' if args.distinct else ''}cases, {ks}"
        compares = f"peak RSS at {big_n:,} cases / at {small_n:,} cases"
    met = result(f"peak RSS of `passhat run`, {what}", big_rss / small_rss, 1.2, compares)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
