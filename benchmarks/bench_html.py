"""Benchmark: the HTML report of a 200-case × k = 10 experiment.

Targets: the page stays under 5 MB and Chromium loads it (issue #6), and at
100,000 runs in each shape of `--shapes` (1,000 cases × k = 100, 10,000 × 10,
100,000 × 1: `_fixtures.make_store`, the page written by the `passhat report
--html` command itself) the page is at most 5 MB and loads within 2 s (issue
#15), and writing it takes at most 10 s and twice the peak RSS of `passhat
report` alone, and at most 2.5× its CPU (user + sys; issue #38; #29: it was 5-12×), the two
commands in turn `--repeat` times, the median of the pairs' ratios. `--million`
adds the cell of 1,000,000 runs, 10,000 cases × k = 100, with the same targets (its
store takes about 3 minutes and 4.5 GB to build: keep it with `--stores DIR`).
Prints the render time, the page size (and what it is made of), and Chromium's
load time: the wall time of `chromium --dump-dom` on the page minus the same on an
empty page, so browser start-up is not counted.

Building the stores takes about 15 s (1,000 × 100: 10,000 real runs are the
template), 10 s and 25 s (100,000 × 1: 1,000 copies of 100 runs) on an idle
machine; `--stores DIR` keeps them for the next run.

The runs are clarifier-like (tests/test_report_html.py `large_experiment`): a
~250-word ticket per case; per run the model writes ~235 words of its own
(Goal, Scope in, Scope out, a reason per annotation, a reply), which appear in
the transcript, the tool calls and the final state, as they do in real runs.

    .venv/bin/python benchmarks/bench_html.py [--cases 200] [--k 10] [--repeat 3]
        [--shapes 1000x100,10000x10,100000x1] [--million] [--stores DIR] [--skip-small]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _fixtures import make_store  # noqa: E402
from _result import compiled_passhat, measured, median_ratio, result  # noqa: E402

from browser import dump_dom_process as dump_dom  # noqa: E402
from browser import find_chromium  # noqa: E402
from passhat.report.html import render_html  # noqa: E402
from test_report_html import large_experiment  # noqa: E402

LIMIT = 5_000_000


def _median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


SHAPES = "1000x100,10000x10,100000x1"
"""100,000 runs as few cases with many runs each, the usual shape, and one run per case."""
RSS_TARGET = 2.0
"""Peak RSS of `passhat report --html` at most this many times that of `passhat report`."""
WRITE_TARGET_S = 10.0
"""Wall seconds of `passhat report --html` (terminal report included) at 100,000 runs."""
CPU_TARGET = 2.5
"""CPU of `passhat report --html FILE` at most this many times that of `passhat report`."""
MILLION = "10000x100"
"""The cell of 1,000,000 runs (`--million`)."""
PASSHAT = [sys.executable, "-m", "passhat"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--shapes", default=SHAPES, help=f"cases x k of each big store (default {SHAPES})"
    )
    parser.add_argument(
        "--stores",
        type=Path,
        help="keep the big stores in this folder and reuse them (default: built each time)",
    )
    parser.add_argument("--skip-small", action="store_true", help="only the big stores")
    parser.add_argument(
        "--million",
        action="store_true",
        help=f"also 1,000,000 runs ({MILLION}; about 3 minutes and 4.5 GB to build)",
    )
    args = parser.parse_args()
    compiled_passhat()  # commands are timed: none compiles passhat's modules itself
    ok = True if args.skip_small else small(args)
    shapes = [shape for shape in args.shapes.split(",") if shape]
    with tempfile.TemporaryDirectory() as tmp:
        stores = args.stores or Path(tmp)
        for shape in [*shapes, MILLION] if args.million else shapes:
            cases, k = (int(n) for n in shape.lower().split("x"))
            ok &= big(stores, cases, k, args.repeat)
    return 0 if ok else 1


def _store(folder: Path, cases: int, k: int) -> tuple[Path, str]:
    """A `cases` × `k` store in `folder` with no two cases alike (`_distinct`): the one
    kept there, or built (and timed)."""
    kept = folder / f"store-{cases}x{k}-distinct" / "id.txt"
    db = kept.parent / f"store-{cases}x{k}.db"
    if kept.is_file() and db.is_file():
        return db, kept.read_text(encoding="utf-8").strip()
    start = time.perf_counter()
    kept.parent.mkdir(parents=True, exist_ok=True)
    db, eid = make_store(kept.parent, cases, k)
    built = time.perf_counter() - start
    _distinct(db)
    kept.write_text(eid, encoding="utf-8")
    print(
        f"store of {cases:,} cases × k = {k}: built in {built:.1f} s, "
        f"made distinct in {time.perf_counter() - start - built:.1f} s"
    )
    return db, eid


def _distinct(db: Path) -> None:
    """No two cases alike, as the page sees them: `make_store` copies 100 cases' runs,
    so durations (instant agents: all 0.0 s), statuses' order and item names (the case
    id and the seed's labels) would repeat. Each run gets a duration of its own (0.5 to
    120 s, from a hash of case and run), each case's items a word of their own (a hash
    of the case id, not the id) in place of the case id."""

    def word(case: str) -> str:
        return hashlib.sha256(case.encode()).hexdigest()[:10]

    def seconds(case: str, index: int) -> float:
        digest = hashlib.sha256(f"{case}/{index}".encode()).digest()
        return 0.5 + int.from_bytes(digest[:4], "big") % 119_500 / 1000

    con = sqlite3.connect(db, isolation_level=None)
    con.create_function("word", 1, word, deterministic=True)
    con.create_function("seconds", 2, seconds, deterministic=True)
    con.execute(
        "UPDATE runs SET duration_s = seconds(case_id, run_index), "
        "score = replace(score, '\"' || case_id || '/', '\"' || word(case_id) || '/')"
    )
    con.close()


PEAK = """
import re, sys
from passhat.cli import main

