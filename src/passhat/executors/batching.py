"""Runs grouped into batches: one remote task holds several short runs.

A remote task costs a round trip through a scheduler (a few milliseconds with
Dask) whatever it runs. When runs are that short, most of the time goes to the
round trips; running several runs per task shares one round trip among them.

A batch returns its records together, so a run that finished first waits for
the rest of its batch before the driver can record it. The batch is therefore
sized by the run time measured so far: at most `target_s` of runs per batch
(50 ms by default), so a finished run waits at most about that long, and a run
that takes `target_s` or more goes alone, exactly as without batching (a long
run is never held back by a batch). The first runs go one per task until their
durations are known.

`concurrency` bounds the batches in flight, and a worker runs a batch's runs
one after another: at most `concurrency` runs are under way at once, as
without batching (what loads a model API or a machine), while up to
`concurrency` batches of runs are sent, so the scheduler's round trips overlap
and no worker waits for one between batches. A batch is at most `MAX_BATCH`
runs and `target_s` of run time, so what is sent ahead stays small.

What stays as without batching:
- each work item is run at most once and yields at most one record; a batch
  that could not be run (its worker died too often) yields nothing, so none of
  its runs is recorded or counted, and every one of them stays missing;
- a finished batch takes its place until the consumer (the store) has taken
  its last record: a slow consumer holds the runs back;
- work items are read lazily, one batch at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from passhat.errors import StopRuns
from passhat.executors.base import WorkItem
from passhat.records import RunRecord

TARGET_S = 0.05
"""Run time per batch: how long a finished run may wait for the rest of its batch."""
MAX_BATCH = 64
"""Runs per batch at most, however short they are."""

RunBatch = Callable[[list[WorkItem]], Awaitable[list[RunRecord] | None]]
"""Runs a batch of work items; None means none of them could be run (all stay missing)."""


@dataclass
class BatchSizer:
    """How many runs the next batch takes, from the run times seen so far."""

    target_s: float = TARGET_S
    """Run time per batch (see the module doc)."""
    cap: int = MAX_BATCH
    """Runs per batch at most."""
    fixed: int | None = None
    """A fixed size, whatever the runs take (tests, benchmarks)."""
    mean_s: float | None = None
    """A moving mean of the run times seen (None before the first)."""

    def observe(self, duration_s: float) -> None:
        """One finished run's duration."""
        seen = max(0.0, duration_s)
        self.mean_s = seen if self.mean_s is None else 0.8 * self.mean_s + 0.2 * seen

    def size(self) -> int:
        """The next batch's size."""
        if self.fixed is not None:
            wanted = self.fixed
        elif self.mean_s is None:
            wanted = 1
        else:
            wanted = int(self.target_s / max(self.mean_s, 1e-6))
        return max(1, min(wanted, self.cap))


async def batched(
    todo: Iterable[WorkItem],
    concurrency: int,
    sizer: BatchSizer,
    run_batch: RunBatch,
    *,
    keep: Callable[[RunRecord], None] | None = None,
) -> AsyncGenerator[RunRecord, None]:
    """`run_batch` over `todo` in batches, records yielded as each batch finishes.

    At most `concurrency` batches are in flight or finished and not wholly
    taken by the consumer. A `StopRuns` of `run_batch` sends no more batches: its
    records (the runs finished before it) and those of the batches in flight are
    yielded, then it is raised here. Any other
    exception of `run_batch` cancels the other
    batches and is raised here; closing the iterator cancels them too, and the
    runs finished by then and not yielded (the rest of a batch being taken, the
    batches finished and not yet taken) go to `keep` (`Job.keep`).
    """
    items: Iterator[WorkItem] = iter(todo)
    places = max(1, concurrency)
    sent: set[asyncio.Task[list[RunRecord] | None]] = set()
    ready: deque[RunRecord] = deque()  # a finished batch's records not yet yielded
    more = True
    stops: list[StopRuns] = []
    try:
        while True:
            while more and not stops and len(sent) < places:
                want = sizer.size()
                batch = list(islice(items, want))
                more = len(batch) == want
                if not batch:
                    break
                sent.add(asyncio.ensure_future(run_batch(batch)))
            if not sent:
                if stops:
                    raise stops[0]
                return
            finished, _ = await asyncio.wait(sent, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                try:
                    records = task.result() or []  # the first error stops every batch
                except StopRuns as stop:  # but this one: its finished runs are kept
                    records, stop.records = stop.records, []
                    stops.append(stop)
                sent.discard(task)
                ready.extend(records)
                while ready:  # no batch is sent while the consumer takes these
                    record = ready.popleft()
                    sizer.observe(record.duration_s)
                    yield record
    finally:
        for task in sent:
            task.cancel()
        for task in sent:
            with contextlib.suppress(BaseException):
                await task
        if keep is not None:
            _left_over(ready, sent, keep)


def _left_over(
    ready: deque[RunRecord],
    sent: set[asyncio.Task[list[RunRecord] | None]],
    keep: Callable[[RunRecord], None],
) -> None:
    """The finished runs no consumer took (the iterator closed: Ctrl-C, SIGTERM, an
    error), handed to `keep`: those of the batch being taken, then those of the batches
    that finished all the same (a batch cancelled in flight stays missing)."""
    for record in ready:
        keep(record)
    for task in sent:
        if task.done() and not task.cancelled() and task.exception() is None:
            for record in task.result() or []:
                keep(record)
