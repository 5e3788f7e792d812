"""The --db option, the EXPERIMENT argument and opening the store: shared by every
command that reads or writes experiments (run, report, export, regrade, import...),
so a reading command imports none of the runner's modules to get them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from passhat.store import DB_ENV, Store, default_db_path

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        metavar="PATH",
        help=f"SQLite store. Default: ${DB_ENV} if set, else ./passhat.db.",
        show_default=False,
    ),
]
ExperimentArg = Annotated[
    str, typer.Argument(metavar="EXPERIMENT", help="Experiment id, unique name, or 'latest'.")
]


def open_store(db: Path | None, *, create: bool = False, read_only: bool = False) -> Store:
    """The store at --db, $PASSHAT_DB or ./passhat.db; only `run` creates one; reading
    commands open it read-only, so they work on a read-only file or mount."""
    return Store(db or default_db_path(), create=create, read_only=read_only)


__all__ = ["DbOption", "ExperimentArg", "open_store"]
