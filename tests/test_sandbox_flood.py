"""A run cannot make passhat hold memory without bound through its tool calls (round 9's
outside attack; not fixed yet: the test is xfail, strict).

The MCP SDK refuses a request past 4 MiB, but nothing bounds how many a run may send, and
passhat keeps every call's arguments (env.py records them, cloned, until the run is
written), several times their size as Python objects. 40 calls of 3.9 MB (an argument of
1.3 million zeros, to a tool that does not exist) took passhat from 76 MiB to 2.9 GiB of
peak memory; a few hundred take the machine's memory, and the OOM killer then ends
passhat (its agents are taken first, but the memory is passhat's): every run in flight is
lost. The level does not matter (the memory is passhat's), so the test runs one.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.agents import isolation
from passhat.store import Store
from sandbox_helpers import passhat_as

pytestmark = [
    pytest.mark.skipif(
        isolation.unavailable("namespace") is not None,
        reason=f"no sandbox for agents here: {isolation.unavailable('namespace')}",
    ),
    pytest.mark.skipif(PYTHON is None, reason="no Python that other users may run"),
]

CALLS, ITEMS = 8, 1_300_000
"""8 calls of 3.9 MB each: 31 MB of requests (passhat's peak on main: 753 MiB)."""
PEAK_MIB = 400
"""What passhat may hold at its peak for one such run (it starts at about 80 MiB)."""

PEAK = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
sys.exit(code)
"""
"""Runs the rest of its command line and writes the peak memory (MiB) of the largest
process it waited for (passhat: the agent's list is 40 MB) to the file its first argument
names."""


@pytest.mark.xfail(
    strict=True,
    reason="no per-run bound on the tool calls passhat records: a run's calls are held "
    "whole in passhat's memory (env.Environment.call), 4 MiB each at most, as many as it sends",
)
def test_a_flood_of_large_tool_calls_holds_passhats_memory_within_a_bound(open_tmp: Path) -> None:
    user = "root" if os.geteuid() == 0 else "unprivileged"
    work = open_tmp / "work"
    work.mkdir()
    shutil.copyfile(TESTS / "attack_agent.py", work / "attack.py")
    writer = SuiteWriter(work / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": {"ATTACK_FLOOD": f"{CALLS},{ITEMS}"},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db, peak = work / "p.db", open_tmp / "peak"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "--db", str(db), "-q"]
    head = [str(PYTHON), "-I", "-c", PEAK, str(peak)]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    assert int(peak.read_text()) <= PEAK_MIB, (
        f"passhat held {peak.read_text()} MiB at its peak for a run that sent "
        f"{run.output['flooded']} calls of 3.9 MB"
    )
