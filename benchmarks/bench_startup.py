"""Benchmark: how long `passhat --help` and `passhat metrics` on 3 lines take to start.

Targets (issue #15): `passhat --help` within 0.25 s, and numpy not imported by it
(numpy only where a statistic is computed). Wall time of each command in its own
process, best of `--repeat`, beside `python -c pass` (the interpreter alone) for
scale; `python -X importtime` names what `--help` imports.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _result import result

HELP_TARGET_S = 0.25


def wall(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        verdicts = Path(tmp) / "v.jsonl"
        verdicts.write_text(
            "".join(f'{{"case": "c", "run": {i}, "status": "passed"}}\n' for i in (1, 2, 3)),
            encoding="utf-8",
        )
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "passhat --help": [sys.executable, "-m", "passhat", "--help"],
            "passhat metrics (3 lines)": [
                sys.executable,
                "-m",
                "passhat",
                "metrics",
                str(verdicts),
            ],
        }
        best = {name: float("inf") for name in commands}
        cpu = dict(best)
        for _ in range(args.repeat):  # in turn, so each command sees the same load
            for name, argv in commands.items():
                seconds, used = wall(argv)
                best[name] = min(best[name], seconds)
                cpu[name] = min(cpu[name], used)
    for name, seconds in best.items():
        print(f"{name:28}: {seconds:.3f} s wall, {cpu[name]:.3f} s CPU (best of {args.repeat})")
    imports = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "passhat", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    numpy = any(
        line.rstrip().endswith(("| numpy._core", "| numpy.core")) for line in imports.splitlines()
    )
    print(f"numpy imported by --help: {'yes' if numpy else 'no'}")
    ok = result(
        "`passhat --help` start-up",
        best["passhat --help"] / HELP_TARGET_S,
        1,
        f"wall / {HELP_TARGET_S} s",
    )
    result(  # on a loaded machine the wall time waits for a core; CPU time does not
        "`passhat --help` start-up, CPU time",
        cpu["passhat --help"] / HELP_TARGET_S,
        1,
        f"CPU seconds / {HELP_TARGET_S} s (informative)",
    )
    ok &= result("numpy imported by `passhat --help`", float(numpy), 0, "1 if imported, 0 if not")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
