"""How sealed a command agent's run is: the isolation levels and what starts the agent.

    namespace (default)  the agent starts in a sandbox of bubblewrap's (agents/sandbox.py):
                         every namespace its own (user, PID, mount, network, IPC, UTS),
                         a file view made for the run (the system read-only, its own
                         program read-only, its work folder writable, a private /tmp; never
                         the suite, the store, HOME or the rest of the checkout) and a
                         network whose only endpoints are the run's proxy and MCP server.
                         When it exits the kernel kills every process it left (a PID
                         namespace ends with its first process). When passhat runs as
                         root, each run also gets an unprivileged uid of its own
                         (`unshare` or `setpriv`; uids from 0x70000000 up, taken in
                         turn) and its folder is chowned to it: a root passhat never
                         hands root to an agent.
    process              the agent runs as passhat's user in a session of its own; its
                         process group is killed when the run ends. It sees and reaches
                         what passhat's user does: the suite's goals, the store, the
                         other runs' folders, the network. For trusted agents only.

At every level passhat marks itself not dumpable (prctl PR_SET_DUMPABLE 0): a
process of its user without CAP_SYS_PTRACE cannot read its /proc/<pid>/environ
(where the provider's real key sits) or its memory. Rewriting `os.environ` would
not do: /proc/<pid>/environ shows the environment block the process started
with, whatever it unsets later.

The namespace level needs bubblewrap and socat or a system Python (/usr/bin/python3),
which relays the run's endpoints inside the sandbox; where either is missing, or the kernel refuses
user namespaces, `namespace` is refused with one line saying what to install: it is
never quietly made weaker. What no level limits: CPU, memory and disk (but a run's
`write:` folders under --agent-write-limit: agents/writes.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import os
import platform
import secrets
import shutil
import subprocess
import sys
import threading
from typing import Any, Literal

Level = Literal["namespace", "process"]
LEVELS: tuple[Level, ...] = ("namespace", "process")
DEFAULT: Level = "namespace"
RUN_UID_BASE = 0x70000000
"""First uid handed to the runs of a root passhat (far above any account's)."""
RUN_UID_SPAN = 1 << 24
"""How many uids the runs draw theirs from, at random."""
_PR_SET_DUMPABLE = 4


def check_level(level: str) -> Level:
    """`level` as a Level, or ValueError with a message naming the choices."""
    if level not in LEVELS:
        raise ValueError(f"--isolation is {level!r}; use {' or '.join(LEVELS)}")
    return level


def is_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def launcher(level: Level, uid: int | None = None) -> list[str]:
    """What starts a sandboxed run's bwrap: where passhat is real-time and cannot set the
    sandbox's policy at its gate (`at_gate`), `chrt --other 0`; where passhat is root,
    the switch to the run's own uid (`as_uid`); nothing for `process`, nor where passhat
    is neither (every run then has passhat's uid). The run's process cap is set inside
    its sandbox (sandbox.process_cap)."""
    if level == "process":
        return []
    head = ["chrt", "--other", "0"] if realtime() and not at_gate() else []
    return head if uid is None else [*head, *as_uid(uid)]


SETPRIV = ("--clear-groups", "--inh-caps=-all")


def as_uid(uid: int) -> list[str]:
    """The exec that gives a root passhat's run its own uid and gid, no supplementary
    groups and no capabilities. `unshare --setuid --setgid` (util-linux, no namespace
    asked) where it can: it reads the numbers as numbers, where `setpriv` looks each one
    up as a name first (getpwnam, getgrnam: the NSS modules loaded and systemd's socket
    tried, every run), 0.55 ms of the 1.3 ms setpriv cost a run, side by side. Both end
    in the same credentials (uid, gid, saved ids, groups, capabilities: tests/
    test_isolation.py compares /proc/self/status through each), but `unshare` leaves
    the inheritable capabilities as they are: where the thread that starts the run holds
    any, or where unshare cannot switch (util-linux before 2.32), `setpriv` clears them."""
    if _inheritable() == 0 and _unshare_switches():
        return ["unshare", f"--setuid={uid}", f"--setgid={uid}"]
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", *SETPRIV]


_THREAD = threading.local()


def _inheritable() -> int:
    """The calling thread's inheritable capabilities (a bit mask; -1 where unknown), read
    once per thread: capabilities are a thread's own, and the thread that starts the run
    hands its own on (passhat never sets any; a thread inherits its maker's)."""
    found: int | None = getattr(_THREAD, "inheritable", None)
    if found is None:
        found = _THREAD.inheritable = _read_inheritable()
    return found


def _read_inheritable() -> int:
    try:
        with open("/proc/thread-self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapInh:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return -1


@functools.cache
def _unshare_switches() -> bool:
    """Whether `unshare` is here and switches to a run's uid (tried once, as root only)."""
    if not is_root() or shutil.which("unshare") is None:
        return False
    uid = str(RUN_UID_BASE)
    probe = ["unshare", f"--setuid={uid}", f"--setgid={uid}", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def realtime() -> bool:
    """Whether the thread that starts runs has a real-time policy (passhat started under
    `chrt -f N`, as its benchmarks are). A scheduling policy passes through fork, exec,
    bwrap, setpriv and a new user namespace alike: a sandboxed agent of such a passhat
    would run real-time too, and one that spins would hold a core against everything not
    real-time, passhat's own timer for --timeout included. Its sandbox's first process is
    then set to SCHED_OTHER at its gate, before its agent starts (sandbox.ordinary; its
    CPU affinity is left as inherited), or, where passhat may not (`at_gate`), the
    sandbox is started by `chrt --other 0`. The `process` level keeps passhat's policy:
    its agents are trusted."""
    from passhat.agents.sandbox import is_realtime

    return is_realtime(0)


CAP_SYS_NICE = 23


def at_gate() -> bool:
    """Whether passhat sets a sandbox's first process to the ordinary policy itself, at its
    gate (sandbox.ordinary: one system call, where `chrt --other 0` was one exec, 1.2 ms
    of CPU a run, and bwrap's own start and setup then ran at the ordinary policy too,
    behind every other process of the machine). It may where the sandbox has passhat's
    uid (passhat is not root) or where it holds CAP_SYS_NICE (a root passhat's runs have
    uids of their own)."""
    return not is_root() or CAP_SYS_NICE in _effective_caps()


@functools.cache
def _effective_caps() -> frozenset[int]:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    bits = int(line.split()[1], 16)
                    return frozenset(i for i in range(64) if bits >> i & 1)
    except (OSError, ValueError):
        pass
    return frozenset()


_UIDS = itertools.count(secrets.randbelow(RUN_UID_SPAN))
"""This process's runs take uids in turn from a random start: no two of its runs share
one, and two passhat processes rarely meet."""


def run_uid(level: Level) -> int | None:
    """A fresh unprivileged uid for one run of a root passhat (None otherwise)."""
    if level != "namespace" or not is_root():
        return None
    return RUN_UID_BASE + next(_UIDS) % RUN_UID_SPAN


INSTALL = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap; setpriv comes with util-linux) or use --isolation process (the "
    "agent then sees and reaches what passhat's user does)"
)


@functools.cache
def unavailable(level: Level) -> str | None:
    """Why `level` cannot be had on this machine (None when it can): one line."""
    from passhat.agents import relay, sandbox, seccomp

    if level == "process":
        return None
    if not sys.platform.startswith("linux"):
        return (
            f"--isolation namespace needs Linux namespaces, and this is {sys.platform}; "
            "use --isolation process (the agent then sees what passhat's user sees)"
        )
    if platform.machine() not in seccomp.TABLES:
        return (
            f"--isolation namespace has no system-call filter for this machine "
            f"({platform.machine()}; it has one for {', '.join(seccomp.TABLES)}), and a run "
            "could leave setuid files in its write: folders; use --isolation process"
        )
    needed = ["bwrap", as_uid(RUN_UID_BASE)[0]] if is_root() else ["bwrap"]
    if realtime() and not at_gate():
        needed.append("chrt")
    missing = [p for p in needed if not shutil.which(p)]
    if missing:
        return f"--isolation namespace needs {' and '.join(missing)}, not found on PATH; {INSTALL}"
    python = relay.relay_python()
    if python is None and relay.relay_socat() is None:
        return (
            "--isolation namespace needs socat or a system Python (/usr/bin/python3) to relay "
            "the run's endpoints into its sandbox; install socat or use --isolation process"
        )
    uid = RUN_UID_BASE if is_root() else None
    rules = -1
    try:
        # the filter every run starts under, from a memfd (a kernel without seccomp fails)
        rules = os.memfd_create("passhat-seccomp", os.MFD_CLOEXEC)
        os.write(rules, seccomp.this_machine())
        os.lseek(rules, 0, os.SEEK_SET)
        probe = [*launcher(level, uid), *sandbox.base_argv(), "--seccomp", str(rules)]
        probe += [*sandbox.process_cap(), "/bin/true"]
        done = subprocess.run(
            probe, capture_output=True, text=True, timeout=30, env={}, pass_fds=(rules,)
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        reason = str(error)
    else:
        if done.returncode == 0:
            return None
        reason = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    finally:
        if rules >= 0:
            os.close(rules)
    return (
        f"--isolation namespace is not available here (bwrap: {reason}); allow user "
        "namespaces (sysctl kernel.unprivileged_userns_clone=1, or a container run with "
        "them) or use --isolation process"
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
    _more_files()


def _more_files() -> None:
    """Raise this process's soft limit on open files to its hard limit: every connection
    a run's agent opens to its endpoints is a file of passhat's, and one run holding many
    must not starve the others at a default soft limit of 1,024."""
    import resource

    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or hard > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def __getattr__(name: str) -> Any:
    """`PROCESSES`, a run's process cap, named here too (agents/sandbox.py's): read from
    the sandbox's module when asked, which an in-process agent's experiment never
    imports (its `evaluate` seals the process and checks the level here)."""
    if name == "PROCESSES":
        from passhat.agents.sandbox import PROCESSES

        return PROCESSES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
