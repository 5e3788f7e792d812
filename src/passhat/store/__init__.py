"""The SQLite store: the one package that touches `sqlite3`.

WAL journal, a busy timeout, and schema changes as named migrations recorded
in the database. Each finished run is written whole in one transaction; the
key (experiment, case, run index) makes a second write of the same run an
error instead of a second count. The store keeps records; it computes nothing.

`Store` is one open store, joined here from the package's rooms (each a mixin over
the shared connection; `from passhat.store import X` reaches every public name):

    connection.py   the connection: path, busy timeout, transactions, errors, secrets
    schema.py       migrations, and a file that is not a passhat store refused
    columns.py      records as rows: the JSON columns and how values are encoded
    writes.py       experiments and runs written, each write one transaction
    reads.py        experiments, runs and the report's summaries read back
    tallies.py      per-case totals of the runs counted in SQL (a terminal report's)
    case_items.py   each case's items of `report --json` kept as text, filled by writers
    leases.py       one process runs an experiment at a time
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from passhat.errors import StoreError
from passhat.store.columns import json_safe as json_safe
from passhat.store.connection import BUSY_ENV as BUSY_ENV
from passhat.store.connection import DB_ENV as DB_ENV
from passhat.store.connection import DEFAULT_DB as DEFAULT_DB
from passhat.store.connection import MIN_SECRET as MIN_SECRET
from passhat.store.connection import _refuse_special
from passhat.store.connection import busy_timeout as busy_timeout
from passhat.store.connection import default_db_path as default_db_path
from passhat.store.connection import explain as explain
from passhat.store.connection import redact_all as redact_all
from passhat.store.connection import secrets_from_environment as secrets_from_environment
from passhat.store.leases import HEARTBEAT_S as HEARTBEAT_S
from passhat.store.leases import LEASE_EXPIRY_S as LEASE_EXPIRY_S
from passhat.store.leases import _Leases
from passhat.store.reads import _SUMMARY as _SUMMARY
from passhat.store.reads import LazyItems as LazyItems
from passhat.store.reads import RunNumbers as RunNumbers
from passhat.store.reads import tool_counts_of as tool_counts_of
from passhat.store.schema import MIGRATIONS as MIGRATIONS
from passhat.store.schema import _Schema, create_private
from passhat.store.tallies import CaseTally as CaseTally
from passhat.store.tallies import Tallies as Tallies
from passhat.store.tallies import _Tallies
from passhat.store.writes import _Writes


class Store(_Schema, _Writes, _Leases, _Tallies):
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
        _refuse_special(self.path)
        if not create and not self.path.exists():
            raise StoreError(
                f"{self.path}: no passhat store here; run `passhat run SUITE` first, or give "
                f"--db (or ${DB_ENV}) the store's path"
            )
        if create and not read_only:
            create_private(self.path)
        self._db = self._connect(read_only)
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            self._check_is_ours()  # before any pragma that writes (journal_mode)
            if not read_only:
                # NORMAL before the switch: a new store's switch into WAL writes its first
                # page through a rollback journal, and at the default FULL synced it once
                # more (4 fsyncs, not 3); one transaction per run needs no more than NORMAL
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._into_wal()
            self._db.execute("PRAGMA foreign_keys=ON")
            if read_only:
                self._check_schema_current()
            else:
                self._migrate()
            self._check_no_foreign_objects()
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise StoreError(f"{self.path}: {self._explain(error)}") from None
        except StoreError:
            self._db.close()
            raise

    def _check_schema_current(self) -> None:
        if self._behind():
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
