"""Benchmark: `case_items` as a rowid table (the schema) vs WITHOUT ROWID (before round 16).

Every run written fires a trigger on run_summaries that deletes its case's kept items
text (`DELETE FROM case_items WHERE experiment_id = ? AND case_id = ?`); a writer's end
keeps each case's text (`INSERT OR REPLACE`), and `report --json` reads an experiment's.
WITHOUT ROWID, a row (~1 KB at k = 10, ~3.6 KB at k = 100) sat in the key's b-tree,
spilling to overflow pages past ~1 KB, and every key compared on the way down was read
whole. The `_fixtures` store of 1,000 cases × `--k` is grown to `--rows` case_items rows
(its experiment's rows copied under other ids: a store of many experiments), copied, and
the copy's table rebuilt WITHOUT ROWID (its rows and triggers kept). Each round times, on
both in turn (the order alternating), in CPU: 100,000 look-ups of absent keys (a new
experiment's runs), the fill of 1,000 cases and the read of one experiment's (both rolled
back or read only); and prints the table's pages where SQLite has `dbstat`. The ratio is
the median of the rounds' pairs (rowid / WITHOUT ROWID) of the look-up, against 0.5.

    .venv/bin/python benchmarks/bench_case_items.py [--k 10] [--rows 100000] [--repeat 6]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from _fixtures import kept_store
from _result import result

OLD = """
CREATE TABLE case_items_old (experiment_id TEXT NOT NULL, case_id TEXT NOT NULL,
    items TEXT NOT NULL, PRIMARY KEY (experiment_id, case_id)) WITHOUT ROWID;
INSERT INTO case_items_old SELECT experiment_id, case_id, items FROM case_items;
DROP TABLE case_items;
ALTER TABLE case_items_old RENAME TO case_items;
"""
LOOK = "DELETE FROM case_items WHERE experiment_id = ? AND case_id = ?"
LOOKS = 100_000


def grown(db: Path, target: Path, rows: int, old: bool) -> sqlite3.Connection:
    """A copy of `db` whose case_items holds `rows` rows (WITHOUT ROWID when `old`)."""
    source, copy = sqlite3.connect(db), sqlite3.connect(target, isolation_level=None)
    source.backup(copy)
    source.close()
    copy.execute("BEGIN")
    (eid, have) = copy.execute("SELECT min(experiment_id), count(*) FROM case_items").fetchone()
    rng = random.Random(1)
    for _ in range(max(0, rows // have - 1)):
        copy.execute(
            "INSERT INTO case_items SELECT ?, case_id, items FROM case_items "
            "WHERE experiment_id = ?",
            (f"{rng.getrandbits(32):08x}", eid),
        )
    copy.execute("COMMIT")
    if old:
        copy.execute("PRAGMA legacy_alter_table = ON")  # the triggers name the table
        copy.executescript(OLD)
        copy.execute("PRAGMA legacy_alter_table = OFF")
    copy.execute("VACUUM")
    return copy


def timed(db: sqlite3.Connection, eid: str, keys: list[tuple[str, str]]) -> dict[str, float]:
    """CPU µs of one look-up, of one case's fill and of one case's read."""
    kept = db.execute("SELECT case_id, items FROM case_items WHERE experiment_id = ?", (eid,))
    rows = kept.fetchall()
    out = {}
    db.execute("BEGIN")
    cpu = time.process_time()
    db.executemany(LOOK, keys)
    out["look-up"] = (time.process_time() - cpu) / len(keys) * 1e6
    cpu = time.process_time()
    db.executemany("INSERT OR REPLACE INTO case_items VALUES ('new', ?, ?)", rows)
    out["fill"] = (time.process_time() - cpu) / len(rows) * 1e6
    db.execute("ROLLBACK")
    cpu = time.process_time()
    got = db.execute("SELECT case_id, items FROM case_items WHERE experiment_id = ?", (eid,))
    read = len(got.fetchall())
    out["read"] = (time.process_time() - cpu) / read * 1e6
    return out


def pages(db: sqlite3.Connection) -> str:
    try:
        (size,) = db.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE '%case_items%'"
        ).fetchone()
    except sqlite3.Error:
        return "(no dbstat)"
    return f"{size / 1e6:.0f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=Path, help="keep the base store here")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, eid = kept_store(args.stores or Path(tmp) / "stores", 1_000, args.k)
        sides = {
            "rowid": grown(base, Path(tmp) / "rowid.db", args.rows, old=False),
            "WITHOUT ROWID": grown(base, Path(tmp) / "old.db", args.rows, old=True),
        }
        rng = random.Random(2)
        keys = [(f"{rng.getrandbits(32):08x}", f"case-{i % 1000:05d}") for i in range(LOOKS)]
        times: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for round_ in range(args.repeat):
            order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
            for name in order:
                times[name].append(timed(sides[name], eid, keys))
            print(
                f"round {round_ + 1}: "
                + "; ".join(
                    f"{name} " + ", ".join(f"{w} {t:.2f} µs" for w, t in times[name][-1].items())
                    for name in sides
                ),
                flush=True,
            )
        for name, db in sides.items():
            medians = {w: statistics.median(t[w] for t in times[name]) for w in times[name][0]}
            shown = ", ".join(f"{w} {t:.2f} µs" for w, t in medians.items())
            print(f"{name}: {shown} (CPU, medians of {args.repeat}); table {pages(db)}")
        ratio = statistics.median(
            new["look-up"] / old["look-up"]
            for new, old in zip(times["rowid"], times["WITHOUT ROWID"], strict=True)
        )
        for db in sides.values():
            db.close()
    what = f"the trigger's look-up of a run's case in case_items of {args.rows:,} rows"
    compares = "CPU, rowid table / WITHOUT ROWID (median of the pairs)"
    return 0 if result(f"{what} (k = {args.k})", ratio, 0.5, compares) else 1


if __name__ == "__main__":
    raise SystemExit(main())
