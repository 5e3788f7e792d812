"""Reading a store runs none of the code its suite names (round 14's attack on what a
store someone else made can make passhat do).

An experiment records where its suite was (`suite_path`); a report reads that suite's
scorers and the listed cases' goals for the item evidence. A case whose file is not
`cases/<id>.yaml` was looked for by a whole `load_suite`, which imports the suite's
environment and its `custom: file.py:fn` scorers: `passhat report --db their.db` (or
`passhat view`, or `report --html`) over a store and a suite folder sent together ran
the sender's Python. Now every case file is read as the single case is (`CaseReader`):
the evidence is the same, nothing imported.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from cli_helpers import run_cli
from test_report_html import experiment, run
from view_stores import write_store

GOAL = ["AC1:conflict", "AC2:unverifiable"]
CASE = "card-7"
PLANTED = """
import pathlib
pathlib.Path(__file__).with_name("ran").write_text("the suite's code ran")

def fn(final_state, goal, **params):
    return {"passed": True}
"""


def planted_suite(root: Path) -> Path:
    """A suite whose custom scorer's module writes `ran` beside it when imported, and
    whose one case lives in a file not named after its id."""
    (root / "cases").mkdir(parents=True)
    (root / "scorer.py").write_text(PLANTED, encoding="utf-8")
    suite = {
        "name": "planted",
        "environment": "ticket",
        "labels": ["conflict", "unverifiable"],
        "defaults": {
            "agent": "clarifier",
            "model": "replay:none.jsonl",
            "k": 2,
            "scorers": [{"exact_set": "ticket.annotations"}, {"custom": "scorer.py:fn"}],
        },
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    case = {
        "id": CASE,
        "input": {"ticket": {"key": CASE}},
        "goal": {"ticket": {"annotations": GOAL}},
    }
    (root / "cases" / "renamed.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")
    return root


@pytest.mark.parametrize("how", [[], ["--html", "page.html"]], ids=["terminal", "html"])
def test_a_report_reads_the_suite_a_store_names_without_running_its_code(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: list[str],
) -> None:
    suite = planted_suite(tmp_path / "theirs")
    e = experiment([CASE], k=2, suite_path=str(suite))
    db = write_store(
        tmp_path / "their.db", [(e, [run(CASE, 1, GOAL, GOAL), run(CASE, 2, GOAL, GOAL[:1])])]
    )
    monkeypatch.chdir(tmp_path)
    result = run_cli(capsys, "report", e.id, "--db", str(db), *how)
    assert result.code == 0, result.err
    assert not (suite / "ran").exists(), "the report imported the suite's scorer"
    shown = (tmp_path / "page.html").read_text(encoding="utf-8") if how else result.out
    assert f"item evidence · {CASE} (which turn wrote it)" in shown  # its file was read


# ------------------------------------------------ what a store's columns hold

DEEP = "[" * 100_000 + "]" * 100_000
DAMAGE = {
    "deep-transcript": (
        f"UPDATE runs SET transcript = '{DEEP}' WHERE case_id = 'a'",
        "transcript of run 1 of case 'a' is JSON nested too deep to read",
    ),
    "case-ids-numbers": (
        "UPDATE experiments SET case_ids = '[1, 2]'",
        "case_ids of experiment 3f2a9c1d is [1, 2], not a JSON list of text",
    ),
    "tool-calls-numbers": (
        "UPDATE runs SET tool_calls = '[1, 2]' WHERE case_id = 'a'",
        "tool_calls of run 1 of case 'a' is [1, 2], not a JSON list of objects",
    ),
    "seed-text": ("UPDATE runs SET seed = 'x' WHERE case_id = 'a'", "seed of run 1 of case 'a'"),
    "retries-number": (
        "UPDATE runs SET retries = '7' WHERE case_id = 'a'",
        "retries of run 1 of case 'a' is 7",
    ),
    "surrogate-output": ("UPDATE runs SET output = '\"\\ud800 x\"' WHERE case_id = 'a'", ""),
    "surrogate-items": (
        "UPDATE runs SET score = replace(score, 'AC1:conflict', '\\udfff') WHERE case_id = 'a'",
        "",
    ),
    "surrogate-transcript": (
        "UPDATE runs SET transcript = replace(transcript, 'Clarify', '\\ud800')",
        "",
    ),
    "bytes-name": (
        "UPDATE experiments SET name = CAST(x'6eff' AS TEXT)",
        "Could not decode to UTF-8 column 'name'",
    ),
    "bytes-case": (
        "UPDATE runs SET case_id = CAST(x'61ff' AS TEXT) WHERE case_id = 'b'",
        "",
    ),
    "extra-lists": (
        "UPDATE runs SET score = json_set(score, '$[0].extra', json('[[1]]')) WHERE case_id = 'a'",
        "",
    ),
}
"""A store someone else wrote (or edited): what each column holds, and the line `show`
gives (none: a lone surrogate's JSON escape is shown as that escape; a set detail whose
extras are lists is no set detail, and is shown; a case id not UTF-8 is not read by
`show a 1`). Each ended `show`, `report` (--json, --html), `export`, `diff` or `why` in a
traceback: RecursionError, TypeError, UnicodeEncodeError, SQLite's "Could not decode"."""


