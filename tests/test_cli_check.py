"""`passhat check`: a summary for a valid suite, every problem and exit 2 for an invalid one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cli_helpers import run_cli
from passhat.suite import load_suite

if TYPE_CHECKING:
    from conftest import SuiteWriter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_check_summarises_the_clarify_suite(capsys: pytest.CaptureFixture[str]) -> None:
    suite = load_suite(EXAMPLES / "clarify")
    r = run_cli(capsys, "check", str(EXAMPLES / "clarify"))
    assert r.code == 0, r.err
    assert r.err == ""
    out = r.out
    assert "conflict, inconsistent_with_description, unverifiable" in out
    assert suite.hash in out
    for case in suite.cases:
        assert case.id in out and case.hash[:12] in out
    assert "AC3:inconsistent_with_description" in out
    assert "query_background ×2" in out
    assert f"valid: {len(suite.cases)} cases" in out


def test_check_summarises_the_trello_suite(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "check", str(EXAMPLES / "trello"))
    assert r.code == 0, r.err
    assert "custom rules.py:card_follows_guide" in r.out
    assert "get_guide ×1" in r.out
    assert "valid: 3 cases" in r.out


def test_check_lists_every_problem_and_exits_2(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    writer.case["goal"]["ticket"]["annotations"][0]["label"] = "unverfiable"
    writer.cases["other.yaml"] = dict(writer.case, id="other-002", golas={})
    root = writer.write()
    r = run_cli(capsys, "check", str(root))
    assert r.code == 2
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 3, r.err
    assert all(line.startswith(f"error: {root}") for line in lines)
    assert sum("did you mean 'unverifiable'?" in line for line in lines) == 2
    assert sum("unknown key 'golas'" in line for line in lines) == 1
    assert "Traceback" not in r.err


def test_check_of_a_large_suite_lists_30_cases_unless_all(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    """Regression (issue 15): check printed every case, 46,000 lines for 10,000 cases."""
    from passhat.cli.check import CASES_LISTED
    from passhat.report.terminal import ROWS_SHOWN

    assert CASES_LISTED == ROWS_SHOWN  # one bound for every terminal list of cases
    for i in range(1, 36):
        writer.cases[f"c{i:02d}.yaml"] = dict(writer.case, id=f"case-{i:02d}")
    root = writer.write()
    r = run_cli(capsys, "check", str(root))
    assert r.code == 0, r.err
    listed = [line for line in r.out.splitlines() if line.startswith(("case-", "tiny"))]
    assert len(listed) == CASES_LISTED
    assert "case-30 " in r.out and "case-31 " not in r.out  # in file name order
    assert "... and 6 more cases (--all lists every case)" in r.out
    assert "valid: 36 cases" in r.out
    everything = run_cli(capsys, "check", str(root), "--all")
    assert "case-35" in everything.out and "more cases" not in everything.out
    assert "valid: 36 cases" in everything.out


def test_check_of_a_missing_folder_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r = run_cli(capsys, "check", str(tmp_path / "nope"))
    assert r.code == 2
    assert r.err.strip() == (
        f"error: {tmp_path / 'nope'}: no such folder; give a suite folder holding suite.yaml "
        "and cases/"
    )


def test_user_strings_are_printed_as_written_not_as_markup(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    assert isinstance(writer.suite, dict)
    writer.suite["name"] = "[red]tiny[/red]"
    writer.case["tags"] = ["[bold]x[/bold]", "[link=http://e.vil]y"]
    r = run_cli(capsys, "check", str(writer.write()))
    assert r.code == 0, r.err
    assert "[red]tiny[/red]" in r.out
    assert "[bold]x[/bold], [link=http://e.vil]y" in r.out


def test_check_has_help_text(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "check", "--help")
    assert r.code == 0
    assert "Validate a suite" in r.out
