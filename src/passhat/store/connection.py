"""One connection to a store: where it is ($PASSHAT_DB), how long to wait for a lock
($PASSHAT_BUSY_TIMEOUT), transactions (`atomic`), what an SQLite error means for the
user, and the secret values (API keys) blanked out of everything written.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from passhat.errors import StoreError

DB_ENV = "PASSHAT_DB"


BUSY_ENV = "PASSHAT_BUSY_TIMEOUT"


DEFAULT_DB = "passhat.db"


def default_db_path() -> Path:
    """`$PASSHAT_DB` if set, else ./passhat.db."""
    return Path(os.environ.get(DB_ENV) or DEFAULT_DB)


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
    if not 0 <= seconds <= MAX_BUSY_S:  # inf or 1e30: OverflowError tracebacks (SQLite's
        # busy timeout in ms, the lease heartbeat's join), the latter after the runs
        raise StoreError(
            f"${BUSY_ENV} is {value!r}; give seconds, at most {MAX_BUSY_S:,} (a day), e.g. 30"
        )
    return seconds


MAX_BUSY_S = 86_400
"""The longest $PASSHAT_BUSY_TIMEOUT: a day."""


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
    if "malformed" in lowered:
        return (
            f"the store file is damaged ({text}); restore it from a copy, or keep what "
            "is left: sqlite3 DAMAGED .recover | sqlite3 NEW.db"
        )
    if "unable to open" in lowered:
        return f"the file cannot be opened ({text}); check the path and its permissions"
    return f"not a passhat database ({text}); give another --db path"


FILE_STATES = ("locked", "busy", "readonly", "read-only", "full", "disk i/o", "unable to open")
"""Words of SQLite errors that tell the state of the file (a lock, its mode, the disk),
not the statement that met it: said of the store when one of its reads meets them."""
CHECK_S = 10.0
"""How long `damaged` looks (PRAGMA quick_check reads every page: ~GB/s): past it, the
look ends unanswered."""


def damaged(path: str | Path, limit_s: float = CHECK_S) -> bool:
    """Whether the store file at `path` is damaged: PRAGMA quick_check, read-only, finds
    a problem (or cannot read the file as a database). False when it finds none, and
    when it cannot answer (the file missing, locked or no regular file, the look past
    `limit_s`)."""
    import time

    uri = "file:" + urllib.parse.quote(str(Path(path).resolve()))
    deadline = time.monotonic() + limit_s
    try:  # a FIFO there would hold SQLite's open until a writer came: for ever
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
    except OSError:
        return False
    try:
        db = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=1.0, check_same_thread=False)
    except sqlite3.Error:
        return False
    try:
        db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
        found = db.execute("PRAGMA quick_check(1)").fetchone()
        return found is None or found[0] != "ok"
    except sqlite3.DatabaseError as error:
        lowered = str(error).lower()
        return not any(word in lowered for word in (*FILE_STATES, "interrupt"))
    finally:
        db.close()


def _refuse_special(path: Path) -> None:
    """A StoreError when `path` is a FIFO, a socket or a device: SQLite would wait on a
    FIFO's writer for ever (PASSHAT_DB=/some/fifo hung every command)."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return  # missing or unreadable: said where the store is opened
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise StoreError(
            f"{path}: not a file (a FIFO, socket or device); give --db (or ${DB_ENV}) "
            "the path of a store file"
        )


def _writable(path: Path) -> bool:
    folder = path.resolve().parent
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


class _Connection:
    """The connection every room of the store shares: its path, its mode, its secrets
    (set by `Store.__init__`)."""

    path: Path
    read_only: bool
    busy_timeout: float
    secrets: tuple[str, ...]
    _leased: set[str]
    _db: sqlite3.Connection

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

    def add_secrets(self, values: Iterable[str]) -> None:
        """Also blank these values (a provider's key) out of everything written."""
        found = [v for v in values if len(v) >= MIN_SECRET and v not in self.secrets]
        self.secrets = tuple(sorted({*self.secrets, *found}, key=len, reverse=True))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the store as it was at the first
        (a report that reads an experiment in several queries while a run writes to it
        reads one state of it). Nothing is written; the transaction is let go after."""
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")

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
