"""Every command explains itself."""

from __future__ import annotations

import pytest
import typer.main

from cli_helpers import run_cli
from passhat.cli import app

GROUP = typer.main.get_command(app)
COMMANDS = sorted(GROUP.commands)  # type: ignore[attr-defined]


def test_the_commands_are_the_documented_ones() -> None:
    assert {"metrics", "check", "run", "resume", "report", "show", "list", "cassette"} <= set(
        COMMANDS
    )


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    command = GROUP.commands[name]  # type: ignore[attr-defined]
    assert command.help, f"{name} has no help text"
    for param in command.params:
        if param.param_type_name == "option" and param.name != "help":
            assert param.help, f"{name} {param.opts} has no help text"
    r = run_cli(capsys, name, "--help")
    assert r.code == 0 and "Usage" in r.out


SUBCOMMANDS = sorted(
    (name, sub)
    for name, command in GROUP.commands.items()  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {})
)


def test_results_from_anywhere_have_their_commands() -> None:
    assert {"audit", "export", "regrade", "import"} <= set(COMMANDS)
    assert {("import", "inspect"), ("import", "tau2")} <= set(SUBCOMMANDS)


@pytest.mark.parametrize(("group", "name"), SUBCOMMANDS, ids=[" ".join(s) for s in SUBCOMMANDS])
def test_every_subcommand_has_help(
    group: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    command = GROUP.commands[group].commands[name]  # type: ignore[attr-defined]
    assert command.help, f"{group} {name} has no help text"
    for param in command.params:
        if param.param_type_name == "option" and param.name != "help":
            assert param.help, f"{group} {name} {param.opts} has no help text"
        if param.param_type_name == "argument":
            assert getattr(param, "help", None), f"{group} {name} {param.name} has no help text"
    r = run_cli(capsys, group, name, "--help")
    assert r.code == 0 and "Usage" in r.out
