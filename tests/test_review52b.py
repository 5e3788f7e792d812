"""review52b's findings on fix52's stop handling: the Dask executor keeps, at a stop, the
runs of a batch that finished and were not yet yielded (`Job.keep`), as `bounded` does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from passhat.executors.batching import BatchSizer, batched
from passhat.executors.dask import DaskExecutor
from passhat.runner import RunOptions, run_experiment
from passhat.store import Store
from passhat.writer import RunWriter
from test_dask import _experiment
from test_executors import _record


async def test_batched_hands_the_runs_finished_and_not_yielded_at_a_close_to_keep() -> None:
    """Closed while the consumer holds the first record of a batch of three (a stop
    landing as the driver hands it to its writer), with a second batch finished and not
    yet taken: the five other runs, their agents done, went nowhere; they go to
    `keep`, each once, and none yielded is kept."""
    both = asyncio.Event()
    started = 0

    async def run_batch(batch: list[tuple[str, int]]) -> list[Any]:
        nonlocal started
        started += 1
        if started == 2:
            both.set()
        await both.wait()  # the two batches finish in one turn of the loop
        return [_record(c, i) for c, i in batch]

    kept: list[int] = []
    plan = (("c", i) for i in range(1, 7))
    records = batched(
        plan, 2, BatchSizer(fixed=3), run_batch, keep=lambda r: kept.append(r.run_index)
    )
    first = await asyncio.wait_for(anext(records), 5)
    await records.aclose()
    assert sorted([first.run_index, *kept]) == [1, 2, 3, 4, 5, 6]


async def test_a_stop_during_a_dask_run_keeps_the_rest_of_a_finished_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop (SIGTERM, Ctrl-C: a cancel of the run) landing as the driver hands over the
    first run of a batch of three that a worker finished: the other two were lost, their
    agents' work done, though `Job.keep` is the executors' contract (executors/base.py);
    the Dask executor's inner iterator was not even closed before the driver's writer."""
    db = tmp_path / "p.db"
    suite, agent, experiment = _experiment(db, "agents_for_tests:odd_runs_pass", 3)
    real = RunWriter.hand_over
    stopped: list[bool] = []

    async def hand_over_then_stop(self: RunWriter, record: Any, limit: int) -> None:
        await real(self, record, limit)
        if not stopped:
            stopped.append(True)
            task = asyncio.current_task()
            assert task is not None
            task.cancel()

    monkeypatch.setattr(RunWriter, "hand_over", hand_over_then_stop)
    executor = DaskExecutor(workers=1, batch=3)
    with Store(db) as store:
        run = asyncio.ensure_future(
            run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=1), executor=executor
            )
        )
        with pytest.raises(asyncio.CancelledError):
            await run
        assert stopped
        assert sorted(r.run_index for r in store.runs(experiment.id)) == [1, 2, 3]
