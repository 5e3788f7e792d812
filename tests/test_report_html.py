"""passhat.report.html and passhat.report.i18n: the self-contained HTML report.

Pages are built from `ExperimentRecord` / `RunRecord` objects, written to disk
and opened in headless Chromium (tests/browser.py); assertions read the DOM
after the page's scripts ran. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import base64
import json
import random
import re
import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from browser import (
    ARTIFACTS,
    Node,
    dump_dom,
    full_page_png,
    parse,
    png_ink,
    require_chromium,
    screenshot,
)
from page_data import resolved
from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord
from passhat.report import i18n
from passhat.report.experiment import experiment_accounting
from passhat.report.html import render_html, script_json, write_html
from passhat.report.i18n import LABELS, LANGS, check_lang, default_lang, t
from passhat.stats import dataset_intervals

SEED_CASE = "ac-conflict-001"
SEED_ITEMS = (
    "AC3:conflict",
    "AC3:inconsistent_with_description",
    "AC4:unverifiable",
    "AC7:unverifiable",
)
SEED_TOOLS = ("get_ticket", "query_background", "update_ticket")
SYSTEM_PROMPT = (
    "You clarify requirements. Read the ticket with get_ticket, look up background with "
    "query_background when needed, then write Goal, Scope in, Scope out and the AC "
    "annotations back with update_ticket. Labels: conflict, inconsistent_with_description, "
    "unverifiable."
)


# --------------------------------------------------------------------------- building records


def experiment(
    case_ids: Sequence[str] = (SEED_CASE,),
    k: int = 3,
    tools: Sequence[str] = SEED_TOOLS,
    **changes: Any,
) -> ExperimentRecord:
    record = ExperimentRecord(
        id="3f2a9c1d",
        name="coupon-seed",
        created_at="2026-05-04T09:30:00Z",
        suite_name="coupon",
        suite_path="examples/coupon",
        suite_hash="5e1d0c2b9a8f7e6d5c4b",
        agent="clarifier",
        model="openai:gpt-5.4-mini",
        model_config={"provider": "openai", "base_url": "https://api.openai.com/v1"},
        params={"temperature": 1.0, "max_turns": 8},
        prompt_version="cd590b9ba593",
        k_requested=k,
        seed=7,
        harness_version="0.1.0",
        fingerprint="9b1c4e7f2a6d8c03",
        case_ids=tuple(case_ids),
        case_hashes={c: "h-" + c for c in case_ids},
        tools=tuple(tools),
    )
    return replace(record, **changes)


def ticket(case: str) -> dict[str, Any]:
    return {
        "id": case,
        "title": "Coupon codes at checkout",
        "description": "Customers enter one coupon code per order; codes never stack.",
        "acceptance_criteria": [f"AC{i}: criterion {i} of the coupon feature" for i in range(1, 8)],
    }


def run(
    case: str,
    index: int,
    expected: Sequence[str],
    found: Sequence[str],
    *,
    reply: str = "Done: Goal, Scope in, Scope out and the AC annotations are written.",
    ticket_json: str | None = None,
    background: int = 0,
    experiment_id: str = "3f2a9c1d",
) -> RunRecord:
    """One graded run whose annotation set is `found` (an exact_set scorer against `expected`)."""
    exp, act = sorted(expected), sorted(found)
    missing = sorted(set(exp) - set(act))
    extra = sorted(set(act) - set(exp))
    passed = not missing and not extra
    ticket_text = ticket_json or json.dumps(ticket(case))
    update_args = {"id": case, "goal": "Apply one coupon per order.", "annotations": act}
    tool_calls = [
        {
            "tool": "get_ticket",
            "arguments": {"id": case},
            "result": ticket_text,
            "error": None,
            "fixture_miss": False,
            "started_at": 0.0,
            "duration_s": 0.01,
        },
    ]
    transcript: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"Clarify ticket {case}."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "t1", "name": "get_ticket", "arguments": {"id": case}}],
        },
        {"role": "tool", "content": ticket_text, "tool_call_id": "t1", "name": "get_ticket"},
    ]
    for b in range(background):
        args = {"query": f"coupon stacking policy {b}"}
        tool_calls.append(
            {
                "tool": "query_background",
                "arguments": args,
                "result": "no policy",
                "error": None,
                "fixture_miss": False,
                "started_at": 0.0,
                "duration_s": 0.0,
            }
        )
    transcript += [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "t2", "name": "update_ticket", "arguments": update_args}],
        },
        {"role": "tool", "content": "ok", "tool_call_id": "t2", "name": "update_ticket"},
        {"role": "assistant", "content": reply},
    ]
    tool_calls.append(
        {
            "tool": "update_ticket",
            "arguments": update_args,
            "result": "ok",
            "error": None,
            "fixture_miss": False,
            "started_at": 0.0,
            "duration_s": 0.02,
        }
    )
    return RunRecord(
        experiment_id=experiment_id,
        case_id=case,
        run_index=index,
        case_hash="h-" + case,
        status="passed" if passed else "failed",
        output=reply,
        final_state={"ticket": {**ticket(case), "annotations": act}},
        score=[
            {
                "scorer": "exact_set",
                "path": "ticket.annotations",
                "passed": passed,
                "expected": exp,
                "actual": act,
                "missing": missing,
                "extra": extra,
            }
        ],
        transcript=transcript,
        tool_calls=tool_calls,
        started_at=1_777_000_000.0 + index,
        duration_s=4.2 + index / 10,
        input_tokens=2100,
        output_tokens=380,
        seed=1000 + index,
    )


def errored(case: str, index: int, message: str = "model did not answer in 120 s") -> RunRecord:
    return RunRecord(
        experiment_id="3f2a9c1d",
        case_id=case,
        run_index=index,
        case_hash="h-" + case,
        status="errored",
        error_type="timeout",
        error_message=message,
    )


def seed_runs() -> list[RunRecord]:
    """The seed: all three runs failed, three different annotation sets."""
    items = list(SEED_ITEMS)
    return [
        run(SEED_CASE, 1, items, ["AC3:conflict", "AC4:unverifiable", "AC7:unverifiable"]),
        run(SEED_CASE, 2, items, ["AC3:conflict", "AC4:unverifiable"]),
        run(
            SEED_CASE,
            3,
            items,
            ["AC3:conflict", "AC4:unverifiable", "AC5:unverifiable", "AC7:unverifiable"],
        ),
    ]


def _words(rng: random.Random, vocabulary: Sequence[str], n: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def large_experiment(
    cases: int = 200, k: int = 10, seed: int = 11
) -> tuple[ExperimentRecord, list[RunRecord]]:
    """`cases` clarifier-like cases × k runs, about 1% errored and 1% missing.

    Text is drawn from 3,000 made-up words, so it compresses about as badly as
    real prose: a ticket of ~250 words per case; per run, the model writes Goal,
    Scope in, Scope out and a reason per annotation (~1.5 KB), which appears in
    the transcript, the tool calls and the final state, as in a real run.
    """
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(3000)]
    labels = ("conflict", "unverifiable", "vague", "inconsistent_with_description")
    ids = [f"ticket-{i:04d}" for i in range(cases)]
    runs: list[RunRecord] = []
    for case in ids:
        goal = sorted(rng.sample([f"AC{a}:{lab}" for a in range(1, 9) for lab in labels], 5))
        skill = rng.random()
        ticket_text = json.dumps({**ticket(case), "description": _words(rng, vocabulary, 250)})
        for index in range(1, k + 1):
            roll = rng.random()
            if roll < 0.01:
                continue  # missing: never finished
            if roll < 0.02:
                runs.append(errored(case, index))
                continue
            found = [g for g in goal if rng.random() < 0.6 + 0.4 * skill]
            if rng.random() < 0.3:
                found.append(f"AC{rng.randint(1, 8)}:{rng.choice(labels)}")
            record = run(
                case,
                index,
                goal,
                sorted(set(found)),
                ticket_json=ticket_text,
                reply=_words(rng, vocabulary, 60),
                background=rng.randint(0, 2),
            )
            prose = {
                "goal": _words(rng, vocabulary, 30),
                "scope_in": _words(rng, vocabulary, 40),
                "scope_out": _words(rng, vocabulary, 30),
                "reasons": {item: _words(rng, vocabulary, 15) for item in found},
            }
            update = {**record.tool_calls[-1]["arguments"], **prose}
            record.transcript[-3]["tool_calls"][0]["arguments"] = update
            record.tool_calls[-1]["arguments"] = update
            record.final_state["ticket"].update(prose)
            runs.append(record)
    return experiment(ids, k=k), runs


# --------------------------------------------------------------------------- helpers


def page(
    tmp_path: Path, name: str, e: ExperimentRecord, runs: Sequence[RunRecord], lang: str = "en"
) -> Path:
    return write_html(tmp_path / f"{name}.html", e, runs, lang=lang)


def cell(dom: Node, case: str, item: str, run_index: int) -> str:
    row = dom.find("table", data_case=case).find("tr", data_item=item)
    return row.find("td", data_run=str(run_index)).attrs["data-cell"]


def runs_blob(html: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/octet-stream" id="passhat-runs"[^>]*>([^<]*)<', html
    )
    assert match, "no runs blob in the page"
    data: dict[str, Any] = json.loads(zlib.decompress(base64.b64decode(match.group(1))))
    return data


def embedded(html: str, element_id: str) -> Any:
    match = re.search(
        rf'<script type="application/json" id="{element_id}">(.*?)</script>', html, re.S
    )
    assert match, f"no #{element_id} in the page"
    return json.loads(match.group(1))


@pytest.fixture
def chromium() -> str:
    return require_chromium()


def unpack_runs(html: str) -> dict[str, Any]:
    """The runs blob as the page's script sees it: inflated, references resolved."""
    data = runs_blob(html)
    return {anchor: resolved(run, data["strings"]) for anchor, run in data["runs"].items()}


