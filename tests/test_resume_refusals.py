"""`passhat resume` when there is nothing to do, or when another process runs the
experiment: it says so in one line and changes nothing in the store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli


def _k(db: Path) -> int:
    with sqlite3.connect(db) as con:
        (k,) = con.execute("SELECT k_requested FROM experiments").fetchone()
    return int(k)


def _runs(db: Path) -> int:
    with sqlite3.connect(db) as con:
        (n,) = con.execute("SELECT count(*) FROM runs").fetchone()
    return int(n)


HOLD = """
import sys
from passhat.store import Store
store = Store(sys.argv[1])
with store.lease(sys.argv[2]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_resume_refused_by_the_lease_leaves_k_and_the_store_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another live process holds the lease: `resume -k 4` used to raise k to 4 before
    asking for the lease, so the refused resume left an experiment asking for runs nobody
    was making. Now it is one line, exit 2, and k is still 2."""
    db = tmp_path / "p.db"
    r = run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "-k", "2", "--db", str(db), "-q")
    assert r.code == 0, r.err
    with sqlite3.connect(db) as con:
        (experiment,) = con.execute("SELECT id FROM experiments").fetchone()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db), experiment],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        r = run_cli(capsys, "resume", "latest", "-k", "4", "--db", str(db), "-q")
        assert r.code == 2
        assert r.err.count("\n") == 1 and f"process {holder.pid}" in r.err
        assert "Traceback" not in r.err
        assert _k(db) == 2 and _runs(db) == 2
    finally:
        holder.communicate("", timeout=30)
    # once the holder is gone, the same resume raises k and makes the two new runs
    r = run_cli(capsys, "resume", "latest", "-k", "4", "--db", str(db), "-q")
    assert r.code == 0, r.err
    assert _k(db) == 4 and _runs(db) == 4


def test_a_resume_with_nothing_to_do_says_so_and_warns_of_no_run_it_will_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A case the bundled cassette does not answer: `run` warns of the gap and its run
    errors. A plain resume then has nothing to do: it used to warn of the cassette gap
    again (for a run it would not make) and, with --no-report, say "1 runs recorded"."""
    db = tmp_path / "p.db"
    r = run_cli(
        capsys, "run", str(CLARIFY), "--case", "conflict-points-007", "-k", "1", "--db", str(db)
    )
    assert "warning: the cassette seed.jsonl has no answer for 1 of 1 run " in r.err
    assert "1 runs" not in r.err + r.out
    r = run_cli(capsys, "resume", "latest", "--db", str(db), "--no-report")
    assert "warning" not in r.err and "cassette" not in r.err
    assert "recorded; the report" not in r.err and "runs to do" not in r.err
    with sqlite3.connect(db) as con:
        (e,) = con.execute("SELECT id FROM experiments").fetchone()
    assert r.err.strip().splitlines() == [
        f"experiment {e}: nothing to do, every requested run is recorded (1 run: passed 0, "
        f"failed 0, errored 1); `passhat resume {e} --errored` runs the errored ones again; "
        f"`passhat resume {e} -k 2` asks for more runs per case"
    ]
    assert r.out == "" and _runs(db) == 1
    # with the report: the same line first, then the report; --errored has a run to do
    r = run_cli(capsys, "resume", "latest", "--db", str(db))
    assert "nothing to do, every requested run is recorded" in r.err and "cassette" not in r.err
    assert "requested k" in r.out
    r = run_cli(capsys, "resume", "latest", "--errored", "--db", str(db), "--no-report")
    assert "warning: the cassette seed.jsonl has no answer for 1 of 1 run " in r.err
    assert "1 run to do" in r.err and "1 run recorded; the report" in r.err
