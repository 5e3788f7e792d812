"""The SQLite store: the one module that touches `sqlite3`.

WAL journal, a busy timeout, and schema changes as named migrations recorded
in the database. Each finished run is written whole in one transaction; the
key (experiment, case, run index) makes a second write of the same run an
error instead of a second count. The store keeps records; it computes nothing.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any, overload

from passhat._gc import without_gc
from passhat.errors import StoreError
from passhat.records import ExperimentRecord, RunJson, RunRecord, RunSummary

DB_ENV = "PASSHAT_DB"
BUSY_ENV = "PASSHAT_BUSY_TIMEOUT"
_ID = re.compile(r"[0-9a-f]{8}")
"""Experiment ids: 8 hex digits (runner.new_experiment)."""
DEFAULT_DB = "passhat.db"


def _summary_of(row: str) -> str:
    """The run_summaries values of a runs row (`runs` or a trigger's `NEW`).

    `items` is `records.graded_items(score)` and `tool_counts` is
    `records.tool_counts(tool_calls)`, computed by SQLite's JSON functions
    (json_patch drops the keys a detail does not have). A column that is not
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
]

_EXPERIMENT_JSON = ("model_config", "params", "case_ids", "case_hashes", "tools", "source")
_RUN_JSON = ("output", "final_state", "score", "transcript", "tool_calls", "retries")
_SUMMARY = (
    "case_id, run_index, status, error_type, error_message, duration_s, input_tokens, "
    "output_tokens, model_source, attempt, traceback, items, tool_counts"
)
"""The columns a report reads (`Store.summaries`): no transcript, score or tool call."""
_RUN_LIGHT = (
    "experiment_id, case_id, run_index, case_hash, status, error_type, error_message, "
    "score, tool_calls, started_at, duration_s, input_tokens, output_tokens, seed, retries, "
    "model_source, attempt, traceback"
)


_GRADED_ON = (
    "experiment_id, case_id, run_index, case_hash, status, error_type, error_message, "
    "final_state, score, seed"
)
"""What a regrade reads of a run (`Store.graded`): no transcript, output or tool call."""
_REGRADED = ("experiment_id", "case_hash", "status", "error_type", "error_message", "score")
"""What a regrade writes of a run; `Store.add_experiment_with_copies` copies the rest."""
_RUN_COLUMNS = tuple(f.name for f in fields(RunRecord))
"""The columns of `runs`, one per field of RunRecord (as `_row` writes them)."""
_RUN_FIELDS = frozenset(_RUN_COLUMNS)
"""The columns of `runs` (`Store.columns` reads no other name)."""

_UNSET = object()
"""Equal to no column value (a row's NULL is None)."""


def _hostname() -> str:
    """This machine's name, for a writer's lease (imported here: a report reads no lease)."""
    import socket

    return socket.gethostname()


def default_db_path() -> Path:
    """`$PASSHAT_DB` if set, else ./passhat.db."""
    return Path(os.environ.get(DB_ENV) or DEFAULT_DB)


