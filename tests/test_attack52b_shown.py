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

from browser import require_chromium
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


# ------------------------------------------------ invisible characters

HIDDEN_CHARS = "\u200b\u2060\ufeff\u00ad\u180e\U000e0041\U000e007f"
"""Zero-width space, word joiner, zero-width no-break space, soft hyphen, Mongolian vowel
separator, and two tag characters (invisible ASCII)."""
HIDDEN_ANY = re.compile("[\u00ad\u180e\u200b\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
SHOWN_AS_ESCAPES = re.compile(
    "[\u00ad\u180e\u200b\u2060-\u2064\ufeff\U000e0000-\U000e007f"
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
"""The invisible characters and the direction ones (the names of test_direction_characters'
experiment keep theirs)."""


def _hidden_shown(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = ord(match.group())
        return (
            f"\\x{code:02x}"
            if code <= 0xFF
            else (f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        )

    return SHOWN_AS_ESCAPES.sub(one, text)


@pytest.fixture
def chromium() -> str:
    return require_chromium()


@pytest.fixture
def hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """test_direction_characters' data and checks, with invisible characters where it puts
    direction ones: an extra item `AC1:conflict` and a zero-width space read as the
    goal's `AC1:conflict` in every report, a case id held text no reader saw."""
    import test_direction_characters as direction

    for name, value in {
        "CASE": "case-\u200bexe\U000e0041.txt",
        "ITEM": "AC2:\u2060unverifiable\ufeff",
        "REPLY": "Done\u00ad: see \U000e0041\U000e007f payload\u180e.",
        "ERROR": "model said \u200bno\u2060 twice",
        "TOOL": "get\u200bticket",
        "DIRECTION": HIDDEN_CHARS,
        "ANY": SHOWN_AS_ESCAPES,
        "shown": _hidden_shown,
    }.items():
        monkeypatch.setattr(direction, name, value)


def test_the_terminal_report_shows_invisible_characters_as_escapes(
    hidden: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import test_direction_characters as direction

    direction.test_the_markdown_summary_and_junit_show_them_as_escapes(tmp_path, capsys)
    e, runs = direction.hostile()
    db = write_store(tmp_path / "shown.db", [(e, runs)])
    result = run_cli(capsys, "show", e.id, direction.CASE, "1", "--db", str(db))
    assert result.code == 0, result.err
    assert not HIDDEN_ANY.search(result.out) and _hidden_shown(direction.REPLY) in result.out


@pytest.mark.browser
def test_the_html_report_shows_invisible_characters_as_escapes(
    hidden: None, tmp_path: Path, chromium: str
) -> None:
    import test_direction_characters as direction

    direction.test_the_html_report_shows_direction_characters_as_escapes(tmp_path, chromium)


def test_passhat_view_shows_invisible_characters_as_escapes(hidden: None, tmp_path: Path) -> None:
    import test_direction_characters as direction

    direction.test_passhat_view_shows_direction_characters_as_escapes(tmp_path)


# ------------------------------------------------ an item's newline

FORGED = "AC9:x\nFORGED:pass^3=100%"
"""No space after the newline: a line that begins with FORGED is the newline's, not a
wrap of the line before."""


def test_an_items_newline_draws_no_line_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An extra item is a model's text: its newline drew a line of its own under the item
    table's row (`pass^3 100% ...` as a line of the report), and in `diff`'s item list.
    It is written out, `\\n`, in the item's cell."""
    e = experiment(["c"], k=2)
    runs = [run("c", 1, ["x"], ["x"]), run("c", 2, ["x"], ["x", FORGED])]
    db = write_store(tmp_path / "p.db", [(e, runs)])
    for args in (["report", e.id], ["diff", e.id, "c", "1", "2"]):
        result = run_cli(capsys, *args, "--db", str(db))
        assert result.code in (0, 1), result.err
        lines = result.out.splitlines()
        assert not [line for line in lines if line.strip().startswith("FORGED")], args
        assert any("AC9:x\\nFORGED" in line for line in lines), args
