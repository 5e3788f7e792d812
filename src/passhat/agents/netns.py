"""A sandboxed run's endpoints listened for inside its own network namespace, with no relay.

A run at --isolation namespace reaches its endpoints at 127.0.0.1 of a network
namespace of its own. Where passhat may enter that namespace (it holds CAP_SYS_ADMIN
over it: passhat runs as root), bwrap starts with two pipes, `--info-fd` (it writes
the sandbox's first pid there) and `--block-fd` (the sandbox waits on it before the
agent is exec'd). One thread of passhat's (the hop's, not a pool's) enters the namespace
(setns moves the calling thread only), binds and listens at the run's ports, and comes
back, for each run in turn;
passhat's own servers accept on those sockets; then a byte on the block pipe starts
the agent. No relay process starts, and no byte is copied: the kernel hands each
connection the agent opens to passhat. Elsewhere (an ordinary user cannot enter a
namespace of another user namespace) the relay of sandbox.py carries the endpoints.

`direct()` answers, once per process, whether this works here, by trying it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import json
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from passhat.serve.endpoints import listening

if TYPE_CHECKING:
    from passhat.serve.endpoints import Listen

CLONE_NEWNET = 0x40000000
IP_FREEBIND = 15
"""Bind before the sandbox's loopback is up (bwrap raises it while the agent waits)."""
INFO_LIMIT = 64 * 1024


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc().setns(fd, CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"setns: {os.strerror(error)}")