def with_script(html: str, js: str) -> str:
    """The page plus one more script, allowed by its own hash (to click like a user)."""
    import hashlib

    digest = base64.b64encode(hashlib.sha256(js.encode()).digest()).decode()
    html = html.replace("script-src ", f"script-src 'sha256-{digest}' ", 1)
    return html.replace("</body>", f"<script>{js}</script></body>", 1)


def run_anchor(dom: Node, case: str, index: int) -> str:
    grid = dom.find("table", data_case=case)
    href = grid.find("th", data_run=str(index)).find("a").attrs["href"]
    assert href.startswith("#")
    return href[1:]


# --------------------------------------------------------------------------- the seed, in a browser


@pytest.mark.browser
def test_seed_page_shows_what_the_seed_saw(tmp_path: Path, chromium: str) -> None:
    """Guards the seed's finding: AC7 missed once (run 2), AC3 'inconsistent' missed every time."""
    path = page(tmp_path, "seed", experiment(), seed_runs())
    dom = parse(dump_dom(path))

    row = dom.find("tr", data_case=SEED_CASE)
    assert row.find("td", class_="passes").text() == "0/3"
    assert dom.find("div", data_metric="pass rate (over runs)").attrs["data-value"] == "0.0"
    assert {f.attrs["data-metric"] for f in dom.with_class("div", "figure")} == {
        "pass rate (over runs)",
        "pass@3",
        "pass^3",
    }

    assert [cell(dom, SEED_CASE, "AC7:unverifiable", i) for i in (1, 2, 3)] == [
        "found",
        "missed",
        "found",
    ]
    assert [cell(dom, SEED_CASE, "AC3:inconsistent_with_description", i) for i in (1, 2, 3)] == [
        "missed",
        "missed",
        "missed",
    ]
    assert [cell(dom, SEED_CASE, "AC5:unverifiable", i) for i in (1, 2, 3)] == [
        "none",
        "none",
        "extra",
    ]
    grid = dom.find("table", data_case=SEED_CASE)
    verdicts = {
        r.attrs["data-item"]: r.attrs["data-verdict"] for r in grid.find_all("tr", data_item=True)
    }
    assert verdicts == {
        "AC3:conflict": "always_found",
        "AC3:inconsistent_with_description": "always_missed",
        "AC4:unverifiable": "always_found",
        "AC7:unverifiable": "sometimes_missed",
        "AC5:unverifiable": "extra_sometimes",
    }
    # Not colour alone: every cell carries a symbol.
    symbols = {td.attrs["data-cell"]: td.text() for td in grid.find_all("td", data_cell=True)}
    assert symbols == {"found": "✓", "missed": "✗", "extra": "+", "none": "·"}
    assert "always missed" in grid.text() and "sometimes missed" in grid.text()

    banner = dom.find("section", id="accounting")
    assert banner.attrs["data-plan"] == "met"
    assert "Plan met: every case has 3 counted runs." in banner.text()

    tools = dom.find("section", id="tools")
    assert tools.find("tr", data_tool="query_background").attrs["data-runs-calling"] == "0"
    assert "never called" in tools.find("tr", data_tool="query_background").text()
    assert tools.find("tr", data_tool="update_ticket").attrs["data-calls"] == "3"
    per_run = grid.find("tr", data_tool="update_ticket")
    assert [td.text() for td in per_run.find_all("td", data_run=True)] == ["1", "1", "1"]

    screenshot(path, "seed-en", size=(1280, 2200))


