"""Direction characters in what an agent or a suite wrote are shown, never obeyed.

A bidi override or isolate (U+202A-U+202E, U+2066-U+2069) or a direction mark (U+200E,
U+200F, U+061C) in a case id, an item, an answer, an error, a tool's name or a transcript
reorders what a reader sees: `case-\\u202eexe.txt` reads as `case-txt.exe`. The terminal
report writes each as its escape (`\\u202e`); the HTML report (its markup and what its
script draws), `passhat view`, the Markdown summary and JUnit now do the same. CSV, JSONL
and Parquet exports keep the characters: they are data for programs, which must get back
what was stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from browser import Node, dump_dom, parse, require_chromium
from cli_helpers import run_cli
from passhat.records import ExperimentRecord, RunRecord
from passhat.report.console import escape_controls
from passhat.report.html import pages as html_pages
from passhat.report.html import write_html
from test_report_html import errored, experiment, run, run_anchor, with_script
from test_view import get
from view_stores import served, write_store

DIRECTION = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
"""Every character this file is about."""
ANY = re.compile(f"[{DIRECTION}]")
CASE = "case-\u202eexe.txt"
ITEM = "AC2:\u2067unverifiable\u2069"
REPLY = "Done\u200f: see \u202dpayload\u202c and \u061c."
ERROR = "model said \u202bno\u202a \u2066twice\u2068"
TOOL = "get\u200eticket"


def shown(text: str) -> str:
    """`text` as every page shows it: each direction character as its escape."""
    return ANY.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def hostile(cases: list[str] | None = None) -> tuple[ExperimentRecord, list[RunRecord]]:
    """An experiment whose data carries direction characters everywhere a page shows it:
    the case id, a goal item found in some runs, the answer, the transcript, a tool's name
    (in the tool table and the run's calls), an errored run's message, the names."""
    ids = [*(cases or []), CASE]
    goal = ["AC1:conflict", ITEM]
    runs: list[RunRecord] = []
    for case in ids:
        for index in (1, 2):
            r = run(case, index, goal, goal if index == 1 else goal[:1], reply=REPLY)
            calls = [{**r.tool_calls[0], "tool": TOOL, "error": ERROR}, *r.tool_calls]
            runs.append(replace(r, tool_calls=calls))
        runs.append(errored(case, 3, message=ERROR))
    tools = ("get_ticket", TOOL, "update_ticket")
    e = experiment(ids, k=3, tools=tools, name="coupon\u202e", suite_name="suite\u2067x")
    return e, runs


@pytest.fixture
def chromium() -> str:
    return require_chromium()


def _displayed(dom: Node) -> list[str]:
    """Every text and attribute value of the page outside its scripts (the data the script
    reads is not shown as it is: what it draws from it is)."""
    out: list[str] = []
    for node in dom.iter():
        if node.tag in ("script", "style"):
            continue
        out += [v for v in node.attrs.values() if v]
        out += [c for c in node.children if isinstance(c, str)]
    return out


def _obeyed(dom: Node) -> list[str]:
    return [text for text in _displayed(dom) if ANY.search(text)]


def test_the_escape_is_the_terminals() -> None:
    from passhat.report.console import escape_direction

    assert escape_direction(CASE) == "case-\\u202eexe.txt" == shown(CASE)
    assert escape_direction(DIRECTION) == shown(DIRECTION)
    assert escape_direction("plain · ünïcode \U0001f642") == "plain · ünïcode \U0001f642"
    # the terminal escapes the marks too now, beside the controls it always escaped
    assert escape_controls("a\u200eb\u200fc\u061cd\x1b") == "a\\u200eb\\u200fc\\u061cd\\x1b"


@pytest.mark.browser
def test_the_html_report_shows_direction_characters_as_escapes(
    tmp_path: Path, chromium: str
) -> None:
    e, runs = hostile()
    path = write_html(tmp_path / "report.html", e, runs)
    anchor = run_anchor(parse(path.read_text(encoding="utf-8")), shown(CASE), 1)
    # the run opened (drawn by the script from the runs' blob), and its pair compared
    opened = path.with_name("opened.html")
    click = "document.querySelectorAll('details.pair').forEach(function (d) { d.open = true; });"
    opened.write_text(with_script(path.read_text(encoding="utf-8"), click), encoding="utf-8")
    dom = parse(dump_dom(opened, anchor))
    assert _obeyed(dom) == []
    row = dom.find("table", class_="sortable cases").find("tr", data_case=shown(CASE))
    assert row.find("a").text() == shown(CASE)
    assert dom.find("tr", data_item=shown(ITEM)).find("th").text() == shown(ITEM)
    assert dom.find("title").text() == f"passhat · {shown(e.suite_name)} · {shown(e.name or '')}"
    body = dom.find("details", id=anchor).find("div", class_="run-body")
    assert body.attrs.get("data-rendered") == "1"
    assert shown(REPLY) in body.text() and shown(TOOL) in body.find("table", class_="calls").text()
    assert shown(ERROR) in body.text()
    entry = dom.find("details", id=run_anchor(dom, shown(CASE), 3))
    assert entry.find("span", class_="err").text() == "timeout: " + shown(ERROR)
    assert shown(TOOL) in dom.text()  # the dataset's tool table


@pytest.mark.browser
def test_a_page_the_script_draws_shows_them_as_the_first_page_does(
    tmp_path: Path, chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    e, runs = hostile([f"p{n}" for n in range(4)])
    whole = parse(dump_dom(write_html(tmp_path / "whole.html", e, runs)))
    monkeypatch.setattr(html_pages, "PAGED_ABOVE", 2)
    monkeypatch.setattr(html_pages, "PAGE_CASES", 4)
    paged = write_html(tmp_path / "paged.html", e, runs)
    dom = parse(dump_dom(paged, "c5"))  # the hostile case: the second page's first
    assert dom.find("nav", class_="pager").attrs["data-page"] == "2"
    assert _obeyed(dom) == []
    for page in (dom, whole):
        section = page.find("section", class_="case", data_case=shown(CASE))
        assert section.find("tr", data_item=shown(ITEM)).find("th").text() == shown(ITEM)
        assert section.find("tr", data_tool=shown(TOOL)).find("th").text() == shown(TOOL)
        entry = section.find("details", data_run="3")
        assert entry.find("span", class_="err").text() == "timeout: " + shown(ERROR)
    drawn = dom.find("table", class_="sortable cases").find("tr", data_case=shown(CASE))
    written = whole.find("table", class_="sortable cases").find("tr", data_case=shown(CASE))
    assert drawn.text() == written.text() and drawn.attrs == written.attrs


def _view_page(url: str, path: str) -> Node:
    status, _, body = get(url, path)
    assert status == 200, body
    return parse(body)


def test_passhat_view_shows_direction_characters_as_escapes(tmp_path: Path) -> None:
    e, runs = hostile()
    other = replace(e, id="4a3b2c1d", name="other", created_at="2026-05-05T09:30:00Z")
    db = write_store(
        tmp_path / "passhat.db",
        [(e, runs), (other, [replace(r, experiment_id=other.id) for r in runs])],
    )
    one = urlencode({"e": e.id, "case": CASE, "a": 1})
    pair = urlencode({"e": e.id, "case": CASE, "a": 1, "b": 3})
    pages = [
        "/",
        "/fragment/experiments",
        f"/e/{e.id}",
        f"/e/{e.id}/report",
        f"/e/{e.id}/cases?page=1",
        f"/runs?{one}",
        f"/runs?{pair}",
        f"/compare?a={e.id}&b={other.id}",
        "/trend?" + urlencode({"suite": e.suite_name}),
    ]
    with served(db) as url:
        shown_pages = {path: _view_page(url, path) for path in pages}
    # the diff form sends the case back as it is stored: a form's value is no display
    (field,) = [
        n for n in shown_pages[f"/e/{e.id}"].find_all("input") if n.attrs.get("name") == "case"
    ]
    assert field.attrs["value"] == CASE
    for path, dom in shown_pages.items():
        for node in [*dom.find_all("input"), *dom.find_all("option")]:
            node.attrs.pop("value", None)
        assert _obeyed(dom) == [], path
    assert shown(CASE) in shown_pages[f"/e/{e.id}"].text()
    assert shown(REPLY) in shown_pages[f"/runs?{one}"].text()
    assert shown(ERROR) in shown_pages[f"/runs?{pair}"].text()
    assert shown(e.suite_name) in shown_pages["/trend?" + urlencode({"suite": e.suite_name})].text()
    report = shown_pages[f"/e/{e.id}/report"]
    assert report.find("tr", data_case=shown(CASE)).find("a").text() == shown(CASE)


def test_the_markdown_summary_and_junit_show_them_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    e, runs = hostile()
    db = write_store(tmp_path / "passhat.db", [(e, runs)])
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    args = ["--db", str(db), "--junit-xml", str(junit), "--summary", str(summary)]
    result = run_cli(capsys, "report", e.id, *args)
    assert result.code in (0, 1), result.err
    for text in (
        result.out,
        junit.read_text(encoding="utf-8"),
        summary.read_text(encoding="utf-8"),
    ):
        assert not ANY.search(text)
    assert shown(CASE) in junit.read_text(encoding="utf-8")
    assert shown(CASE).replace("\\", "\\\\") in summary.read_text(encoding="utf-8")
    assert shown(CASE) in result.out


def test_exports_keep_what_was_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    e, runs = hostile()
    db = write_store(tmp_path / "passhat.db", [(e, runs)])
    out = tmp_path / "runs.jsonl"
    result = run_cli(capsys, "export", e.id, "--db", str(db), "-o", str(out))
    assert result.code == 0, result.err
    rows: list[dict[str, Any]] = [json.loads(line) for line in out.read_text().splitlines()]
    assert {row["case"] for row in rows} == {CASE}
    assert any(ERROR in json.dumps(row, ensure_ascii=False) for row in rows)


def test_code_compiled_before_the_escape_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report keeps its templates' compiled code between runs (render._compiled); code
    an earlier passhat compiled without `shown` (same template text, same jinja2) ran the
    page without it, direction characters and all."""
    import tempfile

    import jinja2

    from passhat.report.html import render, render_html

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    earlier = jinja2.Environment(
        loader=jinja2.PackageLoader("passhat.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=jinja2.FileSystemBytecodeCache(),
    )
    earlier.filters.update(pct=str, money=str)  # looked up when compiled, not called
    for name in ("report.html.j2", "_cases.html.j2", "_script.html.j2", "_style.html.j2"):
        earlier.get_template(name)
    assert list(tmp_path.glob("_jinja2-cache-*/*.cache"))
    render._environment.cache_clear()
    render._script.cache_clear()
    try:
        e, runs = hostile()
        assert _obeyed(parse(render_html(e, runs))) == []
    finally:
        render._environment.cache_clear()
        render._script.cache_clear()
