"""The local executor: every run on this process's event loop (the default).

Runs are independent and mostly wait on model APIs, so one asyncio loop
carries thousands of them; `--concurrency` bounds how many are in flight.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from passhat.executors.base import Finish, Job, WorkItem, bounded
from passhat.records import RunRecord

RAMP_S = 0.0003
"""Seconds between the first runs' starts. Runs started together finish together: 50
agents waiting 100 ms each woke in the same turn of the event loop, and each waited for
the others' grading and writing before its next run started (3 ms a run, in waves that
came back every run). Started 0.3 ms apart (about the loop's CPU for a run, 0.25 ms),
each mostly finds the loop free when it wakes. The ramp is paid once, by the last slot
(15 ms at concurrency 50); 0.5 ms apart (25 ms) drifted a little less a run, and lost
4-6 ms of bench_runner's 100 ms row on the way (runner_timeline.py, load 1-7)."""
RAMP_MAX_S = 0.05
"""The ramp's length at most (a higher --concurrency starts its runs closer together)."""


class LocalExecutor:
    """Runs each work item with `run_once` on the running event loop (`run_once_then`:
    a run's grading after its slot's next run has started, when grading only reads)."""

    def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        from passhat.execution import run_once_then

        cases = {c.id: c for c in job.suite.cases}

        async def one(case_id: str, index: int) -> RunRecord | Finish:
            return await run_once_then(job, cases[case_id], index)

        concurrency = job.options.concurrency
        ramp = min(RAMP_S, RAMP_MAX_S / max(1, concurrency))
        return bounded(todo, concurrency, one, ramp=ramp, keep=job.keep)

    def __repr__(self) -> str:
        return "LocalExecutor()"
