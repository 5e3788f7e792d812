"""The store's schema: the tables, indexes and triggers as named migrations, applied
in order and recorded in the database (`migrations`), each in its own transaction; a
file that is not a passhat store is refused before anything is written to it; whether
a file is one, asked of SQLite read-only (`holds_passhat_tables`, the sandbox's look).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from pathlib import Path

from passhat.errors import StoreError
from passhat.store.connection import _Connection


def _summary_of(row: str) -> str:
    """The run_summaries values of a runs row (`runs` or a trigger's `NEW`).

    `items` is `records.graded_items(score)` and `tool_counts` is
    `records.tool_counts(tool_calls)`, computed by SQLite's JSON functions
    (json_patch drops the keys a detail does not have; `items` keeps every detail
    with an `expected` and a `missing`, and its readers keep the set details of them,
    `columns.set_details`). A column that is not
    JSON gives a value that is not JSON either, so a report says the store is
    damaged instead of showing nothing. A call's error is read as JSON text (`->`),
    not as SQL text: an error string starting with NUL is an error, not ''."""
    return f"""
        {row}.experiment_id, {row}.case_id, {row}.run_index, {row}.status, {row}.error_type,
        {row}.error_message, {row}.duration_s, {row}.input_tokens, {row}.output_tokens,
        {row}.model_source, {row}.attempt, {row}.traceback,
        CASE WHEN json_valid({row}.score) THEN (
            SELECT json_group_array(json(json_patch('{{}}', json_object(
              'scorer', json(d.value -> '$.scorer'), 'path', json(d.value -> '$.path'),
              'passed', json(d.value -> '$.passed'), 'expected', json(d.value -> '$.expected'),
              'missing', json(d.value -> '$.missing'), 'extra', json(d.value -> '$.extra')))))
            FROM json_each({row}.score) AS d
            WHERE json_type(d.value, '$.expected') IS NOT NULL
              AND json_type(d.value, '$.missing') IS NOT NULL
        ) ELSE 'damaged: the score column' END,
        CASE WHEN json_valid({row}.tool_calls) THEN coalesce((
            SELECT json_group_object(tool, json_array(n, e)) FROM (
              SELECT d.value ->> '$.tool' AS tool, count(*) AS n,
                sum(CASE WHEN coalesce(d.value -> '$.error', 'null')
                    IN ('null', '""', 'false', '0') THEN 0 ELSE 1 END)
                  AS e,
                min(d.key) AS first
              FROM json_each({row}.tool_calls) AS d GROUP BY tool ORDER BY first)
        ), '{{}}') ELSE 'damaged: the tool_calls column' END
    """


def _forget_case(row: str) -> str:
    """The statement deleting the kept items text of the case of `row` (a trigger's
    `NEW` or `OLD` row of run_summaries)."""
    return (
        f"DELETE FROM case_items WHERE experiment_id = {row}.experiment_id "
        f"AND case_id = {row}.case_id;"
    )


def _forgetting_summary(table: str, column: str) -> str:
    """The triggers deleting an experiment's kept summary (`kept_summaries`) whenever a
    row of `table` naming it in `column` is inserted, updated (its old and new row) or
    deleted: `kept_summaries_<table>_<insert|update|delete>`."""
    events = {"insert": ("NEW",), "update": ("OLD", "NEW"), "delete": ("OLD",)}
    return "\n".join(
        f"CREATE TRIGGER kept_summaries_{table}_{event} AFTER {event.upper()} ON {table} BEGIN "
        + " ".join(f"DELETE FROM kept_summaries WHERE experiment_id = {r}.{column};" for r in rows)
        + " END;"
        for event, rows in events.items()
    )


_CASE_ITEMS_TRIGGERS = f"""
        CREATE TRIGGER case_items_insert AFTER INSERT ON run_summaries BEGIN
            {_forget_case("NEW")}
        END;
        CREATE TRIGGER case_items_update AFTER UPDATE ON run_summaries BEGIN
            {_forget_case("OLD")}
            {_forget_case("NEW")}
        END;
        CREATE TRIGGER case_items_delete AFTER DELETE ON run_summaries BEGIN
            {_forget_case("OLD")}
        END;
"""
"""The triggers that delete a case's kept items text whenever its run summaries change."""

MIGRATIONS: list[tuple[str, str]] = [
    (
        "create experiments and runs",
        """
        CREATE TABLE experiments (
            id TEXT PRIMARY KEY,
            name TEXT UNIQUE,
            created_at TEXT NOT NULL,
            suite_name TEXT NOT NULL,
            suite_path TEXT NOT NULL,
            suite_hash TEXT NOT NULL,
            agent TEXT NOT NULL,
            model TEXT NOT NULL,
            model_config TEXT NOT NULL,
            params TEXT NOT NULL,
            prompt_version TEXT,
            k_requested INTEGER NOT NULL CHECK (k_requested >= 1),
            seed INTEGER NOT NULL,
            harness_version TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            case_ids TEXT NOT NULL,
            case_hashes TEXT NOT NULL,
            tools TEXT NOT NULL
        );
        CREATE TABLE runs (
            experiment_id TEXT NOT NULL REFERENCES experiments(id),
            case_id TEXT NOT NULL,
            run_index INTEGER NOT NULL CHECK (run_index >= 1),
            case_hash TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'errored')),
            error_type TEXT,
            error_message TEXT,
            output TEXT NOT NULL,
            final_state TEXT NOT NULL,
            score TEXT NOT NULL,
            transcript TEXT NOT NULL,
            tool_calls TEXT NOT NULL,
            started_at REAL NOT NULL,
            duration_s REAL NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            retries TEXT NOT NULL,
            PRIMARY KEY (experiment_id, case_id, run_index)
        );
        """,
    ),
    (
        "record the agent's source hash; leases so one process runs an experiment at a time",
        """
        ALTER TABLE experiments ADD COLUMN agent_hash TEXT;
        CREATE TABLE leases (
            experiment_id TEXT PRIMARY KEY REFERENCES experiments(id),
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            taken_at TEXT NOT NULL
        );
        """,
    ),
    (
        "experiments record their kind (run, imported, audited, regrade) and source",
        """
        ALTER TABLE experiments ADD COLUMN kind TEXT NOT NULL DEFAULT 'run';
        ALTER TABLE experiments ADD COLUMN source TEXT NOT NULL DEFAULT 'null'
        """,
    ),
    (
        "runs record where their model answers came from and a command agent's stderr",
        """
        ALTER TABLE runs ADD COLUMN model_source TEXT;
        ALTER TABLE runs ADD COLUMN stderr TEXT
        """,
    ),
    (
        "lease heartbeats: a lease nobody renews expires",
        """
        ALTER TABLE leases ADD COLUMN heartbeat_at REAL;
        """,
    ),
    (
        "attempts: resume --errored re-runs an errored run, keeping the earlier attempts",
        """
        ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1);
        CREATE TABLE run_attempts (
            experiment_id TEXT NOT NULL REFERENCES experiments(id),
            case_id TEXT NOT NULL,
            run_index INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            status TEXT NOT NULL,
            error_type TEXT,
            error_message TEXT,
            started_at REAL NOT NULL,
            duration_s REAL NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (experiment_id, case_id, run_index, attempt)
        );
        """,
    ),
    (
        "keep a crashed agent's traceback",
        """
        ALTER TABLE runs ADD COLUMN traceback TEXT
        """,
    ),
    (
        "record a user environment's source hash",
        "ALTER TABLE experiments ADD COLUMN environment_hash TEXT;",
    ),
    (
        "run_summaries: what a report reads of a run, beside it, kept by triggers",
        f"""
        CREATE TABLE run_summaries (
            experiment_id TEXT NOT NULL,
            case_id TEXT NOT NULL,
            run_index INTEGER NOT NULL,
            status TEXT NOT NULL,
            error_type TEXT,
            error_message TEXT,
            duration_s REAL NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            model_source TEXT,
            attempt INTEGER NOT NULL,
            traceback TEXT,
            items TEXT NOT NULL,
            tool_counts TEXT NOT NULL,
            PRIMARY KEY (experiment_id, case_id, run_index)
        ) WITHOUT ROWID;
        INSERT INTO run_summaries SELECT {_summary_of("runs")} FROM runs;
        CREATE TRIGGER run_summaries_insert AFTER INSERT ON runs BEGIN
            INSERT OR REPLACE INTO run_summaries VALUES ({_summary_of("NEW")});
        END;
        CREATE TRIGGER run_summaries_update AFTER UPDATE ON runs BEGIN
            DELETE FROM run_summaries WHERE experiment_id = OLD.experiment_id
                AND case_id = OLD.case_id AND run_index = OLD.run_index;
            INSERT OR REPLACE INTO run_summaries VALUES ({_summary_of("NEW")});
        END;
        CREATE TRIGGER run_summaries_delete AFTER DELETE ON runs BEGIN
            DELETE FROM run_summaries WHERE experiment_id = OLD.experiment_id
                AND case_id = OLD.case_id AND run_index = OLD.run_index;
        END;
        """,
    ),
    (
        "case_k: the runs asked of a case when an adaptive rule asked it fewer than k",
        """
        CREATE TABLE case_k (
            experiment_id TEXT NOT NULL REFERENCES experiments(id),
            case_id TEXT NOT NULL,
            k_requested INTEGER NOT NULL CHECK (k_requested >= 1),
            PRIMARY KEY (experiment_id, case_id)
        ) WITHOUT ROWID;
        """,
    ),
    (
        "adaptive_records: the rule, looks, stop reason and runs spent of adaptive rounds",
        """
        CREATE TABLE adaptive_records (
            experiment_id TEXT NOT NULL REFERENCES experiments(id),
            seq INTEGER NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (experiment_id, seq)
        );
        """,
    ),
    (
        "record where a run ran (a Dask worker's address, passhat version and code hash)",
        "ALTER TABLE runs ADD COLUMN ran_on TEXT;",
    ),
    (
        "runs with retries and errored runs indexed: a report counts abandoned model calls "
        "without reading every run",
        # the retries come after the transcript in a row: reading them for every run read
        # the whole table (at 100,000 runs 0.25 s of CPU for `passhat report`, 2 s on a
        # busy machine); most runs have no retries (`[]`) and few errored, so both indexes
        # hold few rows
        """
        CREATE INDEX runs_retried ON runs (experiment_id) WHERE retries != '[]';
        CREATE INDEX run_summaries_errored ON run_summaries (experiment_id)
            WHERE status = 'errored';
        """,
    ),
    (
        "run summaries indexed for per-case totals: a terminal report counts in SQL",
        # the terminal report of a large experiment reads totals per case
        # (`Store.tallies`) from this covering index instead of every run's row (the
        # per-item results are most of a row's bytes); the ungraded index holds the runs
        # with no per-item result to show (errored, or none graded: few, usually), the
        # damaged one none of a sound store's
        """
        CREATE INDEX run_summaries_cases ON run_summaries (experiment_id, case_id, run_index,
            status, attempt, model_source, input_tokens, output_tokens, error_type, tool_counts);
        CREATE INDEX run_summaries_ungraded ON run_summaries (experiment_id, case_id)
            WHERE status = 'errored' OR items = '[]';
        CREATE INDEX run_summaries_damaged ON run_summaries (experiment_id)
            WHERE substr(items, 1, 1) != '[';
        """,
    ),
    (
        "case_items: each case's items of `report --json` kept as text, cleared by triggers",
        # the text `report.parts_json.ItemText.text` makes of a case's counted runs (its
        # entries of the items list without the brackets; '' for none), kept when a writer
        # finishes (`Store.fill_case_items`) and read by `report --json` in place of
        # making it again. The triggers sit on run_summaries, which the report reads (and
        # which the triggers on runs keep): whatever writes a case's runs or their
        # summaries deletes its row, so a row present is right and a row missing is made
        # as before. Should the text parts_json writes ever change, a later migration
        # must clear the table (DELETE FROM case_items), or reports would mix formats.
        f"""
        CREATE TABLE case_items (
            experiment_id TEXT NOT NULL,
            case_id TEXT NOT NULL,
            items TEXT NOT NULL,
            PRIMARY KEY (experiment_id, case_id)
        ) WITHOUT ROWID;
        {_CASE_ITEMS_TRIGGERS}        """,
    ),
    (
        "kept_summaries: an experiment's figures and cases of `report --json` kept as text",
        # the text `report.json_frame.summary_pieces` makes of the experiment's accounting
        # (`,"dataset":...,"cases":[...]`, in pieces of a few thousand cases, `part` from
        # 0), kept when a writer finishes (`Store.fill_summary`) and read by a streamed
        # `report --json` in place of computing the intervals (numpy imported, the
        # bootstrap drawn). The accounting follows from the experiment's runs, its row (its
        # cases and k) and its case_k rows: whatever writes one deletes the text, so the
        # text present is right for them; `format` names the passhat and text that made
        # it (`json_frame.kept_summary_format`: another's is made again). A rowid table:
        # WITHOUT ROWID, its rows (pieces of ~700 KB) sat in the key's own b-tree, and the
        # trigger's look-up of an experiment holding none, once per run written, read
        # whole pieces to compare keys: 658 µs a run added to a store of 100,000, not 128.
        f"""
        CREATE TABLE kept_summaries (
            experiment_id TEXT NOT NULL,
            part INTEGER NOT NULL,
            format TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (experiment_id, part)
        );
        {_forgetting_summary("run_summaries", "experiment_id")}
        {_forgetting_summary("experiments", "id")}
        {_forgetting_summary("case_k", "experiment_id")}
        """,
    ),
    (
        "case_items as a rowid table, its rows kept",
        # WITHOUT ROWID, a row (a case's text: ~1 KB at k = 10, ~3.6 KB at k = 100) sat in
        # the key's b-tree, where a row over ~1 KB spills to overflow pages, and every key
        # compared on the way down was read whole: the trigger's look-up, once per run
        # written, took 9.7 µs of CPU in a table of 100,000 rows (k = 10) and 12.1 in one
        # of 50,000 (k = 100), 1.0 as a rowid table (its key in an index of its own); a
        # case's fill 7.6 and 15.1 µs, 3.0 and 10.2 now; the 100,000 rows 344 MB, 124 now
        # (benchmarks/bench_case_items.py). A store of one experiment (1,000 rows) gains
        # about 1 µs a run.
        # The triggers name the table: dropped first, made again as they were.
        f"""
        DROP TRIGGER case_items_insert;
        DROP TRIGGER case_items_update;
        DROP TRIGGER case_items_delete;
        CREATE TABLE case_items_rowid (
            experiment_id TEXT NOT NULL,
            case_id TEXT NOT NULL,
            items TEXT NOT NULL,
            PRIMARY KEY (experiment_id, case_id)
        );
        INSERT INTO case_items_rowid SELECT experiment_id, case_id, items FROM case_items;
        DROP TABLE case_items;
        ALTER TABLE case_items_rowid RENAME TO case_items;
        {_CASE_ITEMS_TRIGGERS}
        """,
    ),
]


def _statements(sql: str) -> Iterator[str]:
    """The statements of a migration, one at a time; a trigger's body keeps its `;`."""
    buffer = ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \n;"):
                yield buffer
            buffer = ""
    if buffer.strip(" \n;"):
        yield buffer


class _Schema(_Connection):
    """Migrations: the schema brought up to date, and a file that is not ours refused."""

    def _behind(self) -> bool:
        """Some migration of this passhat is not applied yet (an older store)."""
        done = {row[0] for row in self._db.execute("SELECT version FROM migrations")}
        return len(done) < len(MIGRATIONS)

    def _check_is_ours(self) -> None:
        """Refuse an SQLite file holding tables that are not passhat's, created or not:
        `--db mydata.db` must not turn someone's database into a store. An empty file
        (new, or a store whose first migration never ran) is passhat's to fill. Its
        reads are one snapshot: another process may be making the same new store."""
        with self.snapshot():
            self._check_tables()

    def _check_tables(self) -> None:
        tables = {
            r[0]
            for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith("sqlite_")
        }
        ours = "migrations" in tables and self._db.execute(PASSHAT_TABLES).fetchone()[0] == 2
        if not (ours or not tables or (tables == {"migrations"} and self._cut_short())):
            raise StoreError(
                f"{self.path}: an SQLite file that is not a passhat store; give --db the "
                "store's path (nothing was written to this file)"
            )

    def _cut_short(self) -> bool:
        """Whether the lone `migrations` table is passhat's left empty by a first migration
        cut short (made outside its transaction), not another tool's (TypeORM's, Laravel's)."""
        columns = [r[1] for r in self._db.execute("PRAGMA table_info(migrations)")]
        empty = self._db.execute("SELECT 1 FROM migrations LIMIT 1").fetchone() is None
        return columns == ["version", "name", "applied_at"] and empty

    def _check_no_foreign_objects(self) -> None:
        """Refuse a store holding triggers or views passhat did not make: one planted by
        anything with write access (an agent, once) would rewrite every later verdict."""
        rows = [
            (kind, name, sql)
            for kind, name, sql in self._db.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view')"
            )
        ]
        if _digest(rows) == OURS_DIGEST:
            return  # passhat's own, all of them and nothing else: `_ours` need not be built
        foreign = [f"{kind} {name}" for kind, name, sql in rows if (kind, name, sql) not in _ours()]
        if foreign:
            raise StoreError(
                f"{self.path}: holds {', '.join(sorted(foreign))}, which passhat did not make: "
                "something other than passhat changed this store, so its figures cannot be "
                "trusted; drop them with sqlite3 (DROP TRIGGER name) only if you know where "
                "they came from"
            )

    def _into_wal(self) -> None:
        """journal_mode=WAL. Into WAL, SQLite needs the file alone for a moment and does
        not wait for it through the busy timeout: the second of two processes opening
        the same new store got "database is locked" at once. Tried again until then."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                busy = getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(0.01)

    def _migrate(self) -> None:
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in self._db.execute("SELECT version FROM migrations")}
        if done and max(done) > len(MIGRATIONS):
            raise StoreError(
                f"{self.path}: written by a newer passhat (schema {max(done)}); upgrade passhat"
            )
        for version, (name, sql) in enumerate(MIGRATIONS, start=1):
            if version in done:
                continue
            with self.atomic() as db:
                # asked again with the write lock held: another process making the same
                # new store may have applied it since (it would fail as "table exists")
                if db.execute("SELECT 1 FROM migrations WHERE version = ?", (version,)).fetchone():
                    continue
                for statement in _statements(sql):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO migrations VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    (version, name),
                )

    def migrations(self) -> list[str]:
        """Names of the migrations applied, in order."""
        return [r[0] for r in self._db.execute("SELECT name FROM migrations ORDER BY version")]


def create_private(path: Path) -> None:
    """Make a new store file readable and writable by its owner alone (its -wal and -shm
    files take the same mode from SQLite); an existing file is left as it is."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


