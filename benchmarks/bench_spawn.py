"""Benchmark: the CPU a command agent's spawn costs passhat, over a bare spawn.

passhat spawns each agent without a preexec_fn, so Python starts it with vfork
instead of copying passhat's memory (a fork of an ~80 MB parent cost 12-15 ms of
CPU a run). Measured in one process holding passhat's imports and a heap of
`--heap-mb` (what a real passhat holds), CPU of the process and its children
(getrusage), per spawn, sequential:

1. bare spawn     asyncio.create_subprocess_exec("true"), waited (and, for
                  comparison, the same with a preexec_fn: what passhat did before)
2. passhat        CommandAgent._run_process for `true`: pipes, stdin fed, stdout
                  and stderr read, the watchdog told, the group killed, at each
                  isolation level (namespace adds `unshare`: its own exec and the
                  kernel's work for three namespaces and a /proc mount)
3. whole run      run_experiment with `--agent-cmd true` at level process: the
                  spawn plus the run's loopback server (MCP and proxy), folder,
                  environment and record

The target is the issue's: at most 3 ms of CPU per run over a bare spawn, for
the spawn at level process.

    .venv/bin/python benchmarks/bench_spawn.py [--spawns 200] [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _result import result

from passhat.agents import LoadedAgent, resolve_agent
from passhat.agents.base import RunContext
from passhat.agents.command import CommandAgent, CommandSpec
from passhat.agents.isolation import launcher, unavailable
from passhat.agents.watchdog import watchdog
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
CLARIFY = ROOT / "examples" / "clarify"
MARGIN_MS = 3.0
"""The issue's target: CPU per run over a bare spawn."""


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def per_call_ms(action: Callable[[], Awaitable[Any]], n: int) -> float:
    """CPU milliseconds per call of `action`, median of 5 batches of n // 5."""

    async def batch(size: int) -> float:
        start = cpu()
        for _ in range(size):
            await action()
        return (cpu() - start) * 1000 / size

    async def all_batches() -> list[float]:
        await action()  # warm: imports, the watchdog
        return [await batch(max(1, n // 5)) for _ in range(5)]

    return statistics.median(asyncio.run(all_batches()))


async def bare() -> None:
    proc = await asyncio.create_subprocess_exec("true")
    await proc.wait()


async def forked() -> None:
    """What passhat did before: a preexec_fn makes Python fork the whole parent."""
    proc = await asyncio.create_subprocess_exec("true", preexec_fn=lambda: None)
    await proc.wait()


def through_passhat(agent: CommandAgent, argv: list[str], folder: Path) -> Any:
    ctx = RunContext("c", 1, 0, None)

    async def spawn() -> None:
        await agent._run_process(argv, b"{}", folder, {"PATH": "/usr/bin:/bin"}, ctx, watchdog())

    return spawn


def whole_runs(runs: int, folder: Path) -> float:
    """CPU ms per run of run_experiment with --agent-cmd true at level process."""
    spec = CommandSpec(("true",), cwd=str(folder), output="text")
    agent: LoadedAgent = resolve_agent(spec.spec())
    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case("ac-conflict-001"),)})
    params = {"max_turns": 1, "isolation": "process"}
    experiment = new_experiment(suite, agent, "", None, k=runs, params=params)
    with Store(folder / "b.db") as store:
        store.create_experiment(experiment)
        start = cpu()
        asyncio.run(
            run_experiment(store, experiment, suite, agent, None, RunOptions(concurrency=1))
        )
        spent = cpu() - start
        bad = [r for r in store.runs(experiment.id) if r.status == "errored"]
    if bad:
        raise SystemExit(f"run {bad[0].run_index} errored: {bad[0].error_message}")
    return spent * 1000 / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--heap-mb", type=int, default=80)
    args = parser.parse_args()
    heap = bytearray(args.heap_mb * 1024 * 1024)  # touched: resident, as passhat's would be
    for i in range(0, len(heap), 4096):
        heap[i] = 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        agent = CommandAgent(CommandSpec(("true",), cwd=str(folder), output="text"), None)
        rows = {"bare spawn": per_call_ms(bare, args.spawns)}
        rows["with a preexec_fn"] = per_call_ms(forked, args.spawns)
        levels = ["process"] + (["namespace"] if unavailable("namespace") is None else [])
        for level in levels:
            argv = [*launcher(level), "true"]
            rows[f"passhat, {level}"] = per_call_ms(
                through_passhat(agent, argv, folder), args.spawns
            )
        whole = whole_runs(args.runs, folder)
    base = rows["bare spawn"]
    print(f"CPU per spawn of `true` (median of 5 batches), parent heap {args.heap_mb} MB:")
    for name, ms in rows.items():
        print(f"  {name:<20} {ms:6.2f} ms  (+{ms - base:.2f} ms over a bare spawn)")
    print(f"  whole run, process {whole:6.2f} ms  (spawn, loopback server, record)")
    if "namespace" not in levels:
        print(f"  (namespace not measured: {unavailable('namespace')})", file=sys.stderr)
    for level in levels:
        spawn = rows[f"passhat, {level}"]
        result(
            f"command agent spawn CPU (`true`, isolation {level})",
            spawn / base,
            round((base + MARGIN_MS) / base, 2),
            f"CPU per spawn over a bare asyncio spawn ({spawn:.2f} against {base:.2f} ms; "
            f"target: at most {MARGIN_MS:g} ms more)",
        )


if __name__ == "__main__":
    main()
