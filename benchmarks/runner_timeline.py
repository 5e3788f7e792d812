"""Where the run phase's wall goes: bench_runner's 1,000 x 100 ms runs at concurrency 50,
each run's agent start and end against t0 (taken where bench_runner takes it, before
passhat's `run_loop`), beside the same sleeps in bare asyncio (`asyncio.run`) timed the same way.

Not a benchmark row (no PASS/MISS): a diagnosis of that row. Per side it prints

    first / last     the first run's start, and the start of the last slot's first run
                     (the local executor's ramp: `executors/local.py` RAMP_S)
    drift/wave       how much later each wave starts than the one before, beyond 100 ms,
                     for the first and for the last slot of a wave (the lateness of the
                     agents' timers, their tool call, the next run's start)
    late, gap        per run, median: its sleep's end past 100 ms, from the agent's start
                     to its return (the tool call counted), and from its return to its
                     slot's next agent start
    tail             from the last agent's return to the end of the loop
    cpu/run          the process's CPU (user + system, every thread) over the runs, a run

A slot runs 20 of the 1,000 runs one after the other, so the wall is the last slot's
first start + 20 x (100 ms + its drift) + the tail. Run under `chrt -f 20` on a shared
machine to read it through the load:

    chrt -f 20 .venv/bin/python benchmarks/runner_timeline.py [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _fixtures import make_suite
from vs_inspect.passhat_agents import instant

from passhat._leftovers import run_loop
from passhat.agents import LoadedAgent
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

RUNS, CONCURRENCY, K = 1000, 50, 5


class Marks:
    """Each run's agent start and return (seconds from t0), and the wall."""

    def __init__(self) -> None:
        self.t0 = 0.0
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.wall = 0.0
        self.cpu = 0.0  # the process's user + system seconds over the runs

    def since(self) -> float:
        return time.perf_counter() - self.t0


def passhat_side(folder: Path, db: Path) -> Marks:
    marks = Marks()

    async def waits_100ms(input: Any, env: Any, ctx: Any) -> str:  # bench_runner's agent
        marks.starts.append(marks.since())
        await asyncio.sleep(0.1)
        result = await instant(input, env, ctx)
        marks.ends.append(marks.since())
        return result

    suite = load_suite(folder)
    agent = LoadedAgent("bench:waits_100ms", waits_100ms, None)
    experiment = new_experiment(suite, agent, "", None, k=K, params={"max_turns": 1})
    with Store(db) as store:
        store.create_experiment(experiment)
        cpu = _cpu()
        marks.t0 = time.perf_counter()
        options = RunOptions(concurrency=CONCURRENCY)
        run_loop(run_experiment(store, experiment, suite, agent, None, options))
        marks.wall = marks.since()
        marks.cpu = _cpu() - cpu
        assert len(store.recorded(experiment.id)) == RUNS
    return marks


def bare_side() -> Marks:
    marks = Marks()

    async def sleeps() -> None:
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one() -> None:
            async with gate:
                marks.starts.append(marks.since())
                await asyncio.sleep(0.1)
                marks.ends.append(marks.since())

        await asyncio.gather(*(one() for _ in range(RUNS)))

    cpu = _cpu()
    marks.t0 = time.perf_counter()
    asyncio.run(sleeps())
    marks.wall = marks.since()
    marks.cpu = _cpu() - cpu
    return marks


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def summary(marks: Marks) -> dict[str, float]:
    """The figures of the docstring, in ms. Runs are matched by rank: the i-th start
    with the i-th end, and the i-th end with the (i + 50)-th start (its slot's next)."""
    starts, ends = sorted(marks.starts), sorted(marks.ends)
    waves = len(starts) // CONCURRENCY
    first = [starts[w * CONCURRENCY] for w in range(waves)]
    last = [starts[w * CONCURRENCY + CONCURRENCY - 1] for w in range(waves)]
    ms = 1000.0
    return {
        "wall": marks.wall * ms,
        "first start": starts[0] * ms,
        "last slot's start": last[0] * ms,
        "drift/wave, first slot": ((first[-1] - first[0]) / (waves - 1) - 0.1) * ms,
        "drift/wave, last slot": ((last[-1] - last[0]) / (waves - 1) - 0.1) * ms,
        "late": statistics.median(e - s - 0.1 for s, e in zip(starts, ends, strict=True)) * ms,
        "gap": statistics.median(
            starts[i + CONCURRENCY] - ends[i] for i in range(len(starts) - CONCURRENCY)
        )
        * ms,
        "tail": (marks.wall - ends[-1]) * ms,
        "cpu/run": marks.cpu / len(starts) * ms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="pairs of (passhat, bare)")
    parser.add_argument("--json", type=Path, help="write every run's marks here")
    args = parser.parse_args()
    kept: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_suite(Path(tmp) / "suite", RUNS // K)
        for i in range(args.repeat):
            for side, marks in (
                ("passhat", passhat_side(folder, Path(tmp) / f"{i}.db")),
                ("bare asyncio", bare_side()),
            ):
                figures = summary(marks)
                print(f"{side:12} " + " | ".join(f"{k} {v:.2f}" for k, v in figures.items()))
                kept.append({"side": side, **vars(marks), "figures": figures})
    if args.json is not None:
        args.json.write_text(json.dumps(kept), encoding="utf-8")
    with contextlib.suppress(OSError):  # Linux only
        print(f"load: {Path('/proc/loadavg').read_text().split()[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
