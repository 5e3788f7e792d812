"""Benchmark: `passhat export` of a large experiment, against `passhat report --json`
of the same experiment.

Target (issue #12): an export costs at most 2x the JSON report of
the same store (both read every run; the export writes one row each). Each
command runs in its own subprocess: wall time and peak RSS include interpreter
start.

    .venv/bin/python benchmarks/bench_export.py [--cases 10000] [--k 10]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from _result import measured

from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import short_hash
from passhat.store import Store

PASSHAT = [sys.executable, "-m", "passhat"]


def build(db: Path, cases: int, k: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    ids = tuple(f"case-{c:06d}" for c in range(cases))
    experiment = ExperimentRecord(
        id="b0000001",
        name="big",
        created_at="2026-01-01T00:00:00Z",
        suite_name="bench",
        suite_path="/bench",
        suite_hash="0" * 64,
        agent="bench",
        model="replay:x.jsonl",
        model_config={},
        params={},
        prompt_version=None,
        k_requested=k,
        seed=0,
        harness_version="bench",
        fingerprint=short_hash("bench"),
        case_ids=ids,
        case_hashes={c: "h" for c in ids},
    )

    def runs() -> object:
        for c in ids:
            p = rng.random()
            for i in range(1, k + 1):
                status = (
                    "passed"
                    if rng.random() < p
                    else ("failed" if rng.random() < 0.97 else "errored")
                )
                yield RunRecord(
                    experiment_id="b0000001",
                    case_id=c,
                    run_index=i,
                    case_hash="h",
                    status=status,  # type: ignore[arg-type]
                    score=[
                        {
                            "scorer": "exact_set",
                            "passed": status == "passed",
                            "missing": ["AC7:unverifiable"],
                        }
                    ],
                    duration_s=rng.random(),
                    input_tokens=1200,
                    output_tokens=300,
                )

    with Store(db) as store:
        store.add_experiment_with_runs(experiment, runs())  # type: ignore[arg-type]


def measure(argv: list[str]) -> tuple[float, float]:
    run = measured(argv)
    return run.wall, run.peak_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "p.db"
        build(db, args.cases, args.k)
        runs = args.cases * args.k
        base, base_rss = measure([*PASSHAT, "report", "big", "--db", str(db), "--json"])
        print(f"{runs:,} runs; report --json: {base:.2f} s, peak RSS {base_rss:.0f} MiB")
        for fmt in ("jsonl", "csv", "parquet"):
            out = Path(tmp) / f"runs.{fmt}"
            wall, rss = measure([*PASSHAT, "export", "big", "--db", str(db), "-o", str(out)])
            size = out.stat().st_size / 2**20
            print(
                f"export {fmt:8} {wall:6.2f} s  ({wall / base:.2f}x report --json), "
                f"{size:.1f} MiB written, peak RSS {rss:.0f} MiB"
            )


if __name__ == "__main__":
    main()
