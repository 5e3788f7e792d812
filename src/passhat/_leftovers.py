"""The loop a run goes on (`run_loop`), and what runs leave behind on it as it closes.

    run_loop       asyncio.run, but its close leaves behind what will not end
    abandon        a run given up at its deadline: cancelled, then left (CLEANUP_S)
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
import ctypes
import functools
import queue
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from passhat._timers import new_loop

IN_RUN: contextvars.ContextVar[bool] = contextvars.ContextVar("passhat_in_run", default=False)
"""True in an agent's task (execution._invoke), and so in every task it makes."""

T = TypeVar("T")

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


CLEANUP_S = 1.0
"""Seconds a run past its deadline gets to clean up after the cancel."""

_ABANDONED: dict[asyncio.Future[Any], float] = {}
"""Runs left behind at their deadline, kept referenced until they end: by each, the
time.monotonic() until which its loop's closing waits for it (run_loop)."""

_FOR_GOOD: set[asyncio.Future[Any]] = set()
"""Tasks left pending for good as their loop closed (`_leave_for_good`: never freed)."""


def given_up(task: asyncio.Future[Any]) -> bool:
    """Whether `task` was abandoned at its deadline or left for good as its loop closed:
    it may never run its `finally` (a run in flight it counted stays counted: _orphans)."""
    return task in _ABANDONED or task in _FOR_GOOD


def abandon(task: asyncio.Future[Any], cleanup_s: float = CLEANUP_S) -> None:
    """Cancel `task`, left behind; its loop's closing waits `cleanup_s` from now for it:
    0 for a run that had its CLEANUP_S after the cancel (shipment.GRACE_S)."""
    task.cancel()
    _ABANDONED[task] = time.monotonic() + cleanup_s
    task.add_done_callback(forget_abandoned)


def forget_abandoned(task: asyncio.Future[Any]) -> None:
    _ABANDONED.pop(task, None)
    if not task.cancelled():
        task.exception()  # retrieved: a late failure of an abandoned run is no news


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, but its shutdown does not wait forever on abandoned runs.

    asyncio.run cancels every task left and waits for them all: one agent that catches
    every cancel kept passhat from exiting, its run recorded. Here the tasks left are
    cancelled and waited for as there, but for the abandoned runs and the tasks agents
    made (`runs_task`), which get what is left of their cleanup time (`abandon`;
    CLEANUP_S for an agent's task) and are then left behind, pending, as the loop closes
    (a daemon thread's way); so are async generators not closed within CLEANUP_S, and
    the default executor's threads (asyncio.to_thread) past it.
    """
    # its run(): Ctrl-C cancels `main`, then KeyboardInterrupt; its loop's timers wake
    # it when due, not at the next whole millisecond (_timers.py)
    runner = asyncio.Runner(loop_factory=new_loop)
    loop = runner.get_loop()
    loop.set_task_factory(runs_task)
    loop.set_default_executor(LeavingPool(CLEANUP_S))
    try:
        return runner.run(main)
    finally:
        _close_leaving_abandoned(runner.get_loop())


def _leave_for_good(task: asyncio.Future[Any]) -> None:
    """A task that never ends, its loop closing: never freed, so its coroutine is never
    closed (a GeneratorExit thrown in at exit, which a bare except catches and loops on,
    spun forever as the interpreter ended), nor reported destroyed while pending."""
    task._log_destroy_pending = False  # type: ignore[attr-defined]
    _ABANDONED.pop(task, None)
    forget(task)
    _FOR_GOOD.add(task)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(task))  # a reference never given back


def _left_behind(task: asyncio.Future[Any]) -> bool:
    """A run abandoned at its deadline, or a task an agent made (not passhat's own)."""
    return task in _ABANDONED or left_by_a_run(task)


def _close_leaving_abandoned(loop: asyncio.AbstractEventLoop) -> None:
    """Runner.close's steps, with a bounded wait for the abandoned runs."""
    try:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        kept = [task for task in left if not _left_behind(task)]
        if kept:  # passhat's own (a writer's block ends): waited for, as asyncio.run does
            loop.run_until_complete(asyncio.gather(*kept, return_exceptions=True))
        for task in kept:
            if not task.cancelled() and task.exception() is not None:
                loop.call_exception_handler(
                    {
                        "message": "unhandled exception during asyncio.run() shutdown",
                        "exception": task.exception(),
                        "task": task,
                    }
                )
        stuck = [task for task in left if _left_behind(task) and not task.done()]
        now = time.monotonic()
        until = max((_ABANDONED.get(task, now + CLEANUP_S) for task in stuck), default=now)
        if stuck and until > now:
            loop.run_until_complete(asyncio.wait(stuck, timeout=until - now))
        closing = loop.create_task(loop.shutdown_asyncgens())  # an agent's may never close
        loop.run_until_complete(asyncio.wait({closing}, timeout=CLEANUP_S))
        try:
            loop.run_until_complete(loop.shutdown_default_executor())  # LeavingPool: bounded
        except RuntimeError as error:  # no thread to join it with: its threads are left
            if "can't start new thread" not in str(error):  # (RLIMIT_NPROC lowered)
                raise
    finally:
        for task in asyncio.all_tasks(loop):  # also those a Ctrl-C here cut the wait for
            _leave_for_good(task)
        asyncio.set_event_loop(None)
        loop.close()
