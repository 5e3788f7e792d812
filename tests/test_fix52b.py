"""fix52b: small defects left at round 14, each shown by a test that failed before its fix."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _script(name: str, *args: str, cwd: Path) -> tuple[int, str, str]:
    """benchmarks/NAME.py run with `args` in `cwd`: (exit code, stdout, stderr). In a
    session of its own, killed whole at the end (a simulation may start workers)."""
    proc = subprocess.Popen(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        out, err = "", "still running after 60 s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return proc.returncode, out, err


@pytest.mark.parametrize(
    "name", ["bench_adaptive", "bench_anytime", "bench_compare_after_adaptive"]
)
def test_a_simulation_benchmark_help_prints_its_usage_and_runs_nothing(
    tmp_path: Path, name: str
) -> None:
    """R was read by hand from sys.argv: `--help` ended in an int() traceback; now argparse
    prints the usage (the docstring beside it), and an R that is no number exits 2."""
    code, out, err = _script(name, "--help", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"usage: {name}.py [-h] [R]"), out
    assert "R = " not in out and "|---|" not in out
    code, out, err = _script(name, "x", cwd=tmp_path)
    assert code == 2 and "invalid int value: 'x'" in err and "Traceback" not in err, err
    assert out == ""


@pytest.mark.parametrize("name", ["claims_corpora", "claims_candidates"])
def test_a_claims_script_help_prints_its_usage_and_audits_nothing(
    tmp_path: Path, name: str
) -> None:
    """`--help` became the cache's file name (every corpus audited into ./--help), and no
    argument was an IndexError traceback."""
    code, out, err = _script(name, "--help", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"usage: {name}.py [-h] CACHE.json [corpus.yaml ...]"), out
    assert list(tmp_path.iterdir()) == []
    code, out, err = _script(name, cwd=tmp_path)
    assert code == 2 and err.rstrip().endswith("required: CACHE.json"), err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------- a refused command line is one line


def _commands() -> list[tuple[str, Any]]:
    """Every command of `passhat` as (its path, e.g. `passhat import inspect`, its click
    command), groups included, found by walking the application: none listed by hand."""
    import typer.main

    from passhat.cli import app

    found: list[tuple[str, Any]] = []

    def walk(path: str, command: Any) -> None:
        found.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(f"{path} {name}", sub)

    walk("passhat", typer.main.get_command(app))
    return found


COMMANDS = _commands()
LEAVES = [(path, c) for path, c in COMMANDS if not hasattr(c, "commands")]


def _arguments(command: Any) -> list[Any]:
    from typer.core import TyperArgument

    return [p for p in command.params if isinstance(p, TyperArgument)]


def _given(command: Any) -> list[str]:
    """A command line `command` takes: each argument, and each option it requires, "1"
    (a number, a name and a path alike)."""
    required = [p.opts[0] for p in command.params if p.required and p not in _arguments(command)]
    return ["1"] * len(_arguments(command)) + [word for o in required for word in (o, "1")]


def _number_options(command: Any) -> list[str]:
    """The first name of each option of `command` that takes an int or a float."""
    names = []
    for param in command.params:
        described = getattr(param, "type_descriptor", None)  # typer 0.26 on
        kind = getattr(described, "annotation", None)
        if kind is None:  # click's own types (an older typer)
            kind = {"integer": int, "float": float}.get(getattr(param.type, "name", ""))
        if kind in (int, float) and param.opts[0].startswith("-"):
            names.append(param.opts[0])
    return names


def _refused(capsys: pytest.CaptureFixture[str], path: str, *args: str) -> str:
    """What `path args` said, checked to be one line naming the command and its help,
    exit 2, nothing on stdout: that line's middle (what was wrong)."""
    from cli_helpers import run_cli

    got = run_cli(capsys, *path.split()[1:], *args)
    assert got.code == 2 and got.out == "", (path, args, got)
    match = re.fullmatch(rf"{re.escape(path)}: (.+) \(see {re.escape(path)} --help\)\n", got.err)
    assert match is not None, (path, args, got.err)
    return match.group(1)


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS])
def test_an_unknown_option_is_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    """click printed four lines: `Usage: ...`, `Try 'passhat run -h' for help.`, a blank
    line and `Error: No such option: --bogus`."""
    assert _refused(capsys, path, "--no-such-option") == "no such option: --no-such-option"


@pytest.mark.parametrize("path", [p for p, c in COMMANDS if hasattr(c, "commands")])
def test_an_unknown_command_is_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _refused(capsys, path, "no-such-command") == "no such command 'no-such-command'"


@pytest.mark.parametrize("path", [p for p, c in LEAVES if any(a.required for a in _arguments(c))])
def test_a_missing_argument_is_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _refused(capsys, path).startswith("missing argument '")


@pytest.mark.parametrize("path", [p for p, c in LEAVES if all(a.nargs == 1 for a in _arguments(c))])
def test_an_extra_argument_is_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    given = _given(dict(LEAVES)[path])
    said = _refused(capsys, path, *given, "one-too-many")
    assert said.startswith("got unexpected extra argument") and said.endswith(" (one-too-many)"), (
        said
    )


@pytest.mark.parametrize(
    ("path", "option"), [(p, o) for p, c in LEAVES for o in _number_options(c)]
)
def test_a_value_click_refuses_is_one_line(
    path: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    given = _given(dict(LEAVES)[path])
    said = _refused(capsys, path, *given, option, "not-a-number")
    assert said.startswith("invalid value for ") and f"'{option}'" in said, said


def test_help_stays_whole(capsys: pytest.CaptureFixture[str]) -> None:
    """The one-line usage errors leave help whole: every command's `--help`, and a group
    named alone (`passhat`, `passhat import`: click's NoArgsIsHelpError, no error)."""
    from cli_helpers import run_cli

    for path, _ in COMMANDS:
        got = run_cli(capsys, *path.split()[1:], "--help")
        assert got.code == 0 and got.out.startswith(f"Usage: {path} ") and got.err == ""
        assert "\nOptions:\n" in got.out and len(got.out.splitlines()) > 5
    for bare in ([], ["import"]):
        got = run_cli(capsys, *bare)
        assert got.out.startswith(f"Usage: passhat {' '.join(bare)}".rstrip() + " ") or (
            got.err.startswith("Usage: passhat")
        ), got
        assert "Commands:" in got.out + got.err
