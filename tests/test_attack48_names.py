"""A run cannot get around its tool budget with long tool names (round 10's outside
attack; fixed: a call's name counts with its arguments).

The budget (serve/endpoints.ToolBudget, tests/test_sandbox_flood.py) counted each call's
arguments and answer, not the name the agent called: a call to a tool that does not
exist is recorded whole, its name as the agent sent it (up to the MCP SDK's 4 MiB a
request), and answered with a short error. 40 calls named with 3.9 million characters
and no arguments held passhat at 1.82 GB of peak memory and wrote a 164 MB store, the
run graded as if nothing happened; 10,000 such calls fit the budget. Now the name counts
against ARGUMENT_BYTES with the arguments: the call that crosses it is neither run nor
kept and the run is errored `agent_flood`. As root and as nobody, at `namespace`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS

BUDGET = 4 << 20
"""The run's budget of tool-call names and arguments (serve/endpoints.ARGUMENT_BYTES)."""


def test_long_tool_names_spend_the_runs_tool_budget(user: str, open_tmp: Path) -> None:
    work = open_tmp / "work"
    work.mkdir()
    shutil.copyfile(TESTS / "attack48_agent.py", work / "agent.py")
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "agent.py")],
        "env": {"ATTACK_NAMES": "8,1000000"},  # 8 MB of names, no arguments
    }
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "--db", str(db), "-q"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert (run.status, run.error_type) == ("errored", "agent_flood"), run.error_message
    assert f"past {BUDGET >> 20} MiB in all" in (run.error_message or "")
    kept = sum(len(call["tool"]) for call in run.tool_calls)
    assert 0 < kept <= BUDGET, f"passhat kept {kept:,} characters of tool names"
