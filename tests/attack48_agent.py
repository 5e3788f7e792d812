"""A command agent for round 10's outside attack (tests/test_attack48_*.py).

    python tests/attack48_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK_TALK   N,SIZE: N requests to the run's model proxy (OpenAI chat completions),
                  each bringing one new user message of SIZE characters after the last
                  assistant answer (what the proxy keeps of a request); the HTTP status
                  of each
    ATTACK_NAMES  N,SIZE: N tool calls over MCP (raw JSON-RPC) to a tool whose name is SIZE
                  characters long, with no arguments; how many were answered with HTTP 200
    ATTACK_READ   paths, comma-separated: the first 64 bytes of each that could be read
                  (as text, undecodable bytes replaced), None for the others
    ATTACK_TOUCH  a path: make it first (a sign to the test that the run has started)
    ATTACK_AWAIT  a path: before reading, wait (up to 60 s) until it exists
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request


def talk(spec: str) -> list[int | str]:
    count, size = (int(n) for n in spec.split(","))
    url = os.environ["PASSHAT_OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_OPENAI_API_KEY']}",
        "Content-Type": "application/json",
    }
    history: list[dict[str, str]] = []
    codes: list[int | str] = []
    for turn in range(count):
        message = {"role": "user", "content": f"turn {turn} " + "x" * size}
        body = json.dumps({"model": "m", "messages": [*history, message]}).encode()
        try:
            with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=60):
                codes.append(200)
        except urllib.error.HTTPError as error:
            codes.append(error.code)
        except OSError as error:
            codes.append(type(error).__name__)
            break
        # what a real agent sends next: its history, the answer, a short new message
        history = [
            {"role": "user", "content": f"turn {turn}"},
            {"role": "assistant", "content": "ok"},
        ]
    return codes


def names(spec: str) -> int:
    count, size = (int(n) for n in spec.split(","))
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    call = {"name": "t" * size, "arguments": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    answered = 0
    for _ in range(count):
        request = urllib.request.Request(os.environ["PASSHAT_MCP_URL"], body.encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=60):
                answered += 1
        except OSError:
            break
    return answered


def peek(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(64).decode("utf-8", errors="replace")
    except OSError:
        return None


def main() -> None:
    report: dict[str, object] = {}
    if os.environ.get("ATTACK_TOUCH"):
        with open(os.environ["ATTACK_TOUCH"], "w") as sign:
            sign.write("started")
    if os.environ.get("ATTACK_NAMES"):
        report["named"] = names(os.environ["ATTACK_NAMES"])
    if os.environ.get("ATTACK_TALK"):
        report["talked"] = talk(os.environ["ATTACK_TALK"])
    deadline = time.monotonic() + 60
    while os.environ.get("ATTACK_AWAIT") and not os.path.exists(os.environ["ATTACK_AWAIT"]):
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    reads = [p for p in os.environ.get("ATTACK_READ", "").split(",") if p]
    report["read"] = {p: peek(p) for p in reads}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
    sys.exit(0)
