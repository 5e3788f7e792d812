"""An agent that hangs where a signal does not end it at once still ends as one recorded
run at its --timeout, and leaves nothing running (round 16's outside attack).

The agent (tests/attack54_agent.py, ATTACK54_HANG) leaves a child stopped by SIGSTOP and
one stopped under ptrace by it (never waited for), then waits itself in the kernel for a
vfork child that never execs (`D`, the state `ps` shows for an uninterruptible sleep;
this one is killable). Its vfork child notes the three states it sees, so the test knows
the hang was reached. Two runs at --concurrency 2: the one that hangs first is errored
`timeout`, the other counted, and no process of either is left. Tried at `namespace` as
root and as an unprivileged user, and at `process` (the control: the same states are
reached there, and its process group dies whole, since none of them left it). Held at
every level and user. FUSE, the other uninterruptible wait: /dev/fuse is not in a
sandbox's /dev (bwrap's --dev), so a sandboxed agent cannot mount one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sandbox_helpers import ATTACK_MARKS, attack_in, runs_at
from test_command_agent import _wait_gone

pytestmark = ATTACK_MARKS

TIMEOUT = 4
"""The runs' --timeout, in seconds."""


def _hang(user: str, folder: Path, level: str) -> None:
    suite, out = attack_in(folder, "ATTACK54_HANG", agent="attack54_agent.py")
    began = time.monotonic()
    runs = runs_at(user, folder, suite, level, "--timeout", str(TIMEOUT), "--agent-write", str(out))
    took = time.monotonic() - began
    states = json.loads((out / "states.json").read_text())
    assert states == {"stopped": "T", "traced": "t", "agent": "D"}, "the hang was not reached"
    kinds = sorted((r.status, r.error_type) for r in runs)
    assert len(runs) == 2 and kinds[0] == ("errored", "timeout"), kinds
    assert kinds[1][0] in ("passed", "failed"), kinds  # the other run is counted
    hung = next(r for r in runs if r.error_type == "timeout")
    assert hung.duration_s < TIMEOUT + 5, hung.duration_s
    assert took < 60, took
    left = _wait_gone(f"ATTACK54_HANG={out}")
    assert left == [], f"processes of the hung run left running: {left}"


def test_a_run_hung_in_vfork_stop_and_ptrace_ends_at_its_timeout_as_one_run(
    user: str, open_tmp: Path
) -> None:
    _hang(user, open_tmp, "namespace")


@pytest.mark.parametrize("user", ["root"], indirect=True)
def test_control_at_process_level_the_same_hang_ends_at_its_timeout(
    user: str, open_tmp: Path
) -> None:
    _hang(user, open_tmp, "process")
