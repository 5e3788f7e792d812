"""One run's large model request must not stop passhat's event loop, which every run
shares (round 11's outside attack, fixed).

A model request may bring 32 MiB, and the proxy read all of it on the event loop: the
body as JSON (app.read_request), then every message (proxy.parse_messages; on
/v1/messages, anthropic_proxy.openai_shaped first), before any check. A body of 1.1
million empty messages ending with an assistant answer counts nothing against the run's
budget (nothing new), and held the loop still 6.0 s on /v1/chat/completions and 11.2 s
on /v1/messages: no other run's tool call or model request was answered and no timer
fired. An agent sending them one after another (eight at once) held the loop as long as
its run lasted, enough to make the other runs' agents time out.

Now a request's JSON values are counted before it is parsed (the loop turning while they
are), and one past endpoints.VALUES, or with more than endpoints.MESSAGES messages, is
refused with 413 before any of it is parsed. Each test serves a run in this process and
sends a request while a task on the same loop ticks every 20 ms: the longest pause
between ticks must stay under STILL. The last one is the attack itself: a command agent
at `--isolation namespace` (as root and as nobody) floods the proxy while it lists its
tools, and every request is refused before it is parsed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_python import PYTHON
from conftest import SuiteWriter
from loop_pauses import loop_pauses
from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import hub_scope, serve_run
from passhat.serve.app import MAX_BODY
from passhat.serve.endpoints import MESSAGES, VALUES
from passhat.suite import load_suite
from sandbox_helpers import ATTACK_MARKS, one_run

pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = b'{"role":"user","content":""},'
STILL = 1.0
"""Longest pause of the loop allowed (s of the loop thread's CPU). With the fix the
longest measured was 0.13 s (the largest request read: json.loads and the messages of
half a million values, chrt -f 20), and 0.60 s in a clean clone's `make test` beside
another test file; without it, the 32 MiB request of empty messages held it 2.8 s
(chat) and 4.1 s (messages)."""
PATHS = ["/v1/chat/completions", "/v1/messages"]


def _empty_messages(size: int) -> bytes:
    """A chat request of about `size` bytes: empty user messages, then an assistant's."""
    many = MESSAGE * ((size - 100) // len(MESSAGE))
    return b'{"model":"m","messages":[' + many + b'{"role":"assistant","content":"ok"}]}'


def _escapes(size: int) -> bytes:
    """A request whose one message is a string of escaped quotes after a million commas
    (past the quick bound, so its values are counted one by one through the string)."""
    text = b"," * VALUES + b'\\"' * ((size - VALUES - 100) // 2)
    return b'{"model":"m","messages":[{"role":"user","content":"' + text + b'"}]}'


def _parts_at_the_cap() -> bytes:
    """The most work a request passhat reads may bring: MESSAGES messages whose content
    is empty text parts, their values just under VALUES."""
    per = (VALUES - 10 * MESSAGES) // (3 * MESSAGES)  # `{"text":""},` is 3 values
    message = {"role": "user", "content": [{"text": ""}] * per}
    body = {"model": "m", "messages": [message] * MESSAGES}
    return json.dumps(body, separators=(",", ":")).encode()


async def _send(path: str, body: bytes) -> tuple[Any, float, float]:
    """The answer to `body` sent by a run to `path`, the request's time and the longest
    pause of the event loop meanwhile, in the loop thread's CPU time: the work done on the
    loop between two of its turns (a machine loaded by other tests stretches the wall
    time of a pause, not its work)."""
    import httpx2

    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    loop = asyncio.get_running_loop()
    async with (
        hub_scope(),
        serve_run(env, ctx) as run,
        httpx2.AsyncClient(timeout=300) as http,
        loop_pauses() as pauses,
    ):
        start = loop.time()
        answer = await http.post(
            f"http://127.0.0.1:{run.port}{path}",
            content=body,
            headers={"Authorization": f"Bearer {run.token}"},
        )
        took = loop.time() - start
    return answer, took, max(pauses)


def _message(answer: Any) -> str:
    error = answer.json()["error"]
    return str(error["message"])


@pytest.mark.parametrize("path", PATHS)
async def test_a_large_model_request_leaves_the_event_loop_turning(path: str) -> None:
    answer, took, still = await _send(path, _empty_messages(MAX_BODY - 1024))
    assert answer.status_code == 413, answer.text
    assert f"more than {VALUES:,} JSON values" in _message(answer)
    assert still < STILL, (
        f"the event loop stood still {still:.2f} s (the request took {took:.2f} s)"
    )


@pytest.mark.parametrize("path", PATHS)
async def test_a_string_of_escapes_is_counted_with_the_event_loop_turning(path: str) -> None:
    """One regular-expression call over 30 MiB of escapes took 1 s: the count reads a
    string a window at a time. The request has few values: it is read."""
    answer, took, still = await _send(path, _escapes(MAX_BODY - 1024))
    assert (answer.status_code, "no model" in _message(answer)) == (400, True)
    assert still < STILL, (
        f"the event loop stood still {still:.2f} s (the request took {took:.2f} s)"
    )


@pytest.mark.parametrize("path", PATHS)
async def test_the_largest_request_read_leaves_the_event_loop_turning(path: str) -> None:
    answer, took, still = await _send(path, _parts_at_the_cap())
    # read whole, then refused: the experiment has no model
    assert answer.status_code == 400, answer.text
    assert "no model" in _message(answer)
    assert still < STILL, (
        f"the event loop stood still {still:.2f} s (the request took {took:.2f} s)"
    )


@pytest.mark.parametrize("path", PATHS)
async def test_a_request_past_the_messages_cap_is_refused_with_413(path: str) -> None:
    message = {"role": "user", "content": "hi"}
    at_cap = json.dumps({"model": "m", "messages": [message] * MESSAGES}).encode()
    answer, _, _ = await _send(path, at_cap)
    assert (answer.status_code, "no model" in _message(answer)) == (400, True)
    past = json.dumps({"model": "m", "messages": [message] * (MESSAGES + 1)}).encode()
    answer, _, _ = await _send(path, past)
    assert answer.status_code == 413, answer.text
    assert _message(answer) == (
        f"the request brings {MESSAGES + 1:,} messages; passhat's proxy reads at most "
        f"{MESSAGES:,} in one model request"
    )


@pytest.mark.parametrize("path", PATHS)
async def test_commas_inside_strings_are_not_counted_as_values(path: str) -> None:
    """Past the quick bound (bytes `[{,:` anywhere) a request is counted value by value:
    a long text full of commas is read, not refused."""
    text = "a, b: {c} [d]" * (VALUES // 2)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]})
    answer, _, still = await _send(path, body.encode())
    assert (answer.status_code, "no model" in _message(answer)) == (400, True)
    assert still < STILL


async def test_a_run_that_sends_more_than_its_read_budget_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refused request costs its reading and counting all the same: the run's requests
    together may bring READ_BYTES (here 1 MiB), then the run is spent (`agent_flood`) and
    its later requests are refused unread."""
    import httpx2

    from passhat.serve import endpoints

    monkeypatch.setattr(endpoints, "READ_BYTES", 1 << 20)
    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    body = _empty_messages(400_000)
    async with hub_scope(), serve_run(env, ctx) as run, httpx2.AsyncClient(timeout=60) as http:
        statuses = []
        for path in ["/v1/chat/completions", "/v1/messages", "/v1/chat/completions"] * 2:
            answer = await http.post(
                f"http://127.0.0.1:{run.port}{path}",
                content=body if run.tools.spent is None else b"{}",  # refused unread
                headers={"Authorization": f"Bearer {run.token}"},
            )
            statuses.append(answer.status_code)
        spent = run.tools.spent
    assert statuses == [413, 413, 429, 429, 429, 429]
    assert spent is not None and "model requests past 0 GiB in all" in spent
    assert run.tools.stop.is_set()


AGENT = """
import json, os, threading, time, urllib.error, urllib.request

MESSAGE = b'{"role":"user","content":""},'
many = MESSAGE * (((32 << 20) - 1124) // len(MESSAGE))
body = b'{"model":"m","messages":[' + many + b'{"role":"assistant","content":"ok"}]}'
token = os.environ["PASSHAT_OPENAI_API_KEY"]


def post(url, data, **headers):
    request = urllib.request.Request(url, data, {"Authorization": "Bearer " + token, **headers})
    try:
        with urllib.request.urlopen(request, timeout=100) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


statuses = []


def flood():
    for _ in range(3):
        url = os.environ["PASSHAT_OPENAI_BASE_URL"] + "/chat/completions"
        statuses.append(post(url, body, **{"Content-Type": "application/json"}))


listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
kinds = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
thread = threading.Thread(target=flood)
thread.start()
waits = []
while thread.is_alive():
    start = time.monotonic()
    assert post(os.environ["PASSHAT_MCP_URL"], listing.encode(), **kinds) == 200
    waits.append(time.monotonic() - start)
    time.sleep(0.02)
print(json.dumps({"flood": statuses, "slowest": max(waits), "listed": len(waits)}))
"""
"""A command agent that sends three requests of 1.1 million empty messages one after
another while it lists its tools over MCP every 20 ms: the longest a listing waited."""
# How long a listing waited is printed, not asserted (a wall time under a loaded test
# machine): before, the listings sent meanwhile waited 1.43 to 1.49 s (chrt -f 20; 1.53
# to 1.93 s without), each request read and parsed on passhat's loop; now 0.22 to 0.26 s
# (0.35 to 0.49 s), each refused unparsed. The loop's own work is asserted above.


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_sandboxed_agents_large_requests_leave_its_tool_calls_answered(
    user: str, open_tmp: Path
) -> None:
    """The same attack from a command agent at `--isolation namespace`, as root and as
    nobody: its own tool calls stand for every other run's, served by the same loop."""
    work = open_tmp / "work"
    work.mkdir()
    (work / "agent.py").write_text(AGENT)
    writer = SuiteWriter(work / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "agent.py")]
    }
    # an answer for each large request: before, they were read and answered
    answers = [
        {"case": "tiny-001", "run": 1, "turn": turn, "message": {"role": "assistant"}}
        for turn in range(3)
    ]
    tape = [{"cassette": 1, "model": "t", "note": "t"}, *answers]
    writer.files["tape.jsonl"] = "".join(json.dumps(line) + "\n" for line in tape)
    suite = writer.write()
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", "namespace")
    assert run.output is not None, run.error_message
    assert run.output["flood"] == [413] * 3, run.output
    assert run.output["listed"] >= 1, run.output


def _marks(value: Any) -> int:
    """The values and keys below `value` (an empty object or array counts one): what
    app.count_values counts of its JSON."""
    if isinstance(value, dict):
        return sum(2 + _marks(v) for v in value.values()) or 1
    if isinstance(value, list):
        return sum(1 + _marks(v) for v in value) or 1
    return 0


TRICKY = [
    {"a": 'x\\",y:[{', "b": [1, 2, {}], "c": [], "d": {"e": "\\\\"}},
    ["\\", '"', ",:[{", "\\\\\\", {"k,": "v:"}, [[[]]], "a\nb", "\u00e9\U0001f600"],
    {"messages": [{"role": "user", "content": "\\" * 9 + '"' + ","}] * 5},
]


@pytest.mark.parametrize("window", [2, 3, 5, 7, 1 << 18])
@pytest.mark.parametrize("value", TRICKY, ids=["object", "array", "messages"])
async def test_values_are_counted_outside_strings_across_windows(
    monkeypatch: pytest.MonkeyPatch, window: int, value: Any
) -> None:
    from passhat.serve import app

    monkeypatch.setattr(app, "WINDOW", window)
    for ascii_only in (True, False):
        raw = json.dumps(value, ensure_ascii=ascii_only).encode()
        assert await asyncio.wait_for(app.count_values(raw), 5) == _marks(value)


@pytest.mark.parametrize("window", [2, 3, 1 << 18])
async def test_a_backslash_before_a_raw_newline_ends_the_count(
    monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """Not JSON (json.loads refuses it), but the count must end: a pattern whose `.`
    took no newline stopped at the backslash for ever."""
    from passhat.serve import app

    monkeypatch.setattr(app, "WINDOW", window)
    for raw in (b'{"a":"\\\n","b":1}', b'{"a":"\\\n', b'{"a":"\\', b'{"a":"'):
        assert await asyncio.wait_for(app.count_values(raw), 5) >= 1


def _reference(raw: bytes) -> int:
    """count_values byte by byte: the marks `[{,:` outside strings (a backslash in a string
    takes the next byte whole; a string never closed holds the rest)."""
    count, in_string, escaped = 0, False, False
    for byte in raw:
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = byte == 0x5C, byte != 0x22
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{,:":
            count += 1
    return min(count, VALUES)


@example(b'["\\\n,"]', 1 << 18)  # an escaped newline in a string closed in the window
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(list(b'"\\,:[{]} a\n')), max_size=60).map(bytes),
    st.sampled_from([2, 3, 5, 7, 1 << 18]),
)
def test_any_bytes_are_counted_as_byte_by_byte_across_windows(raw: bytes, window: int) -> None:
    """The count reads a window's closed strings and what lies between them at once: on
    any bytes, at any window, what a byte-by-byte reading counts (escapes and strings cut
    at a window's end, strings never closed). (A window of 1 byte never held an escape:
    the count never ended, before as now; WINDOW is 256 KiB.)"""
    from passhat.serve import app

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(app, "WINDOW", window)
        assert asyncio.run(app.count_values(raw)) == _reference(raw)
