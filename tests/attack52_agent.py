"""A command agent for round 14's outside attack (tests/test_attack52_*.py).

    python tests/attack52_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK52_PROBE  FOLDER (a `write:` folder): tries the system-call filter's edges there
                    (a file capability by setxattr, a whiteout by renameat2, a hard link
                    to a setuid program, a setgid folder by mkdir) and says who the run
                    is (its uid, its capabilities): each result, or the error's name
    ATTACK52_REWRITE PATH: writes "injected" over the start of a set-id file made before
                    the run, through a shared mapping (mmap): its mode before and after
    ATTACK52_MEMORY KINDS: holds memory past the run's caps outside its RSS (memory()
                    says how), then exits: what each held, and how much the host's
                    MemAvailable fell meanwhile
    ATTACK52_TCP    MEGABYTES,SECONDS: loopback TCP connections in the run's network
                    namespace filled until MEGABYTES are queued, held SECONDS (tcp())
    ATTACK52_HOLD   FOLDER,SECONDS,KINDS (runs of `-k 2 --concurrency 2`, FOLDER a
                    `write:` folder): run 1 takes each of the kernel's KINDS (`+`
                    between them) until refused: `pty` (terminals: /dev/ptmx opened),
                    `aio` (AIO contexts' events: io_setup), `keys` (user keys of 1,000
                    bytes in its process keyring: add_key); leaves FOLDER/full and holds
                    them until run 2 leaves FOLDER/tried (SECONDS at most). Run 2 waits
                    for FOLDER/full and takes one of each: how many run 1 took and what
                    stopped it, what run 2 got
"""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import resource
import socket
import stat
import time
from collections.abc import Callable

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long  # shmat's address: all 64 bits
NUMBERS = {  # add_key, renameat2, io_setup, shmget, shmat, shmdt, msgget, msgsnd, semget
    "x86_64": (248, 316, 206, 29, 30, 67, 68, 69, 64),
    "aarch64": (217, 276, 0, 194, 196, 197, 186, 189, 190),
}
ADD_KEY, RENAMEAT2, IO_SETUP, SHMGET, SHMAT, SHMDT, MSGGET, MSGSND, SEMGET = NUMBERS.get(
    os.uname().machine, NUMBERS["aarch64"]
)
KEY_SPEC_PROCESS_KEYRING = -2
RENAME_WHITEOUT = 4
AT_FDCWD = -100


def _error(number: int) -> str:
    return errno.errorcode.get(number, str(number))


def _tried(attempt: Callable[..., object], *args: object) -> object:
    try:
        return attempt(*args)
    except OSError as error:
        return _error(error.errno or 0)


def _raised() -> OSError:
    number = ctypes.get_errno()
    return OSError(number, os.strerror(number))


def _setcap(path: str) -> str:
    """A file capability (cap_setuid, permitted and effective, v2) set on a script."""
    with open(path, "w") as f:
        f.write("#!/bin/sh\nid\n")
    blob = (0x02000001).to_bytes(4, "little") + (1 << 7).to_bytes(4, "little") + bytes(12)
    os.setxattr(path, "security.capability", blob)
    return os.getxattr(path, "security.capability").hex()


def _whiteout(folder: str) -> str:
    """renameat2(RENAME_WHITEOUT): the mode of what it leaves where the file was."""
    source, target = os.path.join(folder, "w1"), os.path.join(folder, "w2")
    with open(source, "w"):
        pass
    names = (AT_FDCWD, source.encode(), AT_FDCWD, target.encode(), RENAME_WHITEOUT)
    if LIBC.syscall(RENAMEAT2, *names) != 0:
        raise _raised()
    return oct(os.lstat(source).st_mode)


def _setuid_link(folder: str) -> str:
    for name in ("su", "passwd", "mount", "chsh", "newgrp", "gpasswd"):
        program = f"/usr/bin/{name}"
        if os.path.exists(program) and os.stat(program).st_mode & stat.S_ISUID:
            os.link(program, os.path.join(folder, "linked"))
            return oct(os.stat(os.path.join(folder, "linked")).st_mode)
    return "no setuid program"


