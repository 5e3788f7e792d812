"""One server for every command-agent run of an experiment (serve/hub.py): each request is
routed by its run's token, a run's own listener takes only that run's token, an ended
run's token is refused, and every run of an experiment is served at the same port."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from passhat.agents.base import RunContext
from passhat.env import Environment, make_environment
from passhat.serve import hub_scope, serve_run
from passhat.store import Store
from passhat.suite import Suite, load_suite

pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


def _suite_and_env() -> tuple[Suite, Environment]:
    suite = load_suite(ROOT / "examples" / "clarify")
    return suite, make_environment(suite, suite.case("ac-conflict-001"))


async def _post(port: int, token: str, body: dict[str, Any] = LIST) -> int:
    """The status of a tools/list (or `body`) sent to 127.0.0.1:`port` with `token`."""
    import httpx2

    headers = {**MCP, "Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers)
    return answer.status_code


def _listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock


async def test_runs_share_one_server_and_each_token_reaches_only_its_own_run() -> None:
    _, env_a = _suite_and_env()
    _, env_b = _suite_and_env()
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    async with hub_scope():
        async with serve_run(env_a, ctx) as a, serve_run(env_b, ctx) as b:
            assert a.port == b.port and a.token != b.token
            assert await _post(a.port, a.token) == 200
            assert await _post(b.port, b.token) == 200
            assert await _post(a.port, "forged") == 401
        # both ended: their tokens are refused on the server that is still up
        async with serve_run(env_a, ctx) as c:
            assert c.port == a.port
            assert await _post(c.port, a.token) == 401
            assert await _post(c.port, c.token) == 200


async def test_a_runs_own_listener_takes_only_its_own_token() -> None:
    """A sandboxed run's listener (made in its network namespace) is bound to the run: an
    agent holding another run's token learns nothing through it."""
    _, env = _suite_and_env()
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    async with hub_scope():
        async with serve_run(env, ctx) as a, serve_run(env, ctx) as b:
            assert a.listen is not None
            own = _listener()
            port = own.getsockname()[1]
            await a.listen(own)
            assert await _post(port, a.token) == 200
            assert await _post(port, b.token) == 401
            assert await _post(a.port, b.token) == 200  # the shared port takes any live run's
        # the ended run's listener is closed: the socket itself, not a connection to its
        # port refused (once freed, the port may be bound by any other process meanwhile)
        assert own.fileno() == -1


