"""The HTML report past PAGED_ABOVE cases: pages of cases, run detail on demand, a budget."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest

from browser import dump_dom, parse, require_chromium
from passhat.report import html as html_module
from passhat.report.html import PAGE_CASES, PAGED_ABOVE, render_html
from passhat.store import Store
from test_report_html import experiment, page, run, run_anchor, with_script

CASES = PAGED_ABOVE + 50  # three pages of PAGE_CASES


def many() -> tuple[object, list[object]]:
    ids = [f"p{c:03d}" for c in range(CASES)]
    items = ["AC1:conflict", "AC2:unverifiable"]
    runs = [run(c, i, items, items if i == 1 else items[:1]) for c in ids for i in (1, 2)]
    return experiment(ids, k=2), runs


@pytest.fixture
def chromium() -> str:
    return require_chromium()


def pages_data(html: str) -> list[dict[str, str]]:
    match = re.search(
        r'<script type="application/octet-stream" id="passhat-pages"[^>]*>([^<]*)<', html
    )
    assert match
    data: list[dict[str, str]] = json.loads(gzip.decompress(base64.b64decode(match.group(1))))
    return data


def test_a_large_report_draws_one_page_and_carries_the_others_compressed() -> None:
    e, runs = many()
    html = render_html(e, runs)  # type: ignore[arg-type]
    dom = parse(html)
    assert len(dom.with_class("table", "grid")) == PAGE_CASES  # not CASES
    assert "page 1 of 3" in dom.find("nav", class_="pager").text()
    rest = pages_data(html)
    assert len(rest) == 2
    # the other pages are the same template's markup for the cases that follow
    assert 'data-case="p100"' in rest[0]["rows"] and 'id="c101"' in rest[0]["sections"]
    assert 'data-case="p249"' in rest[1]["sections"]
    # every case is in exactly one page
    shown = html.count('<table class="grid"') + sum(
        p["sections"].count('<table class="grid"') for p in rest
    )
    assert shown == CASES


@pytest.mark.browser
def test_turning_the_page_and_opening_a_run_on_another_page(tmp_path: Path, chromium: str) -> None:
    e, runs = many()
    path = page(tmp_path, "paged", e, runs)  # type: ignore[arg-type]
    # a link to a run of the last page: the page is drawn, the run opened and unpacked
    last = parse(pages_data(path.read_text(encoding="utf-8"))[1]["sections"])
    anchor = run_anchor(last, "p249", 2)
    opened = parse(dump_dom(path, anchor))
    details = opened.find("details", id=anchor)
    assert "open" in details.attrs
    assert details.find("div", class_="run-body").attrs.get("data-rendered") == "1"
    assert opened.find("nav", class_="pager").attrs["data-page"] == "3"
    assert len(opened.with_class("table", "grid")) == CASES - 2 * PAGE_CASES
    # each drawn case lists its runs, the targets of its run links
    assert len(opened.find_all("details", class_="run")) == (CASES - 2 * PAGE_CASES) * 2

    # a link in the older form (c<n>-<case id>-run<i>) turns the page and opens the run
    old = parse(dump_dom(path, "c250-p249-run1"))
    assert old.find("nav", class_="pager").attrs["data-page"] == "3"
    details = old.find("details", id="c250-run1")
    assert "open" in details.attrs
    assert details.find("div", class_="run-body").attrs.get("data-rendered") == "1"

    # the next-page button draws page 2 in place of page 1
    clicked = tmp_path / "next.html"
    clicked.write_text(
        with_script(
            path.read_text(encoding="utf-8"),
            "document.querySelector('nav.pager button[data-go=\"1\"]').click();",
        ),
        encoding="utf-8",
    )
    turned = parse(dump_dom(clicked))
    cases = [t.attrs["data-case"] for t in turned.with_class("table", "grid")]
    assert cases[0] == "p100" and len(cases) == PAGE_CASES
    assert "page 2 of 3" in turned.find("nav", class_="pager").text()


@pytest.mark.browser
def test_run_detail_past_the_budget_names_the_command(
    tmp_path: Path, chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html_module, "RUNS_BUDGET", 1)  # only the first page's runs
    e, runs = many()
    path = page(tmp_path, "budget", e, runs)  # type: ignore[arg-type]
    anchor = run_anchor(
        parse(pages_data(path.read_text(encoding="utf-8"))[0]["sections"]), "p150", 1
    )
    body = parse(dump_dom(path, anchor)).find("details", id=anchor).find("div", class_="run-body")
    assert "not in the page" in body.text() and "passhat show 3f2a9c1d p150 1" in body.text()


def test_the_command_loads_whole_runs_page_by_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report --html` renders from the summaries and loads whole runs only for the
    pages whose detail is embedded."""
    e, runs = many()
    loaded: list[int] = []
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(e)  # type: ignore[arg-type]
        store.record_runs(runs)  # type: ignore[arg-type]
        summaries = store.summaries(e.id)  # type: ignore[attr-defined]

        def load(cases: object) -> object:
            loaded.append(len(cases))  # type: ignore[arg-type]
            return store.runs(e.id, cases=cases)  # type: ignore[attr-defined,arg-type]

        monkeypatch.setattr(html_module, "RUNS_BUDGET", 1)
        paged = render_html(e, summaries, load=load)  # type: ignore[arg-type]
    assert loaded[0] == PAGE_CASES and sum(loaded) < CASES
    # each recorded run of the first page has its column (status, duration), from summaries
    assert len(parse(paged).find_all("th", data_duration=True)) == PAGE_CASES * 2
