"""passhat.writer: group commits that keep "recorded once its commit returns"."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from passhat.errors import ConfigError, StoreError
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


def spacing(store: Store) -> int:
    """The store's pages between two copies of its log into the database."""
    with store.atomic() as db:
        return int(db.execute("PRAGMA wal_autocheckpoint").fetchone()[0])


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


class GatedStore(CountingStore):
    """A real store whose commits wait until the test opens the gate (a slow fsync)."""

    gate: threading.Event

    def record_runs(self, runs: Sequence[RunRecord]) -> None:
        assert self.gate.wait(10)
        super().record_runs(runs)


def test_hand_over_waits_for_room_not_for_each_commit(tmp_path: Path) -> None:
    """The runner's path: a stalled commit holds back no run until `limit` runs wait for
    it; a run is still reported recorded only once its commit has returned."""
    store = GatedStore(tmp_path / "p.db")
    store.batches, store.gate = [], threading.Event()
    store.create_experiment(experiment())
    reported: list[int] = []
    handed: list[int] = []

    async def main() -> None:
        async with RunWriter(store, lambda record: reported.append(record.run_index)) as writer:
            for index in (1, 2):
                await writer.hand_over(run(index=index), limit=3)
                handed.append(index)
            assert handed == [1, 2] and reported == []  # not committed, not held back
            third = asyncio.create_task(writer.hand_over(run(index=3), limit=3))
            await asyncio.sleep(0.05)
            assert not third.done()  # three uncommitted: the third waits for room
            store.gate.set()
            await third
            await writer.drain()
            assert sorted(reported) == [1, 2, 3]

    asyncio.run(main())
    assert store.recorded("e1") == {("a", i) for i in (1, 2, 3)}
    store.close()


def test_a_store_error_of_a_handed_over_run_stops_the_runner(store: CountingStore) -> None:
    store.record_run(run(index=3))

    async def main() -> None:
        async with RunWriter(store) as writer:
            for index in (1, 2, 3, 4):
                await writer.hand_over(run(index=index), limit=100)
            with pytest.raises(StoreError, match="run 3 of case 'a' is already recorded"):
                await writer.drain()
            with pytest.raises(StoreError):  # and any later hand-over
                await writer.hand_over(run(index=5), limit=100)

    asyncio.run(main())
    assert store.recorded("e1") == {("a", i) for i in (1, 2, 3, 4)}  # each once
    store.close()


def test_runs_handed_over_apart_wait_for_company_and_drain_cuts_the_wait(
    store: CountingStore,
) -> None:
    """With a linger, runs finishing on different turns of the loop share one commit; a
    run waiting so is not reported recorded; `drain` commits at once, not after the
    linger (an hour here: the test would hang)."""
    reported: list[int] = []

    async def main() -> None:
        async with RunWriter(store, lambda r: reported.append(r.run_index), linger=3600) as w:
            for index in range(1, 11):
                await w.hand_over(run(index=index), limit=100)
                await asyncio.sleep(0.001)  # apart: without a linger, each its own commit
            assert reported == [] and store.recorded("e1") == set()
            await w.drain()
            assert sorted(reported) == list(range(1, 11))

    asyncio.run(main())
    assert store.batches == [10]
    store.close()


def test_half_the_limit_waiting_is_committed_without_waiting_for_the_linger(
    store: CountingStore,
) -> None:
    reported: list[int] = []

    async def main() -> None:
        async with RunWriter(store, lambda r: reported.append(r.run_index), linger=3600) as w:
            for index in range(1, 5):
                await w.hand_over(run(index=index), limit=8)
            for _ in range(1000):  # the commit of four runs, on the writer thread
                if reported:
                    break
                await asyncio.sleep(0.01)
            assert sorted(reported) == [1, 2, 3, 4]
            await w.drain()

    asyncio.run(main())
    assert store.batches == [4]
    store.close()


def test_a_linger_keeps_a_put_waiting_for_nobody(store: CountingStore) -> None:
    async def main() -> None:
        async with RunWriter(store, linger=3600) as writer:
            await asyncio.wait_for(writer.put(run(index=1)), 60)  # not the linger's hour

    asyncio.run(main())
    assert store.recorded("e1") == {("a", 1)}
    store.close()


def test_the_write_ahead_log_is_copied_into_the_database_often_while_runs_are_written(
    store: CountingStore,
) -> None:
    """While the writer commits runs, SQLite checkpoints its log every 100 pages on the
    writer's thread (closing the store after the last run has little left to copy); its
    own spacing of 1,000 pages is back once the runs are written."""

    seen: list[int] = []

    async def main() -> None:
        async with RunWriter(store) as writer:
            await writer.put(run(index=1))
            seen.append(spacing(store))

    asyncio.run(main())
    assert seen == [100]
    assert spacing(store) == 1000
    store.close()