def _setgid_folder(folder: str) -> str:
    path = os.path.join(folder, "sgid")
    os.mkdir(path, 0o2777)
    return oct(os.stat(path).st_mode)


def rewrite(path: str) -> dict[str, object]:
    """The file at `path` (set-id, made before the run) written through a shared
    mapping, not write(2): its mode before and after."""
    before = oct(os.stat(path).st_mode)
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, 0) as mapped:
            mapped[:8] = b"injected"
            mapped.flush()
    finally:
        os.close(fd)
    return {"before": before, "after": oct(os.stat(path).st_mode)}


def _capabilities() -> str:
    with open("/proc/self/status") as f:
        return next(line.split()[1] for line in f if line.startswith("CapEff:"))


def probe(folder: str) -> dict[str, object]:
    return {
        "uid": os.getuid(),
        "caps": _capabilities(),
        "setcap": _tried(_setcap, os.path.join(folder, "capped")),
        "whiteout": _tried(_whiteout, folder),
        "setuid_link": _tried(_setuid_link, folder),
        "setgid_folder": _tried(_setgid_folder, folder),
    }


def _pty() -> int:
    return os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)


def _aio(events: int) -> int:
    """An AIO context of `events` (io_setup), kept open: its id."""
    context = ctypes.c_ulong(0)
    if LIBC.syscall(IO_SETUP, events, ctypes.byref(context)) != 0:
        raise _raised()
    return context.value


def _key(index: int) -> int:
    """A user key of 1,000 bytes in the process keyring (gone with the process): its serial."""
    payload = b"k" * 1000
    name = f"attack52-{os.getpid()}-{index}".encode()
    made = LIBC.syscall(ADD_KEY, b"user", name, payload, len(payload), KEY_SPEC_PROCESS_KEYRING)
    if made < 0:
        raise _raised()
    return int(made)


def _take_ptys() -> tuple[int, str]:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held: list[int] = []  # never closed: held until the process ends
    while len(held) < 100_000:
        try:
            held.append(_pty())
        except OSError as refused:
            return len(held), _error(refused.errno or 0)
    return len(held), "none"


def _take_aio() -> tuple[int, str]:
    taken, events, error = 0, 1 << 16, "none"
    while events >= 1:
        try:
            _aio(events)
            taken += events
        except OSError as refused:
            error = _error(refused.errno or 0)
            events //= 2
    return taken, error


def _take_keys() -> tuple[int, str]:
    for index in range(10_000):
        try:
            _key(index)
        except OSError as refused:
            return index, _error(refused.errno or 0)
    return 10_000, "none"


def _shm(size: int) -> int:
    """A System V shared memory segment of `size` bytes, every page of it written, then
    detached: its id (it stays, in no process's memory, until its IPC namespace ends)."""
    segment = LIBC.syscall(SHMGET, 0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT
    if segment < 0:
        raise _raised()
    address = LIBC.syscall(SHMAT, segment, None, 0)
    if address in (-1, None):
        raise _raised()
    ctypes.memset(address, 1, size)
    LIBC.syscall(SHMDT, ctypes.c_void_p(address))
    return int(segment)


def _queue() -> int:
    queue = LIBC.syscall(MSGGET, 0, 0o1600)
    if queue < 0:
        raise _raised()
    return int(queue)


def _filled(queue: int) -> int:
    """Messages of 8 KiB sent to `queue` until it is full: the bytes it holds."""
    message = ctypes.create_string_buffer(8 + 8192)
    message[0] = 1  # its type
    sent = 0
    while LIBC.syscall(MSGSND, queue, message, 8192, 0o4000) == 0:  # IPC_NOWAIT
        sent += 8192
    return sent


def _queues() -> int:
    """Message queues filled until the next is refused: the bytes they hold."""
    held = 0
    for _ in range(100_000):
        try:
            held += _filled(_queue())
        except OSError:
            break
    return held


def _semaphores(sets: int) -> int:
    """`sets` sets of 32,000 semaphores each: how many sets were made."""
    for _ in range(sets):
        if LIBC.syscall(SEMGET, 0, 32000, 0o1600) < 0:
            raise _raised()
    return sets


def _memfd(size: int) -> int:
    """A memfd of `size` bytes, written, held open: its descriptor."""
    fd = os.memfd_create("held")
    block = b"m" * (1 << 20)
    for _ in range(size >> 20):
        os.write(fd, block)
    return fd


def _available() -> int:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))


