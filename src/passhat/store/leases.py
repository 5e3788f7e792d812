"""Leases: one process runs an experiment at a time. The holder renews its lease from a
thread with a connection of its own; a lease whose process died on this host, or that
nobody renewed for LEASE_EXPIRY_S seconds, is taken over.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from passhat._proc import pid_alive
from passhat.errors import StoreError
from passhat.store.case_items import _CaseItems


def _hostname() -> str:
    """This machine's name, for a writer's lease (imported here: a report reads no lease)."""
    import socket

    return socket.gethostname()


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
    return row["host"] != _hostname() or pid_alive(row["pid"])


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


class _Leases(_CaseItems):
    """Taking, renewing, releasing and breaking an experiment's lease."""

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
        try:  # the runs written: each case's items and the figures kept for `report --json`
            self.keep_case_items(experiment_id)
            self.keep_summary(experiment_id)
        finally:
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