def test_keep_off_the_writers_event_loop_is_refused_naming_the_fix(store: CountingStore) -> None:
    """fix53: Job.keep must be called on the experiment's loop; it was only documented.
    From a thread running a loop of its own (a Dask client's), the run went into the
    writer's list under the loop's feet, its future made on the other loop; from a plain
    thread, asyncio's bare RuntimeError. Now both are refused by name, nothing kept."""
    refused: list[str] = []

    def keep(writer: RunWriter, index: int, own_loop: bool) -> None:
        async def on_its_own_loop() -> None:
            writer.keep(run(index=index))

        try:
            if own_loop:
                asyncio.run(on_its_own_loop())
            else:
                writer.keep(run(index=index))
        except ConfigError as error:
            refused.append(str(error))

    async def main() -> None:
        async with RunWriter(store) as writer:
            for index, own_loop in ((1, True), (2, False)):
                thread = threading.Thread(target=keep, args=(writer, index, own_loop))
                thread.start()
                thread.join()
            writer.keep(run(index=3))  # on its loop: written as the block ends

    asyncio.run(main())
    assert len(refused) == 2
    assert all("loop.call_soon_threadsafe(job.keep, record)" in error for error in refused)
    assert store.recorded("e1") == {("a", 3)}
    store.close()


def test_the_log_is_copied_as_the_last_runs_are_handed_out_then_spaced_as_sqlite_does(
    store: CountingStore,
) -> None:
    """runner54: `checkpoint_soon` (the plan's last run handed out) copies the write-ahead
    log into the database on the writer thread and spaces the next copies 1,000 pages
    apart: the last runs' commits no longer cross 100 pages and copy the log first."""
    seen: list[tuple[str, int]] = []
    copy = store.checkpoint_now

    def spy(pages: int) -> None:
        seen.append((threading.current_thread().name, pages))
        copy(pages)

    store.checkpoint_now = spy  # type: ignore[method-assign]

    spaced: list[int] = []

    async def main() -> None:
        async with RunWriter(store) as writer:
            await writer.put(run(index=1))
            writer.checkpoint_soon()
            writer.checkpoint_soon()  # once
            await writer.put(run(index=2))  # the writer thread copied the log first
            spaced.append(spacing(store))

    asyncio.run(main())
    assert [pages for _, pages in seen] == [1000]
    assert seen[0][0].startswith("passhat-store")
    assert spaced == [1000]
    store.close()


def test_checkpoint_now_copies_the_log_into_the_database(store: CountingStore) -> None:
    """Store.checkpoint_now copies the log's pages into the database file now."""
    store.checkpoint_every(100_000)
    store.record_runs([run(case="a", index=i) for i in range(1, 40)])
    before = store.path.stat().st_size
    store.checkpoint_now(1000)
    assert store.path.stat().st_size > before
    assert spacing(store) == 1000
    store.close()


def test_the_last_runs_follow_up_is_made_once_as_the_block_ends(store: CountingStore) -> None:
    """runner54: once the last runs finish (`linger_no_more`), what follows their commits
    (`written`: the runner keeps the items of the cases they complete) waits for the
    block's end, made once there for them all, not between their commits."""
    calls: list[list[int]] = []
    committed: list[int] = []

    def written(runs: list[RunRecord]) -> None:
        calls.append([r.run_index for r in runs])

    def recorded(record: RunRecord) -> None:
        committed.append(record.run_index)

    async def main() -> None:
        async with RunWriter(store, recorded, written=written) as writer:
            await writer.put(run(index=1))
            await asyncio.sleep(0.05)  # the writer idle: the follow-up made
            writer.linger_no_more()
            await writer.put(run(index=2))
            await writer.put(run(index=3))
            await asyncio.sleep(0.05)
            assert calls == [[1]]
        assert calls == [[1], [2, 3]]

    asyncio.run(main())
    assert committed == [1, 2, 3]
    store.close()


