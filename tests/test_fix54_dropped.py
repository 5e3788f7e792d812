"""The control characters rich drops (BEL, backspace, VT, FF, CR) are shown as escapes.

rich's `Text` removes those five from every string it is given, before passhat's
SafeConsole sees a segment: `show` printed a model's `ok<BEL>bell<CR>cr` as `okbellcr`,
and so did `diff`, `why`, `compare` and the terminal report for a case id or an item.
Model output is data: every control character is written out (`\\x07`, `\\x0d`), as
the Markdown summary and JUnit do (test_attack52b_shown, test_review53), never dropped.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from rich.text import Text

from cli_helpers import run_cli
from test_report_html import experiment, run
from view_stores import write_store

DROPPED = "ok\x07bell\rcr\x08bs\x0bvt\x0cff\x1besc"
SHOWN = "ok\\x07bell\\x0dcr\\x08bs\\x0bvt\\x0cff\\x1besc"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""What no shown text may hold: C0 (but the newline), DEL, C1."""
CASE = "case\x07\r"
CASE_SHOWN = "case\\x07\\x0d"


def _store(tmp_path: Path) -> tuple[Path, str]:
    e = experiment([CASE, "plain"], k=2, name="exp")
    runs = [
        run(CASE, 1, ["x"], ["x"], reply=f"done {DROPPED}"),
        run(CASE, 2, ["x"], ["x", f"AC9:{DROPPED}"], reply="done"),
        run("plain", 1, ["x"], ["x"]),
        run("plain", 2, ["x"], []),
    ]
    return write_store(tmp_path / "p.db", [(e, runs)]), e.id


def _shown(text: str) -> None:
    assert RAW.findall(text) == [], text


def test_show_writes_out_what_rich_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, ref = _store(tmp_path)
    r = run_cli(capsys, "show", ref, CASE, "1", "--db", str(db))
    assert r.code == 0, r.err
    _shown(r.out)
    assert f"done {SHOWN}" in r.out
    assert f"{CASE_SHOWN} run 1" in r.out


def test_diff_writes_out_what_rich_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, ref = _store(tmp_path)
    r = run_cli(capsys, "diff", ref, CASE, "1", "2", "--db", str(db))
    assert r.code == 0, r.err
    _shown(r.out)
    squeezed = re.sub(r"\s", "", r.out)  # cells wrap
    # the extra item, the output's cell, and the turn's message (diff.clip dropped its CR)
    assert squeezed.count(SHOWN) == 3, r.out


@pytest.mark.parametrize("command", ["why", "report"])
def test_why_and_report_write_out_what_rich_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    db, ref = _store(tmp_path)
    r = run_cli(capsys, command, ref, "--db", str(db))
    assert r.code in (0, 1), r.err
    _shown(r.out)
    assert CASE_SHOWN in r.out


def test_compare_writes_out_what_rich_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [CASE, *(f"c{i}" for i in range(4))]
    base = experiment(cases, k=2, name="base")
    cand = replace(base, id="4b3a2c1e", name="cand")
    runs_a = [run(c, i, ["x"], []) for c in cases for i in (1, 2)]
    runs_b = [
        replace(run(c, i, ["x"], ["x"]), experiment_id=cand.id) for c in cases for i in (1, 2)
    ]
    db = write_store(tmp_path / "p.db", [(base, runs_a), (cand, runs_b)])
    r = run_cli(capsys, "compare", "base", "cand", "--db", str(db))
    assert r.code in (0, 1), r.err
    _shown(r.out)
    assert CASE_SHOWN in r.out


def test_the_views_text_writes_out_every_control_character() -> None:
    """`passhat view`'s <pre> of a terminal rendering held ESC and C1 raw (rich's record,
    not what SafeConsole writes) and lost BEL and CR."""
    from passhat.view.app import as_text

    text = as_text(lambda console: console.print(Text(DROPPED + "\x9b2J")))
    _shown(text)
    assert SHOWN + "\\x9b2J" in text


def test_a_fresh_passhat_writes_out_what_rich_drops(tmp_path: Path) -> None:
    """In a process of its own (rich's strip replaced on import, not by an earlier
    test's console)."""
    import subprocess
    import sys

    db, ref = _store(tmp_path)
    for args in (["show", ref, CASE, "1"], ["report", ref]):
        done = subprocess.run(
            [sys.executable, "-m", "passhat", *args, "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, 1), done.stderr
        _shown(done.stdout)
        assert CASE_SHOWN in done.stdout


def test_importing_passhat_leaves_a_programs_own_rich_alone() -> None:
    """rich's strip is replaced by passhat's command line as it starts, a program's choice:
    a program that imports passhat and prints with rich itself keeps rich's behaviour."""
    import subprocess
    import sys

    code = (
        "import passhat.report.console, passhat.report.terminal, passhat.cli\n"
        "from rich.text import Text\n"
        "print(repr(Text('a\\rb').plain))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr("ab")
