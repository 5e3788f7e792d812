"""The typer application and the one place CLI errors are turned into exits."""

from __future__ import annotations

import sys
from typing import Any

import typer

from passhat.cli._help import HELP_OPTIONS, Group, Typer, examples
from passhat.errors import PasshatError, SuiteError
from passhat.report.console import SafeConsole

app = Typer(
    name="passhat",
    cls=Group,
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

# every line printed escapes control characters: data is shown, never obeyed
console = SafeConsole(highlight=False)
err_console = SafeConsole(stderr=True, highlight=False)


def write_json(data: Any) -> None:
    """JSON on stdout: indented for a person at a terminal, compact for a pipe.

    pydantic-core's serializer (Rust) writes 100,000 cases several times faster
    than `json.dumps`, and writes NaN and infinities as null: always valid JSON."""
    from pydantic_core import to_json

    indent = 2 if sys.stdout.isatty() else None
    sys.stdout.write(to_json(data, indent=indent, inf_nan_mode="null").decode("utf-8") + "\n")


def fail(error: PasshatError) -> None:
    """Print a PasshatError as one red line per problem and exit non-zero."""
    lines = error.problems if isinstance(error, SuiteError) else [str(error)]
    for line in lines:
        err_console.print(f"error: {line}", style="bold red", markup=False, soft_wrap=True)
    sys.exit(error.exit_code)


def _version(value: bool) -> None:
    if value:
        from passhat import __version__

        console.print(f"passhat {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run agent-evaluation cases k times; report pass@1, pass@k and pass^k honestly."""
