"""Benchmark: the runner's own cost per run, and how close it gets to ideal concurrency.

1. 1,000 cases x k = 5 with an instant agent, every run stored whole in SQLite:
   wall and CPU time per run (target: at most 1 ms of overhead per run).
2. 1,000 runs of an agent that awaits 100 ms, at concurrency 50: wall time
   against the 2 s ideal (target: within 1.03x), on the event loop passhat's own
   entry points run an experiment on (`passhat run`, `passhat.evaluate`:
   _leftovers.run_loop, whose timers wake it when due); beside it, informative,
   the same sleeps in bare asyncio (`asyncio.run`), whose wall shows what the
   machine's load costs.
3. The same runs end to end: `passhat run` as a command (interpreter start,
   imports, suite load, the runs, the end report), median of `--repeat`, against
   the 2 s ideal (target: within 1.2x).

    .venv/bin/python benchmarks/bench_runner.py [--cases 1000] [--k 5]

Both are wall-clock figures: on a loaded machine they wait for a core, so CPU
time per run is printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _fixtures import make_suite
from _result import measured, result
from vs_inspect.passhat_agents import instant, waits_100ms  # the same workloads as vs Inspect

from passhat._leftovers import run_loop
from passhat.agents import LoadedAgent
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite


def run(
    folder: Path, db: Path, agent_fn: Any, k: int, concurrency: int
) -> tuple[float, float, int]:
    suite = load_suite(folder)
    agent = LoadedAgent("bench:" + agent_fn.__name__, agent_fn, None)
    experiment = new_experiment(suite, agent, "", None, k=k, params={"max_turns": 1})
    with Store(db) as store:
        store.create_experiment(experiment)
        wall, cpu = time.perf_counter(), time.process_time()
        n = run_loop(
            run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=concurrency)
            )
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert len(store.recorded(experiment.id)) == n
    return wall, cpu, n


def bare_sleeps(n: int, concurrency: int) -> float:
    """Wall seconds of n 100 ms sleeps at `concurrency` in plain asyncio: the floor
    the event loop and the machine's load set for the latency-bound workload."""

    async def sleeps() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                await asyncio.sleep(0.1)

        await asyncio.gather(*(one() for _ in range(n)))

    start = time.perf_counter()
    asyncio.run(sleeps())
    return time.perf_counter() - start


def end_to_end(suite: Path, tmp: Path, k: int, n: int, repeat: int) -> bool:
    """`passhat run` of the 100 ms agent at concurrency 50 as a user runs it, in its own
    process: wall and CPU against the ideal of its runs alone."""
    shutil.copy(Path(__file__).parent / "vs_inspect" / "passhat_agents.py", suite)
    runs = []
    for i in range(repeat):
        argv = [sys.executable, "-m", "passhat", "run", str(suite), "--agent"]
        argv += ["passhat_agents.py:waits_100ms", "-k", str(k), "--concurrency", "50"]
        runs.append(measured([*argv, "-q", "--db", str(tmp / f"e2e-{i}.db")]))
    wall = statistics.median(r.wall for r in runs)
    cpu = statistics.median(r.cpu for r in runs)
    ideal = n * 0.1 / 50
    print(
        f"passhat run, end to end: {n} runs at concurrency 50 in {wall:.2f} s wall (ideal "
        f"{ideal:.2f} s), {cpu:.2f} s CPU (median of {repeat}; walls "
        f"{', '.join(f'{r.wall:.2f}' for r in runs)})"
    )
    return result(
        f"{n} × 100 ms runs at concurrency 50, end to end (passhat run)",
        wall / ideal,
        1.2,
        "command wall / ideal",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="end-to-end runs (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_suite(Path(tmp) / "suite", args.cases)
        loads = []
        for _ in range(3):
            start = time.perf_counter()
            load_suite(folder)
            loads.append(time.perf_counter() - start)
        print(f"suite of {args.cases} cases loaded and validated in {min(loads):.2f} s (best of 3)")
        ok = result(f"suite load, {args.cases:,} cases", min(loads) / 0.5, 1, "best wall / 0.5 s")

        wall, cpu, n = run(folder, Path(tmp) / "a.db", instant, args.k, 8)
        per = wall / n * 1000
        print(
            f"instant agent: {n} runs in {wall:.2f} s wall, {cpu:.2f} s CPU -> "
            f"{per:.3f} ms wall/run, {cpu / n * 1000:.3f} ms CPU/run"
        )
        ok &= result(
            "runner overhead per run (instant agent)", per / 1.0, 1, "wall ms per run / 1 ms"
        )
        runs = min(1000, args.cases * args.k)
        k = min(args.k, runs)  # 200 cases x k = 5, as documented: not 1,000 x 1
        small = make_suite(Path(tmp) / "small", runs // k)
        wall, cpu, n = run(small, Path(tmp) / "b.db", waits_100ms, k, 50)
        ideal = n * 0.1 / 50
        ratio = wall / ideal
        bare = bare_sleeps(n, 50)
        print(
            f"100 ms agent: {n} runs at concurrency 50 in {wall:.2f} s (ideal {ideal:.2f} s), "
            f"{cpu / n * 1000:.3f} ms CPU/run; the same sleeps in bare asyncio: {bare:.2f} s "
            f"(a loaded machine shows in this one too)"
        )
        ok &= result(f"{n} × 100 ms runs at concurrency 50", ratio, 1.03, "wall / ideal")
        result(
            f"{n} × 100 ms runs at concurrency 50, beside bare asyncio",
            (wall - bare + ideal) / ideal,
            1.03,
            "(wall - bare asyncio's wall + ideal) / ideal (informative)",
        )
        ok &= end_to_end(small, Path(tmp), k, n, args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
