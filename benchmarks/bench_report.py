"""Benchmark: `passhat report` of 100,000 and 1,000,000 runs against a raw scan of what it reads.

Targets (issue #38; #15 and #29 before it), in each store shape of `--shapes`
(10,000 cases × k = 10 and 1,000 × 100: 100,000 runs each) and at `--big-cases` × 10
(1,000,000 runs):
- `report` takes at most 1.5× a raw scan of the columns a report needs (`SELECT ...
  FROM run_summaries`, rows fetched into Python as plain tuples), measured in-process
  (the command's own function, `passhat.cli.read.report`, run in this process) and as
  commands (each in its own process, interpreter start included on both sides);
- `report --json` (written piece by piece, as the command does for a pipe) takes at
  most 1.5× a decoding scan (the raw scan that also decodes the JSON columns, items
  and tool counts, with `json.loads`, each distinct text once) and at most 2× the raw
  scan;
- the terminal report is bounded: its length at 100,000 runs is at most 1.2× its
  length at 100 cases of the same k (1,000 runs at k = 10; the tool-use table listed
  every run: 1.46 MB);
- the peak RSS of `passhat report --json` of 1,000,000 runs is at most 1.2× that of
  `passhat report` of the same store (it was 2×: every run's items held decoded,
  every item and per-run token row held as a dict; then 2.77×: every run's summary
  held; from 200,000 runs it is written as the runs are read, `report.json_stream`).

The stores are built by `_fixtures.make_store` (real runs through the runner,
copied under new case ids in SQL, then each case's items of `report --json` kept by
`Store.fill_case_items`, the fill every writer calls at its end, and the figures and
cases by `Store.fill_summary`, as a run's end keeps them: a store as passhat leaves it
after a finished experiment); `--stores DIR` keeps them for the next run (the
store of 1,000,000 runs takes about 4 minutes to build; `--big-cases 0` skips it; a
kept store is filled the same way before anything is timed). Each
pair is measured back to back, `--repeat` times; the ratio is the median of the pairs.

    .venv/bin/python benchmarks/bench_report.py [--shapes 10000x10,1000x100] [--repeat 3]
        [--big-cases 100000] [--big-repeat 2] [--stores DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from _fixtures import kept_store
from _result import (
    alternate,
    compiled_passhat,
    in_turn,
    length_result,
    measured,
    median_ratio,
    result,
    spread,
)
from pydantic_core import to_json
from rich.console import Console

from passhat._gc import gc_paused
from passhat.report.experiment import experiment_dict, print_experiment_report
from passhat.store import _SUMMARY, Store

SCAN = f"SELECT {_SUMMARY} FROM run_summaries WHERE experiment_id = ? ORDER BY case_id, run_index"
SCAN_SCRIPT = f"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute({SCAN!r}, (sys.argv[2],)).fetchall()
print(len(rows))
"""
DECODING_SCRIPT = f"""
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute({SCAN!r}, (sys.argv[2],)).fetchall()
decoded = {{}}
for row in rows:
    for text in row[-2:]:
        if text not in decoded:
            decoded[text] = json.loads(text)
print(len(rows), len(decoded))
"""
"""The raw scan that also decodes the JSON columns (items, tool counts) with `json.loads`,
each distinct text once (runs of a case mostly repeat their values): what any report
that reads every run's items pays at least, done the plain way."""


def raw_scan(db: Path, experiment_id: str) -> list[tuple[Any, ...]]:
    """`SCAN_SCRIPT` in this process: rows as plain tuples (no `sqlite3.Row`, which a
    Store's own connection makes and which costs more per row: a slower yardstick)."""
    con = sqlite3.connect(db)
    try:
        rows: list[tuple[Any, ...]] = con.execute(SCAN, (experiment_id,)).fetchall()
    finally:
        con.close()
    return rows


def decoding_scan(db: Path, experiment_id: str) -> None:
    """`raw_scan`, then the JSON columns decoded, each distinct text once (`DECODING_SCRIPT`)."""
    decoded: dict[str, Any] = {}
    for row in raw_scan(db, experiment_id):
        for text in row[-2:]:
            if text not in decoded:
                decoded[text] = json.loads(text)


def terminal_report(db: Path, experiment_id: str) -> str:
    """What `passhat report` does (the cyclic collector paused, as in the command)."""
    with gc_paused(), Store(db, create=False) as store:
        experiment = store.experiment(experiment_id)
        runs = store.summaries(experiment_id, decode_items=False)  # as `passhat report`
        out = io.StringIO()
        print_experiment_report(Console(file=out, width=120, color_system=None), experiment, runs)
    return out.getvalue()


