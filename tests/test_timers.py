"""passhat's own event loop (_timers.py): a timer wakes it when due, not at the next
whole millisecond of epoll's wait."""

from __future__ import annotations

import asyncio
import selectors
import time
from typing import Any

import pytest

from passhat import _timers
from passhat._leftovers import run_loop

pytestmark = pytest.mark.skipif(not _timers._MS_GRAINED, reason="a selector in milliseconds")


def _waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float | None]]:
    """The waits of the selector under `_TimelySelector`, epoll's and time.sleep's, each
    recorded and ended at once (nothing registered: epoll's would return nothing)."""
    waits: list[tuple[str, float | None]] = []
    base = selectors.DefaultSelector.select

    def select(self: Any, timeout: float | None = None) -> Any:
        waits.append(("select", timeout))
        return base(self, 0)

    monkeypatch.setattr(selectors.DefaultSelector, "select", select)
    monkeypatch.setattr(time, "sleep", lambda s: waits.append(("sleep", s)))
    return waits


def test_a_wait_is_epolls_whole_milliseconds_then_the_rest_slept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wait of 1.3 ms: 1 ms in epoll (which rounds up: 2 ms), what is left slept, then a
    look for I/O without waiting; one under 1 ms is a look for I/O, then slept whole
    (epoll: 1 ms); none or no timer are epoll's own."""
    selector = _timers._TimelySelector()
    try:
        waits = _waits(monkeypatch)
        selector.select(0.0013)
        assert [kind for kind, _ in waits] == ["select", "sleep", "select"]
        assert waits[0][1] == 0.001 and waits[2][1] == 0
        assert 0 < (waits[1][1] or 0) <= 0.0013  # what is left (epoll's here took none)
        waits.clear()
        selector.select(0.0004)
        assert [kind for kind, _ in waits] == ["select", "sleep", "select"]
        assert waits[0][1] == 0 and waits[2][1] == 0
        assert 0 < (waits[1][1] or 0) <= 0.0004 + 1e-9
        waits.clear()
        selector.select(0)
        assert waits == [("select", 0)]
    finally:
        selector.close()


def test_an_event_ready_ends_the_wait_before_the_sleep() -> None:
    """I/O ready within epoll's part of the wait is returned then, with no sleep after."""
    import socket

    selector = _timers._TimelySelector()
    a, b = socket.socketpair()
    try:
        selector.register(a, selectors.EVENT_READ)
        b.send(b"x")
        start = time.monotonic()
        ready = selector.select(5.0)
        assert [key.fileobj for key, _ in ready] == [a]
        assert time.monotonic() - start < 1.0
    finally:
        selector.close()
        a.close()
        b.close()


def test_an_event_ready_as_a_wait_under_a_millisecond_starts_is_returned_unslept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A timer due in 0.9 ms and I/O ready already: the I/O is returned at once, not after
    the 0.9 ms slept (epoll's own wait of 1 ms returned it at once; review56b)."""
    import socket

    selector = _timers._TimelySelector()
    a, b = socket.socketpair()
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    try:
        selector.register(a, selectors.EVENT_READ)
        b.send(b"x")
        ready = selector.select(0.0009)
        assert [key.fileobj for key, _ in ready] == [a] and slept == []
    finally:
        selector.close()
        a.close()
        b.close()


def test_run_loop_goes_on_the_timely_loop_unless_a_policy_of_the_programs_own() -> None:
    """run_loop's loop waits with `_TimelySelector` under asyncio's own policy; under a
    program's own policy it is the loop that policy makes."""

    async def selector() -> str:
        return type(asyncio.get_running_loop()._selector).__name__  # type: ignore[attr-defined]

    assert run_loop(selector()) == "_TimelySelector"

    class Own(asyncio.DefaultEventLoopPolicy):
        pass

    before = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(Own())
    try:
        assert run_loop(selector()) != "_TimelySelector"
    finally:
        asyncio.set_event_loop_policy(before)
