"""What a command agent's run leaves running at --isolation process, ended with it.

A run's agent leads a process group of its own, killed whole when the run ends; a child
that leaves the group (a double fork and `setsid`) survived it, re-parented to init, and
read the environment of every process its user started later (tests/
test_attack55_survivor.py). While it runs agents at `process`, passhat is a child
subreaper (Linux: PR_SET_CHILD_SUBREAPER), so such a child is re-parented to passhat
instead, and ended (SIGKILL, with what it started) and reaped here, by pid: never
waitpid(-1), which would take the exits of passhat's own children from their watchers.

When: as a run ends if no other command run of this process is in flight (a live run may
use a daemon of its own; a run given up at its deadline, whose end never comes, does not
count), and as the experiment ends or stops (`finish`). While other runs fly, a run's end
reaps what of its session ended here (its group, killed: no zombie holds a pid till then).
An agent's pid is exempt while its run is in flight only (after, it may be anyone's).

Which: a child of passhat (re-parented: passhat starts its agents and keeps their pids)
that is not in passhat's own session (no agent is: each leads a session of its own, and
sessions are never joined) and either is in the session of a run's agent, or of a
process ended here, or started while an agent ran (from the first agent's start, in the
clock ticks of /proc/<pid>/stat, 10 ms, until no run is in flight). A child the caller
started before, or in passhat's own session, is never touched; what this could take is a
child the caller starts in a session of its own (start_new_session) while agents run, or
a daemon anything below passhat starts then (a scorer's `git gc --auto`: docs/
command-agents.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

from passhat._leftovers import given_up

_PR_SET_CHILD_SUBREAPER = 36
REAP_S = 1.0
"""Seconds a sweep waits for what it killed to exit, to reap it (the rest: the next)."""
ROUNDS = 20
"""Sweeps in a row at most: what a killed process started in between is the next's."""


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.flying: dict[object, int] = {}
        """The runs in flight, by task (one that may be given up, its end never run)."""
        self.subreaper = False
        self.windows: list[list[float]] = []
        """[first, last] clock ticks since boot agents ran in (last: inf while they run)."""
        self.sessions: set[int] = set()
        self.agents: set[int] = set()
        self.kept: set[int] = set()


_INF = float("inf")
_RUNS_AGENTS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "passhat_runs_agents", default=None
)
"""The agents' pids of the run in flight in this context (`run`): exempt until it ends."""
_STATE = _State()
_OWNER = os.getpid()


def _state() -> _State:
    """This process's state (a fresh one in a forked child: its parent's is not its own)."""
    global _STATE, _OWNER
    if os.getpid() != _OWNER:
        _STATE, _OWNER = _State(), os.getpid()
    return _STATE


