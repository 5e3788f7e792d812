"""The event loop passhat makes for its runs (`_leftovers.run_loop`): a timer wakes the
loop when it is due, not at the next whole millisecond.

epoll and poll wait in whole milliseconds, and Python's selectors round a wait up so as
never to wake early: a timer due in 0.05 ms put the loop to sleep for 1 ms, one due in
1.3 ms for 2 ms. Every `asyncio.sleep` of an agent, every run's deadline and the local
executor's ramp (its slots 0.3 ms apart: executors/local.py RAMP_S) came up to a
millisecond late, and the ramp's starts bunched into the loop's whole-millisecond
wake-ups. Here the loop waits the whole milliseconds in epoll, and the rest (under
1 ms) in `time.sleep`, then looks for I/O without waiting: a timer fires within the
kernel's timer slack (~0.05 ms) of its time. I/O ready as the wait starts is returned
at once (a look without waiting, where there are no whole milliseconds to wait); I/O
that comes during the sleep waits for its end, at most 1 ms, which is what a timer's
wait was rounded up by.

Only for asyncio's own policy with a selector that waits in milliseconds (Linux's
epoll, poll): a program's own policy (uvloop...) and kqueue (which takes a timeout in
nanoseconds) make the loop they make.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from typing import Any

_MS_GRAINED = issubclass(
    selectors.DefaultSelector, (getattr(selectors, "EpollSelector", ()), selectors.PollSelector)
)
"""Whether the platform's selector waits in whole milliseconds."""


class _TimelySelector(selectors.DefaultSelector):
    """The platform's selector, its waits ending when they are due (the module's doc)."""

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        if timeout is None or timeout <= 0:
            return super().select(timeout)
        end = time.monotonic() + timeout
        whole = math.floor(timeout * 1000) / 1000
        # I/O ready now is returned now: a wait under 1 ms is otherwise all slept
        ready = super().select(whole)
        if ready:
            return ready
        left = end - time.monotonic()
        if left > 0:
            time.sleep(left)
        return super().select(0)


def new_loop() -> asyncio.AbstractEventLoop:
    """A new event loop, set as this thread's (as asyncio.Runner sets its own): one whose
    timers wake it when due, where asyncio's own policy would make an epoll or poll
    loop; otherwise the policy's."""
    policy = asyncio.get_event_loop_policy()
    if _MS_GRAINED and type(policy) is asyncio.DefaultEventLoopPolicy:
        loop: asyncio.AbstractEventLoop = asyncio.SelectorEventLoop(_TimelySelector())
    else:
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop
