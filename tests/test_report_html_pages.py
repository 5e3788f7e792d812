"""The HTML report past PAGED_ABOVE cases: pages of cases, run detail on demand, a budget."""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
import shlex
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from browser import Node, dump_dom, parse, require_chromium
from passhat.report.html import PAGE_CASES, PAGED_ABOVE, render_html, write_html
from passhat.report.html import pages as html_pages
from passhat.report.html import runs as html_runs
from passhat.store import Store
from passhat.usage import Prices
from test_report_html import errored, experiment, page, run, with_script

CASES = PAGED_ABOVE + 50  # three pages of PAGE_CASES


def many() -> tuple[object, list[object]]:
    ids = [f"p{c:03d}" for c in range(CASES)]
    items = ["AC1:conflict", "AC2:unverifiable"]
    runs = [run(c, i, items, items if i == 1 else items[:1]) for c in ids for i in (1, 2)]
    return experiment(ids, k=2), runs


@pytest.fixture
def chromium() -> str:
    return require_chromium()


def pages_data(html: str) -> dict[str, Any]:
    """The other pages' columns of facts (html/pages.py `_cases_blob`), as the script reads them."""
    match = re.search(
        r'<script type="application/octet-stream" id="passhat-pages"[^>]*>([^<]*)<', html
    )
    assert match
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(match.group(1))))
    return data


def front_decoded(shared: list[int], rest: list[str]) -> list[str]:
    out, before = [], ""
    for n, tail in zip(shared, rest, strict=True):
        before = before.encode("utf-16-le")[: 2 * n].decode("utf-16-le") + tail
        out.append(before)
    return out


def test_a_large_report_draws_one_page_and_carries_the_others_as_columns() -> None:
    e, runs = many()
    html = render_html(e, runs)  # type: ignore[arg-type]
    dom = parse(html)
    assert len(dom.with_class("table", "grid")) == PAGE_CASES  # not CASES
    assert "page 1 of 3" in dom.find("nav", class_="pager").text()
    rest = pages_data(html)
    # the other pages hold the cases that follow, each once, and where each page starts
    assert rest["first"] == PAGE_CASES + 1 and rest["starts"] == [101, 201]
    ids = front_decoded(rest["idShared"], rest["idRest"])
    assert ids == [f"p{c:03d}" for c in range(PAGE_CASES, CASES)]
    assert rest["status"] == "pf" * len(ids) and len(rest["tenths"]) == 2 * len(ids)
    assert "<" not in html[html.index('id="passhat-pages"') :].split(">", 1)[1].split("<", 1)[0]


def test_pages_hold_at_most_page_runs_requested_runs() -> None:
    """Many runs per case make pages of fewer cases: a page is at most PAGE_RUNS grid
    columns (one case at least), and one page holds at most PAGED_ABOVE_RUNS."""
    ids = [f"r{c:02d}" for c in range(12)]
    k = html_pages.PAGE_RUNS // 5  # five cases fill a page
    items = ["AC1:conflict"]
    runs = [run(c, i, items, items) for c in ids for i in (1, 2)]  # the rest missing
    html = render_html(experiment(ids, k=k), runs)  # type: ignore[arg-type]
    assert len(parse(html).with_class("table", "grid")) == 5
    assert pages_data(html)["starts"] == [6, 11]
    # ten such cases are PAGED_ABOVE_RUNS requested runs: one page, every case as markup
    assert k * 10 == html_pages.PAGED_ABOVE_RUNS
    ten = [r for r in runs if r.case_id in ids[:10]]
    one = render_html(experiment(ids[:10], k=k), ten)  # type: ignore[arg-type]
    assert len(parse(one).with_class("table", "grid")) == 10 and 'id="passhat-pages"' not in one


@pytest.mark.browser
def test_turning_the_page_and_opening_a_run_on_another_page(tmp_path: Path, chromium: str) -> None:
    e, runs = many()
    path = page(tmp_path, "paged", e, runs)  # type: ignore[arg-type]
    # a link to a run of the last page: the page is drawn, the run opened and unpacked
    anchor = "c250-run2"  # p249, the 250th case
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
    monkeypatch.setattr(html_runs, "RUNS_BUDGET", 1)  # only the first page's runs
    e, runs = many()
    path = page(tmp_path, "budget", e, runs)  # type: ignore[arg-type]
    anchor = "c151-run1"  # p150, the 151st case
    body = parse(dump_dom(path, anchor)).find("details", id=anchor).find("div", class_="run-body")
    assert "not in the page" in body.text() and "passhat show 3f2a9c1d p150 1" in body.text()


