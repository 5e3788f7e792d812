"""Why, for every agent and across the dataset (#35): divergence from whatever runs hold
(turns, else tool calls, else outputs), verdicts on every diff, "graded differently",
and failure signatures within case (`passhat why`, `Experiment.why`, `passhat.why`).

The test world is tests/rooms: room booking with a tool-only Python agent that keeps
no transcript and, in a share of runs set by each case, skips `get_bookings`, tries
R2 blindly, reads "R2 is taken" and gives up."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

import passhat
from cli_helpers import CLARIFY, SEED, diff_json, run_cli
from passhat.divergence import diff_runs
from passhat.records import RunRecord
from passhat.signatures import PASS, Facts, signatures
from why_sim import PLANTED, tally

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ROOT / "tests" / "rooms"


@pytest.fixture(scope="module")
def rooms_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The rooms world, 4 cases x k = 5, through the library."""
    db = str(tmp_path_factory.mktemp("rooms") / "p.db")
    passhat.evaluate(str(ROOMS), k=5, db=db, name="rooms", seed=7)
    return db


def pair_of(db: str) -> tuple[str, int, int]:
    """A case of the rooms experiment with a passed run and a failed one."""
    runs = passhat.open(db).experiment("rooms").summaries()
    for case in sorted({r.case_id for r in runs}):
        passed = [r.run_index for r in runs if r.case_id == case and r.status == "passed"]
        failed = [r.run_index for r in runs if r.case_id == case and r.status == "failed"]
        if passed and failed:
            return case, passed[0], failed[0]
    raise AssertionError("the rooms world made no case with both verdicts")


# -------------------------------------------------------------- the pair diff


def test_a_tool_only_pair_parts_at_call_2_with_the_tool_error(
    rooms_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    case, good, bad = pair_of(rooms_db)
    d = passhat.open(rooms_db).experiment("rooms").diff(case, good, bad)
    assert d.no_transcript == ("a", "b") and d.diverged_at is None
    assert (d.basis, d.parted_at) == ("tool calls", 2)
    a, b = d.first_calls
    assert a is not None and b is not None
    assert a.tool == "get_bookings" and b.tool == "book_room" and b.error == "R2 is taken"
    assert [row["path"] for row in d.output] == ["booked", "reason"]
    assert not d.graded_differently and d.verdicts_differ

    data = diff_json(capsys, rooms_db, "rooms", case, str(good), str(bad))
    assert (data["basis"], data["parted_at"]) == ("tool calls", 2)
    assert data["first_calls"][1]["error"] == "R2 is taken"
    assert (data["a"]["status"], data["b"]["status"]) == ("passed", "failed")
    assert {"path": "reason", "b": "R2 is taken; gave up"} in data["output"]
    r = run_cli(capsys, "diff", "rooms", case, str(good), str(bad), "--db", rooms_db)
    flat = " ".join(r.out.split())
    assert f"first diverge at call #2 (run {good} passed, run {bad} failed)" in flat
    assert 'book_room({"room": "R2"}) → error: R2 is taken' in flat
    assert "R2 is taken; gave up" in flat  # the outputs, diffed


def record(index: int, status: str, **fields: Any) -> RunRecord:
    return RunRecord("e1", "c", index, "h", status, **fields)  # type: ignore[arg-type]


SAME = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]


def verdict(passed: bool) -> list[dict[str, Any]]:
    return [{"scorer": "judge", "passed": passed}]


def test_the_same_turns_with_different_verdicts_are_graded_differently() -> None:
    a = record(1, "passed", transcript=SAME, output="4", score=verdict(True))
    b = record(2, "failed", transcript=SAME, output="4", score=verdict(False))
    d = diff_runs(a, b)
    assert d.basis == "turns" and d.parted_at is None
    assert d.graded_differently and d.scorers == ("judge",)
    c = record(3, "failed", transcript=SAME, output="5", score=verdict(False))
    assert not diff_runs(a, c).graded_differently  # the outputs differ: not the grading


def test_runs_with_nothing_but_outputs_are_compared_by_them() -> None:
    a = record(1, "passed", output={"answer": 4}, score=verdict(True))
    b = record(2, "failed", output={"answer": 5}, score=verdict(False))
    d = diff_runs(a, b)
    assert (d.basis, d.parted_at) == ("outputs", None)
    assert d.output == ({"path": "answer", "a": 4, "b": 5},)
    assert not d.graded_differently
    same = record(3, "failed", output={"answer": 4}, score=verdict(False))
    assert diff_runs(a, same).graded_differently


def test_the_tree_names_verdicts_and_grading_that_differs() -> None:
    from passhat.report.diff import why_renderables
    from passhat.report.why import Explainer
    from records_for_tests import experiment_record

    runs = [
        record(1, "passed", transcript=SAME, output="4", score=verdict(True)),
        record(2, "failed", transcript=SAME, output="4", score=verdict(False)),
    ]
    e = experiment_record(["c"], 2, kind="imported")
    why = Explainer(e, lambda case: runs).explain("c", runs)
    assert [g.runs for g in why.graded] == [(1, 2)] and why.graded[0].scorers == ("judge",)
    from rich.console import Console

    console = Console(width=200, record=True)
    for part in why_renderables(why):
        console.print(part)
    text = " ".join(console.export_text().split())
    assert "identical to the end · failed: run 2; passed: run 1" in text
    assert "graded differently: runs 1 and 2 did the same" in text and "(judge differed" in text