def test_the_follow_up_of_commits_waits_for_the_runs_waiting_to_be_written(
    tmp_path: Path,
) -> None:
    """runner54: a batch's follow-up (`written`) is not made before the next batch waiting
    to be written; it is made once the writer has nothing waiting, for both."""

    class SlowFirst(Store):
        def record_runs(self, runs: Sequence[RunRecord]) -> None:
            if runs[0].run_index == 1:
                time.sleep(0.2)  # run 2 comes meanwhile, and waits
            super().record_runs(runs)

    store = SlowFirst(tmp_path / "p.db")
    store.create_experiment(experiment())
    calls: list[list[int]] = []

    async def main() -> None:
        async with RunWriter(
            store, written=lambda runs: calls.append([r.run_index for r in runs])
        ) as writer:
            first = asyncio.ensure_future(writer.put(run(index=1)))
            await asyncio.sleep(0.05)
            await writer.put(run(index=2))
            await first
            await asyncio.sleep(0.05)

    asyncio.run(main())
    assert calls == [[1, 2]]
    store.close()


def test_a_flush_that_resumes_after_the_blocks_end_asks_the_shut_thread_nothing(
    tmp_path: Path,
) -> None:
    """runner54: a block left (Ctrl-C) while a batch is being written waits for it; the
    flush then resumes after the block's end, the writer thread shut down: it asks that
    thread for no follow-up (RuntimeError: a traceback under `passhat run`'s Ctrl-C)."""

    class Slow(Store):
        def record_runs(self, runs: Sequence[RunRecord]) -> None:
            time.sleep(0.2)
            super().record_runs(runs)

    store = Slow(tmp_path / "p.db")
    store.create_experiment(experiment())
    writers: list[RunWriter] = []

    async def main() -> None:
        async with RunWriter(store, written=lambda runs: None) as writer:
            writers.append(writer)
            await writer.hand_over(run(index=1), 10)
            await asyncio.sleep(0.05)  # the batch is being written
        flusher = writer._flusher
        assert flusher is not None
        await asyncio.wait({flusher}, timeout=5)
        assert flusher.done() and flusher.exception() is None

    asyncio.run(main())
    assert store.recorded("e1") == {("a", 1)}
    store.close()


def test_a_stop_ending_the_block_during_a_commit_leaves_no_task_error(tmp_path: Path) -> None:
    """review54: a stop (Ctrl-C) ended the block while a batch's commit was in flight; the
    block shut the writer thread down, then the flush resumed, settled the batch and
    handed `written` to that thread: RuntimeError ("cannot schedule new futures after
    shutdown") in the flush task, logged at the stop as a task exception with its
    traceback. The batch is still recorded and reported, once."""
    store = GatedStore(tmp_path / "p.db")
    store.batches, store.gate = [], threading.Event()
    store.create_experiment(experiment())
    errors: list[dict[str, object]] = []
    reported: list[int] = []
    kept: list[int] = []

    async def block() -> None:
        async with RunWriter(
            store,
            lambda record: reported.append(record.run_index),
            written=lambda runs: kept.append(len(runs)),
        ) as writer:
            await writer.hand_over(run(index=1), limit=10)
            writer.linger_no_more()
            await asyncio.sleep(0.05)  # the flush waits on the gated commit
            threading.Timer(0.1, store.gate.set).start()
            raise asyncio.CancelledError  # the stop lands: the block ends meanwhile

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, c: errors.append(c))
        with pytest.raises(asyncio.CancelledError):
            await block()
        for _ in range(5):  # the flush resumes (the hub's close awaits, in the runner)
            await asyncio.sleep(0.01)

    asyncio.run(main())
    gc.collect()  # a task's unretrieved exception is said as the task goes
    assert [c.get("exception") for c in errors] == []
    assert store.recorded("e1") == {("a", 1)}
    assert reported == [1]
    store.close()


def test_a_stop_ending_the_block_during_a_linger_leaves_no_task_error(
    store: CountingStore,
) -> None:
    """review54: a stop (Ctrl-C) ended the block while a flush lingered for company; the
    block wrote the waiting runs itself and shut its thread down, then the flush woke,
    took the empty list left and handed it to that thread: RuntimeError in the flush
    task, logged with its traceback after "interrupted" (seen at 1 of 8 Ctrl-C of
    `passhat run --agent-cmd` at --concurrency 16). The runs are written once."""
    errors: list[dict[str, object]] = []

    async def block() -> None:
        async with RunWriter(store, linger=0.05) as writer:
            await writer.hand_over(run(index=1), limit=10)
            await asyncio.sleep(0)  # the flush lingers
            raise asyncio.CancelledError

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, c: errors.append(c))
        with pytest.raises(asyncio.CancelledError):
            await block()
        await asyncio.sleep(0.1)  # past the linger (the hub's close awaits, in the runner)

    asyncio.run(main())
    gc.collect()
    assert [c.get("exception") for c in errors] == []
    assert store.recorded("e1") == {("a", 1)} and store.batches == [1]
    store.close()
