"""A stop (Ctrl-C) that lands while a command agent's process is being started: the
process has forked but asyncio still connects its pipes. asyncio then killed the
process alone, and what it had started lived on. Under --isolation namespace that was
bwrap's PID 1, asleep for good on the eventfd through which bwrap lets it run (review54:
one orphaned bwrap in ~30 Ctrl-C stops). The stop is placed in that window here."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from asyncio import base_subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from passhat.agents.base import RunContext
from passhat.agents.command import CommandAgent, CommandSpec
from passhat.agents.streams import kill_sandbox, spawn
from test_command_agent import _alive

LEAVES = "sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {}; wait"
"""A shell whose child, in its group as bwrap's PID 1 is in bwrap's, writes its pid (and
holds none of the shell's pipes, so a start that kills the shell alone ends)."""


async def _check_gone(pid: int, what: str, seconds: float = 5.0) -> None:
    """`pid` ends within `seconds`, the loop turning meanwhile; killed if not."""
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"{what} outlived the stop")


async def _stopped_while_starting(
    monkeypatch: pytest.MonkeyPatch, pidfile: Path, start: Awaitable[Any], stops: int = 1
) -> int:
    """Run `start`, cancelling it once its process forked and the child it starts is up,
    as asyncio is to connect the process's pipes (before the start returns): where a
    Ctrl-C can cancel it; `stops` times, a loop turn apart. The child's pid, after the
    cancelled start ended."""
    connect = base_subprocess.BaseSubprocessTransport._connect_pipes
    victim: list[asyncio.Task[Any]] = []

    async def late(self: Any, waiter: asyncio.Future[None]) -> None:
        while not pidfile.exists() or not pidfile.read_text().endswith("\n"):
            await asyncio.sleep(0.01)
        for _ in range(stops):
            victim[0].cancel()
            await asyncio.sleep(0)
        await connect(self, waiter)

    monkeypatch.setattr(base_subprocess.BaseSubprocessTransport, "_connect_pipes", late)
    victim.append(asyncio.ensure_future(start))
    with pytest.raises(asyncio.CancelledError):
        await victim[0]
    return int(pidfile.read_text())


async def test_a_start_cancelled_after_the_fork_kills_the_process_group(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    argv = ("/bin/sh", "-c", LEAVES.format(pidfile))
    start = spawn(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    child = await _stopped_while_starting(monkeypatch, pidfile, start)
    await _check_gone(child, "the started process's child")


async def test_a_second_stop_while_the_first_waits_for_the_start_still_kills_the_group(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A second Ctrl-C ends the wait for the started process, not its kill."""
    pidfile = tmp_path / "child.pid"
    start = spawn("/bin/sh", "-c", LEAVES.format(pidfile), start_new_session=True)
    child = await _stopped_while_starting(monkeypatch, pidfile, start, stops=2)
    await _check_gone(child, "the started process's child")


class _Guard:
    def add(self, pid: int) -> None:
        pass

    def remove(self, pid: int) -> None:
        pass


async def test_a_command_agents_run_stopped_while_its_process_starts_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same stop through the run's start (CommandAgent._run_process)."""
    pidfile = tmp_path / "child.pid"
    agent = CommandAgent(CommandSpec(("/bin/sh",), cwd=str(tmp_path)), None)
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    argv = ["/bin/sh", "-c", LEAVES.format(pidfile)]
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    run = agent._run_process(argv, b"{}", tmp_path, environ, ctx, _Guard())  # type: ignore[arg-type]
    child = await _stopped_while_starting(monkeypatch, pidfile, run)
    await _check_gone(child, "the agent's child")


async def test_a_sandboxs_kill_takes_the_child_that_left_the_group(tmp_path: Path) -> None:
    """bwrap's PID 1 calls setsid (--new-session) before it binds its life to bwrap's
    (--die-with-parent): a kill of the group in between left it and its agent running.
    kill_sandbox kills the leader's children that left the group too; here a shell's."""
    pidfile = tmp_path / "child.pid"
    leaves = f"setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {pidfile}; wait"
    leader = subprocess.Popen(["/bin/sh", "-c", leaves], start_new_session=True)
    try:
        while not pidfile.exists() or not pidfile.read_text().endswith("\n"):
            await asyncio.sleep(0.01)
        child = int(pidfile.read_text())
        while os.getsid(child) == leader.pid:  # until its setsid
            await asyncio.sleep(0.01)
        kill_sandbox(leader.pid)
        await _check_gone(child, "the child that left the group")
    finally:
        leader.kill()
        leader.wait()


async def test_a_sandboxs_kill_spares_the_children_of_a_process_not_passhats(
    tmp_path: Path,
) -> None:
    """kill_sandbox is also called once the run's bwrap has exited and been reaped (the
    run's end: `kill(proc.pid)` after `await waiter`), when its pid may belong to another
    process (pid_max is 32,768 here). It read that pid's children in /proc and killed
    them: another's. Here the pid is a process passhat never started (a grandchild)."""
    pidfile = tmp_path / "pids"
    inner = f"sleep 60 </dev/null >/dev/null 2>&1 & echo $$ $! > {pidfile}; wait"
    outer = subprocess.Popen(
        ["/bin/sh", "-c", f"/bin/sh -c '{inner}' & wait"], start_new_session=True
    )
    try:
        while not pidfile.exists() or not pidfile.read_text().endswith("\n"):
            await asyncio.sleep(0.01)
        other, child = map(int, pidfile.read_text().split())
        kill_sandbox(other)
        await asyncio.sleep(0.1)
        assert _alive(child), "a child of a process not passhat's was killed"
    finally:
        os.killpg(outer.pid, signal.SIGKILL)
        outer.wait()