@pytest.mark.browser
def test_each_grid_column_header_opens_its_transcript(tmp_path: Path, chromium: str) -> None:
    path = page(tmp_path, "seed", experiment(), seed_runs())
    dom = parse(path.read_text(encoding="utf-8"))
    anchors = [run_anchor(dom, SEED_CASE, i) for i in (1, 2, 3)]
    assert anchors == ["c1-run1", "c1-run2", "c1-run3"]

    # Through the URL fragment...
    opened = parse(dump_dom(path, anchors[1]))
    for anchor in anchors:  # each column's run entry, drawn by the page's script
        assert opened.find("details", id=anchor)
    run2 = opened.find("details", id=anchors[1])
    assert "open" in run2.attrs
    body = run2.find("div", class_="run-body")
    assert body.attrs.get("data-rendered") == "1"
    text = body.text()
    for expected in (
        "transcript",
        "Clarify ticket ac-conflict-001.",
        "→ update_ticket",
        "tool calls",
        "final state",
        "score",
        "missed: AC3:inconsistent_with_description, AC7:unverifiable",
    ):
        assert expected in text
    assert "open" not in opened.find("details", id=anchors[0]).attrs

    # ... and by a click on the column header.
    clicked = tmp_path / "clicked.html"
    clicked.write_text(
        with_script(
            path.read_text(encoding="utf-8"),
            "document.querySelector('table.grid th[data-run=\"3\"] a').click();",
        ),
        encoding="utf-8",
    )
    run3 = parse(dump_dom(clicked)).find("details", id=anchors[2])
    assert "open" in run3.attrs
    assert "extra: AC5:unverifiable" in run3.text()

    # A link in the older form (c<n>-<case id>-run<i>) still opens its run.
    old = parse(dump_dom(path, f"c1-{SEED_CASE}-run3")).find("details", id=anchors[2])
    assert "open" in old.attrs
    assert old.find("div", class_="run-body").attrs.get("data-rendered") == "1"
    screenshot(path, "seed-en-run2", fragment=anchors[1], size=(1280, 3000))


# --------------------------------------------------------------------------- script injection

