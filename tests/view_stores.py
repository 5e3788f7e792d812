"""Stores for the view's tests, and the view served from one as `passhat view` serves
it: a real uvicorn on 127.0.0.1, in a process of its own."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from passhat.records import ExperimentRecord, RunRecord
from passhat.store import Store
from test_report_html import experiment, run

ITEMS = ["AC1:conflict", "AC2:unverifiable"]


def graded(e: ExperimentRecord, passes: Sequence[int]) -> list[RunRecord]:
    """k runs of each case of `e`; case i passes in its first passes[i] runs."""
    runs = []
    for case, passed in zip(e.case_ids, passes, strict=True):
        for index in range(1, e.k_requested + 1):
            found = ITEMS if index <= passed else ITEMS[:1]
            runs.append(run(case, index, ITEMS, found, experiment_id=e.id))
    return runs


def suite_experiment(
    number: int, passes: Sequence[int], *, k: int = 3, suite: str = "coupon"
) -> tuple[ExperimentRecord, list[RunRecord]]:
    """Experiment p<number> of `suite`, made on day <number>, one case per entry of
    `passes` (each case's passing runs)."""
    cases = [f"case-{i:02d}" for i in range(len(passes))]
    e = replace(
        experiment(cases, k=k),
        id=f"e{number:07d}",
        name=f"p{number}",
        suite_name=suite,
        created_at=f"2026-05-{number:02d}T09:00:00Z",
        prompt_version=f"prompt{number:06d}",
    )
    return e, graded(e, passes)


def write_store(
    path: Path, experiments: Sequence[tuple[ExperimentRecord, list[RunRecord]]]
) -> Path:
    with Store(path) as store:
        for e, runs in experiments:
            store.create_experiment(e)
            store.record_runs(runs)
    return path


def trend_store(path: Path) -> Path:
    """Four experiments of one suite over 30 cases × 3 runs: two good, then a planted
    regression (p3: a third of the cases fail every run), then one like it (p4)."""
    good = [3] * 28 + [2, 2]
    bad = [3] * 12 + [0] * 18
    return write_store(
        path,
        [
            suite_experiment(1, good),
            suite_experiment(2, good),
            suite_experiment(3, bad),
            suite_experiment(4, bad[::-1]),
        ],
    )


@contextmanager
def served(db: Path, *args: str) -> Iterator[str]:
    """`passhat view --db DB --port 0` running; yields its URL (with the token, if any)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "passhat", "view", "--db", str(db), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert proc.stdout is not None
        lines = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            found = re.search(r"(http://\S+)", line)
            if found:
                yield found.group(1)
                return
        raise AssertionError(f"passhat view printed no URL: {''.join(lines)}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
