"""A stop (`StopRuns`: passhat's own limits lowered past setting back) loses no run
(review56b). Before: at --concurrency > 1 the local executor's slots were cancelled and
the runs under way went missing, though the stop said they were errored `agent_limits`;
on Dask a worker's batch raised it and the runs of the batch already finished (the
charged one among them) were returned to no one."""

from __future__ import annotations

import asyncio
import pickle
import resource
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cli_helpers import CLARIFY
from passhat.agents import own_limits, resolve_agent
from passhat.agents.streams import AgentProcessError
from passhat.errors import StopRuns
from passhat.executors import bounded
from passhat.executors import dask as dask_executor
from passhat.executors.batching import BatchSizer, batched
from passhat.executors.shipment import Prepared
from passhat.records import RunRecord
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

NOFILE = resource.RLIMIT_NOFILE


@pytest.fixture
def unprivileged(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A state of its own, a passhat that cannot set a limit back; the limit put back after."""
    monkeypatch.setattr(own_limits, "_STATE", own_limits._State())
    monkeypatch.setattr(own_limits, "_set_back", lambda name, limits: False)
    taken = resource.getrlimit(NOFILE)
    yield
    resource.setrlimit(NOFILE, taken)


def _record(index: int, status: str = "passed", error: str | None = None) -> RunRecord:
    return RunRecord("e", "c", index, "h", status, error_type=error)  # type: ignore[arg-type]


async def test_a_stop_lets_the_runs_in_flight_finish_charged_and_starts_no_more(
    unprivileged: None,
) -> None:
    started: list[int] = []

    async def run_one(case_id: str, index: int) -> RunRecord:
        try:
            with own_limits.watched():
                started.append(index)
                if index == 1:  # its agent lowers passhat's limit, then runs on
                    soft, hard = resource.getrlimit(NOFILE)
                    resource.setrlimit(NOFILE, (min(soft, 4096) - 1, hard))
                    await asyncio.sleep(0.3)
                return _record(index)
        except AgentProcessError as error:
            return _record(index, "errored", error.error_type)

    got: list[RunRecord] = []
    with pytest.raises(StopRuns, match="RLIMIT_NOFILE"):
        async for record in bounded([("c", i) for i in range(1, 5)], 2, run_one, ramp=0.02):
            got.append(record)
    # run 2 met the stop as it started; run 1, under way, finished and was charged
    assert [(r.run_index, r.status, r.error_type) for r in got] == [(1, "errored", "agent_limits")]
    assert started == [1]  # no run started after the stop (2 never got its agent)


class _Models:
    def take(self) -> None:
        return None

    def give(self, model: Any) -> None:
        pass


def _prepared(once: Any, secrets: tuple[str, ...] | None) -> Any:
    fake = SimpleNamespace(
        models=_Models(),
        cases={"c": object()},
        secrets=secrets,
        options=SimpleNamespace(timeout_s=5),
        _once=once,
        shipment=SimpleNamespace(experiment=None),
    )
    fake._rest = lambda batch: Prepared._rest(fake, batch)  # type: ignore[arg-type]
    return fake


def test_a_workers_batch_hands_its_finished_runs_back_with_the_stop() -> None:
    async def once(case: Any, index: int, model: Any, attempt: int) -> RunRecord:
        if index < 3:
            return _record(index, "errored", "agent_limits" if index == 2 else None)
        raise StopRuns("passhat's own limit of open files (RLIMIT_NOFILE) fell")

    fake = _prepared(once, None)
    with pytest.raises(StopRuns) as raised:
        Prepared.run_batch(fake, [("c", i, 1) for i in range(1, 5)])
    assert [r.run_index for r in raised.value.records] == [1, 2]
    # as a Dask task's exception reaches the driver: pickled, its records with it
    back = pickle.loads(pickle.dumps(raised.value))
    assert isinstance(back, StopRuns) and back.records == raised.value.records
    assert "RLIMIT_NOFILE" in str(back)


def test_the_runs_handed_back_with_a_stop_are_blanked_of_secrets() -> None:
    async def once(case: Any, index: int, model: Any, attempt: int) -> RunRecord:
        if index == 1:
            return replace(_record(1, "errored", "agent_error"), error_message="key sk-SECRET-1")
        raise StopRuns("stop")

    fake = _prepared(once, ("sk-SECRET-1",))
    with pytest.raises(StopRuns) as raised:
        Prepared.run_batch(fake, [("c", 1, 1), ("c", 2, 1)])
    assert [r.error_message for r in raised.value.records] == ["key ***"]


def test_the_worker_task_names_where_the_handed_back_runs_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Runs:
        def run_batch(self, batch: list[tuple[str, int, int]]) -> list[RunRecord]:
            raise StopRuns("stop", [_record(1)])

    monkeypatch.setattr(dask_executor, "get_worker", lambda: SimpleNamespace(address="tcp://w:1"))
    monkeypatch.setitem(dask_executor._RECEIVED, "d", SimpleNamespace(level=None))
    monkeypatch.setattr(dask_executor, "prepared", lambda shipment, where, hold: Runs())
    monkeypatch.setattr(dask_executor, "release", lambda runs: None)
    with pytest.raises(StopRuns) as raised:
        dask_executor.run_batch("d", [("c", 1, 1), ("c", 2, 1)])
    assert [r.ran_on.split(" ")[0] for r in raised.value.records] == ["tcp://w:1"]


async def test_batched_keeps_a_stopped_batchs_runs_and_lets_those_in_flight_finish() -> None:
    sent: list[list[int]] = []

    async def run_batch(batch: list[tuple[str, int]]) -> list[RunRecord]:
        sent.append([i for _, i in batch])
        if batch[0][1] == 1:  # its second run met the stop
            await asyncio.sleep(0.01)
            raise StopRuns("stop", [_record(1)])
        await asyncio.sleep(0.1)  # in flight as the stop came
        return [_record(i) for _, i in batch]

    got: list[int] = []
    with pytest.raises(StopRuns, match="stop"):
        runs = batched([("c", i) for i in range(1, 11)], 2, BatchSizer(fixed=2), run_batch)
        async for record in runs:
            got.append(record.run_index)
    assert sorted(got) == [1, 3, 4]
    assert sent == [[1, 2], [3, 4]]  # no batch sent after the stop


def test_the_stop_names_the_experiment_to_resume_and_keeps_the_runs_before_it(
    tmp_path: Path,
) -> None:
    suite = load_suite(CLARIFY)
    agent = resolve_agent("agents_for_tests:odd_runs_pass")
    experiment = new_experiment(suite, agent, "", None, k=3, params={"max_turns": 10})

    class Stopping:
        async def run(self, job: Any, todo: Any) -> Any:
            case_id, index = next(iter(todo))
            yield RunRecord(experiment.id, case_id, index, suite.case(case_id).hash, "passed")
            raise StopRuns("passhat's own limit of open files (RLIMIT_NOFILE) fell")

    async def main() -> str:
        with Store(tmp_path / "p.db") as store:
            store.create_experiment(experiment)
            with pytest.raises(StopRuns) as raised:
                await run_experiment(
                    store, experiment, suite, agent, None, RunOptions(), executor=Stopping()
                )
            assert len(store.recorded(experiment.id)) == 1
            return str(raised.value)

    said = asyncio.run(main())
    assert said.startswith("passhat's own limit of open files"), said
    assert f"`passhat resume {experiment.command_ref}` runs the rest" in said, said
    assert "\n" not in said
