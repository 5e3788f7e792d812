"""Options of every command that prints a report: --json, --strict, --lang, --all, --price
and --prices, the CI outputs --junit-xml and --summary, the gate --require, and the
statistics' --k, --forecast, --resamples, --seed and --confidence.

A module of their own so `passhat report` gets them without importing the
`metrics` command (and its verdict reader)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from passhat.errors import InputError
from passhat.report import ROWS_SHOWN
from passhat.report.i18n import check_lang, default_lang

if TYPE_CHECKING:
    from passhat.gate import Gate

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
"""--json of every command that prints a report (or a diff) for machines."""
StrictOption = Annotated[
    bool, typer.Option("--strict", help="Exit 1 when any requested run was not counted.")
]
"""--strict of every command that counts runs against a plan."""

LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="Report language: en or zh-TW. Default: from the locale."),
]
"""--lang of every command that prints a report (JSON stays English)."""

AllCasesOption = Annotated[
    bool, typer.Option("--all", help=f"List every case (default: at most {ROWS_SHOWN}).")
]
"""--all of the reports that list at most ROWS_SHOWN cases (`report`, `metrics`)."""


PriceOption = Annotated[
    str | None,
    typer.Option(
        "--price",
        metavar="in=PRICE,out=PRICE",
        help="Prices per million input and output tokens, e.g. in=0.15,out=0.60: "
        "the report adds cost to the token totals.",
    ),
]
"""--price of every command that reports tokens."""

PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help="YAML or JSON file of prices per model, e.g. "
        "'openai:gpt-4o-mini: {in: 0.15, out: 0.60}' (per million tokens).",
    ),
]


JunitOption = Annotated[
    Path | None,
    typer.Option(
        "--junit-xml",
        metavar="FILE",
        help="Also write JUnit XML to FILE for CI: a test case per case, its counts as "
        "properties; errored or missing runs are errors, never failures.",
        show_default=False,
    ),
]
SummaryOption = Annotated[
    Path | None,
    typer.Option(
        "--summary",
        metavar="FILE",
        help="Also append a Markdown summary to FILE, e.g. --summary $GITHUB_STEP_SUMMARY.",
        show_default=False,
    ),
]


RequireOption = Annotated[
    list[str] | None,
    typer.Option(
        "--require",
        metavar="FIGURE>=VALUE",
        help="Exit 1 unless the figure reaches VALUE: rate, pass@k or pass^k, or the lower "
        'end of its interval (pass^k.low); e.g. --require "pass^k>=0.8" --require '
        '"rate.low>=0.5". Repeat for more.',
        show_default=False,
    ),
]
"""--require of run, resume and report: one `passhat.gate.Requirement` each."""


# The statistics' options of `metrics` and `compare` (and report's --forecast): each
# named once here; every command says in its own help what the value does there.


def k_option(help: str) -> Any:
    """(`run` and `resume` name theirs -k first, in a help panel: _run_options.k_option;
    click's messages quote the names in the order given.)"""
    return typer.Option("--k", "-k", help=help)


def forecast_option(help: str) -> Any:
    return typer.Option("--forecast", "-m", metavar="M", help=help)


def check_forecast(forecast_m: int) -> None:
    """--forecast, checked before anything is read."""
    if forecast_m < 1:
        raise InputError(f"--forecast is {forecast_m}; forecast at least 1 run (default 10)")
    if forecast_m > 10:  # (the statistics, loaded later anyway, only for a longer one)
        from passhat.stats._base import MAX_HORIZON

        if forecast_m > MAX_HORIZON:
            raise InputError(f"--forecast is {forecast_m}; forecast at most {MAX_HORIZON:,} runs")


def resamples_option(help: str) -> Any:
    return typer.Option("--resamples", "-B", metavar="B", help=help)


def seed_option(help: str) -> Any:
    return typer.Option("--seed", metavar="N", help=help)


def confidence_option(help: str) -> Any:
    return typer.Option("--confidence", metavar="LEVEL", help=help)


def say_gate(gate: Gate) -> None:
    """The gate's verdict on stderr: one line when met, each shortfall with its cases
    when not (then exit 1)."""
    from rich.text import Text

    from passhat.cli._app import err_console

    if not gate.requirements:
        return
    err_console.print(Text(gate.text(), style="green" if gate.passed else "red"), soft_wrap=True)
    if not gate.passed:
        raise typer.Exit(1)


def write_ci(
    junit: Path | None, junit_text: Callable[[], str], summary: Path | None, md: Callable[[], str]
) -> None:
    """--junit-xml (written anew) and --summary (appended, as $GITHUB_STEP_SUMMARY expects)."""
    for path, text, mode, option in (
        (junit, junit_text, "w", "--junit-xml"),
        (summary, md, "a", "--summary"),
    ):
        if path is None:
            continue
        try:
            with open(path, mode, encoding="utf-8") as out:
                out.write(text())
        except OSError as error:
            raise InputError(f"{option} {path}: cannot write ({error.strerror})") from None


def report_lang(lang: str | None) -> str:
    """The language asked for with --lang (checked: exit 2 if unknown), else the locale's."""
    return check_lang(lang) if lang is not None else default_lang()


__all__ = [
    "JsonOption",
    "JunitOption",
    "LangOption",
    "PriceOption",
    "PricesOption",
    "RequireOption",
    "StrictOption",
    "SummaryOption",
    "check_forecast",
    "confidence_option",
    "forecast_option",
    "k_option",
    "report_lang",
    "resamples_option",
    "say_gate",
    "seed_option",
    "write_ci",
]