def _listener(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # no Nagle
    try:  # (asyncio sets TCP_NODELAY only on a TCP proto's connections: serve/http.py)
        sock.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
    except OSError:
        sock.close()
        raise
    return listening(sock, ("127.0.0.1", port))


def _listen_there(pid: int, ports: Sequence[int], netns: int | None) -> list[socket.socket]:
    """Run on a thread of its own: enter `pid`'s network namespace (the one numbered
    `netns`, as bwrap said: not another process's that took a freed pid), listen, come
    back."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    made: list[socket.socket] = []
    try:
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            if netns is not None and os.fstat(target).st_ino != netns:
                raise OSError(f"process {pid} is no longer the run's sandbox")
            _setns(target)
        finally:
            os.close(target)
        try:
            made += [_listener(port) for port in ports]
        finally:
            _setns(home)  # raises when it cannot: the thread then ends, in no namespace of use
    except BaseException:
        for sock in made:
            sock.close()
        raise
    finally:
        os.close(home)
    return made


def listen_in(pid: int, ports: Sequence[int], netns: int | None = None) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1 at `ports` in the network namespace of process `pid`,
    made by the hop's thread (`_hop`): no thread of passhat's pool ever changes namespace."""
    out: list[tuple[list[socket.socket], BaseException | None]] = []
    answered = threading.Event()

    def made(result: tuple[list[socket.socket], BaseException | None]) -> None:
        out.append(result)
        answered.set()

    _hop(pid, ports, netns, made)
    answered.wait()
    socks, error = out[0]
    if error is not None:
        raise error
    return socks


async def listening_in(
    pid: int, ports: Sequence[int], netns: int | None = None
) -> list[socket.socket]:
    """`listen_in` for a run's gate: the event loop goes on with the other runs while the
    hop's thread enters the namespace, listens and comes back (it waited for that
    thread's join before, once a run). A gate given up meanwhile closes what it made."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[list[socket.socket]] = loop.create_future()

    def made(result: tuple[list[socket.socket], BaseException | None]) -> None:
        try:
            loop.call_soon_threadsafe(_hand_over, done, *result)
        except RuntimeError:  # the loop has closed: nobody takes the sockets
            _close_all(result[0])

    _hop(pid, ports, netns, made)
    return await done


Made = Callable[[tuple[list[socket.socket], BaseException | None]], None]
_HOPS: queue.SimpleQueue[tuple[int, list[int], int | None, Made]] = queue.SimpleQueue()
_HOPPER: list[threading.Thread] = []
"""The hop's thread while it serves (at most one)."""
_HOPPER_LOCK = threading.Lock()


def _hop(pid: int, ports: Sequence[int], netns: int | None, made: Made) -> None:
    """Have the hop's thread listen in `pid`'s namespace; it gives `made` (sockets, None)
    or ([], the error). One thread serves every run in turn, started on first use: a
    thread started for each run held the event loop in Thread.start until it ran (6 ms
    a run under a profile of 40 runs at concurrency 8, behind the other sandboxes'
    setups on 2 cores), and cost its start besides."""
    _HOPS.put((pid, list(ports), netns, made))
    with _HOPPER_LOCK:
        if not (_HOPPER and _HOPPER[0].is_alive()):  # first use, or after a fork
            _start_hopper()


def _start_hopper() -> None:
    """The hop's thread, started from a thread of passhat's own network namespace (a
    caller of `_hop`): it is that namespace's, and comes back to it after each hop."""
    thread = threading.Thread(target=_hopper, name="passhat-netns", daemon=True)
    _HOPPER[:] = [thread]
    thread.start()


def _hopper() -> None:
    """The hop's thread: each hop in turn. Before each it makes sure it is back in its
    own namespace (where `_listen_there` could not come back, setns refused, it enters
    it again); a hop it cannot make from there is answered with that error, never made
    from another run's namespace."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    number = os.fstat(home).st_ino
    while True:
        pid, ports, netns, made = _HOPS.get()
        try:
            if os.stat("/proc/thread-self/ns/net").st_ino != number:
                _setns(home)
            socks = _listen_there(pid, ports, netns)
        except BaseException as error:  # handed to the caller
            result: tuple[list[socket.socket], BaseException | None] = ([], error)
        else:
            result = (socks, None)
        try:
            made(result)
        except Exception:  # the caller's: it may not end this thread; nobody took them
            _close_all(result[0])


def _hand_over(
    done: asyncio.Future[list[socket.socket]],
    socks: list[socket.socket],
    error: BaseException | None,
) -> None:
    if done.cancelled():
        _close_all(socks)
    elif error is not None:
        done.set_exception(error)
    else:
        done.set_result(socks)


def _close_all(socks: Sequence[socket.socket]) -> None:
    for sock in socks:
        sock.close()


class Gate:
    """The two pipes between passhat and one bwrap: the sandbox's pid comes in on one,
    and the go-ahead for the agent goes out on the other; `endpoints` are the ports to
    listen at inside, each with what serves it."""

    def __init__(self, endpoints: Sequence[tuple[int, Listen | None]] = ()) -> None:
        self.endpoints = list(endpoints)
        self.info_read, self.info_write = os.pipe()
        self.block_read, self.block_write = os.pipe()
        for fd in (self.info_read, self.block_write):
            os.set_inheritable(fd, False)

    args = -1
    """A memfd holding bwrap's options (`bwrap()`), -1 until then."""
    input = -1
    """A memfd holding the run's input.json (`file()`), -1 until then."""
    filter = -1
    """A memfd holding the run's system-call filter (agents/seccomp.py), -1 until `bwrap()`."""

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self.info_write), "--block-fd", str(self.block_read)]

    def file(self, data: bytes) -> int:
        """The descriptor bwrap copies a file of the sandbox from (`--file FD DEST`)."""
        self.input = _memfd("passhat-input", data)
        return self.input

    def bwrap(self, options: Sequence[str]) -> list[str]:
        """`bwrap --args FD`, its options and the gate's read from a memfd: the sandbox's
        /proc/1/cmdline (bwrap's own process) then shows none of the host's paths."""
        from passhat.agents.seccomp import this_machine

        self.filter = _memfd("passhat-seccomp", this_machine())
        argv = [*options, *self.bwrap_args(), "--seccomp", str(self.filter)]
        data = b"".join(os.fsencode(arg) + b"\0" for arg in argv)  # a name in no UTF-8 too
        self.args = _memfd("passhat-bwrap-args", data)
        return ["bwrap", "--args", str(self.args)]

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (
            self.info_write,
            self.block_read,
            *(fd for fd in (self.args, self.input, self.filter) if fd >= 0),
        )

    def spawned(self) -> None:
        """Close passhat's copies of the ends bwrap holds (its end of a pipe closing is
        then how passhat learns it died before saying its pid)."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.info_write = self.block_read = self.args = self.input = self.filter = -1

    async def open(self) -> None:
        """Wait for the sandbox's pid, put its limits on it (sandbox.confine), serve the
        endpoints inside it (none for a relayed run: its relay carries them), set it to the
        ordinary scheduling policy (sandbox.ordinary), start the agent."""
        from passhat.agents.sandbox import confine, ordinary

        pid, netns = await _read_info(self.info_read)
        confine(pid)
        ports = [port for port, _ in self.endpoints]
        socks = await listening_in(pid, ports, netns) if ports else []
        try:
            for sock, (_, listen) in zip(socks, self.endpoints, strict=True):
                if listen is None:
                    raise OSError("an endpoint of the run has no server")
                socks = socks[1:]  # handed over: the server owns it, or closes it
                await listen(sock)
        finally:
            for sock in socks:  # what no server took
                sock.close()
        ordinary(pid)  # last: bwrap's setup goes on at passhat's policy until now
        os.write(self.block_write, b"x")

    def close(self) -> None:
        for fd in (self.info_read, self.block_write, *self.pass_fds):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.info_read = self.info_write = self.block_read = self.block_write = -1
        self.args = self.input = self.filter = -1


def _memfd(name: str, data: bytes) -> int:
    """A memfd holding `data`, read from its start (closed on exec but where passed)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _info_in(data: bytes) -> tuple[int, int | None] | None:
    """The sandbox's pid and network namespace (its inode) from bwrap's info JSON once all
    of it is in `data` (None until then)."""
    try:
        info = json.loads(data)
    except ValueError:
        if len(data) > INFO_LIMIT:
            raise OSError("bwrap's info was not the JSON it writes") from None
        return None
    try:
        netns = info.get("net-namespace")
        return int(info["child-pid"]), int(netns) if netns is not None else None
    except (AttributeError, KeyError, TypeError, ValueError):
        raise OSError("bwrap's info names no sandbox pid") from None


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


