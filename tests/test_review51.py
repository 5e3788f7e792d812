"""review51: defects found reviewing round 12's work (aa47a1e..1511f31) from outside.

Each test names what it guards; each failed before its fix (or is xfail(strict=True),
the reason saying what is left)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from passhat.agents.installed import installations, installed_secrets
from passhat.agents.lookout import secret_files
from passhat.agents.sandbox import covered, real


@pytest.mark.parametrize("mark", ["\u2028", "\x0c", "\x1c", "\x85"], ids=repr)
def test_a_record_line_split_at_a_unicode_line_mark_uncovers_no_env(
    tmp_path: Path, mark: str
) -> None:
    """A package's RECORD in a `pip install --target` folder lists a file named
    `evil/a<U+2028>.env` (pip writes such a name as it is: csv quotes only commas,
    quotes and newlines). str.splitlines cut that line at U+2028 (and at \\x0c, \\x1c,
    \\x85...), read `.env` as a listed file, and uncovered the user's own `.env`
    beside the packages."""
    target = tmp_path / "pylibs"
    (target / "evil-1.0.dist-info").mkdir(parents=True)
    (target / "evil-1.0.dist-info" / "RECORD").write_text(
        f"evil/__init__.py,sha256=x,0\nevil/a{mark}.env,sha256=x,1\nevil-1.0.dist-info/RECORD,,\n",
        encoding="utf-8",
    )
    (target / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    assert installed_secrets(real(target)) == []
    runtimes = installations([sys.executable, "agent.py"], {"PYTHONPATH": str(target)}, [])
    hidden = covered([real(target)], [], None, runtimes, look=secret_files)
    assert real(target / ".env") in hidden


def test_a_legacy_record_is_read_by_lines_not_as_csv(tmp_path: Path) -> None:
    """installed-files.txt is one path a line, not CSV: a line `"../.env"` (a folder named
    `"..` in the .egg-info) was read by csv as `../.env`, the user's `.env`."""
    target = tmp_path / "pylibs"
    (target / "pkg-1.0.egg-info").mkdir(parents=True)
    (target / "pkg-1.0.egg-info" / "installed-files.txt").write_text('"../.env"\n../pkg/key.pem\n')
    (target / "pkg").mkdir()
    (target / "pkg" / "key.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    (target / ".env").write_text("KEY=1\n")
    assert installed_secrets(real(target)) == [real(target / "pkg" / "key.pem")]


@pytest.mark.parametrize("command", ["report", "compare"])
def test_an_experiment_named_in_bytes_that_are_no_utf8_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`passhat report $'e1\\xff'` (a shell's bytes, surrogate-escaped by Python) was a
    UnicodeEncodeError traceback from SQLite's binding, through typer and quick_report
    alike: no experiment holds such a name, and it is said in one line."""
    from cli_helpers import run_cli
    from test_report_json import stored_runs

    stored_runs(tmp_path, 1)
    refs = ["e1\udcff"] if command == "report" else ["e1", "e1\udcff"]
    got = run_cli(capsys, command, *refs, "--db", str(tmp_path / "p.db"))
    assert got.code == 2 and got.out == ""
    assert got.err.startswith("error: ") and "no experiment 'e1\\udcff'" in got.err
    assert len(got.err.splitlines()) == 1


def _passhat(
    shell_tail: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """`python -m passhat ARGS` in a shell, its streams redirected by `shell_tail`."""
    import os
    import shlex
    import subprocess

    line = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "passhat", *args))
    done = subprocess.run(
        ["bash", "-c", line + shell_tail],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("json", [True, False], ids=["json", "terminal"])
@pytest.mark.parametrize("closed", [" >&-", " 2>&-"], ids=["stdout", "stderr"])
def test_a_report_with_a_stream_closed_exits_as_printing_nowhere(
    tmp_path: Path, json: bool, closed: str
) -> None:
    """`passhat report e1 >&-`: Python starts with sys.stdout None; report_of's isatty and
    _hard_exit's flush raised AttributeError (a traceback, exit 1, through typer and
    quick_report alike), and with stderr closed a report written whole exited 1."""
    from test_report_json import stored_runs

    stored_runs(tmp_path, 1)
    words = ["report", "e1", *(["--json"] if json else []), "--db", str(tmp_path / "p.db")]
    _, out, err = _passhat(closed + "; echo rc=$? >&2", *words)
    assert err.decode().splitlines()[-1] == "rc=0", err.decode()[-2000:]
    assert b"Traceback" not in err
    if "2>" in closed:
        assert out.startswith(b'{"experiment":' if json else b"experiment ")


@pytest.mark.parametrize("command", [["report", "e1"], ["list"]], ids=" ".join)
def test_a_terminal_report_at_an_ascii_stdout_escapes_what_it_cannot_write(
    tmp_path: Path, command: list[str]
) -> None:
    """At a stdout in ASCII (PYTHONIOENCODING=ascii, or a Latin-1 locale for `·`) every
    terminal report was a UnicodeEncodeError traceback ("You may need to add
    PYTHONIOENCODING=utf-8"); --json was fixed last round, the terminal's was not."""
    from test_report_json import stored_runs

    stored_runs(tmp_path, 1)
    code, out, err = _passhat(
        "", *command, "--db", str(tmp_path / "p.db"), env={"PYTHONIOENCODING": "ascii"}
    )
    assert (code, err) == (0, b""), err.decode()[-2000:]
    assert out.isascii() and (b"\\u" in out or b"\\x" in out), out[:300]


def test_one_experiment_ending_leaves_another_s_connection_cap_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two experiments at once in one process (`asyncio.gather` of two
    `passhat.evaluate_async`, a notebook's): the one of --concurrency 500 ends, and the
    one of --concurrency 20 still running has its runs' connections capped at
    CONNECTIONS (128) again, not at its share (59 under a limit of 4,096): the attack50
    case (a run holding all its connections keeps another from starting) came back.
    While both run, the cap counts the runs of both."""
    import asyncio
    import resource

    from passhat.serve import endpoints, hub_scope

    monkeypatch.setattr(resource, "getrlimit", lambda which: (4096, 4096))
    seen: list[int] = []

    async def both() -> None:
        async with hub_scope(20):
            async with hub_scope(500):
                seen.append(endpoints.connections())
            seen.append(endpoints.connections())  # the first experiment still runs

    asyncio.run(both())
    assert seen[0] == endpoints.connections_for(4096, 520) == 8  # both experiments' runs
    assert seen[1] == endpoints.connections_for(4096, 20) == 59


def test_damaged_never_waits_on_a_fifo(tmp_path: Path) -> None:
    """connection.damaged opened its path with SQLite: a FIFO there held the command for
    ever (`passhat show -- --db FIFO 1` on a damaged store: _store_damage took the
    argument after `--` for the store's path). Now no regular file: no answer."""
    import os
    import threading

    from passhat.agents.sandbox import _free_reader
    from passhat.store.connection import damaged

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    said: list[bool] = []
    look = threading.Thread(target=lambda: said.append(damaged(fifo)), daemon=True)
    look.start()
    look.join(5)
    waited = look.is_alive()
    if waited:
        _free_reader(str(fifo))  # let it go
        look.join(5)
    assert not waited and said == [False]


@pytest.mark.parametrize("command", [["report", "--", "--db"], ["show", "--", "--db", "x", "1"]])
def test_a_damaged_store_is_named_whatever_follows_a_double_dash(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    """After `--` every word is an argument (an experiment named `--db`): _store_damage
    read `--db` there as the option, looked at '' (or the next word) for damage, found
    none, and the damaged store's error was a traceback, not its one line."""
    from cli_helpers import run_cli
    from test_cli_damage import _damage_a_table
    from test_report_json import stored_runs

    stored_runs(tmp_path, 1)
    damaged = _damage_a_table(tmp_path / "p.db", "experiments")
    monkeypatch.setenv("PASSHAT_DB", str(damaged))
    got = run_cli(capsys, *command)
    assert got.code == 2 and got.err.startswith(f"error: {damaged}: the store file is damaged")


@pytest.mark.parametrize("installation", ["node_modules", "site-packages"])
def test_a_store_inside_a_folder_named_like_an_installation_is_covered(
    tmp_path: Path, installation: str
) -> None:
    """An earlier experiment's store copied to `work/node_modules/x/results.db` (or a
    report, an export) in the agent's folder is not looked at: a run reads the answer
    key. The exemption was made for certifi's cacert.pem in a real installation
    (PYTHONPATH's, installed.py), but it applied to any folder so named, anywhere. Now
    only secret-looking names are exempt there (fix55)."""
    from passhat.store import Store

    where = tmp_path / "work" / installation / "x"
    where.mkdir(parents=True)
    with Store(where / "results.db"):
        pass
    assert str(where / "results.db") in secret_files(str(tmp_path / "work"))


def test_a_quick_report_to_a_closed_pipe_needs_no_private_module_of_typer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`passhat report e1 --json | head -c 1`: the quick path imported
    typer._click.utils for click's PacifyFlushWrapper, a module typer has only from 0.26
    on (it vendored click then); pyproject takes typer>=0.12, where a closed pipe was a
    ModuleNotFoundError traceback. Now exit 1, quietly, as typer's own handler does."""
    import errno

    from cli_helpers import run_cli
    from test_report_json import stored_runs

    stored_runs(tmp_path, 1)

    def closed_pipe(*args: object, **options: object) -> bool:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr("passhat.cli.report.report_of", closed_pipe)
    monkeypatch.setitem(sys.modules, "typer._click.utils", None)  # typer 0.12 to 0.25
    got = run_cli(capsys, "report", "e1", "--json", "--db", str(tmp_path / "p.db"))
    assert (got.code, got.out, got.err) == (1, "", "")
