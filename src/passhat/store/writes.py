"""Writing the store: experiments, and each finished run whole in one transaction (the
key experiment, case, run index makes a second write of the same run an error, not a
second count); a later attempt of an errored run moves the earlier one to
run_attempts. Every record is sealed on its way in: JSON columns encoded, known
secrets blanked. A regrade's runs are copied by SQLite from their source, a batch at a
time, on a thread of its own while the next ones are graded (`add_experiment_with_copies`).
"""

from __future__ import annotations

import queue
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from passhat.errors import StoreError
from passhat.records import ExperimentRecord, RunRecord
from passhat.store.case_items import _CaseItems
from passhat.store.columns import (
    _EXPERIMENT_JSON,
    _RUN_COLUMNS,
    _RUN_JSON,
    _encode,
    _encode_small,
    _row,
    _safe_text,
    _to_json,
)
from passhat.store.connection import redact_all

_REGRADED = ("experiment_id", "case_hash", "status", "error_type", "error_message", "score")
"""What a regrade writes of a run; `Store.add_experiment_with_copies` copies the rest."""


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


COPIED_AT_ONCE = 1_000
"""Runs an overlapped `add_experiment_with_copies` hands its copying thread at a time."""


def _batched(rows: Iterable[tuple[Any, ...]], n: int) -> Iterator[list[tuple[Any, ...]]]:
    """`rows` `n` at a time (the last batch shorter)."""
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == n:
            yield batch
            batch = []
    if batch:
        yield batch


def _copied_meanwhile(
    db: sqlite3.Connection,
    copy: Callable[[sqlite3.Connection, list[tuple[Any, ...]]], int],
    batches: Iterator[list[tuple[Any, ...]]],
) -> int:
    """`copy(db, batch)` of each of `batches` on a thread of its own, while this thread
    makes the next (`db` is used by that thread alone meanwhile). The first error of
    either side (a Ctrl-C too) is raised here once the thread has stopped, and nothing
    after it is copied; the caller's transaction is then rolled back, by this thread,
    never while the other still uses `db`."""
    handed: queue.Queue[list[tuple[Any, ...]] | None] = queue.Queue(maxsize=2)
    failed: list[BaseException] = []
    written = 0

    def copier() -> None:
        nonlocal written
        while (batch := handed.get()) is not None:
            if failed:
                continue  # drained until the end is said, so that no put waits forever
            try:
                written += copy(db, batch)
            except BaseException as error:  # raised in the calling thread
                failed.append(error)

    thread = threading.Thread(target=copier, name="passhat-copy", daemon=True)
    thread.start()
    try:
        for batch in batches:
            handed.put(batch)
            if failed:
                break
    except BaseException as error:
        failed.insert(0, error)  # the batches handed over but not copied yet are dropped
    interrupted = _uninterrupted(lambda: handed.put(None))
    interrupted = _uninterrupted(thread.join) or interrupted
    if failed:
        raise failed[0]
    if interrupted is not None:
        raise interrupted
    return written


def _uninterrupted(wait: Callable[[], object]) -> BaseException | None:
    """`wait()` done whole even if a signal's exception (Ctrl-C) interrupts it: that
    exception is returned, to be raised once `db` is this thread's again."""
    caught: BaseException | None = None
    while True:
        try:
            wait()
            return caught
        except BaseException as error:
            caught = error


def _insert_case_k(db: sqlite3.Connection, experiment: ExperimentRecord) -> None:
    """The runs asked of each case held below the experiment's k (e.g. a regrade of an
    experiment whose adaptive rounds held some cases)."""
    if experiment.case_k:
        db.executemany(
            "INSERT INTO case_k (experiment_id, case_id, k_requested) VALUES (?, ?, ?)",
            [(experiment.id, case, k) for case, k in experiment.case_k.items()],
        )


_ID = re.compile(r"[0-9a-f]{8}")
"""Experiment ids: 8 hex digits (runner.new_experiment)."""


