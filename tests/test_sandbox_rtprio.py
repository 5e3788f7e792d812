"""A sandboxed agent cannot make itself real-time: its RLIMIT_RTPRIO is 0, soft and hard.

With a user's limit above 0 (PAM's limits.conf gives audio groups 95 or 99), an agent
could `chrt -f 99` itself and hold a core against passhat's timer for --timeout. The
sandbox's first shell (sandbox.CAP: process_cap, the socat relay's script, the Python
relay's head) lowers the limit to 0 beside the process cap; lowering needs no privilege.

How this is tested, honestly: this machine's hard limit is 0 already and raising it needs
CAP_SYS_RESOURCE, which even root lacks here (`prlimit --rtprio=1:1` is refused), so
what an agent sees inside the sandbox is 0 with or without the line. The first tests run
the sandbox's shell line with `ulimit` replaced by a shell function that records what it
is asked (a regular builtin: a function of the same name comes first), and with one that
refuses `-r` (the run must then not start); one runs the real line and reads the limit
back. The last reads /proc/self/limits inside the sandbox as root and as an unprivileged
user, where the host's hard limit is above 0 (skipped here, and saying why).
"""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

import pytest

from passhat import preflight
from passhat.agents import relay, sandbox
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as

RECORD = 'ulimit() { echo "ulimit $*"; }\n'
"""`ulimit` as a function that says what it was asked (on stdout: the line sends its
stderr to /dev/null) and succeeds."""
REFUSE_R = 'ulimit() { case "$1" in -r) return 1;; esac; }\n'
"""`ulimit` that refuses the real-time limit (a shell without `-r`)."""


def _first_shell(head: str, *command: str) -> subprocess.CompletedProcess[str]:
    argv = sandbox.process_cap()
    argv[2] = head + argv[2]
    return subprocess.run([*argv, *command], capture_output=True, text=True, timeout=30)


def test_the_sandboxs_first_shell_lowers_the_real_time_limit_to_zero() -> None:
    done = _first_shell(RECORD, "/bin/echo", "agent")
    *asked, agent = done.stdout.splitlines()
    assert done.returncode == 0 and agent == "agent", done.stderr
    assert f"ulimit -u {sandbox.PROCESSES}" in asked
    assert "ulimit -r 0" in asked, asked
    # the relays start with the same line, and `passhat check` says it
    assert sandbox.CAP in relay.socat_argv(sandbox.View(), "/usr/bin/socat")[2]
    assert "real-time priority 0 (RLIMIT_RTPRIO)" in preflight.limits()


def test_a_shell_that_cannot_lower_it_starts_no_agent() -> None:
    done = _first_shell(REFUSE_R, "/bin/echo", "agent")
    assert done.returncode == 126 and done.stdout == "", done.stdout
    assert "could not be set" in done.stderr


def _rtprio(limits: str) -> list[str]:
    (line,) = [x for x in limits.splitlines() if x.startswith("Max realtime priority")]
    return line.split()[3:5]


def test_the_real_line_sets_it() -> None:
    done = _first_shell("", "/bin/cat", "/proc/self/limits")
    assert done.returncode == 0, done.stderr
    assert _rtprio(done.stdout) == ["0", "0"]


HOST_HARD = resource.getrlimit(resource.RLIMIT_RTPRIO)[1]


@pytest.mark.skipif(
    HOST_HARD == 0,
    reason="this machine's hard RLIMIT_RTPRIO is 0 (and no process here may raise it): "
    "inside the sandbox it reads 0 with or without the line, so the tests above stand in",
)
@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_an_agent_sees_a_real_time_limit_of_zero(user: str, open_tmp: Path) -> None:
    suite = attack_suite(open_tmp / "work", {"ATTACK_LIMITS": "1"})
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    head = ["prlimit", f"--rtprio={HOST_HARD}:{HOST_HARD}"]  # the user's limit, soft too
    args = ["-k", "1", "--timeout", "60", "--isolation", "namespace", "--db", str(db), "-q"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    assert isinstance(run.output, dict), run.output
    assert _rtprio(run.output["limits"]) == ["0", "0"]
