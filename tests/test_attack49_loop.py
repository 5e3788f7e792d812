"""One run's large model request stops passhat's event loop, which every run shares
(round 11's outside attack; not fixed: xfail).

A model request may bring 32 MiB, and the proxy reads all of it on the event loop: the
body as JSON (app.read_request), then every message (proxy.parse_messages; on
/v1/messages, anthropic_proxy.openai_shaped first), before any check. A body of 1.1
million empty messages ending with an assistant answer counts nothing against the run's
budget (nothing new), and here held the loop still 6.0 s on /v1/chat/completions and
11.2 s on /v1/messages: no other run's tool call or model request was answered and no
timer fired. An agent sending them one after another (eight at once) holds the loop as
long as its run lasts, enough to make the other runs' agents time out.

The test serves a run in this process and sends such a request while a task on the same
loop ticks every 20 ms: the longest pause between ticks must stay under STILL.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import hub_scope, serve_run
from passhat.serve.app import MAX_BODY
from passhat.suite import load_suite

pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = b'{"role":"user","content":""},'
STILL = 0.25
"""Longest pause of the loop allowed (s). Reading 32 MiB of empty messages as JSON alone
takes longer on any machine (here 0.3 to 1.1 s, and parsing them 1 to 3.6 s more)."""


def _body(size: int) -> bytes:
    """A chat request of about `size` bytes: empty user messages, then an assistant's."""
    many = MESSAGE * ((size - 100) // len(MESSAGE))
    return b'{"model":"m","messages":[' + many + b'{"role":"assistant","content":"ok"}]}'


@pytest.mark.xfail(
    strict=True,
    reason="not fixed: the proxy reads a model request's body as JSON and parses its messages "
    "on the event loop every run shares (app.read_request, proxy.parse_messages), before any "
    "budget; on a thread the C JSON reader still holds the GIL for its whole call, so a fix "
    "needs the per-request work bounded (fewer bytes or messages per request) or moved to a "
    "process",
)
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
async def test_a_large_model_request_leaves_the_event_loop_turning(path: str) -> None:
    import httpx2

    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    body = _body(MAX_BODY - 1024)
    loop = asyncio.get_running_loop()
    pauses: list[float] = []

    async def tick() -> None:
        last = loop.time()
        while True:
            await asyncio.sleep(0.02)
            now = loop.time()
            pauses.append(now - last)
            last = now

    async with hub_scope(), serve_run(env, ctx) as run, httpx2.AsyncClient(timeout=300) as http:
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.05)
        pauses.clear()
        start = loop.time()
        answer = await http.post(
            f"http://127.0.0.1:{run.port}{path}",
            content=body,
            headers={"Authorization": f"Bearer {run.token}"},
        )
        took = loop.time() - start
        await asyncio.sleep(0.1)  # the ticker's turn: the pause the answer ended is counted
        ticker.cancel()
    # the experiment has no model: read whole, then refused (what is measured is the read)
    assert answer.status_code == 400, answer.text
    assert max(pauses) < STILL, (
        f"the event loop stood still {max(pauses):.2f} s (the request took {took:.2f} s)"
    )