class _Writes(_CaseItems):
    """Experiments and runs written, each write one transaction."""

    def _encode(self, value: Any) -> str:
        return redact_all(_encode(value), self.secrets)

    def _text(self, value: Any) -> Any:
        """A text column's value as written: a lone surrogate escaped (a judge's or an
        agent's answer quoted in an error message: SQLite's UTF-8 cannot hold it, and the
        write ended the experiment in a traceback), the known secrets blanked."""
        return redact_all(_safe_text(value), self.secrets) if isinstance(value, str) else value

    def _sealed(self, record: ExperimentRecord | RunRecord) -> dict[str, Any]:
        """The row written for `record`: JSON columns encoded, and every text column
        (traceback, stderr, error message, output, transcript, tool calls, ...) with the
        known secrets blanked. Every record goes through here on its way in, so what
        `show`, reports and exports read holds no key."""
        row = _row(record)
        if isinstance(record, RunRecord):
            for key in _RUN_JSON:
                row[key] = _encode(row[key])
        else:
            for key in _EXPERIMENT_JSON:
                row[key] = _encode_small(row[key])
        if row.get("ran_on", "") is None:  # NULL by default: a local run names no worker
            del row["ran_on"]
        return {k: self._text(v) for k, v in row.items()}

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

    def record_run(self, run: RunRecord) -> None:
        """Write one finished run whole, in one transaction; the same run twice is an error.

        A later attempt (`run.attempt > 1`) replaces the errored attempt before it,
        which moves, whole, to `run_attempts`: only an errored run is ever re-run."""
        self.record_runs([run])

    def checkpoint_every(self, pages: int) -> None:
        """Have SQLite copy the write-ahead log into the database file once it holds
        `pages` pages (its default: 1,000), on the thread whose commit crosses that."""
        self._db.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")

    def checkpoint_now(self, pages: int) -> None:
        """Copy the write-ahead log into the database file now, as far as no reader
        holds it back (a passive checkpoint), then space the next copies `pages` pages
        apart (`checkpoint_every`). On the writer's thread, between its commits."""
        self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        self.checkpoint_every(pages)

    def cache_at_most(self, kib: int) -> None:
        """Have SQLite keep at most `kib` KiB of pages in this connection's caches, of
        the store and of its temporary tables (SQLite's default: 2,000 KiB each): for a
        command that reads or copies each page about once (a regrade)."""
        self._db.execute(f"PRAGMA cache_size={-int(kib)}")
        self._db.execute(f"PRAGMA temp.cache_size={-int(kib)}")

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
        self,
        experiment: ExperimentRecord,
        source_id: str,
        runs: Iterable[RunRecord],
        *,
        overlapped: bool = False,
    ) -> int:
        """`add_experiment_with_runs` for runs that differ from experiment `source_id`'s
        only in their experiment, case hash, verdict, error and score (a regrade): those
        are written from each run, and SQLite copies every other column from the source's
        run as stored. A transcript, output or tool call is never read into Python, so a
        regrade of runs with long transcripts costs what their scoring costs.

        `overlapped`: `runs` reads nothing through this store (`passhat regrade` reads
        them through a store of its own): SQLite then copies them `COPIED_AT_ONCE` at a
        time on a thread of its own, and releases the GIL while it copies, as the
        calling thread reads and grades the next ones (the copy was about half of a
        regrade's wall, after all the grading). Still one transaction: all or nothing."""
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
                    *(self._text(v) for v in written),
                    self._encode(run.score),
                )

        def copy(db: sqlite3.Connection, batch: list[tuple[Any, ...]]) -> int:
            """`batch` into temp.regraded, then their runs copied; the table left empty.
            Each statement is one step of SQLite's (many rows a statement, never one a
            statement): a thread that copies takes the GIL back once a statement."""
            at_once = max(1, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // 7)
            for start in range(0, len(batch), at_once):
                rows = batch[start : start + at_once]
                db.execute(
                    "INSERT INTO temp.regraded VALUES "
                    + ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(rows)),
                    [value for row in rows for value in row],
                )
            written = db.execute(insert, (experiment.id, source_id)).rowcount
            if written != len(batch):  # a run the source lacks (its key refuses one twice)
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

        def write(db: sqlite3.Connection) -> int:
            db.execute(
                "CREATE TEMP TABLE IF NOT EXISTS regraded (case_id TEXT NOT NULL, "
                "run_index INTEGER NOT NULL, case_hash TEXT, status TEXT, error_type TEXT, "
                "error_message TEXT, score TEXT, PRIMARY KEY (case_id, run_index)) WITHOUT ROWID"
            )
            db.execute("DELETE FROM temp.regraded")
            batches = _batched(verdicts(), COPIED_AT_ONCE)
            if not overlapped:
                return sum(copy(db, batch) for batch in batches)
            return _copied_meanwhile(db, copy, batches)

        return self._add_experiment(experiment, write)

    def _add_experiment(
        self, experiment: ExperimentRecord, write_runs: Callable[[sqlite3.Connection], int]
    ) -> int:
        """Insert `experiment`, then its runs by `write_runs`, in one transaction."""
        self._check_name(experiment.name)
        row = self._sealed(experiment)
        insert = f"INSERT INTO experiments ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})"
        values = list(row.values())
        # its JSON text (a regrade of 10,000 cases: ids, hashes and goal hashes of each,
        # 1.4 MB) let go once written, not held while the runs are
        del row
        try:
            with self.atomic() as db:
                db.execute(insert, values)
                del values
                _insert_case_k(db, experiment)
                written = write_runs(db)
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
        self.keep_case_items(experiment.id)  # each case's items kept for `report --json`
        return written
