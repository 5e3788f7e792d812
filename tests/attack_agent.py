"""A command agent that attacks what grades it, as a curious agent with a shell could.

    python tests/attack_agent.py

Standard library only. Every attack is tried and reported, never raised: the agent
prints one JSON object saying what each attack reached. Targets come from the
environment the test gives the suite's agent:

    ATTACK_SUITE   the suite folder: read a goal, append to suite.yaml and a case
    ATTACK_DB      the store: read its header, open it for writing
    ATTACK_FILES  a secret file (a .env, ~/.netrc): read it
    ATTACK_PORTS   loopback ports of the host, comma-separated: connect to each
    ATTACK_LEAK    a name: leave files /tmp/NAME and /dev/shm/NAME behind
    ATTACK_WAIT    seconds to wait before looking at the other runs' folders
    ATTACK_STICK   a name: make a folder of that name in the run folder, then chmod it 000
                   and the run folder 0500 (a run folder that cannot be removed)
    ATTACK_URLS    URLs to GET (through HTTP_PROXY when the run has one): the status of each
    ATTACK_RING    a key's name: read the `user` key of that name from the session keyring
                   the agent was started with (passhat's own, when nothing gave it a fresh
                   one), and add a key of its own there (a note another run could read)
    ATTACK_FLOOD   N,ITEMS: N tool calls over MCP, each with an argument of ITEMS zeros (about
                   3 bytes each as JSON: 1,300,000 is just under the SDK's 4 MiB per request);
                   how many were answered
    ATTACK_DEEP    N: print, as the whole output, a list nested N levels deep (when
                   PASSHAT_RUN_INDEX is 1; other runs print {}), and nothing else
    ATTACK_SELF    any value: rewrite the agent's own program (append a line to this file);
                   say how many such lines it found when it started, and whether it could
    ATTACK_SCHED   any value: say the scheduling policy and priority the agent runs at
    ATTACK_LIMITS  any value: say the resource limits the agent has (/proc/self/limits)
    ATTACK_ECHO    variable names: print their values on stdout, and on stderr the first
                   one followed by ATTACK_PAD bytes (the stderr tail then starts inside it)

It also answers its case: one update_ticket call over MCP (raw JSON-RPC over HTTP)
with the goal it read, if it read one.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request

KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}.get(os.uname().machine)
ADD_KEY = {"x86_64": 248, "aarch64": 217, "riscv64": 217}.get(os.uname().machine)
SESSION_KEYRING = ctypes.c_long(-3)
KEYCTL_READ, KEYCTL_SEARCH = 11, 10


def can_read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None


def can_append(path: str, line: str = "# the agent was here") -> bool:
    """Whether the existing file at `path` could be changed (r+: never made anew, since a
    path the sandbox does not show may be made in its private /tmp, harming nothing)."""
    try:
        with open(path, "r+", encoding="utf-8") as f:
            f.seek(0, os.SEEK_END)
            f.write(f"\n{line}\n")
        return True
    except OSError:
        return False


def can_open_store(path: str) -> dict[str, bool]:
    head = None
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        pass
    writable = False
    try:
        with open(path, "r+b"):
            writable = True
    except OSError:
        pass
    return {"read": head == b"SQLite format 3\x00", "write": writable}


def can_connect(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def other_runs() -> list[str]:
    """Inputs of other runs this agent could read (their folders in the host's tmp)."""
    own = os.path.realpath(os.environ["PASSHAT_INPUT"])
    found = []
    for base in {tempfile.gettempdir(), "/tmp"}:
        for path in glob.glob(os.path.join(base, "passhat-run-*", "input.json")):
            if os.path.realpath(path) != own and can_read(path) is not None:
                found.append(path)
    return found


def leave(name: str) -> list[str]:
    left = []
    for folder in ("/tmp", "/dev/shm"):
        path = os.path.join(folder, name)
        try:
            with open(path, "w") as f:
                f.write("left by a run")
            left.append(path)
        except OSError:
            pass
    return left


def rpc(method: str, params: dict[str, object], session: str | None) -> tuple[dict, str | None]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session:
        headers["mcp-session-id"] = session
    request = urllib.request.Request(os.environ["PASSHAT_MCP_URL"], body, headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
        session = response.headers.get("mcp-session-id") or session
    for line in text.splitlines():
        if line.startswith("data:"):
            return json.loads(line[5:]), session
    return (json.loads(text) if text.strip() else {}), session


def answer(annotations: list[dict[str, object]]) -> bool:
    """update_ticket over MCP: the run's endpoint must stay reachable from the sandbox."""
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "attack", "version": "1"},
    }
    _, session = rpc("initialize", init, None)
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    headers = {
        "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "mcp-session-id": session or "",
    }
    request = urllib.request.Request(os.environ["PASSHAT_MCP_URL"], body, headers)
    urllib.request.urlopen(request, timeout=30).read()
    arguments = {"key": "T-1", "goal": "g", "scope_in": ["s"], "scope_out": []}
    call = {"name": "update_ticket", "arguments": {**arguments, "annotations": annotations}}
    result, _ = rpc("tools/call", call, session)
    return "result" in result