SCRIPT = "<script>document.title='pwned-script'</script>"
IMG = "<img src=x onerror=\"document.body.appendChild(document.createElement('div')).id='pwned-img'\">"
CLOSE = "</script><script>document.title='pwned-close'</script><!--"


def hostile() -> tuple[ExperimentRecord, list[RunRecord], str]:
    case = "case-<script>document.title='pwned-case'</script>"
    items = ["AC1:conflict", IMG]
    bad_ticket = json.dumps({**ticket(case), "description": CLOSE + IMG})
    runs = [
        run(case, 1, ["AC1:conflict"], items, reply=SCRIPT + IMG, ticket_json=bad_ticket),
        errored(case, 2, message=IMG),
    ]
    return experiment([case], k=3, name=None, suite_name=SCRIPT), runs, case


def test_payloads_never_reach_the_page_as_markup() -> None:
    e, runs, _ = hostile()
    html = render_html(e, runs)
    for payload in ("<script>document.title", "<img src=x", "</script><script>", "<!--"):
        assert payload not in html
    assert "&lt;img src=x onerror=" in html  # escaped where it is shown


@pytest.mark.browser
def test_script_injection_runs_nothing_and_shows_the_text(tmp_path: Path, chromium: str) -> None:
    e, runs, case = hostile()
    path = page(tmp_path, "hostile", e, runs)
    anchor = run_anchor(parse(path.read_text(encoding="utf-8")), case, 1)
    dom = parse(dump_dom(path, anchor))

    assert dom.find("title").text() == f"passhat · {SCRIPT} · 3f2a9c1d"
    assert not [n for n in dom.iter() if n.attrs.get("id", "").startswith("pwned")]
    assert not dom.find_all("img")

    text = dom.text()
    assert case in text  # the case id, as text
    assert dom.find("tr", data_case=case).find("a").text() == case
    body = dom.find("details", id=anchor).find("div", class_="run-body")
    assert body.attrs.get("data-rendered") == "1"
    assert SCRIPT + IMG in body.text()  # the model's reply
    assert json.dumps(CLOSE + IMG)[1:-1] in body.text()  # the tool's result (a JSON document)
    assert dom.find("tr", data_item=IMG).find("th").text() == IMG  # an extra item
    assert dom.find("li", data_case=case, data_run="2").find("span", class_="err").text() == (
        "timeout: " + IMG
    )
    # the errored run's entry, drawn by the script from its column, shows the error as text
    entry = dom.find("details", id=run_anchor(dom, case, 2))
    assert entry.attrs["data-status"] == "errored"
    assert entry.find("span", class_="err").text() == "timeout: " + IMG
    screenshot(path, "hostile", fragment=anchor, size=(1280, 2400))


def test_script_json_cannot_close_its_script() -> None:
    value = {"x": CLOSE + "&<>\u2028"}
    text = str(script_json(value))
    assert not set("<>&") & set(text)
    assert json.loads(text) == value


# --------------------------------------------------------------------------- languages


ALLOWED_ASCII = {
    "passhat",
    "prompt",
    "harness",
    "token",
    "bootstrap",
    "pass",
    "j",
    "k",
    "n",
    "s",
    "x",
    "JavaScript",
    "show",
    "DecompressionStream",
    # command-line options, kept as typed: --price in=...,out=... or --prices FILE
    *("price", "prices", "in", "out"),
    # per-case columns: the rate's Wilson interval and P(next m pass)
    *("Wilson", "P"),
}


@pytest.mark.browser
def test_zh_tw_page_has_no_english_label(tmp_path: Path, chromium: str) -> None:
    e, runs = experiment(), seed_runs()
    path = page(tmp_path, "seed-zh", e, runs, lang="zh-TW")
    dom = parse(dump_dom(path))
    assert dom.find("html").attrs["lang"] == "zh-TW"
    text = dom.text()
    for label in (
        "每次都漏掉",
        "偶爾漏掉",
        "每次都找到",
        "已達計畫",
        "單次通過率",
        "工具使用",
        "找到",
        "漏掉",
        "多標",
        "計入",
        "要求的 k",
        "項目穩定度",
    ):
        assert label in text
    for metric in ("pass@1", "pass@3", "pass^3"):
        assert metric in text
    for label in (
        "always missed",
        "sometimes missed",
        "Plan met",
        "requested",
        "counted",
        "item stability",
        "tool use",
        "pass rate",
        "found",
    ):
        assert label not in text

    # Whatever English is left must be data (ids, items, tools, header values) or a name.
    data = [
        SEED_CASE,
        *SEED_ITEMS,
        "AC5:unverifiable",
        *SEED_TOOLS,
        "exact_set ticket.annotations",
        e.id,
        e.name or "",
        e.suite_name,
        e.suite_hash[:12],
        e.agent,
        e.model,
        e.fingerprint,
        e.created_at,
        e.prompt_version or "",
        e.harness_version,
    ]
    rest = text
    for value in sorted(data, key=len, reverse=True):
        rest = rest.replace(value, " ")
    words = set(re.findall(r"[A-Za-z][A-Za-z_]*", rest))
    assert words <= ALLOWED_ASCII, words - ALLOWED_ASCII

    # The transcript's labels come from the same catalog.
    anchor = run_anchor(dom, SEED_CASE, 2)
    body = parse(dump_dom(path, anchor)).find("details", id=anchor).text()
    for label in ("對話紀錄", "工具呼叫", "最終狀態", "評分", "系統", "助理"):
        assert label in body
    for label in ("transcript", "final state", "tool calls"):
        assert label not in body
    screenshot(path, "seed-zh-TW", size=(1280, 2200))


