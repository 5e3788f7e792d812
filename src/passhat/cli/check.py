"""`passhat check`: validate a suite and show what an experiment on it would run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from passhat.cli._app import app, console
from passhat.cli._help import examples

CASES_LISTED = 30
"""Cases listed unless --all is given, as `report` lists 30: a suite of 10,000 cases
printed 46,000 lines (2.8 MB) in 16 s."""


@app.command(
    epilog=examples(
        "passhat check examples/clarify",
        "passhat check my-suite --model replay:recorded.jsonl",
    )
)
def check(
    suite: Annotated[
        Path, typer.Argument(metavar="SUITE", help="Suite folder (holding suite.yaml and cases/).")
    ],
    show_all: Annotated[
        bool, typer.Option("--all", help=f"List every case (default: at most {CASES_LISTED}).")
    ] = False,
    isolation: Annotated[
        str | None,
        typer.Option(
            "--isolation",
            metavar="LEVEL",
            help="Say what a command agent's run would see and reach at this level "
            "(default: namespace, or $PASSHAT_ISOLATION).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="MODEL",
            help="The model a run would use, e.g. replay:FILE: its cassette is checked in "
            "place of the suite's model's.",
        ),
    ] = None,
) -> None:
    """Validate a suite; print its cases, labels, tools, goal items, fixtures and hashes.

    Exits 2 listing every problem (file, field and fix) when the suite is invalid, when
    its agent cannot be loaded, or when a replay cassette it names (its model's, a
    judge's) does not fit the cassette format (docs/cassettes.md).
    """
    from passhat.errors import SuiteError
    from passhat.preflight import preflight, sealing
    from passhat.report.suite import print_cassettes, print_suite
    from passhat.suite import load_suite

    loaded = load_suite(suite)
    found = preflight(loaded, model)
    if found.problems:
        raise SuiteError(found.problems[0], list(found.problems))
    print_suite(console, loaded, limit=None if show_all else CASES_LISTED)
    print_cassettes(console, loaded, found.cassettes)
    for line in sealing(loaded, isolation):
        console.print(Text(line), soft_wrap=True)
