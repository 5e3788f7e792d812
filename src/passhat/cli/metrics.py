"""`passhat metrics`: the three numbers and the accounting for your own verdicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from passhat.cli._app import app, console
from passhat.errors import InputError
from passhat.report.summary import summary_dict
from passhat.report.terminal import print_metrics
from passhat.verdicts import read_verdicts


@app.command()
def metrics(
    file: Annotated[
        Path, typer.Argument(help="JSONL verdict file: one {case, run, status} per line.")
    ],
    k: Annotated[
        int | None,
        typer.Option(
            "--k", "-k", help="Requested runs per case. Default: the largest run index seen."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any requested run was not counted.")
    ] = False,
) -> None:
    """Pass rate, pass@k and pass^k for verdicts from any harness, with run accounting."""
    if k is not None and k < 1:
        raise InputError(f"--k is {k}; ask for at least 1 run per case")
    ledger = read_verdicts(file)
    k_inferred = k is None
    accounting = ledger.close(ledger.max_run if k is None else k)
    if as_json:
        sys.stdout.write(
            json.dumps(summary_dict(accounting, k_inferred=k_inferred), indent=2) + "\n"
        )
    else:
        print_metrics(console, accounting, k_inferred=k_inferred, title=str(file))
    if strict and not accounting.complete:
        raise typer.Exit(1)
