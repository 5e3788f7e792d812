"""Benchmark: `passhat export` of 100,000 runs, against `passhat report --json` of the
same experiment.

Target (issues #12 and #29): `export` to `.jsonl` costs at most 2× the JSON report of
the same store (both read every run; the export writes one row each), in each store
shape of `--shapes`: 10,000 cases × k = 10 and 1,000 × 100 (it was 2.5-2.75× on
1,000 cases, 61 % of it JSON encoding). CSV and Parquet are printed beside it, with
no target. Each command runs in its own process (wall time and peak RSS include
interpreter start), the export and `report --json` in turn, `--repeat` times; the
ratio is the median of the pairs. The export is written to memory (`/dev/shm` where
there is one), as `report --json` writes to /dev/null: on a virtual machine's disk,
the writeback of its 87 MiB made one export take 1.0 s and the next 2.2 s.

`report --json` runs on a copy of the store without its kept items text
(`_fixtures.unkept_copy`): the report then reads and builds every run's items, as it
did when this target was set. Since #38 a finished experiment's store keeps each
case's items text, and its `report --json` is 25-35 % cheaper; the export reads what
it read before.

The stores are `_fixtures.make_store`'s (real runs through the runner, each case's
items of its own, copied under new case ids); `--stores DIR` keeps them.

    .venv/bin/python benchmarks/bench_export.py [--shapes 10000x10,1000x100] [--repeat 3]
        [--stores DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _fixtures import kept_store, unkept_copy
from _result import measured, median_ratio, result, spread

PASSHAT = [sys.executable, "-m", "passhat"]
SHAPES = "10000x10,1000x100"
TARGET = 2.0
"""`export .jsonl` wall at most this many times `report --json`'s."""


def paired(
    argv: list[str], base: list[str], repeat: int
) -> tuple[list[float], list[float], float, float]:
    """`argv` and `base` in turn, `repeat` times: walls of each, peak RSS of each (MiB)."""
    walls, bases, rss, base_rss = [], [], 0.0, 0.0
    for _ in range(repeat):
        run = measured(argv)
        walls.append(run.wall)
        rss = max(rss, run.peak_mb)
        run = measured(base)
        bases.append(run.wall)
        base_rss = max(base_rss, run.peak_mb)
    return walls, bases, rss, base_rss


def shape_rows(stores: Path, out: Path, cases: int, k: int, repeat: int) -> bool:
    db, eid = kept_store(stores, cases, k)
    runs = cases * k
    shape = f"{cases:,} × {k}"
    print(f"store: {cases:,} cases × k = {k}: {runs:,} runs, {db.stat().st_size / 1e6:.0f} MB")
    yardstick = unkept_copy(db, eid)  # report --json reading every run's items, as at #12
    report = [*PASSHAT, "report", eid, "--db", str(yardstick), "--json"]
    measured(report)  # any migration applied, the file in the page cache
    ok = True
    for fmt in ("jsonl", "csv", "parquet"):
        target = out / f"runs.{fmt}"
        export = [*PASSHAT, "export", eid, "--db", str(db), "-o", str(target)]
        walls, bases, rss, base_rss = paired(export, report, repeat)
        ratio = median_ratio(walls, bases)
        print(
            f"export {fmt:8} {spread(walls)}, {target.stat().st_size / 2**20:.1f} MiB written, "
            f"peak RSS {rss:.0f} MiB; report --json {spread(bases)}, peak RSS {base_rss:.0f} "
            f"MiB: {ratio:.2f}×"
        )
        if fmt == "jsonl":
            ok &= result(
                f"`passhat export .jsonl`, {runs:,} runs ({shape})",
                ratio,
                TARGET,
                "export wall / report --json wall (a store without kept items text)",
            )
    yardstick.unlink()
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES, help=f"cases x k of each store ({SHAPES})")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stores", type=Path, help="keep the stores in this folder, reuse them")
    args = parser.parse_args()
    ok = True
    memory = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    print(f"exports written to {memory or tempfile.gettempdir()}")
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=memory) as out:
        stores = args.stores or Path(tmp)
        for shape in args.shapes.split(","):
            cases, k = (int(n) for n in shape.lower().split("x"))
            ok &= shape_rows(stores, Path(out), cases, k, args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
