"""Benchmark: the reading commands no other benchmark covers, at 100,000 runs, beside
`passhat report --json` of the same store.

Targets (issue #15, "scale cliffs"), each command in its own process (interpreter
start included on both sides), `report --json` timed in turn with it:
- `compare A B` (terminal and `--json`) of two experiments of 10,000 cases × k = 10
  takes at most the time of `report --json` of one of them (it needs each run's
  status and tokens, a report far more);
- the terminal `compare` is bounded: its length at 100,000 runs a side is at most
  1.2× its length at 1,000 (it listed every case short of the plan: 8,651 lines);
- `export` (.jsonl) takes at most 2× `report --json` (bench_export's target, here on
  runs as `passhat run` writes them, tool calls and all) and `export --per-case` at
  most 1×; their peak RSS at most `report --json`'s (rows are streamed);
- `regrade` and `cassette` hold at most `report --json`'s peak RSS (they read the
  runs a few cases at a time / the transcripts alone); regrade's wall beside a raw
  SQL copy of the same rows is printed against 3×;
- `check` of a suite of `--suite-cases` cases and `audit` of a folder of as many
  configurations × 10 runs print at most 1.2× what they print for 100 (every case,
  configuration and finding was listed).

`report --json` runs on a copy of the store without its kept items text
(`_fixtures.unkept_copy`): it reads and builds every run's items, as it did when these
targets were set (#38's kept text made the report cheaper, not these commands dearer).

The second experiment is a regrade of the first under a suite whose every third
case lost one goal item (a third of the cases move), as a user's would.

    .venv/bin/python benchmarks/bench_commands.py [--cases 10000] [--k 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _fixtures import make_store, make_suite, unkept_copy
from _result import length_result, measured, median_ratio, result, spread

PASSHAT = [sys.executable, "-m", "passhat"]


def measure(argv: list[str], *, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command, in its own process."""
    run = measured(argv, ok=ok)
    return run.wall, run.peak_mb


def output(argv: list[str]) -> str:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout


def paired(
    argv: list[str], base: list[str], repeat: int, ok: tuple[int, ...] = (0,)
) -> tuple[list[float], list[float], float, float]:
    """`argv` and `base` in turn, `repeat` times: walls of each, peak RSS of each."""
    walls, bases, rss, base_rss = [], [], 0.0, 0.0
    for _ in range(repeat):
        wall, peak = measure(argv, ok=ok)
        walls.append(wall)
        rss = max(rss, peak)
        wall, peak = measure(base)
        bases.append(wall)
        base_rss = max(base_rss, peak)
    return walls, bases, rss, base_rss


def beside_report(
    what: str, argv: list[str], report: list[str], repeat: int, target: float, compares: str
) -> tuple[bool, float, float]:
    """`argv` and `report` in turn (`paired`), printed, and the median of their wall
    ratios against `target` as `what`: (met, peak RSS of argv, peak RSS of report)."""
    walls, bases, rss, base_rss = paired(argv, report, repeat)
    print(
        f"{what}: {spread(walls)}, peak RSS {rss:.0f} MB; "
        f"report --json {spread(bases)}, {base_rss:.0f} MB"
    )
    return result(what, median_ratio(walls, bases), target, compares), rss, base_rss


def edited_suite(folder: Path, cases: int) -> Path:
    """The fixture's suite of `cases` cases, every third one without its AC 7 goal item."""
    make_suite(folder, cases)
    for i, path in enumerate(sorted((folder / "cases").glob("*.yaml"))):
        if i % 3 == 0:
            head, goal = path.read_text(encoding="utf-8").split("\ngoal:\n", 1)
            lines = goal.splitlines()
            cut = next(j for j, line in enumerate(lines) if line.strip() == "- ac: 7")
            path.write_text(head + "\ngoal:\n" + "\n".join(lines[:cut]) + "\n", encoding="utf-8")
    return folder


def raw_copy(db: Path, experiment_id: str) -> float:
    """Seconds SQLite takes to copy the experiment's rows (triggers too), rolled back."""
    con = sqlite3.connect(db, isolation_level=None)
    columns = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    select = ", ".join("'ffffffff'" if c == "experiment_id" else c for c in columns)
    start = time.perf_counter()
    con.execute("BEGIN")
    con.execute(
        f"INSERT INTO runs ({', '.join(columns)}) SELECT {select} FROM runs "
        "WHERE experiment_id = ?",
        (experiment_id,),
    )
    took = time.perf_counter() - start
    con.execute("ROLLBACK")
    con.close()
    return took


def audit_folder(root: Path, configurations: int, seed: int = 3) -> Path:
    """`configurations` × 10 run directories with a grade file, 3 % of them missing."""
    rng = random.Random(seed)
    (root / "outputs").mkdir(parents=True)
    (root / "benchmark.json").write_text(json.dumps({"runs_per_configuration": 10}))
    for c in range(configurations):
        for r in range(1, 11):
            if rng.random() < 0.03:
                continue
            run = root / "outputs" / f"config-{c:05d}" / f"run-{r}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text(json.dumps({"passed": rng.random() < 0.7}))
    return root


