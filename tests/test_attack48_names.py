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

from pathlib import Path

from sandbox_helpers import ATTACK_MARKS, attack_suite, one_run

pytestmark = ATTACK_MARKS

BUDGET = 4 << 20
"""The run's budget of tool-call names and arguments (serve/endpoints.ARGUMENT_BYTES)."""


def test_long_tool_names_spend_the_runs_tool_budget(user: str, open_tmp: Path) -> None:
    env = {"ATTACK_NAMES": "8,1000000"}  # 8 MB of names, no arguments
    suite = attack_suite(open_tmp / "work", env, agent="attack48_agent.py")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", "namespace")
    assert (run.status, run.error_type) == ("errored", "agent_flood"), run.error_message
    assert f"past {BUDGET >> 20} MiB in all" in (run.error_message or "")
    kept = sum(len(call["tool"]) for call in run.tool_calls)
    assert 0 < kept <= BUDGET, f"passhat kept {kept:,} characters of tool names"
