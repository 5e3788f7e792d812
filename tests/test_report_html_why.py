"""The HTML report's case section says why runs differ: the divergence tree, the item
evidence, and two runs picked and compared in headless Chromium (tests/browser.py).
Model output stays text; no script comes from a run."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from browser import Node, dump_dom, parse, require_chromium, screenshot
from cli_helpers import CLARIFY, SEED
from passhat.records import RunRecord
from passhat.report.html import render_html
from passhat.report.why import Explainer
from records_for_tests import experiment_record
from test_report_html import with_script


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`passhat report --html` of the demo (the seed's card, 3 runs from the cassette)."""
    from passhat.cli import main

    root = tmp_path_factory.mktemp("why")
    db, out = str(root / "p.db"), root / "seed.html"
    for args in (
        ["run", str(CLARIFY), "--case", SEED, "--db", db, "-q"],
        ["report", "latest", "--db", db, "--html", str(out)],
    ):
        with pytest.raises(SystemExit) as done:
            main(args)
        assert done.value.code in (0, 1, None)
    return out


def picked(page: Path, tmp_path: Path, a: int, b: int) -> Node:
    """The page after a reader opened the first case's picker and chose runs a and b."""
    js = (
        "var d = document.querySelector('details.pair'); d.open = true;"
        f"d.querySelector('.pick-a').value = '{a}'; d.querySelector('.pick-b').value = '{b}';"
        "d.querySelector('.pick-b').dispatchEvent(new Event('change'));"
    )
    clicked = tmp_path / f"picked-{a}-{b}.html"
    clicked.write_text(with_script(page.read_text(encoding="utf-8"), js), encoding="utf-8")
    return parse(dump_dom(clicked))


def test_the_seed_case_section_has_the_tree_and_the_evidence(seed_page: Path) -> None:
    dom = parse(seed_page.read_text(encoding="utf-8"))
    why = dom.find("div", class_="why", data_case=SEED)
    (tree,) = why.with_class("ul", "tree")
    root = tree.find("li", data_runs="1 2 3")
    assert root.text().startswith("runs 1, 2 and 3 · turn 0 the same")
    assert [li.attrs["data-runs"] for li in root.find_all("li")[1:]] == ["1", "2", "3"]
    assert why.with_class("p", "sentence")[0].text() == (
        "runs 1, 2 and 3 agree until turn 0 (the input); runs 1, 2 and 3 each branched at turn 1"
    )
    evidence = why.with_class("table", "evidence")[0]
    never = evidence.find("tr", data_item="AC3:inconsistent_with_description")
    assert "none" in never.attrs["class"] and "written by no run" in never.text()
    # numbered as the page's transcripts number messages (from 1): the user message
    assert "sent to runs 1, 2 and 3 (message 2)" in never.text()
    assert (
        "runs 1 and 3: turn 1, update_ticket call 1"
        in evidence.find("tr", data_item="AC7:unverifiable").text()
    )


@pytest.mark.browser
def test_picking_runs_1_and_2_shows_ac7_and_the_turn_they_parted(
    seed_page: Path, tmp_path: Path, chromium: str
) -> None:
    dom = picked(seed_page, tmp_path, 1, 2)
    view = dom.with_class("div", "pair-view")[0]
    head = view.with_class("p", "pair-head")[0]
    assert head.attrs["data-diverged"] == "1"
    assert head.text() == "run 1 (failed) ↔ run 2 (failed): first diverge at turn 1"
    items = view.with_class("table", "pair-items")[0]
    assert items.find("tr", data_side="a").text() == "only in run 1 AC7:unverifiable"
    assert items.find("tr", data_side="b").text() == "only in run 2 –"
    turns = view.with_class("table", "pair-turns")[0]
    assert turns.find("tr", data_turn="0").attrs["data-same"] == "yes"
    first = turns.find("tr", data_turn="1")
    assert first.attrs["class"] == "first" and "→ update_ticket" in first.text()
    assert "「夠快」沒有回應時間門檻" in first.text()  # run 1's AC 7 note, from its transcript
    calls = view.with_class("table", "pair-calls")[0]
    assert calls.find("tr", data_same="no").text().count("#1 update_ticket") == 2
    screenshot(seed_page, "why-seed", size=(1280, 2400))

    swapped = picked(seed_page, tmp_path, 2, 1).with_class("div", "pair-view")[0]
    items = swapped.with_class("table", "pair-items")[0]
    assert items.find("tr", data_side="b").text() == "only in run 1 AC7:unverifiable"


SCRIPT = "<script>document.title='pwned'</script>"
IMG = "<img src=x onerror=\"document.body.appendChild(document.createElement('i')).id='pwned'\">"


@pytest.mark.browser
def test_model_output_in_the_pair_view_is_text(tmp_path: Path, chromium: str) -> None:
    e = experiment_record(["c"], 2, id="abcd0001", suite_path=str(tmp_path / "gone"))

    def run(index: int, reply: str) -> RunRecord:
        transcript = [
            {"role": "user", "content": "go " + IMG},
            {"role": "assistant", "content": reply},
        ]
        return RunRecord("abcd0001", "c", index, "h", "failed", transcript=transcript)

    runs = [run(1, SCRIPT + IMG), run(2, "plain")]
    html = render_html(e, runs, why=Explainer(e, lambda case: runs))
    assert SCRIPT not in html and "<img src=x" not in html
    path = tmp_path / "hostile.html"
    path.write_text(html, encoding="utf-8")
    dom = picked(path, tmp_path, 1, 2)
    assert dom.find("title").text() != "pwned"
    assert not [n for n in dom.iter() if n.attrs.get("id") == "pwned"] and not dom.find_all("img")
    first = dom.with_class("table", "pair-turns")[0].find("tr", data_turn="1")
    assert SCRIPT + IMG in first.text()


