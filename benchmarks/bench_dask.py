"""Benchmark: throughput of 2 Dask workers against the local executor, CPU-bound agent.

The agent busy-loops 50 ms per run (no await): on one event loop runs go one
after another whatever --concurrency says, while two worker processes run two
at a time. Prints runs per second of each and their ratio (ideal: 2.0 on a
machine with 2 idle cores), with and without the cluster's start-up.

    .venv/bin/python benchmarks/bench_dask.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from distributed import LocalCluster

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
    return folder


def timed(folder: Path, db: Path, executor: Executor, concurrency: int) -> tuple[float, int]:
    suite = load_suite(folder)
    agent = resolve_agent("busy.py:busy", suite_dir=suite.path)
    experiment = new_experiment(suite, agent, "", None, k=1, params={"max_turns": 1})
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
        assert len(store.recorded(experiment.id)) == n
    return wall, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
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


if __name__ == "__main__":
    sys.exit(main())
