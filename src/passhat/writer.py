"""Write finished runs to the store with group commits on one thread.

Each worker hands its finished run over and waits for that run's commit, as
before; but the writer thread commits everything that has arrived meanwhile in
one transaction (a batch of whole runs: each is written whole, or not at all).
So "a run counts as recorded once its commit returns" holds exactly as it did
for progress, Ctrl-C and resume, while 50 runs finishing together cost one
commit, not 50 commits that each worker waits for in turn.

    async with RunWriter(store, progress) as writer:
        await writer.put(record)      # returns once the run's commit has returned

The runner does not wait for each commit: `hand_over` returns at once while
fewer than `limit` runs are handed over and not yet committed (so a slow commit,
say a WAL checkpoint's fsync, does not hold back the next runs), and `drain`
waits for the last commits. A run still counts as recorded (`recorded` is told)
only once its commit has returned; a store error stops the runner at its next
`hand_over` or at `drain`. Handed-over runs wait up to `linger` seconds for
company before their commit (unless `limit / 2` of them wait already, or the
runner waits for room or drains): runs that finish a few milliseconds apart (50
agents started together, then staggered) share one commit and one wake-up of the
thread instead of taking one each, away from the event loop that fires their
timers. A run waiting so is not recorded yet: killed then, it stays missing and
`resume` runs it again, as a run killed in flight does.

Leaving the block (normally, on an error or on cancel) writes every run handed
over before returning. A batch that fails is written again run by run, so one
bad run fails alone (its `put` raises) and the others are recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import sys
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from passhat._gc import gc_paused, set_aside
from passhat.errors import ConfigError
from passhat.records import RunRecord
from passhat.store import Store

_Item = tuple[RunRecord, "asyncio.Future[None] | None"]
"""A run to write, and the future its `put` waits on (None: handed over or kept, counted
in `_in_flight` and settled in place: no future and no callback a run)."""
_Outcome = tuple[_Item, BaseException | None]


WAL_PAGES = 100
"""While the writer commits runs, SQLite copies its write-ahead log into the database
every 100 pages (400 KB), on the writer thread between batches, rather than every 1,000:
closing the store after the last run (`passhat run` before its end report) had 4 MB of
runs left to copy, 20-40 ms at load 11; about half of that now."""

SQLITE_WAL_PAGES = 1000
"""SQLite's own spacing, set back once the runs are written (or once the last runs are
under way: RunWriter.linger_no_more)."""

KEPT_AT_MOST = 256
"""Committed runs whose follow-up (`RunWriter(written=...)`) may wait for the writer
thread to be idle: a writer that never is (instant agents) still makes it every 256
runs, and does not hold every record in memory."""


WARM_UP = ("pydantic_core", "passhat.report.parts_json")
"""What the writer thread imports before its first commit: the runs' JSON encoder
(pydantic-core, 15-20 ms of CPU) and what the store's `keep_case_items` makes each
case's items with once the runs are written (`report.parts_json`, 13-15 ms). The
experiment's own row needs neither. Imported on the loop's thread after the last run,
the second held up the experiment's end: the lease's release after 1,000 runs took
68-92 ms at load 8, 24-27 ms with it imported here."""


def _warm() -> None:
    """Import WARM_UP where it is not imported yet (a failure is left for the first use
    to meet, and say), with no collection meanwhile, and what they made set aside with
    the heap while runs are in flight (_gc.set_aside)."""
    if all(name in sys.modules for name in WARM_UP):
        return
    with gc_paused():
        for name in WARM_UP:
            if name not in sys.modules:
                with contextlib.suppress(ImportError):
                    importlib.import_module(name)
        set_aside()


def _said(done: Future[None]) -> None:
    """Log what a `written` call raised (a bug: the runs it was given are recorded, and
    what it does for them is done again where the writer ends)."""
    error = done.exception()
    if error is not None:
        logging.getLogger("passhat").error(
            "passhat: after a commit, the written runs' follow-up failed (a bug in passhat)",
            exc_info=error,
        )


class RunWriter:
    """One writer thread for one experiment's runs; use as `async with`.

    The event loop collects the runs that finish while a commit is in flight and
    hands them to the thread as one batch: one thread wake-up per commit, not
    one per run."""

    def __init__(
        self,
        store: Store,
        recorded: Callable[[RunRecord], None] | None = None,
        *,
        linger: float = 0.0,
        written: Callable[[list[RunRecord]], None] | None = None,
    ) -> None:
        self._store = store
        self._recorded = recorded
        self._written = written
        """Called on the writer thread with the committed runs once their batches are
        settled and no batch waits (or KEPT_AT_MOST runs wait for it), before the next
        batch is written (the runner keeps the items of the cases they complete:
        `Store.keep_case_items`)."""
        self._linger = linger
        """Seconds a handed-over run may wait for others to share its commit."""
        self._urgent = False
        """The next commit waits for nobody (a `put`, a full batch, `drain`, no room)."""
        self._hurry: asyncio.Future[None] | None = None
        """Set by `_hurry_up` to end a linger under way."""
        self._pending: list[_Item] = []
        self._outcomes: deque[list[_Outcome]] = deque()
        self._flusher: asyncio.Task[None] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="passhat-store")
        self._warming = False
        self._ending = False
        """The log is copied (`checkpoint_soon`), or the block ends: once."""
        self._last = False
        """The last runs are finishing (`linger_no_more`)."""
        self._shut = False
        """The block has ended: its thread takes no more work (a flush whose commit was
        in flight as a stop ended the block settles its runs, and calls no `written`; one
        that lingered writes nothing: the block wrote its runs)."""
        self._kept: list[RunRecord] = []
        """Runs committed whose follow-up (`written`) waits for the writer to be idle."""
        store.checkpoint_every(WAL_PAGES)
        self._in_flight = 0
        """Runs handed over (`hand_over`) whose commit has not returned yet."""
        self._room: asyncio.Future[None] | None = None
        """Set when a handed-over run's commit returns: wakes a `hand_over` or `drain`."""
        self._failed: BaseException | None = None
        """The store's first error for a handed-over run."""
        self._loop: asyncio.AbstractEventLoop | None = None
        """The event loop the block runs on (`keep` is called there only)."""

    async def __aenter__(self) -> RunWriter:
        self._loop = asyncio.get_running_loop()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        # Block the loop until every run handed over is written: a cancel must not
        # drop a finished run.
        self._ending = True  # no checkpoint asked of a thread that is ending
        self._follow_up()
        self._shut = True  # nor a follow-up (a flush that resumes after this block's end)
        self._executor.shutdown(wait=True)
        self._settle()
        if self._pending:
            batch, self._pending = self._pending, []
            self._outcomes.append(self._write(batch))
            self._settle()
        self._store.checkpoint_every(SQLITE_WAL_PAGES)

    async def put(self, record: RunRecord) -> None:
        """Write a finished run; return once its commit has returned (then it is recorded
        and `recorded` has been told), or raise the store's error for it."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((record, done))
        self._start_flush()
        self._hurry_up()  # its caller waits for the commit
        await done

    async def hand_over(self, record: RunRecord, limit: int) -> None:
        """Write a finished run without waiting for its commit; wait only while `limit`
        runs handed over are not yet committed. Raises the store's error for a run
        handed over earlier (the first one): the runs after it are not written."""
        self._raise_failed()
        self._add(record)
        self._start_flush()
        if len(self._pending) >= max(1, limit // 2):
            self._hurry_up()
        while self._in_flight >= max(1, limit) and self._failed is None:
            await self._wait_for_room()
        self._raise_failed()

    def keep(self, record: RunRecord) -> None:
        """Write a finished run by the end of the block: a run an executor finished and
        could not yield, its iterator closed on a stop (`Job.keep`). On the block's event
        loop only: from another thread (a Dask client's loop, an executor's own), the
        runs waiting for their commit were changed under the loop, and the run's future
        made on no loop or on that one. ConfigError there, naming the fix."""
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is not self._loop:
            raise ConfigError(
                "the executor called job.keep off the experiment's event loop (from another "
                "thread or loop); call it there: loop.call_soon_threadsafe(job.keep, record)"
            )
        self._add(record)

    def _add(self, record: RunRecord) -> None:
        self._in_flight += 1
        self._pending.append((record, None))

    def warm_up(self) -> None:
        """Have the writer thread import WARM_UP now, while the runs wait on their agents
        (the runner asks once every slot's first run has started: at the writer's start,
        those imports held the interpreter from the loop starting them). Without it the
        first commit imports them, before any run is reported recorded: so before the end
        report's own warm-up starts (cli/_events.py), and no two threads import into each
        other's modules."""
        if not self._warming:
            self._warming = True
            self._executor.submit(_warm)

    def linger_no_more(self) -> None:
        """Commit each run as it comes from now on, and cut a linger under way: every
        planned run has started, so the runs still in flight are the experiment's last,
        and company for their commits would only make the end wait (the last batch,
        some 25 runs of a 50-wide experiment, was encoded and committed after the last
        agent returned: 5-6 ms of its wall). The follow-up of their commits (`written`)
        waits for the block's end, where it is made once: made between them, it held
        the last runs' commits back."""
        self._linger = 0.0
        self._last = True
        self._hurry_up()

    def checkpoint_soon(self) -> None:
        """Copy the write-ahead log into the database file now, on the writer thread, and
        not again before SQLite's own spacing: the runner asks as the plan's last run is
        handed out, a wave of runs before the end. A commit of the last runs that crossed
        WAL_PAGES copied and synced the log first, the runs after it waiting (4-6 ms of a
        50-wide experiment's end)."""
        if not self._ending:
            self._ending = True
            self._executor.submit(self._store.checkpoint_now, SQLITE_WAL_PAGES)

    async def drain(self) -> None:
        """Wait until every run handed over is committed; raise the store's first error."""
        while self._in_flight and self._failed is None:
            await self._wait_for_room()
        self._raise_failed()

    async def _wait_for_room(self) -> None:
        self._hurry_up()  # nothing comes to share the commit while the runner waits
        if self._room is None or self._room.done():
            self._room = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._room)

    def _landed(self, error: BaseException | None) -> None:
        """A handed-over run's commit returned (`error`: the store's, for it)."""
        self._in_flight -= 1
        if error is not None and self._failed is None:
            self._failed = error
        if self._room is not None and not self._room.done():
            self._room.set_result(None)

    def _raise_failed(self) -> None:
        if self._failed is not None:
            raise self._failed

    def _start_flush(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    def _hurry_up(self) -> None:
        self._urgent = True
        if self._hurry is not None and not self._hurry.done():
            self._hurry.set_result(None)

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            if self._linger > 0 and not self._urgent:
                # runs finishing meanwhile join this commit (cut short by _hurry_up)
                self._hurry = loop.create_future()
                await asyncio.wait({self._hurry}, timeout=self._linger)
                self._hurry = None
                if self._shut:  # the block ended meanwhile: it wrote the runs itself
                    return
            self._urgent = False
            batch, self._pending = self._pending, []
            outcomes = await loop.run_in_executor(self._executor, self._write, batch)
            self._outcomes.append(outcomes)
            self._settle()
            if self._written is not None:
                self._kept += [record for (record, _), error in outcomes if error is None]
                # not before a batch that waits, nor between the last runs' commits: they
                # came after the follow-up of the runs before them (1-2 ms each)
                if len(self._kept) >= KEPT_AT_MOST or not (self._pending or self._last):
                    self._follow_up()

    def _follow_up(self) -> None:
        """`written` for the committed runs waiting for it, on the writer thread (none once
        the block has ended: the lease's end keeps every case's items)."""
        if self._written is not None and self._kept and not self._shut:
            written, self._kept = self._kept, []
            self._executor.submit(self._written, written).add_done_callback(_said)

    def _write(self, batch: list[_Item]) -> list[_Outcome]:
        """On the writer thread: one transaction for the batch."""
        _warm()
        try:
            self._store.record_runs([record for record, _ in batch])
        except Exception as error:
            if len(batch) == 1:
                return [(batch[0], error)]
            # one bad run must not take the others down: write them one at a time
            outcomes: list[_Outcome] = []
            for item in batch:
                try:
                    self._store.record_run(item[0])
                except Exception as single:
                    outcomes.append((item, single))
                else:
                    outcomes.append((item, None))
            return outcomes
        return [(item, None) for item in batch]

    def _settle(self) -> None:
        """On the loop: report each recorded run, then release its worker."""
        while self._outcomes:
            for (record, done), error in self._outcomes.popleft():
                if error is None and self._recorded is not None:
                    self._recorded(record)
                if done is None:
                    self._landed(error)
                    continue
                if done.done():
                    continue
                if error is None:
                    done.set_result(None)
                else:
                    done.set_exception(error)
