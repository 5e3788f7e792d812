"""`passhat report EXPERIMENT [--json] [--db PATH]` run without typer (`cli.quick_report`,
`cli.report.report_of`): the command lines it takes, and what it prints, exits and
imports beside the same line parsed by typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import passhat.cli as cli
from cli_helpers import run_cli
from test_report_json import stored_runs


@pytest.mark.parametrize(
    ("argv", "quick"),
    [
        (["report", "e1", "--json"], ("e1", None, True, None)),
        (["report", "--json", "e1"], ("e1", None, True, None)),
        (["report", "e1", "--json", "--db", "p.db"], ("e1", Path("p.db"), True, None)),
        (["report", "--db", "p.db", "--json", "latest"], ("latest", Path("p.db"), True, None)),
        (["report", "--json", "--db=p.db", "e1"], ("e1", Path("p.db"), True, None)),
        (["report", "e1"], ("e1", None, False, None)),  # the terminal report
        (["report", "--db", "p.db", "e1"], ("e1", Path("p.db"), False, None)),
        (["report"], None),
        (["report", "--json"], None),
        (["report", "e1", "--json", "--strict"], None),
        (["report", "e1", "--json", "--json"], None),
        (["report", "e1", "e2", "--json"], None),
        (["report", "--json", "-h"], None),
        (["report", "--json", "--", "e1"], None),
        (["report", "e1", "--json", "--db"], None),
        (["report", "e1", "--json", "--db", ""], None),
        (["report", "e1", "--json", "--db", "-p.db"], None),
        (["report", "e1", "--json", "--db=a", "--db=b"], None),
        (["report", "e1", "--json", "--db", "a", "--db", "b"], None),
        (["report", "", "--json"], None),
        (["show", "e1", "--json"], None),
        (["--json", "report", "e1"], None),
        (["report", "e1", "--html", "r.html"], ("e1", None, False, Path("r.html"))),
        (["report", "--html=r.html", "e1"], ("e1", None, False, Path("r.html"))),
        (
            ["report", "--html", "r.html", "--db", "p.db", "e1", "--json"],
            ("e1", Path("p.db"), True, Path("r.html")),
        ),
        (["report", "e1", "--html"], None),
        (["report", "e1", "--html", ""], None),
        (["report", "e1", "--html="], None),
        (["report", "e1", "--html", "-r.html"], None),
        (["report", "e1", "--html", "--json"], None),
        (["report", "e1", "--html", "a.html", "--html", "b.html"], None),
        (["report", "e1", "--html", "r.html", "-v"], None),
        (["report", "e1", "--html", "r.html", "--lang", "en"], None),
    ],
)
def test_quick_report_takes_exactly_the_plain_lines(
    argv: list[str], quick: tuple[str, Path | None, bool, Path | None] | None
) -> None:
    assert cli.quick_report(argv) == quick


def test_shell_completion_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cli.COMPLETE_ENV, "bash_complete")
    assert cli.quick_report(["report", "e1", "--json"]) is None


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[cli.QuickReport | None]:
    """What `cli.quick_report` returns, each call's appended to the list returned."""
    taken: list[cli.QuickReport | None] = []
    real = cli.quick_report

    def spy(argv: list[str]) -> cli.QuickReport | None:
        taken.append(real(argv))
        return taken[-1]

    monkeypatch.setattr(cli, "quick_report", spy)
    return taken


