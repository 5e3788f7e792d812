"""The world one command-agent run is given: its file view and its network, made by bubblewrap.

At `--isolation namespace` every run starts through `bwrap` (bubblewrap, the tool
Flatpak and Anthropic's sandbox runtime build on) with every namespace unshared
(user, PID, mount, network, IPC, UTS, cgroup), a session of its own, and
`--die-with-parent`. What the process sees is made for the run, not inherited:

    the system, read-only     /usr /bin /sbin /lib* and /etc (minus /etc/shadow,
                              sudoers, ssh host keys, ssl private keys)
    its own program, r/o      the folder of each file the command names (for a
                              script under a Node project: the project's folder),
                              the program's virtualenv and its base Python,
                              PYTHONPATH / NODE_PATH entries of the agent's `env`
    its work folder           cwd, HOME and TMPDIR: a tmpfs (1 GiB) at a run folder's
                              path in its private /tmp (folders.sandbox_folder), holding
                              input.json, gone with the run; nothing of it on the host
    private /tmp, /dev/shm    empty tmpfs (1 GiB, 256 MiB), gone with the run
    /proc, /dev               its own PID namespace's; null, zero, urandom, tty (/dev
                              read-only: its tmpfs has no size); terminals (its own devpts)
    extra paths               only what the suite (`agent: {read: [...], write: [...]}`)
                              or the command line (--agent-read/--agent-write) names

Never in view, whatever uid passhat runs as: the suite's files, the store, HOME and
the rest of the checkout. Where a folder in view holds them (a store beside the agent,
an agent beside suite.yaml) they are covered: an empty read-only folder over a folder,
/dev/null over a file; beside suite.yaml the agent sees only the files its command
names. Secret-looking files (.env*, .git, .aws, .ssh, *.pem, ...) in its own folders
are covered too (a link among them where it leads, when that is inside its folder: a
cover never follows a link out of it), and a view is never widened to /tmp, HOME or a
folder holding the suite or the store.

The network namespace has a loopback of its own and nothing else. A root passhat
listens there itself before the agent starts (agents/netns.py). Otherwise a relay,
started before the agent inside the sandbox (socat where the system has it, as Anthropic's
sandbox runtime does; else relay.py's RELAY under a system Python), listens on
127.0.0.1 at the port the agent is told and forwards each connection to the run's
server over a Unix socket bound into the sandbox: the proxy and MCP endpoints are the
only things the agent reaches. Hosts the suite allows (`agent: {hosts: [name:port]}`)
are reached through an HTTP proxy that passhat serves per run (serve/egress.py) and
that refuses every other host; HTTPS_PROXY and HTTP_PROXY point to it. When the agent
exits, the PID namespace ends, and every process it left (the relay's too) dies with
it. Nested user namespaces are refused (--disable-userns) and / is read-only; a
system-call filter (agents/seccomp.py) keeps it from making a setuid or setgid file.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

from passhat.agents.answers import file_head as _head
from passhat.agents.protected import protect as protect  # (its registry's)
from passhat.agents.protected import protected as protected

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Folders of the system the agent sees read-only (those that exist here)."""
ETC_HIDDEN = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)
"""Parts of /etc no agent needs: credentials and host keys."""
SOCKET_DIR = "/run/passhat"
"""Where the run's Unix sockets appear inside the sandbox."""
NODE_MARKERS = ("package.json", "node_modules")
TMP_BYTES = 1 << 30
"""The size of a run's private /tmp (a tmpfs: memory): a run that fills it gets ENOSPC,
not the host's memory."""
SHM_BYTES = 256 << 20
"""The size of a run's private /dev/shm."""
WORK_BYTES = 1 << 30
"""The size of a sandboxed run's work folder (its cwd, HOME and TMPDIR): a tmpfs made in
the sandbox's /tmp (folders.sandbox_folder), holding input.json; nothing of it reaches
the host's disk, and it goes with the run."""