PASSHAT_TABLES = """
    SELECT count(*) FROM sqlite_master WHERE type = 'table' AND (
        (name = 'experiments' AND sql LIKE '%fingerprint%')
        OR (name = 'runs' AND sql LIKE '%final_state%'))
"""
"""passhat's first two tables, as its first migration made them (every store has them)."""
STORE_SQL_MAX = 64 * 1024
"""The longest schema text (and value) SQLite reads for the look: passhat's longest
statement is under 2 KB. SQLite's progress handler is not called while it parses one
statement, nor is an interrupt seen there unless the text has spaces, so a longer one
(a hostile view of megabytes) would hold the look's thread for seconds past its
deadline; SQLite refuses it at once instead (the look then cannot say)."""


def holds_passhat_tables(path: str, seconds: float, *, live: bool) -> bool | None:
    """Whether the SQLite file at `path` holds passhat's tables, wherever its schema's
    pages lie (a store migrated after it held runs has them at its end); None when SQLite
    cannot read it or say within `seconds`. Read-only: opened `immutable` (no lock taken,
    no -shm made, nothing written), or, when `live` (a WAL beside it holds pages not yet
    in the file), `mode=ro` with a busy timeout of `seconds`. No schema text or value
    longer than STORE_SQL_MAX is read. The caller opens nothing that may block (a FIFO):
    SQLite's own open() does not ask."""
    uri = f"file:{urllib.parse.quote(path)}?mode=ro" + ("" if live else "&immutable=1")
    deadline = time.monotonic() + seconds
    try:
        db = sqlite3.connect(uri, uri=True, timeout=seconds, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        db.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, STORE_SQL_MAX)
        db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, STORE_SQL_MAX)
        db.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
        row = db.execute(PASSHAT_TABLES).fetchone()
    except sqlite3.Error:  # not a database, damaged, locked, or past the deadline
        return None
    finally:
        db.close()
    return bool(row is not None and row[0] == 2)


OURS_DIGEST = "cf06e2fa34d82352753853012cc42a20d43e258f18cd462ff15f31b2504141af"
"""`_digest` of `_ours()`: a store whose triggers and views hash to it holds passhat's own
and nothing else, known without building every migration's schema in an in-memory
database (`_ours`: 3-4 ms of CPU, once in every command that opens a store). Any other
set (a planted trigger, an older store) is compared with `_ours()` object by object.
tests/test_store.py pins it to the migrations (and says the new value when they change)."""


def _digest(objects: Iterable[tuple[str, str, str]]) -> str:
    """sha256 of (type, name, sql) rows, whatever their order."""
    return hashlib.sha256(repr(sorted(objects)).encode()).hexdigest()


@functools.cache
def _ours() -> frozenset[tuple[str, str, str]]:
    """The triggers and views passhat's migrations make: (type, name, sql) of each."""
    db = sqlite3.connect(":memory:")
    try:
        for _, sql in MIGRATIONS:
            for statement in _statements(sql):
                db.execute(statement)
        rows = db.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view')"
        )
        return frozenset((kind, name, sql) for kind, name, sql in rows)
    finally:
        db.close()