@pytest.mark.browser
def test_run_detail_past_the_budget_quotes_the_case_in_the_command(
    tmp_path: Path, chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An imported case's id (a space, a quote, `$(...)`) is one shell word of the command."""
    monkeypatch.setattr(html_runs, "RUNS_BUDGET", 1)
    e, runs = many()
    hostile = "p150 it's $(id)"
    runs = [replace(r, case_id=hostile) if r.case_id == "p150" else r for r in runs]  # type: ignore[type-var]
    e = replace(e, case_ids=tuple(hostile if c == "p150" else c for c in e.case_ids))  # type: ignore[type-var, attr-defined]
    path = page(tmp_path, "budget", e, runs)  # type: ignore[arg-type]
    anchor = "c151-run1"
    body = parse(dump_dom(path, anchor)).find("details", id=anchor).find("div", class_="run-body")
    command = body.text()[body.text().index("passhat show") :]
    assert shlex.split(command) == ["passhat", "show", "3f2a9c1d", hostile, "1"]


@pytest.mark.browser
def test_run_detail_past_the_embedded_runs_names_the_command(
    tmp_path: Path, chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `EMBEDDED_RUNS` a run's detail is left out whatever room the budget has: the
    run opened says so and names the `passhat show` command."""
    monkeypatch.setattr(html_runs, "EMBEDDED_RUNS", 2 * PAGE_CASES)  # one page of k = 2
    e, runs = many()
    path = page(tmp_path, "embedded", e, runs)  # type: ignore[arg-type]
    anchor = "c101-run2"  # p100, the first case of page 2
    dom = parse(dump_dom(path, anchor))
    body = dom.find("details", id=anchor).find("div", class_="run-body")
    assert "not in the page" in body.text() and "passhat show 3f2a9c1d p100 2" in body.text()
    (note,) = dom.with_class("p", "detail-note")
    assert "cases 1 to 100 only, of 250" in note.text()


def test_the_page_says_whose_run_detail_it_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A paged report embeds the detail of pages while their requested runs stay within
    `EMBEDDED_RUNS` (the first page's always), and says above the grid which cases'
    runs it carries and which commands show the others (the experiment's name escaped)."""
    e, runs = many()  # three pages of 200, 200 and 100 runs
    e = replace(e, name=HOSTILE)  # type: ignore[type-var]
    whole = render_html(e, runs)  # type: ignore[arg-type]
    assert 'data-starts="1 101 201"' in whole and "detail-note" not in whole
    for most, starts, last in [(400, "1 101", 200), (399, "1", 100), (1, "1", 100)]:
        monkeypatch.setattr(html_runs, "EMBEDDED_RUNS", most)
        html = render_html(e, runs)  # type: ignore[arg-type]
        assert f'data-starts="{starts}"' in html
        note = parse(html).find("p", class_="note detail-note").text()
        assert f"runs of cases 1 to {last} only, of 250." in note
        assert f"passhat show {shlex.quote(HOSTILE)} CASE RUN" in note and "passhat view" in note
        assert HOSTILE not in html  # the name is data: escaped wherever shown
    zh = parse(render_html(e, runs, lang="zh-TW")).find("p", class_="note detail-note")  # type: ignore[arg-type]
    assert "第 1 到第 100 個案例（共 250 個）" in zh.text()


def test_run_detail_travels_in_one_blob_per_page() -> None:
    """The runs of each page whose detail is embedded are one blob of their own, which
    the script inflates when a run of that page is first opened."""
    e, runs = many()
    html = render_html(e, runs)  # type: ignore[arg-type]
    match = re.search(r'id="passhat-runs"[^>]*data-starts="([^"]*)">([^<]*)<', html)
    assert match and match.group(1) == "1 101 201"
    blobs = match.group(2).split(" ")
    anchors = [set(json.loads(zlib.decompress(base64.b64decode(b)))["runs"]) for b in blobs]
    assert anchors == [
        {f"c{n}-run{i}" for n in range(start, start + size) for i in (1, 2)}
        for start, size in ((1, 100), (101, 100), (201, 50))
    ]


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

        monkeypatch.setattr(html_runs, "RUNS_BUDGET", 1)
        paged = render_html(e, summaries, load=load)  # type: ignore[arg-type]
    assert loaded[0] == PAGE_CASES and sum(loaded) < CASES
    # each recorded run of the first page has its column (status, duration), from summaries
    assert len(parse(paged).find_all("th", data_duration=True)) == PAGE_CASES * 2


# --------------------------------------------------------------------------- drawn = templated

HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


def varied() -> tuple[Any, list[Any]]:
    """Cases that differ in every fact a case row and section show: ids sharing starts,
    with quotes, markup and characters outside the BMP; k of 1, 3 and 4; passed, failed,
    errored (with and without a message) and missing runs; a case with no run and one
    with no counted run; extras; two scorers; tool calls, some in error; durations
    that round."""
    ids = [
        "ticket-002",
        "ticket-0021",
        "ticket-0022",
        'a"b&c',
        HOSTILE,
        "t\u00efcket-\U0001f642-1",
        "t\u00efcket-\U0001f642-2",
        "no-runs",
        "all-errored",
        "two-scorers",
        "k-one",
        "k-four",
        "zz-last",
    ]
    goal = ["AC1:conflict", "AC3:" + HOSTILE, "AC7:unverifiable"]
    runs: list[Any] = []
    for n, case in enumerate(ids):
        k = {"k-one": 1, "k-four": 4}.get(case, 3)
        for i in range(1, k + 1):
            roll = (n * 7 + i * 3) % 6
            if case == "no-runs" or (roll == 5 and case != "k-one"):
                continue  # missing
            if case == "all-errored" or roll == 4:
                runs.append(errored(case, i, message="" if i == 2 else HOSTILE))
                continue
            found = goal[: 1 + (n + i) % 3] + (["AC9:vague"] if roll == 1 else [])
            r = run(case, i, goal, found, background=(n + i) % 3)
            calls = list(r.tool_calls)
            if roll == 2:
                calls.append({**calls[0], "tool": "query_background", "error": "no fixture"})
            score = list(r.score)
            if case == "two-scorers":
                scope = ["scope:coupons", "scope:\U0001f642"]
                score.append(
                    {
                        "scorer": "exact_set",
                        "path": "ticket.scope",
                        "passed": i != 2,
                        "expected": scope,
                        "actual": scope[: 2 if i != 2 else 1],
                        "missing": [] if i != 2 else scope[1:],
                        "extra": [],
                    }
                )
            runs.append(
                replace(
                    r,
                    tool_calls=calls,
                    score=score,
                    duration_s=[0.05, 12.25, 3.0, 7.349][i - 1],
                    input_tokens=1000 * n + 7 * i + n // 2,  # per-run means ending in .5
                    output_tokens=[0, 1, 2501, 1_234_567][i - 1],
                )
            )
    e = experiment(ids, k=3, case_k={"k-one": 1, "k-four": 4})
    return e, runs


def _shape(node: Node) -> list[Any]:
    """An element as tokens: tag and attributes, then its children, text with its
    whitespace collapsed (empty text left out)."""
    out: list[Any] = [(node.tag, sorted(node.attrs.items()))]
    texts: list[str] = []
    for child in [*node.children, None]:
        if isinstance(child, str):
            texts.append(child)
            continue
        text = " ".join("".join(texts).split())
        if text:
            out.append(text)
        texts = []
        if child is not None:
            out.append(_shape(child))
    return out


def _drawn(dom: Node, case: str) -> list[Any]:
    row = dom.find("table", class_="sortable cases").find("tr", data_case=case)
    section = dom.find("section", class_="case", data_case=case)
    tokens = dom.find("table", class_="usage").find("tbody").find_all("tr", data_case=case)
    return [_shape(row), _shape(section), [_shape(t) for t in tokens]]


@pytest.mark.browser
def test_pages_drawn_from_columns_equal_the_template_markup(
    tmp_path: Path, chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each case of a page the script draws from the columns has the same table row,
    section (elements, attributes, text, run entries) and tokens row as the template
    writes for it, model output and case data staying text."""
    e, runs = varied()
    prices = Prices(0.15, 0.6)
    whole = parse(dump_dom(write_html(tmp_path / "whole.html", e, runs, prices=prices)))
    monkeypatch.setattr(html_pages, "PAGED_ABOVE", 2)
    monkeypatch.setattr(html_pages, "PAGE_CASES", 4)
    paged = write_html(tmp_path / "paged.html", e, runs, prices=prices)
    data = pages_data(paged.read_text(encoding="utf-8"))
    assert data["starts"] == [5, 9, 13]
    ids = list(e.case_ids)  # type: ignore[attr-defined]
    compared = 0
    for number, start in enumerate(data["starts"], start=2):
        dom = parse(dump_dom(paged, f"c{start}"))
        assert dom.find("nav", class_="pager").attrs["data-page"] == str(number)
        end = start + 4 if number < 4 else len(ids) + 1
        assert [t.attrs["data-case"] for t in dom.with_class("table", "grid")] == ids[
            start - 1 : end - 1
        ]
        for case in ids[start - 1 : end - 1]:
            assert _drawn(dom, case) == _drawn(whole, case), case
            compared += 1
        # the tokens table lists the page's cases that have a run
        listed = dom.find("table", class_="usage").find("tbody").find_all("tr")
        assert [t.attrs["data-case"] for t in listed] == [
            c for c in ids[start - 1 : end - 1] if c != "no-runs"
        ]
        assert not dom.find_all("img") and "pwned" not in dom.find("title").text()
        # each run's anchor moved from its column to its entry: no id twice
        anchors = [n.attrs["id"] for n in dom.find_all(id=True)]
        assert len(anchors) == len(set(anchors))
    assert compared == len(ids) - 4


def test_run_links_have_a_target_without_script() -> None:
    """Was: a run link (#c3-run1) pointed at an entry only the script draws. In the
    markup its target is the run's grid column (the script moves the id to the entry)."""
    e, runs = many()
    dom = parse(render_html(e, runs))  # type: ignore[arg-type]
    links = [a.attrs["href"][1:] for a in dom.find_all("a") if "-run" in a.attrs.get("href", "")]
    assert len(links) == PAGE_CASES * 2
    for anchor in links:
        (target,) = dom.find_all(id=anchor)
        assert "runcol" in target.attrs["class"]


def test_front_coding_round_trips_in_utf16_units() -> None:
    """Each string is the longest start it shares with the one before (counted as the
    script counts, in UTF-16 units, never splitting a character) and the rest."""
    rng = random.Random(1)
    alphabet = "ab\u00ef\U0001f642c/"
    for _ in range(2000):
        strings = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
            for _ in range(rng.randint(0, 12))
        ]
        shared, rest = html_pages._front_coded(strings)
        assert front_decoded(shared, rest) == strings
        for text, before, rest_of in zip(strings, ["", *strings], rest, strict=False):
            start = text[: len(text) - len(rest_of)]
            assert before.startswith(start)
            assert not rest_of or not before[len(start) :].startswith(rest_of[0])


def test_the_dataset_tool_table_read_per_distinct_count_is_the_cases_tables_joined(
    tmp_path: Path,
) -> None:
    """The page's tool table, `tool_profile(per_case=False)` (read once per distinct count
    value), equals the per-case tables joined in case order: read from a store (runs share
    count values), as records, out of order, and with an error count that is not an int
    (then summed run by run)."""
    from passhat.analysis import ToolUse, tool_profile

    def joined(given: list[Any], tools: list[str]) -> list[ToolUse]:
        rows = tool_profile(given, tools)
        out = []
        for tool in dict.fromkeys(u.tool for u in rows):
            mine = [u for u in rows if u.tool == tool]
            calls = tuple(n for u in mine for n in u.calls_per_run)
            errors = sum(u.errors for u in mine)
            out.append(ToolUse(None, tool, len(calls), len(calls) - calls.count(0), calls, errors))
        return out

    e, runs = varied()
    tools = ["query_background", "never_called"]
    with Store(tmp_path / "t.db") as store:
        store.create_experiment(e)  # type: ignore[arg-type]
        store.record_runs(runs)  # type: ignore[arg-type]
        summaries = store.summaries(e.id)  # type: ignore[attr-defined]
    shuffled = list(runs)
    random.Random(3).shuffle(shuffled)
    odd = [s._replace(tool_counts={"get_ticket": (1, 0.5)}) for s in summaries[:2]]
    for given in (summaries, runs, shuffled, [*odd, *summaries[2:]], []):
        assert tool_profile(given, tools, per_case=False) == joined(given, tools)  # type: ignore[arg-type]
    assert any(u.errors for u in tool_profile(summaries, tools, per_case=False))