def in_process(db: Path, experiment_id: str, *, as_json: bool = False) -> None:
    """The command's own function (`passhat.cli.read.report`), run in this process, its
    stdout a UTF-8 pipe to /dev/null: the whole command (the store opened read-only, the
    report, the tokens billed unseen, `--json` written piece by piece as for a pipe)
    but the interpreter's start and the imports."""
    from passhat.cli.read import report

    with (
        open(os.devnull, "wb") as sink,
        io.TextIOWrapper(sink, encoding="utf-8") as out,
        contextlib.redirect_stdout(out),
    ):
        report(experiment_id, as_json=as_json, db=db)


def json_floor(db: Path, experiment_id: str, report: dict[str, Any]) -> None:
    """What any `report --json` pays whatever it builds: reading the summaries and
    serialising the finished report (`report`, built beforehand)."""
    with Store(db, create=False) as store:
        store.summaries(experiment_id)
    to_json(report, inf_nan_mode="null")


IMPORTS_SCRIPT = "import passhat.cli.report, passhat.report.experiment, passhat.stats, numpy"
"""What `passhat report` imports before it reads a row (numpy: its statistics): the
report's own module, not typer's command in passhat.cli.read (`passhat.cli.quick_report`
runs `report EXPERIMENT [--json] [--db PATH]` without typer)."""


def command(argv: list[str]) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


SHAPES = "10000x10,1000x100"
SMALL_CASES = 100
"""Cases of the store the terminal report's length is compared with (at each k)."""
RSS_TARGET = 1.2
"""Peak RSS of `report --json` at most this many times that of `report` (1,000,000 runs)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES, help=f"cases x k of each store ({SHAPES})")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--big-cases",
        type=int,
        default=100_000,
        help="cases × k = 10 for the 1,000,000-run rows (0: none)",
    )
    parser.add_argument("--big-repeat", type=int, default=2, help="pairs at --big-cases")
    parser.add_argument("--stores", type=Path, help="keep the stores in this folder, reuse them")
    args = parser.parse_args()
    compiled_passhat()  # commands are timed: none compiles passhat's modules itself
    os.environ["COLUMNS"] = "120"  # the report's width, in this process and in commands
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        stores = args.stores or Path(tmp)
        for shape in args.shapes.split(","):
            cases, k = (int(n) for n in shape.lower().split("x"))
            # the terminal report's length beside 100 cases at the same k (more cases
            # than a table lists, so the same tables): 1,000 runs at k = 10
            small = kept_store(stores, SMALL_CASES, k)
            ok &= shape_rows(stores, cases, k, args.repeat, small)
        if args.big_cases:
            ok &= big_rows(stores, args.big_cases, 10, args.big_repeat)
    return 0 if ok else 1


REPORT_TARGET = 1.5
"""`report` (and `report --json` beside the decoding scan): at most this many times."""
JSON_RAW_TARGET = 2
"""`report --json` beside the raw scan (which decodes nothing): at most this many times."""


def shape_rows(stores: Path, cases: int, k: int, repeat: int, small: tuple[Path, str]) -> bool:
    """Every ratio of one store shape, `cases` × `k`."""
    db, eid = kept_store(stores, cases, k)
    runs = cases * k
    shape = f"{runs:,} runs ({cases:,} × {k})"
    print(f"store: {cases:,} cases × k = {k}: {runs:,} runs, {db.stat().st_size / 1e6:.0f} MB")
    Store(db).close()  # any migration is applied before timing
    in_process(db, eid)  # the modules it imports when first needed: not timed in-process
    in_process(db, eid, as_json=True)
    ok = way_rows(
        shape,
        Way(
            "report",
            "in-process",
            lambda: in_process(db, eid),
            lambda: in_process(db, eid, as_json=True),
            lambda: raw_scan(db, eid),
            lambda: decoding_scan(db, eid),
            ("report / raw scan of the columns it reads", ""),
        ),
        repeat,
    )
    with Store(db, create=False) as store:
        finished = experiment_dict(store.experiment(eid), store.summaries(eid))
    floors, scans = alternate(
        lambda f=finished: json_floor(db, eid, f), lambda: raw_scan(db, eid), repeat
    )
    finished.clear()
    print(
        f"floor of `report --json` (read the summaries, serialise the finished report, "
        f"build nothing): {spread(floors)}, {median_ratio(floors, scans):.2f}× the raw scan"
    )
    ok &= command_rows(db, eid, shape, repeat)
    imports, scans = alternate(
        lambda: command([sys.executable, "-c", IMPORTS_SCRIPT]),
        lambda: command(scan_argv(SCAN_SCRIPT, db, eid)),
        repeat,
    )
    print(
        f"imports of `passhat report` alone (python -c): {spread(imports)}, "
        f"{median_ratio(imports, scans):.2f}× the raw-scan script"
    )
    small_runs = SMALL_CASES * k
    ok &= length_result(
        "terminal report",
        f"terminal report length, {runs:,} vs {small_runs:,} runs (k = {k})",
        (terminal_report(db, eid), terminal_report(*small)),
        (f"at {runs:,} runs", f"at {small_runs:,} runs"),
        f"characters at {runs:,} runs / at {small_runs:,} runs",
    )
    return ok


def json_results(
    what: str, times: list[float], scans: list[float], decoding: list[float], kind: str
) -> bool:
    """`report --json`'s two rows: beside the decoding scan and beside the raw scan."""
    ok = result(
        f"{what}, beside the decoding scan",
        median_ratio(times, decoding),
        REPORT_TARGET,
        f"report --json{kind} / scan{kind} that also decodes the JSON columns",
    )
    return ok & result(
        f"{what}, beside the raw scan",
        median_ratio(times, scans),
        JSON_RAW_TARGET,
        f"report --json{kind} / raw scan{kind} of the columns it reads",
    )


