"""One run at `--isolation process` holding every slot of the experiment's shared listener
with idle connections: the run beside it lost its tools, and was errored as its own crash
(round 17's outside attack).

At `process` every run reaches passhat through one listener on the host's loopback,
capped at every run's share together (round 16: tests/test_attack54_descriptors.py), and
a connection is taken before its token is read. A run that opens connections and sends
nothing on them (tests/attack55_agent.py, ATTACK55_HOLD: it held 256, the cap, under a
limit of 1,024 open files at --concurrency 2) left the listener full, and it closed every
later connection as it came: the other run's request for its tools was reset, and that
run was recorded errored `agent_exit` ("cannot list my tools: ConnectionResetError"),
charged to the victim agent, while the attacker's run was counted.

Fixed: a full listener closes its oldest quiet connection (no request under way: none
sent yet, or its answer given) for a new one (serve/http.py `_Live.room`), so held idle
connections shut no one out; a run's own listener at `namespace` does the same among its
own. And a connection that holds a request under way is made quiet: a run's requests
under way past its share of connections are answered 429 at once, and requests with no
live run's token are drained before their 401 (serve/http.drain) 8 at once, the others
answered at once (serve/hub.py). Before, both kinds filled the shared listener and it
refused the next connection; so did connections each sent part of a head and no more
(review56: with none quiet, the head coming longest is closed). A same-user agent at `process` can still kill passhat
outright: what is asked of this level is that a run's flood of its own endpoint is not
charged to another run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_python import skip_if_closed
from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import endpoints, hub_scope, serve_run
from passhat.suite import load_suite
from sandbox_helpers import ATTACK_MARKS, attack_in, runs_at

ROOT = Path(__file__).resolve().parents[1]
HEAD = b"GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n"


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_run_beside_one_holding_the_shared_listener_still_reaches_its_tools(
    open_tmp: Path,
) -> None:
    skip_if_closed()  # passhat itself runs as a uid of its own, from the checkout
    most = 4 * endpoints.CONNECTIONS  # twice the cap of two runs at the most: it fills
    suite, out = attack_in(open_tmp, "ATTACK55_HOLD", f"30,{most}", agent="attack55_agent.py")
    runs = runs_at("unprivileged", open_tmp, suite, "process", "--no-report")
    assert int((out / "holding").read_text()) >= 2 * endpoints.CONNECTIONS_FLOOR
    attacker, victim = sorted(runs, key=lambda r: "held" in (r.output or {}), reverse=True)
    assert attacker.output and attacker.output["held"] > 0, attacker.error_message
    assert (victim.status, victim.error_message) == ("failed", None)
    assert victim.output == {"tools": 3}


@contextlib.asynccontextmanager
async def _two_runs() -> AsyncIterator[tuple[int, str]]:
    """Two runs served at once, as at `process`: the shared port, the first run's token."""
    suite = load_suite(ROOT / "examples" / "clarify")
    case = suite.case("ac-conflict-001")
    ctx = [RunContext(case_id=case.id, run_index=i, seed=i, model=None) for i in (1, 2)]
    async with (
        hub_scope(2),
        serve_run(make_environment(suite, case), ctx[0]) as one,
        serve_run(make_environment(suite, case), ctx[1]) as two,
    ):
        assert one.port == two.port
        yield one.port, one.token


