"""A local cluster's processes start without passhat's secrets in their environment.

Each worker of the LocalCluster passhat starts is a process its nanny spawns (the
multiprocessing `spawn` method: an exec of Python), and it was exec'd with passhat's
environment, the provider's key in it: readable in /proc/<pid>/environ by any process of
passhat's user until passhat's plugin made it not dumpable (ShipmentPlugin.setup), a
second or so after its exec. An agent at --isolation process killed its worker (a
signal: not dumpable does not stop one), and a daemon it left read the key in the worker
the nanny started in its place (tests/test_attack55_dask.py).

So while passhat's cluster lives, multiprocessing spawns every process (the nanny's
workers, its resource tracker) with passhat's environment less the variables `withheld`
names (every name that looks like a secret, and the model's key variable), by
`os.posix_spawn` with that environment: no process in between ever holds them (an `env
-i` in between was exec'd with them). Their values reach each worker over the cluster's
own TLS (tls.py), in a worker plugin (`Keys`) that seals the worker (not dumpable) and
only then sets them in its `os.environ`, which a process's /proc/<pid>/environ never
shows: that is the block it was exec'd with. A worker that joins later, one restarted,
gets the plugin as it registers, before any task.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

SECRET = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|PASSWD|AUTH|COOKIE|SESSION|DSN"
    r"|.PWD$|_PAT$|(DATABASE|DB|REDIS|MONGO|AMQP|BROKER)_UR[LI]",
    re.IGNORECASE,
)
"""Names of variables held back from the cluster's processes' exec (and handed over): a
name held back needlessly costs nothing (its value comes with the others), so the net is
wide: MYSQL_PWD, GH_PAT, SENTRY_DSN and DATABASE_URL too (a URL may carry a password)."""


def withheld(environ: Mapping[str, str], also: Collection[str] = ()) -> list[str]:
    """The variables of `environ` no process of the cluster is exec'd with: those named
    like a secret, and `also` (the model's key variable, whatever its name). Dask's own
    configuration (`DASK_*`) is kept: a worker reads it as it starts, before any plugin."""
    named = (n for n in environ if SECRET.search(n) and not n.startswith("DASK_"))
    return sorted({*named, *(n for n in also if n in environ)})


def spawner(environ: Mapping[str, str]) -> Any:
    """multiprocessing.util.spawnv_passfds's stand-in: `path` exec'd with `args` and the
    environment `environ`, the descriptors `passfds` left open in it (and only them of
    passhat's descriptors not already inheritable, which PEP 446 makes few)."""

    def spawn(path: bytes | str, args: Sequence[Any], passfds: Sequence[int]) -> int:
        made = [fd for fd in passfds if not os.get_inheritable(fd)]
        for fd in made:
            os.set_inheritable(fd, True)
        try:
            closing = [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited(passfds)]
            return os.posix_spawn(path, list(args), dict(environ), file_actions=closing)
        finally:
            for fd in made:
                os.set_inheritable(fd, False)

    return spawn


def _inherited(passfds: Collection[int]) -> list[int]:
    """passhat's inheritable descriptors past stderr but `passfds`: what multiprocessing's
    own spawn closes in the child (close_fds), and an exec would otherwise pass on (a
    make jobserver's pipes, what a caller of passhat left inheritable)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    kept = {0, 1, 2, *passfds}
    out = []
    for fd in fds:
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            if fd not in kept and os.get_inheritable(fd):
                out.append(fd)
    return out


_HELD: list[frozenset[str]] = []
"""The names each live `spawning_without` holds back: one patch serves them all."""
_ORIGINAL: list[Any] = []
_LOCK = threading.Lock()
"""Held while _HELD and _ORIGINAL change (two clusters may start and end on two threads:
the last's pop must find what the first put there)."""


def _spawn(path: bytes | str, args: Sequence[Any], passfds: Sequence[int]) -> int:
    with _LOCK:
        held = frozenset().union(*_HELD)
    environ = {k: v for k, v in os.environ.items() if k not in held}
    pid: int = spawner(environ)(path, args, passfds)
    return pid


@contextlib.contextmanager
def spawning_without(names: Collection[str]) -> Iterator[None]:
    """While it lasts, multiprocessing spawns with passhat's environment less `names` (less
    every live one's names, when two clusters overlap: multiprocessing's spawn is patched
    once, by the first, and given back by the last, whatever order they end in)."""
    from multiprocessing import util

    mine = frozenset(names)
    with _LOCK:
        if not _HELD:
            _ORIGINAL[:] = [util.spawnv_passfds]
            util.spawnv_passfds = _spawn
        _HELD.append(mine)
    try:
        yield
    finally:
        with _LOCK:
            _HELD.remove(mine)
            if not _HELD:
                util.spawnv_passfds = _ORIGINAL.pop()


class Keys(WorkerPlugin):
    """The variables held back from a local cluster's workers' exec, handed over: the
    worker sealed first (not dumpable), then they are set in its os.environ."""

    idempotent = True
    name = "passhat-keys"

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)

    def __repr__(self) -> str:  # never the values
        return f"Keys({sorted(self.values)})"

    def setup(self, worker: Any) -> None:
        from passhat.agents.isolation import seal_this_process

        seal_this_process()
        os.environ.update(self.values)
