"""Benchmark: `passhat metrics` over 1,000,000 verdict lines vs merely parsing them.

Target (issue #2): metrics add at most 50 % to a line-by-line `json.loads` of the
same file. Each side runs in its own subprocess, so wall time, CPU time and peak
RSS (ru_maxrss) are measured the same way for both, interpreter start included.
The three commands run in turn, `--repeats` rounds; a ratio is the median of the
per-round ratios (CPU time is printed beside wall time to tell load from cost).

    .venv/bin/python benchmarks/bench_metrics.py [--cases 100000] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

from _result import measured, median_ratio, result

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


def measure(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one child process."""
    run = measured(argv, stderr=None)
    return run.wall, run.cpu, run.peak_mb


def rounds(commands: list[list[str]], repeats: int) -> list[list[tuple[float, float, float]]]:
    """Each command once per round, in turn: on a shared machine every side sees the
    same load (measuring one side three times, then the next, did not)."""
    out: list[list[tuple[float, float, float]]] = [[] for _ in commands]
    for _ in range(repeats):
        for argv, results in zip(commands, out, strict=True):
            results.append(measure(argv))
    return out


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
        command = [sys.executable, "-m", "passhat", "metrics", str(path)]
        parse, table, as_json = rounds(
            [[sys.executable, "-c", PARSE_ONLY, str(path)], command, [*command, "--json"]],
            args.repeats,
        )
    print(f"verdict file: {lines:,} lines ({args.cases:,} cases x k={args.k}), {size:.1f} MiB")
    print(
        f"json.loads per line    : {min(w for w, _, _ in parse):6.2f} s   "
        f"CPU {min(c for _, c, _ in parse):6.2f} s   peak RSS {parse[0][2]:7.1f} MiB"
    )
    ok = True
    for name, runs in [("passhat metrics", table), ("passhat metrics --json", as_json)]:
        wall = median_ratio([w for w, _, _ in runs], [w for w, _, _ in parse])
        cpu = median_ratio([c for _, c, _ in runs], [c for _, c, _ in parse])
        print(
            f"{name:23}: {min(w for w, _, _ in runs):6.2f} s   CPU {min(c for _, c, _ in runs):6.2f} s"
            f"   peak RSS {runs[0][2]:7.1f} MiB   ratio {wall:4.2f} (CPU {cpu:4.2f})"
        )
        ok &= result(f"`{name}`, {lines:,} lines", wall, 1.5, "command wall / json.loads loop wall")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