def scan_argv(script: str, db: Path, experiment_id: str) -> list[str]:
    return [sys.executable, "-c", script, str(db), experiment_id]


class Way(NamedTuple):
    """How `report` and `report --json` are measured beside the two scans."""

    name: str
    """`report` or `passhat report` (the rows' names)."""
    where: str
    """in-process or command"""
    report: Callable[[], object]
    as_json: Callable[[], object]
    scan: Callable[[], object]
    decode: Callable[[], object]
    compares: tuple[str, str]
    """What `report`'s ratio compares, and what `--json`'s say of their figures."""


def way_rows(shape: str, way: Way, repeat: int) -> bool:
    """`report` beside the raw scan, then `report --json` beside both scans, in turn."""
    times, scans = alternate(way.report, way.scan, repeat)
    print(f"{way.name} ({way.where}): {spread(times)}; raw scan {spread(scans)}")
    ok = result(
        f"`{way.name}`, {shape}, {way.where}",
        median_ratio(times, scans),
        REPORT_TARGET,
        way.compares[0],
    )
    times, scans, decoding = in_turn([way.as_json, way.scan, way.decode], repeat)
    print(
        f"{way.name} --json ({way.where}): {spread(times)}; raw scan {spread(scans)}; "
        f"decoding scan {spread(decoding)}"
    )
    what = f"`{way.name} --json`, {shape}, {way.where}"
    return ok & json_results(what, times, scans, decoding, way.compares[1])


def command_rows(db: Path, eid: str, shape: str, repeat: int) -> bool:
    """`passhat report` and `report --json` as commands beside the scan scripts, each
    pair (or three) in turn."""
    os.environ.update({"PASSHAT_DB": str(db), "COLUMNS": "120"})
    passhat = [sys.executable, "-m", "passhat", "report", eid]
    scan, decode = scan_argv(SCAN_SCRIPT, db, eid), scan_argv(DECODING_SCRIPT, db, eid)
    return way_rows(
        shape,
        Way(
            "passhat report",
            "command",
            lambda: command(passhat),
            lambda: command([*passhat, "--json"]),
            lambda: command(scan),
            lambda: command(decode),
            ("command wall / raw-scan script wall", " (wall)"),
        ),
        repeat,
    )


def big_rows(stores: Path, cases: int, k: int, repeat: int) -> bool:
    """At `cases` × `k` runs (1,000,000): the commands beside the scan scripts, and the
    peak RSS of `passhat report --json` beside `passhat report` (each command in its
    own process, started by a small launcher: `_result.measured`)."""
    db, eid = kept_store(stores, cases, k)
    runs = cases * k
    shape = f"{runs:,} runs ({cases:,} × {k})"
    print(f"store: {cases:,} cases × k = {k}: {runs:,} runs, {db.stat().st_size / 1e6:.0f} MB")
    Store(db).close()  # any migration is applied before timing
    ok = command_rows(db, eid, shape, repeat)
    passhat = [sys.executable, "-m", "passhat", "report", eid, "--db", str(db)]
    plain, as_json = measured(passhat), measured([*passhat, "--json"])
    print(
        f"{shape}: passhat report peak RSS {plain.peak_mb:.0f} MiB "
        f"({plain.wall:.1f} s); report --json {as_json.peak_mb:.0f} MiB ({as_json.wall:.1f} s)"
    )
    return ok & result(
        f"`passhat report --json` peak RSS, {shape}",
        as_json.peak_mb / plain.peak_mb,
        RSS_TARGET,
        "report --json peak RSS / report peak RSS",
    )


if __name__ == "__main__":
    raise SystemExit(main())
