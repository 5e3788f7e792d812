"""The loops passhat opens besides the round's (a shipped batch's runs, a judge's grading
outside a loop) close through _leftovers.run_loop: an agent or a user's scorer that
catches every cancel is left behind, not waited for forever (hang55 fixed the round's)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED
from passhat.agents import resolve_agent
from passhat.executors import Job
from passhat.executors.shipment import prepare, ship
from passhat.runner import RunOptions, new_experiment
from passhat.scoring import score_run
from passhat.suite import load_suite


def _alive(prefix: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(prefix)]


def test_a_shipped_batch_goes_on_past_an_agent_that_swallows_every_cancel() -> None:
    """Each run is the run's own timeout, the batch stays on its thread and the thread
    ends (asyncio.run's shutdown waited on the left-behind agent forever: the worker
    gave each run up at timeout + GRACE_S as one that "ignored its deadline", and kept
    a thread per run stuck)."""
    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})
    agent = resolve_agent("agents_for_tests:swallows_every_cancel")
    experiment = new_experiment(suite, agent, "", None, k=2, params={"max_turns": 4})
    ready = prepare(ship(Job(experiment, suite, agent, None, RunOptions(timeout_s=0.3))), "t")
    records = ready.run_batch([(SEED, 1, 1), (SEED, 2, 1)])
    assert [(r.run_index, r.status, r.error_type) for r in records] == [
        (1, "errored", "timeout"),
        (2, "errored", "timeout"),
    ]
    assert all("ignored its deadline" not in (r.error_message or "") for r in records), [
        r.error_message for r in records
    ]
    until = time.monotonic() + 5
    while _alive("passhat-runs-1-2") and time.monotonic() < until:
        time.sleep(0.05)
    assert not _alive("passhat-runs-1-2"), "the batch's thread never ended"


SCORERS = '''
import asyncio, contextlib

async def _swallows():
    while True:
        with contextlib.suppress(BaseException):  # the misbehaviour under test
            await asyncio.sleep(30)

def leaves_a_task(final_state, goal):
    """Passes, leaving a task behind on the grading loop that never ends."""
    asyncio.get_running_loop().create_task(_swallows())
    return True
'''


def test_a_judged_grading_returns_though_a_scorer_left_a_task_that_swallows_every_cancel(
    tmp_path: Path,
) -> None:
    """score_run with a judge runs a loop of its own; a user's scorer on it that leaves
    a task catching every cancel kept it from returning (the run's grading timed out,
    a regrade hung)."""
    from test_scorers_more import RUBRIC, _judge_line, write_suite

    root = write_suite(
        tmp_path / "s",
        [
            {"custom": "scorers.py:leaves_a_task"},
            {"judge": RUBRIC, "model": "replay:judge.jsonl"},
        ],
        [_judge_line(1, "It states 5 days.\nVERDICT: PASS")],
    )
    (root / "scorers.py").write_text(SCORERS, encoding="utf-8")
    suite = load_suite(root)
    got: list[object] = []
    state = {"answer": {"text": "Refunds take 5 days."}}
    worker = threading.Thread(
        target=lambda: got.append(score_run(suite, suite.cases[0], state, run_index=1)),
        name="fix55-score",
        daemon=True,  # left behind if it hangs
    )
    worker.start()
    worker.join(15)
    if worker.is_alive():
        pytest.fail("score_run did not return within 15 s")
    assert [s.passed for s in got] == [True]  # type: ignore[attr-defined]