def test_the_rooms_tree_branches_at_call_2_with_each_branch_verdict(rooms_db: str) -> None:
    from passhat.report.why import Explainer

    e = passhat.open(rooms_db).experiment("rooms")
    case = pair_of(rooms_db)[0]
    runs = e.runs([case])
    why = Explainer(e.record, lambda c: runs).explain(case, runs)
    assert why.basis == "tool calls" and why.tree is not None
    assert why.tree.last == 0  # call #1 (list_rooms) is the same in every run
    by_run = {r.run_index: r.status for r in runs}
    for child in why.tree.children:
        assert child.first == 1 and len({by_run[r] for r in child.runs}) == 1


# ----------------------------------------------------------------- signatures


def test_why_finds_the_skipped_look_up_in_the_rooms_world(
    rooms_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = passhat.why("rooms", db=rooms_db)
    top = result.signatures[0]
    assert (top.test.outcome, top.test.feature) == (PASS, "did not call get_bookings")
    assert top.q <= 0.05 and top.test.low > 1 and top.p_permutation is not None
    assert top.test.missed_with == top.test.runs_with  # every run that skipped it failed
    assert top.test.missed_without == 0
    case, missed, found = top.test.pairs[0]
    d = passhat.open(rooms_db).experiment("rooms").diff(case, missed, found)
    assert d.a.status == "failed" and d.b.status == "passed"

    r = run_cli(capsys, "why", "rooms", "--db", rooms_db, "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    first = data["signatures"][0]
    assert first["feature"] == "did not call get_bookings" and first["outcome"] == "pass"
    assert first["pairs"][0]["command"] == f"passhat diff rooms {case} {missed} {found}"
    assert data["adjust"] == "Benjamini-Hochberg" and not data["too_few"]
    r = run_cli(capsys, "why", "rooms", "--db", rooms_db, "--adjust", "holm")
    flat = " ".join(r.out.split())
    assert "failed in" in flat and "runs that did not call get_bookings" in flat
    assert "Holm p =" in flat and f"e.g. passhat diff rooms {case} {missed} {found}" in flat


def test_a_users_own_feature_plugs_in(rooms_db: str) -> None:
    def gave_up(run: RunRecord) -> bool:
        return isinstance(run.output, dict) and "gave up" in str(run.output.get("reason"))

    result = passhat.open(rooms_db).experiment("rooms").why(features={"gave up": gave_up})
    assert "gave up" in {s.test.feature for s in result.signatures} | {
        a for s in result.signatures for a in s.aliases
    }


def test_an_unknown_item_is_one_line(rooms_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "why", "rooms", "--db", rooms_db, "--item", "R9")
    assert r.code == 2 and "--item 'R9' is not a goal item" in r.err and "R3" in r.err


def test_the_demo_has_too_few_runs_and_says_the_pairwise_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "--db", db, "-q")
    r = run_cli(capsys, "why", "latest", "--db", db)
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "too few runs for a signature" in flat
    assert (
        f"{SEED}: `AC7:unverifiable` missed in run 2, not in run 1; they part at turn 1: " in flat
    )
    # the experiment by its id: `latest` names another one after the next run
    experiment_id = passhat.open(db).experiment("latest").id
    assert f"passhat diff {experiment_id} {SEED} 2 1" in flat
    assert "•" not in flat  # no signature claimed


def test_a_feature_that_only_follows_case_difficulty_is_no_signature() -> None:
    """Across cases, hard cases skip the tool more and miss more; within each case the
    tool does nothing: pooled naively it would look like a cause."""
    facts = []
    for c in range(30):
        hard = c % 2 == 0
        for run in range(1, 7):
            called = run <= (2 if hard else 5)
            missed = hard and run in (1, 3, 4)  # half of the calling runs, half of the rest
            facts.append(Facts(f"c{c}", run, {PASS: missed}, {"called lookup": called}))
    found, tests = signatures(facts)
    (test,) = tests
    assert not found and test.odds_ratio == pytest.approx(1.0) and test.p == pytest.approx(1.0)
    # pooled across cases, the same runs look like a cause: 15 of 105 calling runs
    # missed against 30 of 75 others
    from passhat.stats import fisher_exact

    assert fisher_exact(105, 15, 75, 30) < 0.001


def test_planted_signatures_are_recovered_and_a_a_stays_quiet() -> None:
    """The small version of benchmarks/bench_why.py: 50 cases x k = 5."""
    planted = tally(50, 5, planted=True, simulations=10)
    assert planted.recovered >= 0.9 * planted.simulations * len(PLANTED)
    quiet = tally(50, 5, planted=False, simulations=20, seed=1000)
    assert quiet.with_false <= 1  # 5 % of 20 simulations


def test_the_reports_show_the_signatures_capped_and_point_to_the_command(
    rooms_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from browser import parse

    r = run_cli(capsys, "report", "rooms", "--db", rooms_db)
    flat = " ".join(r.out.split())
    assert "failed in" in flat and "runs that did not call get_bookings" in flat
    assert "all of them, with the runs behind each: passhat why rooms" in flat
    page = tmp_path / "rooms.html"
    run_cli(capsys, "report", "rooms", "--db", rooms_db, "--html", str(page))
    dom = parse(page.read_text(encoding="utf-8"))
    section = dom.find("section", id="signatures")
    first = section.find("li")
    assert "runs that did not call get_bookings" in first.text()
    link = first.find("a", class_="sig-pair")
    case, missed, found = (
        passhat.why("rooms", db=rooms_db, whole_runs=False).signatures[0].test.pairs[0]
    )
    assert (link.attrs["data-case"], link.attrs["data-a"], link.attrs["data-b"]) == (
        case,
        str(missed),
        str(found),
    )
    assert dom.find("details", class_="pair", data_case=case)  # the compare it opens
    assert f"passhat diff rooms {case} {missed} {found}" in first.text()


NAMED = "my run $(touch /tmp/passhat-pwned) it's <img src=x>"
"""An experiment name a shell would split, run and misquote, and a page would render."""


def _words_after(text: str, start: str, count: int) -> list[str]:
    """The `count` shell words of the command in `text` that starts with `start`."""
    return shlex.split(text[text.index(start) :])[:count]


def test_the_commands_suggested_quote_the_experiments_name(
    rooms_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`passhat why` (text and JSON) and the reports (terminal and HTML) name the
    experiment in the commands they suggest as one shell word, whatever its name holds;
    the page shows it as text."""
    import shutil
    import sqlite3

    from browser import parse

    db = str(tmp_path / "named.db")
    shutil.copy(rooms_db, db)
    with sqlite3.connect(db) as store:
        store.execute("UPDATE experiments SET name = ?", (NAMED,))
    case, missed, found = passhat.why(NAMED, db=db).signatures[0].test.pairs[0]
    command = ["passhat", "diff", NAMED, case, str(missed), str(found)]
    data = json.loads(run_cli(capsys, "why", NAMED, "--db", db, "--json").out)
    assert shlex.split(data["signatures"][0]["pairs"][0]["command"]) == command
    said = run_cli(capsys, "why", NAMED, "--db", db).out
    assert _words_after(said, "passhat diff", 6) == command
    said = run_cli(capsys, "report", NAMED, "--db", db).out
    said = said.split("the runs behind each: ")[1]
    assert _words_after(said, "passhat why", 3) == ["passhat", "why", NAMED]
    page = tmp_path / "named.html"
    run_cli(capsys, "report", NAMED, "--db", db, "--html", str(page))
    html = page.read_text(encoding="utf-8")
    section = parse(html).find("section", id="signatures")
    assert _words_after(section.find("li").text(), "passhat diff", 6) == command
    assert _words_after(section.text(), "passhat why", 3) == ["passhat", "why", NAMED]
    assert "<img src=x>" not in html


def test_a_runs_closing_line_quotes_the_experiments_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    args = ["--case", SEED, "--db", db, "-q", "--name", NAMED, "--no-report"]
    r = run_cli(capsys, "run", str(CLARIFY), *args)
    assert r.code in (0, 1), r.err
    said = r.err.split("the report: ")[1]
    assert _words_after(said, "passhat report", 3) == ["passhat", "report", NAMED]


def test_an_experiment_is_named_in_a_command_by_one_shell_word() -> None:
    """Its name quoted; its id where it has no name, or one a command would read as an
    option or as `latest` (the newest experiment)."""
    from records_for_tests import experiment_record

    for name, word in [("rooms", "rooms"), (NAMED, NAMED), (None, "e1"), ("-k", "e1")]:
        ref = experiment_record(["c"], 1, name=name).command_ref
        assert shlex.split(f"passhat show {ref} c 1")[2] == word
    assert experiment_record(["c"], 1, name="latest").command_ref == "e1"


def test_on_the_bundled_sql_example_the_pair_names_the_skipped_glossary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two cases of three runs: too few for a signature, and the pairwise answer shows
    the cassette's planted flaw: the failed run never looked the business term up."""
    db = str(tmp_path / "p.db")
    run_cli(capsys, "run", str(ROOT / "examples" / "sql"), "--db", db, "-q", "--name", "sql")
    data = json.loads(run_cli(capsys, "why", "sql", "--db", db, "--json").out)
    assert data["too_few"] and data["signatures"] == []
    (pair,) = [p for p in data["pairs"] if p["case"] == "active-customers"]
    assert pair["tools"] == {"glossary": [0, 1]}
    assert (pair["basis"], pair["parted_at"]) == ("turns", 1)
