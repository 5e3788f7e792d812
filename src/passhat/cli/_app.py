"""The typer application and the one place CLI errors are turned into exits."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

import typer

from passhat.cli._help import HELP_OPTIONS, Group, Typer, examples, rank_commands
from passhat.cli._out import console_of
from passhat.cli._out import write_json as write_json
from passhat.cli._out import write_json_pieces as write_json_pieces
from passhat.errors import PasshatError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from typer._click import Context

    from passhat.report.console import SafeConsole

COMMANDS: dict[str, tuple[str, str]] = {
    "check": (
        "check",
        "Validate a suite; print its cases, labels, tools, goal items, fixtures and hashes.",
    ),
    "run": ("run", "Create an experiment and run every case k times, each from a fresh start."),
    "resume": (
        "run",
        "Run exactly the missing runs of an experiment (and new indices with a larger k).",
    ),
    "report": (
        "read",
        "The three numbers with intervals, the accounting, item stability, tool use and tokens "
        "(and cost, given prices).",
    ),
    "show": (
        "read",
        "One run whole: transcript, tool calls, output, final state, score, and a crash's traceback.",
    ),
    "diff": (
        "diff",
        "Two runs side by side: items found in one and not the other, outputs and final "
        "states diffed, tool calls aligned, and where they part (turn, else tool call).",
    ),
    "why": (
        "why",
        "What goes with a miss: run features that go with missing each goal item (or "
        "failing), within case across the experiment, adjusted, each with a pair to diff.",
    ),
    "list": (
        "read",
        "The experiments in the store, with each one's counted, errored and planned runs.",
    ),
    "compare": (
        "compare",
        "Compare B with A case by case: differences with intervals, p-values, the minimum "
        "detectable difference, and a verdict.",
    ),
    "cassette": (
        "cassette",
        "Turn a finished experiment into a replay cassette: regrade it later without a call.",
    ),
    "metrics": (
        "metrics",
        "Pass rate, pass@k and pass^k for verdicts from any harness, with run accounting, "
        "intervals and a forecast of the next runs.",
    ),
    "audit": (
        "audit",
        "Audit a result folder no harness owns: declared, claimed, present and graded runs per "
        "configuration, the missing ones by index, and figures labelled by what was counted.",
    ),
    "export": (
        "export",
        "Write one row per run (case, index, status, error, verdict details, tokens, duration, "
        "retries, live/replayed, fingerprint), or per case with --per-case, for DuckDB, polars "
        "or a spreadsheet.",
    ),
    "regrade": (
        "regrade",
        "Score a stored experiment's final states again under the suite's current goals and "
        "scorers, as a new experiment linked to it: no agent runs, no model is called.",
    ),
    "view": (
        "view",
        "Serve the store as a live, read-only web app: experiments, progress, runs, "
        "comparisons and trends.",
    ),
    "import": (
        "sources",
        "Import another harness's results (Inspect logs, τ²-bench results, Harbor jobs) as "
        "experiments: every sample × epoch or trial becomes a run, with passhat's accounting.",
    ),
}
"""Every command: the module of passhat.cli that defines it, and the first sentence of
its help. `passhat NAME` imports only NAME's module and `passhat --help` lists the
commands from here, so start-up pays for one command's imports (the store, the
statistics, asyncio...), not every command's. tests/test_cli_help.py checks this
table against the commands themselves: a new or reworded command is added here too."""


def load_commands(name: str | None) -> None:
    """Import the command modules a command line naming `name` needs
    (`passhat.cli.command_name`): that command's, every one for a name that is no
    command (so the error can suggest one), none for the root's help (None)."""
    import importlib

    if name is None:
        return
    modules = [COMMANDS[name][0]] if name in COMMANDS else sorted({m for m, _ in COMMANDS.values()})
    for module in modules:
        importlib.import_module(f"passhat.cli.{module}")


_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
"""click's UsageError, of the click typer uses (its own copy from typer 0.26 on, click
itself before): every way a command line is refused (an unknown option or command, a
missing argument, a value that does not convert, an extra argument) raises one."""


def usage_line(error: Exception) -> str:
    """A refused command line in one line, naming the command, what is wrong and where
    its help is: `passhat run: no such option: --bogus (see passhat run --help)`."""
    ctx = getattr(error, "ctx", None)
    where = ctx.command_path if ctx is not None else "passhat"
    said = " ".join(getattr(error, "format_message", error.__str__)().split()).rstrip(".")
    return f"{where}: {said[:1].lower()}{said[1:]} (see {where} --help)"


@contextlib.contextmanager
def _one_line_usage() -> Iterator[None]:
    """A usage error as one line on stderr and exit 2: click printed four (the usage, a
    hint, a blank line, the error). A bare `passhat`'s help (NoArgsIsHelpError, click
    8.2 on) is no error: click shows it."""
    try:
        yield
    except _USAGE_ERROR as error:
        if type(error).__name__ == "NoArgsIsHelpError":
            raise
        console_of("err_console").print(
            usage_line(error), style="bold red", markup=False, soft_wrap=True
        )
        sys.exit(2)


class _Root(Group):
    """The `passhat` group: lists the commands not imported yet from COMMANDS; any
    command line it or a command refuses is one line (`_one_line_usage`)."""

    def make_context(self, *args: Any, **kwargs: Any) -> Context:
        with _one_line_usage():  # the root's own options
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Context) -> Any:
        with _one_line_usage():  # the command's name, then its options and arguments
            return super().invoke(ctx)

    def list_commands(self, ctx: Context) -> list[str]:
        return rank_commands([*self.commands, *(n for n in COMMANDS if n not in self.commands)])

    def summary(self, ctx: Context, name: str) -> str | None:
        if name not in self.commands and name in COMMANDS:
            return COMMANDS[name][1]
        return super().summary(ctx, name)


app = Typer(
    name="passhat",
    cls=_Root,
    help=(
        "Run agent-evaluation cases k times and report pass rate (pass@1), pass@k "
        "and pass^k, with the requested, completed and counted runs beside each number. "
        "'passhat COMMAND -h' shows a command's options and examples."
    ),
    epilog=examples(
        "passhat run examples/clarify --case ac-conflict-001",
        "passhat report latest --html report.html",
        "passhat compare baseline candidate",
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # wrapped to the terminal, up to 120 columns (click's own cap is 80)
    context_settings={"help_option_names": HELP_OPTIONS, "max_content_width": 120},
)

if TYPE_CHECKING:
    # every line printed escapes control characters: data is shown, never obeyed
    console: SafeConsole
    err_console: SafeConsole


def __getattr__(name: str) -> Any:
    """`console` and `err_console`, made when a command module first imports them
    (rich's console is a tenth of the start-up `passhat --help` needs none of)."""
    if name in ("console", "err_console"):
        return console_of(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fail(error: PasshatError) -> None:
    """Print a PasshatError as one red line per problem and exit non-zero."""
    lines = getattr(error, "problems", None) or [str(error)]  # a suite's, a cassette's
    for line in lines:
        console_of("err_console").print(
            f"error: {line}", style="bold red", markup=False, soft_wrap=True
        )
    sys.exit(error.exit_code)


def _version(value: bool) -> None:
    if value:
        from passhat import __version__

        console_of("console").print(f"passhat {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run agent-evaluation cases k times; report pass@1, pass@k and pass^k honestly."""
