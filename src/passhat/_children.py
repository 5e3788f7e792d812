"""Python 3.12's way of waiting for child processes (command agents), on Python 3.11:
each child's exit read from its pidfd by the loop that started it (`child_watcher`)."""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any


class _PidfdWatcher(asyncio.AbstractChildWatcher):
    """Python 3.12's child watcher on 3.11: a child's exit read from its pidfd by the
    loop that started it (no thread, no signal). Python 3.11's default,
    ThreadedChildWatcher, starts a thread per child to wait for it: for a command
    agent's run of `true` at --isolation process that thread was 0.5-1.0 ms of a
    3.5-4 ms run's CPU (bench_spawn's whole-run row; 300 runs at concurrency 1).
    3.11's own asyncio.PidfdChildWatcher is bound to the one loop it was attached to;
    passhat runs a loop per evaluation (and in a thread under a notebook's), so this
    one, as 3.12's, uses the loop running when the child is added."""

    def __init__(self) -> None:
        self._threaded = asyncio.ThreadedChildWatcher()
        """A child whose pidfd cannot be opened (EMFILE) is waited for by a thread."""

    def __enter__(self) -> _PidfdWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def is_active(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        pass

    def add_child_handler(  # type: ignore[override]  # typeshed's TypeVarTuple form
        self, pid: int, callback: Callable[..., object], *args: Any
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # out of descriptors: the child runs already, and asyncio would
            # leave it unwaited and unkilled (it adds this handler outside its cleanup)
            self._threaded.add_child_handler(pid, callback, *args)  # no descriptor
            return
        loop.add_reader(pidfd, self._exited, loop, pid, pidfd, callback, args)

    def _exited(
        self,
        loop: asyncio.AbstractEventLoop,
        pid: int,
        pidfd: int,
        callback: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> None:
        loop.remove_reader(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # reaped elsewhere, as asyncio's own watchers say
            code = 255
        else:
            code = os.waitstatus_to_exitcode(status)
        os.close(pidfd)
        callback(pid, code, *args)

    def remove_child_handler(self, pid: int) -> bool:
        return True  # asyncio never calls it (nor does Python 3.12's watcher do anything)


def child_watcher() -> None:
    """On Python 3.11 where Linux gives pidfds (5.3+), child processes (command agents)
    are waited for as Python 3.12 waits for them by default (`_PidfdWatcher`). Only
    3.11's default watcher is replaced; a program's own watcher is kept."""
    if sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        current = asyncio.get_child_watcher()
        if not isinstance(current, asyncio.ThreadedChildWatcher):
            return
        try:
            os.close(os.pidfd_open(os.getpid()))
        except OSError:  # an older kernel, or pidfd_open refused (seccomp)
            return
        asyncio.set_child_watcher(_PidfdWatcher())
