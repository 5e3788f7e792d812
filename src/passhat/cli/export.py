"""`passhat export EXPERIMENT`: runs (or per-case accounting) as JSON Lines, CSV or Parquet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from passhat.cli._app import app, err_console
from passhat.cli._help import examples
from passhat.cli._store import DbOption, ExperimentArg, open_store


@app.command(
    epilog=examples(
        "passhat export latest -o runs.jsonl",
        "passhat export mine-1 -o cases.csv --per-case",
    )
)
def export(
    experiment_ref: ExperimentArg,
    output: Annotated[
        Path,
        typer.Option(
            "-o", "--output", metavar="FILE", help="File to write (.jsonl, .csv or .parquet)."
        ),
    ],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="jsonl, csv or parquet (parquet needs passhat[parquet]). "
            "Default: from FILE's extension.",
        ),
    ] = None,
    per_case: Annotated[
        bool,
        typer.Option(
            "--per-case",
            help="One row per case (requested, completed, counted, errored, missing, "
            "pass rate, pass@n, pass^n) instead of one row per run.",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Write one row per run (case, index, status, error, verdict details, tokens, duration,
    retries, live/replayed, fingerprint), or per case with --per-case, for DuckDB, polars or
    a spreadsheet."""
    from passhat.accounting import account
    from passhat.export import (
        CASE_COLUMNS,
        STORED,
        case_rows,
        format_for,
        write_rows,
        write_runs,
    )
    from passhat.plain import plural

    chosen = format_for(output, fmt)
    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        if per_case:  # each run's status is all a case's row needs
            statuses = store.statuses(experiment.id)
            accounting = account(
                statuses, experiment.k_requested, experiment.case_ids, experiment.case_k
            )
            rows = case_rows(experiment, accounting)
            written = write_rows(output, rows, CASE_COLUMNS, chosen)
        else:  # streamed: each row is read, made and written before the next
            runs = store.columns(experiment.id, STORED)
            written = write_runs(output, experiment, runs, chosen)
    what = plural(written, "case" if per_case else "run")
    err_console.print(
        f"{output}: {what} of experiment {experiment.name or experiment.id} ({chosen})",
        markup=False,
        soft_wrap=True,
    )