def test_every_language_has_every_label() -> None:
    assert LANGS == ("en", "zh-TW")
    keys = set(LABELS["en"])
    for lang in LANGS:
        assert set(LABELS[lang]) == keys, lang
        assert all(LABELS[lang][k].strip() for k in keys), lang


@pytest.mark.parametrize("key", sorted(LABELS["en"]))
def test_labels_keep_placeholders_and_metric_names(key: str) -> None:
    en, zh = LABELS["en"][key], LABELS["zh-TW"][key]
    assert set(re.findall(r"\{\w+\}", en)) == set(re.findall(r"\{\w+\}", zh))
    assert sorted(re.findall(r"pass[@^][\w{}]+", en)) == sorted(re.findall(r"pass[@^][\w{}]+", zh))
    if re.search(r"[A-Za-z]", en.replace("pass@", "").replace("pass^", "")):
        assert re.search(r"[\u4e00-\u9fff]", zh), f"{key} is not translated: {zh!r}"


def test_terminal_labels_are_in_the_catalog() -> None:
    for key in (
        "case",
        "requested",
        "completed",
        "counted",
        "passes",
        "rate",
        "item_stability",
        "tool_use",
        "found",
        "missed",
        "always_found",
        "sometimes_missed",
        "always_missed",
        "plan_met",
        "plan_not_met",
        "missed_in_runs",
        "verdict",
        "runs_calling",
        "calls_per_run",
        "errors",
        "left_out",
        "no_counted_run",
    ):
        assert t(key, "en") and t(key, "zh-TW")
    assert t("plan_not_met_line", "en", at="pass@2", hat="pass^2", k=3) == (
        "Plan NOT met: dataset figures are pass@2 / pass^2, not pass@3 / pass^3."
    )


def test_an_unknown_language_names_the_choices() -> None:
    with pytest.raises(InputError, match=r"unknown language 'fr'; choose one of: en, zh-TW"):
        t("case", "fr")
    with pytest.raises(InputError, match="en, zh-TW"):
        render_html(experiment(), seed_runs(), lang="de")
    assert check_lang("zh_tw") == "zh-TW"
    assert check_lang("EN") == "en"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "zh_TW.UTF-8"}, "zh-TW"),
        ({"LANG": "zh_Hant_TW.UTF-8"}, "zh-TW"),
        ({"LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, "zh-TW"),
        ({"LANG": "zh_TW.UTF-8", "LC_ALL": "C"}, "en"),
        ({"LC_ALL": "zh_TW.Big5"}, "zh-TW"),
        ({"LANG": ""}, "en"),
    ],
    ids=["unset", "zh_TW", "zh_Hant", "zh_CN", "lc-messages-wins", "lc-all-wins", "big5", "empty"],
)
def test_default_lang_follows_the_locale(environ: dict[str, str], expected: str) -> None:
    assert default_lang(environ) == expected


def test_verdicts_are_labelled_in_either_wording() -> None:
    assert i18n.verdict_key("always missed") == "always_missed"
    assert i18n.verdict_key("extra, every run") == "extra_every_run"
    assert i18n.verdict_label("extra, sometimes", "zh-TW") == "偶爾多標"
    assert i18n.verdict_label("never seen before", "en") == "never seen before"


# --------------------------------------------------------------------------- accounting on the page


def short_experiment() -> tuple[ExperimentRecord, list[RunRecord]]:
    """k = 3: one case complete, one with run 2 errored and run 3 missing, one never run."""
    items = ["AC1:conflict"]
    runs = [
        run("a-complete", 1, items, items),
        run("a-complete", 2, items, items),
        run("a-complete", 3, items, []),
        run("b-short", 1, items, items),
        errored("b-short", 2),
    ]
    return experiment(["a-complete", "b-short", "c-none"], k=3), runs


