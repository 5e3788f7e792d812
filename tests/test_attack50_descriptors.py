"""A run that takes passhat's file descriptors: another run cannot start (round 12's
outside attack).

Each run's listener holds at most 128 connections (serve/endpoints.CONNECTIONS), "so an
agent that opens thousands cannot take passhat's file descriptors"; but the cap is per
run, and passhat's own limit (`ulimit -n`, raised to its hard limit) is not weighed
against it: with --concurrency 32 under a hard limit of 4096 (or 8 under 1024), runs
that each hold 128 connections take every descriptor passhat has. Tried for real,
scaled down (a limit of 160, two runs at once): while run 1 holds its 128 connections,
run 3 cannot start ("cannot start 'setpriv': Too many open files", errored agent_start).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as


def _suite(folder: Path, hold: str, late: float) -> Path:
    """A suite in `folder`/suite whose agent (tests/attack50_agent.py, in `folder`/work)
    holds connections (ATTACK_HOLD) in its run 1; its other runs wait `late` seconds."""
    work = folder / "work"
    work.mkdir()
    shutil.copyfile(TESTS / "attack50_agent.py", work / "attack.py")
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": {"ATTACK_HOLD": hold, "ATTACK_LATE": str(late)},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


LIMIT = 160
"""passhat's descriptors in the run below: what it holds itself, about 30, and one run's
128 connections (a hard limit of 4096 under --concurrency 32, scaled down)."""


@pytest.mark.parametrize(
    "held",
    [
        pytest.param(
            128,
            marks=pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason="a run's connections are capped per run (serve/endpoints.CONNECTIONS), "
                "never weighed against passhat's own descriptor limit and --concurrency",
            ),
        ),
        0,  # the control: the same limit, no flood
    ],
)
@pytest.mark.skipif(shutil.which("prlimit") is None, reason="no prlimit (util-linux) here")
@ATTACK_MARKS[1]
@ATTACK_MARKS[0]
def test_a_run_holding_its_connections_leaves_the_others_able_to_start(
    user: str, open_tmp: Path, held: int
) -> None:
    # run 1 holds `held` connections 12 s; run 2 ends after 4 s, and run 3 starts then
    suite = _suite(open_tmp, f"{held},12", late=4)
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "3", "--concurrency", "2", "--timeout", "120", "--db", str(db), "-q"]
    head = ["prlimit", f"--nofile={LIMIT}:{LIMIT}", "--"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {run.run_index: run for run in store.runs(store.experiment("latest").id)}
    assert sorted(runs) == [1, 2, 3]
    assert runs[1].output is not None and runs[1].output["held"] == held, runs[1].error_message
    starved = {i: r.error_message for i, r in runs.items() if r.status == "errored"}
    assert starved == {}, "a run's flood kept another run from starting"
