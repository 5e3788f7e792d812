"""A command agent for round 12's outside attack (tests/test_attack50_*.py).

    python tests/attack50_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK_HOLD    N,SECONDS: run 1 opens N connections to its endpoint (nothing sent on
                   them), holds them SECONDS, closes them and then lists its tools over MCP;
                   how many it opened and the status of that call. Other runs wait
                   ATTACK_LATE seconds (default 0) and list their tools
    ATTACK_FLAGS   FOLDER (a `write:` folder), with ATTACK_HOLD: waits become conditions.
                   Run 1 says `held` there once it holds its connections and holds them
                   until run 3 has listed its tools (says `3`), SECONDS at most; the other
                   runs wait for `held` (ATTACK_LATE seconds at most), list, and say their
                   index
    ATTACK_PACK    FOLDER,N,KIND: run 1 leaves N files in FOLDER (a `write:` folder), hard
                   links of one: with KIND `tgz` a gzipped tar of 10,000 members of 6,000
                   zero bytes (163 KiB), with KIND `plain` as many random bytes; how many
    ATTACK_WRITE   N: one update_ticket over MCP whose goal is "coupon " N times; whether it
                   was answered
"""

from __future__ import annotations

import io
import json
import os
import socket
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request


def tools_list() -> int | str:
    """The HTTP status of one `tools/list` over MCP, or the error's name."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    request = urllib.request.Request(os.environ["PASSHAT_MCP_URL"], body.encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:
        return type(error).__name__


def _until(flag: str | None, seconds: float) -> None:
    """`seconds` pass, or sooner once `flag` (a path) exists."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (flag and os.path.exists(flag)):
        time.sleep(0.05 if flag else max(0.0, deadline - time.monotonic()))


def _say(flags: str | None, name: str) -> None:
    if flags:
        with open(os.path.join(flags, name), "w"):
            pass


def hold(spec: str) -> dict[str, object]:
    count, seconds = spec.split(",")
    flags = os.environ.get("ATTACK_FLAGS")
    index = os.environ["PASSHAT_RUN_INDEX"]
    if index != "1":
        held_flag = os.path.join(flags, "held") if flags else None
        _until(held_flag, float(os.environ.get("ATTACK_LATE") or 0))
        listed = tools_list()
        _say(flags, index)
        return {"listed": listed}
    url = urllib.parse.urlsplit(os.environ["PASSHAT_MCP_URL"])
    held = []
    for _ in range(int(count)):
        try:
            held.append(socket.create_connection((url.hostname, url.port), timeout=10))
        except OSError:
            break
    _say(flags, "held")
    _until(os.path.join(flags, "3") if flags else None, float(seconds))
    for sock in held:
        sock.close()
    return {"held": len(held), "listed": tools_list()}


def pack(spec: str) -> int:
    folder, count, kind = spec.split(",")
    if os.environ["PASSHAT_RUN_INDEX"] != "1":
        return 0
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        blob = bytes(6000)
        for index in range(10_000):
            member = tarfile.TarInfo(f"m{index}")
            member.size = len(blob)
            tar.addfile(member, io.BytesIO(blob))
    data = buffer.getvalue() if kind == "tgz" else os.urandom(len(buffer.getvalue()))
    first = os.path.join(folder, "0.tgz")
    with open(first, "wb") as f:
        f.write(data)
    for index in range(1, int(count)):
        os.link(first, os.path.join(folder, f"{index}.tgz"))
    return int(count)


def write(count: int) -> bool:
    arguments = {"key": "T-1", "goal": "coupon " * count, "scope_in": ["s"], "scope_out": []}
    call = {"name": "update_ticket", "arguments": {**arguments, "annotations": []}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    request = urllib.request.Request(os.environ["PASSHAT_MCP_URL"], body.encode(), headers)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return b'"result"' in answer.read()


def main() -> None:
    report: dict[str, object] = {}
    if os.environ.get("ATTACK_WRITE"):
        report["written"] = write(int(os.environ["ATTACK_WRITE"]))
    if os.environ.get("ATTACK_PACK"):
        report["packed"] = pack(os.environ["ATTACK_PACK"])
    if os.environ.get("ATTACK_HOLD"):
        report.update(hold(os.environ["ATTACK_HOLD"]))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
