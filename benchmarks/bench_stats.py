"""Benchmark: the cluster bootstrap against reading the verdicts it summarises.

10,000 cases x k = 10 runs = 100,000 verdicts. Reading them with
`passhat.verdicts.read_verdicts` is the floor any report pays; the bootstrap
(B = 2,000) should cost no more than that. Also timed: `passhat compare`'s
statistics (paired bootstrap + sign-flip permutation) and the per-case forecast.

Run: .venv/bin/python benchmarks/bench_stats.py
"""

from __future__ import annotations

import json
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _result import result

from passhat import stats
from passhat.verdicts import read_verdicts

CASES, K, B = 10_000, 10, 2_000


def measure(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, float]:
    """Best wall time of `repeat` runs (seconds) and the peak traced memory (MiB)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20


def main() -> int:
    rng = np.random.default_rng(0)
    p = rng.beta(0.5, 0.5, CASES)
    outcomes = rng.random((CASES, K)) < p[:, None]
    passes = outcomes.sum(axis=1)
    runs = np.full(CASES, K)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "verdicts.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for i in range(CASES):
                for r in range(K):
                    status = "passed" if outcomes[i, r] else "failed"
                    out.write(json.dumps({"case": f"case-{i:05d}", "run": r + 1, "status": status}))
                    out.write("\n")
        read_t, read_m = measure(lambda: read_verdicts(path).close(K), repeat=3)

    boot_t, boot_m = measure(
        lambda: stats.cluster_bootstrap(runs, passes, resamples=B, seed=1), repeat=5
    )
    # Runs from 10 to 1,999 per case make nearly every case record distinct, which
    # takes the case-by-case path (blocks of B x G draws) instead of the record path.
    spread_runs = rng.integers(10, 2_000, CASES)
    spread_passes = rng.binomial(spread_runs, p)
    spread_t, spread_m = measure(
        lambda: stats.cluster_bootstrap(spread_runs, spread_passes, resamples=B, seed=1), repeat=3
    )
    passes_b = rng.binomial(K, np.minimum(p + 0.01, 1.0))
    cmp_t, cmp_m = measure(
        lambda: stats.paired_differences(runs, passes, runs, passes_b, resamples=B, seed=1),
        repeat=3,
    )
    fc_t, fc_m = measure(lambda: stats.forecast_counts(runs, passes, 10), repeat=3)

    print(f"{CASES:,} cases x k = {K} = {CASES * K:,} verdicts; B = {B:,}")
    print(f"{'':38}{'wall s':>9}{'peak MiB':>10}{'x read':>8}")
    rows = [
        ("read_verdicts + close (the floor)", read_t, read_m),
        ("cluster bootstrap pass@1/@k/^k", boot_t, boot_m),
        ("  same, every case record distinct", spread_t, spread_m),
        ("compare: paired bootstrap + sign flips", cmp_t, cmp_m),
        ("forecast per case (m = 10)", fc_t, fc_m),
    ]
    for name, t, m in rows:
        print(f"{name:38}{t:9.3f}{m:10.1f}{t / read_t:8.2f}")
    spread_read = read_t * spread_runs.sum() / (CASES * K)
    print(
        f"  (the distinct-record data hold {spread_runs.sum():,} verdicts; reading them at the "
        f"measured rate takes ~{spread_read:.1f} s; the bootstrap costs "
        f"{spread_t / spread_read:.3f} x that)"
    )
    met = result(
        "cluster bootstrap (B = 2,000), 100,000 verdicts",
        boot_t / read_t,
        1,
        "bootstrap / reading the verdicts",
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
