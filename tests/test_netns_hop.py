"""The hop into a sandbox's network namespace (agents/netns.py): one thread of its own
serves every run's hop in turn, and one that could not come back serves no other run."""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import threading

import pytest

from passhat.agents import netns


def _recording(seen: list[threading.Thread]) -> object:
    def listen_there(pid: int, ports: list[int], number: int | None) -> list[socket.socket]:
        seen.append(threading.current_thread())
        return []

    return listen_there


def test_one_thread_serves_the_hops_of_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread started for each run held the event loop in Thread.start until it ran:
    the second run's hop is served by the thread that served the first."""
    seen: list[threading.Thread] = []
    monkeypatch.setattr(netns, "_listen_there", _recording(seen))

    async def main() -> None:
        for _ in range(3):
            assert await netns.listening_in(1, [1]) == []

    asyncio.run(main())
    assert netns.listen_in(1, [1]) == []
    assert len(seen) == 4 and all(t is seen[0] for t in seen)
    assert seen[0] is not threading.current_thread() and seen[0].name == "passhat-netns"


def test_a_hop_that_did_not_come_back_is_followed_by_one_from_passhats_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hop's thread left in a sandbox's namespace (its setns home refused) makes no
    other run's hop from there: it enters its own namespace again first."""
    if not netns.direct():
        pytest.skip("passhat cannot enter network namespaces here (not root)")
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.stat("/proc/thread-self/ns/net").st_ino
    where: list[int] = []

    def stranded(pid: int, ports: list[int], number: int | None) -> list[socket.socket]:
        where.append(os.stat("/proc/thread-self/ns/net").st_ino)
        if len(where) == 1:  # the thread alone moves to a namespace it does not leave
            assert libc.unshare(netns.CLONE_NEWNET) == 0, os.strerror(ctypes.get_errno())
            raise OSError("setns: could not come back")
        return []

    monkeypatch.setattr(netns, "_listen_there", stranded)
    with pytest.raises(OSError, match="could not come back"):
        netns.listen_in(1, [1])
    assert netns.listen_in(1, [1]) == []
    assert where == [home, home]