async def test_an_ended_runs_request_in_flight_is_cancelled_after_a_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request still in flight when its run ends (an agent killed mid-call) gets
    STOP_GRACE_S, then is cancelled: nothing of the run goes on after it."""
    from passhat.serve import hub as hub_module

    monkeypatch.setattr(hub_module, "STOP_GRACE_S", 0.2)
    _, env = _suite_and_env()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def stuck(name: str, arguments: dict[str, Any]) -> Any:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    monkeypatch.setattr(env, "call", stuck)
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}
    async with hub_scope():
        async with serve_run(env, ctx) as endpoints:
            request = asyncio.create_task(_post(endpoints.port, endpoints.token, call))
            await asyncio.wait_for(started.wait(), 10)
        await asyncio.wait_for(cancelled.wait(), 5)
        request.cancel()


@pytest.mark.parametrize("level", ["process", "namespace"])
def test_every_run_of_an_experiment_is_served_on_one_port(level: str, open_tmp: Path) -> None:
    """The runner opens one hub per experiment: three runs of a command agent printing
    the MCP URL they were given all name the same port (one server started, not three),
    sandboxed or not."""
    from passhat.agents import resolve_agent
    from passhat.agents.command import CommandSpec
    from passhat.agents.isolation import unavailable
    from passhat.runner import RunOptions, new_experiment, run_experiment

    if unavailable("namespace") is not None and level == "namespace":
        pytest.skip(str(unavailable("namespace")))
    tmp_path = open_tmp  # a root passhat's run uid runs the agent
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\necho "{\\"url\\": \\"$PASSHAT_MCP_URL\\"}"\n')
    agent.chmod(0o755)
    spec = CommandSpec(("/bin/sh", str(agent)), cwd=str(tmp_path), output="json")
    loaded = resolve_agent(spec.spec())
    suite = load_suite(ROOT / "examples" / "clarify")
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case("ac-conflict-001"),)})
    params = {"max_turns": 1, "isolation": level}
    experiment = new_experiment(suite, loaded, "", None, k=3, params=params)
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        asyncio.run(run_experiment(store, experiment, suite, loaded, None, RunOptions()))
        runs = store.runs(experiment.id)
    assert len(runs) == 3 and all(r.status != "errored" for r in runs), [
        r.error_message for r in runs
    ]
    urls = {r.output["url"] for r in runs}
    assert len(urls) == 1 and next(iter(urls)).startswith("http://127.0.0.1:"), urls


def _comms_in_sandbox(folder: Path) -> list[str]:
    """The names of the processes a sandboxed agent sees in its PID namespace."""
    from passhat.agents import resolve_agent
    from passhat.agents.command import CommandSpec
    from passhat.runner import RunOptions, new_experiment, run_experiment

    agent = folder / "comms.sh"
    agent.write_text(
        "#!/bin/sh\nprintf '{\"comms\": ['\nsep=''\n"
        'for f in /proc/[0-9]*/comm; do read -r c < "$f" && printf \'%s"%s"\' "$sep" "$c"; '
        "sep=','; done\nprintf ']}\\n'\n"
    )
    agent.chmod(0o755)
    spec = CommandSpec(("/bin/sh", str(agent)), cwd=str(folder), output="json")
    loaded = resolve_agent(spec.spec())
    suite = load_suite(ROOT / "examples" / "clarify")
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case("ac-conflict-001"),)})
    params = {"max_turns": 1, "isolation": "namespace"}
    experiment = new_experiment(suite, loaded, "", None, k=1, params=params)
    with Store(folder / f"{experiment.id}.db") as store:
        store.create_experiment(experiment)
        asyncio.run(run_experiment(store, experiment, suite, loaded, None, RunOptions()))
        (run,) = store.runs(experiment.id)
    assert run.status != "errored", run.error_message
    comms: list[str] = run.output["comms"]
    return comms


def test_a_root_passhat_listens_inside_the_sandbox_with_no_relay(
    open_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root, passhat listens inside the run's network namespace itself (agents/netns.py):
    the agent's PID namespace holds bwrap's init and the agent, no relay. The control (the
    relay forced, as for an unprivileged passhat) shows the relay's processes are seen."""
    from passhat.agents import isolation, netns

    if isolation.unavailable("namespace") is not None:
        pytest.skip(str(isolation.unavailable("namespace")))
    if not netns.direct():
        pytest.skip("passhat cannot enter a sandbox's network namespace here (not root)")
    direct = _comms_in_sandbox(open_tmp)
    assert "socat" not in direct and not any(c.startswith("python") for c in direct), direct
    monkeypatch.setattr(netns, "direct", lambda: False)
    relayed = _comms_in_sandbox(open_tmp)
    assert "socat" in relayed or any(c.startswith("python") for c in relayed), relayed


def test_bwraps_info_gives_the_sandbox_pid_and_network_namespace_once_whole() -> None:
    from passhat.agents.netns import _info_in

    whole = b'{\n    "child-pid": 25939,\n    "net-namespace": 4026532180\n}\n'
    assert _info_in(whole[:20]) is None  # not all of it yet
    assert _info_in(whole) == (25939, 4026532180)
    for odd in (b"[1, 2]", b'{"pid": 3}', b'{"child-pid": "x"}'):
        with pytest.raises(OSError, match="names no sandbox pid"):
            _info_in(odd)
    with pytest.raises(OSError, match="not the JSON"):
        _info_in(b"{" * 70_000)


def test_a_freed_pid_taken_by_another_process_is_not_entered() -> None:
    """passhat enters the namespace bwrap named, not whatever process holds the pid now:
    this process's own namespace with another number is refused; with its own, it binds."""
    import os

    from passhat.agents import netns

    if not netns.direct():
        pytest.skip("passhat cannot enter network namespaces here (not root)")
    own = os.stat(f"/proc/{os.getpid()}/ns/net").st_ino
    with pytest.raises(OSError, match="no longer the run's sandbox"):
        netns.listen_in(os.getpid(), [0], own + 1)
    (sock,) = netns.listen_in(os.getpid(), [0], own)
    assert sock.getsockname()[0] == "127.0.0.1"
    sock.close()


def _refused_over_unix(path: str, token: str, pause: float, body: bytes | None) -> str:
    """The status line a request with `token` gets on the Unix socket `path` (a relay's
    way in), its head sent first and its body (None: never) `pause` seconds after, as an
    HTTP client may send them; or the error its body's sending met."""
    length = len(body) if body is not None else 64
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n"
        "Connection: close\r\n\r\n"
    )
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(30)
        client.connect(path)
        client.sendall(head.encode())
        if body is not None:
            time.sleep(pause)
            try:
                client.sendall(body)
            except OSError as error:  # the server closed under it: a relay drops the answer
                return type(error).__name__
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    return answer.split(b"\r\n")[0].decode()


