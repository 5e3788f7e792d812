"""`passhat view` in headless Chromium: every page renders without a console error,
a concurrent `passhat run` shows up live, compare says what `compare --json` says,
the trend flags a planted regression, and the report's injection corpus runs nothing
on any page. Screenshots for docs/view.md land in test-artifacts/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

import pytest

from devtools import Page, chromium_page
from passhat.view.beacon import opening_page
from test_report_html import IMG, SCRIPT, hostile
from view_stores import served, suite_experiment, trend_store, write_store

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
LIVE_ARGS = ("--name", "live", "--concurrency", "1")


def pages(case: str, a: str = "p2", b: str = "p3", suite: str = "coupon") -> dict[str, str]:
    """Every page of the view, by name, as a path with its query."""
    return {
        "experiments": "",
        "experiment": f"e/{b}",
        "report": f"e/{b}/report",
        "cases": f"e/{b}/cases?page=1",
        "run": "runs?" + urlencode({"e": b, "case": case, "a": 1}),
        "diff": "runs?" + urlencode({"e": b, "case": case, "a": 1, "b": 2}),
        "compare": "compare?" + urlencode({"a": a, "b": b}),
        "trend": "trend?" + urlencode({"suite": suite}),
    }


def at(url: str, path: str) -> str:
    """The page `path` of the view whose printed URL is `url`, its token kept: a page
    opened first, or after a view restarted, needs it (the cookie follows)."""
    root, _, token = url.partition("?")
    return root + path + (("&" if "?" in path else "?") + token if token else "")


def visit(page: Page, url: str, path: str = "") -> None:
    page.goto(at(url, path))
    page.wait_for("document.readyState === 'complete'")


@pytest.fixture(scope="module")
def trend_view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The trend store and one `passhat view` of it, for the tests that only read it
    (each in a browser context of its own): one view's start, not one a test."""
    db = trend_store(tmp_path_factory.mktemp("trend") / "passhat.db")
    with served(db) as url:
        yield db, url


def test_every_page_renders_without_console_errors(trend_view: tuple[Path, str]) -> None:
    url = trend_view[1]
    with chromium_page() as page:
        visit(page, url)  # the printed URL: its token becomes the cookie
        bare = url.partition("?")[0]
        for name, path in pages("case-13").items():
            visit(page, bare, path)  # every page, its script and its stream by the cookie
            assert page.evaluate("document.title").startswith("passhat"), name  # not a 403
            if name not in ("report", "cases"):  # the report's pages have no live stream
                page.wait_for("document.getElementById('stream').dataset.state === 'on'")
            assert page.errors() == [], name
            assert page.evaluate("document.querySelectorAll('#problem').length") == 0, name
            page.screenshot(f"view-{name}")
        # the filter hides what does not match; sorting by pass rate puts p3's 40 % first
        visit(page, url)
        page.evaluate(
            "(() => { const f = document.getElementById('filter'); f.value = 'p4';"
            " f.dispatchEvent(new Event('input')); })()"
        )
        shown = "Array.from(document.querySelectorAll('#experiments tbody tr'))"
        visible = page.evaluate(f"{shown}.filter(r => !r.hidden).map(r => r.dataset.name)")
        assert visible == ["p4"]
        page.evaluate("document.querySelector('th[data-key=rate]').click()")
        assert page.evaluate(f"{shown}.map(r => r.dataset.name)")[:2] in (
            ["p3", "p4"],
            ["p4", "p3"],
        )
        assert page.errors() == []


def test_the_page_open_hands_the_browser_leads_to_the_view(
    trend_view: tuple[Path, str],
) -> None:
    """`--open` gives the browser a file that leads to the printed URL (the token on no
    command line): it does, and the token it carries becomes the cookie."""
    db, url = trend_view
    with chromium_page() as page:
        opening = opening_page(db, url)  # the view's own folder: the test is its user
        assert opening.startswith("file:///") and "token" not in opening
        page.goto(opening)
        page.wait_for("location.protocol === 'http:' && document.readyState === 'complete'")
        page.wait_for("document.getElementById('stream').dataset.state === 'on'")
        visit(page, url.partition("?")[0], "e/p3")  # by the cookie
        assert page.evaluate("document.title").startswith("passhat")
        assert page.errors() == []  # the view removes the page when it stops


