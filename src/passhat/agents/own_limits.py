"""passhat's own resource limits, looked at around each command run at --isolation process.

prlimit(2) sets another process's limits and asks only for the same uid (being not
dumpable does not stop it): an agent at `process` set passhat's open-file limit to 5,
soft and hard, and every later run of its experiment was errored `passhat_error`, "not
the agent's doing" (tests/test_attack55_blame.py). At `namespace` the agent sees no
process of passhat's (its own PID namespace) and, under root, has a uid of its own.

So passhat takes its limits (WATCHED) as an experiment's first run at `process` starts
(after it raised its open files to their hard limit: agents/isolation.seal_this_process),
and looks at them again as each such run starts and ends; the experiment's end lets them
go (`forget`), so a library caller's own change between two experiments is the next
one's start, not an agent's doing. A limit found lower than taken:

- every run at `process` in flight since the last look is charged with it: errored
  `agent_limits`, the limit named (at --concurrency 1, the run whose agent lowered it;
  with more, each run under way then, since any of their agents may have);
- passhat sets the limit back where it can (a soft limit under its hard one; any, as
  root with CAP_SYS_RESOURCE); where it cannot (an unprivileged process never raises a
  hard limit again), it starts no more runs: the experiment stops with one line naming
  the limit (`StopRuns`, exit 1), the runs in flight let finish (each charged by its
  own end's look), every finished run kept, and `passhat resume <experiment>` (the
  runner names it) runs the rest in a passhat of whole limits.

Not covered by a look: RLIMIT_CPU (RLIMIT_RTTIME under a real-time passhat) set below
the CPU passhat has used kills it at once (SIGXCPU, then SIGKILL at the hard limit), as
kill(2) would, which any process of its uid may send: the finished runs are in the
store, and `passhat resume` runs the rest. Set above what it used, the look sees it.
"""

from __future__ import annotations

import contextlib
import resource
import threading
from collections.abc import Iterator

from passhat.agents.streams import AgentProcessError
from passhat.errors import StopRuns

CHARGED = "agent_limits"
"""The kind of a run under way when passhat's own limits were found lowered."""

WATCHED = {
    "NOFILE": "open files",
    "NPROC": "processes and threads",
    "AS": "address space",
    "DATA": "data segment",
    "FSIZE": "file size",
    "STACK": "stack size",
    "CPU": "CPU time",
}
"""The limits looked at (RLIMIT_<name>), each with what it bounds."""

_INFINITE = float("inf")


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.taken: dict[str, tuple[int, int]] | None = None
        """The limits as the experiment's first run at `process` started: what a look
        compares (None between experiments: `forget`)."""
        self.flying: dict[int, list[str]] = {}
        """The runs in flight (by a number of their own): the lowered limits charged."""
        self.runs = 0


_STATE = _State()


def _value(limit: int) -> float:
    return _INFINITE if limit == resource.RLIM_INFINITY else float(limit)


def _said(limit: int) -> str:
    return "unlimited" if limit == resource.RLIM_INFINITY else f"{limit:,}"


_WHICH = [
    (n, getattr(resource, f"RLIMIT_{n}")) for n in WATCHED if hasattr(resource, f"RLIMIT_{n}")
]
"""The watched limits this system has, with their numbers."""


def _now() -> dict[str, tuple[int, int]]:
    """The watched limits of this process now."""
    return {name: resource.getrlimit(which) for name, which in _WHICH}


def lowered(taken: dict[str, tuple[int, int]], now: dict[str, tuple[int, int]]) -> list[str]:
    """The limits `now` holds lower than `taken` (soft or hard), by name."""
    return [
        name
        for name, (soft, hard) in taken.items()
        if name in now
        and (_value(now[name][0]) < _value(soft) or _value(now[name][1]) < _value(hard))
    ]


def _set_back(name: str, limits: tuple[int, int]) -> bool:
    """Whether `name` is back at `limits` (an unprivileged process cannot raise a hard one)."""
    try:
        resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), limits)
    except (ValueError, OSError):
        return False
    return True


def why(name: str, taken: tuple[int, int], now: tuple[int, int]) -> str:
    """passhat's limit `name` as it fell, for a run's message and the stop's."""
    was = f"{_said(taken[0])} (hard {_said(taken[1])})"
    return (
        f"passhat's own limit of {WATCHED[name]} (RLIMIT_{name}) fell from {was} to "
        f"{_said(now[0])} (hard {_said(now[1])})"
    )


def _look(state: _State) -> tuple[list[str], list[str]]:
    """(the lowered limits as said, those passhat could not set back); each lowered one
    is charged to every run in flight. Called with the lock held."""
    assert state.taken is not None
    now = _now()
    if now == state.taken:  # as taken: the look of nearly every run
        return [], []
    said, kept = [], []
    for name in lowered(state.taken, now):
        said.append(why(name, state.taken[name], now[name]))
        if not _set_back(name, state.taken[name]):
            kept.append(said[-1])
    for charged in state.flying.values():
        charged.extend(s for s in said if s not in charged)
    return said, kept


def _stop(kept: list[str]) -> StopRuns:
    return StopRuns(
        f"{kept[0]}, and it cannot raise it again: a process of its user lowered it "
        "(prlimit(2)), as an agent at --isolation process may (the runs under way were let "
        f"finish, errored {CHARGED}); no more runs were started, and --isolation "
        "namespace keeps an agent you do not trust from passhat's limits"
    )


def forget() -> None:
    """The experiment ends or stops: the next takes passhat's limits anew at its first run
    at `process` (unless a run, another experiment's, is in flight)."""
    with _STATE.lock:
        if not _STATE.flying:
            _STATE.taken = None


@contextlib.contextmanager
def watched(process: bool = True) -> Iterator[None]:
    """A command run (at `process`, else nothing is looked at): passhat's limits looked at
    as it starts (StopRuns when one cannot be set back: no run starts) and as it ends
    (AgentProcessError `agent_limits` when one fell while it was in flight, whatever the
    run ended in but a stop)."""
    if not process:
        yield
        return
    state = _STATE
    with state.lock:
        if state.taken is None:
            state.taken = _now()
        _, kept = _look(state)
        if kept:
            raise _stop(kept)
        state.runs += 1
        mine = state.runs
        state.flying[mine] = []
    stopped = True  # a stop (a cancel, Ctrl-C) goes on as it is: no run's end to charge
    try:
        yield
        stopped = False
    except Exception:
        stopped = False
        raise
    finally:
        with state.lock:
            _look(state)
            charged = state.flying.pop(mine)
        if charged and not stopped:
            raise AgentProcessError(
                CHARGED,
                f"{'; '.join(charged)} while this run's agent ran: a process of passhat's "
                "user lowered it (prlimit(2)), as an agent at --isolation process may, so "
                "the run is the agent's doing, not passhat's failure",
            )
