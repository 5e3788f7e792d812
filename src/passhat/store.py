"""The SQLite store: the one module that touches `sqlite3`.

WAL journal, a busy timeout, and schema changes as named migrations recorded
in the database. Each finished run is written whole in one transaction; the
key (experiment, case, run index) makes a second write of the same run an
error instead of a second count. The store keeps records; it computes nothing.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

from pydantic_core import to_json

from passhat.errors import StoreError
from passhat.records import ExperimentRecord, RunRecord

DB_ENV = "PASSHAT_DB"
_ID = re.compile(r"[0-9a-f]{8}")
"""Experiment ids: 8 hex digits (runner.new_experiment)."""
DEFAULT_DB = "passhat.db"

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
        "record a user environment's source hash",
        "ALTER TABLE experiments ADD COLUMN environment_hash TEXT;",
    ),
]

_EXPERIMENT_JSON = ("model_config", "params", "case_ids", "case_hashes", "tools", "source")
_RUN_JSON = ("output", "final_state", "score", "transcript", "tool_calls", "retries")
_RUN_LIGHT = (
    "experiment_id, case_id, run_index, case_hash, status, error_type, error_message, "
    "score, tool_calls, started_at, duration_s, input_tokens, output_tokens, seed, retries, "
    "model_source"
)


def default_db_path() -> Path:
    """`$PASSHAT_DB` if set, else ./passhat.db."""
    return Path(os.environ.get(DB_ENV) or DEFAULT_DB)


class Store:
    """An open passhat database.

    One connection; it may be handed to one writer thread at a time (the runner
    does so), never used from two threads at once.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StoreError(
                f"{self.path}: no passhat store here; run `passhat run SUITE` first, or give "
                f"--db (or ${DB_ENV}) the store's path"
            )
        try:
            self._db = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open the database ({error})") from None
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.execute("PRAGMA foreign_keys=ON")
            if not create:
                self._check_is_ours()
            self._migrate()
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise StoreError(
                f"{self.path}: not a passhat database ({error}); give another --db path"
            ) from None

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
        """One transaction: everything inside is written, or nothing."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

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
                for statement in sql.split(";"):
                    if statement.strip():
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
        row = _row(experiment)
        for key in _EXPERIMENT_JSON:
            row[key] = _encode(row[key])
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            with self.atomic() as db:
                db.execute(
                    f"INSERT INTO experiments ({columns}) VALUES ({marks})", list(row.values())
                )
        except sqlite3.IntegrityError:
            raise StoreError(
                f"an experiment named {experiment.name!r} exists already; choose another --name"
            ) from None

    def set_k(self, experiment_id: str, k: int) -> None:
        """Raise the requested k (resume with a larger k)."""
        with self.atomic() as db:
            db.execute("UPDATE experiments SET k_requested = ? WHERE id = ?", (k, experiment_id))

    def experiments(self) -> list[ExperimentRecord]:
        """All experiments, oldest first."""
        rows = self._db.execute("SELECT * FROM experiments ORDER BY created_at, rowid")
        return [_experiment(row) for row in rows]

    def experiment(self, ref: str) -> ExperimentRecord:
        """An experiment by id, unique name, or `latest`."""
        if ref == "latest":
            row = self._db.execute(
                "SELECT * FROM experiments ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: no experiment yet; start one with `passhat run`")
            return _experiment(row)
        row = self._db.execute(
            "SELECT * FROM experiments WHERE id = ? OR name = ?", (ref, ref)
        ).fetchone()
        if row is None:
            known = ", ".join(e.name or e.id for e in self.experiments()[-5:]) or "none"
            raise StoreError(
                f"{self.path}: no experiment {ref!r}; give an id, a name or 'latest' "
                f"(recent: {known}; `passhat list` shows all)"
            )
        return _experiment(row)

    # leases: one process runs an experiment at a time

    @contextmanager
    def lease(self, experiment_id: str) -> Iterator[None]:
        """Hold the experiment for this process; a lease whose process died is taken over."""
        self._acquire(experiment_id)
        try:
            yield
        finally:
            with self.atomic() as db:
                db.execute(
                    "DELETE FROM leases WHERE experiment_id = ? AND pid = ? AND host = ?",
                    (experiment_id, os.getpid(), socket.gethostname()),
                )

    def _acquire(self, experiment_id: str) -> None:
        pid, host = os.getpid(), socket.gethostname()
        with self.atomic() as db:
            row = db.execute(
                "SELECT pid, host, taken_at FROM leases WHERE experiment_id = ?", (experiment_id,)
            ).fetchone()
            held = row is not None and (row["pid"], row["host"]) != (pid, host)
            if held and (row["host"] != host or _alive(row["pid"])):
                raise StoreError(
                    f"experiment {experiment_id} is being run by process {row['pid']} on "
                    f"{row['host']} since {row['taken_at']}; wait for it to finish or stop it"
                )
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES "
                "(?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (experiment_id, pid, host),
            )

    # runs

    def record_run(self, run: RunRecord) -> None:
        """Write one finished run whole, in one transaction; the same run twice is an error."""
        row = _row(run)
        for key in _RUN_JSON:
            row[key] = _encode(row[key])
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            with self.atomic() as db:
                db.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(row.values()))
        except sqlite3.IntegrityError as error:
            raise StoreError(
                f"run {run.run_index} of case {run.case_id!r} is already recorded in experiment "
                f"{run.experiment_id} ({error}); it is never counted twice"
            ) from None
        except sqlite3.Error as error:
            raise StoreError(
                f"{self.path}: run {run.run_index} of case {run.case_id!r} could not be written "
                f"({error}); it stays missing, and `passhat resume` runs it again"
            ) from None

    def add_experiment_with_runs(
        self, experiment: ExperimentRecord, runs: Iterable[RunRecord]
    ) -> int:
        """Store an experiment and all its runs in one transaction (imports, audits,
        regrades): it lands whole or not at all. Returns the number of runs written."""
        self._check_name(experiment.name)
        row = _row(experiment)
        for key in _EXPERIMENT_JSON:
            row[key] = _encode(row[key])
        written = 0
        try:
            with self.atomic() as db:
                db.execute(
                    f"INSERT INTO experiments ({', '.join(row)}) VALUES "
                    f"({', '.join('?' for _ in row)})",
                    list(row.values()),
                )
                for run in runs:
                    run_row = _row(run)
                    for key in _RUN_JSON:
                        run_row[key] = _encode(run_row[key])
                    db.execute(
                        f"INSERT INTO runs ({', '.join(run_row)}) VALUES "
                        f"({', '.join('?' for _ in run_row)})",
                        list(run_row.values()),
                    )
                    written += 1
        except sqlite3.IntegrityError as error:
            raise StoreError(
                f"experiment {experiment.name or experiment.id} could not be stored ({error}); "
                "nothing was written (an experiment name must be unique: choose another --name)"
            ) from None
        return written

    def runs(self, experiment_id: str, *, full: bool = True) -> list[RunRecord]:
        """The runs of an experiment by case and index; `full=False` skips the heavy columns."""
        columns = "*" if full else _RUN_LIGHT
        rows = self._db.execute(
            f"SELECT {columns} FROM runs WHERE experiment_id = ? ORDER BY case_id, run_index",
            (experiment_id,),
        )
        return [_run(row) for row in rows]

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

    def recorded(self, experiment_id: str) -> set[tuple[str, int]]:
        """(case, run index) of every recorded run."""
        rows = self._db.execute(
            "SELECT case_id, run_index FROM runs WHERE experiment_id = ?", (experiment_id,)
        )
        return {(r[0], r[1]) for r in rows}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _row(record: ExperimentRecord | RunRecord) -> dict[str, Any]:
    """A record's fields, shallow: `dataclasses.asdict` would deep-copy every transcript."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


def _encode(value: Any) -> str:
    """JSON text for a column: pydantic-core's serializer, several times faster than
    json.dumps on a transcript; anything that is not JSON becomes its str()."""
    return to_json(value, fallback=str, inf_nan_mode="null").decode("utf-8")


def _decode(value: str, what: str) -> Any:
    try:
        return json.loads(value)
    except (TypeError, ValueError) as error:
        raise StoreError(f"the store is damaged: {what} is not JSON ({error})") from None


def _experiment(row: sqlite3.Row) -> ExperimentRecord:
    data: dict[str, Any] = dict(row)
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
