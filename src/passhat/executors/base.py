"""The executor protocol: what runs the planned (case, index) pairs of an experiment.

The runner plans which runs are missing and writes each finished run to the
store; an executor only runs them. It is handed a `Job` (everything a run needs
besides its case and index) and an iterator of (case id, run index) work items,
and yields one whole `RunRecord` per run as each finishes. The local asyncio
executor and the Dask executor are two implementations; a user's comes through
the same door (`--executor package.module:name`, or `executor=` in Python).

The contract, which the runner relies on for honest accounting:

- each work item is run at most once and yields at most one record; an item
  that could not be run (its worker died too often) yields nothing and stays
  missing, so `passhat resume` runs it again (an executor may list such items
  in a `left_missing` attribute: the CLI names them);
- never more than `job.options.concurrency` runs under way at once, and the
  work items are read lazily (a million planned runs never become a million
  futures); an executor that sends runs in batches, each batch's runs one after
  another (the Dask one, for short runs: `batching.py`), keeps at most that
  many batches in flight;
- the executor never writes the store: the driver alone does, one transaction
  per run;
- closing the iterator early (an error, Ctrl-C) stops the runs in flight; they
  are not yielded and stay missing. A run already finished but not yet yielded
  then (its record made, its last step waiting for its turn, or its agent just
  returned: `execution.Returned`) is given to `job.keep`, which the driver
  writes: a stop never loses a finished run;
- a `StopRuns` out of a run (passhat cannot start another as it should) starts no
  more runs: those in flight finish and are yielded, then it is raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from passhat.errors import StopRuns
from passhat.records import RunRecord

if TYPE_CHECKING:
    from passhat.agents import LoadedAgent
    from passhat.execution import RunOptions
    from passhat.models.base import Model
    from passhat.records import ExperimentRecord
    from passhat.suite import Suite
    from passhat.tamper import SuiteGuard

WorkItem = tuple[str, int]
"""(case id, 1-based run index): one planned run."""


@dataclass(frozen=True)
class Job:
    """Everything a run of the experiment needs besides its (case, index)."""

    experiment: ExperimentRecord
    """The experiment: its id, seed, parameters and what its runs must match."""
    suite: Suite
    """The loaded suite (cases, fixtures, goals, scorers)."""
    agent: LoadedAgent
    """The agent under test, as the driver loaded it."""
    model: Model | None
    """The experiment's model, as the driver built it (None when it has none)."""
    options: RunOptions
    """Concurrency, the per-run timeout and the retry policy."""
    attempts: dict[WorkItem, int] = field(default_factory=dict)
    """The attempt number of a work item run again (`resume --errored`); 1 otherwise."""
    guard: SuiteGuard | None = None
    """The experiment's watch on its suite's files (tamper.py), for `run_once(guard=...)`:
    a run graded after they changed is errored suite_changed."""
    keep: Callable[[RunRecord], None] | None = None
    """Where an executor leaves a finished run it can no longer yield, its iterator closed
    (Ctrl-C, SIGTERM, an error): the driver writes it before it stops (`bounded` does).
    Called on the experiment's event loop, as the iterator runs (from a thread of the
    executor's own: `loop.call_soon_threadsafe(job.keep, record)`); the driver's raises
    ConfigError when called anywhere else (writer.RunWriter.keep)."""

    def attempt(self, item: WorkItem) -> int:
        return self.attempts.get(item, 1)


@runtime_checkable
class Executor(Protocol):
    """Runs work items and yields each finished run's whole record (see the module doc)."""

    def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        """Run each (case, index) of `todo` once; yield each record as it finishes."""
        ...


def checks_isolation(executor: object) -> bool:
    """Whether `executor` makes command agents' runs where it checks itself that they can
    be sealed at the experiment's level (an attribute `checks_isolation = True`, as
    Dask's workers do, each refused by name when it cannot): passhat's own process then
    need not be able to, since it starts none of them."""
    return executor == "dask" or getattr(executor, "checks_isolation", False) is True


Finish = Callable[[], RunRecord]
"""A run's last step, left to `bounded` (`execution.run_once_then`): it makes the record."""

RunOne = Callable[[str, int], Awaitable[RunRecord | Finish | None]]
"""Runs one work item; None means it could not be run and stays missing. A `Finish` is
called in a later turn of the loop, once the slot's next run has started."""


