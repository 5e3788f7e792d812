"""Every command explains itself."""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import shlex
import subprocess
import sys

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


def test_every_experiment_argument_reads_alike() -> None:
    """Was: `why -h` said "An experiment id, unique name, or latest." where every other
    command says "Experiment id, unique name, or 'latest'." (one declaration for all)."""
    helps = {
        (name, param.help)
        for name, command in GROUP.commands.items()  # type: ignore[attr-defined]
        for param in command.params
        if param.param_type_name == "argument" and param.name in ("experiment", "experiment_ref")
    }
    assert len(helps) >= 7
    assert {text for _, text in helps} == {"Experiment id, unique name, or 'latest'."}, helps


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


# ------------------------------------------------------------------ like git, pytest, uv (#17)


def _help(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    r = run_cli(capsys, *args)
    assert r.code == 0, r.err
    return r.out


@pytest.mark.parametrize(
    "name", [*COMMANDS, *(" ".join(s) for s in SUBCOMMANDS)], ids=lambda name: name
)
def test_help_reads_like_the_clis_users_know(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Was: `<bool>`, `{experiment_ref}`, `--case <list[str]>`, no -h, no examples."""
    out = _help(capsys, *name.split(), "-h")
    assert out == _help(capsys, *name.split(), "--help")
    usage = out.splitlines()[0]
    assert usage.startswith(f"Usage: passhat {name} [OPTIONS]")
    assert "{" not in usage and "<" not in usage
    assert re.search(r"<(bool|int|float|str|path|list\[\w+\])>", out) is None
    # every value an option takes is named in capitals: `--db PATH`, `-k, --k K`
    options = "\n".join(body for title, body in _sections(out) if title != "Arguments")
    for line in options.splitlines():
        match = re.match(r"  ((?:-\w, )?--[\w-]+)( \S+)?  ", line)
        if match and match.group(2):
            placeholder = re.sub(r"[a-z]+=", "", match.group(2).strip())  # in=PRICE: a key
            assert placeholder == placeholder.upper(), line
    # examples at the end, each one a command line that parses
    examples = out.split("\nExamples:\n")[1].splitlines()
    assert examples and all(line.startswith("  passhat ") for line in examples)
    for line in examples:
        _parses(shlex.split(line)[1:])


def _sections(out: str) -> list[tuple[str, str]]:
    """(title, body) of each section between the usage and the examples: Arguments,
    the option panels, Options."""
    chunks = out.split("\nExamples:\n")[0].split("\n\n")
    found = [re.match(r"(\S[^\n]*):\n(  .*)", chunk, re.S) for chunk in chunks]
    return [(m.group(1), m.group(2).rstrip("\n")) for m in found if m]


PANELS = ["What to run", "Model", "Limits and workers", "Adaptive k", "Store", "Output and CI"]


@pytest.mark.parametrize("name", ["run", "resume"])
def test_run_options_are_grouped_in_panels_each_option_in_exactly_one(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: `run -h` listed about 35 options in one block (#29)."""
    out = _help(capsys, name, "-h")
    sections = _sections(out)
    titles = [title for title, _ in sections]
    assert titles == ["Arguments", *PANELS, "Options"]
    rows = {
        title: re.findall(r"^  ((?:-\w, )?--[\w-]+)", body, re.M)
        for title, body in sections
        if title != "Arguments"
    }
    assert rows["Options"] == ["-h, --help"]
    assert all(len(rows[panel]) >= 2 for panel in PANELS)
    listed = [option.split(", ")[-1] for names in rows.values() for option in names]
    command = GROUP.commands[name]  # type: ignore[attr-defined]
    options = [
        max(param.opts, key=len) for param in command.params if param.param_type_name == "option"
    ]
    assert sorted(listed) == sorted([*options, "--help"])  # each in exactly one panel
    assert "--db" in rows["Store"] and "--junit-xml" in rows["Output and CI"]
    assert "--retries" in rows["Model"] and "--until-width" in rows["Adaptive k"]
    # one column for every panel: each option's help starts where the others' do
    starts = {
        match.start(2)
        for _, body in sections[1:]
        for line in body.splitlines()
        if (match := re.match(r"  (-\S.*?\S)  +(\S)", line))
    }
    assert len(starts) == 1, starts


def test_run_and_resume_take_their_shared_options_from_one_declaration() -> None:
    """cli/run.py's Shared declares the options both commands take once (they were two
    copies, issue 38): each is the same option in both, and in neither twice."""
    import dataclasses

    from passhat.cli.run import Shared

    def options(name: str) -> dict[str, tuple[object, ...]]:
        command = GROUP.commands[name]  # type: ignore[attr-defined]
        names = [param.name for param in command.params]
        assert len(names) == len(set(names))
        return {p.name: (tuple(p.opts), p.help, p.default) for p in command.params}

    run, resume = options("run"), options("resume")
    shared = [field.name for field in dataclasses.fields(Shared)]
    assert {"concurrency", "db", "until_width", "junit_xml"} <= set(shared)
    assert [run[name] for name in shared] == [resume[name] for name in shared]
    assert "shared" not in run and "shared" not in resume


def test_run_spreads_its_bundles_in_the_order_its_help_lists_them() -> None:
    """run's own options are declared as bundles (What, ModelSettings, RunLimits) beside
    Shared (issue 38); spread into its signature they keep the order -h had, and the
    bundles' own parameter names are no options."""
    import dataclasses

    from passhat.cli._run_options import ModelSettings, RunLimits, Shared, What

    def names(bundle: type) -> list[str]:
        return [field.name for field in dataclasses.fields(bundle)]

    command = GROUP.commands["run"]  # type: ignore[attr-defined]
    params = [p.name for p in command.params if p.name != "help"]
    assert params == [
        "suite_dir",
        *names(What),
        *names(ModelSettings),
        "retries",
        *names(Shared),
        *names(RunLimits),
        "name",
    ]
    assert names(What)[:3] == ["agent", "agent_cmd", "k"]
    assert "token_budget" in names(RunLimits) and "model_seed" in names(ModelSettings)


def test_import_commands_take_their_shared_options_from_one_declaration() -> None:
    """cli/sources.py's Importing declares the options of every `passhat import` once
    (they were three copies, issue 38): each command has them, the same, in the same
    order, last, and not the bundle's own parameter."""
    import dataclasses

    from passhat.cli.sources import Importing

    shared = [field.name for field in dataclasses.fields(Importing)]
    assert shared == ["name", "db", "as_json", "strict"]
    group = GROUP.commands["import"]  # type: ignore[attr-defined]
    seen = []
    for name in ("inspect", "tau2", "harbor"):
        params = group.commands[name].params
        assert [p.name for p in params][-len(shared) :] == shared
        assert "importing" not in [p.name for p in params]
        seen.append([(tuple(p.opts), p.help, p.default) for p in params[-len(shared) :]])
    assert seen[0] == seen[1] == seen[2]
    assert seen[0][2][0] == ("--json",)


def test_other_commands_keep_one_options_block(capsys: pytest.CaptureFixture[str]) -> None:
    """--db, --lang, --junit-xml are shared: `run` shows them under its panels,
    `report` (which has no panels) under Options, as before."""
    titles = [title for title, _ in _sections(_help(capsys, "report", "-h"))]
    assert titles == ["Arguments", "Options"]


def _parses(args: list[str]) -> None:
    """The example's command (and subcommand) and options exist, its values have their types."""
    ctx = GROUP.make_context("passhat", list(args), resilient_parsing=True)
    command = GROUP.commands[args[0]]  # type: ignore[attr-defined]
    if hasattr(command, "commands") and len(args) > 1 and args[1] in command.commands:
        ctx = command.make_context(args[0], [], parent=ctx, resilient_parsing=True)
        command, args = command.commands[args[1]], args[1:]
    command.make_context(args[0], args[1:], parent=ctx)


def test_top_level_help_wraps_to_the_terminal_and_keeps_first_sentences_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: hard line breaks in the top-level help, whatever the terminal's width."""
    intros = {}
    for width in (60, 110):
        monkeypatch.setenv("COLUMNS", str(width))
        out = _help(capsys, "-h")
        assert max(len(line) for line in out.splitlines()) <= width
        intros[width] = out.split("\n\n")[1]
    assert intros[60] != intros[110]
    assert intros[60].split() == intros[110].split()
    assert max(len(line) for line in intros[110].splitlines()) > 80
    commands = out.split("\nCommands:\n")[1].split("\n\n")[0]
    entries = re.split(r"\n  (?=\w)", "\n" + commands)[1:]
    for entry in entries:
        assert " ".join(entry.split()).endswith("."), f"cut short: {entry}"
        assert "..." not in entry
    assert "Examples:\n  passhat run examples/clarify --case ac-conflict-001" in out


def test_run_help_names_every_agent_form(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_help(capsys, "run", "-h").split())
    for form in ("clarifier", "file.py:name", "package.module:name", "--agent AGENT"):
        assert form in out
    assert "--model PROVIDER:NAME" in out and "--timeout SECONDS" in out


def test_commands_are_listed_in_the_order_a_new_user_needs_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _help(capsys, "-h").split("\nCommands:\n")[1].split("\n\n")[0]
    listed = re.findall(r"^  (\w+) ", out, re.M)
    first = ["check", "run", "resume", "report", "show", "list"]
    assert listed[: len(first)] == first
    assert set(listed) == set(COMMANDS)


# ------------------------------------------------------------ start-up (#15)


def test_the_command_table_agrees_with_the_commands() -> None:
    """`passhat NAME` imports only NAME's module and `passhat --help` lists the commands
    from passhat.cli._app.COMMANDS: it must name every visible command, the module
    that defines it and the first sentence of its help. Add or reword a command: copy
    its first sentence into COMMANDS."""
    from passhat.cli._app import COMMANDS
    from passhat.cli._help import first_sentence

    visible = {
        name: command
        for name, command in GROUP.commands.items()  # type: ignore[attr-defined]
        if not command.hidden
    }
    assert set(COMMANDS) == set(visible)
    for name, (_module, sentence) in COMMANDS.items():
        assert sentence == first_sentence(visible[name].help or ""), name
    defined = {
        c.name or c.callback.__name__: c.callback.__module__ for c in app.registered_commands
    }
    defined |= {
        g.name: g.typer_instance.registered_commands[0].callback.__module__
        for g in app.registered_groups
    }
    assert {name: f"passhat.cli.{module}" for name, (module, _) in COMMANDS.items()} == defined


def test_the_help_listed_from_the_table_is_the_help_of_the_commands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh `passhat --help` (no command module imported) prints what the help
    prints with every command loaded (as here, where `app` has them all)."""
    monkeypatch.setenv("COLUMNS", "100")
    fresh = subprocess.run(
        [sys.executable, "-m", "passhat", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    ).stdout
    assert fresh == _help(capsys, "--help")


@dataclasses.dataclass(frozen=True)
class _Need:
    name: str
    model: str = "m"


@dataclasses.dataclass(frozen=True)
class _Other:
    depth: int = 1


def test_a_bundle_field_without_a_default_is_a_required_parameter() -> None:
    """`with_bundles` gives a field with no default no default (not dataclasses.MISSING),
    and a bundle parameter may share its name with a field of another bundle."""
    from passhat.cli._bundle import with_bundles

    seen: list[object] = []

    def command(model: _Other, need: _Need) -> None:
        seen.extend([model, need])

    wrapped = with_bundles(command)
    params = inspect.signature(wrapped).parameters
    assert params["name"].default is inspect.Parameter.empty
    assert params["model"].default == "m"
    wrapped(name="x", model="y", depth=2)
    assert seen == [_Other(2), _Need("x", "y")]
