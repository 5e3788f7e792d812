"""Benchmark: the runner's own cost per run, and how close it gets to ideal concurrency.

1. 1,000 cases x k = 5 with an instant agent, every run stored whole in SQLite:
   wall and CPU time per run (target: at most 1 ms of overhead per run).
2. 1,000 runs of an agent that awaits 100 ms, at concurrency 50: wall time
   against the 2 s ideal (target: within 1.1x).

    .venv/bin/python benchmarks/bench_runner.py [--cases 1000] [--k 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from passhat.agents import LoadedAgent
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
SEED_CASE = ROOT / "examples" / "clarify" / "cases" / "ac-conflict-001.yaml"
ANNOTATIONS = [
    {"ac": 3, "label": "conflict", "note": "n"},
    {"ac": 3, "label": "inconsistent_with_description", "note": "n"},
    {"ac": 4, "label": "unverifiable", "note": "n"},
    {"ac": 7, "label": "unverifiable", "note": "n"},
]


async def instant(input: Any, env: Any, ctx: Any) -> str:
    """Writes the goal state at once: the run costs only what passhat adds."""
    await env.call(
        "update_ticket",
        {
            "key": "SHOP-1042",
            "goal": "g",
            "scope_in": ["a"],
            "scope_out": [],
            "annotations": ANNOTATIONS,
        },
    )
    return "ok"


async def waits_100ms(input: Any, env: Any, ctx: Any) -> str:
    await asyncio.sleep(0.1)
    return await instant(input, env, ctx)


def make_suite(folder: Path, cases: int) -> Path:
    shutil.copytree(ROOT / "examples" / "clarify", folder, ignore=shutil.ignore_patterns("cases"))
    (folder / "cases").mkdir()
    text = SEED_CASE.read_text(encoding="utf-8")
    for i in range(cases):
        name = f"case-{i:05d}"
        (folder / "cases" / f"{name}.yaml").write_text(
            text.replace("id: ac-conflict-001", f"id: {name}"), encoding="utf-8"
        )
    return folder


def run(
    folder: Path, db: Path, agent_fn: Any, k: int, concurrency: int
) -> tuple[float, float, int]:
    suite = load_suite(folder)
    agent = LoadedAgent("bench:" + agent_fn.__name__, agent_fn, None)
    experiment = new_experiment(suite, agent, "", None, k=k, params={"max_turns": 1})
    with Store(db) as store:
        store.create_experiment(experiment)
        wall, cpu = time.perf_counter(), time.process_time()
        n = asyncio.run(
            run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=concurrency)
            )
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert len(store.recorded(experiment.id)) == n
    return wall, cpu, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_suite(Path(tmp) / "suite", args.cases)
        start = time.perf_counter()
        load_suite(folder)
        print(
            f"suite of {args.cases} cases loaded and validated in {time.perf_counter() - start:.2f} s"
        )

        wall, cpu, n = run(folder, Path(tmp) / "a.db", instant, args.k, 8)
        per = wall / n * 1000
        print(
            f"instant agent: {n} runs in {wall:.2f} s wall, {cpu:.2f} s CPU -> "
            f"{per:.3f} ms wall/run, {cpu / n * 1000:.3f} ms CPU/run "
            f"(target <= 1 ms: {'met' if per <= 1 else 'MISSED'})"
        )
        runs = min(1000, args.cases * args.k)
        k = max(1, runs // args.cases)
        small = make_suite(Path(tmp) / "small", runs // k)
        wall, cpu, n = run(small, Path(tmp) / "b.db", waits_100ms, k, 50)
        ideal = n * 0.1 / 50
        ratio = wall / ideal
        print(
            f"100 ms agent: {n} runs at concurrency 50 in {wall:.2f} s (ideal {ideal:.2f} s) -> "
            f"ratio {ratio:.3f} (target <= 1.1: {'met' if ratio <= 1.1 else 'MISSED'})"
        )


if __name__ == "__main__":
    sys.exit(main())
