"""A run sets the machine's clock, or makes a clock of its own (round 15's outside attack).

passhat's `--timeout`, the look's RACY_NS and the store's times read the clock. An
agent of a root passhat at `process` is root: it set CLOCK_REALTIME (tried once by
hand a year ahead, then set back; here it sets the time it just read, a step of
microseconds) and made a time namespace (unshare CLONE_NEWTIME). At `namespace` it holds
no capability in the machine's user namespace and makes no namespace (bwrap's
--disable-userns, no CAP_SYS_ADMIN): both refused, EPERM, root and unprivileged passhat.
Held; kept tested.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox_helpers import ATTACK_MARKS, attack_in, one_run


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_sandboxed_run_sets_no_clock(user: str, open_tmp: Path) -> None:
    suite, _ = attack_in(open_tmp, "ATTACK53_CLOCK", agent="attack53_agent.py")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", "namespace")
    assert run.output == {"clock": {"settime": "EPERM", "unshare_time": "EPERM"}}, run.stderr


@ATTACK_MARKS[1]
@pytest.mark.skipif(os.geteuid() != 0, reason="the control is a root passhat's agent")
@pytest.mark.skipif(
    os.environ.get("PASSHAT_ATTACK_CLOCK") != "1",
    reason="sets the machine's clock (to the time it read: a step of microseconds, "
    "backwards; other tests' wall-clock readings meanwhile) (PASSHAT_ATTACK_CLOCK=1 runs it)",
)
@pytest.mark.parametrize("user", ["root"], indirect=True)
def test_control_a_root_passhats_agent_at_process_level_sets_the_clock(
    user: str, open_tmp: Path
) -> None:
    suite, _ = attack_in(open_tmp, "ATTACK53_CLOCK", agent="attack53_agent.py")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", "process")
    assert run.output == {"clock": {"settime": "ok", "unshare_time": "ok"}}, run.stderr
