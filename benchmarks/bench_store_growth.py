"""Benchmark: adding 100,000 runs to a store of 1,000,000 runs vs to a store of 100,000.

The runs are written as the runner writes them: handed over to `RunWriter` (group
commits on its thread, the runner's linger and in-flight limit at concurrency 50),
each one of a new experiment of `--cases` cases × 10, copied from the `_fixtures`
template runs (~5 KB rows, transcript and all), then each case's items of `report
--json` kept (`Store.fill_case_items`, as the runner does when its lease ends). The stores are `_fixtures` stores of
10,000 and 100,000 cases × k = 10 (`--stores DIR` keeps them: the large one takes
about 4 minutes and 5 GB to build); every round adds an experiment to both in turn
(the smaller first in odd rounds) and deletes it again, untimed, so each round
starts from the same runs (an experiment left by an interrupted round is deleted
first). Wall
and CPU of each addition are printed; the ratio is the median of the rounds' pairs
(large / small), against 1.1.

    .venv/bin/python benchmarks/bench_store_growth.py [--stores DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import secrets
import statistics
import tempfile
import time
from pathlib import Path

from _fixtures import TEMPLATE_CASES, case_name, kept_store
from _result import result

from passhat.records import RunRecord
from passhat.runner import COMMIT_LINGER_S, writes_in_flight
from passhat.store import Store
from passhat.writer import RunWriter

K = 10


def template(db: Path, experiment_id: str) -> list[RunRecord]:
    """The template cases' runs of the store's experiment, whole."""
    with Store(db, create=False) as store:
        cases = [case_name(i) for i in range(TEMPLATE_CASES)]
        return store.runs(experiment_id, cases=cases)


async def _write(store: Store, runs: list[RunRecord], experiment_id: str, cases: int) -> None:
    limit = writes_in_flight(50)
    async with RunWriter(store, linger=COMMIT_LINGER_S) as writer:
        for i in range(cases * K):
            run = runs[i % len(runs)]
            await writer.hand_over(
                dataclasses.replace(
                    run,
                    experiment_id=experiment_id,
                    case_id=case_name(i % cases),
                    run_index=i // cases + 1,
                ),
                limit,
            )
        await writer.drain()


def add(db: Path, source_id: str, runs: list[RunRecord], cases: int) -> tuple[float, float, str]:
    """Wall and CPU seconds of adding cases × K runs as a new experiment; its id."""
    with Store(db, create=False) as store:
        experiment = dataclasses.replace(
            store.experiment(source_id), id=secrets.token_hex(4), name=None, case_k={}
        )
        wall, cpu = time.perf_counter(), time.process_time()
        store.create_experiment(experiment)
        asyncio.run(_write(store, runs, experiment.id, cases))
        store.fill_case_items(experiment.id)  # as the runner's lease ends
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        (count,) = store._db.execute(
            "SELECT count(*) FROM runs WHERE experiment_id = ?", (experiment.id,)
        ).fetchone()
        assert count == cases * K, count
    return wall, cpu, experiment.id


def remove(db: Path, keep: str) -> None:
    """Take every experiment but `keep` out again (untimed)."""
    with Store(db, create=False) as store, store.atomic() as sql:
        for table in ("runs", "case_k", "leases", "adaptive_records"):
            sql.execute(f"DELETE FROM {table} WHERE experiment_id != ?", (keep,))
        sql.execute("DELETE FROM experiments WHERE id != ?", (keep,))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=Path, help="keep the base stores here")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", type=int, default=10_000, help="cases added (× 10 runs)")
    parser.add_argument("--small", type=int, default=10_000, help="cases of the small store")
    parser.add_argument("--large", type=int, default=100_000, help="cases of the large store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kept = args.stores or Path(tmp) / "stores"
        sides = {}
        for name, cases in (("small", args.small), ("large", args.large)):
            db, eid = kept_store(kept, cases, K)
            remove(db, eid)
            sides[name] = (db, eid, cases)
        runs = template(sides["small"][0], sides["small"][1])
        times: dict[str, list[tuple[float, float]]] = {"small": [], "large": []}
        for round_ in range(args.repeat):
            order = ("small", "large") if round_ % 2 == 0 else ("large", "small")
            for name in order:
                work, eid, cases = sides[name]
                wall, cpu, _ = add(work, eid, runs, args.cases)
                remove(work, eid)
                times[name].append((wall, cpu))
                print(
                    f"round {round_ + 1}: {args.cases * K:,} runs added to {cases * K:,} in "
                    f"{wall:.2f} s wall, {cpu:.2f} s CPU ({wall / (args.cases * K) * 1e6:.0f} µs a run)",
                    flush=True,
                )
        wall_ratio = statistics.median(
            big[0] / small[0] for big, small in zip(times["large"], times["small"], strict=True)
        )
        cpu_ratio = statistics.median(
            big[1] / small[1] for big, small in zip(times["large"], times["small"], strict=True)
        )
        print(f"CPU, large / small: {cpu_ratio:.2f}× (median of {args.repeat} pairs)")
        ok = result(
            f"adding {args.cases * K:,} runs to a store of {args.large * K:,} vs of {args.small * K:,}",
            wall_ratio,
            1.1,
            "wall, large store / small store (median of the pairs)",
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