@dataclass(frozen=True)
class View:
    """What one run's agent process sees and reaches besides the system."""

    read: tuple[str, ...] = ()
    """Host folders and files bound read-only at the same path."""
    write: tuple[str, ...] = ()
    """Host folders bound writable at the same path (the run folder and what is named)."""
    hide: tuple[str, ...] = ()
    """Paths inside `read`/`write` that are covered (protected files and folders)."""
    relays: tuple[tuple[int, str], ...] = ()
    """(port on the sandbox's 127.0.0.1, Unix socket on the host) for each endpoint."""
    named: tuple[str, ...] = ()
    """The files the command names (real paths): shown even inside a covered folder."""
    links: tuple[tuple[str, str], ...] = ()
    """(path as the command names it, real path) where the two differ (a symlink) and the
    path is not in view already (`symlinks`): bwrap makes a link there."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables the sandbox sets over the agent's (HOME, proxies)."""

    def describe(self) -> dict[str, list[str]]:
        """The view as the experiment records it and `passhat check` prints it."""
        return {
            "read": [*_present(SYSTEM), *self.read],
            "write": list(self.write),
            "hidden": list(self.hide),
        }


def _present(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if os.path.lexists(p)]


def under(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


@functools.cache
def _system_args() -> tuple[str, ...]:
    return tuple(system_args())


def system_args() -> list[str]:
    """The system, read-only: host symlinks (/bin -> usr/bin) made as symlinks."""
    args: list[str] = []
    for path in _present(SYSTEM):
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        else:
            args += ["--ro-bind", path, path]
    for path in _present(ETC_HIDDEN):
        args += _cover(path)
        if os.path.isdir(path) and not os.path.islink(path):
            # a tmpfs of bwrap's has no size: left writable it is memory past the run's caps
            args += ["--remount-ro", path]
    return args


def _cover(path: str) -> list[str]:
    """An empty folder over a folder (made read-only at the end), /dev/null over a file."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path]
    return ["--ro-bind", "/dev/null", path]


def real(path: str | Path) -> str:
    return os.path.realpath(path)


NEVER_WHOLE = ("/", "/tmp", "/var/tmp", "/dev/shm", "/run", "/var", "/home", "/root", "/mnt")
"""Folders never put in view whole, whatever rule would widen a view to them."""


def too_wide(folder: str, guarded: Sequence[str]) -> bool:
    """A folder not to put in view whole: a shared or personal folder (/tmp, HOME or one
    above it), or one holding what the run must not see (the suite, the store)."""
    home = real(os.path.expanduser("~"))
    if folder in NEVER_WHOLE or folder == home or under(home, [folder]):
        return True
    return any(under(g, [folder]) for g in guarded)


def program_paths(
    argv: Sequence[str], files: Sequence[Path], env: Mapping[str, str], guarded: Sequence[str]
) -> list[str]:
    """What the agent's own program needs to be read (real paths): the folder of each file
    the command names (a Node project's folder for a .js/.ts file under one), the
    program's virtualenv and base Python, or the prefix of the `bin/` folder a program
    outside the system lives in, and the PYTHONPATH / NODE_PATH entries of the agent's own
    `env`. A folder that would be too wide (too_wide) is narrowed to the file itself."""
    wanted = [*runtime_paths(argv, env, guarded), *file_folders(files, guarded)]
    return outermost(p for p in wanted if os.path.exists(p) and not under(p, _present(SYSTEM)))


def file_folders(files: Sequence[Path], guarded: Sequence[str]) -> list[str]:
    """The folder each named file is read from (real paths): a Node project's folder for
    a .js/.ts file under one, else the file's own folder, or the file alone where that
    folder would be too wide (too_wide). What a Dask worker is shipped of the program."""
    wanted: list[str] = []
    for file in files:
        path = real(file)
        project = _node_project(Path(path))
        folder = str(project) if project and not too_wide(str(project), guarded) else None
        if folder is None:
            parent = os.path.dirname(path)
            folder = path if too_wide(parent, guarded) else parent
        wanted.append(folder)
    return wanted


def symlinks(
    files: Sequence[Path], visible: Sequence[str], hide: Sequence[str]
) -> tuple[tuple[str, str], ...]:
    """(path as the command names it, real path) of each named file that is a symlink not
    already in view (View.links): one in a folder bound whole (`write:` or `read:`) is
    there, and bwrap, asked to make it again, failed every run ("Can't make symlink ...:
    File exists"); one in a covered path is made over the cover."""
    return tuple(
        (named, target)
        for named, target in ((os.path.abspath(f), real(f)) for f in files)
        if named != target and not (under(named, visible) and not under(named, hide))
    )


def runtime_paths(argv: Sequence[str], env: Mapping[str, str], guarded: Sequence[str]) -> list[str]:
    """The program's installation and the agent's PYTHONPATH / NODE_PATH entries: what
    its interpreter loads (an entry that is HOME, one above it or /tmp is left out)."""
    program = _program(argv, env)
    return [*([] if program is None else _runtime(program, guarded)), *_loads(env)]


PACKAGES = frozenset({"site-packages", "dist-packages", "node_modules"})


def _program(argv: Sequence[str], env: Mapping[str, str]) -> Path | None:
    program = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    return None if program is None else Path(os.path.abspath(program))


def _loads(env: Mapping[str, str]) -> list[str]:
    paths = [p for n in ("PYTHONPATH", "NODE_PATH") for p in env.get(n, "").split(os.pathsep)]
    return [real(p) for p in paths if p and os.path.isabs(p) and not too_wide(real(p), ())]


def _runtime(program: Path, guarded: Sequence[str], scripts: bool = True) -> list[str]:
    """The program's own installation when it is not the system's: a virtualenv (its
    folder and the Python it was made from), a script's own folder (if `scripts`), else
    the prefix of the `bin` folder it lives in (a node under ~/.nvm/versions/node/v20/bin)."""
    found: list[str] = []
    venv = program.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        found.append(real(venv))
        home = _venv_home(venv / "pyvenv.cfg")
        if home is not None:
            found += _base_python(Path(home), guarded)
    path = Path(real(program))
    if under(str(path), [*_present(SYSTEM), *found]):
        return found
    if is_script(path):
        if not scripts:
            return found
        prefix = path.parent
    else:
        prefix = path.parent.parent if path.parent.name == "bin" else path.parent
    found.append(str(path if too_wide(str(prefix), guarded) else prefix))
    return found


def _base_python(bin_dir: Path, guarded: Sequence[str]) -> list[str]:
    """The Python a virtualenv was made from: the prefix above its `bin/`, or, where that
    is too wide (too_wide: a Python built with --prefix=$HOME has HOME there), its `bin/`
    and its `lib/python3*` and `lib/libpython3*` alone."""
    prefix = real(bin_dir.parent)
    if not too_wide(prefix, guarded):
        return [prefix]
    lib = Path(prefix, "lib")
    parts = [real(bin_dir), *map(str, [*lib.glob("python3*"), *lib.glob("libpython3*")])]
    return [p for p in parts if not too_wide(p, guarded)]


def is_script(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def _venv_home(cfg: Path) -> str | None:
    try:
        for line in cfg.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                return value.strip()
    except OSError:
        return None
    return None


def _node_project(file: Path) -> Path | None:
    """The nearest folder above `file` holding package.json or node_modules (a script of
    a Node project resolves its packages there), or None."""
    if file.suffix not in (".js", ".mjs", ".cjs", ".ts", ".mts"):
        return None
    for folder in file.parents:
        if any((folder / marker).exists() for marker in NODE_MARKERS):
            return folder
        if folder == folder.parent:
            break
    return None


def outermost(paths: Iterable[str]) -> list[str]:
    """`paths` without duplicates and without those inside another one, in order. Each
    path's folders on its way up are looked up, not every other path compared with it:
    3,000 covers an agent left took 9 million `under` calls, ~3 s before the next run."""
    unique = list(dict.fromkeys(os.path.abspath(p) for p in paths))
    held = set(unique)
    roots = {p for p in held if not p.strip("/")}  # "/" or "//": every path is under it
    return [p for p in unique if not roots - {p} and held.isdisjoint(_uppers(p))]


def _uppers(path: str) -> Iterator[str]:
    """The folders `path` (absolute, normalised) lies in, nearest first."""
    upper = os.path.dirname(path)
    while upper != path:
        yield upper
        path, upper = upper, os.path.dirname(upper)


SECRET_PREFIXES = (".env",)
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx")
SECRET_EXACT = frozenset(
    {
        ".envrc",
        ".netrc",
        ".git",
        ".git-credentials",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".aws",
        ".ssh",
        ".docker",
        ".kube",
        ".gnupg",
        ".config",
        "id_rsa",
        "id_ed25519",
        "id_ecdsa",
        "credentials.json",
    }
)
"""Secret-looking names covered wherever they are in a folder in view."""
WALK_LIMIT = 20_000
"""Entries looked at per folder in view, at most (the look for answers, agents/lookout.py,
and the program shipped to Dask workers, executors/program.py): a larger tree is refused
(archives.TooMuchToLook), never shown past the bound."""


def is_secret(name: str) -> bool:
    return (
        name in SECRET_EXACT
        or name.startswith(SECRET_PREFIXES)
        or name.endswith(SECRET_SUFFIXES)
        or name.startswith(("id_rsa", "id_ed25519", "id_ecdsa"))
    )


STORE_MARKS = (b"CREATE TABLE experiments", b"CREATE TABLE run_summaries")
"""passhat's tables as a store's first pages hold them: what tells a store SQLite cannot
read in time (the look before SQLite was asked)."""
STORE_HEAD = 64 * 1024
SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_LOOK_S = 0.5
"""How long SQLite is given to name a file's tables (a real store's schema is read in
milliseconds, whatever its size); past it, its first pages decide."""


def is_store(path: str) -> bool:
    """Whether `path` is a passhat store (of any experiment: every score in it names the
    goal's items), whatever its name (a copy kept as `backup`, a hard link `store.bak`):
    its SQLite header, then passhat's tables, asked of SQLite read-only (`_ask_sqlite`);
    when it cannot say, by passhat's table texts on its first pages."""
    if _head(path, len(SQLITE_MAGIC)) != SQLITE_MAGIC:
        return False
    said = _ask_sqlite(path)
    if said is not None:
        return said
    head = _head(path, STORE_HEAD)
    return head.startswith(SQLITE_MAGIC) and all(m in head for m in STORE_MARKS)


def _ask_sqlite(path: str) -> bool | None:
    """Whether SQLite finds passhat's tables in the file at `path`, or None when it cannot
    say within STORE_LOOK_S (True when its thread is still asking at the deadline and the
    file still starts as SQLite: fails closed). SQLite opens the file by its name,
    without O_NONBLOCK, after `_head` found a regular file there: a FIFO renamed over it
    meanwhile would block that open, so SQLite is asked on a thread of its own, and a
    thread still waiting at the deadline is set free (the FIFO opened for writing, then
    closed: SQLite reads its end)."""
    from passhat.store.schema import holds_passhat_tables

    wal, shm = path + "-wal", path + "-shm"
    # read through the WAL only where a writer left it with its index (-shm): SQLite
    # would make a missing -shm, and a FIFO is no WAL
    live = _size(wal) > 0 and _size(shm) >= 0
    said: list[bool | None] = []

    def ask() -> None:
        if not as_owner(path):
            said.append(None)
        elif _owner_reaches(path):
            said.append(holds_passhat_tables(path, STORE_LOOK_S, live=live))
        elif _fs_ids(0, 0):
            # out of its owner's reach (under a folder only root enters, where a run's
            # mounts may still reach it): asked as root, `immutable` (SQLite makes and
            # writes no -shm); a store is one, anything else left to the first pages
            said.append(holds_passhat_tables(path, STORE_LOOK_S, live=False) or None)

    thread = threading.Thread(target=ask, name="passhat-store-look", daemon=True)
    thread.start()
    thread.join(STORE_LOOK_S * 2)
    if thread.is_alive():
        for stuck in (path, wal, shm):
            _free_reader(stuck)
        # not answered in time: a regular file still starting as SQLite is taken for a
        # store (covered), not judged by its first pages; the look keeps what it said
        # with a trusted key, and a store whose tables lie past them was shown
        return True if _head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC else None
    return said[0] if said else None


def as_owner(path: str) -> bool:
    """Where passhat is root, set this thread's file-system uid and gid to those of the
    file at `path` (the kernel then takes the thread's file capabilities: chown, reading
    and writing past a file's mode); whether that was done, or needed none. SQLite, asked
    about a file with a WAL, opens its `-shm` for writing, writes it, and as root chowns
    it to the file's owner: a run left `notes.db-shm` a hard link to a file of its
    `write:` folder it may read and write (root's, mode 0666), and the look before the
    next run overwrote it and gave it to the run's uid. As the owner, SQLite does what
    the owner could. setfsuid acts on the calling thread alone (glibc does not pass it
    to the others, as it does setuid): call this on a thread of its own."""
    if os.geteuid() != 0:
        return True
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return _fs_ids(info.st_uid, info.st_gid)


def _owner_reaches(path: str) -> bool:
    """Whether this thread (`as_owner`) may open the file at `path` for reading: not
    where a folder on the way is closed to the owner (O_NONBLOCK: a FIFO swapped in
    does not hold it; any other error is SQLite's to meet)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
    except PermissionError:
        return False
    except OSError:
        pass
    return True


def _fs_ids(uid: int, gid: int) -> bool:
    """This thread's file-system uid and gid set to these (root's to give, and to take
    back: 0, 0); whether they took."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setfsgid(gid)
    libc.setfsuid(uid)
    # each returns the previous id: asked again (with -1, no change) they say the new one
    return bool(libc.setfsuid(-1) == uid and libc.setfsgid(-1) == gid)


def _size(path: str) -> int:
    """The size of the regular file at `path` (not followed if a link), else -1."""
    try:
        st = os.lstat(path)
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) else -1


def _free_reader(path: str) -> None:
    """Open the FIFO at `path` for writing and close it: a reader blocked in open() there
    goes on (to read an empty file). Anything but a FIFO is left alone."""
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
WAL_HEAD = 1 << 20
"""What tells the write-ahead log of a passhat store: SQLite's WAL header, and passhat's
tables in its first MiB of frames (or on its store's first pages)."""


def is_store_wal(path: str) -> bool:
    """Whether `path` is the write-ahead log of a passhat store. While another connection
    holds a store open (`passhat view`, an experiment still running, one killed), its
    tables and every run it wrote may be in the log alone, its main file a bare header
    that is_store does not take for a store."""
    head = _head(path, WAL_HEAD)
    if head[: len(WAL_MAGIC[0])] not in WAL_MAGIC:
        return False
    base = _head(path.removesuffix("-wal"), STORE_HEAD) if path.endswith("-wal") else b""
    return all(mark in head or mark in base for mark in STORE_MARKS)


def store_files(path: str) -> list[str]:
    """A store and its SQLite companions that exist."""
    return [
        p for p in (path, *(path + s for s in ("-wal", "-shm", "-journal"))) if os.path.lexists(p)
    ]


def covered(
    visible: Sequence[str],
    protected: Sequence[Path],
    suite_dir: Path | None,
    runtimes: Sequence[str] = (),
    *,
    look: Callable[[str], list[str]],
) -> list[str]:
    """The paths to cover inside the folders in view (real paths): each protected path
    (the store) inside one; the whole suite folder where a folder in view holds it, is it,
    or lies inside it; and secret-looking files (.env*, .git, .aws, *.pem, ...) in every
    folder but the `runtimes` (a virtualenv's or PYTHONPATH's packages: certifi's
    cacert.pem is no secret, and covering it breaks TLS), other than the files `runtimes`
    names (a package's listed files in a `pip install --target` folder: installed.installations),
    found by `look`: the look for answers (agents/lookout.py: secret_files for one look,
    a Looks' found for a look kept up to date between runs)."""
    folders = [p for p in visible if os.path.isdir(p)]
    hide: list[str] = []
    for path in protected:
        text = real(path)
        hide += [text for folder in folders if under(text, [folder]) and os.path.lexists(text)]
    if suite_dir is not None:
        suite = real(suite_dir)
        if any(under(suite, [f]) or under(f, [suite]) for f in folders):
            hide.append(suite)
    kept = frozenset(runtimes)
    for folder in folders:
        if folder not in kept:
            found = [p for p in map(_not_out, look(folder), repeat(folder)) if p and p not in kept]
            hide += [_passed(p, folder) for p in found]
    return outermost(hide)


def _passed(path: str, folder: str) -> str:
    """What to cover for `path`, inside `folder`: itself, or the first folder on its way
    the run may not pass through (bwrap, as the run's uid, could make no cover past it,
    and the sandbox was not made: an agent that left `d/.env` in a folder of mode 0600 in
    its `write:` folder had every later run errored, tests/test_attack53_blame.py; what
    lies past it the run cannot reach anyway)."""
    at, parts = folder, Path(path).relative_to(folder).parts if under(path, [folder]) else ()
    for part in parts[:-1]:
        at = os.path.join(at, part)
        if not _passable(at):
            return at
    return path


def _passable(folder: str) -> bool:
    """Whether a run may pass through `folder`: as passhat's user may (an unprivileged
    passhat's runs are its uid), or, under root, as any user may (each run is a uid of its
    own, owner of nothing on the host but what an earlier run left, another uid's)."""
    if os.geteuid() != 0:
        return os.access(folder, os.X_OK)
    try:
        return bool(os.stat(folder).st_mode & stat.S_IXOTH)
    except OSError:
        return True  # gone: nothing to cover past it


def _not_out(path: str, folder: str) -> str | None:
    """What to cover for `path`, found in `folder`: itself; for a link, where it leads
    when that is inside `folder`, not `folder` itself (bwrap mounts a cover over a link's end, never the link),
    else nothing. A cover over a link out of the folder hid what it leads to (a run's
    `.env` -> /usr/bin/python3 hid the interpreter of every later run) or failed to be
    made (a folder, a dangling link): the link itself holds no content, and what it
    leads to is in view or not by the view's own rules."""
    if not os.path.islink(path):
        return path
    end, inside = real(path), real(folder)
    return end if end != inside and under(end, [inside]) and os.path.exists(end) else None


def base_argv() -> list[str]:
    """bwrap with every namespace unshared, the system read-only, its own /proc, /dev,
    /tmp and /dev/shm: the part of every run's sandbox that does not depend on the run."""
    return [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",  # no namespaces of its own inside: less of the kernel to reach
        "--die-with-parent",
        "--new-session",
        *_system_args(),  # the same for every run: looked up once
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        "/tmp",
        "--size",
        str(SHM_BYTES),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",  # --dev's tmpfs has no size: the run writes /tmp and /dev/shm only
        "/dev",
    ]


PROCESSES = 1024
"""Processes and threads one sandboxed run may hold at once (RLIMIT_NPROC, soft and hard:
counted in the sandbox's own user namespace, so per run): a fork bomb stops there."""

RTPRIO = 0
"""The highest real-time priority a sandboxed run may set (RLIMIT_RTPRIO, soft and hard):
none, so an agent cannot make itself real-time (`chrt -f 99`) where its user's limit is
above 0 (PAM's limits.conf gives audio groups 95 or 99) and hold a core against passhat's
timer. Lowering a limit needs no privilege."""

CAP = (
    f"{{ ulimit -u {PROCESSES} || ulimit -p {PROCESSES}; }} 2>/dev/null"  # -p: dash's name
    f" && ulimit -r {RTPRIO} 2>/dev/null"
    ' || { echo "passhat: the run\'s process cap or real-time limit could not be set" >&2; exit 126; }'
)
"""The shell line that sets a run's process cap and real-time limit (RTPRIO) on itself
and all it makes; a run whose limits cannot be set does not start."""


def process_cap() -> list[str]:
    """`sh -c` that sets the run's process cap, then execs the command that follows it:
    the sandbox's first command, so the cap is counted in the run's own user namespace
    (one run held at it leaves the others theirs, whatever uid passhat has) and needs no
    CAP_SYS_RESOURCE (a root passhat here lacks it). A shell's builtin, not `prlimit`: a
    millisecond less of CPU a run. A relayed run's relay script sets it itself."""
    return ["/bin/sh", "-c", f'{CAP}\nexec "$@"', "sh"]


OOM_SCORE_ADJ = 1000
"""The sandbox's processes are the first the kernel's OOM killer takes: an agent that
eats the host's memory ends itself, not passhat or another run."""


def confine(pid: int) -> None:
    """Mark a sandbox whose first process is `pid` (in passhat's PID namespace) the OOM
    killer's first choice, before its agent starts: every process it makes inherits
    that. (Its process cap comes with its command: process_cap, or the relay's script.)
    Raises OSError when it cannot: the run is then not started."""
    with open(f"/proc/{pid}/oom_score_adj", "w", encoding="ascii") as adj:
        adj.write(str(OOM_SCORE_ADJ))


def ordinary(pid: int) -> None:
    """Set a sandbox whose first process is `pid` to the ordinary scheduling policy
    (SCHED_OTHER, priority 0) where it has a real-time one (passhat's, inherited through
    setpriv and bwrap): at its gate, after bwrap made the sandbox and before its agent
    starts, so every process of the run, forked from that one after this, is ordinary,
    while bwrap's own start and setup ran at passhat's policy (isolation.realtime says
    why). Raises OSError when it cannot: the run is then not started."""
    if is_realtime(pid):
        os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))


