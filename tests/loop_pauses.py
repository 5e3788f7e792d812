"""How long the event loop stood still while a block ran: the tests that hold passhat to
turning its loop through large requests and outputs (test_attack49_loop, test_attack53_output)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator


@contextlib.asynccontextmanager
async def loop_pauses() -> AsyncIterator[list[float]]:
    """The loop thread's CPU between two turns of a 20 ms ticker, one entry per turn, for
    the block (a machine loaded by other tests stretches a pause's wall time, not its
    work); once the block ends, the ticker has one more turn, so the pause that ended it
    is counted."""
    pauses: list[float] = []

    async def tick() -> None:
        last = time.thread_time()
        while True:
            await asyncio.sleep(0.02)
            now = time.thread_time()
            pauses.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        await asyncio.sleep(0.05)
        pauses.clear()
        yield pauses
        await asyncio.sleep(0.1)
    finally:
        ticker.cancel()
