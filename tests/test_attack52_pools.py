"""One run takes the machine's shared kernel pools from the other runs (round 14's outside attack).

Some kernel resources are counted in one pool for the whole machine, not per user nor
per namespace: the terminals of every devpts but the host's first (kernel.pty.max less
kernel.pty.reserve: 3,072 here) and the events of AIO contexts (fs.aio-max-nr: 65,536).
bwrap's `--dev` gives each sandbox a devpts of its own, but with no `max`, and nothing
refused `io_setup`. Tried for real at `--concurrency 2`, run 1 taking all it could and
holding it until run 2 had tried one: at `namespace`, under root and an unprivileged
passhat alike, run 1 held 3,071 terminals and 65,536 AIO events, and run 2 got ENOSPC
and EAGAIN, as at `process` (the control). Every container of the host and every
database using Linux AIO would have got the same.

Fixed for AIO: the run's filter refuses `io_setup` (agents/seccomp.py). Not for
terminals: attack52 covered /dev/pts, but an agent that drives a shell through tmux
(terminal-bench's agents), `script` or a pty library then failed every run at
`namespace`, told nothing; the lead kept the terminals and left the pool, as the memory,
TCP and key ones, a strict xfail run on request (PASSHAT_ATTACK_PTY=1: run 1 takes the
machine's sandbox terminals). The fix is a devpts with `max` per run, which bwrap's
`--dev` does not give. The control's terminals are tried only with PASSHAT_ATTACK_PTY=1
too: at `process` run 1 takes the host's own pool, 4,096 terminals, every new login's
included, for as long as run 2 takes to try one. The control itself runs only with
PASSHAT_ATTACK_AIO=1: it takes the machine's AIO events for about a second, from
whatever else runs there (the other test worker).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from passhat.agents import sandbox
from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, attack_suite, open_to_all, runs_at

pytestmark = ATTACK_MARKS


def _held(user: str, open_tmp: Path, level: str, kinds: str) -> list[RunRecord]:
    """Two runs at `level`: run 1 takes every one of `kinds` it can and holds them while
    run 2 tries one of each (tests/attack52_agent.py, ATTACK52_HOLD). The runs, in order."""
    out = open_tmp / "out"
    out.mkdir()
    env = {"ATTACK52_HOLD": f"{out},60,{kinds}"}
    suite = attack_suite(open_tmp / "work", env, "attack52_agent.py")
    open_to_all(open_tmp)
    runs = runs_at(user, open_tmp, suite, level, "--no-report", "--agent-write", str(out))
    for run in runs:
        assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    return runs


def test_a_sandboxed_run_takes_no_aio_the_other_runs_need(user: str, open_tmp: Path) -> None:
    first, second = _held(user, open_tmp, "namespace", "aio")
    assert first.output == {"hold": {"took": {"aio": [0, "ENOSYS"]}}}, first.output  # EAGAIN
    assert second.output == {"hold": {"got": {"aio": "ENOSYS"}}}, second.output  # before


@pytest.mark.skipif(
    os.environ.get("PASSHAT_ATTACK_PTY") != "1",
    reason="takes the machine's sandbox terminals for a while (PASSHAT_ATTACK_PTY=1 runs it)",
)
@pytest.mark.xfail(
    strict=True,
    reason="every sandbox's terminals are one pool of the machine's and bwrap's devpts has "
    "no max; the fix is a devpts with max per run (terminals kept: tmux agents need them)",
)
def test_a_sandboxed_run_takes_no_terminal_the_other_runs_need(user: str, open_tmp: Path) -> None:
    _, second = _held(user, open_tmp, "namespace", "pty")
    assert second.output["hold"]["got"]["pty"] not in ("ENOSPC", "EAGAIN"), second.output


def test_a_sandboxed_agent_has_a_terminal(open_tmp: Path) -> None:
    """An agent that drives a shell through tmux, `script` or a pty library opens a
    terminal in its sandbox (attack52 had covered /dev/pts: ENOENT)."""
    argv = [*sandbox.base_argv(), "python3", "-c", "import os; print(len(os.openpty()))"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "2"), done.stderr


@pytest.mark.skipif(
    os.environ.get("PASSHAT_ATTACK_AIO") != "1",
    reason="takes the whole machine's AIO events for a second (PASSHAT_ATTACK_AIO=1 runs it)",
)
def test_control_at_process_level_one_run_takes_the_others_aio_and_terminals(
    user: str, open_tmp: Path
) -> None:
    kinds = "aio+pty" if os.environ.get("PASSHAT_ATTACK_PTY") == "1" else "aio"
    first, second = _held(user, open_tmp, "process", kinds)
    took = first.output["hold"]["took"]
    assert took["aio"][0] > 0 and took["aio"][1] == "EAGAIN", first.output
    assert second.output["hold"]["got"]["aio"] == "EAGAIN", second.output
    if "pty" in kinds:
        assert took["pty"][0] > 0 and took["pty"][1] == "ENOSPC", first.output
        assert second.output["hold"]["got"]["pty"] == "ENOSPC", second.output
