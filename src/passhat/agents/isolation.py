"""How sealed a command agent's run is: the isolation levels and the launcher that makes them.

    namespace (default)  the agent starts through `unshare` (util-linux) in a user, PID and
                         mount namespace of its own, with its own /proc: it sees its own
                         processes only (not passhat, not the other runs, not their
                         environments or tokens), and when it exits the kernel kills every
                         process it left (a PID namespace ends with its first process), a
                         `setsid` daemon included. When passhat runs as root, each run gets
                         an unprivileged uid of its own (`setpriv`; uids from 0x70000000 up,
                         taken in turn) and its folder is chowned to it: a root passhat
                         never hands root to an agent.
    process              the agent runs as passhat's user in a session of its own; its
                         process group is killed when the run ends. A same-user agent can
                         read the other runs' environments (their tokens) from /proc, a
                         child that left the group with `setsid` survives its run, and an
                         agent of a root passhat is root.

At every level passhat marks itself not dumpable (prctl PR_SET_DUMPABLE 0): a
process of its user without CAP_SYS_PTRACE cannot read its /proc/<pid>/environ
(where the provider's real key sits) or its memory. Rewriting `os.environ` would
not do: /proc/<pid>/environ shows the environment block the process started
with, whatever it unsets later. A root agent can read any process it can name,
which is why the namespace level hides passhat from it and drops its uid.

What no level does: limit CPU, memory, disk or the network (an agent reaches
what its user reaches; the loopback port of another run answers only to that
run's token), or hide the file system: a same-user agent can read and write
what its user can, the other runs' folders included (as root, each run's folder
is its own uid's).
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import secrets
import shutil
import subprocess
import sys
from typing import Literal

Level = Literal["namespace", "process"]
LEVELS: tuple[Level, ...] = ("namespace", "process")
DEFAULT: Level = "namespace"
RUN_UID_BASE = 0x70000000
"""First uid handed to the runs of a root passhat (far above any account's)."""
RUN_UID_SPAN = 1 << 24
"""How many uids the runs draw theirs from, at random."""
_PR_SET_DUMPABLE = 4
_UNSHARE = ("--user", "--map-current-user", "--pid", "--fork", "--mount-proc", "--kill-child")


def check_level(level: str) -> Level:
    """`level` as a Level, or ValueError with a message naming the choices."""
    if level not in LEVELS:
        raise ValueError(f"--isolation is {level!r}; use {' or '.join(LEVELS)}")
    return level


def is_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def launcher(level: Level, uid: int | None = None) -> list[str]:
    """The programs the agent's command is started behind (nothing for `process`)."""
    if level == "process":
        return []
    prefix: list[str] = []
    if uid is not None:
        prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        prefix.append("--inh-caps=-all")
    return [*prefix, "unshare", *_UNSHARE, "--"]


_UIDS = itertools.count(secrets.randbelow(RUN_UID_SPAN))
"""This process's runs take uids in turn from a random start: no two of its runs share
one, and two passhat processes rarely meet."""


def run_uid(level: Level) -> int | None:
    """A fresh unprivileged uid for one run of a root passhat (None otherwise)."""
    if level != "namespace" or not is_root():
        return None
    return RUN_UID_BASE + next(_UIDS) % RUN_UID_SPAN


@functools.cache
def unavailable(level: Level) -> str | None:
    """Why `level` cannot be had on this machine (None when it can): one line."""
    if level == "process":
        return None
    if not sys.platform.startswith("linux"):
        return (
            f"--isolation namespace needs Linux namespaces, and this is {sys.platform}; "
            "use --isolation process (the agent then sees what passhat's user sees)"
        )
    needed = ["unshare", "setpriv"] if is_root() else ["unshare"]
    missing = [p for p in needed if shutil.which(p) is None]
    if missing:
        return (
            f"--isolation namespace needs {' and '.join(missing)} (util-linux), not found on "
            "PATH; install util-linux or use --isolation process"
        )
    probe = [*launcher(level, RUN_UID_BASE if is_root() else None), "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired) as error:
        reason = str(error)
    else:
        if done.returncode == 0:
            return None
        reason = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return (
        f"--isolation namespace is not available here ({reason}); allow user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1, or a container run with them) or use "
        "--isolation process"
    )


_SEALED: int | None = None


def seal_this_process() -> None:
    """Make this process not dumpable, once per process (a Dask worker seals itself):
    same-user processes without CAP_SYS_PTRACE can no longer read its environment."""
    global _SEALED
    if os.getpid() == _SEALED or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return
    _SEALED = os.getpid()
