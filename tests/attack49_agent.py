"""A command agent for round 11's outside attack (tests/test_attack49_*.py).

    python tests/attack49_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK_HOLD     N,SECONDS: open N connections to the run's model proxy and send on
                    each at once (a thread each) a request declaring a 32 MiB body, all
                    of it but its last byte; once a send is done and no byte has gone
                    out for QUIET seconds (passhat reads no more), or every send is
                    done, or after SECONDS, exit (every one cut mid-body); how many
                    connections took the whole send by then
    ATTACK_CUT      any value: to each of the run's endpoints (MCP, chat completions,
                    messages) send a request declaring a 1,000-byte body, send 6 bytes of
                    it and close the connection; the routes cut
    ATTACK_STREAMS  N: open N `GET /mcp` event streams (as an MCP client may, one per
                    session) and keep them open while the rest runs
    ATTACK_MANY     N: N `tools/list` requests over MCP sent at once, each on its own
                    connection (threads); the HTTP status of each
    ATTACK_READ     paths, comma-separated: the first 64 characters of each that could be
                    read, None for the others
    ATTACK_ENVIRON  a string: the /proc/<pid>/environ and cmdline files (pid: every
                    process the agent sees) that hold it, with the first 80 characters
                    of that process's command line
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

BODY = 32 << 20
"""The body each held request declares: the model proxy's largest (serve/app.MAX_BODY)."""
QUIET = 2.0
"""Seconds without a byte sent on any held connection after which passhat is taken to read
no more of them: the sends then wait on passhat, not on this machine's load."""


def hold(spec: str) -> int:
    count, seconds = spec.split(",")
    url = urllib.parse.urlsplit(os.environ["PASSHAT_OPENAI_BASE_URL"])
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {os.environ['PASSHAT_OPENAI_API_KEY']}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {BODY}\r\n\r\n"
    ).encode()
    chunk = b" " * (1 << 20)
    sent: list[int] = []
    held: list[socket.socket] = []
    moved = [time.monotonic()]  # when a send last went out (a chunk each)

    def send(sock: socket.socket) -> None:
        try:
            sock.sendall(head)
            for _ in range(BODY // len(chunk) - 1):
                sock.sendall(chunk)
                moved[0] = time.monotonic()
            sock.sendall(chunk[:-1])
        except OSError:
            return
        sent.append(1)
        moved[0] = time.monotonic()

    for _ in range(int(count)):
        try:
            held.append(socket.create_connection((url.hostname, url.port), timeout=60))
        except OSError:
            break
    # each connection sends on a thread of its own: one passhat stops reading does not
    # keep the others from sending
    moved[0] = time.monotonic()
    for sock in held:
        threading.Thread(target=send, args=(sock,), daemon=True).start()
    # a fixed wait was too short on a loaded machine (no send done in 8 s) and idle on a
    # quiet one: wait while the sends move, up to SECONDS
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline and len(sent) < len(held):
        if sent and time.monotonic() - moved[0] >= QUIET:
            break
        time.sleep(0.1)
    return len(sent)


def cut() -> list[str]:
    url = urllib.parse.urlsplit(os.environ["PASSHAT_MCP_URL"])
    routes = ["/mcp", "/v1/chat/completions", "/v1/messages"]
    for route in routes:
        with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
            sock.sendall(
                (
                    f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {os.environ['PASSHAT_MCP_TOKEN']}\r\n"
                    "Content-Type: application/json\r\n"
                    "Accept: application/json, text/event-stream\r\n"
                    "Content-Length: 1000\r\n\r\n"
                ).encode()
                + b'{"a": '
            )
            time.sleep(0.5)  # passhat is reading the body when the connection closes
    time.sleep(0.5)
    return routes


def streams(count: int) -> list[socket.socket]:
    url = urllib.parse.urlsplit(os.environ["PASSHAT_MCP_URL"])
    head = (
        f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{url.port}\r\n"
        f"Authorization: Bearer {os.environ['PASSHAT_MCP_TOKEN']}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()
    held = []
    for _ in range(count):
        sock = socket.create_connection((url.hostname, url.port), timeout=30)
        sock.sendall(head)
        held.append(sock)
    for sock in held:  # each answered 200, its stream open (passhat holds it)
        assert sock.recv(12) == b"HTTP/1.1 200", "an event stream was refused"
    return held


def many(count: int) -> list[int | str]:
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    codes: list[int | str] = ["none"] * count

    def one(i: int) -> None:
        request = urllib.request.Request(os.environ["PASSHAT_MCP_URL"], body, headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                codes[i] = answer.status
        except urllib.error.HTTPError as error:
            codes[i] = error.code
        except OSError as error:
            codes[i] = type(error).__name__

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


def environ_holding(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for pid in (p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    data = f.read()
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    command = f.read(80).replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if text.encode() in data:
                found[f"{pid}/{name}"] = command
    return found


def peek(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(64).decode("utf-8", errors="replace")
    except OSError:
        return None


def main() -> None:
    report: dict[str, object] = {}
    if os.environ.get("ATTACK_CUT"):
        report["cut"] = cut()
    held = streams(int(os.environ.get("ATTACK_STREAMS") or 0))
    if os.environ.get("ATTACK_MANY"):
        report["many"] = many(int(os.environ["ATTACK_MANY"]))
    if os.environ.get("ATTACK_READ"):
        report["read"] = {p: peek(p) for p in os.environ["ATTACK_READ"].split(",")}
    if os.environ.get("ATTACK_ENVIRON"):
        report["environ"] = environ_holding(os.environ["ATTACK_ENVIRON"])
    if os.environ.get("ATTACK_HOLD"):
        report["held"] = hold(os.environ["ATTACK_HOLD"])
    print(json.dumps(report))
    for sock in held:
        sock.close()


if __name__ == "__main__":
    main()
    sys.exit(0)
