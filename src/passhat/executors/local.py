"""The local executor: every run on this process's event loop (the default).

Runs are independent and mostly wait on model APIs, so one asyncio loop
carries thousands of them; `--concurrency` bounds how many are in flight.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from passhat.executors.base import Job, WorkItem, bounded
from passhat.records import RunRecord


class LocalExecutor:
    """Runs each work item with `run_once` on the running event loop."""

    def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        from passhat.execution import run_once

        cases = {c.id: c for c in job.suite.cases}

        async def one(case_id: str, index: int) -> RunRecord:
            attempt = job.attempt((case_id, index))
            return await run_once(
                job.experiment,
                job.suite,
                cases[case_id],
                index,
                job.agent,
                job.model,
                job.options,
                attempt,
            )

        return bounded(todo, job.options.concurrency, one)

    def __repr__(self) -> str:
        return "LocalExecutor()"