def is_realtime(pid: int) -> bool:
    """Whether process (or thread) `pid` has a real-time policy (0: the calling thread)."""
    if not hasattr(os, "sched_getscheduler"):
        return False
    policy = os.sched_getscheduler(pid) & ~getattr(os, "SCHED_RESET_ON_FORK", 0)
    return policy in (os.SCHED_FIFO, os.SCHED_RR)


KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "loongarch64": 219}
"""The keyctl syscall's number by machine (x86_64's table, and the generic one)."""
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_SETPERM = 1, 5
_SEALED = threading.local()


def seal_keyring() -> None:
    """Give the calling thread a session keyring of its own that no process may look into,
    add to or link (permissions 0), once per thread: what it starts inherits that one, not
    passhat's. A session keyring passes through bwrap, a user namespace and setpriv, and
    whoever holds it *possesses* its keys whatever its uid: without this a run read the
    keys of passhat's login (pam_keyinit gives each ssh session one; systemd each service)
    and left notes there for the other runs. A thread's credentials are its own: passhat's
    other threads keep its keyring, and the thread sealed is passhat's (a round with such
    runs has its loop on a thread of its own: evaluation/running.py), never a caller's
    of `passhat.evaluate`, whose keyring no one could give back. Where the kernel has no keyrings, or a filter (seccomp)
    refuses keyctl, the agent cannot reach one either: nothing to do. Raises OSError when a
    keyring cannot be made. (On machines not in KEYCTL, passhat's keyring is left as is.)"""
    number = KEYCTL.get(os.uname().machine)
    if number is None or getattr(_SEALED, "done", False):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    made = libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)
    if made < 0:
        error = ctypes.get_errno()
        if error in (errno.ENOSYS, errno.EPERM):
            _SEALED.done = True
            return
        raise OSError(error, f"keyctl: {os.strerror(error)}")
    if libc.syscall(number, KEYCTL_SETPERM, ctypes.c_long(made), 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"keyctl: {os.strerror(error)}")
    _SEALED.done = True


