"""Model requests refused for their size count against a small per-run budget
(endpoints.REFUSED): each was read and counted on the event loop every run shares (~0.6 s
of passhat's CPU for 32 MiB of empty messages), bounded only by the run's 4 GiB of reads.
The REFUSED-th spends the run (`agent_flood`, its agent stopped) and its later requests
are refused unread. What a loop of them costs passhat is measured in
benchmarks/bench_serve_refused.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import hub_scope, serve_run
from passhat.serve.endpoints import MESSAGES, REFUSED
from passhat.suite import load_suite

pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]
PAST = json.dumps({"model": "m", "messages": [{"role": "user"}] * (MESSAGES + 1)}).encode()
"""A request past the messages cap: refused with 413 (cheap to build and to send)."""
FITS = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


async def _statuses(bodies: list[bytes]) -> tuple[list[int], str | None, bool]:
    """The answers to `bodies` sent in turn by one run to its chat endpoint, and its
    budget's state after them (why spent, whether its agent is told to stop)."""
    import httpx2

    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    statuses = []
    async with hub_scope(), serve_run(env, ctx) as run, httpx2.AsyncClient(timeout=60) as http:
        for body in bodies:
            answer = await http.post(
                f"http://127.0.0.1:{run.port}/v1/chat/completions",
                content=body,
                headers={"Authorization": f"Bearer {run.token}"},
            )
            statuses.append(answer.status_code)
    return statuses, run.tools.spent, run.tools.stop.is_set()


async def test_the_runs_refused_requests_past_the_budget_spend_it() -> None:
    """Before, every one of them was read and answered 413, the run never spent (seen
    on main: [413] * 6)."""
    statuses, spent, stopped = await _statuses([PAST] * (REFUSED + 2))
    assert statuses == [413] * REFUSED + [429, 429]
    assert spent is not None and f"{REFUSED} model requests too large to read" in spent
    assert stopped


async def test_fewer_refused_requests_leave_the_run_served() -> None:
    """The control: a run refused REFUSED - 1 times is still answered (here 400: the
    experiment has no model), not spent."""
    statuses, spent, stopped = await _statuses([PAST] * (REFUSED - 1) + [FITS])
    assert statuses == [413] * (REFUSED - 1) + [400]
    assert (spent, stopped) == (None, False)