@pytest.mark.browser
def test_missing_runs_turn_the_banner_red_and_are_listed(tmp_path: Path, chromium: str) -> None:
    e, runs = short_experiment()
    path = page(tmp_path, "short", e, runs)
    dom = parse(dump_dom(path))

    banner = dom.find("section", id="accounting")
    assert banner.attrs["data-plan"] == "not-met"
    assert "bad" in banner.attrs["class"].split()
    counts = {
        d.attrs["data-count"]: d.find("dd").text() for d in banner.find_all("div", data_count=True)
    }
    assert counts == {
        "requested": "9",
        "completed": "5",
        "counted": "4",
        "errored": "1",
        "missing": "4",
    }
    missing = {
        li.attrs["data-case"]: li.attrs["data-runs"] for li in banner.find_all("li", data_runs=True)
    }
    assert missing == {"b-short": "3", "c-none": "1 2 3"}
    errored_li = banner.find("li", data_case="b-short", data_run="2")
    assert "timeout: model did not answer in 120 s" in errored_li.text()
    text = banner.text()
    assert (
        "Plan NOT met: dataset figures are pass@1 (mean of per-case rates) / "
        "pass^1 (mean of per-case rates), not pass@3 / pass^3." in text
    )
    assert "left out (no counted run): c-none" in text

    # Figures are labelled with what Accounting.dataset() computed, never with the plan's k.
    d = experiment_accounting(e, runs).dataset()
    labels = [f.attrs["data-metric"] for f in dom.with_class("div", "figure")]
    # Two different numbers, two different names (issue 13); since issue 24 the headline
    # pass rate weighs each case once when cases counted different runs (here 2 and 3),
    # and the caption names the pass rate over runs beside it.
    assert labels == ["pass rate (mean of per-case rates)", d.label_at, d.label_hat]
    assert d.metrics.weighs_cases
    note = dom.find("span", data_weighs="cases")
    assert note is not None and float(note.attrs["data-rate-over-runs"]) == d.metrics.pass_at_1
    assert "the pass rate over runs (all passes / all counted runs) is" in note.text()
    assert d.label_at == "pass@1 (mean of per-case rates)"
    assert d.label_hat == "pass^1 (mean of per-case rates)"
    cards = " ".join(f.text() for f in dom.with_class("div", "figure"))
    assert "pass@3" not in cards and "pass^3" not in cards
    assert (
        "The plan asked for k = 3; figures use j = 1, not k."
        in dom.find("section", id="dataset").text()
    )
    assert dom.find("tr", data_case="c-none").find("td", class_="passes").text() == "–"

    grid = dom.find("table", data_case="b-short")
    assert grid.find("th", data_run="2").attrs["data-status"] == "errored"
    assert grid.find("th", data_run="3").attrs["data-status"] == "missing"
    assert [cell(dom, "b-short", "AC1:conflict", i) for i in (1, 2, 3)] == ["found", "none", "none"]
    assert dom.find("div", data_status="missing", data_run="3")  # the missing run's anchor target
    screenshot(path, "missing-runs", size=(1280, 1800))


def test_no_counted_run_at_all_still_renders() -> None:
    e = experiment(["x"], k=2)
    dom = parse(render_html(e, [errored("x", 1)]))
    assert dom.find("section", id="accounting").attrs["data-plan"] == "not-met"
    assert "no counted run yet: pass@k cannot be computed" in dom.text()
    assert not dom.find_all("section", id="dataset")


# --------------------------------------------------------------------------- figures, curves, intervals


def mixed_experiment() -> tuple[ExperimentRecord, list[RunRecord]]:
    """Six cases of 5 runs passing 0..5 times, and one with 4 runs: curves stop at j = 4."""
    items = ["AC1:conflict"]
    ids = [f"m{c}" for c in range(6)] + ["m-four"]
    runs = [run(f"m{c}", i, items, items if i <= c else []) for c in range(6) for i in range(1, 6)]
    runs += [run("m-four", i, items, items if i % 2 else []) for i in range(1, 5)]
    return experiment(ids, k=5), runs


def test_curves_are_the_mean_unbiased_estimators_up_to_the_smallest_n() -> None:
    e, runs = mixed_experiment()
    accounting = experiment_accounting(e, runs)
    dom = parse(render_html(e, runs))
    rows = dom.find("section", id="curves").find_all("tr", data_j=True)
    points = [
        (int(r.attrs["data-j"]), float(r.attrs["data-at"]), float(r.attrs["data-hat"]))
        for r in rows
    ]
    assert [j for j, _, _ in points] == [1, 2, 3, 4]
    for j, at, hat in points:
        m = accounting.dataset(j).metrics
        assert at == pytest.approx(m.pass_at_j)
        assert hat == pytest.approx(m.pass_hat_j)
    rates = [c.passes / c.counted for c in accounting.cases]
    assert points[0][1] == pytest.approx(sum(rates) / len(rates)) == pytest.approx(points[0][2])
    assert [p[1] for p in points] == sorted(p[1] for p in points)
    assert [p[2] for p in points] == sorted((p[2] for p in points), reverse=True)
    svg = dom.find("svg", class_="chart")
    assert len(svg.find_all("circle")) == 4 + 1  # four points and the legend's
    assert [f.attrs["data-metric"] for f in dom.with_class("div", "figure")] == [
        "pass rate (mean of per-case rates)",  # cases counted 4 and 5 runs
        "pass@4",
        "pass^4",
    ]


def test_interval_slot_uses_the_cluster_bootstrap() -> None:
    e, runs = mixed_experiment()
    ci = dataset_intervals(experiment_accounting(e, runs), confidence=0.95)
    dom = parse(render_html(e, runs))
    slots = {
        f.attrs["data-metric"]: f.find("div", data_ci="interval")
        for f in dom.with_class("div", "figure")
    }
    for label, interval in (
        ("pass rate (mean of per-case rates)", ci.pass_at_1),
        ("pass@4", ci.pass_at_j),
        ("pass^4", ci.pass_hat_j),
    ):
        assert float(slots[label].attrs["data-low"]) == pytest.approx(interval.low)
        assert float(slots[label].attrs["data-high"]) == pytest.approx(interval.high)
        assert "95% CI" in slots[label].text()


def test_one_case_leaves_the_interval_slot_open() -> None:
    dom = parse(render_html(experiment(), seed_runs()))
    slots = dom.find_all("div", data_ci="pending")
    assert len(slots) == 3
    assert "needs at least 2 cases with counted runs" in slots[0].text()


