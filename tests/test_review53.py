"""review53: defects found reviewing round 52's work (d397407..b8441e0), each with the
test that failed before its fix."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED
from test_runner import SLOW_ENV


def test_a_run_kept_as_a_ctrl_c_lands_on_its_agents_return_has_its_own_duration(
    tmp_path: Path,
) -> None:
    """A Ctrl-C as run 1's agent returned (execution.Returned) kept the run, its last
    step made as the runs stopped (`bounded`), but `ran.paused` was never set on that
    path: `_finish_now` added the whole perf_counter to the run's clock and the run was
    stored with a duration of minus that (-20111 s on this machine)."""
    db = tmp_path / "p.db"
    argv = [sys.executable, "-m", "passhat", "run", str(CLARIFY), "--case", SEED]
    argv += ["--agent", "agents_for_tests:signals_itself", "-k", "3", "--concurrency", "1"]
    argv += ["--db", str(db), "-q", "--name", "stopped"]
    env = {**SLOW_ENV, "PASSHAT_TEST_SIGNAL": "INT_END"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT run_index, duration_s FROM runs").fetchall()
    indices = [index for index, _ in rows]
    # run 1 is kept; run 2 too when its quick agent also returned before the stop reached it
    assert indices[:1] == [1] and len(indices) == len(set(indices)) <= 2, done.stderr
    assert all(0 <= duration < 60 for _, duration in rows), rows


@pytest.mark.skipif(
    sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"), reason="3.11's watcher"
)
def test_a_child_whose_pidfd_cannot_be_opened_is_still_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """_children._PidfdWatcher opened the child's pidfd after asyncio had started it, and
    asyncio adds the handler outside its own cleanup: out of descriptors (EMFILE) there,
    the spawn failed with the child started, never waited for nor killed (an agent
    running on past its run, unsupervised). It is now waited for by a thread, as 3.11's
    own watcher does."""
    import asyncio
    import errno

    from passhat import _children

    _children.child_watcher()
    if not isinstance(asyncio.get_child_watcher(), _children._PidfdWatcher):
        pytest.skip("the pidfd watcher is not installed here")

    def no_descriptor(pid: int) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    async def spawn() -> int:
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", "exit(7)")
        return await asyncio.wait_for(process.wait(), 30)

    monkeypatch.setattr(os, "pidfd_open", no_descriptor)
    assert asyncio.run(spawn()) == 7


UNSEEN = "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180f\u206a\u206f\u3164\uffa0\ufe00\ufe0d"
UNSEEN += "\U0001bca0\U0001d173\U0001d17a\U000e0080\U000e0100\U000e01ef\U000e0fff"
"""Default-ignorable characters (Unicode's DerivedCoreProperties) a reader sees nothing
of, that console.HIDDEN left as they came: the combining grapheme joiner, the Hangul
fillers, Khmer's inherent vowels, Mongolian's variation selectors, the deprecated format
characters, the variation selectors (U+FE00-FE0D, and the supplement U+E0100-E01EF: one
byte of hidden text each, as the tags the report escapes already) and the rest of the
tags' plane."""


def test_every_invisible_character_is_shown_as_its_escape() -> None:
    """`AC1:conflict` + U+E0101 read as the goal's `AC1:conflict` in every report, as
    with a zero-width space before round 52 escaped those: the terminal (escape_controls),
    the page and JUnit (escape_direction) and the summary (md) now write each one out."""
    from passhat.report.ci import md
    from passhat.report.console import escape_controls, escape_direction

    for char in UNSEEN:
        item = f"AC1:conflict{char}"
        for shown in (escape_controls(item), escape_direction(item), md(item)):
            assert char not in shown and "\\" in shown, (hex(ord(char)), shown)
    kept = "e\u0301 \u200c\u200d \u2764\ufe0f \u263a\ufe0e \ud55c\uae00 \u1100\u1161"
    assert escape_direction(kept) == kept == escape_controls(kept)  # scripts and emoji


def test_the_pages_script_escapes_what_the_python_side_escapes() -> None:
    """The page's script keeps its own copy of the class (templates/_script.html.j2):
    every code point is escaped by both or by neither."""
    import re

    from passhat.report import console

    script = (Path(console.__file__).parent / "templates" / "_script.html.j2").read_text()
    body = re.search(r"var DIRECTION = /\[(.*?)\]/gu;", script)
    assert body is not None
    as_python = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), body[1])
    js = re.compile(f"[{as_python}]")
    python = re.compile(f"[{console.DIRECTION}{console.HIDDEN}]")
    every = "".join(map(chr, range(0x110000)))
    assert js.findall(every) == python.findall(every)


def test_show_json_of_a_value_nested_past_what_passhat_writes_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store someone else wrote: a run's output nested 300 deep (passhat's own writer
    cuts at 200, columns.json_safe; the store's read takes up to Python's ~1,000) ended
    `show --json` in pydantic-core's traceback (its serializer stops at 255 levels)."""
    from cli_helpers import run_cli
    from test_report_html import experiment, run
    from view_stores import write_store

    e = experiment(["a"], k=1)
    db = write_store(tmp_path / "p.db", [(e, [run("a", 1, ["x"], ["x"])])])
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET output = ?", ("[" * 300 + "1" + "]" * 300,))
    result = run_cli(capsys, "show", e.id, "a", "1", "--json", "--db", str(db))
    assert result.code == 2, result.err
    assert "nested" in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


def test_junit_shows_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JUnit file dropped C0 controls (XML 1.0 holds none) but wrote C1 and DEL as
    they came: an 8-bit CSI (U+009B) in a case id or an error message reached every CI
    log that printed the file, as the Markdown summary's did before round 52 escaped
    them (test_attack52b_shown). Both now write every control character as its escape."""
    from cli_helpers import run_cli
    from test_report_html import errored, experiment, run
    from view_stores import write_store

    case = "case\x9b2J\x85\x7f\x1b[2J"
    e = experiment([case, "plain"], k=2, name="exp\x9b2J")
    runs = [run(c, i, ["x"], ["x"] if i == 1 else []) for c in (case, "plain") for i in (1, 2)]
    stored = [*runs[:1], errored(case, 2, "model said \x9b31m\x1b]0;owned\x07"), *runs[2:]]
    db = write_store(tmp_path / "p.db", [(e, stored)])
    junit = tmp_path / "junit.xml"
    result = run_cli(capsys, "report", e.id, "--db", str(db), "--junit-xml", str(junit))
    assert result.code in (0, 1), result.err
    text = junit.read_text(encoding="utf-8")
    assert [c for c in text if c not in "\n\t" and (c < " " or "\x7f" <= c <= "\x9f")] == []
    assert 'name="case\\x9b2J\\x85\\x7f\\x1b[2J"' in text
    assert "model said \\x9b31m\\x1b]0;owned\\x07" in text
