"""An outside review of round 10's merged code (review48): each test here failed on main
at 249beba before the fix beside it, or is a strict xfail naming what is still wrong."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from passhat.store import Store, StoreError


@pytest.mark.parametrize(
    "sql",
    [
        # TypeORM's and Laravel's own tables are named `migrations`
        "CREATE TABLE migrations (id INTEGER PRIMARY KEY, timestamp BIGINT, name VARCHAR)",
        # shaped like passhat's, but its rows are another tool's: not a first migration
        # cut short (that leaves passhat's table empty)
        "CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)",
    ],
)
def test_a_foreign_file_whose_one_table_is_named_migrations_stays_untouched(
    tmp_path: Path, sql: str
) -> None:
    """`_check_is_ours` took any file whose only table is named `migrations` as a store
    whose first migration was cut short: a writable open then set journal_mode=WAL (the
    file's header bytes 18-19 went from 1 to 2) before `_migrate` failed on the other
    tool's table, so the refused file was changed, which the check exists to prevent."""
    path = tmp_path / "app.db"
    con = sqlite3.connect(path)
    con.execute(sql)
    con.execute("INSERT INTO migrations VALUES (1, 2, '3')")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a passhat store"):
        Store(path, create=False)
    with pytest.raises(StoreError, match="not a passhat store"):
        Store(path)
    assert path.read_bytes() == before


def test_a_store_whose_first_migration_was_cut_short_still_opens(tmp_path: Path) -> None:
    """The case `_check_is_ours` lets through: passhat's own migrations table, empty (its
    CREATE runs outside the first migration's transaction)."""
    path = tmp_path / "p.db"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    con.commit()
    con.close()
    with Store(path, create=False) as store:
        assert store.migrations()
