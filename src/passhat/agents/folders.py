"""A command-agent run's folder on the host: made per run, removed with it, swept after a kill.

A run at level process gets `passhat-run-<pid>-<pid namespace>-<random>/` under the system's temporary
folder (0700): the agent's cwd, HOME and TMPDIR, holding input.json. A sandboxed run's
work folder is a tmpfs made in its sandbox, at a path of the same shape in the
sandbox's own /tmp (`sandbox_folder`); it has a host folder only where its endpoints
are relayed, holding the relay's Unix sockets (owned by the run's uid when a
root passhat gives it one). A host folder is removed off the event loop when the run
ends, by the watchdog when passhat is killed, and by the next passhat that starts when
both were.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from passhat._proc import pid_alive

FOLDER_PREFIX = "passhat-run-"
"""Run folders are named passhat-run-<pid>-<pid namespace>-<random>: the pid and PID
namespace (its inode) of the passhat that made them (`prefix`)."""


def prefix(pid: int | None = None) -> str:
    """The start of the names of the run folders made by the passhat of `pid` (this one by
    default) in this PID namespace: two passhats in two namespaces sharing /tmp (containers)
    may have one pid, and neither's watchdog or sweep may take the other's folders."""
    return f"{FOLDER_PREFIX}{os.getpid() if pid is None else pid}-{_namespace()}-"


@functools.cache
def _namespace() -> int:
    """The inode of this process's PID namespace; 0 where /proc does not say."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def make_folder(payload: bytes | None, uid: int | None) -> str:
    """A run's folder on the host (0700): at level process its work folder (the agent's
    cwd, HOME and TMPDIR) holding input.json (`payload`); for a sandboxed run whose
    endpoints are relayed (no payload) the folder the relay's Unix sockets are made in,
    owned by the run's uid where it has one (its work folder is a tmpfs made in its
    sandbox: sandbox_folder)."""
    sweep_folders()
    folder = tempfile.mkdtemp(prefix=prefix())
    made = [folder]
    if payload is not None:
        made.append(os.path.join(folder, "input.json"))
        fd = os.open(made[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    if uid is not None:  # the run's own uid owns its folder, and nobody else's
        for path in made:
            os.chown(path, uid, uid)
    return folder


SANDBOX_TMP = Path("/tmp")
"""A sandbox's own /tmp (a tmpfs of the run's: sandbox.base_argv), where its folder is."""


def sandbox_folder() -> Path:
    """A sandboxed run's work folder as its agent sees it: named like a host run folder,
    in the sandbox's own /tmp, a tmpfs made there (sandbox.bwrap_argv): nothing of the
    run is on the host's disk, and a kill -9 leaves nothing of it to remove."""
    return SANDBOX_TMP / f"{prefix()}{secrets.token_hex(4)}"


_SWEPT: set[int] = set()


def sweep_folders() -> None:
    """Remove the run folders a killed passhat left (their maker's pid is gone), once per
    process: a kill -9 that beat the watchdog leaves no case input behind for long. Only
    folders made in this PID namespace are judged: a pid of another means nothing here."""
    if os.getpid() in _SWEPT:
        return
    _SWEPT.add(os.getpid())
    base = Path(tempfile.gettempdir())
    namespace = _namespace()
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            pid = _maker(entry.name, namespace)
            if pid is not None and pid != os.getpid() and not pid_alive(pid) and _ours(entry):
                remove_tree(entry)


def _ours(entry: Path) -> bool:
    """A folder (or a link, which remove_tree unlinks) of this user's: another user's
    entry named like a run's folder in the shared /tmp is theirs to remove (only they may
    rename it there, so it cannot be swapped for a link between this check and the
    removal, whose chmods would follow it)."""
    try:
        made = entry.lstat()
    except OSError:
        return False
    kind = stat.S_ISDIR(made.st_mode) or stat.S_ISLNK(made.st_mode)
    return kind and made.st_uid == os.geteuid()


def remove_tree(folder: Path) -> None:
    """Remove a run's folder, also one its agent made unreadable or unwritable (chmod 000
    on a subfolder would otherwise keep it, the case's input with it, for good). A
    symlink in its place (one named like a run's folder in the shared /tmp) is removed,
    never followed: a root passhat would otherwise chmod the folders it points to."""
    if os.path.islink(folder):
        with contextlib.suppress(OSError):
            os.unlink(folder)
        return
    try:
        _remove_flat(folder)
        return
    except OSError:  # a subfolder, or what will not go: the walk below
        pass
    shutil.rmtree(folder, ignore_errors=True)
    if not os.path.lexists(folder):
        return
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o700)
    for root, dirs, _ in os.walk(folder):  # top-down: each folder opened before it is read
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)


def _remove_flat(folder: Path) -> None:
    """Remove a folder that holds files only, as a run leaves its folder most often: a
    few calls where shutil.rmtree walks it. OSError for a subfolder (unlink refuses it)
    and for anything that will not go; the folder is opened without following a link."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for name in os.listdir(fd):
            os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(folder)


def _maker(name: str, namespace: int) -> int | None:
    """The pid of the passhat that made a run folder of this name in PID namespace
    `namespace`; None for any other name."""
    if not name.startswith(FOLDER_PREFIX):
        return None
    pid, _, rest = name[len(FOLDER_PREFIX) :].partition("-")
    made_in, dash, _ = rest.partition("-")
    if not pid.isdigit() or (dash and made_in.isdigit() and made_in != str(namespace)):
        return None
    # passhat-run-<pid>-<random> (mkdtemp's letters, no dash): an older passhat's folder,
    # judged by its pid as it was before names told the namespace
    return int(pid)


def closed_to_others(path: Path, bit: int) -> Path | None:
    """The folder on the way to `path` that other users cannot pass, or `path` itself
    when they lack `bit` (0o001 run, 0o004 read) on it; None when they reach it."""
    real = Path(os.path.realpath(path))
    for folder in reversed(real.parents):
        if not folder.stat().st_mode & 0o001:
            return folder
    return None if real.stat().st_mode & bit else real
