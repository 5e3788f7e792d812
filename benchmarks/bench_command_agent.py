"""Benchmark: what a command agent costs per run, over an in-process agent.

Three agents do the same work (write the goal state with one update_ticket):

1. in-process   an async Python function (the baseline: passhat's own cost)
2. spawn only   a process that imports what 3 imports, prints JSON and exits
                without a tool call: the fresh folder, the per-run loopback
                server (MCP and proxy), the process group, reading stdout,
                cleaning up
3. MCP session  a process that opens an MCP session (initialize, tools/list,
                tools/call over Streamable HTTP) with the standard library only,
                so the agent's own imports do not hide passhat's cost

Runs are sequential (concurrency 1) so each figure is one run's latency.

    .venv/bin/python benchmarks/bench_command_agent.py [--runs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from passhat.agents import LoadedAgent, resolve_agent
from passhat.agents.command import CommandSpec
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
CLARIFY = ROOT / "examples" / "clarify"
ARGS = {
    "key": "SHOP-1042",
    "goal": "g",
    "scope_in": ["a"],
    "scope_out": [],
    "annotations": [{"ac": 4, "label": "unverifiable", "note": "n"}],
}

SPAWN_ONLY = "import json, os, urllib.request\nprint(json.dumps({'ok': True}))\n"
"""Imports what the MCP session agent imports, so the two differ by the session alone."""

# A minimal MCP client: JSON-RPC over HTTP POST, as Streamable HTTP allows when the
# server answers with JSON (passhat's does).
MCP_SESSION = """
import json, os, urllib.request
URL, TOKEN = os.environ["PASSHAT_MCP_URL"], os.environ["PASSHAT_MCP_TOKEN"]
HEADERS = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json",
           "Accept": "application/json, text/event-stream"}
def rpc(method, params, id=None):
    body = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        body["id"] = id
    request = urllib.request.Request(URL, json.dumps(body).encode(), HEADERS)
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}, 1)
rpc("notifications/initialized", {})
tools = rpc("tools/list", {}, 2)["result"]["tools"]
ARGS = json.loads(os.environ["BENCH_ARGS"])
answer = rpc("tools/call", {"name": "update_ticket", "arguments": ARGS}, 3)
print(json.dumps({"tools": len(tools), "error": answer["result"].get("isError", False)}))
"""


async def in_process(input: Any, env: Any, ctx: Any) -> str:
    await env.call("update_ticket", ARGS)
    return "ok"


def run(agent: LoadedAgent, runs: int, db: Path) -> list[float]:
    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case("ac-conflict-001"),)})
    experiment = new_experiment(suite, agent, "", None, k=runs, params={"max_turns": 1})
    with Store(db) as store:
        store.create_experiment(experiment)
        asyncio.run(
            run_experiment(store, experiment, suite, agent, None, RunOptions(concurrency=1))
        )
        records = store.runs(experiment.id)
    bad = [r for r in records if r.status == "errored"]
    if bad:
        raise SystemExit(
            f"{agent.spec[:40]}: run {bad[0].run_index} errored: {bad[0].error_message}"
        )
    return [r.duration_s for r in records]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "spawn.py").write_text(SPAWN_ONLY)
        (folder / "session.py").write_text(MCP_SESSION)
        agents = {
            "in-process": LoadedAgent("bench:in_process", in_process, None),
            "spawn only": resolve_agent(
                CommandSpec((sys.executable, "-S", "spawn.py"), cwd=str(folder)).spec()
            ),
            "MCP session": resolve_agent(
                CommandSpec(
                    (sys.executable, "-S", "session.py"),
                    cwd=str(folder),
                    env={"BENCH_ARGS": json.dumps(ARGS)},
                ).spec()
            ),
        }
        python = time.perf_counter()
        for _ in range(10):
            subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        bare = (time.perf_counter() - python) / 10
        results = {}
        for name, agent in agents.items():
            durations = run(agent, args.runs, folder / f"{name.replace(' ', '-')}.db")
            results[name] = statistics.median(durations)
    base = results["in-process"]
    print(f"{args.runs} sequential runs each, median wall time per run:")
    print(f"  bare `python -S -c pass` (the interpreter alone): {bare * 1000:7.1f} ms")
    for name, value in results.items():
        extra = (
            "" if name == "in-process" else f"   (+{(value - base) * 1000:.1f} ms over in-process)"
        )
        print(f"  {name:<12} {value * 1000:7.1f} ms{extra}")
    overhead = results["MCP session"] - base
    session = results["MCP session"] - results["spawn only"]
    print(
        f"per-run overhead of a command agent with an MCP session: {overhead * 1000:.0f} ms: "
        f"the interpreter {bare * 1000:.0f} ms, the MCP session (4 requests) "
        f"{session * 1000:.0f} ms, the rest (imports, folder, server, process group) "
        f"{(overhead - bare - session) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
