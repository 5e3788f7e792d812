"""Options of every command that prints a report: --lang, --price and --prices.

A module of their own so `passhat report` gets them without importing the
`metrics` command (and its verdict reader)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from passhat.report.i18n import check_lang, default_lang

LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="Report language: en or zh-TW. Default: from the locale."),
]
"""--lang of every command that prints a report (JSON stays English)."""


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


def report_lang(lang: str | None) -> str:
    """The language asked for with --lang (checked: exit 2 if unknown), else the locale's."""
    return check_lang(lang) if lang is not None else default_lang()


__all__ = ["LangOption", "PriceOption", "PricesOption", "report_lang"]
