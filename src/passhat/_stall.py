"""Stopping an `async def` agent that blocks the event loop past its run's deadline.

    watchdog()   a thread that notices the loop has not turned and, when a run is past
                 its deadline, raises `Deadline` inside that run's task (SIGALRM)

execution.py watches each run's agent task with it (execution.py had it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any


class Deadline(BaseException):
    """Raised inside an async agent that blocks the event loop past its run's deadline."""


class _Watchdog:
    """Stops an `async def` agent that blocks the event loop (time.sleep, a busy loop).

    Nothing on the loop can run while it blocks, so a thread watches: when the loop
    has not turned for a while and a run is past its deadline, it sends SIGALRM to
    the main thread, whose handler raises `Deadline` inside the task that is
    running, if that task is a run past its deadline. Only in the main thread (where
    Python runs signal handlers) and where SIGALRM exists; elsewhere such a run is
    still recorded as a timeout, once it returns.
    """

    STALL_S = 0.25
    """The loop counts as blocked when it has not turned for this long."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.deadlines: dict[asyncio.Future[Any], float] = {}
        self.turned = time.monotonic()
        self._stop = threading.Event()
        self._previous: Any = None
        self._beat_handle: asyncio.TimerHandle | None = None

    def watch(self, task: asyncio.Future[Any], deadline: float) -> None:
        self.deadlines[task] = deadline
        task.add_done_callback(self._unwatch)

    def _unwatch(self, task: asyncio.Future[Any]) -> None:
        self.deadlines.pop(task, None)

    def start(self) -> None:
        self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        self._beat()
        threading.Thread(target=self._watch, name="passhat-watchdog", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._beat_handle is not None:
            self._beat_handle.cancel()
        signal.signal(signal.SIGALRM, self._previous)

    def _beat(self) -> None:
        self.turned = time.monotonic()
        self._beat_handle = self.loop.call_later(self.STALL_S / 4, self._beat)

    def _watch(self) -> None:
        main = threading.main_thread().ident
        while not self._stop.wait(self.STALL_S / 2):
            now = time.monotonic()
            overdue = any(deadline < now for deadline in list(self.deadlines.values()))
            if overdue and now - self.turned > self.STALL_S and main is not None:
                signal.pthread_kill(main, signal.SIGALRM)

    def _on_alarm(self, signum: int, frame: Any) -> None:
        try:
            task = asyncio.current_task(self.loop)
        except RuntimeError:
            return
        deadline = self.deadlines.get(task) if task is not None else None
        if deadline is not None and time.monotonic() > deadline:
            self.deadlines.pop(task, None)  # type: ignore[arg-type]
            raise Deadline


WATCHDOG: contextvars.ContextVar[_Watchdog | None] = contextvars.ContextVar(
    "passhat_watchdog", default=None
)


@contextlib.contextmanager
def watchdog() -> Iterator[None]:
    """A `_Watchdog` for the runs started inside (none off the main thread)."""
    usable = threading.current_thread() is threading.main_thread() and hasattr(
        signal, "pthread_kill"
    )
    if not usable or not hasattr(signal, "SIGALRM"):
        yield
        return
    guard = _Watchdog(asyncio.get_running_loop())
    guard.start()
    token = WATCHDOG.set(guard)
    try:
        yield
    finally:
        WATCHDOG.reset(token)
        guard.stop()
