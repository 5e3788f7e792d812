"""`passhat check`: validate a suite and show what an experiment on it would run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from passhat.cli._app import app, console
from passhat.cli._help import examples


@app.command(epilog=examples("passhat check examples/clarify", "passhat check my-suite"))
def check(
    suite: Annotated[
        Path, typer.Argument(metavar="SUITE", help="Suite folder (holding suite.yaml and cases/).")
    ],
) -> None:
    """Validate a suite; print its cases, labels, tools, goal items, fixtures and hashes.

    Exits 2 listing every problem (file, field and fix) when the suite is invalid.
    """
    from passhat.report.suite import print_suite
    from passhat.suite import load_suite

    print_suite(console, load_suite(suite))