def test_pairs_are_left_to_passhat_diff_past_ten_runs() -> None:
    e = experiment_record(["c"], 11, id="abcd0001")
    runs = [
        RunRecord("abcd0001", "c", i, "h", "failed", transcript=[{"role": "user", "content": "go"}])
        for i in range(1, 12)
    ]
    dom = parse(render_html(e, runs, why=Explainer(e, lambda case: runs)))
    why = dom.find("div", class_="why")
    assert not why.find_all("details")
    assert "11 runs: compare two with passhat diff abcd0001 c A B" in why.text()
    assert json.dumps("runs 1, 2, 3") not in why.text()


def test_the_command_past_ten_runs_quotes_the_name_and_the_case() -> None:
    """An experiment's name and an imported case's id go into the command as shell words
    (a space, `$(...)`, a quote), shown as text (the name's `<img src=x>`)."""
    name, case = "my run $(touch /tmp/pwned) it's <img src=x>", "case $(id) 'one'"
    e = experiment_record([case], 11, id="abcd0001", name=name)
    runs = [
        RunRecord(
            "abcd0001", case, i, "h", "failed", transcript=[{"role": "user", "content": "go"}]
        )
        for i in range(1, 12)
    ]
    html = render_html(e, runs, why=Explainer(e, lambda c: runs))
    text = parse(html).find("div", class_="why").text()
    command = text[text.index("passhat diff") :]
    assert shlex.split(command) == ["passhat", "diff", name, case, "A", "B"]
    assert "<img src=x>" not in html


def test_the_page_carries_pairs_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs cost about a millisecond each: past the page's budget a case names the
    command instead (the first case's 3 pairs fit a budget of 3, the second's do not)."""
    import passhat.report.html.render as html

    monkeypatch.setattr(html, "PAIRS_PER_PAGE", 3)
    e = experiment_record(["a", "b"], 3, id="abcd0001")
    runs = [
        RunRecord(
            "abcd0001", case, i, "h", "failed", transcript=[{"role": "user", "content": "go"}]
        )
        for case in ("a", "b")
        for i in (1, 2, 3)
    ]
    dom = parse(
        render_html(e, runs, why=Explainer(e, lambda c: [r for r in runs if r.case_id == c]))
    )
    first, second = dom.with_class("div", "why")
    (data,) = first.with_class("script", "pair-data")
    assert len(json.loads("".join(map(str, data.children)))) == 3
    assert not second.find_all("details")
    assert "3 runs: compare two with passhat diff abcd0001 b A B" in second.text()


def test_cases_past_the_first_30_of_a_page_say_where_to_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import passhat.report.html.render as html

    monkeypatch.setattr(html, "WHY_CASES", 1)
    e = experiment_record(["a", "b"], 2, id="abcd0001")
    runs = [
        RunRecord("abcd0001", c, i, "h", "failed", transcript=[{"role": "user", "content": c}])
        for c in ("a", "b")
        for i in (1, 2)
    ]
    dom = parse(
        render_html(e, runs, why=Explainer(e, lambda c: [r for r in runs if r.case_id == c]))
    )
    first, second = dom.with_class("div", "why")
    assert first.with_class("ul", "tree") and not second.with_class("ul", "tree")
    assert second.text() == (
        "divergence and item evidence: shown for the first 1 cases of the page "
        "(passhat diff compares any two runs)"
    )


@pytest.mark.browser
def test_a_tool_only_pair_shows_the_calls_their_results_and_both_verdicts(
    tmp_path: Path, chromium: str
) -> None:
    """tests/rooms: no transcript; the page's compare aligns the tool calls with their
    tools, arguments, results and errors, and names each run's verdict."""
    import passhat
    from passhat.cli import main
    from test_why import pair_of

    db = str(tmp_path / "p.db")
    passhat.evaluate(str(Path(__file__).parent / "rooms"), k=5, db=db, name="rooms", seed=7)
    case, good, bad = pair_of(db)
    page = tmp_path / "rooms.html"
    with pytest.raises(SystemExit):
        main(["report", "rooms", "--db", db, "--html", str(page)])
    js = (
        f"var d = document.querySelector('details.pair[data-case=\"{case}\"]'); d.open = true;"
        f"d.querySelector('.pick-a').value = '{good}'; d.querySelector('.pick-b').value = '{bad}';"
        "d.querySelector('.pick-b').dispatchEvent(new Event('change'));"
    )
    clicked = tmp_path / "picked.html"
    clicked.write_text(with_script(page.read_text(encoding="utf-8"), js), encoding="utf-8")
    view = parse(dump_dom(clicked)).find("details", class_="pair", data_case=case)
    head = view.with_class("p", "pair-head")[0]
    assert (head.attrs["data-basis"], head.attrs["data-parted"]) == ("tool calls", "2")
    assert head.text() == (
        f"run {good} (passed) ↔ run {bad} (failed): no transcript: the tool calls first "
        "diverge at call #2"
    )
    calls = view.with_class("table", "pair-calls")[0]
    first = calls.find("tr", class_="first")
    assert "#2 get_bookings" in first.text() and "#2 book_room" in first.text()
    assert "→ error: R2 is taken" in first.text() and '→ ["R2"]' in first.text()
    assert "#1 list_rooms" in calls.find("tr", data_same="yes").text()
    output = view.with_class("table", "pair-output")[0]
    assert "R2 is taken; gave up" in output.text()
    tree = parse(page.read_text(encoding="utf-8")).find("div", class_="why", data_case=case)
    assert "branched at call #2" in tree.text() and "failed: run" in tree.text()