async def _read_info(fd: int) -> tuple[int, int | None]:
    """The sandbox's pid and network namespace, read off the loop's own reader."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    data = b""
    while True:
        ready: asyncio.Future[None] = loop.create_future()
        loop.add_reader(fd, _wake, ready)
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        with contextlib.suppress(BlockingIOError):
            chunk = os.read(fd, 4096)
            if not chunk:
                raise OSError("bwrap ended before it made the sandbox")
            data += chunk
            info = _info_in(data)
            if info is not None:
                return info


@functools.cache
def direct() -> bool:
    """Whether this process can listen inside a sandbox's network namespace: tried once,
    on a sandbox of bubblewrap's running /bin/true."""
    from passhat.agents.isolation import RUN_UID_BASE, is_root, launcher
    from passhat.agents.sandbox import base_argv

    if not is_root():  # setns needs CAP_SYS_ADMIN in passhat's own user namespace too
        return False
    gate = Gate()
    argv = [*launcher("namespace", RUN_UID_BASE), *base_argv(), *gate.bwrap_args(), "/bin/true"]
    try:
        proc = subprocess.Popen(argv, pass_fds=gate.pass_fds, env={}, stderr=subprocess.DEVNULL)
    except OSError:
        gate.close()
        return False
    gate.spawned()
    try:
        data = b""
        info = None
        while info is None:
            chunk = os.read(gate.info_read, 4096)  # bwrap writes it at once, or dies
            if not chunk:
                return False
            data += chunk
            info = _info_in(data)
        pid, netns = info
        for sock in listen_in(pid, [1], netns):
            sock.close()
        os.write(gate.block_write, b"x")
        return True
    except OSError:
        return False
    finally:
        gate.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
