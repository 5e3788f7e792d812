"""The `passhat` command. It parses arguments, calls the library and prints."""

from __future__ import annotations

# Importing a command module registers its commands on `app`.
from passhat.cli import audit as _audit  # noqa: F401
from passhat.cli import check as _check  # noqa: F401
from passhat.cli import compare as _compare  # noqa: F401
from passhat.cli import export as _export  # noqa: F401
from passhat.cli import metrics as _metrics  # noqa: F401
from passhat.cli import regrade as _regrade  # noqa: F401
from passhat.cli import run as _run  # noqa: F401
from passhat.cli import sources as _sources  # noqa: F401
from passhat.cli._app import app, fail
from passhat.errors import PasshatError

__all__ = ["app", "main"]


def main(args: list[str] | None = None) -> None:
    """Entry point of the console script; `args` defaults to the command line."""
    try:
        app(args=args, prog_name="passhat")
    except PasshatError as error:
        fail(error)