# --------------------------------------------------------------------------- the page as a file


def test_page_is_self_contained_and_deterministic(tmp_path: Path) -> None:
    e, runs = mixed_experiment()
    html = render_html(e, runs)
    assert html == render_html(e, runs)
    dom = parse(html)
    csp = dom.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert (
        "default-src 'none'" in csp
        and "script-src 'sha256-" in csp
        and "unsafe-inline" not in csp.split("style-src")[0]
    )
    for node in dom.iter():
        for attr in ("src", "href", "action", "srcset"):
            if attr in node.attrs:
                assert node.attrs[attr].startswith("#"), (node.tag, node.attrs)
    assert len([n for n in dom.find_all("script") if "src" not in n.attrs]) == 3
    path = write_html(tmp_path / "r.html", e, runs)
    assert path.read_text(encoding="utf-8") == html


def test_the_runs_blob_holds_every_recorded_run_whole() -> None:
    e, runs = mixed_experiment()
    odd = "\x00not a reference"
    runs[0] = replace(runs[0], output=odd, final_state={"__proto__": {"x": 1}, "note": odd * 3})
    html = render_html(e, runs)
    blob = unpack_runs(html)
    dom = parse(html)
    assert len(blob) == len(runs)
    for r in runs:
        anchor = run_anchor(dom, r.case_id, r.run_index)
        data = blob[anchor]
        assert (data["case"], data["run"], data["status"]) == (r.case_id, r.run_index, r.status)
        assert data["transcript"] == r.transcript
        assert data["tool_calls"] == r.tool_calls
        assert data["final_state"] == r.final_state
        assert data["score"] == r.score
        assert data["output"] == r.output


def test_light_runs_give_the_same_grid_without_transcripts() -> None:
    e, runs = experiment(), seed_runs()
    light = [replace(r, transcript=[], final_state={}, output=None) for r in runs]
    full_dom, light_dom = parse(render_html(e, runs)), parse(render_html(e, light))

    def grid(dom: Node) -> list[tuple[str, str]]:
        return [
            (td.attrs["data-run"], td.attrs["data-cell"])
            for td in dom.find_all("td", data_cell=True)
        ]

    assert grid(full_dom) == grid(light_dom)
    assert all(r["transcript"] == [] for r in unpack_runs(render_html(e, light)).values())


# --------------------------------------------------------------------------- size


@pytest.mark.browser
@pytest.mark.slow
def test_200_cases_by_10_runs_stay_under_5_mb_and_load(tmp_path: Path, chromium: str) -> None:
    e, runs = large_experiment(200, 10)
    path = page(tmp_path, "large", e, runs)
    size = path.stat().st_size
    assert size < 5_000_000, f"{size / 1e6:.2f} MB"
    dom = parse(dump_dom(path, budget_ms=2000, timeout=180))
    assert len(dom.with_class("table", "grid")) == 200
    assert len(dom.find_all("details")) == len(runs)
    assert dom.find("section", id="accounting").attrs["data-plan"] == "not-met"
    assert screenshot(path, "large", size=(1280, 1600), timeout=180) == (ARTIFACTS / "large.png")


@pytest.mark.browser
def test_case_table_sorts_on_header_click(tmp_path: Path, chromium: str) -> None:
    e, runs = mixed_experiment()
    html = render_html(e, runs)
    click_rate = "document.querySelectorAll('table.cases thead th')[5].click();"

    def order(clicks: int) -> tuple[list[str], str]:
        path = tmp_path / f"sorted-{clicks}.html"
        path.write_text(with_script(html, click_rate * clicks), encoding="utf-8")
        table = parse(dump_dom(path)).find("table", class_="sortable cases")
        rate = table.find_all("th")[5].attrs.get("aria-sort", "")
        return [r.attrs["data-case"] for r in table.find_all("tr", data_case=True)], rate

    assert order(0) == (["m0", "m1", "m2", "m3", "m4", "m5", "m-four"], "")
    assert order(1) == (["m0", "m1", "m2", "m-four", "m3", "m4", "m5"], "ascending")
    assert order(2) == (["m5", "m4", "m3", "m-four", "m2", "m1", "m0"], "descending")


def test_missing_chromium_fails_with_the_fix_unless_skipping_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import browser

    monkeypatch.setattr(browser, "find_chromium", lambda: None)
    monkeypatch.delenv(browser.SKIP_ENV, raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"run `make test`, which installs it"):
        browser.require_chromium()
    monkeypatch.setenv(browser.SKIP_ENV, "1")
    with pytest.raises(pytest.skip.Exception, match="PASSHAT_SKIP_BROWSER=1"):
        browser.require_chromium()


_REMEMBERS = (
    "<!doctype html><body><script>document.body.dataset.seen ="
    " localStorage.getItem('k') || 'nothing'; localStorage.setItem('k', 'set');</script></body>"
)


