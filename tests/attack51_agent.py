"""A command agent for round 13's outside attack (tests/test_attack51_*.py).

    python tests/attack51_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK_SETID   FOLDER (a `write:` folder): leaves files there made setuid and setgid
                   each way a process can (chmod, fchmod, open with O_CREAT, mknod), and
                   one made executable the ordinary way; each file's mode as the agent saw
                   it, or the error's name
    ATTACK_BORROW  FOLDER (a `write:` folder both runs of `-k 2 --concurrency 2` share):
                   run 1 leaves its token there and waits (up to 60 s) for run 2 to be
                   done; run 2 calls the tool `borrowed` over MCP with run 1's token at
                   its own endpoint: the HTTP status it got. With ATTACK_GONE set,
                   run 1 does not wait: run 2 (after it) uses a finished run's token
    ATTACK_SHM     FOLDER,NAME (a `write:` folder and a file in it): leaves an SQLite
                   file in WAL mode there (its WAL not checkpointed) whose `-shm` is a hard
                   link to NAME, for the look of a later run to open; what it made
    ATTACK_INOTIFY FOLDER,SECONDS (runs of `-k 2 --concurrency 2`): run 1 opens
                   inotify instances until refused, leaves FOLDER/full and holds them
                   until run 2 leaves FOLDER/tried (SECONDS at most); run 2 waits for
                   FOLDER/full and opens one: how many run 1 held, the error run 2 got
                   (or "ok")
    ATTACK_EPOLL   FOLDER,SECONDS: run 1 adds descriptors to epoll instances until
                   refused (each pair counts against its user's fs.epoll.max_user_watches),
                   leaves FOLDER/full and holds them SECONDS: how many it added and the
                   error that stopped it. Other runs wait (up to 120 s) for FOLDER/full
    ATTACK_MANY    FOLDER,N: run 1 leaves N empty files in FOLDER (a `write:` folder);
                   how many
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import sqlite3
import stat
import time
import urllib.error
import urllib.request


def _mode(path: str) -> str:
    return oct(os.stat(path).st_mode)


def _chmod(path: str) -> str:
    with open(path, "w") as f:
        f.write("#!/bin/sh\nid\n")
    os.chmod(path, 0o6755)
    return _mode(path)


def _fchmod(path: str) -> str:
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.fchmod(fd, 0o4755)
    finally:
        os.close(fd)
    return _mode(path)


def _created(path: str) -> str:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o6755))
    return _mode(path)


def _mknod(path: str) -> str:
    os.mknod(path, stat.S_IFREG | 0o2755)
    return _mode(path)


def _plain(path: str) -> str:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    os.chmod(path, 0o755)
    return _mode(path)


def setid(folder: str) -> dict[str, str]:
    tries = {"chmod": _chmod, "fchmod": _fchmod, "created": _created, "mknod": _mknod}
    seen = {}
    for name, attempt in {**tries, "plain": _plain}.items():
        try:
            seen[name] = attempt(os.path.join(folder, name))
        except OSError as error:
            seen[name] = type(error).__name__
    return seen


def _call(token: str) -> int | str:
    """The HTTP status of a `tools/call` of the tool `borrowed`, sent with `token`."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "borrowed", "arguments": {}}
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    url = os.environ["PASSHAT_MCP_URL"]
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:
        return type(error).__name__


def _waited(path: str, seconds: float = 60) -> bool:
    for _ in range(int(seconds * 10)):
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return False


def borrow(folder: str) -> object:
    token, done = os.path.join(folder, "token"), os.path.join(folder, "done")
    if os.environ["PASSHAT_RUN_INDEX"] == "1":
        with open(token + ".tmp", "w") as f:
            f.write(os.environ["PASSHAT_MCP_TOKEN"])
        os.rename(token + ".tmp", token)
        if os.environ.get("ATTACK_GONE"):  # ends at once: run 2 replays a finished run's token
            return {"waited": False}
        return {"waited": _waited(done)}
    if not _waited(token):
        return "no token"
    with open(token) as f:
        status = _call(f.read())
    with open(done, "w"):
        pass
    return status


def shm(spec: str) -> object:
    folder, name = spec.split(",")
    path = os.path.join(folder, "notes.db")
    if os.path.exists(path):
        return "there"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=wal")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE notes (text)")
    db.execute("INSERT INTO notes VALUES ('x')")
    db.commit()
    held = db  # not closed: its WAL stays, its pages not checkpointed into the file
    try:
        os.unlink(path + "-shm")
        os.link(os.path.join(folder, name), path + "-shm")
    except OSError as error:
        return type(error).__name__
    return {"wal": os.path.getsize(path + "-wal"), "held": held is not None}


def _inotify() -> int | str:
    """A new inotify instance's descriptor, or the error's name."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    return fd if fd >= 0 else str(os.strerror(ctypes.get_errno()))


def inotify(spec: str) -> object:
    folder, seconds = spec.split(",")
    full, tried = os.path.join(folder, "full"), os.path.join(folder, "tried")
    if os.environ["PASSHAT_RUN_INDEX"] != "1":
        _waited(full, 120)
        got = _inotify()
        with open(tried, "w"):
            pass
        return "ok" if isinstance(got, int) else got
    held = []
    while len(held) < 10_000 and isinstance(fd := _inotify(), int):
        held.append(fd)
    with open(full, "w"):
        pass
    deadline = time.monotonic() + float(seconds)
    while not os.path.exists(tried) and time.monotonic() < deadline:
        if isinstance(fd := _inotify(), int):  # one another process of the user freed
            held.append(fd)
        time.sleep(0.001)
    return len(held)


def epoll(spec: str) -> object:
    folder, seconds = spec.split(",")
    full = os.path.join(folder, "full")
    if os.environ["PASSHAT_RUN_INDEX"] != "1":
        return {"waited": _waited(full, 120)}
    read, _ = os.pipe()
    targets = [read, *(os.dup(read) for _ in range(2_999))]
    polls, added, stopped = [], 0, None
    try:
        while len(polls) < 5_000 and stopped is None:
            poll = select.epoll()
            polls.append(poll)
            for fd in targets:
                poll.register(fd, select.EPOLLIN)
                added += 1
    except OSError as error:
        stopped = os.strerror(error.errno or 0)
    with open(full, "w"):
        pass
    time.sleep(float(seconds))
    return {"added": added, "stopped": stopped}


def many(spec: str) -> int:
    folder, count = spec.split(",")
    if os.environ["PASSHAT_RUN_INDEX"] != "1":
        return 0
    for index in range(int(count)):
        with open(os.path.join(folder, f"f{index}"), "w"):
            pass
    return int(count)


ATTACKS = {
    "ATTACK_SETID": ("setid", setid),
    "ATTACK_BORROW": ("borrowed", borrow),
    "ATTACK_SHM": ("shm", shm),
    "ATTACK_INOTIFY": ("inotify", inotify),
    "ATTACK_EPOLL": ("epoll", epoll),
    "ATTACK_MANY": ("many", many),
}
"""Each attack: the variable that asks for it, the key of its result, the function."""


def main() -> None:
    result: dict[str, object] = {}
    for variable, (key, attack) in ATTACKS.items():
        if os.environ.get(variable):
            result[key] = attack(os.environ[variable])
    print(json.dumps(result), flush=True)
    os._exit(0)  # an SQLite connection left open stays so (ATTACK_SHM)


if __name__ == "__main__":
    main()