async def bounded(
    todo: Iterable[WorkItem],
    concurrency: int,
    run_one: RunOne,
    *,
    ramp: float = 0.0,
    keep: Callable[[RunRecord], None] | None = None,
) -> AsyncIterator[RunRecord]:
    """`run_one` over `todo`, at most `concurrency` at once, records yielded as they finish.

    `concurrency` slots run one item at a time each, so never more than `concurrency`
    runs are in flight; a slot takes a work item only while fewer than `concurrency`
    finished runs wait for the consumer: memory stays flat however long the plan,
    and a slow consumer (the store) holds the runs back. A run whose `run_one` gives
    a `Finish` is finished (its record made) in the loop's next turn, after the
    slot's next run has started. With `ramp`, slot i takes its first item i * `ramp`
    seconds after the first (see `passhat.executors.local.RAMP_S`). A `StopRuns` of
    `run_one` starts no more runs: the runs in flight finish and are yielded, then it is
    raised here (a stop loses no run under way). Any other
    exception of `run_one` stops every slot and is raised here; closing the iterator
    cancels the slots, and the runs finished by then and not yielded (their last steps
    made at once) go to `keep` (`Job.keep`).
    """
    items: Iterator[WorkItem] = iter(todo)
    # places for a run: in flight (one per slot), or finished and not yet taken (a
    # queue of tokens, twice the slots: a slot starts its next run before the consumer
    # takes the last one's record)
    room: asyncio.Queue[None] = asyncio.Queue()
    for _ in range(2 * max(1, concurrency)):
        room.put_nowait(None)
    done: asyncio.Queue[RunRecord | BaseException | None] = asyncio.Queue()
    waiting: dict[Finish, asyncio.TimerHandle] = {}  # last steps waiting for their turn
    stops: list[StopRuns] = []  # no slot takes an item once one is here

    def finish(last_step: Finish) -> None:
        waiting.pop(last_step, None)
        try:
            done.put_nowait(last_step())
        except BaseException as error:  # a bug: raised to the consumer, as run_one's are
            done.put_nowait(error)

    async def slot(first: float) -> None:
        if first > 0:
            await asyncio.sleep(first)
        loop = asyncio.get_running_loop()
        while True:
            await room.get()
            item = None if stops else next(items, None)
            if item is None:
                room.put_nowait(None)
                return
            turn = _Turn(loop)
            try:
                outcome = await run_one(*item)
            except StopRuns as stop:  # this run never started: it stays missing
                stops.append(stop)
                room.put_nowait(None)
                return
            except asyncio.CancelledError as stop:  # as its agent returned (execution.Returned)
                last_step = getattr(stop, "last_step", None)
                if last_step is not None:  # made as the iterator closes, then kept
                    waiting[last_step] = loop.call_later(0, finish, last_step)
                raise
            if outcome is None:
                room.put_nowait(None)
            elif isinstance(outcome, RunRecord):
                done.put_nowait(outcome)
            else:  # after the next turn's ready callbacks: this slot's next run's start
                waiting[outcome] = loop.call_later(0, finish, outcome)
            if _cancelling():  # the finished run is kept all the same (`keep`)
                raise asyncio.CancelledError
            if not turn.came:
                # a run that never waited: let a cancel land (one that waited gave the
                # loop its turns, and the slot's next run starts at once)
                await asyncio.sleep(0)

    async def slots() -> None:
        try:
            async with asyncio.TaskGroup() as group:
                for i in range(max(1, concurrency)):
                    group.create_task(slot(i * ramp))
        finally:
            done.put_nowait(None)  # the consumer's end-of-stream mark

    pool = asyncio.create_task(slots())
    try:
        while (record := await done.get()) is not None:
            if isinstance(record, BaseException):
                raise record
            room.put_nowait(None)
            yield record
            if _cancelling():
                # a cancel during the consumer's turn lands before the next record (a
                # turn of the loop after every record, cancelled or not, was one more
                # wake-up of the consumer a run among the agents' timers)
                await asyncio.sleep(0)
        await _first_error(pool)
        if stops:
            raise stops[0]
    finally:
        if not pool.done():
            pool.cancel()
            with contextlib.suppress(BaseException):
                await pool
        for last_step, turn_of in list(waiting.items()):  # stopped before their turn
            turn_of.cancel()
            finish(last_step)
        _left_over(done, keep)


def _left_over(
    done: asyncio.Queue[RunRecord | BaseException | None],
    keep: Callable[[RunRecord], None] | None,
) -> None:
    """The finished runs no consumer took (the iterator closed: Ctrl-C, SIGTERM, an
    error), handed to `keep`. A last step that raised (a bug, raised to the consumer
    when none stops it) is logged as passhat's error: no one is left to raise it to."""
    while not done.empty():
        record = done.get_nowait()
        if isinstance(record, RunRecord) and keep is not None:
            keep(record)
        elif isinstance(record, BaseException):
            logging.getLogger("passhat").error(
                "passhat: a finished run's last step failed as the runs stopped; the run "
                "stays missing (a bug in passhat)",
                exc_info=record,
            )


class _Turn:
    """Whether the event loop turned (ran the callbacks ready when this was made) since."""

    __slots__ = ("came",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.came = False
        loop.call_soon(self._came)

    def _came(self) -> None:
        self.came = True


def _cancelling() -> bool:
    """This task has a cancel that has not landed. In a slot: it was cancelled, yet the
    run came back (Python 3.11's `asyncio.wait_for` returns an inner result that finished
    as the cancel landed, and drops the cancel; a slot that went on would then wait for
    room that no consumer frees). In the consumer: it was cancelled while it held a
    record, and `done` may never make it wait."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _first_error(pool: asyncio.Task[None]) -> None:
    """Await the pool; a failed slot's exception comes out alone, not in a group."""
    try:
        await pool
    except BaseExceptionGroup as group:
        raise group.exceptions[0] from None