@pytest.mark.browser
def test_pages_share_the_browser_but_nothing_one_page_stored(tmp_path: Path, chromium: str) -> None:
    """tests/browser.py opens a module's pages in one Chromium, each in a browser context
    of its own: what one page (one test) stored, no later page reads."""
    path = tmp_path / "remembers.html"
    path.write_text(_REMEMBERS, encoding="utf-8")
    seen = [parse(dump_dom(path, budget_ms=100)).find("body").attrs["data-seen"] for _ in "ab"]
    assert seen == ["nothing", "nothing"]


@pytest.mark.browser
def test_a_browser_that_does_not_answer_is_replaced_for_the_next_page(
    tmp_path: Path, chromium: str
) -> None:
    import browser

    path = tmp_path / "remembers.html"
    path.write_text(_REMEMBERS, encoding="utf-8")
    dump_dom(path, budget_ms=100)
    stuck = browser._browser
    with pytest.raises(RuntimeError, match="did not answer in time"):
        dump_dom(path, timeout=0)
    assert stuck is not None and stuck.proc.poll() is not None and browser._browser is None
    assert parse(dump_dom(path, budget_ms=100)).find("body").attrs["data-seen"] == "nothing"


def test_the_page_shows_the_denominator_ledger_and_the_figures_at_k() -> None:
    """Errored runs: each headline three ways (issue 13), and pass@k over the cases that
    reached k beside the smallest-n figure."""
    items = ["AC1:conflict"]
    ids = [f"e{c}" for c in range(4)]
    runs = [run(f"e{c}", i, items, items if i <= c else []) for c in range(4) for i in (1, 2, 3)]
    runs = [r for r in runs if (r.case_id, r.run_index) != ("e0", 3)] + [errored("e0", 3)]
    e = experiment(ids, k=3)
    dom = parse(render_html(e, runs))
    ledger = experiment_accounting(e, runs).error_ledger()
    assert ledger is not None
    rows = dom.find("div", id="ledger").find_all("tr", data_ledger=True)
    assert [r.attrs["data-ledger"] for r in rows] == [x.label for x in ledger.rows]
    rate = rows[0]
    assert float(rate.attrs["data-excluded"]) == pytest.approx(6 / 11)
    assert float(rate.attrs["data-failures"]) == pytest.approx(6 / 12)
    assert float(rate.attrs["data-passes"]) == pytest.approx(7 / 12)
    assert dom.find("p", data_at_requested="3")
    assert "pass@3 over the 3 cases that reached k = 3 (1 left out)" in dom.text()


def test_a_missing_run_of_one_requested_reads_in_the_singular(tmp_path: Path) -> None:
    """It said "(0 of 1 requested runs counted)" beside a case's missing run."""
    items = ["AC1:conflict"]
    e = experiment(["a-complete", "c-none"], k=1)
    path = page(tmp_path, "one", e, [run("a-complete", 1, items, items)])
    text = " ".join(path.read_text(encoding="utf-8").split())
    assert "(0 of 1 requested run counted)" in text


# ------------------------------------------------------------- printing and full-page capture (#29)

_LAID_OUT = """
setTimeout(function () {
  var cases = Array.prototype.slice.call(document.querySelectorAll("section.case"));
  var laidOut = cases.filter(function (s) {
    return s.firstElementChild.checkVisibility({contentVisibilityAuto: true});
  });
  var printed = [];
  Array.prototype.forEach.call(document.styleSheets, function (sheet) {
    Array.prototype.forEach.call(sheet.cssRules, function (rule) {
      if (!rule.media || rule.media.mediaText !== "print") return;
      Array.prototype.forEach.call(rule.cssRules, function (inner) {
        if (inner.selectorText === "section.case") printed.push(inner.style.contentVisibility);
      });
    });
  });
  document.body.setAttribute("data-laid-out", JSON.stringify({
    cases: cases.length,
    laid_out: laidOut.length,
    last: laidOut.length ? laidOut[laidOut.length - 1].getAttribute("data-case") : null,
    printed: printed
  }));
}, 500);
"""


@pytest.mark.browser
def test_print_and_full_page_capture_lay_out_every_case(tmp_path: Path, chromium: str) -> None:
    """Was: `section.case{content-visibility:auto}` only, so a printout or a full-page
    screenshot was blank below the first cases. On screen, cases off screen still wait
    until they scroll in; `#all` (documented in the README) and print lay out all."""
    e, runs = large_experiment(12, 3)
    path = page(tmp_path, "twelve", e, runs)
    path.write_text(with_script(path.read_text(encoding="utf-8"), _LAID_OUT), encoding="utf-8")

    def laid_out(fragment: str) -> dict[str, Any]:
        body = parse(dump_dom(path, fragment, budget_ms=3000)).find("body")
        found: dict[str, Any] = json.loads(body.attrs["data-laid-out"])
        return found

    on_screen = laid_out("c1")  # scrolled to the first case
    assert on_screen["cases"] == 12
    assert 0 < on_screen["laid_out"] < 12  # the load-time saving is kept
    assert on_screen["printed"] == ["visible"]  # @media print lays out every case
    everything = laid_out("all")
    assert everything["laid_out"] == 12 and everything["last"] == e.case_ids[-1]
    # a full-page screenshot as Playwright takes one: ink down to the last tenth
    # (without #all, everything below the cases in view is blank)
    ink = png_ink(full_page_png(path, "all"))
    assert min(ink) > 0.005, ink
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "report.html#all" in readme
