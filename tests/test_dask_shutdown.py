"""A local cluster passhat started shuts down quietly: a worker's heartbeat in flight
when it closes printed "Failed to communicate with scheduler during heartbeat" with a
traceback on passhat's stderr, after a run that went well (round 12, dask50)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from passhat.executors.dask import HEARTBEAT_FAILED, DaskExecutor, _HeartbeatAtClose
from passhat.runner import RunOptions, run_experiment
from passhat.store import Store
from test_dask import _experiment, _parity_ok, _rows

pytest.importorskip("distributed")


def _slow_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduler (in this process: a LocalCluster's) takes each heartbeat in but
    answers none before it closes, so each worker has one in flight when it shuts down."""
    from distributed.scheduler import Scheduler

    start = Scheduler.__init__

    def started(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        answer = self.handlers["heartbeat_worker"]  # what a worker's heartbeat calls

        async def slow(**message: Any) -> Any:
            answered = answer(**message)  # the worker's metrics, as the scheduler needs
            await asyncio.sleep(60)
            return answered

        self.handlers["heartbeat_worker"] = slow

    monkeypatch.setattr(Scheduler, "__init__", started)


async def test_a_heartbeat_in_flight_at_shutdown_prints_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _slow_heartbeats(monkeypatch)
    db = tmp_path / "p.db"
    suite, agent, experiment = _experiment(db, "agents_for_tests:odd_runs_pass", 4)
    executor = DaskExecutor(workers=2)
    with Store(db) as store:
        await run_experiment(
            store, experiment, suite, agent, None, RunOptions(concurrency=2), executor=executor
        )
    _parity_ok(_rows(db, experiment.id), 4)
    assert executor.local_processes == 2  # as many as asked for, whatever the runs
    err = capfd.readouterr().err
    assert "Traceback" not in err and "during heartbeat" not in err, err


@pytest.mark.parametrize(
    ("status", "message", "shown"),
    [
        ("running", HEARTBEAT_FAILED + ".", True),  # mid-run: printed as before
        ("closing_gracefully", HEARTBEAT_FAILED + ".", True),  # retiring, still running
        ("closing", HEARTBEAT_FAILED + ".", False),
        ("closed", HEARTBEAT_FAILED + ".", False),
        ("closing", "Unexpected exception during heartbeat. Closing worker.", True),
        ("closing", "Compute Failed", True),
    ],
)
def test_only_a_heartbeat_failure_of_a_closing_worker_is_not_printed(
    status: str, message: str, shown: bool
) -> None:
    from distributed.core import Status

    worker = SimpleNamespace(status=Status[status])  # what the filter reads of a Worker
    record = logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, message, (), None)
    assert _HeartbeatAtClose(worker).filter(record) is shown
