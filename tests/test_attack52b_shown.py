"""What a hostile model, agent, suite or foreign file makes passhat show (round 14's
attack on its outputs).

The Markdown summary (`--summary`, for $GITHUB_STEP_SUMMARY or a file a job prints)
wrote control characters as they came: an OSC title write, a screen clear, an 8-bit
CSI in a case id or an experiment's name reached every log that printed the file (CI
log pages obey ANSI escapes). It escapes them now as the terminal report does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import run_cli
from test_report_html import errored, experiment, run
from view_stores import write_store

CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""What no shown text may hold: C0 (but the newline), DEL, C1."""
OSC = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x9b2J"


def test_the_markdown_summary_shows_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = f"case{CLEAR}\r"
    e = experiment(
        [case, "plain"], k=2, name=f"exp{OSC}", suite_name=f"suite{OSC}", agent=f"a{CLEAR}"
    )
    runs = [run(c, i, ["x"], ["x"] if i == 1 else []) for c in (case, "plain") for i in (1, 2)]
    db = write_store(tmp_path / "p.db", [(e, [*runs[:1], errored(case, 2), *runs[2:]])])
    summary = tmp_path / "summary.md"
    result = run_cli(capsys, "report", e.id, "--db", str(db), "--summary", str(summary))
    assert result.code in (0, 1), result.err
    text = summary.read_text(encoding="utf-8")
    assert CONTROLS.findall(text) == []
    assert "suite\\\\x1b\\]0;owned\\\\x07" in text  # each backslash escaped in Markdown
    assert "| case\\\\x1b\\[2J\\\\x9b2J\\\\x0d |" in text
    assert "agent a\\\\x1b\\[2J\\\\x9b2J ·" in text
