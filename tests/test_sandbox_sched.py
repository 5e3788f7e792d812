"""A sandboxed agent does not run at passhat's real-time priority (round 9's outside
attack; fixed: a real-time passhat started each sandbox through `chrt --other 0`; since
round 10 it sets the sandbox's first process to SCHED_OTHER at its gate, before the agent
starts: sandbox.ordinary, isolation.at_gate).

The scheduling policy passes through fork and exec, bwrap, a new user namespace and
setpriv alike. A passhat started under `chrt -f N` (as this project's own benchmarks
start it, for clean timings) starts every agent at SCHED_FIFO N, whatever its uid. What
follows is reasoned, not tried here (it would freeze a shared machine): an agent that
spins holds a core against every ordinary process, and against passhat itself, whose
timer ends the run at --timeout, since FIFO at one priority does not share a core; with
as many spinning runs as cores, only the kernel's RT throttling (5% a second, to
processes that are not real-time, which passhat is not) interrupts them. Root only: chrt -f needs CAP_SYS_NICE. The `process` level is the control.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agent_python import skip_if_closed
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as, unprivileged

pytestmark = [
    *ATTACK_MARKS,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("chrt") is None,
        reason="a real-time passhat needs root and chrt (util-linux)",
    ),
]


def _sched(folder: Path, level: str, user: str = "root") -> list[int]:
    work = folder / f"work-{level}"
    suite = attack_suite(work, {"ATTACK_SCHED": "1"})
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = work / "p.db"
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    head = ["chrt", "-f", "1"]  # the lowest real-time priority: the agent only looks
    if user == "unprivileged":  # real-time set by root, kept through setpriv to nobody
        head = [*head, *unprivileged()]
    done = passhat_as("root", folder, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    return list(run.output["sched"])


@pytest.mark.parametrize("user", ["root", "unprivileged"])
def test_an_agent_of_a_real_time_passhat_runs_at_the_ordinary_policy(
    open_tmp: Path, user: str
) -> None:
    if user == "unprivileged":  # its own parameter: conftest's `user` fixture skips so
        skip_if_closed()
    assert _sched(open_tmp, "namespace", user) == [os.SCHED_OTHER, 0], "the agent runs real-time"


def test_the_control_an_agent_at_level_process_inherits_real_time(open_tmp: Path) -> None:
    assert _sched(open_tmp, "process") == [os.SCHED_FIFO, 1]