async def _answer(port: int) -> bytes:
    """The first line of the answer to a request with no token on a new connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        with contextlib.suppress(ConnectionError):
            writer.write(HEAD)
            await writer.drain()
        try:
            return await asyncio.wait_for(reader.readline(), 30)
        except ConnectionError:
            return b""
    finally:
        writer.close()


Held = list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]


async def _held(port: int, count: int, send: bytes) -> Held:
    """`count` connections to `port`, each sent `send`, held open; accepted before return."""
    held = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(send)
        held.append((reader, writer))
    await asyncio.sleep(0.5)  # every one of them accepted, and what it sent read
    return held


async def test_connections_held_idle_shut_no_other_run_out_of_the_shared_listener() -> None:
    async with _two_runs() as (port, _):
        held = await _held(port, endpoints.shared_connections(), b"")
        try:
            assert (await _answer(port)).startswith(b"HTTP/1.1 401")
            oldest, newest = held[0][0], held[-1][0]
            assert await asyncio.wait_for(oldest.read(), 10) == b""  # closed to make room
            assert not newest.at_eof()
        finally:
            for _, writer in held:
                writer.close()


async def test_a_request_whose_head_is_still_coming_is_not_what_a_full_listener_closes() -> None:
    """review55b: a connection that had sent part of a request's head counted as quiet
    (no request parsed yet), and a full listener closed it for a new one: a well-behaved
    run's request reset. The oldest connection that is really idle goes instead."""
    async with _two_runs() as (port, _):
        coming = await _held(port, 1, b"POST /mcp HTTP/1.1\r\nHost: x\r\n")  # no end yet
        held = await _held(port, endpoints.shared_connections() - 1, b"")
        try:
            assert (await _answer(port)).startswith(b"HTTP/1.1 401")
            assert await asyncio.wait_for(held[0][0].read(), 10) == b""  # closed for it
            assert not coming[0][0].at_eof()
        finally:
            for _, writer in coming + held:
                writer.close()


@pytest.mark.parametrize("token", [True, False], ids=["its-own-token", "no-token"])
async def test_requests_held_under_way_shut_no_other_run_out(token: bool) -> None:
    """Every connection the listener holds sent a request's head and never its body: with
    the run's own token (it waits its turn, unread) or none (its body drained before the
    401). Before, none was quiet, and the listener refused the next connection."""
    async with _two_runs() as (port, mine):
        auth = f"Authorization: Bearer {mine}\r\n" if token else ""
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: x\r\n{auth}"
            "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
        ).encode()
        held = await _held(port, endpoints.shared_connections(), head)
        try:
            assert (await _answer(port)).startswith(b"HTTP/1.1 401")
            # past the run's share (or the few drained at once), answered at once
            answers = [await asyncio.wait_for(r.readline(), 10) for r, _ in held[-4:]]
            status = b"429" if token else b"401"
            assert all(a.startswith(b"HTTP/1.1 " + status) for a in answers), answers
        finally:
            for _, writer in held:
                writer.close()


async def test_heads_that_never_end_shut_no_other_run_out_of_the_shared_listener() -> None:
    """review56: every connection a run holds sent the first line of a request and no
    more: none was quiet (a head coming: review55b), so the listener refused every other
    run's connection as it came, for good. With none quiet, the head coming longest is
    closed for a new connection."""
    async with _two_runs() as (port, _):
        held = await _held(port, endpoints.shared_connections(), b"POST /mcp HTTP/1.1\r\n")
        try:
            assert (await _answer(port)).startswith(b"HTTP/1.1 401")
            assert await asyncio.wait_for(held[0][0].read(), 10) == b""  # closed for it
            assert not held[-1][0].at_eof()
        finally:
            for _, writer in held:
                writer.close()


async def test_the_server_speaks_h11_whatever_else_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """review56: uvicorn's "auto" takes httptools when it is installed (uvicorn[standard]),
    whose protocol has no h11 buffer for `quiet` to look in: a head still coming counted
    as quiet again (review55b), and one never ending could not be told apart."""
    import uvicorn.protocols.http.auto
    from uvicorn.protocols.http.h11_impl import H11Protocol

    made: list[object] = []

    class Auto(H11Protocol):  # what "auto" picks: httptools' protocol, were it installed
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(uvicorn.protocols.http.auto, "AutoHTTPProtocol", Auto)
    async with _two_runs() as (port, _):
        assert (await _answer(port)).startswith(b"HTTP/1.1 401")
    assert made == []
