"""An SQLite error met during a command names the --db store only when it came from
reading that store and the store is what is wrong (cli._store_damage); an error from
another database, or from passhat's own SQL on a sound store, stays as it is."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from passhat.store import reads

QUEUE = '''
import sqlite3
from pathlib import Path


class Queue:
    """A user's executor that keeps its queue in a database of its own (here damaged)."""

    async def run(self, job, todo):
        queue = sqlite3.connect(Path(__file__).with_name("queue.db"))
        queue.execute("SELECT * FROM sqlite_master").fetchall()
        yield None
'''


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A sound store holding one replayed run of the seed's card."""
    db = tmp_path / "p.db"
    r = run_seed(capsys, "-k", "1", "--db", str(db), "-q")
    assert r.code == 0, r.err
    return db


def test_another_databases_error_is_not_named_as_the_store(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user's executor whose own queue database is not a database: the error was
    reported as "p.db: not a passhat database (file is not a database); give another
    --db path" (seen on main), blaming a sound store. It now stays the executor's error."""
    suite = Path(shutil.copytree(CLARIFY, tmp_path / "suite"))
    (suite / "queue.py").write_text(QUEUE, encoding="utf-8")
    (suite / "queue.db").write_bytes(b"not a database, " * 512)
    with pytest.raises(sqlite3.DatabaseError, match="file is not a database"):
        run_cli(
            capsys, "run", str(suite), "--case", SEED, "-k", "2", "--db", str(store),
            "--executor", "queue.py:Queue", "-q",
        )  # fmt: skip
    assert str(store) not in capsys.readouterr().err


BROKEN = "SELECT no_such_column FROM runs WHERE experiment_id = ?"
"""A statement SQLite refuses, in place of one of passhat.store.reads' own (a bug of
passhat's): report runs it in Store.abandoned_calls."""


def test_passhats_own_sql_on_a_sound_store_is_not_named_as_the_store(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement of passhat's own that SQLite refuses, on a store PRAGMA quick_check
    finds sound, was reported as "p.db: not a passhat database (no such column ...);
    give another --db path" (seen on main). It stays a traceback: the store is not what
    is wrong."""
    monkeypatch.setattr(reads, "_ABANDONED_RETRIES", BROKEN)
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        run_cli(capsys, "report", "latest", "--db", str(store))


def test_the_same_sql_on_a_damaged_store_names_it(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same error from a store whose pages are damaged (a table the
    report does not read, overwritten past the store's opening) names the store, in one
    line."""
    damaged = _damage_a_table(store, "leases")
    monkeypatch.setattr(reads, "_ABANDONED_RETRIES", BROKEN)
    r = run_cli(capsys, "report", "latest", "--db", str(damaged))
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert f"{damaged}: " in r.err and "no such column" in r.err


def _damage_a_table(store: Path, table: str) -> Path:
    """A copy of `store` whose `table` has its root page overwritten with noise (the
    schema on page 1 left whole, so the store still opens)."""
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        page = root.fetchone()[0]
    db.close()
    damaged = store.with_name("damaged.db")
    data = bytearray(store.read_bytes())
    start = (page - 1) * size
    data[start : start + size] = bytes([0x5A]) * size
    damaged.write_bytes(bytes(data))
    return damaged
