"""A daemon an agent left at `--isolation process` read the provider key of the next
passhat its user started (round 17's outside attack).

At `process` a child that leaves its run's process group survives the run (documented:
docs/command-agents.md; tests/test_isolation.py shows it, the control of `namespace`,
where the run's PID namespace ends it). `process` still promises that an agent of an
unprivileged passhat cannot read passhat's environment: passhat marks itself not
dumpable. It does so as an experiment starts (evaluation/calls.py), after its interpreter
started and imported the CLI: until then /proc/<pid>/environ of a new passhat is readable
by every process of its user. The agent (tests/attack55_agent.py, ATTACK55_WATCH) left a
daemon (a double fork and `setsid`) that reads $OPENAI_API_KEY of every new process of its
uid; the user's next `passhat run` showed it its key.

Fixed: at `process` passhat is a child subreaper while it runs agents, so the daemon is
re-parented to passhat, which kills and reaps it once no run is in flight (here, as the
run ends) and as the experiment ends (src/passhat/_orphans.py; its control, without a
subreaper: tests/test_orphans.py). Sealing earlier as passhat starts would only narrow
the window: a process's environment is readable from its exec until it seals, and so is
that of every other program of the user that a survivor sees start while runs are in
flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import time
from pathlib import Path

import pytest

from agent_python import skip_if_closed
from sandbox_helpers import ATTACK_MARKS, KEY, attack_in, passhat_as

pytestmark = ATTACK_MARKS

MINE = KEY + "-attack55-survivor-" + secrets.token_hex(8)
"""The key of this test's second passhat: one no other passhat on the machine holds."""


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (not gone, nor a zombie left to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def daemon_found(out: Path, seconds: float) -> dict[str, object]:
    """What the agent's daemon wrote to `out`/found.json within `seconds`, or before it
    ended ({} when nothing); the daemon is ended either way (its pid in `out`/pid)."""
    try:
        deadline = time.monotonic() + seconds
        while not (out / "found.json").exists() and time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                if not alive(int((out / "pid").read_text())):
                    break  # killed: it writes nothing more (it writes as it ends)
            time.sleep(0.05)
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int((out / "pid").read_text()), signal.SIGKILL)
    found: dict[str, object] = {}
    with contextlib.suppress(FileNotFoundError):
        found = json.loads((out / "found.json").read_text())
    return found


def test_no_daemon_of_a_process_run_reads_the_next_passhats_key(open_tmp: Path) -> None:
    skip_if_closed()  # passhat itself runs as a uid of its own, from the checkout
    suite, out = attack_in(open_tmp, "ATTACK55_WATCH", "OPENAI_API_KEY,60", "attack55_agent.py")
    args = ["-k", "1", "--timeout", "60", "--isolation", "process", "-q", "--no-report"]
    first = passhat_as("unprivileged", open_tmp, "run", str(suite), *args, "--db", "1.db")
    deadline = time.monotonic() + 10  # the daemon, a grandchild, may write it late
    while not (out / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not (out / "pid").exists():
        daemon_found(out, 0)
        pytest.fail(f"the agent left no daemon: {first.stderr[-500:]}")  # not the xfail's
    second = passhat_as(
        "unprivileged", open_tmp, "run", str(suite), *args, "--db", "2.db", key=MINE
    )
    found = daemon_found(out, 20)
    if {first.returncode, second.returncode} - {0, 1}:  # not the xfail's AssertionError
        pytest.fail(f"passhat failed: {first.stderr[-500:]} {second.stderr[-500:]}")
    environ = found.get("environ", [])
    assert isinstance(environ, list)
    assert MINE[::-1] not in environ, "the next passhat's key, read by a daemon"
