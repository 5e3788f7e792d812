"""passhat.writer: group commits that keep "recorded once its commit returns"."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from passhat.errors import StoreError
from passhat.records import RunRecord
from passhat.store import Store
from passhat.writer import RunWriter
from test_store import experiment, run


class CountingStore(Store):
    """A real store that remembers the size of each transaction of runs."""

    batches: list[int]

    def record_runs(self, runs: Sequence[RunRecord]) -> None:
        self.batches.append(len(runs))
        super().record_runs(runs)


@pytest.fixture
def store(tmp_path: Path) -> CountingStore:
    s = CountingStore(tmp_path / "p.db")
    s.batches = []
    s.create_experiment(experiment())
    return s


def test_runs_finishing_together_share_a_commit_and_each_is_reported_once_written(
    store: CountingStore,
) -> None:
    reported: list[int] = []

    def recorded(record: RunRecord) -> None:
        # told only once the commit returned: the run is in the store already
        assert (record.case_id, record.run_index) in store.recorded("e1")
        reported.append(record.run_index)

    async def main() -> None:
        async with RunWriter(store, recorded) as writer:
            await asyncio.gather(*(writer.put(run(index=i)) for i in range(1, 41)))

    asyncio.run(main())
    assert sorted(reported) == list(range(1, 41))
    assert sum(store.batches) == 40 and len(store.batches) < 40  # grouped
    store.close()


def test_a_bad_run_fails_alone(store: CountingStore) -> None:
    store.record_run(run(index=3))
    outcomes: list[object] = []

    async def put(writer: RunWriter, index: int) -> None:
        try:
            await writer.put(run(index=index))
            outcomes.append(index)
        except StoreError as error:
            outcomes.append(str(error))

    async def main() -> None:
        async with RunWriter(store) as writer:
            await asyncio.gather(*(put(writer, i) for i in (1, 2, 3, 4)))

    asyncio.run(main())
    assert sorted(o for o in outcomes if isinstance(o, int)) == [1, 2, 4]
    (message,) = [o for o in outcomes if isinstance(o, str)]
    assert "run 3 of case 'a' is already recorded" in message
    assert store.recorded("e1") == {("a", i) for i in (1, 2, 3, 4)}
    store.close()


def test_runs_handed_over_are_written_when_the_workers_are_cancelled(
    store: CountingStore,
) -> None:
    async def main() -> None:
        async with RunWriter(store) as writer:
            tasks = [asyncio.create_task(writer.put(run(index=i))) for i in range(1, 11)]
            await asyncio.sleep(0)  # every run handed over; no commit awaited
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())
    assert store.recorded("e1") == {("a", i) for i in range(1, 11)}
    store.close()
