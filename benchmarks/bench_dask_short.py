"""Benchmark: short runs on Dask against Dask's own no-op round trip.

A run here is short (an agent that writes the goal state at once: a few ms of
environment, grading and record), so what it costs on Dask is mostly the trip
through the scheduler. The floor is Dask's own: no-op tasks on the same
cluster, at most --concurrency in flight, awaited one by one as passhat does.
Prints, for each store shape (cases x runs per case, same total), the time per
run of passhat's Dask executor with batching (runs per task sized by run time)
and without (one run per task, as before #29), each as a ratio to the floor,
with PASS/MISS against 1.2x. The pairs alternate (floor, batched, one per task)
--rounds times and the medians are printed, so a load that comes and goes hits
each alike.

    .venv/bin/python benchmarks/bench_dask_short.py [--runs 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_dask import make_suite
from distributed import Client, LocalCluster

from passhat.agents import resolve_agent
from passhat.executors.dask import DaskExecutor
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

TARGET = 1.2
AGENT = '''
async def quick(input, env, ctx):
    """The goal state at once: the run is environment, grading and record."""
    await env.call("update_ticket", {"key": "SHOP-1042", "goal": "g", "scope_in": ["a"],
                                     "scope_out": [], "annotations": []})
    return "ok"
'''


def noop(i: int) -> int:
    return i


async def floor(address: str, n: int, concurrency: int) -> float:
    """Seconds per no-op task, at most `concurrency` in flight."""
    async with Client(address, asynchronous=True, set_as_default=False) as client:
        todo = iter(range(n))

        async def slot() -> None:
            for i in todo:
                await client.submit(noop, i, pure=False)

        start = time.perf_counter()
        await asyncio.gather(*(slot() for _ in range(concurrency)))
        return (time.perf_counter() - start) / n


def per_run(folder: Path, db: Path, k: int, executor: DaskExecutor, concurrency: int) -> float:
    """Seconds per run of one experiment (k runs of each case), store writes included."""
    suite = load_suite(folder)
    agent = resolve_agent("quick.py:quick", suite_dir=suite.path)
    experiment = new_experiment(suite, agent, "", None, k=k, params={"max_turns": 1})
    with Store(db) as store:
        store.create_experiment(experiment)
        start = time.perf_counter()
        n = asyncio.run(
            run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=concurrency),
                executor=executor,
            )
        )  # fmt: skip
        wall = time.perf_counter() - start
        assert len(store.recorded(experiment.id)) == n == len(suite.cases) * k
    return wall / n


def verdict(ratio: float) -> str:
    return "PASS" if ratio <= TARGET else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000, help="runs per experiment")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    shapes = [(args.runs // 10, 10), (args.runs // 100, 100)]
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(
            n_workers=2,
            threads_per_worker=max(1, args.concurrency // 2),
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
    ):
        address = cluster.scheduler_address
        for cases, k in shapes:
            folder = make_suite(Path(tmp) / f"suite-{cases}", cases)
            (folder / "quick.py").write_text(AGENT, encoding="utf-8")
            n = cases * k
            times: dict[str, list[float]] = {"floor": [], "batched": [], "one": []}
            for r in range(args.rounds):
                times["floor"].append(asyncio.run(floor(address, n, args.concurrency)))
                batching = DaskExecutor(address)
                times["batched"].append(
                    per_run(folder, Path(tmp) / f"b{cases}-{r}.db", k, batching, args.concurrency)
                )
                one = DaskExecutor(address, batch=1)
                times["one"].append(
                    per_run(folder, Path(tmp) / f"o{cases}-{r}.db", k, one, args.concurrency)
                )
            med = {name: statistics.median(ts) for name, ts in times.items()}
            tasks = batching.tasks
            print(
                f"{cases} cases x {k} runs ({n} runs, --concurrency {args.concurrency}): "
                f"Dask no-op round trip {med['floor'] * 1e3:.2f} ms/task"
            )
            for name, label in (("batched", "batched"), ("one", "one run per task")):
                ratio = med[name] / med["floor"]
                extra = f", {n / tasks:.1f} runs/task" if name == "batched" else ""
                print(
                    f"  {label}: {med[name] * 1e3:.2f} ms/run{extra} -> "
                    f"{ratio:.2f}x the floor (target <= {TARGET}x) {verdict(ratio)}"
                    if name == "batched"
                    else f"  {label}: {med[name] * 1e3:.2f} ms/run -> {ratio:.2f}x the floor"
                )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
