"""`case_items` is a rowid table (round 16, fix54), and a store with the old one migrates.

WITHOUT ROWID, a case's kept text (~1 KB at k = 10, ~3.6 KB at k = 100) sat in the
key's own b-tree: a row over ~1 KB spilled to overflow pages, and each key compared on
the way down was read whole. The trigger's look-up, once per run written, took 9.7 µs of
CPU in a table of 100,000 rows (k = 10), 1.0 as a rowid table (its key in an index of
its own); the rows took 344 MB, not 124 (benchmarks/bench_case_items.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from passhat.store import MIGRATIONS, Store
from test_case_items import fill, kept, reports, small_stretches  # noqa: F401  # the fixture
from test_report_json import stored_runs

OLD = """
CREATE TABLE case_items_old (
    experiment_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    items TEXT NOT NULL,
    PRIMARY KEY (experiment_id, case_id)
) WITHOUT ROWID;
INSERT INTO case_items_old SELECT experiment_id, case_id, items FROM case_items;
DROP TABLE case_items;
ALTER TABLE case_items_old RENAME TO case_items;
"""
"""The table as the migration `case_items: ...` made it (its rows kept)."""


def _table_sql(db: Path) -> str:
    with sqlite3.connect(db) as con:
        (sql,) = con.execute("SELECT sql FROM sqlite_master WHERE name = 'case_items'").fetchone()
    return str(sql)


def test_a_new_store_keeps_case_items_in_a_rowid_table(tmp_path: Path) -> None:
    with Store(tmp_path / "p.db"):
        pass
    assert "WITHOUT ROWID" not in _table_sql(tmp_path / "p.db").upper()


def test_a_store_with_the_old_table_migrates_keeping_its_rows(tmp_path: Path) -> None:
    """Its kept text kept, its report the same, and a run written after the migration
    still deletes its case's text (the triggers made again, passhat's own: not refused
    as foreign)."""
    stored_runs(tmp_path, 2)
    db = tmp_path / "p.db"
    assert fill(db) > 0
    texts, want = kept(db), reports(db)
    last = len(MIGRATIONS)
    assert MIGRATIONS[-1][0] == "case_items as a rowid table, its rows kept"
    with sqlite3.connect(db) as con:
        # the triggers name the table: a rename with them in place is refused
        con.execute("PRAGMA legacy_alter_table = ON")
        con.executescript(OLD)
        con.execute("DELETE FROM migrations WHERE version = ?", (last,))
    assert "WITHOUT ROWID" in _table_sql(db).upper()
    with Store(db) as store:
        assert store.migrations()[-1] == MIGRATIONS[-1][0]
    assert "WITHOUT ROWID" not in _table_sql(db).upper()
    assert kept(db) == texts
    assert reports(db) == want
    case = next(iter(texts))
    with Store(db) as store:
        (run,) = [r for r in store.runs("e1", cases=[case]) if r.run_index == 1]
        store._db.execute(
            "DELETE FROM runs WHERE experiment_id = 'e1' AND case_id = ? AND run_index = 1",
            (case,),
        )
        store.record_run(run)
    assert case not in kept(db)
    assert fill(db) == 1
    assert kept(db) == texts