class Store:
    """An open passhat database.

    One connection; it may be handed to one writer thread at a time (the runner
    does so), never used from two threads at once.
    """

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        """Open (or, with `create`, make) the store at `path`.

        `read_only` opens it for reading only (report, show, list...): that works
        on a read-only file or mount. Every failure is one StoreError line.
        """
        self.path = Path(path)
        self.read_only = read_only
        self.busy_timeout = busy_timeout()
        self.secrets: tuple[str, ...] = secrets_from_environment()
        """Values never written: API keys, blanked wherever they appear in a record."""
        self._leased: set[str] = set()
        """Experiments this store holds the lease of (a lease taken again inside is a no-op)."""
        if not create and not self.path.exists():
            raise StoreError(
                f"{self.path}: no passhat store here; run `passhat run SUITE` first, or give "
                f"--db (or ${DB_ENV}) the store's path"
            )
        self._db = self._connect(read_only)
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            if not read_only:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            if not create:
                self._check_is_ours()
            if read_only:
                self._check_schema_current()
            else:
                self._migrate()
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise StoreError(f"{self.path}: {self._explain(error)}") from None
        except StoreError:
            self._db.close()
            raise

    def _connect(self, read_only: bool) -> sqlite3.Connection:
        try:
            if not read_only:
                return self._open(str(self.path), uri=False)
            uri = "file:" + urllib.parse.quote(str(self.path.resolve()))
            try:
                db = self._open(uri + "?mode=ro", uri=True)
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError:
                # a WAL store on a read-only mount has no -shm to share: read it as
                # immutable (nothing can write it there anyway)
                return self._open(uri + "?immutable=1", uri=True)
        except sqlite3.Error as error:
            raise StoreError(
                f"{self.path}: cannot open the database ({self._explain(error)})"
            ) from None

    def _explain(self, error: sqlite3.Error) -> str:
        if "unable to open" in str(error) and not self.read_only and not _writable(self.path):
            # SQLite cannot make the WAL's side files: the file or its folder is read-only
            error = sqlite3.OperationalError(f"{error}: the file or its folder is read-only")
        return explain(error, self.busy_timeout)

    def _open(self, target: str, *, uri: bool) -> sqlite3.Connection:
        return sqlite3.connect(
            target,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            uri=uri,
        )

    def _check_schema_current(self) -> None:
        done = {row[0] for row in self._db.execute("SELECT version FROM migrations")}
        if len(done) < len(MIGRATIONS):
            # an older store: bring it up to date if we may write it, else say so
            self._db.close()
            try:
                Store(self.path, create=False).close()
            except StoreError as error:
                raise StoreError(
                    f"{self.path}: written by an older passhat and it cannot be upgraded here "
                    f"({error}); open it once where it is writable"
                ) from None
            self._db = self._connect(True)
            self._db.row_factory = sqlite3.Row

    def add_secrets(self, values: Iterable[str]) -> None:
        """Also blank these values (a provider's key) out of everything written."""
        found = [v for v in values if len(v) >= MIN_SECRET and v not in self.secrets]
        self.secrets = tuple(sorted({*self.secrets, *found}, key=len, reverse=True))

    def _encode(self, value: Any) -> str:
        return redact_all(_encode(value), self.secrets)

    def _sealed(self, record: ExperimentRecord | RunRecord) -> dict[str, Any]:
        """The row written for `record`: JSON columns encoded, and every text column
        (traceback, stderr, error message, output, transcript, tool calls, ...) with the
        known secrets blanked. Every record goes through here on its way in, so what
        `show`, reports and exports read holds no key."""
        row = _row(record)
        for key in _RUN_JSON if isinstance(record, RunRecord) else _EXPERIMENT_JSON:
            row[key] = _encode(row[key])
        if row.get("ran_on", "") is None:  # NULL by default: a local run names no worker
            del row["ran_on"]
        return {k: redact_all(v, self.secrets) if isinstance(v, str) else v for k, v in row.items()}

    def close(self) -> None:
        self._db.close()

    def _check_is_ours(self) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        if "migrations" not in tables:
            raise StoreError(
                f"{self.path}: an SQLite file that is not a passhat store; give --db the "
                "store's path (nothing was written to this file)"
            )

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """One transaction: everything inside is written, or nothing.

        A locked, read-only or full store is one StoreError saying so."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise StoreError(f"{self.path}: {self._explain(error)}") from None
        try:
            yield self._db
            self._db.execute("COMMIT")
        except BaseException as error:
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            if isinstance(error, sqlite3.OperationalError):
                raise StoreError(f"{self.path}: {self._explain(error)}") from None
            raise

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
                for statement in _statements(sql):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO migrations VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    (version, name),
                )

    def migrations(self) -> list[str]:
        """Names of the migrations applied, in order."""
        return [r[0] for r in self._db.execute("SELECT name FROM migrations ORDER BY version")]

    # experiments

    @staticmethod
    def _check_name(name: str | None) -> None:
        if name is not None and (name == "latest" or _ID.fullmatch(name) or not name.strip()):
            raise StoreError(
                f"--name {name!r} could be read as an experiment id or 'latest'; "
                "choose a name with a letter beyond a-f, e.g. 'baseline-1'"
            )

    def create_experiment(self, experiment: ExperimentRecord) -> None:
        self._check_name(experiment.name)
        row = self._sealed(experiment)
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            with self.atomic() as db:
                db.execute(
                    f"INSERT INTO experiments ({columns}) VALUES ({marks})", list(row.values())
                )
                _insert_case_k(db, experiment)
        except sqlite3.IntegrityError:
            raise StoreError(
                f"an experiment named {experiment.name!r} exists already; choose another --name"
            ) from None

    def set_k(self, experiment_id: str, k: int) -> None:
        """Raise the requested k of every case (resume with a larger k): a case an
        adaptive rule had asked fewer runs of is asked k again."""
        with self.atomic() as db:
            db.execute("UPDATE experiments SET k_requested = ? WHERE id = ?", (k, experiment_id))
            db.execute("DELETE FROM case_k WHERE experiment_id = ?", (experiment_id,))

    def hold_cases(self, experiment_id: str, k: int, held: Mapping[str, int]) -> None:
        """Raise the experiment's k to `k` for every case but the `held` ones, which
        keep the runs asked of them (case -> its requested k, below `k`): an adaptive
        round adding runs to undecided cases only. One transaction."""
        for case, kept in held.items():
            if not 1 <= kept < k:
                raise StoreError(f"case {case!r} held at k = {kept}, not below the new k = {k}")
        with self.atomic() as db:
            db.execute("UPDATE experiments SET k_requested = ? WHERE id = ?", (k, experiment_id))
            db.execute("DELETE FROM case_k WHERE experiment_id = ?", (experiment_id,))
            db.executemany(
                "INSERT INTO case_k (experiment_id, case_id, k_requested) VALUES (?, ?, ?)",
                [(experiment_id, case, kept) for case, kept in held.items()],
            )

    def add_adaptive(self, experiment_id: str, record: Mapping[str, Any]) -> None:
        """Keep the record of one set of adaptive rounds (rule, looks, stop reason, runs
        spent) with the experiment, after any earlier ones."""
        with self.atomic() as db:
            db.execute(
                "INSERT INTO adaptive_records (experiment_id, seq, record) VALUES (?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM adaptive_records WHERE experiment_id = ?), ?)",
                (experiment_id, experiment_id, self._encode(dict(record))),
            )

    def adaptive(self, experiment_id: str) -> list[dict[str, Any]]:
        """The adaptive rounds' records of an experiment, oldest first."""
        rows = self._db.execute(
            "SELECT seq, record FROM adaptive_records WHERE experiment_id = ? ORDER BY seq",
            (experiment_id,),
        )
        return [
            _decode(r["record"], f"adaptive record {r['seq']} of {experiment_id}") for r in rows
        ]

    def experiments(self) -> list[ExperimentRecord]:
        """All experiments, oldest first."""
        rows = self._db.execute("SELECT * FROM experiments ORDER BY created_at, rowid")
        held: dict[str, dict[str, int]] = {}
        for r in self._db.execute("SELECT experiment_id, case_id, k_requested FROM case_k"):
            held.setdefault(r[0], {})[r[1]] = r[2]
        rounds: dict[str, list[dict[str, Any]]] = {}
        for r in self._db.execute("SELECT experiment_id FROM adaptive_records"):
            rounds.setdefault(r[0], [])
        for experiment_id in rounds:
            rounds[experiment_id] = self.adaptive(experiment_id)
        return [_experiment(row, held.get(row["id"]), rounds.get(row["id"])) for row in rows]

    def _loaded(self, row: sqlite3.Row) -> ExperimentRecord:
        """An experiment with the runs asked of each case and its adaptive records."""
        rows = self._db.execute(
            "SELECT case_id, k_requested FROM case_k WHERE experiment_id = ?", (row["id"],)
        )
        return _experiment(row, {r[0]: r[1] for r in rows}, self.adaptive(row["id"]))

    def experiment(self, ref: str) -> ExperimentRecord:
        """An experiment by id, unique name, or `latest`."""
        if ref == "latest":
            row = self._db.execute(
                "SELECT * FROM experiments ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: no experiment yet; start one with `passhat run`")
            return self._loaded(row)
        row = self._db.execute(
            "SELECT * FROM experiments WHERE id = ? OR name = ?", (ref, ref)
        ).fetchone()
        if row is None:
            known = ", ".join(e.name or e.id for e in self.experiments()[-5:]) or "none"
            raise StoreError(
                f"{self.path}: no experiment {ref!r}; give an id, a name or 'latest' "
                f"(recent: {known}; `passhat list` shows all)"
            )
        return self._loaded(row)

    # leases: one process runs an experiment at a time

    @contextmanager
    def lease(self, experiment_id: str) -> Iterator[None]:
        """Hold the experiment for this process while the block runs.

        A lease whose process died on this host, or that nobody renewed for
        LEASE_EXPIRY_S seconds (its host is gone), is taken over. A thread renews
        ours every HEARTBEAT_S seconds through a connection of its own. Taken again
        inside the block (resume holds it before raising k, and across its rounds),
        it is already ours: the inner block neither takes nor releases it."""
        if experiment_id in self._leased:
            yield
            return
        self._acquire(experiment_id)
        self._leased.add(experiment_id)
        beat = _Heartbeat(self.path, experiment_id, self.busy_timeout)
        beat.start()
        try:
            yield
        except BaseException:
            beat.stop()
            self._leased.discard(experiment_id)
            # the first failure is the story: a store too full to release the lease in
            # leaves it to be taken over (this process is gone by then)
            with contextlib.suppress(StoreError):
                self._release(experiment_id)
            raise
        beat.stop()
        self._leased.discard(experiment_id)
        self._release(experiment_id)

    def _release(self, experiment_id: str) -> None:
        with self.atomic() as db:
            db.execute(
                "DELETE FROM leases WHERE experiment_id = ? AND pid = ? AND host = ?",
                (experiment_id, os.getpid(), _hostname()),
            )

    def _acquire(self, experiment_id: str) -> None:
        pid, host = os.getpid(), _hostname()
        with self.atomic() as db:
            row = db.execute(
                "SELECT pid, host, taken_at, heartbeat_at FROM leases WHERE experiment_id = ?",
                (experiment_id,),
            ).fetchone()
            if row is not None and (row["pid"], row["host"]) != (pid, host) and _held(row):
                age = _age(row["heartbeat_at"])
                beat = f", last heartbeat {age:.0f} s ago" if age is not None else ""
                raise StoreError(
                    f"experiment {experiment_id} is being run by process {row['pid']} on "
                    f"{row['host']} since {row['taken_at']}{beat}; wait for it to finish or "
                    "stop it (if that process is gone, `passhat resume --break-lease`)"
                )
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES "
                "(?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?)",
                (experiment_id, pid, host, time.time()),
            )

    def break_lease(self, experiment_id: str) -> str | None:
        """Remove the experiment's lease whoever holds it; say whose it was (None: no lease)."""
        with self.atomic() as db:
            row = db.execute(
                "SELECT pid, host, taken_at, heartbeat_at FROM leases WHERE experiment_id = ?",
                (experiment_id,),
            ).fetchone()
            db.execute("DELETE FROM leases WHERE experiment_id = ?", (experiment_id,))
        if row is None:
            return None
        age = _age(row["heartbeat_at"])
        beat = f", last heartbeat {age:.0f} s ago" if age is not None else ""
        return f"process {row['pid']} on {row['host']} since {row['taken_at']}{beat}"

    def lease_holder(self, experiment_id: str) -> dict[str, Any] | None:
        """The lease row of an experiment (pid, host, taken_at, heartbeat_at), if any."""
        row = self._db.execute(
            "SELECT pid, host, taken_at, heartbeat_at FROM leases WHERE experiment_id = ?",
            (experiment_id,),
        ).fetchone()
        return dict(row) if row is not None else None

    # runs

    def record_run(self, run: RunRecord) -> None:
        """Write one finished run whole, in one transaction; the same run twice is an error.

        A later attempt (`run.attempt > 1`) replaces the errored attempt before it,
        which moves, whole, to `run_attempts`: only an errored run is ever re-run."""
        self.record_runs([run])

    def record_runs(self, runs: Sequence[RunRecord]) -> None:
        """Write finished runs whole in one transaction: all of them, or none.

        A batch costs one commit (the runner's writer batches what arrives while the
        previous commit runs); each run is written as `record_run` writes it, and the
        same run twice is an error, never a second count."""
        if not runs:
            return
        first = runs[0] if len(runs) == 1 else None
        what = f"run {first.run_index} of case {first.case_id!r}" if first else f"{len(runs)} runs"
        try:
            with self.atomic() as db:
                for run in runs:
                    row = self._run_row(run)
                    if run.attempt > 1:
                        _retire_attempt(db, run)
                    columns = ", ".join(row)
                    marks = ", ".join("?" for _ in row)
                    db.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(row.values()))
        except sqlite3.IntegrityError as error:
            if first is None:
                what = f"one of {len(runs)} runs"
            raise StoreError(
                f"{what} is already recorded in experiment {runs[0].experiment_id} ({error}); "
                "it is never counted twice"
            ) from None
        except (sqlite3.Error, StoreError) as error:
            reason = str(error) if isinstance(error, StoreError) else self._explain(error)
            raise StoreError(
                f"{reason} — {what} was not written; it stays missing, and `passhat resume` "
                "runs it again"
            ) from None

    def _run_row(self, run: RunRecord) -> dict[str, Any]:
        return self._sealed(run)

    def add_experiment_with_runs(
        self, experiment: ExperimentRecord, runs: Iterable[RunRecord]
    ) -> int:
        """Store an experiment and all its runs in one transaction (imports, audits,
        regrades): it lands whole or not at all. Returns the number of runs written."""

        def write(db: sqlite3.Connection) -> int:
            written = 0
            for run in runs:
                row = self._sealed(run)
                db.execute(
                    f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                    list(row.values()),
                )
                written += 1
            return written

        return self._add_experiment(experiment, write)

    def add_experiment_with_copies(
        self, experiment: ExperimentRecord, source_id: str, runs: Iterable[RunRecord]
    ) -> int:
        """`add_experiment_with_runs` for runs that differ from experiment `source_id`'s
        only in their experiment, case hash, verdict, error and score (a regrade): those
        are written from each run, and SQLite copies every other column from the source's
        run as stored. A transcript, output or tool call is never read into Python, so a
        regrade of runs with long transcripts costs what their scoring costs."""
        copied = [name for name in _RUN_COLUMNS if name not in _REGRADED]
        # the new verdicts go to a temporary table as they come, then one statement
        # copies the runs: about 80 µs a run, against 126 µs for an INSERT ... SELECT each
        insert = (
            f"INSERT INTO runs ({', '.join(_REGRADED)}, {', '.join(copied)}) "
            f"SELECT ?, {', '.join('g.' + name for name in _REGRADED[1:])}, "
            f"{', '.join('r.' + name for name in copied)} "
            "FROM temp.regraded AS g JOIN runs AS r ON r.experiment_id = ? "
            "AND r.case_id = g.case_id AND r.run_index = g.run_index"
        )

        def verdicts() -> Iterator[tuple[Any, ...]]:
            for run in runs:
                if run.experiment_id != experiment.id:
                    raise StoreError(
                        f"run {run.run_index} of case {run.case_id!r} belongs to experiment "
                        f"{run.experiment_id}, not {experiment.id}; nothing was written"
                    )
                # only these columns are written (a regrade's message quotes no stored text,
                # but it passes the same redaction as every column)
                written = (getattr(run, name) for name in _REGRADED[1:-1])
                yield (
                    run.case_id,
                    run.run_index,
                    *(redact_all(v, self.secrets) if isinstance(v, str) else v for v in written),
                    self._encode(run.score),
                )

        def write(db: sqlite3.Connection) -> int:
            db.execute(
                "CREATE TEMP TABLE IF NOT EXISTS regraded (case_id TEXT NOT NULL, "
                "run_index INTEGER NOT NULL, case_hash TEXT, status TEXT, error_type TEXT, "
                "error_message TEXT, score TEXT, PRIMARY KEY (case_id, run_index)) WITHOUT ROWID"
            )
            db.execute("DELETE FROM temp.regraded")
            db.executemany("INSERT INTO temp.regraded VALUES (?, ?, ?, ?, ?, ?, ?)", verdicts())
            (wanted,) = db.execute("SELECT count(*) FROM temp.regraded").fetchone()
            written = db.execute(insert, (experiment.id, source_id)).rowcount
            if written != wanted:
                case, index = db.execute(
                    "SELECT case_id, run_index FROM temp.regraded AS g WHERE NOT EXISTS "
                    "(SELECT 1 FROM runs AS r WHERE r.experiment_id = ? "
                    "AND r.case_id = g.case_id AND r.run_index = g.run_index) LIMIT 1",
                    (source_id,),
                ).fetchone()
                raise StoreError(
                    f"run {index} of case {case!r} is not in experiment {source_id}, so it "
                    "cannot be copied; nothing was written"
                )
            db.execute("DELETE FROM temp.regraded")
            return int(written)

        return self._add_experiment(experiment, write)

    def _add_experiment(
        self, experiment: ExperimentRecord, write_runs: Callable[[sqlite3.Connection], int]
    ) -> int:
        """Insert `experiment`, then its runs by `write_runs`, in one transaction."""
        self._check_name(experiment.name)
        row = self._sealed(experiment)
        try:
            with self.atomic() as db:
                db.execute(
                    f"INSERT INTO experiments ({', '.join(row)}) VALUES "
                    f"({', '.join('?' for _ in row)})",
                    list(row.values()),
                )
                _insert_case_k(db, experiment)
                return write_runs(db)
        except sqlite3.IntegrityError as error:
            if experiment.name is not None and "experiments.name" in str(error):
                raise StoreError(
                    f"an experiment named {experiment.name!r} exists already; choose another "
                    "--name (nothing was written)"
                ) from None
            raise StoreError(
                f"experiment {experiment.name or experiment.id} could not be stored ({error}); "
                "nothing was written"
            ) from None

    def runs(
        self, experiment_id: str, *, full: bool = True, cases: Sequence[str] | None = None
    ) -> list[RunRecord]:
        """The runs of an experiment by case and index; `full=False` skips the heavy columns;
        `cases` keeps the runs of those cases only (an HTML page's worth)."""
        return self._runs("*" if full else _RUN_LIGHT, experiment_id, cases)

    def graded(self, experiment_id: str, cases: Sequence[str]) -> list[RunRecord]:
        """The runs of `cases` by case and index with what a regrade reads of them: case,
        index, case hash, verdict, error, final state, score and seed (every other field
        left at its default; `add_experiment_with_copies` copies those as stored)."""
        return self._runs(_GRADED_ON, experiment_id, cases)

    def _runs(
        self, columns: str, experiment_id: str, cases: Sequence[str] | None
    ) -> list[RunRecord]:
        where, args = "experiment_id = ?", [experiment_id]
        if cases is not None:
            where += f" AND case_id IN ({', '.join('?' for _ in cases)})"
            args.extend(cases)
        rows = self._db.execute(
            f"SELECT {columns} FROM runs WHERE {where} ORDER BY case_id, run_index", args
        )
        return [_run(row) for row in rows]

    def runs_json(self, experiment_id: str, cases: Sequence[str]) -> list[RunJson]:
        """The runs of `cases` by case and index with their JSON columns as stored (UTF-8,
        not decoded; an HTML page's worth of run detail). A column SQLite does not find
        valid JSON is read as `runs` reads it: damaged, it is named the same way."""
        valid = " AND ".join(f"json_valid({c})" for c in _RUN_JSON)
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT case_id, run_index, status, duration_s, input_tokens, output_tokens, seed, "
            f"{', '.join(f'CAST({c} AS BLOB)' for c in _RUN_JSON)}, {valid} FROM runs "
            f"WHERE experiment_id = ? AND case_id IN ({', '.join('?' for _ in cases)}) "
            "ORDER BY case_id, run_index",
            [experiment_id, *cases],
        )
        return [RunJson(*row[:-1]) if row[-1] else _run_json_checked(row) for row in rows]

    @without_gc
    def summaries(self, experiment_id: str, *, decode_items: bool = True) -> list[RunSummary]:
        """What a report needs of every run, by case and index: the small columns only.

        Runs with the same per-item results or tool counts share one decoded value
        (most runs of a case do), so 100,000 runs cost about one scan of the columns.
        With `decode_items=False` the per-item results are `LazyItems`, decoded when
        first read: the terminal report reads those of the cases it lists, not all
        (at 100,000 runs of cases with their own items: 22,000 decodes, 0.1 s)."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            f"SELECT {_SUMMARY} FROM run_summaries WHERE experiment_id = ? "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )
        items: dict[str | None, Sequence[dict[str, Any]]] = {}
        tools: dict[str | None, dict[str, tuple[int, int]]] = {}
        cases: dict[str, str] = {}
        sources: dict[str | None, str | None] = {}
        out: list[RunSummary] = []
        append = out.append
        new = tuple.__new__  # RunSummary's own __new__ without a Python frame per run
        # Runs in a row mostly share their case, per-item results and tool counts: a
        # value equal to the row before's is taken from it (comparing two strings costs
        # less than hashing a new one for the dict)
        case: str | None = None
        it_before: object = _UNSET
        tc_before: object = _UNSET
        graded: Sequence[dict[str, Any]] = []
        counts: dict[str, tuple[int, int]] = {}
        for row in rows:
            case_id, index, status, error_type, message, duration, tin, tout, src, n, tb, it, tc = (
                row
            )
            if case_id != case:
                case = cases.setdefault(case_id, case_id)
            if it != it_before:
                it_before = it
                shared = items.get(it)
                if shared is None:
                    what = f"items of run {index} of {case_id!r}"
                    shared = items[it] = (
                        _decode(it or "[]", what)
                        if decode_items or not it or it == "[]" or it[0] != "["
                        else LazyItems(it, what)  # (what is not a list is damaged: said now)
                    )
                graded = shared
            if tc != tc_before:
                tc_before = tc
                known = tools.get(tc)
                if known is None:
                    raw = _decode(tc or "{}", f"tool counts of run {index} of {case_id!r}")
                    known = tools[tc] = {name: (n, e) for name, (n, e) in raw.items()}
                counts = known
            append(
                new(
                    RunSummary,
                    (
                        case,
                        index,
                        status,
                        error_type,
                        message,
                        duration,
                        tin,
                        tout,
                        sources.setdefault(src, src),
                        n,
                        tb,
                        graded,
                        counts,
                    ),
                )
            )
        return out

    def statuses(self, experiment_id: str) -> Iterator[tuple[str, int, str]]:
        """(case, run index, status) of every run, streamed: accounting in flat memory."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT case_id, run_index, status FROM run_summaries WHERE experiment_id = ? "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )
        names: dict[str, str] = {}  # one string per case and status, not one per row
        for case_id, index, status in rows:
            yield names.setdefault(case_id, case_id), index, names.setdefault(status, status)

    def columns(self, experiment_id: str, names: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """The `names` columns of every run as stored (a JSON column as its text), streamed
        by case and index: a reader of a few columns of 100,000 runs (an export) decodes
        only those, one row at a time, never a transcript it does not show."""
        unknown = [name for name in names if name not in _RUN_FIELDS]
        if unknown or not names:
            raise ValueError(f"runs have no column {unknown or names!r}")
        cursor = self._db.cursor()
        cursor.row_factory = None
        yield from cursor.execute(
            f"SELECT {', '.join(names)} FROM runs WHERE experiment_id = ? "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )

    def tokens(self, experiment_id: str) -> Iterator[tuple[int, int]]:
        """(input tokens, output tokens) of every run, streamed: `usage_of` in flat memory."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        yield from cursor.execute(
            "SELECT input_tokens, output_tokens FROM run_summaries WHERE experiment_id = ?",
            (experiment_id,),
        )

    def replayed(self, experiment_id: str) -> int:
        """How many runs' model answers were replayed from a cassette (not live)."""
        row = self._db.execute(
            "SELECT count(*) FROM run_summaries WHERE experiment_id = ? "
            "AND model_source = 'replayed'",
            (experiment_id,),
        ).fetchone()
        return int(row[0])

    def run(self, experiment_id: str, case_id: str, run_index: int) -> RunRecord:
        row = self._db.execute(
            "SELECT * FROM runs WHERE experiment_id = ? AND case_id = ? AND run_index = ?",
            (experiment_id, case_id, run_index),
        ).fetchone()
        if row is None:
            raise StoreError(
                f"experiment {experiment_id} has no run {run_index} of case {case_id!r}; "
                "`passhat report` lists the missing runs"
            )
        return _run(row)

    def errored(self, experiment_id: str) -> dict[tuple[str, int], int]:
        """(case, run index) of every errored run, with its attempt number."""
        rows = self._db.execute(
            "SELECT case_id, run_index, attempt FROM runs "
            "WHERE experiment_id = ? AND status = 'errored'",
            (experiment_id,),
        )
        return {(r[0], r[1]): r[2] for r in rows}

    def attempts(self, experiment_id: str) -> list[dict[str, Any]]:
        """The earlier (replaced) attempts of re-run runs: case, run, attempt, status, error."""
        rows = self._db.execute(
            "SELECT case_id, run_index, attempt, status, error_type, error_message, started_at, "
            "duration_s FROM run_attempts WHERE experiment_id = ? "
            "ORDER BY case_id, run_index, attempt",
            (experiment_id,),
        )
        return [dict(r) for r in rows]

    def status_counts(self) -> dict[str, dict[str, int]]:
        """Per experiment id, how many recorded runs have each status."""
        rows = self._db.execute(
            "SELECT experiment_id, status, COUNT(*) FROM runs GROUP BY experiment_id, status"
        )
        counts: dict[str, dict[str, int]] = {}
        for experiment_id, status, n in rows:
            counts.setdefault(experiment_id, {})[status] = n
        return counts

    def recorded(self, experiment_id: str) -> set[tuple[str, int]]:
        """(case, run index) of every recorded run."""
        rows = self._db.execute(
            "SELECT case_id, run_index FROM runs WHERE experiment_id = ?", (experiment_id,)
        )
        return {(r[0], r[1]) for r in rows}


MIN_SECRET = 8
"""Shorter values are not treated as secrets: blanking them would blank ordinary text."""
_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")


def secrets_from_environment() -> tuple[str, ...]:
    """Values of environment variables named like keys (OPENAI_API_KEY, HF_TOKEN...)."""
    found = {
        value
        for name, value in os.environ.items()
        if name.upper().endswith(_SECRET_SUFFIXES) and len(value) >= MIN_SECRET
    }
    return tuple(sorted(found, key=len, reverse=True))


def redact_all(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every secret value replaced by `***` (JSON text holds a key verbatim:
    keys are plain ASCII)."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def busy_timeout() -> float:
    """Seconds to wait for a store another process holds: $PASSHAT_BUSY_TIMEOUT or 30."""
    value = os.environ.get(BUSY_ENV, "")
    try:
        seconds = float(value) if value else 30.0
    except ValueError:
        raise StoreError(f"${BUSY_ENV} is {value!r}; give seconds, e.g. 30") from None
    if not seconds >= 0:
        raise StoreError(f"${BUSY_ENV} is {value!r}; give seconds, e.g. 30")
    return seconds


def explain(error: sqlite3.Error, timeout: float) -> str:
    """What an SQLite error means for the user, and what to do, in one line."""
    text = str(error)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return (
            f"the store stayed locked by another process for more than {timeout:g} s ({text}); "
            f"wait for it, or set ${BUSY_ENV} to wait longer"
        )
    if "readonly" in lowered or "read-only" in lowered:
        return (
            f"the store is read-only ({text}); reading commands (report, show, list) work on "
            "it, but running needs a writable --db"
        )
    if "full" in lowered:
        return f"the disk is full ({text}); free some space, then `passhat resume`"
    if "disk i/o" in lowered:
        return f"the disk failed to read or write ({text}); check the device, then retry"
    if "unable to open" in lowered:
        return f"the file cannot be opened ({text}); check the path and its permissions"
    return f"not a passhat database ({text}); give another --db path"


HEARTBEAT_S = 10.0
"""How often a running experiment renews its lease."""
LEASE_EXPIRY_S = 60.0
"""A lease not renewed for this long is taken over: its process or host is gone."""


def _age(heartbeat_at: float | None) -> float | None:
    return None if heartbeat_at is None else max(0.0, time.time() - heartbeat_at)


def _held(row: sqlite3.Row) -> bool:
    """Whether another process still holds this lease."""
    age = _age(row["heartbeat_at"])
    if age is not None and age > LEASE_EXPIRY_S:
        return False  # nobody renewed it: a process (or host) that is gone
    return row["host"] != _hostname() or _alive(row["pid"])


class _Heartbeat(threading.Thread):
    """Renews one lease every HEARTBEAT_S seconds, on a connection of its own."""

    def __init__(self, path: Path, experiment_id: str, timeout: float) -> None:
        super().__init__(name="passhat-lease", daemon=True)
        self.path, self.experiment_id, self.timeout = path, experiment_id, timeout
        self._stop_event = threading.Event()

    def run(self) -> None:
        key = (self.experiment_id, os.getpid(), _hostname())
        while not self._stop_event.wait(HEARTBEAT_S):
            try:
                with contextlib.closing(
                    sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
                ) as db:
                    db.execute(
                        "UPDATE leases SET heartbeat_at = ? "
                        "WHERE experiment_id = ? AND pid = ? AND host = ?",
                        (time.time(), *key),
                    )
            except sqlite3.Error:
                continue  # a busy or full store: try again at the next beat

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=self.timeout + 1)


def _writable(path: Path) -> bool:
    folder = path.resolve().parent
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _retire_attempt(db: sqlite3.Connection, run: RunRecord) -> None:
    """Move the errored attempt before `run` from `runs` to `run_attempts`, whole."""
    key = (run.experiment_id, run.case_id, run.run_index)
    row = db.execute(
        "SELECT * FROM runs WHERE experiment_id = ? AND case_id = ? AND run_index = ?", key
    ).fetchone()
    if row is None or row["status"] != "errored" or row["attempt"] != run.attempt - 1:
        found = "none" if row is None else f"attempt {row['attempt']}, {row['status']}"
        raise StoreError(
            f"run {run.run_index} of case {run.case_id!r}: attempt {run.attempt} replaces only "
            f"errored attempt {run.attempt - 1} (found {found}); a counted run is never re-run"
        )
    db.execute(
        "INSERT INTO run_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *key,
            row["attempt"],
            row["status"],
            row["error_type"],
            row["error_message"],
            row["started_at"],
            row["duration_s"],
            _to_json(dict(row)).decode("utf-8"),
        ),
    )
    db.execute("DELETE FROM runs WHERE experiment_id = ? AND case_id = ? AND run_index = ?", key)


