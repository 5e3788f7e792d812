"""The only way out of a sandboxed run to a host the suite allows: an HTTP proxy per run.

A run at --isolation namespace has a network namespace of its own: nothing beyond its
proxy and MCP endpoints answers. An agent that must reach a real service (a search
API, a test database's HTTP front) gets it named in the suite (`agent: {hosts:
[api.example.com]}`) or on the command line (`--agent-host api.example.com:443`).
passhat then serves this proxy inside the sandbox like the other endpoints (on a
socket made in its network namespace, or on a Unix socket its relay forwards to),
and sets HTTPS_PROXY / HTTP_PROXY for the agent:

    CONNECT host:port       a tunnel (https), when host:port is allowed
    GET http://host:port/.. a plain request forwarded as written, when allowed

Anything else is answered 403 naming the host and the option that allows it. Names
are resolved by passhat, outside the sandbox. An allowed `host` without a port means
ports 443 and 80.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from passhat.serve.endpoints import connections  # each tunnel: two fds

HEAD_LIMIT = 64 * 1024
"""Bytes of a request's head read before it is refused."""


def parse_hosts(hosts: Iterable[str]) -> frozenset[tuple[str, int]]:
    """`host` or `host:port` entries as (host, port) pairs; ValueError naming a bad one."""
    allowed: set[tuple[str, int]] = set()
    for entry in hosts:
        name, sep, port = entry.strip().rpartition(":") if ":" in entry else (entry, "", "")
        name = name.strip().lower().strip("[]")
        if not name or (sep and not port.isdigit()) or (sep and not 0 < int(port) < 65536):
            raise ValueError(f"{entry!r} is not a host; write host or host:port")
        allowed |= {(name, int(port))} if sep else {(name, 443), (name, 80)}
    return frozenset(allowed)


def target(head: bytes) -> tuple[str, str, int] | None:
    """(method, host, port) a proxy request asks for, or None when it is not one."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3:
        return None
    method, where, _ = parts
    if method == "CONNECT":
        host, _, port = where.rpartition(":")
        if not port.isdigit():
            return None
        return method, host.strip("[]").lower(), int(port)
    url = urlsplit(where)
    if url.scheme != "http" or not url.hostname:
        return None
    try:
        number = url.port or 80
    except ValueError:
        return None
    return method, url.hostname.lower(), number


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.write_eof()


def _refusal(status: str, message: str) -> bytes:
    body = message.encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


async def _handle(
    allowed: frozenset[tuple[str, int]],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    asked = target(head)
    if asked is None:
        writer.write(_refusal("400 Bad Request", "passhat's run proxy takes CONNECT or http://"))
        writer.close()
        return
    method, host, port = asked
    if (host, port) not in allowed:
        message = (
            f"{host}:{port} is not reachable from this run; a suite allows a host with "
            f"agent: {{hosts: [{host}:{port}]}}, the command line with --agent-host {host}:{port}"
        )
        writer.write(_refusal("403 Forbidden", message))
        writer.close()
        return
    try:
        up_reader, up_writer = await asyncio.open_connection(host, port)
    except OSError as error:
        writer.write(_refusal("502 Bad Gateway", f"{host}:{port}: {error.strerror or error}"))
        writer.close()
        return
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
    else:
        up_writer.write(head)
    try:
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
    finally:  # also when the run ends first (cancelled): the host's end is not kept
        for w in (writer, up_writer):
            w.close()


@contextlib.asynccontextmanager
async def serve_egress(
    unix_path: str | None, hosts: Iterable[str]
) -> AsyncIterator[Callable[[socket.socket], Awaitable[None]]]:
    """Serve the run's proxy to `hosts` until the block ends: on the Unix socket
    `unix_path` when given, and on each listening socket handed to what is yielded."""
    allowed = parse_hosts(hosts)
    servers: list[asyncio.Server] = []
    handlers: set[asyncio.Task[Any]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if len(handlers) >= connections() or task is None:
            writer.transport.abort()
            return
        handlers.add(task)
        try:
            await _handle(allowed, reader, writer)
        except asyncio.CancelledError:
            # only serve_egress cancels a handler, as the run ends: it ends here. Raised
            # on, Python 3.11's stream callback logs an ERROR with a traceback for it
            writer.transport.abort()
        finally:
            handlers.discard(task)

    async def listen(sock: socket.socket) -> None:
        try:
            servers.append(await asyncio.start_server(handle, sock=sock, limit=HEAD_LIMIT))
        except BaseException:  # not served: not kept open
            sock.close()
            raise

    if unix_path is not None:
        servers.append(await asyncio.start_unix_server(handle, path=unix_path, limit=HEAD_LIMIT))
    try:
        yield listen
    finally:
        for server in servers:
            server.close()
        # a tunnel to a host that says nothing and never closes would outlive the run,
        # one of passhat's descriptors each: what is still open ends with the run
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*(s.wait_closed() for s in servers)), 1.0)
