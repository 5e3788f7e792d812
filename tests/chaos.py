"""Kill `passhat` with SIGKILL at random moments, resume, and compare with a run
that was never interrupted (tests/test_chaos.py; a longer one in benchmarks/chaos.py).

Every kill may land anywhere: while Python starts, while a run is in flight, in
the middle of a commit. Whatever happened, the store must hold each planned run
once, whole, and the experiment's figures must equal an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
CLARIFY = TESTS.parent / "examples" / "clarify"
SEED_CASE = "ac-conflict-001"


@dataclass
class ChaosResult:
    kills: int
    """SIGKILLs sent (each to a process that was still running)."""
    kills_mid_run: int
    """Kills that landed after some runs and before the last one were stored."""
    processes: int
    """`passhat` processes started, the final resume included."""
    seconds: float


def passhat(*args: str, delay: float, capture: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(TESTS), "PASSHAT_TEST_DELAY": str(delay)}
    argv = [sys.executable, "-m", "passhat", *args]
    stderr = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr, text=True)


def stored(db: Path, name: str) -> list[tuple[str, int, str]]:
    """(case, run index, status) of every run of the named experiment."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as con:
            row = con.execute("SELECT id FROM experiments WHERE name = ?", (name,)).fetchone()
            if row is None:
                return []
            return con.execute(
                "SELECT case_id, run_index, status FROM runs WHERE experiment_id = ? "
                "ORDER BY case_id, run_index",
                (row[0],),
            ).fetchall()
    except sqlite3.OperationalError:  # the store is being created (no tables yet)
        return []


def run_args(db: Path, name: str, k: int, concurrency: int) -> list[str]:
    return [
        "run", str(CLARIFY), "--case", SEED_CASE, "--agent", "agents_for_tests:slow",
        "-k", str(k), "--concurrency", str(concurrency), "--seed", "7",
        "--db", str(db), "-q", "--name", name,
    ]  # fmt: skip


def chaos(
    folder: Path,
    *,
    k: int,
    kills: int,
    seed: int,
    delay: float = 0.01,
    concurrency: int = 8,
    max_wait: float = 2.0,
) -> ChaosResult:
    """Run an experiment of k runs, SIGKILLing it `kills` times at random moments (up to
    `max_wait` s after each start), resuming each time; then let a resume finish."""
    rng = random.Random(seed)
    db = folder / "chaos.db"
    started = time.monotonic()
    sent = mid = processes = 0
    args = run_args(db, "chaos", k, concurrency)
    for _ in range(kills):
        before = len(stored(db, "chaos"))
        if before >= k:
            break
        proc = passhat(*args, delay=delay)
        processes += 1
        if rng.random() < 0.2:  # now and then, while Python starts or the store opens
            time.sleep(rng.uniform(0.0, max_wait))
        else:  # mostly mid-experiment: once a random number of further runs is stored
            # a quarter of what is left at most: many kills before the plan is done
            target = before + rng.randint(1, max(1, (k - before) // 4))
            while proc.poll() is None and len(stored(db, "chaos")) < target:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.05))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            sent += 1
            after = len(stored(db, "chaos"))
            mid += before < after < k
        proc.wait(timeout=60)
        if len(stored(db, "chaos")) > 0 or (db.exists() and _named(db)):
            args = ["resume", "chaos", "--db", str(db), "-q"]
    final = passhat(*args, delay=delay, capture=True) if len(stored(db, "chaos")) < k else None
    if final is not None:
        processes += 1
        _, err = final.communicate(timeout=300)
        if final.returncode != 0:
            raise AssertionError(f"the last resume failed ({final.returncode}): {err[-2000:]}")
    return ChaosResult(sent, mid, processes, time.monotonic() - started)


def _named(db: Path) -> bool:
    try:
        with sqlite3.connect(db) as con:
            return (
                con.execute("SELECT 1 FROM experiments WHERE name = 'chaos'").fetchone() is not None
            )
    except sqlite3.Error:
        return False


def uninterrupted(folder: Path, *, k: int, delay: float = 0.01) -> None:
    db = folder / "calm.db"
    proc = passhat(*run_args(db, "calm", k, 8), delay=delay, capture=True)
    _, err = proc.communicate(timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"the uninterrupted run failed: {err[-2000:]}")


def report(db: Path, name: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "passhat", "report", name, "--json", "--db", str(db)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
    )  # fmt: skip
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def comparable(data: dict[str, Any]) -> str:
    """A report without what differs between two experiments of one configuration."""
    data = dict(data)
    data.pop("experiment", None)
    return json.dumps(data, sort_keys=True)