@pytest.mark.parametrize(
    "args",
    [
        ["report", "e1", "--json"],
        ["report", "--json", "latest"],
        ["report", "nope", "--json"],  # no such experiment: one line, exit 2
        ["report", "e1"],
        ["report", "latest"],
        ["report", "nope"],
    ],
)
def test_a_quick_report_prints_and_exits_as_through_typer(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    stored_runs(tmp_path, 1)
    db = ["--db", str(tmp_path / "p.db")]
    taken = _spied(monkeypatch)
    quick = run_cli(capsys, *args, *db)
    assert taken[-1] is not None
    monkeypatch.setattr(cli, "quick_report", lambda argv: None)
    typed = run_cli(capsys, *args, *db)
    assert (quick.code, quick.out, quick.err) == (typed.code, typed.out, typed.err)
    assert quick.code == (2 if "nope" in args else 0) and (quick.out or quick.err)


@pytest.mark.parametrize("more", [[], ["--json"]], ids=["page", "page and json"])
def test_a_quick_page_is_the_page_typer_writes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    more: list[str],
) -> None:
    """`report EXPERIMENT --html FILE` without typer (its import was 30-40 ms of the CPU
    of a page of 10,000 x 10): the same page, output and exit as through typer."""
    stored_runs(tmp_path, 1)
    db = ["--db", str(tmp_path / "p.db")]
    taken = _spied(monkeypatch)
    quick_page, typed_page = tmp_path / "quick.html", tmp_path / "typed.html"
    quick = run_cli(capsys, "report", "e1", "--html", str(quick_page), *more, *db)
    assert taken[-1] is not None and taken[-1].html == quick_page
    monkeypatch.setattr(cli, "quick_report", lambda argv: None)
    typed = run_cli(capsys, "report", "e1", "--html", str(typed_page), *more, *db)
    assert quick.code == typed.code == 0
    assert quick.out == typed.out
    assert quick.err.replace(str(quick_page), "PAGE") == typed.err.replace(str(typed_page), "PAGE")
    assert "PAGE" in quick.err.replace(str(quick_page), "PAGE")
    assert quick_page.read_bytes() == typed_page.read_bytes()


@pytest.mark.parametrize(
    ("words", "imported"),
    [(["--json"], "[]"), ([], "['rich']"), (["--html", "PAGE"], "['rich']")],
    ids=["json", "terminal", "page"],
)
def test_a_quick_report_imports_no_typer(tmp_path: Path, words: list[str], imported: str) -> None:
    """typer and the help pages are 20-30 ms of the command's start (fails before
    quick_report: typer was imported for every command line); --json imports no rich
    either, the terminal report its console."""
    stored_runs(tmp_path, 1)
    words = [str(tmp_path / "r.html") if w == "PAGE" else w for w in words]
    code = (
        "import sys\n"
        "from passhat.cli import main\n"
        "try:\n"
        f"    main(['report', 'e1', *{words!r}, '--db', {str(tmp_path / 'p.db')!r}])\n"
        "except SystemExit as exit_:\n"
        "    code = exit_.code\n"
        "print(code, sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules),"
        " file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    page = "--html" in words
    assert done.stdout.startswith("" if page else '{"experiment":' if words else "experiment ")
    assert not page or (tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!doctype")
    assert done.stderr.strip().splitlines()[-1] == f"0 {imported}"


@pytest.mark.parametrize("typed", [False, True], ids=["quick", "typer"])
def test_a_report_of_a_missing_store_makes_none(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    typed: bool,
) -> None:
    """A reading command opens the store as `open_store` does, never creating it (seen:
    report_of's first draft made an empty file and said 'not a passhat database')."""
    if typed:
        monkeypatch.setattr(cli, "quick_report", lambda argv: None)
    db = tmp_path / "none.db"
    got = run_cli(capsys, "report", "latest", "--json", "--db", str(db))
    assert got.code == 2 and "no passhat store here" in got.err and not db.exists()


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
def test_json_at_a_stdout_of_another_encoding_is_the_same_json(
    monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """Every command's --json at a stdout that is not UTF-8 (PYTHONIOENCODING=ascii, a
    C locale): each character the encoding cannot hold is a JSON escape, so the text
    reads back as the same value; it was a UnicodeEncodeError traceback (seen on main
    with `report --json` of a case named 'čaj')."""
    import io
    import json

    from pydantic_core import to_json

    from passhat.cli._out import write_json_pieces

    value = {"case": 'čaj é\u2028 \U0001f600 \\ "q"', "n": [1, 2.5, None]}
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding=encoding, write_through=True)
    monkeypatch.setattr(sys, "stdout", out)
    write_json_pieces([to_json(value)[:9], to_json(value)[9:]])  # split inside a string
    text = raw.getvalue().decode(encoding)
    assert json.loads(text) == value and text.endswith("\n")
    assert ("é" in text) == (encoding != "ascii")  # held by latin-1 and cp1252: as is