def _damaged(tmp_path: Path, sql: str) -> Path:
    e = experiment(["a", "b"], k=2)
    runs = [run(c, i, GOAL, GOAL if i == 1 else GOAL[:1]) for c in "ab" for i in (1, 2)]
    db = write_store(tmp_path / "their.db", [(e, runs)])
    with sqlite3.connect(db) as connection:
        connection.execute(sql)
    connection.close()
    return db


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_store_whose_columns_hold_another_shape_gets_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    sql, said = DAMAGE[damage]
    db = _damaged(tmp_path, sql)
    commands = [
        ["show", "latest", "a", "1"],
        ["show", "latest", "a", "1", "--json"],
        ["diff", "latest", "a", "1", "2"],
        ["report", "latest", "--html", str(tmp_path / "page.html")],
        ["report", "latest", "--json"],
        ["why", "latest"],
        ["export", "latest", "-o", str(tmp_path / "runs.csv")],
    ]
    for args in commands:
        result = run_cli(capsys, *args, "--db", str(db))  # a traceback raises here
        if result.code:  # (an export reads neither transcripts nor tool calls)
            line = result.err.strip()
            assert line.startswith("error: ") and "the store is damaged: " in line, (args, line)
            assert len(line.splitlines()) == 1, (args, result.err)
        elif args[0] == "show":  # a lone surrogate shown as its escape, never a traceback
            assert "\\ud800" in result.out if "ud800" in sql else True
    shown = run_cli(capsys, "show", "latest", "a", "1", "--db", str(db))
    assert f"the store is damaged: {said}" in shown.err if said else shown.code == 0


EXPECTED_ONE = """
def fn(final_state, goal, **params):
    return {"passed": True, "expected": 1, "missing": 2, "extra": 3}
"""


def test_a_custom_scorers_own_expected_and_missing_are_not_read_as_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A custom scorer may name its details as it likes: `"expected": 1` ended `passhat
    run` (its closing report), and every report of the experiment after, in a traceback
    (item stability iterated the 1). It is no set detail: the set scorer's items stand."""
    suite = planted_suite(tmp_path / "s")
    (suite / "scorer.py").write_text(EXPECTED_ONE, encoding="utf-8")
    case = yaml.safe_load((suite / "cases" / "renamed.yaml").read_text(encoding="utf-8"))
    case["input"] = {"ticket": {"key": CASE, "summary": "s", "description": "d", "ac": ["a"]}}
    e = experiment([CASE], k=2, suite_path=str(suite))
    own = {"scorer": "scorer.py:fn", "passed": True, "expected": 1, "missing": 2, "extra": 3}
    runs = [run(CASE, 1, GOAL, GOAL), run(CASE, 2, GOAL, GOAL[:1])]
    runs = [replace(r, score=[*r.score, own]) for r in runs]
    db = write_store(tmp_path / "p.db", [(e, runs)])
    for args in (["report", e.id], ["report", e.id, "--json"], ["why", e.id]):
        result = run_cli(capsys, *args, "--db", str(db))
        assert result.code == 0, (args, result.err)
    report = json.loads(run_cli(capsys, "report", e.id, "--json", "--db", str(db)).out)
    assert [(i["item"], i["misses"]) for i in report["items"]] == [
        ("AC1:conflict", []),
        ("AC2:unverifiable", [2]),
    ]


def test_a_transcripts_messages_of_another_shape_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A message's tool calls that are no list of objects (`"tool_calls": 7`) ended show,
    diff, why and report in a TypeError; a role or content of another type is shown."""
    sql = "UPDATE runs SET transcript = '[{\"role\": 1, \"tool_calls\": 7}]' WHERE case_id = 'a'"
    db = _damaged(tmp_path, sql)
    said = "tool_calls of message 0 of the transcript of run 1 of case 'a' is 7"
    for args in (
        ["show", "latest", "a", "1"],
        ["diff", "latest", "a", "1", "2"],
        ["why", "latest"],
    ):
        result = run_cli(capsys, *args, "--db", str(db))  # a traceback raises here
        assert result.code != 0 and f"the store is damaged: {said}" in result.err, args
    report = run_cli(capsys, "report", "latest", "--db", str(db))
    assert report.code != 0 and report.err.count("\n") == 1