def regraded(tmp: Path, db: Path, eid: str, cases: int) -> tuple[str, float, float]:
    """Regrade `eid` under the edited suite as `<eid>-regraded`: (name, wall, RSS)."""
    suite = edited_suite(tmp / f"edited-{cases}", cases)
    name = f"{eid}-regraded"
    wall, rss = measure(
        [*PASSHAT, "regrade", eid, "--db", str(db), "--suite", str(suite), "--name", name,
         "--accept-changes"]
    )  # fmt: skip
    return name, wall, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--suite-cases", type=int, default=2_000)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        small, small_id = make_store(tmp, 100, 10)
        db, eid = make_store(tmp, args.cases, args.k)
        runs = args.cases * args.k
        print(
            f"store: {args.cases:,} cases × k = {args.k}: {runs:,} runs, "
            f"{db.stat().st_size / 1e6:.0f} MB"
        )
        yardstick = unkept_copy(db, eid)  # report --json reading every run's items
        report = [*PASSHAT, "report", eid, "--db", str(yardstick), "--json"]
        measure(report)  # any migration applied, the file in the page cache

        b, regrade_wall, regrade_rss = regraded(tmp, db, eid, args.cases)
        small_b, _, _ = regraded(tmp, small, small_id, 100)
        copy = raw_copy(db, eid)
        _, report_rss = measure(report)
        print(
            f"regrade: {regrade_wall:.1f} s, peak RSS {regrade_rss:.0f} MB; raw SQL copy of "
            f"the rows {copy:.1f} s; report --json peak RSS {report_rss:.0f} MB"
        )
        ok &= result(
            f"`regrade` peak RSS, {runs:,} runs",
            regrade_rss / report_rss,
            1,
            "regrade RSS / report --json RSS",
        )
        ok &= result(
            f"`regrade` wall, {runs:,} runs",
            regrade_wall / copy,
            3,
            "regrade / raw SQL copy of the rows",
        )

        compare = [*PASSHAT, "compare", eid, b, "--db", str(db)]
        for what, argv in [("compare", compare), ("compare --json", [*compare, "--json"])]:
            met, _, _ = beside_report(
                f"`passhat {what}`, {runs:,} runs a side",
                argv,
                report,
                args.repeat,
                1,
                "compare wall / report --json wall of one side",
            )
            ok &= met
        ok &= length_result(
            "terminal compare",
            f"terminal compare length, {runs:,} vs 1,000 runs a side",
            (output(compare), output([*PASSHAT, "compare", small_id, small_b, "--db", str(small)])),
            (f"at {runs:,} runs a side", "at 1,000"),
            "characters at the full size / at 1,000 runs a side",
        )

        # written to memory, as report --json writes to /dev/null (see bench_export.py)
        out = Path(tempfile.mkdtemp(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else tmp))
        exports = [
            ("export .jsonl", ["-o", str(out / "runs.jsonl")], 2),
            ("export --per-case", ["-o", str(out / "cases.csv"), "--per-case"], 1),
        ]
        for what, options, target in exports:
            argv = [*PASSHAT, "export", eid, "--db", str(db), *options]
            met, rss, base_rss = beside_report(
                f"`passhat {what}`, {runs:,} runs",
                argv,
                report,
                args.repeat,
                target,
                "export wall / report --json wall",
            )
            ok &= met
            ok &= result(
                f"`passhat {what}` peak RSS, {runs:,} runs",
                rss / base_rss,
                1,
                "export RSS / report --json RSS",
            )
        shutil.rmtree(out)

        # the fixture's runs asked no model: cassette reads every transcript, then says so
        cassette = [*PASSHAT, "cassette", eid, "--db", str(db), "-o", str(tmp / "t.jsonl")]
        wall, rss = measure(cassette, ok=(0, 2))
        print(f"passhat cassette: {wall:.2f} s, peak RSS {rss:.0f} MB")
        ok &= result(
            f"`passhat cassette` peak RSS, {runs:,} runs",
            rss / report_rss,
            1,
            "cassette RSS / report --json RSS",
        )

        n = args.suite_cases
        for what, unit, folder in [
            ("check", "cases", lambda c: make_suite(tmp / f"suite-{c}", c)),
            ("audit", "configurations", lambda c: audit_folder(tmp / f"audit-{c}", c)),
        ]:
            ok &= length_result(
                f"passhat {what}",
                f"`passhat {what}` length, {n:,} vs 100 {unit}",
                (
                    output([*PASSHAT, what, str(folder(n))]),
                    output([*PASSHAT, what, str(folder(100))]),
                ),
                (f"for {n:,}", "for 100"),
                "characters for many / for 100",
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