def _insert_case_k(db: sqlite3.Connection, experiment: ExperimentRecord) -> None:
    """The runs asked of each case held below the experiment's k (e.g. a regrade of an
    experiment whose adaptive rounds held some cases)."""
    if experiment.case_k:
        db.executemany(
            "INSERT INTO case_k (experiment_id, case_id, k_requested) VALUES (?, ?, ?)",
            [(experiment.id, case, k) for case, k in experiment.case_k.items()],
        )


def _row(record: ExperimentRecord | RunRecord) -> dict[str, Any]:
    """A record's fields, shallow: `dataclasses.asdict` would deep-copy every transcript.
    An experiment's `case_k` and `adaptive` live in their own tables
    (`Store.hold_cases`, `Store.add_adaptive`)."""
    return {
        f.name: getattr(record, f.name)
        for f in fields(record)
        if f.name not in ("case_k", "adaptive")
    }


def _encode(value: Any) -> str:
    """JSON text for a column: pydantic-core's serializer, several times faster than
    json.dumps on a transcript; anything that is not JSON becomes its str().

    What even that cannot write (bytes that are not UTF-8, a lone surrogate, a
    structure that contains itself) is made safe first by `json_safe`: the run is
    recorded with those values escaped, never lost to an encoding error.
    """
    try:
        return _to_json(value, fallback=str, inf_nan_mode="null").decode("utf-8")
    except (ValueError, RecursionError):  # PydanticSerializationError is a ValueError
        return _to_json(json_safe(value), inf_nan_mode="null").decode("utf-8")


