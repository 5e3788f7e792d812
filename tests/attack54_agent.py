"""A command agent for round 16's outside attack (tests/test_attack54_*.py).

    python tests/attack54_agent.py

Standard library only. What it tries comes from its environment:

    ATTACK54_HANG   FOLDER (a `write:` folder): unless FOLDER/hung is there (it makes it
                    first, so no other run of the experiment hangs), it leaves a
                    child stopped by SIGSTOP, a child stopped under ptrace (PTRACE_TRACEME,
                    then SIGSTOP, never waited for), and then waits itself for a vfork
                    child that never execs (clone with CLONE_VFORK: the parent sleeps in
                    the kernel until the child execs or exits, and this one sleeps); the
                    vfork child writes FOLDER/states.json (each process's state letter from
                    /proc, the agent's own as it waits for it) and sleeps. Else it prints {}.
    ATTACK54_PORTS  FIRST-LAST: connects to every TCP port of 127.0.0.1 in that range and
                    prints the ones that answered (`{"ports": [...]}`), after ATTACK54_READ
    ATTACK54_READ   PATH[,PATH...]: reads each path: its first 16 bytes (hex), or the
                    error's name
    ATTACK54_HOLD   FOLDER,SECONDS (a folder it may write): unless FOLDER/held is there (it
                    makes it first, so no other run holds), opens connections to the port of
                    PASSHAT_MCP_URL until one fails (its own descriptors, or passhat's
                    listener gone), holds them SECONDS, and prints `{"held": N}`
    ATTACK54_WRITE  PATH[,PATH...]: opens each path to append (writing nothing): "ok" or
                    the error's name
    ATTACK54_GLOB   PATTERN: the paths that match it (glob, recursive), each read as
                    ATTACK54_READ reads
    ATTACK54_DASK   NAME: finds the TCP ports of 127.0.0.1 listened on by its own uid
                    (/proc/net/tcp), tries each that speaks first as a Dask scheduler (the `distributed`
                    client, 5 s), and on the one that answers runs a function in every
                    worker and in the scheduler that reads $NAME from their environment:
                    prints `{"dask": {"tried": N, "scheduler": bool, "found": [...]}}`,
                    each value found reversed (never the secret itself on stdout)
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import json
import os
import signal
import socket
import sys
import time
import urllib.parse

CLONE_VFORK = 0x4000
PTRACE_TRACEME = 0


def state(pid: int) -> str:
    """The state letter of `pid` (R, S, D, T, t, Z...), or the error's name."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as file:
            return file.read().rsplit(")", 1)[1].split()[0]
    except OSError as error:
        return type(error).__name__


def stopped_child(traced: bool) -> int:
    """A child that stops itself (under ptrace by its parent, which never waits for it)."""
    pid = os.fork()
    if pid == 0:
        if traced:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.ptrace(PTRACE_TRACEME, 0, None, None)
        os.kill(os.getpid(), signal.SIGSTOP)
        while True:
            time.sleep(3600)
    return pid


def hangs_first(folder: str, name: str = "hung") -> bool:
    """Whether this is the experiment's first run here to hang (it makes FOLDER/NAME)."""
    try:
        os.mkdir(os.path.join(folder, name))
    except FileExistsError:
        return False
    return True


def hang(folder: str) -> None:
    """Leave a stopped and a traced child, then wait in vfork for a child that never execs."""
    stopped, traced = stopped_child(False), stopped_child(True)
    time.sleep(0.3)  # both have stopped
    agent = os.getpid()
    libc = ctypes.CDLL(None, use_errno=True)

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
    def child(_: object) -> int:  # runs in a copy of this process's memory
        time.sleep(0.3)  # its parent is waiting for it in the kernel by now
        states = {"stopped": state(stopped), "traced": state(traced), "agent": state(agent)}
        with open(os.path.join(folder, "states.json"), "w", encoding="ascii") as file:
            json.dump(states, file)
        while True:
            time.sleep(3600)

    size = 1 << 20
    stack = ctypes.create_string_buffer(size)
    top = ctypes.c_void_p(ctypes.addressof(stack) + size)
    libc.clone(child, top, CLONE_VFORK | signal.SIGCHLD, None)
    while True:  # not reached while the child lives
        time.sleep(3600)


