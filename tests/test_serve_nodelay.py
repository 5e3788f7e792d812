"""No Nagle delay on the connections passhat's listeners accept (review56): an answer
written in two parts (its head, then its body) waited for the client's delayed ACK, 40 ms,
on every request after a keep-alive connection's first (an MCP or OpenAI client's pool):
asyncio sets TCP_NODELAY on an accepted connection only when its listener's proto says TCP,
and each listener was made with proto 0; socat and the Python relay set none."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from passhat.agents import netns, relay
from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import hub_scope, serve_run
from passhat.suite import load_suite
from passhat.view.server import bind

ROOT = Path(__file__).resolve().parents[1]


def _nodelay_of_accepted(client: socket.socket) -> int:
    """TCP_NODELAY of the accepted end of `client`'s connection, in this process."""
    want = (client.getpeername(), client.getsockname())
    for name in os.listdir("/proc/self/fd"):
        try:
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        with sock:
            try:
                ends = (sock.getsockname(), sock.getpeername())
            except OSError:
                continue
            if ends == want:
                return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    raise AssertionError("the accepted end is not in this process")


async def _accepted_nodelay(port: int) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        assert (await asyncio.wait_for(reader.readline(), 30)).startswith(b"HTTP/1.1 ")
        return _nodelay_of_accepted(writer.get_extra_info("socket"))
    finally:
        writer.close()
        await writer.wait_closed()


async def test_the_experiments_listener_accepts_without_nagle() -> None:
    suite = load_suite(ROOT / "examples" / "clarify")
    case = suite.case("ac-conflict-001")
    ctx = RunContext(case_id=case.id, run_index=1, seed=1, model=None)
    async with hub_scope(1), serve_run(make_environment(suite, case), ctx) as served:
        assert await _accepted_nodelay(served.port) == 1


@pytest.mark.parametrize("which", ["netns", "view"])
async def test_a_runs_listener_and_the_viewers_accept_without_nagle(which: str) -> None:
    """A run's listener in its network namespace (netns, a root passhat) and `passhat
    view`'s."""
    sock = netns._listener(0) if which == "netns" else bind("127.0.0.1", 0)
    sock.setblocking(False)
    server = await asyncio.get_running_loop().create_server(asyncio.Protocol, sock=sock)
    try:
        client = socket.create_connection(sock.getsockname())
        with client:
            await asyncio.sleep(0.2)  # accepted
            assert _nodelay_of_accepted(client) == 1
    finally:
        server.close()


def _relay_argv(kind: str, port: int, path: str) -> list[str]:
    if kind == "python":
        return [
            sys.executable,
            "-I",
            "-S",
            "-c",
            relay.RELAY,
            f"{port}={path}",
            "--",
            "sleep",
            "60",
        ]
    socat = shutil.which("socat")
    if socat is None:
        pytest.skip("no socat")
    script = relay.socat_argv(SimpleNamespace(relays=[(port, path)]), socat)[2]  # type: ignore[arg-type]
    listen = next(word for word in script.split() if word.startswith("TCP-LISTEN:"))
    return [socat, listen, f"UNIX-CONNECT:{path}"]


@contextmanager
def _answering(path: str) -> Iterator[None]:
    """A server on the Unix socket `path` answering each request in two writes, apart."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(4)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            while conn.recv(65536):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
                time.sleep(0.002)
                conn.sendall(b"{}")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        listener.close()


@pytest.mark.parametrize("kind", ["socat", "python"])
def test_a_sandboxed_runs_relay_forwards_without_nagle(kind: str, tmp_path: Path) -> None:
    """Keep-alive requests through the relay: with Nagle every one after the first waits
    the client's delayed ACK (40 ms at least); the quickest of five is far under it."""
    path = str(tmp_path / "run.sock")
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with _answering(path):
        proc = subprocess.Popen(_relay_argv(kind, port, path))
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    client = socket.create_connection(("127.0.0.1", port))
                    break
                except ConnectionRefusedError:
                    assert time.monotonic() < deadline and proc.poll() is None
                    time.sleep(0.02)
            with client:
                took = []
                for _ in range(6):
                    start = time.perf_counter()
                    client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    answer = b""
                    while not answer.endswith(b"{}"):
                        answer += client.recv(65536)
                    took.append(time.perf_counter() - start)
            assert min(took[1:]) < 0.03, took
        finally:
            proc.kill()
            proc.wait()
