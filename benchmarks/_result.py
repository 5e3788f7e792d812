"""How every benchmark states a target: one `RESULT |` line, read back by
`benchmarks/readme_table.py` to write the README's performance table.

    RESULT | what was measured | ratio | target | PASS or MISS | what the ratio compares
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def result(what: str, ratio: float, target: float, compares: str) -> bool:
    """Print the ratio against its target (at most `target`); True when it is met."""
    met = ratio <= target
    print(
        f"RESULT | {what} | {ratio:.2f}× | ≤ {target:g}× | {'PASS' if met else 'MISS'} | {compares}",
        flush=True,
    )
    return met


def alternate(
    a: Callable[[], object], b: Callable[[], object], repeat: int
) -> tuple[list[float], list[float]]:
    """Wall seconds of `a` and `b`, run in turn `repeat` times: on a shared, noisy machine
    a ratio of the two is only fair when both saw the same load."""
    times_a, times_b = [], []
    for _ in range(repeat):
        for action, times in ((a, times_a), (b, times_b)):
            start = time.perf_counter()
            action()
            times.append(time.perf_counter() - start)
    return times_a, times_b


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