async def test_a_refused_request_is_answered_once_its_body_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead token at a run's Unix socket (its relay's way in) is answered 401 after the
    request's body is read: answered at its head and closed, the relay's socat met a
    broken pipe writing the body and dropped the connection, answer unread (attack51: an
    agent saw the connection closed with no answer). A body that never comes is waited
    for REFUSED_BODY_S at most."""
    from passhat.serve import http

    monkeypatch.setattr(http, "REFUSED_BODY_S", 0.5)
    _, env = _suite_and_env()
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    path = str(tmp_path / "api.sock")
    body = json.dumps(LIST).encode()
    async with hub_scope(), serve_run(env, ctx, path):
        for pause in (0.0, 0.2):
            got = await asyncio.to_thread(_refused_over_unix, path, "ended", pause, body)
            assert got == "HTTP/1.1 401 Unauthorized", (pause, got)
        started = time.monotonic()
        got = await asyncio.to_thread(_refused_over_unix, path, "ended", 0, None)
        assert got == "HTTP/1.1 401 Unauthorized" and time.monotonic() - started < 10


async def test_an_x_api_key_is_read_when_the_bearer_is_not_a_runs() -> None:
    """Anthropic's SDKs send the key as x-api-key; a client that also sends another
    Authorization header still reaches its run."""
    import httpx2

    _, env = _suite_and_env()
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    async with hub_scope(), serve_run(env, ctx) as run:
        headers = {**MCP, "Authorization": "Bearer other", "x-api-key": run.token}
        async with httpx2.AsyncClient() as http:
            answer = await http.post(run.mcp_url, json=LIST, headers=headers)
            assert answer.status_code == 200
            headers["x-api-key"] = "forged"
            answer = await http.post(run.mcp_url, json=LIST, headers=headers)
            assert answer.status_code == 401


async def test_a_socket_the_server_cannot_serve_is_closed_not_kept() -> None:
    """A listener handed to a run's server belongs to it: one it cannot serve is closed (a
    socket made in a sandbox would otherwise keep its network namespace alive)."""
    from passhat.serve.egress import serve_egress

    _, env = _suite_and_env()
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    async with hub_scope(), serve_run(env, ctx) as run, serve_egress(None, ["x:1"]) as egress:
        assert run.listen is not None
        for listen in (run.listen, egress):
            datagram = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # not a stream
            with pytest.raises(ValueError):
                await listen(datagram)
            assert datagram.fileno() == -1


def test_a_gates_hop_into_the_sandbox_leaves_the_event_loop_to_the_other_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run's gate listens in its sandbox's namespace from a fresh thread while the event
    loop goes on (it waited for that thread once a run, the other runs' timers with it).
    Here the thread waits for another task of the loop: a loop held by the gate would
    never run it (the wait ends unanswered)."""
    import threading

    from passhat.agents import netns

    answered = threading.Event()

    def listen_there(pid: int, ports: list[int], number: int | None) -> list[str]:
        return ["in time" if answered.wait(timeout=30) else "the loop was held"]

    monkeypatch.setattr(netns, "_listen_there", listen_there)

    async def main() -> list[Any]:
        async def other_run() -> None:
            answered.set()

        task = asyncio.ensure_future(other_run())
        socks = await netns.listening_in(1, [1])
        await task
        return socks

    assert asyncio.run(main()) == ["in time"]


def test_sockets_made_for_a_gate_given_up_meanwhile_are_closed() -> None:
    """A run cancelled while its hop is under way: the sockets the thread made are closed,
    not left listening in the sandbox."""
    from passhat.agents import netns

    async def main() -> socket.socket:
        done: asyncio.Future[list[socket.socket]] = asyncio.get_running_loop().create_future()
        done.cancel()
        sock = socket.socket()
        netns._hand_over(done, [sock], None)
        return sock

    assert asyncio.run(main()).fileno() == -1


async def test_a_websocket_never_reaches_the_app_without_a_token() -> None:
    """attack49: the hub passed every scope that was not HTTP to the app untouched, with no
    token looked at, so where `websockets` is installed (uvicorn upgrades by default) an
    agent's WebSocket reached the MCP app as no run. Only the app's lifespan passes now,
    and uvicorn is told to upgrade none (serve/http.py). Seen failing before the fix."""
    from passhat.serve.hub import Hub

    reached: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    async def nothing() -> dict[str, Any]:
        return {}

    async def ignore(message: dict[str, Any]) -> None:
        return None

    dispatch = Hub.__new__(Hub)._dispatch(app)
    await dispatch({"type": "websocket", "headers": [], "path": "/mcp"}, nothing, ignore)
    await dispatch({"type": "lifespan"}, nothing, ignore)
    assert reached == ["lifespan"]