def _to_json(value: Any, **options: Any) -> bytes:
    """pydantic-core's `to_json`, imported on the first write: a command that only
    reads the store (report, show, list) never loads pydantic-core's schema module."""
    from pydantic_core import to_json

    return to_json(value, **options)


_MAX_DEPTH = 200
"""Deeper structures are cut (as their repr) rather than recursing without end."""


def json_safe(value: Any, _seen: frozenset[int] = frozenset(), _depth: int = 0) -> Any:
    """Plain JSON data for any value, keeping all it can and escaping the rest.

    Strings with lone surrogates keep them as `\\udXXX` escapes; bytes become
    their repr (`b'\\xff'`); a container met again inside itself becomes
    `"<circular reference>"`; other objects their str()."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return _safe_text(value)
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    if _depth > _MAX_DEPTH:
        return _safe_text(repr(value)[:1000])
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in _seen:
            return "<circular reference>"
        seen = _seen | {id(value)}
        if isinstance(value, dict):
            return {
                _safe_text(k if isinstance(k, str) else str(k)): json_safe(v, seen, _depth + 1)
                for k, v in value.items()
            }
        return [json_safe(v, seen, _depth + 1) for v in value]
    try:
        return _safe_text(str(value))
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def _safe_text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@functools.cache
def _from_json() -> Callable[[str], Any]:
    """pydantic-core's JSON reader, imported when first wanted (not at start-up: a
    report that fails early loads no pydantic), once (an import statement in a method
    called once per run cost 2 % of `report --json`)."""
    from pydantic_core import from_json

    return from_json


class LazyItems(Sequence[dict[str, Any]]):
    """A run's per-item results as the store keeps them (JSON text), decoded the first
    time they are read (`Store.summaries(decode_items=False)`). Empty exactly when the
    text is `[]`, which is what the store writes for a run without graded items: telling
    whether a run has items decodes nothing."""

    __slots__ = ("_items", "_text", "_what")

    def __init__(self, text: str, what: str) -> None:
        self._text = text
        self._what = what
        self._items: list[dict[str, Any]] | None = None

    def _read(self) -> list[dict[str, Any]]:
        items = self._items
        if items is None:
            items = self._items = _decode(self._text, self._what)
        return items

    def decoded(self) -> list[dict[str, Any]]:
        """The items, decoded now unless already read, and not kept: a reader that reads
        each value once (`report --json`) holds no decoded copy of every run's items.
        Parsed by pydantic-core (a quarter of `json.loads`'s time on these); text it
        refuses (an escaped lone surrogate) goes to `json.loads`, and so does text that
        is not JSON, for the damaged store's message."""
        items = self._items
        if items is not None:
            return items
        try:
            decoded: list[dict[str, Any]] = _from_json()(self._text)
        except ValueError:
            return _decode(self._text, self._what)  # type: ignore[no-any-return]
        return decoded

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._read()[index]

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._read())

    def __bool__(self) -> bool:
        return self._text != "[]"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyItems):
            other = other._read()
        return isinstance(other, list) and self._read() == other

    __hash__ = None  # type: ignore[assignment]  # equal to a list, which has no hash

    def __repr__(self) -> str:
        return repr(self._read())