def _rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:"))


HELD = {
    "shm": lambda: _shm(3 << 30),
    "msg": _queues,
    "sem": lambda: _semaphores(128),
    "memfd": lambda: _memfd(1 << 30) and "ok",
}


def memory(kinds: str) -> dict[str, object]:
    """Memory held past the run's tmpfs caps and outside its processes' RSS, each of
    KINDS (`+` between them): a SysV segment of 3 GiB, written and detached (`shm`: its
    id), message queues filled until refused (`msg`: their bytes), 128 sets of 32,000
    semaphores (`sem`), a memfd of 1 GiB written and held open (`memfd`); the host's
    MemAvailable before less after (the sandbox reads the host's /proc/meminfo), and the
    agent's RSS."""
    before = _available()
    seen: dict[str, object] = {kind: _tried(HELD[kind]) for kind in kinds.split("+")}
    seen["taken"] = before - _available()
    seen["rss"] = _rss()
    return seen


TAKE: dict[str, tuple[Callable[[], tuple[int, str]], Callable[[], int]]] = {
    "pty": (_take_ptys, _pty),
    "aio": (_take_aio, lambda: _aio(1)),
    "keys": (_take_keys, lambda: _key(-1)),
}


def _fill(client: socket.socket) -> int:
    """Bytes sent on the non-blocking `client` until its buffers are full."""
    queued = 0
    block = b"t" * (1 << 16)
    while True:
        try:
            queued += client.send(block)
        except BlockingIOError:
            return queued


def tcp(spec: str) -> dict[str, object]:
    """Loopback TCP connections in the run's network namespace, each sent to until its
    buffers are full (the other end reading nothing), until MEGABYTES are queued; held
    SECONDS: the bytes queued and the connections."""
    megabytes, seconds = (int(x) for x in spec.split(","))
    server = socket.create_server(("127.0.0.1", 0), backlog=1024)
    held, queued = [], 0
    while queued < megabytes << 20 and len(held) < 4000:
        client = socket.create_connection(server.getsockname())
        held += [client, server.accept()[0]]
        client.setblocking(False)
        queued += _fill(client)
        time.sleep(0.01)
        queued += _fill(client)
    time.sleep(seconds)
    return {"queued": queued, "connections": len(held) // 2}


def _waited(path: str, seconds: float) -> bool:
    for _ in range(int(seconds * 20)):
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def _one(kind: str) -> object:
    return _tried(lambda: (TAKE[kind][1](), "ok")[1])


def hold(spec: str) -> dict[str, object]:
    folder, seconds, kinds = spec.split(",")
    full, tried = os.path.join(folder, "full"), os.path.join(folder, "tried")
    if os.environ["PASSHAT_RUN_INDEX"] != "1":
        if not _waited(full, float(seconds)):
            return {"waited": "no full"}
        got = {kind: _one(kind) for kind in kinds.split("+")}
        with open(tried, "w"):
            pass
        return {"got": got}
    took = {kind: TAKE[kind][0]() for kind in kinds.split("+")}
    with open(full, "w"):
        pass
    _waited(tried, float(seconds))
    return {"took": took}


def main() -> None:
    seen: dict[str, object] = {}
    if "ATTACK52_PROBE" in os.environ:
        seen["probe"] = probe(os.environ["ATTACK52_PROBE"])
    if "ATTACK52_MEMORY" in os.environ:
        seen["memory"] = memory(os.environ["ATTACK52_MEMORY"])
    if "ATTACK52_TCP" in os.environ:
        seen["tcp"] = tcp(os.environ["ATTACK52_TCP"])
    if "ATTACK52_REWRITE" in os.environ:
        seen["rewrite"] = _tried(rewrite, os.environ["ATTACK52_REWRITE"])
    if "ATTACK52_HOLD" in os.environ:
        seen["hold"] = hold(os.environ["ATTACK52_HOLD"])
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