def read(path: str) -> str:
    try:
        with open(path, "rb") as file:
            return file.read(16).hex()
    except OSError as error:
        return type(error).__name__


def hold(seconds: float) -> int:
    """Connections to the run's MCP port, opened until one fails and held `seconds`."""
    url = urllib.parse.urlsplit(os.environ["PASSHAT_MCP_URL"])
    held = []
    with contextlib.suppress(OSError):
        while True:
            held.append(socket.create_connection((url.hostname, url.port), timeout=5))
    time.sleep(seconds)
    for sock in held:
        sock.close()
    return len(held)


def append(path: str) -> str:
    try:
        with open(path, "ab"):
            return "ok"
    except OSError as error:
        return type(error).__name__


def ports(first: int, last: int) -> list[int]:
    """The TCP ports of 127.0.0.1 in [first, last] that take a connection."""
    found = []
    for port in range(first, last + 1):
        with contextlib.suppress(OSError), socket.socket() as sock:
            sock.settimeout(0.5)
            sock.connect(("127.0.0.1", port))
            found.append(port)
    return found


def listening() -> list[int]:
    """The ports of 127.0.0.1 this uid listens on (TCP), as /proc/net/tcp shows them."""
    found = []
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            address, port = fields[1].split(":")
            if address == "0100007F" and fields[3] == "0A" and int(fields[7]) == os.getuid():
                found.append(int(port, 16))
    return found


def speaks_first(port: int) -> bool:
    """Whether the server at `port` speaks first, as Dask's comm does (its handshake): an
    HTTP server (the run's own endpoints) waits for the request, and so would the client."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        try:
            return bool(sock.recv(1))
        except OSError:
            return False


def environ_of(name: str) -> str:
    """$NAME of the process this runs in, reversed ("" where unset)."""
    return os.environ.get(name, "")[::-1]


def dask(name: str) -> dict[str, object]:
    """Run `environ_of(name)` in a Dask cluster's workers and scheduler, if one answers."""
    from distributed import Client

    ports = listening()
    said: dict[str, object] = {"tried": len(ports), "scheduler": False, "found": []}
    for port in filter(speaks_first, ports):
        try:
            client = Client(f"tcp://127.0.0.1:{port}", timeout=5, set_as_default=False)
        except Exception:  # not a scheduler
            continue
        with client:
            said["scheduler"] = True
            found = [*client.run(environ_of, name).values()]
            found.append(client.run_on_scheduler(environ_of, name))
            said["found"] = sorted(found)
        break
    return said


def main() -> None:
    said: dict[str, object] = {}
    folder = os.environ.get("ATTACK54_HANG")
    if folder is not None and hangs_first(folder):
        hang(folder)
    if "ATTACK54_HOLD" in os.environ:
        folder, seconds = os.environ["ATTACK54_HOLD"].split(",")
        if hangs_first(folder, "held"):
            said["held"] = hold(float(seconds))
    if "ATTACK54_READ" in os.environ:
        said["read"] = {p: read(p) for p in os.environ["ATTACK54_READ"].split(",")}
    if "ATTACK54_WRITE" in os.environ:
        said["write"] = {p: append(p) for p in os.environ["ATTACK54_WRITE"].split(",")}
    if "ATTACK54_GLOB" in os.environ:
        said["glob"] = {p: read(p) for p in glob.glob(os.environ["ATTACK54_GLOB"], recursive=True)}
    if "ATTACK54_PORTS" in os.environ:
        first, last = os.environ["ATTACK54_PORTS"].split("-")
        said["ports"] = ports(int(first), int(last))
    if "ATTACK54_DASK" in os.environ:
        said["dask"] = dask(os.environ["ATTACK54_DASK"])
    json.dump(said, sys.stdout)


main()
