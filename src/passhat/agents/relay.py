"""The relay: how a run inside its sandbox reaches its own endpoints when passhat cannot
listen in the run's network namespace (an unprivileged passhat).

The agent's parent in the sandbox listens on the sandbox's 127.0.0.1 at each endpoint's
port and forwards every connection over the run's Unix socket (sandbox.SOCKET_DIR) to
passhat: socat where the system has it, else a standard-library Python program
(`RELAY`). Either sets the run's process cap first (sandbox.process_cap), then starts
the agent and ends as it does."""

from __future__ import annotations

import functools
import os
import shutil

from passhat.agents.sandbox import CAP, SOCKET_DIR, SYSTEM, View, _present, process_cap, under


@functools.cache
def relay_python() -> str | None:
    """A Python inside the system's folders that runs the relay (None: there is none)."""
    for candidate in ("/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3"):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def relay_argv(view: View) -> list[str]:
    """The relay's command inside the sandbox; the agent's argv follows it. socat where
    the system has it (as Anthropic's sandbox runtime bridges its sockets: a few ms of
    CPU a run), else the Python relay below (the same forwarding, 10-20 ms to start).
    Both set the run's process cap first (process_cap says why)."""
    socat = relay_socat()
    if socat is not None:
        return socat_argv(view, socat)
    python = relay_python()
    if python is None:  # isolation.unavailable refuses the level first
        raise RuntimeError("no socat and no system Python to relay a sandboxed run's endpoints")
    pairs = [f"{port}={SOCKET_DIR}/{i}.sock" for i, (port, _) in enumerate(view.relays)]
    return [*process_cap(), python, "-I", "-S", "-c", RELAY, *pairs, "--"]


@functools.cache
def relay_socat() -> str | None:
    """socat in the system's folders (what the sandbox sees), or None."""
    found = shutil.which("socat", path="/usr/bin:/bin:/usr/local/bin")
    return found if found is not None and under(found, _present(SYSTEM)) else None


def socat_argv(view: View, socat: str) -> list[str]:
    """`sh -c SCRIPT sh AGENT...`: the run's process cap (process_cap's), a socat per
    endpoint listening on the sandbox's 127.0.0.1, a wait (shell builtins only, reading
    /proc/net/tcp) until every one listens, then the agent exec'd in the shell's place:
    the agent is the sandbox's first process, and the socats end with its PID namespace
    when it exits."""
    lines = [CAP, "exec 3>&2 2>/dev/null"]  # socat's complaints are not the agent's stderr
    for index, (port, _) in enumerate(view.relays):
        target = f"{SOCKET_DIR}/{index}.sock"
        # socat's own backlog is 5: past it the kernel drops the SYN and the agent's
        # connect waits a 1 s retransmit (100 connections at once took 16 s)
        # nodelay: else an answer passhat writes in two parts waits 40 ms for the ACK
        listen = f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,backlog=128,nodelay"
        lines.append(f"{socat} {listen} UNIX-CONNECT:{target} &")
    wanted = "|".join(f"*:{port:04X}:0A" for port, _ in view.relays) or "none"
    lines += [
        "ready() {",
        "  n=0",
        "  while read -r _ local _ st _; do",
        f'    case "$local:$st" in {wanted}) n=$((n+1));; esac',
        "  done < /proc/net/tcp",
        f'  [ "$n" -ge {len(view.relays)} ]',
        "}",
        "tries=0",
        "until ready; do tries=$((tries+1)); [ $tries -gt 20000 ] && break; done",
        "exec 2>&3 3>&-",
        'exec "$@"',
    ]
    return ["/bin/sh", "-c", "\n".join(lines), "sh"]


RELAY = r"""
import os, socket, sys, threading
def pump(a, b, pair):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    with pair[0]:
        pair[1] -= 1
        if pair[1] == 0:
            a.close()
            b.close()
def serve(listener, path):
    while True:
        conn, _ = listener.accept()
        up = socket.socket(socket.AF_UNIX)
        try:
            up.connect(path)
        except OSError:
            conn.close()
            up.close()
            continue
        pair = [threading.Lock(), 2]
        threading.Thread(target=pump, args=(conn, up, pair), daemon=True).start()
        threading.Thread(target=pump, args=(up, conn, pair), daemon=True).start()
args = sys.argv[1:]
cut = args.index("--")
for item in args[:cut]:
    port, _, path = item.partition("=")
    listener = socket.socket()
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # its connections' too
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(128)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
argv = args[cut + 1:]
try:
    pid = os.posix_spawnp(argv[0], argv, os.environ)
except OSError as error:
    sys.stderr.write("cannot start %r in the run's sandbox: %s (a folder the run does "
                     "not see? add it with --agent-read PATH or the agent's read: [PATH])\n"
                     % (argv[0], error.strerror))
    sys.stderr.flush()
    os._exit(127)
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
if code < 0:
    import signal
    try:
        signal.signal(-code, signal.SIG_DFL)
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), -code)
os._exit(code)
"""
"""Runs inside the sandbox as the agent's parent: listens on 127.0.0.1 at each given
port and forwards to the run's Unix socket, starts the agent, and exits as it did.
Standard library only, started with -I -S: nothing of the agent's folder is imported."""
