"""Benchmark: `passhat metrics` over 1,000,000 verdict lines vs merely parsing them.

Target (issue #2): metrics add at most 50 % to a line-by-line `json.loads` of the
same file. Each side runs in its own subprocess, so wall time and peak RSS
(ru_maxrss) are measured the same way for both, interpreter start included.

    .venv/bin/python benchmarks/bench_metrics.py [--cases 100000] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _result import result

PARSE_ONLY = """
import json, sys
n = 0
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        json.loads(line)
        n += 1
print(n)
"""


def write_file(path: Path, cases: int, k: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    statuses = ["passed", "failed", "errored"]
    with path.open("w", encoding="utf-8") as f:
        for c in range(cases):
            p = rng.random()
            for run in range(1, k + 1):
                status = statuses[0 if rng.random() < p else (1 if rng.random() < 0.97 else 2)]
                f.write(json.dumps({"case": f"case-{c:06d}", "run": run, "status": status}) + "\n")
    return cases * k


def measure(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def best_of(argv: list[str], repeats: int) -> tuple[float, float]:
    results = [measure(argv) for _ in range(repeats)]
    return min(r[0] for r in results), max(r[1] for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "verdicts.jsonl"
        lines = write_file(path, args.cases, args.k)
        size = path.stat().st_size / 2**20
        # the parse-only child has the smaller RSS, so measure it first (ru_maxrss is a max)
        parse = best_of([sys.executable, "-c", PARSE_ONLY, str(path)], args.repeats)
        command = [sys.executable, "-m", "passhat", "metrics", str(path)]
        table = best_of(command, args.repeats)
        as_json = best_of([*command, "--json"], args.repeats)
    print(f"verdict file: {lines:,} lines ({args.cases:,} cases x k={args.k}), {size:.1f} MiB")
    print(f"json.loads per line    : {parse[0]:6.2f} s   peak RSS {parse[1]:7.1f} MiB")
    ok = True
    for name, (wall, rss) in [("passhat metrics", table), ("passhat metrics --json", as_json)]:
        ratio = wall / parse[0]
        print(f"{name:23}: {wall:6.2f} s   peak RSS {rss:7.1f} MiB   ratio {ratio:4.2f}")
        ok &= result(
            f"`{name}`, {lines:,} lines", ratio, 1.5, "command wall / json.loads loop wall"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
