"""A run cannot make passhat hold memory without bound through its tool calls (round 9's
outside attack; fixed: each run has a tool budget, serve/endpoints.ToolBudget).

The MCP SDK refuses a request past 4 MiB, but nothing bounds how many a run may send, and
passhat keeps every call's arguments (env.py records them, cloned, until the run is
written), several times their size as Python objects. 40 calls of 3.9 MB (an argument of
1.3 million zeros, to a tool that does not exist) took passhat from 76 MiB to 2.9 GiB of
peak memory; a few hundred take the machine's memory, and the OOM killer then ends
passhat (its agents are taken first, but the memory is passhat's): every run in flight is
lost. The level does not matter (the memory is passhat's), so the test runs one, for a
root passhat (which listens in the sandbox's network itself) and an unprivileged one
(whose relay carries the calls).

Now a run's calls over MCP may make passhat keep at most ARGUMENT_BYTES of arguments
(and TOOL_CALLS calls, RESULT_BYTES of results): the call past it is neither run nor
kept, the agent is stopped, and the run is recorded errored `agent_flood`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_python import PYTHON
from passhat.serve.endpoints import ARGUMENT_BYTES, RESULT_BYTES, TOOL_CALLS, ToolBudget
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as

pytestmark = ATTACK_MARKS

ITEMS = 1_300_000
"""One call's argument: 1.3 million zeros, 3.9 MB of JSON (the MCP SDK takes 4 MiB)."""
PEAK_MIB = 400
"""What passhat may hold at its peak for one such run (it starts at about 80 MiB and held
186 MiB with the budget; before it, 8 calls took it to 753 MiB and 40 calls to 2.9 GiB)."""

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


@pytest.mark.parametrize("calls", [8, 40])
def test_a_flood_of_large_tool_calls_holds_passhats_memory_within_a_bound(
    open_tmp: Path, user: str, calls: int
) -> None:
    work = open_tmp / "work"
    suite = attack_suite(work, {"ATTACK_FLOOD": f"{calls},{ITEMS}"})
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db, peak = work / "p.db", open_tmp / "peak"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "--db", str(db), "-q"]
    head = [str(PYTHON), "-I", "-c", PEAK, str(peak)]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert (run.status, run.error_type) == ("errored", "agent_flood"), run.error_message
    assert f"past {ARGUMENT_BYTES >> 20} MiB in all" in (run.error_message or "")
    kept = run.tool_calls
    # 2.6 MB each as passhat measures them (JSON without spaces): one fits in the budget
    assert 0 < len(kept) <= ARGUMENT_BYTES // (2 * ITEMS), "calls past the budget were kept"
    assert int(peak.read_text()) <= PEAK_MIB, (
        f"passhat held {peak.read_text()} MiB at its peak for a run that sent {calls} calls "
        "of 3.9 MB"
    )


def test_the_budget_refuses_the_call_that_crosses_it_and_every_one_after() -> None:
    budget = ToolBudget()
    assert budget.admit(ARGUMENT_BYTES - 10) and budget.admit(10)
    assert budget.spent is None and not budget.stop.is_set()
    assert not budget.admit(1)
    assert budget.spent is not None and budget.stop.is_set()
    assert "call 3 brought 1 bytes" in budget.spent
    assert not budget.admit(0), "a spent budget admits nothing more"
    assert (budget.calls, budget.argument_bytes) == (2, ARGUMENT_BYTES)
    many = ToolBudget()
    assert all(many.admit(0) for _ in range(TOOL_CALLS))
    assert not many.admit(0) and f"more than {TOOL_CALLS:,} tool calls" in (many.spent or "")
    answers = ToolBudget()
    answers.answered(RESULT_BYTES)
    assert answers.spent is None
    answers.answered(1)
    assert "results past" in (answers.spent or "") and not answers.admit(0)
