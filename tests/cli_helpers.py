"""Run the `passhat` command in-process, the way the console script does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from passhat.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLARIFY = ROOT / "examples" / "clarify"
"""The bundled clarify suite."""
SEED = "ac-conflict-001"
"""The seed's coupon card, the one case the bundled cassette answers."""


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    """Call passhat.cli.main with `args`; return its exit code and output."""
    capsys.readouterr()
    code = 0
    try:
        main(list(args))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)


def run_seed(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    """`passhat run` on the seed's coupon card of the bundled clarify suite."""
    return run_cli(capsys, "run", str(CLARIFY), "--case", SEED, *args)


def diff_json(capsys: pytest.CaptureFixture[str], db: str, *refs: str) -> dict[str, Any]:
    """`passhat diff REFS --json` in the store `db`, which must succeed: its JSON."""
    r = run_cli(capsys, "diff", *refs, "--json", "--db", db)
    assert r.code == 0, r.err
    data: dict[str, Any] = json.loads(r.out)
    return data


def columns_read(monkeypatch: pytest.MonkeyPatch) -> set[tuple[str, str]]:
    """(table, column) of every column the statements of any Store opened from now on
    read, as SQLite's authorizer sees them when each statement is prepared: a command's
    reads, whatever the number of rows."""
    import sqlite3

    from passhat.store import Store

    read: set[tuple[str, str]] = set()
    opened = Store._open

    def authorize(action: int, table: str | None, column: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ and table is not None and column is not None:
            read.add((table, column))
        return sqlite3.SQLITE_OK

    def spied(self: Store, target: str, *, uri: bool) -> sqlite3.Connection:
        db = opened(self, target, uri=uri)
        db.set_authorizer(authorize)
        return db

    monkeypatch.setattr(Store, "_open", spied)
    return read
