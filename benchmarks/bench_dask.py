"""Benchmark: Dask against the local executor on long runs, and against Dask's own
no-op round trip on short ones.

1. Throughput, CPU-bound agent: it busy-loops 50 ms per run (no await): on one
   event loop runs go one after another whatever --concurrency says, while two
   worker processes run two at a time. Prints runs per second of each and
   their ratio (ideal: 2.0 on a machine with 2 idle cores), with and without
   the cluster's start-up.
2. Short runs (#29): an agent that writes the goal state at once, so a run is a
   few ms of environment, grading and record, and on Dask mostly the trip
   through the scheduler. The floor is Dask's own: no-op tasks on the same
   cluster, at most --concurrency in flight (passhat's default, 8). For each
   store shape (cases x runs per case, same total) prints passhat's time per
   run, store writes included, with batches (runs per task sized by run time)
   and with one run per task (as before #29), each over the floor; a RESULT
   line with PASS/MISS against 1.2x for the batched one. Floor, batched and
   one per task run in turn, --rounds times; medians of the pairwise ratios.

    .venv/bin/python benchmarks/bench_dask.py [--runs 200] [--short-runs 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _result import median_ratio, result
from distributed import Client, LocalCluster

from passhat.agents import resolve_agent
from passhat.executors import Executor, LocalExecutor
from passhat.executors.dask import DaskExecutor
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
SEED_CASE = ROOT / "examples" / "clarify" / "cases" / "ac-conflict-001.yaml"
AGENT = '''
import time

async def busy(input, env, ctx):
    """50 ms of CPU, no await, then the goal state."""
    end = time.perf_counter() + 0.05
    while time.perf_counter() < end:
        pass
    await env.call("update_ticket", {"key": "SHOP-1042", "goal": "g", "scope_in": ["a"],
                                     "scope_out": [], "annotations": []})
    return "ok"
'''


QUICK = '''
async def quick(input, env, ctx):
    """The goal state at once: the run is environment, grading and record."""
    await env.call("update_ticket", {"key": "SHOP-1042", "goal": "g", "scope_in": ["a"],
                                     "scope_out": [], "annotations": []})
    return "ok"
'''
TARGET = 1.2
"""Short runs: passhat's time per run over Dask's no-op round trip, at most."""


def make_suite(folder: Path, cases: int) -> Path:
    """The clarify suite with `cases` copies of the seed card and the busy agent beside it
    (a file agent: it reaches the workers by value)."""
    shutil.copytree(ROOT / "examples" / "clarify", folder, ignore=shutil.ignore_patterns("cases"))
    (folder / "cases").mkdir()
    text = SEED_CASE.read_text(encoding="utf-8")
    for i in range(cases):
        name = f"case-{i:04d}"
        (folder / "cases" / f"{name}.yaml").write_text(
            text.replace("id: ac-conflict-001", f"id: {name}"), encoding="utf-8"
        )
    (folder / "busy.py").write_text(AGENT, encoding="utf-8")
    (folder / "quick.py").write_text(QUICK, encoding="utf-8")
    return folder


def timed(
    folder: Path, db: Path, executor: Executor, concurrency: int, agent_spec: str = "busy.py:busy",
    k: int = 1,
) -> tuple[float, int]:  # fmt: skip
    suite = load_suite(folder)
    agent = resolve_agent(agent_spec, suite_dir=suite.path)
    experiment = new_experiment(suite, agent, "", None, k=k, params={"max_turns": 1})
    with Store(db) as store:
        store.create_experiment(experiment)
        start = time.perf_counter()
        n = asyncio.run(
            run_experiment(
                store,
                experiment,
                suite,
                agent,
                None,
                RunOptions(concurrency=concurrency),
                executor=executor,
            )
        )
        wall = time.perf_counter() - start
        assert len(store.recorded(experiment.id)) == n == len(suite.cases) * k
    return wall, n


def noop(i: int) -> int:
    return i


async def floor(address: str, n: int, concurrency: int) -> float:
    """Seconds per no-op task, at most `concurrency` in flight, each awaited."""
    async with Client(address, asynchronous=True, set_as_default=False) as client:
        todo = iter(range(n))

        async def slot() -> None:
            for i in todo:
                await client.submit(noop, i, pure=False)

        start = time.perf_counter()
        await asyncio.gather(*(slot() for _ in range(concurrency)))
        return (time.perf_counter() - start) / n


def short_runs(tmp: Path, runs: int, rounds: int, concurrency: int) -> None:
    """Part 2 (see the module doc)."""
    with LocalCluster(
        n_workers=2,
        threads_per_worker=max(1, concurrency // 2),  # as passhat's own local cluster
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    ) as cluster:
        address = cluster.scheduler_address
        for cases, k in ((runs // 10, 10), (runs // 100, 100)):
            folder = make_suite(tmp / f"short-{cases}", cases)
            n = cases * k
            per: dict[str, list[float]] = {"floor": [], "batched": [], "one": []}
            tasks = 0
            for r in range(rounds):
                per["floor"].append(asyncio.run(floor(address, n, concurrency)))
                batching = DaskExecutor(address)
                wall, _ = timed(
                    folder, tmp / f"b{cases}-{r}.db", batching, concurrency, "quick.py:quick", k
                )
                per["batched"].append(wall / n)
                tasks = batching.tasks
                wall, _ = timed(
                    folder, tmp / f"o{cases}-{r}.db", DaskExecutor(address, batch=1),
                    concurrency, "quick.py:quick", k,
                )  # fmt: skip
                per["one"].append(wall / n)
            ms = {name: statistics.median(t) * 1e3 for name, t in per.items()}
            print(
                f"{cases} cases x {k} runs ({n} runs, --concurrency {concurrency}, {rounds} "
                f"rounds, load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores): "
                f"Dask no-op round trip {ms['floor']:.2f} ms/task; batched {ms['batched']:.2f} "
                f"ms/run ({n / tasks:.1f} runs/task); one run per task {ms['one']:.2f} ms/run "
                f"({median_ratio(per['one'], per['floor']):.2f}x the floor)"
            )
            result(
                f"Dask, short runs, {cases} cases × {k}",
                median_ratio(per["batched"], per["floor"]),
                TARGET,
                "passhat's time per run over Dask's no-op round trip per task, "
                f"--concurrency {concurrency}",
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--short-runs", type=int, default=2000, help="runs per shape, part 2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8, help="part 2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_suite(Path(tmp) / "suite", args.runs)
        local_wall, n = timed(folder, Path(tmp) / "a.db", LocalExecutor(), 8)
        print(f"local executor: {n} runs in {local_wall:.2f} s -> {n / local_wall:.1f} runs/s")

        start = time.perf_counter()
        with LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster:
            up = time.perf_counter() - start
            dask_wall, n = timed(
                folder, Path(tmp) / "b.db", DaskExecutor(cluster.scheduler_address), 8
            )
        print(
            f"dask, 2 worker processes: {n} runs in {dask_wall:.2f} s -> "
            f"{n / dask_wall:.1f} runs/s (cluster start-up {up:.2f} s not included)"
        )
        print(
            f"throughput ratio dask/local = {local_wall / dask_wall:.2f} (ideal 2.00 on 2 idle "
            f"cores); with start-up {local_wall / (dask_wall + up):.2f}"
        )
        short_runs(Path(tmp), args.short_runs, args.rounds, args.concurrency)


if __name__ == "__main__":
    sys.exit(main())
