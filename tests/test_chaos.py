"""SIGKILL a few-hundred-run experiment at random moments, resume: nothing is lost,
nothing is counted twice, and the report equals an uninterrupted run's (tests/chaos.py).
A longer run: `make chaos`."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from chaos import chaos, comparable, report, stored, uninterrupted

K = 240
SEED = int(os.environ.get("PASSHAT_CHAOS_SEED", "20261203"))


def test_sigkill_at_random_moments_then_resume_equals_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    result = chaos(tmp_path, k=K, kills=4, seed=SEED)
    uninterrupted(tmp_path, k=K)
    assert result.kills >= 3 and result.kills_mid_run >= 2, f"{result}; seed {SEED}"
    runs = stored(tmp_path / "chaos.db", "chaos")
    assert [r[1] for r in runs] == list(range(1, K + 1)), f"seed {SEED}"
    assert runs == stored(tmp_path / "calm.db", "calm")
    with sqlite3.connect(tmp_path / "chaos.db") as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT count(*) FROM leases").fetchone()[0] == 0
    assert comparable(report(tmp_path / "chaos.db", "chaos")) == comparable(
        report(tmp_path / "calm.db", "calm")
    )
