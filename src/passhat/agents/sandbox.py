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
    its run folder, writable  cwd, HOME and TMPDIR, removed with the run
    private /tmp, /dev/shm    empty tmpfs, gone with the run
    /proc, /dev               its own PID namespace's; null, zero, urandom, tty
    extra paths               only what the suite (`agent: {read: [...], write: [...]}`)
                              or the command line (--agent-read/--agent-write) names

Never in view, whatever uid passhat runs as: the suite's files (suite.yaml, cases,
cassettes, fixtures), the store, HOME and the rest of the checkout. Where a folder
in view holds them (an agent beside suite.yaml, a store beside the agent), they are
covered: an empty folder over a folder, /dev/null over a file.

The network namespace has a loopback of its own and nothing else. A small relay
(this module's RELAY, run by a Python of the system's inside the sandbox, before the
agent) listens on 127.0.0.1 at the port the agent is told and forwards each
connection to the run's server over a Unix socket bound into the sandbox: the
proxy and MCP endpoints are the only things the agent reaches. Hosts the suite
allows (`agent: {hosts: [name:port]}`) are reached through an HTTP CONNECT proxy
that passhat serves per run and that refuses every other host; HTTPS_PROXY and
HTTP_PROXY point to it. The relay is the agent's parent: when the agent exits the
relay exits with its status, the PID namespace ends, and every process the agent
left dies with it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
SUITE_FILES = ("suite.yaml", "suite.yml", "cases", "cassettes", "fixtures", "goals")
"""Entries of a suite folder covered when a folder in view is the suite's own."""
SECRET_NAMES = (".env", ".netrc", ".git-credentials", ".pgpass", ".npmrc", ".pypirc")
"""Files covered wherever a folder in view holds them."""
SOCKET_DIR = "/run/passhat"
"""Where the run's Unix sockets appear inside the sandbox."""
NODE_MARKERS = ("package.json", "node_modules")


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
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables the sandbox sets over the agent's (HOME, proxies)."""

    def describe(self) -> dict[str, list[str]]:
        """The view as the experiment records it and `passhat check` prints it."""
        return {
            "read": [*_present(SYSTEM), *self.read],
            "write": list(self.write),
            "hidden": list(self.hide),
        }


_PROTECTED: dict[str, None] = {}


def protect(path: Path) -> None:
    """Keep `path` (and its SQLite companions) out of every later run's view: passhat
    calls this for the store it writes; a folder in view that holds it is covered."""
    text = os.path.abspath(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        _PROTECTED[text + suffix] = None


def protected() -> list[Path]:
    return [Path(p) for p in _PROTECTED]


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def relay_python() -> str | None:
    """A Python inside the system's folders that runs the relay (None: there is none)."""
    for candidate in ("/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3"):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _present(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if os.path.lexists(p)]


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


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
    return args


def _cover(path: str) -> list[str]:
    """An empty read-only folder over a folder, /dev/null (read-only) over anything else."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", "/dev/null", path]


def program_paths(argv: Sequence[str], files: Sequence[Path], env: Mapping[str, str]) -> list[str]:
    """What the agent's own program needs to be read: the folder of each file the command
    names (a Node project's folder for a file under one), the program's virtualenv and
    base Python, and the PYTHONPATH / NODE_PATH entries the agent's `env` gives."""
    wanted: list[str] = []
    program = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    if program is not None:
        wanted += _runtime(Path(os.path.abspath(program)))
    for file in files:
        wanted.append(str(_node_project(file) or file.parent))
    for name in ("PYTHONPATH", "NODE_PATH"):
        wanted += [p for p in env.get(name, "").split(os.pathsep) if p and os.path.isabs(p)]
    return outermost(p for p in wanted if os.path.exists(p) and not _under(p, _present(SYSTEM)))


def _runtime(program: Path) -> list[str]:
    """The program's own installation when it is not the system's: a virtualenv (its
    folder and the Python it was made from), else the prefix of the `bin` folder it lives
    in (a node under ~/.nvm/versions/node/v20/bin), never HOME or / itself."""
    found: list[str] = []
    venv = program.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        found.append(str(venv))
        home = _venv_home(venv / "pyvenv.cfg")
        if home is not None:
            found.append(str(Path(home).parent))  # .../bin -> the base Python's prefix
    for path in dict.fromkeys((program, Path(os.path.realpath(program)))):
        if _under(str(path), [*_present(SYSTEM), *found]):
            continue
        prefix = path.parent.parent if path.parent.name == "bin" else path
        found.append(str(path if _too_wide(prefix) else prefix))
    return found


def _too_wide(folder: Path) -> bool:
    home = os.path.expanduser("~")
    return str(folder) in ("/", home) or _under(home, [str(folder)])


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
    """`paths` without duplicates and without those inside another one, in order."""
    unique = list(dict.fromkeys(os.path.abspath(p) for p in paths))
    return [p for p in unique if not any(p != q and _under(p, [q]) for q in unique)]


def covered(visible: Sequence[str], protected: Sequence[Path], suite_dir: Path | None) -> list[str]:
    """The paths to cover inside the folders in view: each protected path (the store, the
    suite folder) that lies inside one, the suite's own files where a folder in view is
    the suite folder or inside it, and secret files (.env, .netrc, ...) of each folder."""
    folders = [p for p in visible if os.path.isdir(p)]
    hide: list[str] = []
    for path in protected:
        text = os.path.abspath(path)
        for folder in folders:
            if _under(text, [folder]) and text != folder:
                hide += _present([text])
    if suite_dir is not None:
        suite = os.path.abspath(suite_dir)
        for folder in folders:
            if _under(folder, [suite]):  # the agent's folder is the suite's, or inside it
                hide += _present(os.path.join(suite, name) for name in SUITE_FILES)
                hide += [str(p) for p in Path(suite).glob("*.jsonl")]
            elif _under(suite, [folder]):  # the suite lies inside the agent's folder
                hide.append(suite)
    for folder in folders:
        hide += _present(os.path.join(folder, name) for name in SECRET_NAMES)
    return outermost(hide)


def base_argv() -> list[str]:
    """bwrap with every namespace unshared, the system read-only, its own /proc, /dev,
    /tmp and /dev/shm: the part of every run's sandbox that does not depend on the run."""
    return [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        *system_args(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/dev/shm",
    ]


def bwrap_argv(view: View, workdir: Path) -> list[str]:
    """The bwrap command line that makes `view` around a run whose folder is `workdir`
    (the agent's command and the relay follow it)."""
    args = base_argv()
    for path in view.read:
        args += ["--ro-bind", path, path]
    for path in view.write:
        args += ["--bind", path, path]
    for path in view.hide:
        args += _cover(path)
    args += ["--bind", str(workdir), str(workdir)]
    for index, (_, socket_path) in enumerate(view.relays):
        args += ["--ro-bind", socket_path, f"{SOCKET_DIR}/{index}.sock"]
    for name, value in view.env.items():
        args += ["--setenv", name, value]
    args += ["--chdir", str(workdir)]
    return args


def relay_argv(view: View, python: str) -> list[str]:
    """The relay's command inside the sandbox; the agent's argv follows it."""
    pairs = [f"{port}={SOCKET_DIR}/{i}.sock" for i, (port, _) in enumerate(view.relays)]
    return [python, "-I", "-S", "-c", RELAY, *pairs, "--"]


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
