"""A command agent for tests: what it does is chosen per run, to misbehave on purpose.

    python tests/command_agent.py MODE [MODE...]

Run i does MODES[i-1] (the last mode repeats). Modes:

    ok       calls update_ticket over MCP with the tiny suite's goal; prints JSON
             saying whether stdin and PASSHAT_INPUT held the same input
    model    asks the model once through passhat's proxy (official openai SDK),
             then writes the answer's tool call through MCP; prints the env it saw
    anthropic  the tool loop through the Anthropic-compatible endpoint (official
             anthropic SDK) until the model answers without a tool call
    hang     starts a grandchild, notes both pids and its folder, then sleeps forever
    crash    writes to stderr and exits with code 3
    nonjson  prints text that is not JSON
    flood    prints 100 MB on stdout
    hang-if-flag   hang when $FLAG_DIR/hang exists, else ok (for kill -9 and resume)
    spy      waits until $PID_DIR holds $SPY_PEERS notes, then reads every
             /proc/*/environ it can, its parent's first: prints whether it saw
             $SPY_NEEDLE reversed and which MCP tokens other than its own it found
    daemon   starts a child in a session of its own (setsid) that holds stdout and
             sleeps, then exits at once
    turns    asks the model $TURNS times (raw HTTP), prints each status code (and on stderr)

Pids and folders go to $PID_DIR/run-N.json when PID_DIR is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

GOAL = [{"ac": 2, "label": "unverifiable", "note": "vague"}]


def note(**data: object) -> None:
    folder = os.environ.get("PID_DIR")
    if folder:
        path = Path(folder) / f"run-{os.environ['PASSHAT_RUN_INDEX']}.json"
        partial = path.with_suffix(".tmp")  # whole or absent: a test polls for these files
        partial.write_text(json.dumps(data))
        partial.replace(path)


async def call_tool(name: str, arguments: dict[str, object]) -> object:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    auth = {"Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}"}
    # the SDK's own client's timeouts (httpx's 5 s default is below them): the first
    # request for a tool waits while passhat imports the mcp SDK (serve/lazy_mcp.py)
    timeout = httpx2.Timeout(30.0, read=300.0)
    transport = streamable_http_client(
        os.environ["PASSHAT_MCP_URL"], http_client=httpx2.AsyncClient(headers=auth, timeout=timeout)
    )
    async with Client(transport) as client:
        result = await client.call_tool(name, arguments)
        return result.content[0].text  # type: ignore[union-attr]


def ok() -> None:
    stdin = json.load(sys.stdin)
    from_file = json.loads(Path(os.environ["PASSHAT_INPUT"]).read_text())
    answer = asyncio.run(
        call_tool(
            "update_ticket",
            {"key": "T-1", "goal": "g", "scope_in": ["s"], "scope_out": [], "annotations": GOAL},
        )
    )
    print("wrote the ticket", file=sys.stderr)
    print(json.dumps({"same_input": stdin == from_file, "tool": answer}))


def model() -> None:
    from openai import OpenAI

    client = OpenAI(max_retries=0)  # OPENAI_BASE_URL and OPENAI_API_KEY: passhat's proxy
    answer = client.chat.completions.create(
        model="anything",
        messages=[{"role": "system", "content": "clarify"}, {"role": "user", "content": "T-1"}],
        tools=[
            {
                "type": "function",
                "function": {"name": "update_ticket", "parameters": {"type": "object"}},
            }
        ],
    )
    calls = answer.choices[0].message.tool_calls or []
    for c in calls:
        asyncio.run(call_tool(c.function.name, json.loads(c.function.arguments)))
    seen = {k: v for k, v in os.environ.items() if "KEY" in k or "TOKEN" in k}
    print(json.dumps({"env": seen, "usage": answer.usage.total_tokens if answer.usage else None}))


def anthropic() -> None:
    from anthropic import Anthropic

    client = Anthropic(max_retries=0)  # ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY: the proxy
    tools = [{"name": "update_ticket", "input_schema": {"type": "object"}}]
    messages: list[dict[str, object]] = [{"role": "user", "content": "T-1"}]
    for _ in range(3):
        answer = client.messages.create(
            model="anything", max_tokens=100, system="clarify", messages=messages, tools=tools
        )
        uses = [b for b in answer.content if b.type == "tool_use"]
        if not uses:
            text = "".join(b.text for b in answer.content if b.type == "text")
            print(json.dumps({"final": text, "stop": answer.stop_reason}))
            return
        messages.append({"role": "assistant", "content": [b.model_dump() for b in answer.content]})
        results = []
        for use in uses:
            text = asyncio.run(call_tool(use.name, dict(use.input)))
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": text})
        messages.append({"role": "user", "content": results})


def hang() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    note(pid=os.getpid(), child=child.pid, cwd=os.getcwd())
    print("hanging", file=sys.stderr, flush=True)
    while True:
        time.sleep(1)


def spy() -> None:
    own = os.environ["PASSHAT_MCP_TOKEN"]
    note(cwd=os.getcwd())
    peers = int(os.environ.get("SPY_PEERS", "1"))
    deadline = time.monotonic() + 20
    while len(list(Path(os.environ["PID_DIR"]).glob("run-*.json"))) < peers:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    needle = os.environ["SPY_NEEDLE"][::-1].encode()  # not itself in any environment
    parent: bool | None = None
    with contextlib.suppress(OSError):
        parent = needle in Path(f"/proc/{os.getppid()}/environ").read_bytes()
    seen, tokens, readable = False, set(), 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            data = (entry / "environ").read_bytes()
        except OSError:
            continue
        readable += 1
        seen = seen or needle in data
        for item in data.split(b"\0"):
            if item.startswith(b"PASSHAT_MCP_TOKEN="):
                tokens.add(item.split(b"=", 1)[1].decode())
    tokens.discard(own)
    result = {"parent_has_needle": parent, "needle_seen": seen, "foreign_tokens": sorted(tokens)}
    print(json.dumps({**result, "readable": readable}))


def daemon() -> None:
    sleeper = "import time; time.sleep(300)"
    subprocess.Popen([sys.executable, "-c", sleeper], start_new_session=True)
    print(json.dumps({"daemon": "started"}), flush=True)


def post(url: str, body: dict[str, object], headers: dict[str, str]) -> int:
    """POST `body` as JSON: the answer's status code (urllib, not httpx: a third of the
    import's CPU, and the agent's start is inside the run's --timeout)."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode()
    headers = {**headers, "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def turns() -> None:
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    auth = {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
    body = {"model": "x", "messages": [{"role": "user", "content": "hi"}]}
    codes = [post(url, body, auth) for _ in range(int(os.environ["TURNS"]))]
    print(json.dumps({"codes": codes}), file=sys.stderr)  # an errored run keeps its stderr
    print(json.dumps({"codes": codes}))


def crash() -> None:
    print("boom: the agent could not parse the ticket", file=sys.stderr)
    sys.exit(3)


def flood() -> None:
    block = b"x" * (1024 * 1024)
    try:
        for _ in range(100):
            sys.stdout.buffer.write(block)
    except BrokenPipeError:
        pass


def main() -> None:
    modes = sys.argv[1:] or ["ok"]
    index = int(os.environ["PASSHAT_RUN_INDEX"])
    mode = modes[min(index, len(modes)) - 1]
    if mode == "hang-if-flag":
        mode = "hang" if (Path(os.environ["FLAG_DIR"]) / "hang").exists() else "ok"
    actions = {
        "ok": ok,
        "model": model,
        "anthropic": anthropic,
        "hang": hang,
        "crash": crash,
        "flood": flood,
        "spy": spy,
        "daemon": daemon,
        "turns": turns,
    }
    if mode == "nonjson":
        print("hello, this is not JSON")
        return
    actions[mode]()


if __name__ == "__main__":
    main()
