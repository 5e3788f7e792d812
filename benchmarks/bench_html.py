"""Benchmark: the HTML report of a 200-case × k = 10 experiment.

Targets: the page stays under 5 MB and Chromium loads it (issue #6), and at
100,000 runs (10,000 cases × k = 10, `_fixtures.make_store`, written the way
`passhat report --html` writes it) the page is at most 5 MB and loads within 2 s
(issue #15). Prints the
render time, the page size (and what it is made of), and Chromium's load time:
the wall time of `chromium --dump-dom` on the page minus the same on an empty
page, so browser start-up is not counted.

The runs are clarifier-like (tests/test_report_html.py `large_experiment`): a
~250-word ticket per case; per run the model writes ~235 words of its own
(Goal, Scope in, Scope out, a reason per annotation, a reply), which appear in
the transcript, the tool calls and the final state, as they do in real runs.

    .venv/bin/python benchmarks/bench_html.py [--cases 200] [--k 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _fixtures import make_store  # noqa: E402
from _result import result  # noqa: E402

from browser import dump_dom, find_chromium  # noqa: E402
from passhat.report.html import render_html, write_html  # noqa: E402
from passhat.store import Store  # noqa: E402
from test_report_html import large_experiment  # noqa: E402

LIMIT = 5_000_000


def _median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-cases", type=int, default=10_000)
    parser.add_argument("--big-k", type=int, default=10)
    args = parser.parse_args()
    ok = small(args)
    ok &= big(args.big_cases, args.big_k, args.repeat)
    return 0 if ok else 1


def big(cases: int, k: int, repeat: int) -> bool:
    """The page of a 100,000-run store, written as `passhat report --html` writes it."""
    with tempfile.TemporaryDirectory() as tmp:
        db, eid = make_store(Path(tmp), cases, k)
        target = Path(tmp) / "big.html"
        start = time.perf_counter()
        with Store(db, create=False) as store:
            experiment = store.experiment(eid)
            write_html(
                target,
                experiment,
                store.summaries(eid),
                load=lambda ids: store.runs(eid, cases=ids),
            )
        written = time.perf_counter() - start
        size = target.stat().st_size
        print(f"{cases * k:,} runs: page {size / 1e6:.2f} MB written in {written:.1f} s")
        print(_made_of(target.read_text(encoding="utf-8"), size))
        ok = result(f"HTML page size, {cases * k:,} runs", size / LIMIT, 1, "bytes / 5 MB")
        if not find_chromium():
            print("chromium: not installed; load time not measured")
            return ok
        empty = Path(tmp) / "empty.html"
        empty.write_text("<!doctype html><title>empty</title>", encoding="utf-8")
        base = _median_seconds(lambda: dump_dom(empty, budget_ms=1000), repeat)
        full = _median_seconds(lambda: dump_dom(target, budget_ms=1000, timeout=300), repeat)
        print(f"chromium: {full:.2f} s for --dump-dom, {base:.2f} s for an empty page")
        ok &= result(
            f"HTML page load in Chromium, {cases * k:,} runs",
            (full - base) / 2.0,
            1,
            "(load - empty-page load) / 2 s",
        )
        return ok


def _made_of(html: str, size: int) -> str:
    """What a page's bytes are: the embedded runs, the other pages of cases, the rest."""
    blobs = {
        name: len(match.group(1)) if match else 0
        for name in ("runs", "pages")
        for match in [re.search(rf'id="passhat-{name}"[^>]*>([^<]*)<', html)]
    }
    return (
        f"  runs blob {blobs['runs'] / 1e6:.2f} MB, other pages of cases "
        f"{blobs['pages'] / 1e6:.2f} MB, markup {(size - sum(blobs.values())) / 1e6:.2f} MB"
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
