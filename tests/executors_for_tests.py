"""A user's executor for tests, loaded by import path through `--executor`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from passhat.executors import Job, WorkItem
from passhat.records import RunRecord
from passhat.runner import run_once

RAN: list[WorkItem] = []
"""Every work item a Sequential executor ran, in order."""


class Sequential:
    """Runs one work item at a time, in plan order, through the public protocol."""

    async def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        cases = {c.id: c for c in job.suite.cases}
        for case_id, index in todo:
            RAN.append((case_id, index))
            yield await run_once(
                job.experiment, job.suite, cases[case_id], index, job.agent, job.model, job.options
            )


not_an_executor = 42


class SkipsEven:
    """Gives up on even run indices (as Dask does when their workers keep dying)."""

    def __init__(self) -> None:
        self.left_missing: list[WorkItem] = []

    async def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        cases = {c.id: c for c in job.suite.cases}
        for case_id, index in todo:
            if index % 2 == 0:
                self.left_missing.append((case_id, index))
                continue
            yield await run_once(
                job.experiment, job.suite, cases[case_id], index, job.agent, job.model, job.options
            )


class RefusedOne(Sequential):
    """Runs everything, and says it refused one worker (as Dask does with a worker of
    other passhat code): the CLI names it."""

    def __init__(self) -> None:
        self.refused = {
            "tcp://127.0.0.1:9": "tcp://127.0.0.1:9 has other passhat code (a against b): "
            "passhat/scoring.py differs"
        }
