"""A sandboxed run's network is its own (issue 32): its proxy and MCP endpoints answer,
every loopback service of the host and every other host is refused, and a host the suite
(or --agent-host) allows is reached through the run's proxy. As root and as nobody, with
the --isolation process control that shows the host's services answer otherwise."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.serve.egress import parse_hosts, serve_egress, target
from passhat.serve.endpoints import CONNECTIONS
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, holds_first, one_run

pytestmark = ATTACK_MARKS


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def services() -> Iterator[tuple[int, int]]:
    """Two HTTP services on the host's loopback: one the suite allows, one it does not."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), _Hello) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield servers[0].server_address[1], servers[1].server_address[1]
    for server in servers:
        server.shutdown()
        server.server_close()


def _run(user: str, folder: Path, level: str, ports: tuple[int, int], via: str) -> dict:
    allowed, other = ports
    agent = folder / f"agent-{level}-{via}"
    agent.mkdir()
    (agent / "attack.py").write_text((TESTS / "attack_agent.py").read_text())
    writer = SuiteWriter(folder / f"suite-{level}-{via}")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    config: dict = {
        "command": [str(PYTHON), str(agent / "attack.py")],
        "env": {
            "ATTACK_PORTS": f"{allowed},{other}",
            "ATTACK_URLS": f"http://localhost:{allowed}/,http://localhost:{other}/",
        },
    }
    extra: list[str] = []
    if via == "suite":
        config["hosts"] = [f"localhost:{allowed}"]
    else:
        extra = ["--agent-host", f"localhost:{allowed}"]
    writer.suite["defaults"]["agent"] = config  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    db = folder / f"{level}-{via}.db"
    run = one_run(user, folder, suite, db, level, *extra)
    with Store(db, create=False) as store:
        params = store.experiment("latest").params
    assert run.output is not None, run.error_message
    return {"seen": run.output, "params": params, "agent": store_agent(db)}


def store_agent(db: Path) -> str:
    with Store(db, create=False) as store:
        return store.experiment("latest").agent


@pytest.mark.parametrize("via", ["suite", "command-line"])
def test_only_the_runs_endpoints_and_allowed_hosts_answer(
    user: str, open_tmp: Path, services: tuple[int, int], via: str
) -> None:
    allowed, other = services
    got = _run(user, open_tmp, "namespace", services, via)
    seen = got["seen"]
    assert seen["connected"] == [], "a loopback service of the host answered directly"
    assert seen["answered"] is True, "the run's own MCP endpoint must answer"
    urls = seen["fetched"]
    assert urls[f"http://localhost:{allowed}/"] == 200, "the allowed host was not reached"
    assert urls[f"http://localhost:{other}/"] == 403, "a host nobody allowed was reached"
    # the allowance is recorded with the experiment
    recorded = json.dumps(got["params"]) + got["agent"]
    assert f"localhost:{allowed}" in recorded

    # the control: outside the sandbox both services answer, directly
    control = _run(user, open_tmp, "process", services, via)["seen"]
    assert control["connected"] == [allowed, other]
    assert set(control["fetched"].values()) == {200}


def test_hosts_are_read_as_people_write_them() -> None:
    assert parse_hosts(["api.example.com"]) == {("api.example.com", 443), ("api.example.com", 80)}
    assert parse_hosts(["Localhost:8080"]) == {("localhost", 8080)}
    for bad in ["", "host:http", "host:70000"]:
        with pytest.raises(ValueError, match="host:port"):
            parse_hosts([bad])
    assert target(b"CONNECT api.example.com:443 HTTP/1.1\r\n\r\n") == (
        "CONNECT",
        "api.example.com",
        443,
    )
    assert target(b"GET http://a.example/x HTTP/1.1\r\n\r\n") == ("GET", "a.example", 80)
    assert target(b"GET /x HTTP/1.1\r\n\r\n") is None


async def test_the_runs_proxy_holds_at_most_its_connections() -> None:
    """An agent that opens thousands of connections to its proxy and says nothing on them
    held one of passhat's descriptors each (no cap, no timeout): with passhat's limit of
    open files they were every other run's and the store's. Past CONNECTIONS at once, one
    more is closed as it comes; those held are still served."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(CONNECTIONS + 30)
    async with serve_egress(None, ["nowhere.invalid:1"]) as listen:
        await listen(listener)
        await holds_first(listener.getsockname()[1], CONNECTIONS, CONNECTIONS + 20)


def _holds_port(port: int) -> bool:
    """Whether this process still holds the TCP socket whose local port is `port`."""
    inodes = set()
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            held.add(os.readlink(f"/proc/self/fd/{fd}"))
    return bool(inodes & held)


async def test_a_tunnel_ends_with_its_run(caplog: pytest.LogCaptureFixture) -> None:
    """A tunnel to an allowed host that says nothing and never closes outlived its run (the
    agent gone, its end closed): one of passhat's descriptors for good, per tunnel, per run.
    When the run's proxy stops, what it still holds toward the host is closed, and
    quietly (asyncio logged an ERROR with a traceback for each handler it ended)."""
    accepted: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put((reader, writer))

    host = await asyncio.start_server(silent, "127.0.0.1", 0)
    up_port = host.sockets[0].getsockname()[1]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        async with serve_egress(None, [f"127.0.0.1:{up_port}"]) as listen:
            await listen(listener)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"CONNECT 127.0.0.1:{up_port} HTTP/1.1\r\n\r\n".encode())
            assert (await reader.readline()).startswith(b"HTTP/1.1 200")
            up_reader, up_writer = await accepted.get()
            proxy_port = up_writer.get_extra_info("peername")[1]
            writer.close()  # the agent is gone
            assert await up_reader.read() == b""  # its end came through
            assert _holds_port(proxy_port)
        for _ in range(1000):  # a few loop turns: the close is scheduled, not done
            if not _holds_port(proxy_port):
                break
            await asyncio.sleep(0.01)
        assert not _holds_port(proxy_port), "the tunnel to the host outlived its run"
        up_writer.close()
        await asyncio.sleep(0.05)  # the handler's end is reported a loop turn later
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    finally:
        host.close()