try:
    main(sys.argv[1:])
except SystemExit as exit_:
    code = exit_.code
else:
    code = 0
status = open("/proc/self/status").read()
sys.stderr.write("PEAK_KB " + re.search(r"VmHWM:\\s+(\\d+)", status).group(1) + "\\n")
sys.exit(code)
"""
"""`passhat` with its peak RSS written last to stderr: the high-water mark of its own
memory since exec (ru_maxrss of a child also counts the parent's RSS at fork). `main`
is given its arguments, so it returns instead of ending the process at once as the
`passhat` command does (cli._hard_exit): the wall includes the interpreter's teardown."""


def _command(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of `passhat *args`, in its own process."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall = time.perf_counter() - start
    peak = re.search(rb"PEAK_KB (\d+)", done.stderr)
    if done.returncode or not peak:
        raise RuntimeError(
            f"passhat {' '.join(args)}: exit {done.returncode}, {done.stderr[-2000:]!r}"
        )
    return wall, int(peak.group(1)) / 1024


def big(folder: Path, cases: int, k: int, repeat: int) -> bool:
    """The page of a `cases` × `k` store, written by `passhat report --html` itself."""
    db, eid = _store(folder, cases, k)
    shape = f"{cases * k:,} runs, {cases:,} cases × k = {k}"
    target = db.parent / "page.html"
    passhat = ["report", eid, "--db", str(db)]
    _command(passhat)  # the store read once, so neither figure pays for a cold cache
    # the terminal report alone, then with the page: what the page adds
    report_s, report_mb = _command(passhat)
    written_s, written_mb = _command([*passhat, "--html", str(target)])
    size = target.stat().st_size
    print(f"{shape}: page {size / 1e6:.2f} MB")
    print(
        f"  passhat report --html: {written_s:.1f} s wall, peak RSS {written_mb:.0f} MB; "
        f"passhat report alone: {report_s:.1f} s, {report_mb:.0f} MB"
    )
    print(_made_of(target.read_text(encoding="utf-8"), size))
    ok = result(f"HTML page size, {shape}", size / LIMIT, 1, "bytes / 5 MB")
    ok &= result(
        f"HTML page written, {shape}: peak RSS",
        written_mb / report_mb,
        RSS_TARGET,
        "peak RSS of report --html / of report",
    )
    ok &= result(
        f"HTML page written, {shape}: wall",
        written_s / WRITE_TARGET_S,
        1,
        f"wall of report --html / {WRITE_TARGET_S:g} s",
    )
    ok &= _cpu(passhat, target, repeat, shape)
    if not find_chromium():
        print("chromium: not installed; load time not measured")
        return ok
    empty = db.parent / "empty.html"
    empty.write_text("<!doctype html><title>empty</title>", encoding="utf-8")
    base = _median_seconds(lambda: dump_dom(empty, budget_ms=1000), repeat)
    full = _median_seconds(lambda: dump_dom(target, budget_ms=1000, timeout=300), repeat)
    print(f"  chromium: {full:.2f} s for --dump-dom, {base:.2f} s for an empty page")
    ok &= result(
        f"HTML page load in Chromium, {shape}",
        (full - base) / 2.0,
        1,
        "(load - empty-page load) / 2 s",
    )
    last = f"c{cases}-run{k}"
    opened = _median_seconds(lambda: dump_dom(target, last, budget_ms=1000, timeout=300), repeat)
    print(
        f"  the last case's last run (#{last}: its page drawn, its detail shown or named): "
        f"{opened - full:+.2f} s beside the plain load"
    )
    return ok


def _cpu(passhat: list[str], target: Path, repeat: int, shape: str) -> bool:
    """CPU (user + sys) of `passhat report` and of `passhat report --html`, each in its
    own process, in turn `repeat` times: the median of the pairs' ratios against
    `CPU_TARGET`. Both print to /dev/null; the page command writes only its path."""
    reports: list[float] = []
    pages: list[float] = []
    for _ in range(repeat):
        reports.append(measured([*PASSHAT, *passhat]).cpu)
        pages.append(measured([*PASSHAT, *passhat, "--html", str(target)]).cpu)
    load = os.getloadavg()[0]
    print(
        f"  CPU: report --html {statistics.median(pages):.2f} s, report "
        f"{statistics.median(reports):.2f} s (median of {repeat} each; load average {load:.1f})"
    )
    return result(
        f"HTML page written, {shape}: CPU",
        median_ratio(pages, reports),
        CPU_TARGET,
        "CPU (user + sys) of report --html / of report, in turn (median of pairs)",
    )


def _made_of(html: str, size: int) -> str:
    """What a page's bytes are: the embedded runs, the other pages of cases, the first
    page's case sections (grids), the rest."""
    blobs = {
        name: len(match.group(1)) if match else 0
        for name in ("runs", "pages")
        for match in [re.search(rf'id="passhat-{name}"[^>]*>([^<]*)<', html)]
    }
    start = html.find('<div class="case-sections">')
    sections = len(html[start : html.find("</main>")].encode("utf-8")) if start >= 0 else 0
    rest = size - sum(blobs.values()) - sections
    return (
        f"  runs blob {blobs['runs'] / 1e6:.2f} MB, other pages of cases "
        f"{blobs['pages'] / 1e6:.2f} MB, first page's case sections {sections / 1e6:.2f} MB, "
        f"other markup {rest / 1e6:.2f} MB"
    )


def small(args: argparse.Namespace) -> bool:

    experiment, runs = large_experiment(args.cases, args.k)
    heavy = sum(
        len(json.dumps([r.transcript, r.tool_calls, r.final_state, r.score, r.output]))
        for r in runs
    )
    print(f"experiment: {args.cases} cases × k = {args.k}, {len(runs)} recorded runs")
    print(f"raw run data (transcripts, tool calls, final states, scores): {heavy / 1e6:.1f} MB")

    html = ""

    def render() -> None:
        nonlocal html
        html = render_html(experiment, runs)

    render_s = _median_seconds(render, args.repeat)
    size = len(html.encode("utf-8"))
    blob = re.search(r'id="passhat-runs"[^>]*>([^<]*)<', html)
    blob_size = len(blob.group(1)) if blob else 0
    print(f"render: {render_s:.2f} s (median of {args.repeat})")
    print(
        f"page: {size / 1e6:.2f} MB (limit {LIMIT / 1e6:.0f} MB): runs blob {blob_size / 1e6:.2f} MB, "
        f"markup {(size - blob_size) / 1e6:.2f} MB"
    )

    if not find_chromium():
        print("chromium: not installed (make test installs it); load time not measured")
        return size < LIMIT
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(html, encoding="utf-8")
        empty = Path(tmp) / "empty.html"
        empty.write_text("<!doctype html><title>empty</title>", encoding="utf-8")
        anchor = re.search(r'<th class="runcol"[^>]*><a href="#([^"]+)"', html)
        fragment = anchor.group(1) if anchor else ""
        base = _median_seconds(lambda: dump_dom(empty, budget_ms=1000), args.repeat)
        full = _median_seconds(lambda: dump_dom(page, budget_ms=1000, timeout=300), args.repeat)
        opened = _median_seconds(
            lambda: dump_dom(page, fragment, budget_ms=1000, timeout=300), args.repeat
        )
    print(
        f"chromium: {full:.2f} s wall for --dump-dom, {base:.2f} s for an empty page: "
        f"load ≈ {full - base:.2f} s (median of {args.repeat})"
    )
    print(
        f"first transcript (unpack every run, draw one): ≈ {opened - full:.2f} s more "
        f"(#{fragment}; wall-time difference, virtual time does not count script time)"
    )
    return result(
        f"HTML page size, {args.cases} cases × k = {args.k}", size / LIMIT, 1, "bytes / 5 MB"
    )


if __name__ == "__main__":
    raise SystemExit(main())