def test_compare_page_says_what_compare_json_says(trend_view: tuple[Path, str]) -> None:
    db, url = trend_view
    cli = subprocess.run(
        [sys.executable, "-m", "passhat", "compare", "p2", "p3", "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
    )
    expected = json.loads(cli.stdout)
    with chromium_page() as page:
        visit(page, url, pages("case-00")["compare"])
        shown = page.evaluate(
            "Array.from(document.querySelectorAll('#differences tr[data-metric]')).map(r =>"
            " [r.dataset.metric, Number(r.dataset.difference), Number(r.dataset.low),"
            " Number(r.dataset.high)])"
        )
        lost = page.evaluate(
            'document.querySelector(\'#case-differences tr[data-case="case-12"]'
            " td[data-items=lost]').innerText"
        )
        outcome = page.evaluate("document.getElementById('verdict').dataset.outcome")
        text = page.evaluate("document.getElementById('verdict').textContent")
        assert page.errors() == []
    assert outcome == expected["verdict"]["outcome"] == "worse"
    assert lost == "AC2:unverifiable 100.0% → 0.0%"  # found in every run of p2, none of p3
    assert expected["verdict"]["text"] in " ".join(text.split())
    assert {m: (d, lo, hi) for m, d, lo, hi in shown} == {
        key: (m["difference"], m["low"], m["high"]) for key, m in expected["metrics"].items()
    }


def test_trend_flags_the_planted_regression(trend_view: tuple[Path, str]) -> None:
    url = trend_view[1]
    with chromium_page() as page:
        visit(page, url, pages("case-00")["trend"])
        flagged = page.evaluate(
            "Array.from(document.querySelectorAll('#points tr.regression')).map(r =>"
            " r.dataset.experiment)"
        )
        red = page.evaluate(
            "Array.from(document.querySelectorAll('#plot circle.regression')).map(c =>"
            " c.dataset.experiment)"
        )
        links = page.evaluate(
            "Array.from(document.querySelectorAll('#plot a')).map(a => a.getAttribute('href'))"
        )
        assert page.errors() == []
    assert flagged == red == ["e0000003"]  # p4 is as bad as p3, not worse than it
    assert links == [f"/e/e000000{n}" for n in range(1, 5)]


def test_a_run_recorded_by_a_concurrent_passhat_run_shows_in_place(tmp_path: Path) -> None:
    """The experiments page, left open, shows a run another process records, swapped in
    without a reload. How soon is benchmarks/bench_view.py --live's (target 2 s); here
    the page gets 60 s, which only bounds a failure."""
    db = trend_store(tmp_path / "passhat.db")
    row = "document.querySelector('#experiments tr[data-name=live]')"
    with served(db) as url, chromium_page() as page:
        visit(page, url)
        page.wait_for("document.getElementById('stream').dataset.state === 'on'")
        assert page.evaluate(f"{row} === null")  # no run of it yet
        writer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "passhat",
                "run",
                "examples/clarify",
                "--db",
                str(db),
                *LIVE_ARGS,
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PASSHAT_DB": str(db)},
        )
        try:
            page.wait_for(
                f"{row} && Number({row}.dataset.counted) + Number({row}.dataset.errored) > 0",
                timeout=60,
            )
        finally:
            writer.wait(120)
        assert page.evaluate("location.pathname") == "/"  # updated in place, never reloaded
        assert int(page.evaluate("document.body.dataset.refreshed")) >= 1
        assert page.errors() == []


def test_the_injection_corpus_runs_nothing_on_any_page(tmp_path: Path) -> None:
    e, runs, case = hostile()
    e = replace(e, name="hostile", model=IMG, prompt_version=SCRIPT)
    other = replace(e, id="9e8d7c6b", name="hostile-again", created_at="2026-05-05T09:30:00Z")
    db = write_store(
        tmp_path / "passhat.db",
        [(e, runs), (other, [replace(r, experiment_id=other.id) for r in runs])],
    )
    with served(db) as url, chromium_page() as page:
        for name, path in pages(case, "hostile", "hostile-again", SCRIPT).items():
            if name == "diff":  # run 2 of the corpus errored; diff it with itself
                path = "runs?" + urlencode(
                    {"e": "hostile", "case": case, "a": 1, "eb": "hostile-again", "b": 1}
                )
            visit(page, url, path)
            assert page.evaluate("document.title").startswith("passhat"), name
            assert not page.evaluate("document.querySelectorAll('[id^=pwned]').length"), name
            assert not page.evaluate("document.querySelectorAll('img').length"), name
            assert page.errors() == [], name
            html = page.html()
            assert "<script>document.title" not in html, name
            if name not in ("report", "cases", "compare"):
                assert SCRIPT in page.evaluate("document.body.innerText") or case in page.evaluate(
                    "document.body.innerText"
                ), name
        page.screenshot("view-hostile")


WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from passhat.store import Store
from view_stores import suite_experiment
e, runs = suite_experiment(1, [3, 1, 0, 2], k=3)
with Store(Path(sys.argv[1]), create=False) as store, store.lease(e.id):
    for run in runs[4:]:
        time.sleep(0.3)
        store.record_runs([run])
    release = Path(sys.argv[3])  # the lease is held until the test has read the live panel
    deadline = time.monotonic() + 120
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
"""


def test_the_experiment_page_follows_a_run_being_written(tmp_path: Path) -> None:
    e, runs = suite_experiment(1, [3, 1, 0, 2], k=3)
    db = write_store(tmp_path / "passhat.db", [(e, runs[:4])])
    panel = "document.querySelector('#live .live-panel')"
    release = tmp_path / "release"
    with served(db) as url, chromium_page() as page:
        visit(page, url, "e/p1")
        page.wait_for("document.getElementById('stream').dataset.state === 'on'")
        assert page.evaluate(f"{panel}.dataset.completed") == "4"
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(Path(__file__).parent), str(release)],
            cwd=ROOT,
        )
        # the writer holds the lease until `release`: the page is live however long a
        # loaded machine takes to start the writer or to draw its runs
        try:
            page.wait_for(f"{panel}.dataset.liveState === 'live'")
            page.wait_for(f"Number({panel}.dataset.completed) >= 6")
            eta = page.evaluate(f"{panel}.textContent")
            page.wait_for(f"{panel}.dataset.completed === '12'")
            assert page.evaluate(f"{panel}.dataset.liveState") == "live"
        finally:
            release.touch()
            assert writer.wait(60) == 0
        page.wait_for(f"{panel}.dataset.liveState === 'done'")
        assert "ETA" in eta
        counted = page.evaluate(f"{panel}.dataset.counted")
        figures = page.evaluate(
            "Array.from(document.querySelectorAll('#live dd[data-metric] .value')).map(v =>"
            " v.textContent)"
        )
        assert page.evaluate("location.pathname") == "/e/p1"
        assert page.errors() == []
    assert counted == "12"
    assert figures[0] == "50.0%"  # 6 of 12 runs passed: 3 + 1 + 0 + 2
