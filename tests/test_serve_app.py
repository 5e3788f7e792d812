"""The model endpoints of the app every command-agent run is served by (serve/app.py):
a request they will not pass on is answered in the words of the API it came in, with
the status that says why: 413 past MAX_BODY, 400 when the body is not JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import app, hub_scope, serve_run
from passhat.suite import load_suite

pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]


async def _answers(body: bytes) -> dict[str, tuple[int, Any]]:
    """Status and JSON answer of each model endpoint to `body`, sent by a run."""
    import httpx2

    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    out = {}
    async with hub_scope(), serve_run(env, ctx) as run, httpx2.AsyncClient() as http:
        for path in ("/v1/chat/completions", "/chat/completions", "/v1/messages"):
            answer = await http.post(
                f"http://127.0.0.1:{run.port}{path}",
                content=body,
                headers={"Authorization": f"Bearer {run.token}"},
            )
            out[path] = (answer.status_code, answer.json())
    return out


async def test_a_body_past_the_cap_is_refused_with_413_in_each_apis_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app, "MAX_BODY", 64)
    answers = await _answers(b'{"messages": "' + b"x" * 100 + b'"}')
    assert answers["/v1/chat/completions"] == answers["/chat/completions"]
    status, body = answers["/v1/chat/completions"]
    assert (status, body["error"]["message"]) == (413, "request too large")
    status, body = answers["/v1/messages"]
    assert status == 413
    assert body["type"] == "error" and body["error"]["message"] == "request too large"


async def test_a_body_that_is_not_json_is_refused_with_400_in_each_apis_words() -> None:
    answers = await _answers(b"hello, not JSON")
    status, body = answers["/v1/chat/completions"]
    assert (status, body["error"]["message"]) == (400, "the body is not JSON")
    status, body = answers["/v1/messages"]
    assert status == 400 and body["type"] == "error"
    assert body["error"]["message"].startswith("passhat cannot read this request: Expecting value")


async def test_json_nested_past_pythons_limit_is_a_400_not_a_500_with_a_traceback() -> None:
    # json.loads raised RecursionError (not a ValueError): HTTP 500 and a traceback in the log
    deep = b"[" * 100_000 + b"]" * 100_000
    for status, _ in (await _answers(deep)).values():
        assert status == 400
    arguments = "[" * 950 + "]" * 950  # the body reads; the tool call's arguments do not
    call = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": arguments}}
    body = {
        "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call]}]
    }
    status, answer = (await _answers(json.dumps(body).encode()))["/v1/chat/completions"]
    assert status == 400
    assert "arguments are JSON nested too deep" in answer["error"]["message"]


async def test_a_failed_start_of_the_mcp_server_is_tried_again_and_is_passhats_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One failed import of the MCP SDK (a thread that could not start) was kept for the
    server's life: every later /mcp request of every run was a 500, graded as its agent's
    failure. The next request starts it again; the run that got the 500 is passhat's."""
    import httpx2

    from passhat.serve import lazy_mcp

    made = lazy_mcp._import_mcp
    tries: list[int] = []

    def once_failing() -> Any:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("can't start new thread")
        return made()

    monkeypatch.setattr(lazy_mcp, "_import_mcp", once_failing)
    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    async with hub_scope(), httpx2.AsyncClient() as http:
        statuses = []
        for _ in range(2):
            async with serve_run(env, ctx) as run:
                answer = await http.post(
                    run.mcp_url,
                    json=hello,
                    headers={**headers, "Authorization": f"Bearer {run.token}"},
                )
                statuses.append((answer.status_code, run.tools.failed))
    assert [s for s, _ in statuses] == [500, 200], statuses
    assert "MCP server could not start" in (statuses[0][1] or ""), statuses
    assert statuses[1][1] is None
    assert len(tries) == 2


def test_a_run_passhat_failed_to_serve_is_recorded_as_passhats_error() -> None:
    from passhat.agents.command import _raise_run_error
    from passhat.agents.streams import AgentProcessError
    from passhat.serve.endpoints import RunEndpoints, ToolBudget
    from passhat.serve.proxy import ModelProxy

    ctx = RunContext(case_id="c", run_index=1, seed=1, model=None)
    tools = ToolBudget()
    tools.fail("passhat's MCP server could not start: RuntimeError()")
    tools.fail("a later one")  # the first is told
    endpoints = RunEndpoints("u", "u", "t", ModelProxy(ctx), tools=tools)
    with pytest.raises(AgentProcessError) as raised:
        _raise_run_error(endpoints)
    assert raised.value.error_type == "passhat_error"
    assert str(raised.value).endswith("could not start: RuntimeError()")