def _prctl_subreaper(on: bool) -> bool:
    """Whether this process is now a child subreaper (`on`) or no longer one."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: not imported by passhat's start for this

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _tick() -> float:
    """Now, in the clock ticks since boot that /proc/<pid>/stat's start time counts."""
    return float(int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK")))


def keep(pid: int) -> None:
    """Never end `pid`: a process passhat started for itself (its watchdog)."""
    with _state().lock:
        _state().kept.add(pid)


def agent(pid: int) -> None:
    """`pid` is a run's agent: passhat's own child (its watcher reaps it), whose session
    is a run's."""
    state = _state()
    mine = _RUNS_AGENTS.get()
    if mine is not None:
        mine.append(pid)
    with state.lock:
        state.agents.add(pid)
        state.sessions.add(pid)
        if state.subreaper and not (state.windows and state.windows[-1][1] == _INF):
            stat = _stat(pid)  # the window opens at the agent's start (a 10 ms tick)
            state.windows.append([stat[3] if stat is not None else _tick(), _INF])


@contextlib.contextmanager
def run(process: bool) -> Iterator[None]:
    """A command run (of `process` isolation or not) in flight: what it leaves is ended
    when no other is."""
    state = _state()
    token: object = _task() or object()
    agents: list[int] = []
    with state.lock:
        if process and not state.subreaper:
            state.subreaper = _prctl_subreaper(True)
        state.flying[token] = state.flying.get(token, 0) + 1
    reset = _RUNS_AGENTS.set(agents)
    try:
        yield
    finally:
        _RUNS_AGENTS.reset(reset)
        with state.lock:
            state.flying[token] -= 1
            if not state.flying[token]:
                del state.flying[token]
            state.agents.difference_update(agents)  # reaped: their pids may be anyone's
            if not _in_flight(state):
                _sweep(state, REAP_S)
            elif state.subreaper:
                _reap_ended(state)  # its group's, re-parented here, not left as zombies


def _task() -> object | None:
    with contextlib.suppress(RuntimeError):
        return asyncio.current_task()
    return None


def _in_flight(state: _State) -> bool:
    """Whether a run is in flight whose end will come: not one given up at its deadline
    or left as its loop closed (_leftovers), whose `run` never ends."""
    return any(
        not (isinstance(t, asyncio.Future) and (t.done() or given_up(t))) for t in state.flying
    )


def finish() -> None:
    """The experiment ends or stops: what its runs left is ended, and passhat is no
    longer a subreaper (unless a run of another experiment is in flight)."""
    state = _state()
    with state.lock:
        if _in_flight(state) or not state.subreaper:
            return
        _sweep(state, REAP_S * 3, every=True)
        state.subreaper = not _prctl_subreaper(False)


def _sweep(state: _State, seconds: float, every: bool = False) -> None:
    """End and reap the runs' leftovers (the lock held, no run in flight); `every`: look
    at every thread's children, not the main thread's only."""
    if not state.subreaper:
        if not state.windows:  # no run at process: the sessions other levels' runs noted
            state.sessions.clear()  # are let go (their numbers are anyone's later)
        _close_window(state)
        return
    deadline = time.monotonic() + seconds
    # the window stays open through the rounds (no agent starts meanwhile: the lock is
    # held), so what a leftover forks as it is swept is the next round's
    for _ in range(ROUNDS):
        found = _leftovers(state, every)
        if not found:  # nothing of the runs is left to tell apart
            break
        _kill_trees(state, found)
        if _reap(found, deadline) and time.monotonic() >= deadline:
            _close_window(state)
            return
    else:
        _close_window(state)
        return  # what was killed in between: the next sweep's
    state.windows.clear()
    state.sessions.clear()
    state.agents = {pid for pid in state.agents if _stat(pid) is not None}


def _close_window(state: _State) -> None:
    if state.windows and state.windows[-1][1] == _INF:
        state.windows[-1][1] = _tick()


def _reap_ended(state: _State) -> None:
    """Reap, by pid, passhat's children that ended in a run's session (sessions are never
    joined: certain to be a run's): an agent's group killed at its run's end, re-parented
    here, left no zombie while other runs are in flight. Never a session's leader: an
    agent its watcher reaps, or one whose pid an ended agent had (reused: the caller's
    child, whose exit status its own wait would read as 0)."""
    for pid in _children(False):
        if pid in state.agents or pid in state.kept:  # most of them: no /proc read
            continue
        stat = _stat(pid)
        if stat is not None and stat[0] == "Z" and stat[2] != pid and stat[2] in state.sessions:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def _children(every: bool) -> list[int]:
    """This process's children: the main thread's (an orphan goes to the first thread
    alive: the main one, unless it is exiting), or `every` thread's."""
    pid = os.getpid()
    return _threads_children(pid, None if every else [str(pid)])


def _stat(pid: int) -> tuple[str, int, int, float] | None:
    """(state, ppid, session, start tick) of `pid`, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[3]), float(fields[19])


def _leftovers(state: _State, every: bool) -> list[int]:
    """The children of passhat that runs left (see the module's doc)."""
    own = os.getsid(0)
    found = []
    for pid in _children(every):
        if pid in state.agents or pid in state.kept:
            continue
        stat = _stat(pid)
        if stat is None or stat[2] == own:
            continue
        started = stat[3]
        if stat[2] in state.sessions or any(a <= started <= b for a, b in state.windows):
            found.append(pid)
    return found


def _tree(state: _State, pid: int) -> list[int]:
    """pidfds of `pid`'s descendants (not `pid`), each opened while its parent was; their
    sessions become the runs'."""
    held: list[int] = []
    parents = [pid]
    while parents and len(held) < 100_000:
        parent = parents.pop()
        kids = _threads_children(parent)
        for kid in kids:
            with contextlib.suppress(OSError):
                fd = os.pidfd_open(kid)
                stat = _stat(kid)  # still the child found (or re-parented to passhat)?
                if stat is None or stat[1] not in (parent, os.getpid()):
                    os.close(fd)
                    continue
                held.append(fd)
                parents.append(kid)
                state.sessions.add(stat[2])
    return held


def _threads_children(pid: int, tasks: list[str] | None = None) -> list[int]:
    """The children of `tasks` of `pid`, every thread's when None (a thread's fork is
    that thread's child)."""
    kids: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task") if tasks is None else tasks:
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(word) for word in f.read().split()]
    return kids


def _kill_trees(state: _State, found: list[int]) -> None:
    """SIGKILL `found` (passhat's children: their pids are theirs until reaped) and all
    they started; their sessions become the runs' (what they leave is found next)."""
    held = [fd for pid in found for fd in _tree(state, pid)]
    for pid in found:
        stat = _stat(pid)
        if stat is not None:
            state.sessions.add(stat[2])
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for fd in held:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        os.close(fd)


def _reap(found: list[int], deadline: float) -> list[int]:
    """Wait for each of `found` (killed children) by its pid until `deadline`; the ones
    not yet exited."""
    left = list(found)
    delay = 0.0005
    while left:
        for pid in list(left):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done == pid:
                left.remove(pid)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    return left