def bwrap_argv(view: View, workdir: Path, input_fd: int | None = None) -> list[str]:
    """The bwrap command line that makes `view` around a run whose work folder is
    `workdir` (a tmpfs of WORK_BYTES, with input.json copied in from `input_fd`); the
    agent's command and the relay follow it."""
    args = base_argv()
    binds = [*(("--ro-bind", p) for p in view.read), *(("--bind", p) for p in view.write)]
    # outermost first: a path inside another is mounted over it, so a read: folder inside
    # a write: folder stays read-only (and a write: one inside a read: one writable)
    for how, path in sorted(binds, key=lambda bind: bind[1].rstrip("/").count("/")):
        args += [how, path, path]
    for path in view.hide:
        args += _cover(path)
    for path in view.named:  # the agent's own files inside a covered suite folder
        if any(under(path, [h]) for h in view.hide):
            args += ["--ro-bind", path, path]
    for path in view.hide:
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--remount-ro", path]
    for link, target in view.links:
        args += ["--symlink", target, link]
    args += ["--size", str(WORK_BYTES), "--tmpfs", str(workdir)]
    if input_fd is not None:
        args += ["--file", str(input_fd), str(workdir / "input.json")]
    for index, (_, socket_path) in enumerate(view.relays):
        args += ["--ro-bind", socket_path, f"{SOCKET_DIR}/{index}.sock"]
    for name, value in view.env.items():
        args += ["--setenv", name, value]
    args += ["--remount-ro", "/", "--chdir", str(workdir)]
    return args
