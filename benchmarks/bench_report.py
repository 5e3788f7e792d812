"""Benchmark: `passhat report` of 100,000 runs against a raw scan of what it reads.

Targets (issue #15):
- `report` and `report --json` of 10,000 cases × k = 10 take at most 2× a raw
  scan of the columns a report needs (`SELECT ... FROM run_summaries`),
  measured in-process (the library) and as commands (each in its own process,
  interpreter start included on both sides);
- the terminal report is bounded: its length at 100,000 runs is at most 1.2× its
  length at 1,000 runs (the tool-use table listed every run: 1.46 MB).

The store is built by `_fixtures.make_store` (real runs through the runner,
copied under new case ids). Each pair is measured back to back, `--repeat`
times; the ratio is the median of the pairs.

    .venv/bin/python benchmarks/bench_report.py [--cases 10000] [--k 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _fixtures import make_store
from _result import alternate, length_result, median_ratio, result, spread
from pydantic_core import to_json
from rich.console import Console

from passhat.report.experiment import experiment_dict, print_experiment_report
from passhat.store import _SUMMARY, Store

SCAN = f"SELECT {_SUMMARY} FROM run_summaries WHERE experiment_id = ? ORDER BY case_id, run_index"
SCAN_SCRIPT = f"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute({SCAN!r}, (sys.argv[2],)).fetchall()
print(len(rows))
"""


def raw_scan(db: Path, experiment_id: str) -> None:
    con = Store(db, create=False)
    con._db.execute(SCAN, (experiment_id,)).fetchall()
    con.close()


def terminal_report(db: Path, experiment_id: str) -> str:
    with Store(db, create=False) as store:
        experiment = store.experiment(experiment_id)
        runs = store.summaries(experiment_id, decode_items=False)  # as `passhat report`
    out = io.StringIO()
    print_experiment_report(Console(file=out, width=120, color_system=None), experiment, runs)
    return out.getvalue()


def json_report(db: Path, experiment_id: str) -> bytes:
    with Store(db, create=False) as store:
        experiment = store.experiment(experiment_id)
        runs = store.summaries(experiment_id)
    return to_json(experiment_dict(experiment, runs))


def json_floor(db: Path, experiment_id: str, report: dict[str, Any]) -> None:
    """What any `report --json` pays whatever it builds: reading the summaries and
    serialising the finished report (`report`, built beforehand)."""
    with Store(db, create=False) as store:
        store.summaries(experiment_id)
    to_json(report, inf_nan_mode="null")


IMPORTS_SCRIPT = "import passhat.cli.read, passhat.report.experiment, passhat.stats, numpy"
"""What `passhat report` imports before it reads a row (numpy: its statistics)."""


def command(argv: list[str]) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        small, small_id = make_store(Path(tmp), 100, 10)
        db, eid = make_store(Path(tmp), args.cases, args.k)
        runs = args.cases * args.k
        print(
            f"store: {args.cases:,} cases × k = {args.k}: {runs:,} runs, "
            f"{db.stat().st_size / 1e6:.0f} MB"
        )
        Store(db).close()  # any migration is applied before timing
        for name, report in [("report", terminal_report), ("report --json", json_report)]:
            times, scans = alternate(
                lambda r=report: r(db, eid), lambda: raw_scan(db, eid), args.repeat
            )
            print(f"{name} (library): {spread(times)}; raw scan {spread(scans)}")
            ok &= result(
                f"`{name}`, {runs:,} runs, in-process",
                median_ratio(times, scans),
                2,
                "report / raw scan of the columns it reads",
            )
        with Store(db, create=False) as store:
            finished = experiment_dict(store.experiment(eid), store.summaries(eid))
        floors, scans = alternate(
            lambda f=finished: json_floor(db, eid, f), lambda: raw_scan(db, eid), args.repeat
        )
        finished.clear()
        print(
            f"floor of `report --json` (read the summaries, serialise the finished report, "
            f"build nothing): {spread(floors)}, {median_ratio(floors, scans):.2f}× the raw scan"
        )
        env = {**os.environ, "PASSHAT_DB": str(db), "COLUMNS": "120"}
        passhat = [sys.executable, "-m", "passhat", "report", eid]
        scan = [sys.executable, "-c", SCAN_SCRIPT, str(db), eid]
        for name, argv in [("report", passhat), ("report --json", [*passhat, "--json"])]:
            os.environ.update(env)
            times, scans = alternate(lambda a=argv: command(a), lambda: command(scan), args.repeat)
            print(
                f"passhat {name} (command): {spread(times)}; raw scan (python -c) {spread(scans)}"
            )
            ok &= result(
                f"`passhat {name}`, {runs:,} runs, command",
                median_ratio(times, scans),
                2,
                "command wall / raw-scan script wall",
            )
        imports, scans = alternate(
            lambda: command([sys.executable, "-c", IMPORTS_SCRIPT]),
            lambda: command(scan),
            args.repeat,
        )
        print(
            f"imports of `passhat report` alone (python -c): {spread(imports)}, "
            f"{median_ratio(imports, scans):.2f}× the raw-scan script"
        )
        ok &= length_result(
            "terminal report",
            f"terminal report length, {runs:,} vs 1,000 runs",
            (terminal_report(db, eid), terminal_report(small, small_id)),
            (f"at {runs:,} runs", "at 1,000 runs"),
            "characters at 100k runs / at 1k runs",
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