def _run_json_checked(row: Sequence[Any]) -> RunJson:
    """A `Store.runs_json` row with a column SQLite found not valid JSON: decoded as
    `_run` decodes it (a damaged column is a StoreError) and written again."""
    where = f"run {row[1]} of case {row[0]!r}"
    columns = [
        _encode(_decode(text.decode("utf-8", "replace"), f"{key} of {where}")).encode("utf-8")
        for key, text in zip(_RUN_JSON, row[7:-1], strict=True)
    ]
    return RunJson(*row[:7], *columns)


def _decode(value: str, what: str) -> Any:
    try:
        return json.loads(value)
    except (TypeError, ValueError) as error:
        raise StoreError(f"the store is damaged: {what} is not JSON ({error})") from None


def _experiment(
    row: sqlite3.Row,
    case_k: dict[str, int] | None = None,
    adaptive: Sequence[dict[str, Any]] | None = None,
) -> ExperimentRecord:
    data: dict[str, Any] = dict(row)
    data["case_k"] = case_k or {}
    data["adaptive"] = tuple(adaptive or ())
    for key in _EXPERIMENT_JSON:
        data[key] = _decode(data[key], f"experiment {data.get('id')} {key}")
    data["case_ids"] = tuple(data["case_ids"])
    data["tools"] = tuple(data["tools"])
    return ExperimentRecord(**data)


def _run(row: sqlite3.Row) -> RunRecord:
    data: dict[str, Any] = dict(row)
    for key in _RUN_JSON:
        if key in data:
            where = f"run {data.get('run_index')} of case {data.get('case_id')!r}"
            data[key] = _decode(data[key], f"{key} of {where}")
    return RunRecord(**data)
