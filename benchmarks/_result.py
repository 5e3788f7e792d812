"""How every benchmark states a target: one `RESULT |` line, read back by
`benchmarks/readme_table.py` to write the README's performance table.

    RESULT | what was measured | ratio | target | PASS or MISS | what the ratio compares
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple


def result(what: str, ratio: float, target: float, compares: str) -> bool:
    """Print the ratio against its target (at most `target`); True when it is met."""
    met = ratio <= target
    print(
        f"RESULT | {what} | {ratio:.2f}× | ≤ {target:g}× | {'PASS' if met else 'MISS'} | {compares}",
        flush=True,
    )
    return met


def compiled_passhat() -> None:
    """Write the .pyc of every passhat module whose .pyc is missing or stale, before
    commands are timed. With PYTHONDONTWRITEBYTECODE set (this machine's shells set it),
    a checkout's edited modules are otherwise compiled from source by every command
    (`passhat report` of 10,000 x 10: 0.56 s of CPU, 0.48 s with its .pyc written),
    while the scan script it is measured against imports sqlite3 alone."""
    import compileall

    import passhat

    compileall.compile_dir(os.path.dirname(passhat.__file__), quiet=1)


def alternate(
    a: Callable[[], object], b: Callable[[], object], repeat: int
) -> tuple[list[float], list[float]]:
    """Wall seconds of `a` and `b`, run in turn `repeat` times: on a shared, noisy machine
    a ratio of the two is only fair when both saw the same load."""
    times_a, times_b = in_turn([a, b], repeat)
    return times_a, times_b


def in_turn(actions: list[Callable[[], object]], repeat: int) -> list[list[float]]:
    """Wall seconds of each of `actions`, all run in turn `repeat` times (`alternate`
    for more than two)."""
    times: list[list[float]] = [[] for _ in actions]
    for _ in range(repeat):
        for action, took in zip(actions, times, strict=True):
            start = time.perf_counter()
            action()
            took.append(time.perf_counter() - start)
    return times


def median_ratio(numerator: list[float], denominator: list[float]) -> float:
    """Median of the pairwise ratios (each pair measured back to back)."""
    return statistics.median(n / d for n, d in zip(numerator, denominator, strict=True))


def spread(times: list[float]) -> str:
    return f"{statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"


def length_result(
    name: str, what: str, outputs: tuple[str, str], sizes: tuple[str, str], compares: str
) -> bool:
    """An output that must stay bounded as the data grows: print the length of each of
    `outputs` (the large case first, with its `sizes`) and their ratio against 1.2."""
    big, little = outputs
    print(
        f"{name}: {len(big):,} characters ({big.count(chr(10))} lines) {sizes[0]}, "
        f"{len(little):,} ({little.count(chr(10))} lines) {sizes[1]}"
    )
    return result(what, len(big) / len(little), 1.2, compares)


_LAUNCH = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
took = time.perf_counter() - start
cpu = usage.ru_utime + usage.ru_stime
os.write(int(sys.argv[1]), b"%r %r %d" % (took, cpu, usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


class Measured(NamedTuple):
    wall: float
    """Seconds from its fork to its end."""
    cpu: float
    """User and system seconds."""
    peak_mb: float
    """Its peak RSS (MiB)."""


def measured(argv: list[str], *, ok: tuple[int, ...] = (0,), **popen: Any) -> Measured:
    """Wall, CPU and peak RSS of the command `argv`, started by a small launcher
    (`python -S`, ~10 MB) rather than by this process: a child's ru_maxrss counts the
    RSS of the process it was forked from, so a benchmark holding 300 MB would have
    every command it starts peak at 300 MB or more. `popen` goes to subprocess.Popen
    (stdout, stderr, env; both outputs default to DEVNULL)."""
    read, write = os.pipe()
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCH, str(write), *argv], pass_fds=(write,), **popen
        )
        os.close(write)
        write = -1
        code = proc.wait()
        took, cpu, peak = os.read(read, 200).split()
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    if code not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return Measured(float(took), float(cpu), int(peak) / 1024)


def replications(doc: str | None, default: int, argv: list[str] | None = None) -> int:
    """R, the simulated experiments per row, read from the command line with the
    module docstring `doc` as its help (R was read by hand from sys.argv: `--help`
    ended in an int() traceback)."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "replications", nargs="?", type=int, default=default, metavar="R",
        help=f"simulated experiments per row (default {default:,})",
    )  # fmt: skip
    replications: int = parser.parse_args(argv).replications
    return replications
