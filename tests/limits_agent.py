"""A command agent that takes what it can of the machine, to see where its run's limits hold.

    python tests/limits_agent.py

Standard library only. Each grab is tried and reported, never raised: the agent prints
one JSON object. From the environment:

    LIMITS_FORKS        processes to fork (each sleeps until the agent ends them)
    LIMITS_SHM_BYTES    bytes to write to /dev/shm (then removed)
    LIMITS_CONNECTIONS  connections to open to the run's MCP endpoint and hold
    LIMITS_BURST        how many of the first of them must each connect within 0.5 s (the
                        run's cap: the count of those held is taken once it is down to it)
    LIMITS_NEIGHBOUR    a folder two runs share: the first forks to its cap and holds,
                        the second then forks NEIGHBOUR_FORKS (it reports just that)

It reports how many forks were made and the error that stopped them, the sizes of
its work folder (its cwd), /tmp and /dev/shm, whether its input.json is there, whether the write to /dev/shm went through, its oom_score_adj,
how many of a first burst of connections it could open at once (each within half a
second), how many of all of them passhat still held open a moment after they were made,
the tmpfs mounts without a size it could write a file in (memory past every cap),
and the command lines of every process it can see in /proc (bwrap's own among them).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import time
import urllib.parse


def forks(wanted: int) -> tuple[int, str | None]:
    children: list[int] = []
    error = None
    try:
        for _ in range(wanted):
            try:
                pid = os.fork()
            except OSError as e:
                error = errno.errorcode.get(e.errno or 0, str(e))
                break
            if pid == 0:  # the child sleeps until it is ended
                signal.pause()
                os._exit(0)
            children.append(pid)
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        for pid in children:
            os.waitpid(pid, 0)
    return len(children), error


def size(path: str) -> int:
    found = os.statvfs(path)
    return found.f_blocks * found.f_frsize


def fill(path: str, wanted: int) -> str:
    chunk = b"x" * (1 << 20)
    try:
        with open(path, "wb") as out:
            for _ in range(0, wanted, len(chunk)):
                out.write(chunk)
            out.flush()
        return "written"
    except OSError as e:
        return errno.errorcode.get(e.errno or 0, str(e))
    finally:
        if os.path.exists(path):
            os.remove(path)


CONNECT_S = 0.5
"""A connect to a listener with room in its backlog is made by the kernel at once; past
a full backlog the SYN is dropped and retried after 1 s: such a connect times out."""


def held(wanted: int, burst: int) -> tuple[int, int]:
    """(of the first `burst` connections, those made at once; connections passhat still
    held a moment after all `wanted` were made)."""
    url = urllib.parse.urlsplit(os.environ["PASSHAT_MCP_URL"])
    socks = []
    at_once = 0
    for number in range(wanted):
        timeout = CONNECT_S if number < burst else 5.0
        try:
            socks.append(socket.create_connection((url.hostname, url.port), timeout=timeout))
        except OSError:
            if number >= burst:
                break
            continue
        at_once += number < burst
    # passhat closes the connections past its cap as they come: a second for the closes
    # to arrive, or less once no more than `burst` (the test's cap) are open
    until = time.monotonic() + 1.0
    while (alive := open_of(socks)) > burst and time.monotonic() < until:
        time.sleep(0.02)
    for sock in socks:
        sock.close()
    return at_once, alive


def open_of(socks: list[socket.socket]) -> int:
    """How many of `socks` the other end still holds open."""
    alive = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            alive += sock.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            alive += 1  # open, nothing said: held
        except OSError:
            pass  # reset
    return alive


def unsized_writable() -> list[str]:
    """The tmpfs mounts with no size= that took a file from this agent."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            cut = fields.index("-")
            point, kind, options = fields[4], fields[cut + 1], fields[cut + 3]
            if kind != "tmpfs" or "size=" in options:
                continue
            path = os.path.join(point, f"limits-{os.getpid()}")
            try:
                with open(path, "wb") as out:
                    out.write(b"x")
            except OSError:
                continue
            os.remove(path)
            found.append(point)
    return found


def command_lines() -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return found


NEIGHBOUR_FORKS = 20


def wait_for(path: str) -> bool:
    for _ in range(1200):
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def neighbour(shared: str) -> dict[str, object]:
    """Run 1 holds as many processes as it may; run 2, beside it, forks a few."""
    holding, done = os.path.join(shared, "holding"), os.path.join(shared, "done")
    if os.environ["PASSHAT_RUN_INDEX"] == "1":
        children = []
        while True:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                signal.pause()
                os._exit(0)
            children.append(pid)
        with open(holding, "w") as flag:
            flag.write(str(len(children)))
        wait_for(done)
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return {"held": len(children)}
    wait_for(holding)
    made, error = forks(NEIGHBOUR_FORKS)
    with open(done, "w") as flag:
        flag.write("done")
    return {"forks": made, "fork_error": error}


def main() -> None:
    if os.environ.get("LIMITS_NEIGHBOUR"):
        print(json.dumps(neighbour(os.environ["LIMITS_NEIGHBOUR"])))
        return
    seen: dict[str, object] = {}
    seen["forks"], seen["fork_error"] = forks(int(os.environ.get("LIMITS_FORKS", "0")))
    seen["tmp_bytes"] = size("/tmp")
    seen["work_bytes"] = size(os.getcwd())
    seen["input_read"] = os.path.exists(os.environ["PASSHAT_INPUT"])
    seen["shm_bytes"] = size("/dev/shm")
    wanted = int(os.environ.get("LIMITS_SHM_BYTES", "0"))
    seen["shm_fill"] = fill(f"/dev/shm/limits-{os.getpid()}", wanted) if wanted else None
    with open("/proc/self/oom_score_adj", encoding="ascii") as adj:
        seen["oom_score_adj"] = int(adj.read())
    flood = int(os.environ.get("LIMITS_CONNECTIONS", "0"))
    seen["at_once"], seen["held"] = held(flood, int(os.environ.get("LIMITS_BURST", "0")))
    seen["unsized"] = unsized_writable()
    seen["command_lines"] = command_lines()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
