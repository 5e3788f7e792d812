"""A command agent for round 15's outside attack (tests/test_attack53_*.py).

    python tests/attack53_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK53_READ   PATH[,PATH...]: opens each path by its name (a store in a folder
                    passhat's user may pass through but not list): its first 16 bytes
                    (hex), or the error's name
    ATTACK53_CHMOD  PATH[,PATH...]: makes each path its owner's to read (chmod 0700)
                    first, then reads it as ATTACK53_READ does (a file or folder of
                    passhat's user, closed to that user, in a `write:` folder); a folder
                    is listed, its files read
    ATTACK53_PLANT  FOLDER (a `write:` folder): leaves FOLDER/d/.env, then makes FOLDER/d
                    mode 0600 (listed, not passed through), unless it is there already:
                    "planted", or "there" and what `ls` of FOLDER says
    ATTACK53_NAMES  FOLDER (a `write:` folder): leaves there, unless they are there
                    already, secret-named files under names with a newline, a tab and
                    bytes that are no UTF-8 (a folder so named holding a `.env`, a
                    `.env` so suffixed, a FIFO named `.env` and a socket named
                    `.netrc`): "left", or "there" and what it finds of them
    ATTACK53_CLOCK  (any value): sets the machine's clock (CLOCK_REALTIME) to the time it
                    just read (a step of microseconds where it is let), and makes a time
                    namespace of its own (unshare CLONE_NEWTIME): "ok" or the errno's name
    ATTACK53_MANY   FOLDER,N (a `write:` folder): leaves N folders there, each holding a
                    `.env`, unless they are there already: "left", or "there" and how
                    many it lists
    ATTACK53_LATE   TOOL,ARGUMENTS: sends one `tools/call` of TOOL with ARGUMENTS (JSON)
                    to the run's MCP endpoint and exits 0.3 s later without reading the
                    answer: a call still running when the agent has gone
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys
import time
import urllib.parse


def read(path: str) -> str:
    """The first 16 bytes of `path` as hex, or the error's name."""
    try:
        with open(path, "rb") as file:
            return file.read(16).hex()
    except OSError as error:
        return type(error).__name__


def opened(path: str) -> dict[str, str]:
    """`path` made its owner's to read, then read: a file's head, or a folder's files'."""
    try:
        os.chmod(path, 0o700)
    except OSError as error:
        return {path: "chmod: " + type(error).__name__}
    if not stat.S_ISDIR(os.stat(path).st_mode):
        return {path: read(path)}
    try:
        names = sorted(os.listdir(path))
    except OSError as error:
        return {path: "listdir: " + type(error).__name__}
    return {os.path.join(path, name): read(os.path.join(path, name)) for name in names}


def plant(folder: str) -> object:
    """FOLDER/d/.env left in a folder of mode 0600, or what this run finds of it."""
    planted = os.path.join(folder, "d")
    if os.path.lexists(planted):
        return ["there", sorted(os.listdir(folder))]
    os.mkdir(planted)
    with open(os.path.join(planted, ".env"), "w") as file:
        file.write("NOT_A_KEY=1\n")
    os.chmod(planted, 0o600)
    return "planted"


ODD = b"\xff\n\tx"
"""A name's bytes that are no UTF-8, with a newline and a tab."""


def names(folder: str) -> object:
    """Secret-named files under odd names left in FOLDER, or what this run finds of them."""
    base = os.fsencode(folder)
    odd = os.path.join(base, ODD)
    if os.path.lexists(odd):
        return ["there", sorted(os.fsdecode(n) for n in os.listdir(odd)), read(odd + b"/.env")]
    os.mkdir(odd)
    for path in (os.path.join(odd, b".env"), os.path.join(base, b".env" + ODD)):
        with open(path, "w") as file:
            file.write("NOT_A_KEY=1\n")
    os.mkfifo(os.path.join(base, b".env"))
    server = socket.socket(socket.AF_UNIX)
    server.bind(os.path.join(base, b".netrc"))
    return "left"


def clock() -> dict[str, str]:
    """The clock set to now, a time namespace made: "ok" or the errno's name for each."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    class Timespec(ctypes.Structure):
        _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]

    def said(result: int) -> str:
        return "ok" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")

    now = time.time_ns()
    spec = Timespec(now // 1_000_000_000, now % 1_000_000_000)
    return {
        "settime": said(libc.clock_settime(0, ctypes.byref(spec))),  # CLOCK_REALTIME
        "unshare_time": said(libc.unshare(0x80)),  # CLONE_NEWTIME
    }


def many(folder: str, count: int) -> object:
    """`count` folders of a `.env` each left in FOLDER, or how many this run lists."""
    if os.listdir(folder):
        return ["there", len(os.listdir(folder))]
    for index in range(count):
        os.mkdir(os.path.join(folder, f"d{index}"))
        with open(os.path.join(folder, f"d{index}", ".env"), "w") as file:
            file.write("NOT_A_KEY=1\n")
    return "left"


def _mcp_request(method: str, params: dict[str, object], close: bool) -> socket.socket:
    """A JSON-RPC request to the run's MCP endpoint, sent whole on a connection of its own."""
    url = urllib.parse.urlparse(os.environ["PASSHAT_MCP_URL"])
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    head = (
        f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\n"
        f"Authorization: Bearer {os.environ['PASSHAT_MCP_TOKEN']}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        + ("Connection: close\r\n" if close else "")
        + f"Content-Length: {len(body)}\r\n\r\n"
    )
    connection = socket.create_connection((url.hostname or "127.0.0.1", url.port or 80))
    connection.sendall(head.encode() + body.encode())
    return connection


def late(tool: str, arguments: str) -> str:
    """One tools/call sent whole, its answer never read: what was sent. A tools/list is
    asked and answered first, as an MCP client starts: passhat's MCP server is up (it
    imports the SDK from a run's first request on, serve/lazy_mcp.py) when the call comes."""
    with _mcp_request("tools/list", {}, close=True) as listing:
        while listing.recv(65536):  # the whole answer, to the server's close
            pass
    call = {"name": tool, "arguments": json.loads(arguments)}
    with _mcp_request("tools/call", call, close=False):  # open until the agent exits
        time.sleep(0.3)  # passhat has read it and started the tool
    return "sent"


def main() -> None:
    said: dict[str, object] = {}
    if "ATTACK53_READ" in os.environ:
        said["read"] = {p: read(p) for p in os.environ["ATTACK53_READ"].split(",")}
    if "ATTACK53_CHMOD" in os.environ:
        said["chmod"] = {}
        for path in os.environ["ATTACK53_CHMOD"].split(","):
            said["chmod"].update(opened(path))  # type: ignore[attr-defined]
    if "ATTACK53_PLANT" in os.environ:
        said["plant"] = plant(os.environ["ATTACK53_PLANT"])
    if "ATTACK53_NAMES" in os.environ:
        said["names"] = names(os.environ["ATTACK53_NAMES"])
    if "ATTACK53_CLOCK" in os.environ:
        said["clock"] = clock()
    if "ATTACK53_MANY" in os.environ:
        folder, count = os.environ["ATTACK53_MANY"].split(",")
        said["many"] = many(folder, int(count))
    if "ATTACK53_LATE" in os.environ:
        tool, arguments = os.environ["ATTACK53_LATE"].split(",", 1)
        said["late"] = late(tool, arguments)
    json.dump(said, sys.stdout)


main()
