"""Nothing of a command agent outlives passhat, even when passhat is killed with -9.

Each agent process leads its own process group (killed whole when its run
ends). If passhat itself dies, nobody would kill those groups, so passhat
starts one small watchdog process (per passhat process, on first use) and
tells it, over a pipe, which groups and temporary folders are live. When the
pipe closes (passhat exited or was killed: the kernel closes it either way),
the watchdog kills every live group with SIGKILL, removes the folders and
exits. Agent processes also get PR_SET_PDEATHSIG (Linux), so the direct child
dies with passhat even before the watchdog acts.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

# The watchdog's whole program: read "+pgid dir" / "-pgid" lines until EOF,
# then kill what is left. It ignores SIGINT: Ctrl-C is passhat's to handle.
_PROGRAM = r"""
import os, shutil, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
live = {}
for line in sys.stdin:
    op, _, rest = line.rstrip("\n").partition(" ")
    pgid, _, folder = rest.partition(" ")
    if op == "+":
        live[int(pgid)] = folder
    elif op == "-":
        live.pop(int(pgid), None)
for pgid, folder in live.items():
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
"""

_PR_SET_PDEATHSIG = 1


def _find_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _find_prctl()
"""Resolved here, in the parent: the child between fork and exec only calls it."""


def _set_pdeathsig() -> None:
    """In the child before exec: die with SIGKILL when the parent dies (Linux only)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Watchdog:
    """The pipe to this process's watchdog."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _PROGRAM],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )

    @property
    def preexec(self) -> Callable[[], None] | None:
        return _set_pdeathsig if _PRCTL is not None else None

    def _send(self, line: str) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        with self._lock, contextlib.suppress(OSError, ValueError):
            stdin.write(line.encode() + b"\n")
            stdin.flush()

    def add(self, pgid: int, folder: Path) -> None:
        self._send(f"+ {pgid} {folder}")

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
