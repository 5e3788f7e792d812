"""A command agent for round 14's outside attack (tests/test_attack52_*.py).

    python tests/attack52_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK52_PROBE  FOLDER (a `write:` folder): tries the system-call filter's edges there
                    (a file capability by setxattr, a whiteout by renameat2, a hard link
                    to a setuid program, a setgid folder by mkdir) and says who the run
                    is (its uid, its capabilities): each result, or the error's name
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
import os
import resource
import stat
import time
from collections.abc import Callable

LIBC = ctypes.CDLL(None, use_errno=True)
NUMBERS = {  # add_key, renameat2, io_setup
    "x86_64": (248, 316, 206),
    "aarch64": (217, 276, 0),
}
ADD_KEY, RENAMEAT2, IO_SETUP = NUMBERS.get(os.uname().machine, NUMBERS["aarch64"])
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


TAKE: dict[str, tuple[Callable[[], tuple[int, str]], Callable[[], int]]] = {
    "pty": (_take_ptys, _pty),
    "aio": (_take_aio, lambda: _aio(1)),
    "keys": (_take_keys, lambda: _key(-1)),
}


def _waited(path: str, seconds: float) -> bool:
    for _ in range(int(seconds * 20)):
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def _one(kind: str) -> object:
    return _tried(lambda: TAKE[kind][1]() and "ok")


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
    if "ATTACK52_HOLD" in os.environ:
        seen["hold"] = hold(os.environ["ATTACK52_HOLD"])
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