def goal_from(text: str | None) -> list[dict[str, object]]:
    """The goal's annotations, read from a case file written by the tests' SuiteWriter."""
    if not text or "unverifiable" not in text:
        return [{"ac": 1, "label": "unverifiable", "note": "a guess"}]
    return [{"ac": 2, "label": "unverifiable", "note": "read from the goal"}]


def keyring(name: str) -> dict[str, object]:
    """The value of the `user` key `name` in the session keyring (None: not readable), and
    whether a key of the agent's own could be added to that keyring."""
    if KEYCTL is None or ADD_KEY is None:
        return {"read": None, "added": False}
    libc = ctypes.CDLL(None, use_errno=True)
    found = libc.syscall(KEYCTL, KEYCTL_SEARCH, SESSION_KEYRING, b"user", name.encode(), 0)
    value = None
    if found > 0:
        buffer = ctypes.create_string_buffer(4096)
        size = libc.syscall(KEYCTL, KEYCTL_READ, found, buffer, 4096)
        value = buffer.raw[: min(size, 4096)].decode(errors="replace") if size >= 0 else None
    note = b"left by a run"
    added = libc.syscall(ADD_KEY, b"user", b"passhat-note", note, len(note), SESSION_KEYRING)
    return {"read": value, "added": added > 0}


def flood(spec: str) -> int:
    """ATTACK_FLOOD's calls (to a tool that does not exist: the call is recorded all the
    same); the number answered with HTTP 200."""
    count, items = (int(n) for n in spec.split(","))
    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}}, None)
    call = {"name": "no_such_tool", "arguments": {"junk": [0] * items}}
    answered = 0
    for _ in range(count):
        try:
            rpc("tools/call", call, None)
        except OSError:
            break
        answered += 1
    return answered


def fetch(url: str) -> int | str:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError as error:
        return type(error).__name__


def echo(names: list[str]) -> dict[str, str]:
    values = {n: os.environ.get(n, "") for n in names}
    pad = int(os.environ.get("ATTACK_PAD", "0"))
    sys.stderr.write(values[names[0]] + "x" * pad)
    sys.stderr.flush()
    return values


def main() -> None:
    if os.environ.get("ATTACK_DEEP"):
        depth = int(os.environ["ATTACK_DEEP"]) if os.environ["PASSHAT_RUN_INDEX"] == "1" else 0
        print("[" * depth + "]" * depth if depth else "{}")
        return
    if os.environ.get("ATTACK_ECHO"):
        print(json.dumps({"echo": echo(os.environ["ATTACK_ECHO"].split(","))}))
        return
    suite = os.environ.get("ATTACK_SUITE", "")
    goal_text = can_read(os.path.join(suite, "cases", "tiny.yaml")) if suite else None
    report: dict[str, object] = {
        "read_goal": goal_text is not None and "goal" in goal_text,
        "wrote_suite": bool(suite) and can_append(os.path.join(suite, "suite.yaml")),
        "wrote_case": bool(suite) and can_append(os.path.join(suite, "cases", "tiny.yaml")),
    }
    if os.environ.get("ATTACK_DB"):
        report["store"] = can_open_store(os.environ["ATTACK_DB"])
    if os.environ.get("ATTACK_FILES"):
        report["secrets"] = [
            path for path in os.environ["ATTACK_FILES"].split(",") if can_read(path) is not None
        ]
    ports = [int(p) for p in os.environ.get("ATTACK_PORTS", "").split(",") if p]
    report["connected"] = [p for p in ports if can_connect(p)]
    urls = [u for u in os.environ.get("ATTACK_URLS", "").split(",") if u]
    report["fetched"] = {u: fetch(u) for u in urls}
    if os.environ.get("ATTACK_SELF"):
        own, mark = os.path.realpath(__file__), "# rewritten " + "by a run"  # not in here
        with open(own, encoding="utf-8") as f:
            found = f.read().count(mark)
        report["self"] = [found, can_append(own, mark)]
    if os.environ.get("ATTACK_SCHED"):
        report["sched"] = [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority]
    if os.environ.get("ATTACK_LIMITS"):
        report["limits"] = can_read("/proc/self/limits")
    if os.environ.get("ATTACK_FLOOD"):
        report["flooded"] = flood(os.environ["ATTACK_FLOOD"])
    if os.environ.get("ATTACK_RING"):
        report["keyring"] = keyring(os.environ["ATTACK_RING"])
    if os.environ.get("ATTACK_LEAK"):
        report["left"] = leave(os.environ["ATTACK_LEAK"])
    time.sleep(float(os.environ.get("ATTACK_WAIT", "0")))
    report["other_runs"] = other_runs()
    if os.environ.get("ATTACK_STICK"):
        os.mkdir(os.environ["ATTACK_STICK"])
        os.chmod(os.environ["ATTACK_STICK"], 0)
        os.chmod(".", 0o500)
    report["answered"] = answer(goal_from(goal_text))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
    sys.exit(0)
