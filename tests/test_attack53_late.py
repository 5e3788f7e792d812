"""A tool call still running when its agent exits changed the graded state and was kept
nowhere (round 15's outside attack).

A run ends when its agent exits; the run's server then gives the requests still in
flight a moment (STOP_GRACE_S, 1 s) and cancels them. A user's environment runs its
plain tool handlers in the run's world thread (execution.WorldThread), where a cancel
does not reach: the handler goes on, and final_state(), queued behind it in the same
thread, reads what it changed. But the call was recorded only once its answer came, so
the cancelled call was kept nowhere: an agent that sent `put` to a slow tool and exited
0.3 s later had its run graded `passed` on the row it wrote, with no tool call on the
run (`passhat show`: "tool calls" empty; a cassette of it, `why`, any reader of the
calls saw an agent that did nothing). Tried for real at `process` and at `namespace`,
root and unprivileged passhat: the same (the server is passhat's, behind any seal).

Fixed: a cancelled call is kept on its run (Environment.call), its error saying it was
not answered and that what it changed is graded; the server waits a moment for the
cancelled calls to be kept before the run's record is made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agent_python import PYTHON, TESTS
from passhat.env import UNANSWERED
from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, open_to_all, runs_at

SLOW = '''
import time
from typing import Any

from passhat import Environment, tool


class Slow(Environment):
    """A world whose one tool answers after 2 s."""

    def setup(self, input: dict[str, Any]) -> None:
        self.rows: list[int] = []

    @tool
    def put(self, x: int) -> str:
        """Write a row, slowly."""
        time.sleep(2.0)
        self.rows.append(x)
        return "ok"

    def final_state(self) -> dict[str, Any]:
        return {"rows": self.rows}
'''


def _late_run(user: str, folder: Path, level: str) -> RunRecord:
    """One run at `level` of an agent that calls the slow `put` and exits 0.3 s later."""
    suite = folder / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "slow.py").write_text(SLOW)
    (suite / "attack.py").write_text((TESTS / "attack53_agent.py").read_text())
    agent = {
        "command": [str(PYTHON), "attack.py"],
        "env": {"ATTACK53_LATE": "put," + json.dumps({"x": 1})},
    }
    spec = {
        "name": "late",
        "environment": "slow.py:Slow",
        "defaults": {"agent": agent, "scorers": [{"equals": "."}]},
    }
    (suite / "suite.yaml").write_text(yaml.safe_dump(spec))
    case = {"id": "c1", "input": {}, "goal": {"rows": [1]}}
    (suite / "cases" / "c1.yaml").write_text(yaml.safe_dump(case))
    open_to_all(folder)
    (run,) = runs_at(user, folder, suite, level, "--no-report", k=1)
    return run


def _kept_as_graded(run: RunRecord) -> None:
    assert run.output == {"late": "sent"}, (run.error_type, run.error_message, run.stderr)
    assert run.final_state == {"rows": [1]}  # the call's doing, graded
    calls = [(c["tool"], c["arguments"], c["error"]) for c in run.tool_calls]
    assert calls == [("put", {"x": 1}, UNANSWERED)], run.tool_calls


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_call_still_running_when_a_sandboxed_agent_exits_is_kept(
    user: str, open_tmp: Path
) -> None:
    _kept_as_graded(_late_run(user, open_tmp, "namespace"))


@ATTACK_MARKS[1]
@pytest.mark.parametrize("user", ["root"], indirect=True)
def test_at_process_level_too(user: str, open_tmp: Path) -> None:
    _kept_as_graded(_late_run(user, open_tmp, "process"))
