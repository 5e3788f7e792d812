"""What runs leave behind on the loop of `execution.run_loop` as it closes.

    runs_task      its task factory: a task made inside an agent's run (`IN_RUN`) is
                   remembered as the run's (`left_by_a_run`), not passhat's own
    LeavingPool    its default executor (asyncio.to_thread): daemon threads, waited for
                   a bounded time at the loop's end and never at the interpreter's exit

asyncio.run waits for every task left, every async generator's close and every thread
of the default executor, for good; an agent's task that catches every cancel, its
async generator that never closes or its call blocked in to_thread kept passhat from
exiting, its report unprinted (review55).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

IN_RUN: contextvars.ContextVar[bool] = contextvars.ContextVar("passhat_in_run", default=False)
"""True in an agent's task (execution._invoke), and so in every task it makes."""

_RUNS_TASKS: weakref.WeakSet[asyncio.Future[Any]] = weakref.WeakSet()
"""Tasks made inside an agent's run (`runs_task`)."""


def runs_task(loop: asyncio.AbstractEventLoop, coro: Any, /, **options: Any) -> asyncio.Task[Any]:
    """run_loop's task factory: asyncio's own task, remembered when an agent's run made it."""
    task = asyncio.Task(coro, loop=loop, **options)
    if IN_RUN.get():
        _RUNS_TASKS.add(task)
    return task


def left_by_a_run(task: asyncio.Future[Any]) -> bool:
    """Whether an agent's run made `task` (`runs_task`)."""
    return task in _RUNS_TASKS


def forget(task: asyncio.Future[Any]) -> None:
    _RUNS_TASKS.discard(task)


_Call = tuple[Future[Any], Callable[[], Any]]


class LeavingPool(ThreadPoolExecutor):
    """A ThreadPoolExecutor (what `loop.set_default_executor` takes) of daemon threads:
    its `shutdown` waits `wait_s` at most, and the interpreter's exit does not join them.
    ThreadPoolExecutor's own threads are joined at both, for good."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(thread_name_prefix="passhat-default")
        self._wait_s = wait_s
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self._guard = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._guard:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._calls.put((future, functools.partial(fn, *args, **kwargs)))
            if self._idle:
                self._idle -= 1  # a waiting worker takes it
            elif len(self._workers) < self._max_workers:
                name = f"passhat-default-{len(self._workers)}"
                worker = threading.Thread(target=self._work, name=name, daemon=True)
                self._workers.append(worker)
                worker.start()
        return future

    def _work(self) -> None:
        while (call := self._calls.get()) is not None:
            future, fn = call
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except BaseException as error:  # handed to the caller, from `fn` down
                    tb = error.__traceback__
                    future.set_exception(error.with_traceback(tb.tb_next if tb else None))
                else:
                    future.set_result(result)
            del call, future, fn
            with self._guard:
                self._idle += 1
        self._calls.put(None)  # the next worker ends too

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._guard:
            self._shutdown = True
        self._calls.put(None)  # after the calls queued
        if wait:
            end = time.monotonic() + self._wait_s
            for worker in list(self._workers):
                worker.join(max(0.0, end - time.monotonic()))
