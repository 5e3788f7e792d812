"""Nothing of a command agent outlives passhat, even when passhat is killed with -9.

Each agent process leads its own process group (killed whole when its run
ends). If passhat itself dies, nobody would kill those groups, so passhat
starts one small watchdog process (per passhat process, on first use) and
tells it, over a pipe, which groups are live. When the pipe closes (passhat
exited or was killed: the kernel closes it either way), the watchdog kills every
live group with SIGKILL, removes the run folders passhat left (folders.py: they
are named for passhat's pid) and exits. (An agent in a PID namespace, isolation.py, takes every process it
started with it: `unshare --kill-child` dies in that group.) Agents are spawned
without a preexec_fn, so Python spawns them with vfork instead of copying
passhat's memory.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import tempfile
import threading

from passhat import _orphans
from passhat.agents.folders import prefix

# The watchdog's whole program: read "+ pgid" / "- pgid" lines (live process groups)
# until EOF, then kill the groups left and remove the run folders its passhat left: those
# in the temporary folder argv[1] whose names start with argv[2] (folders.prefix: the
# passhat's pid and PID namespace). It ignores SIGINT: Ctrl-C is passhat's to handle. Only
# folders of its own user are removed, and no link is followed.
_PROGRAM = r"""
import os, shutil, signal, stat, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
base, prefix = sys.argv[1], sys.argv[2]
groups = set()
for line in sys.stdin:
    op, _, rest = line.rstrip("\n").partition(" ")
    if op == "+":
        groups.add(int(rest))
    elif op == "-":
        groups.discard(int(rest))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
try:
    names = [n for n in os.listdir(base) if n.startswith(prefix)]
except OSError:
    names = []
for folder in (os.path.join(base, n) for n in names):
    try:
        made = os.lstat(folder)
    except OSError:
        continue
    # only a real folder of this user's: a link, or a folder somebody else named like one
    # in the shared /tmp (which only they may rename: the sticky bit), is never touched
    if not stat.S_ISDIR(made.st_mode) or made.st_uid != os.geteuid():
        continue
    shutil.rmtree(folder, ignore_errors=True)
    if os.path.lexists(folder):  # an agent made part of it unreadable: open it up, again
        for root, dirs, _ in os.walk(folder):
            for name in [".", *dirs]:
                path = os.path.join(root, name)
                if os.path.islink(path):  # os.chmod would follow it
                    continue
                try:
                    os.chmod(path, 0o700)
                except OSError:
                    pass
        shutil.rmtree(folder, ignore_errors=True)
"""


class Watchdog:
    """The pipe to this process's watchdog."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # the run folders this process makes are removed by their names (folders.py), not
        # told one by one: two lines less on the pipe a run
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _PROGRAM, tempfile.gettempdir(), prefix()],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            # none of passhat's environment (its keys): an agent of the same user could
            # read this process's /proc/<pid>/environ
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        _orphans.keep(self._proc.pid)  # passhat's own, not a run's leftover

    def _send(self, line: str) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        with self._lock, contextlib.suppress(OSError, ValueError):
            stdin.write(line.encode() + b"\n")
            stdin.flush()

    def add(self, pgid: int) -> None:
        self._send(f"+ {pgid}")

    def remove(self, pgid: int) -> None:
        self._send(f"- {pgid}")

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self) -> None:
        """Close the pipe (the watchdog kills what is still registered) and reap it."""
        stdin = self._proc.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)


_WATCHDOG: Watchdog | None = None
_PID: int | None = None


def watchdog() -> Watchdog:
    """This process's watchdog, started on first use (again after a fork)."""
    global _WATCHDOG, _PID
    if _WATCHDOG is None or os.getpid() != _PID:
        _WATCHDOG = Watchdog()
        _PID = os.getpid()
        atexit.register(_WATCHDOG.close)
    return _WATCHDOG
