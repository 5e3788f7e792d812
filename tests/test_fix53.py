"""fix53: defects left open at round 15, each shown by a test that failed before its fix
(the look into installations: test_lookout.py, test_review51.py, test_attack52_rewrite.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agents_for_tests import sync_perfect
from cli_helpers import CLARIFY, SEED
from passhat.agents import resolve_agent
from passhat.records import RunRecord
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

# ------------------------------------------ a sync agent's run finished as a stop came


def _stopped_as_it_returns(
    stop: Callable[[], None], ran: list[int], at: int = 1, crash: bool = False
) -> Callable[[Any, Any, Any], str]:
    """sync_perfect (a plain `def` agent, in a thread of its own) noting each run in `ran`;
    as run `at`'s thread returns (or raises, with `crash`), the loop calls `stop` once
    that thread has ended (its outcome handed to the loop: execution.in_thread), before
    the loop's next turn gives it to the run waiting for it. The stop lands between the
    two every time."""

    def agent(input: Any, env: Any, ctx: Any) -> str:
        ran.append(ctx.run_index)
        output = sync_perfect(input, env, ctx)
        if ctx.run_index == at:
            thread = threading.current_thread()

            def when_it_returned() -> None:
                thread.join(10)  # on the loop: its outcome waits among the next callbacks
                stop()

            ctx.loop.call_soon_threadsafe(when_it_returned)
            if crash:
                raise RuntimeError("the agent's own bug")
        return output

    return agent


def _seed_suite() -> Any:
    suite = load_suite(CLARIFY)
    return type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})


@pytest.mark.parametrize("crash", [False, True], ids=["returned", "raised"])
async def test_a_sync_agents_run_that_returned_as_the_stop_came_is_finished(crash: bool) -> None:
    """fix52b kept a run whose agent returned as a stop came (execution.Returned), for an
    `async def` agent: a plain `def` agent's thread that had returned, its outcome not
    yet handed to the run by the loop, was abandoned and the run lost. Now the run's
    last step comes with the stop, and makes its record (an agent's crash as _invoke
    records it: its traceback kept)."""
    from passhat.execution import Returned, run_once_then
    from passhat.executors import Job

    suite = _seed_suite()
    running: list[asyncio.Task[None]] = []
    agent = _stopped_as_it_returns(lambda: running[0].cancel(), [], crash=crash)
    loaded = replace(resolve_agent("agents_for_tests:sync_perfect"), agent=agent)
    experiment = new_experiment(suite, loaded, "", None, k=1, params={"max_turns": 1})
    caught: list[Returned] = []

    async def run() -> None:
        try:
            await run_once_then(
                Job(experiment, suite, loaded, None, RunOptions()), suite.cases[0], 1
            )
        except Returned as stop:
            caught.append(stop)
            raise

    running.append(asyncio.create_task(run()))
    with pytest.raises(asyncio.CancelledError):
        await running[0]
    assert len(caught) == 1, "the run was given up, its agent done"
    assert caught[0].last_step is not None
    record = caught[0].last_step()
    assert isinstance(record, RunRecord) and record.run_index == 1
    if crash:
        assert (record.status, record.error_type) == ("errored", "agent_error")
        assert record.error_message == "RuntimeError: the agent's own bug"
        assert record.traceback is not None and "the agent's own bug" in record.traceback
    else:
        assert (record.status, record.output) == ("passed", "done in a thread")


async def test_a_sync_agents_run_kept_at_a_stop_is_stored_once_and_not_run_again(
    tmp_path: Path,
) -> None:
    """The stop reaching run 1's slot (bounded's, as closing the executor's runs does)
    just as its sync agent returned: run 1 is stored, once, and resume runs 2 and 3 only."""
    suite = _seed_suite()
    ran: list[int] = []
    experiment_task: list[asyncio.Task[int]] = []

    def stop() -> None:  # a Ctrl-C's cancel, and the executor's, landing at once
        slots = [t for t in asyncio.all_tasks() if t.get_coro().__name__ == "slot"]  # type: ignore[union-attr]
        assert len(slots) == 1
        for task in (experiment_task[0], *slots):
            task.cancel()

    loaded = replace(
        resolve_agent("agents_for_tests:sync_perfect"), agent=_stopped_as_it_returns(stop, ran)
    )
    experiment = new_experiment(suite, loaded, "", None, k=3, params={"max_turns": 1})
    options = RunOptions(concurrency=1)
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        experiment_task.append(
            asyncio.create_task(run_experiment(store, experiment, suite, loaded, None, options))
        )
        with pytest.raises(asyncio.CancelledError):
            await experiment_task[0]
        assert [run.run_index for run in store.runs(experiment.id)] == [1]
        resumed = replace(loaded, agent=_stopped_as_it_returns(stop, ran, at=0))
        assert await run_experiment(store, experiment, suite, resumed, None, options) == 2
        runs = store.runs(experiment.id)
    assert sorted(run.run_index for run in runs) == [1, 2, 3]
    assert ran == [1, 2, 3], "run 1 was run again"
    assert {run.status for run in runs} == {"passed"}
