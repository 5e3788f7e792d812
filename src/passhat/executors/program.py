"""A command agent's program, shipped to Dask workers by value and started there as locally.

The driver packs the agent's own program as the local sandbox shows it read-only
(agents/sandbox.py `file_folders`): the folder of each file the command names (a
Node project's folder for a script under one), the files themselves, and the
relative paths of the agent's `read:`. Never what no run may see: the suite's files,
the store, secret-looking files (.env*, .git, *.pem, ...), and no `__pycache__`.
Each file goes to `program/<its path on the driver>` in the shipment, so the
program's layout (a script beside its modules, a project's node_modules) is the
driver's below the worker's shipment folder. The command is rewritten to name those
copies (`worker_spec`), and its source hash is taken over the driver's paths and the
copies' bytes (`shipped_hash`): a worker that got other bytes refuses.

What is not shipped is the worker's own: the interpreter (`python3`, `node`, a
virtualenv, named by the driver's path when the command names it by one), the
agent's `env` (PYTHONPATH entries), absolute `read:` paths and every `write:` path.

The run is sealed on the worker at the experiment's level (`--isolation`, namespace
by default): a worker that cannot have it (no bwrap) is refused by name and runs none
of the experiment (`isolation_refusal`); a run is never started at a weaker level.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.errors import ConfigError

if TYPE_CHECKING:
    from passhat.agents.command import CommandAgent

PROGRAM = "program"
"""Where a command agent's files go inside a shipment (below: the driver's paths)."""
ROOT = "{root}"
"""Stands for the worker's shipment folder in a shipped agent spec."""
MAX_PROGRAM_BYTES = 256 * 2**20
"""A program larger than this is refused: ship data the agent reads some other way."""


def program_files(agent: CommandAgent) -> tuple[dict[str, bytes], frozenset[str]]:
    """The agent's program as shipment files (`program/<driver path>` -> bytes), and
    which of them are executable."""
    from passhat.agents.archives import whole_look
    from passhat.agents.lookout import secret_files
    from passhat.agents.sandbox import (
        covered,
        file_folders,
        outermost,
        protected,
        real,
        runtime_paths,
        under,
    )

    guarded = agent.guarded()
    folders = outermost([*file_folders(agent.files, guarded), *_relative_reads(agent)])
    # the interpreter's installation (a virtualenv beside the agent) is the worker's own
    env = {"PATH": os.environ.get("PATH", ""), **agent.spec.env}
    runtimes = runtime_paths(agent.argv, env, guarded)
    with whole_look():  # the archives in view, bounded together (archives.LOOK_S)
        hide = [*covered(folders, protected(), agent.suite_dir, look=secret_files), *runtimes]
    named = {os.path.abspath(f): f for f in agent.files}
    found: dict[str, Path] = {}
    for folder in folders:
        for path in _walk(Path(folder)):
            if "__pycache__" not in path.parts and not under(real(path), hide):
                found[os.path.abspath(path)] = path
    found.update(named)  # the named files themselves, also inside a covered folder
    files: dict[str, bytes] = {}
    executable: set[str] = set()
    total = 0
    for name, path in sorted(found.items()):
        data = path.read_bytes()
        total += len(data)
        if total > MAX_PROGRAM_BYTES:
            raise ConfigError(
                f"the agent's program ({', '.join(folders)}) holds more than "
                f"{MAX_PROGRAM_BYTES // 2**20} MiB, too much to ship to every Dask worker; "
                "install what it loads on the workers (a virtualenv, node_modules named "
                "through its env) instead"
            )
        key = f"{PROGRAM}{name}"
        files[key] = data
        if os.stat(path).st_mode & stat.S_IXUSR:
            executable.add(key)
    return files, frozenset(executable)


def _relative_reads(agent: CommandAgent, every: bool = False) -> list[str]:
    """The agent's `read:` paths given relative to its cwd (part of its program), as
    real paths; `every`: each of its `read:` paths, resolved alike."""
    from passhat.agents.sandbox import real

    return [real(agent.base / p) for p in agent.spec.read if every or not os.path.isabs(p)]


def _walk(folder: Path) -> list[Path]:
    """The files under `folder` (or `folder` itself when it is a file), links to files
    included, links to folders not followed, secret-named folders not gone into (covered
    whole); past sandbox.WALK_LIMIT entries outside installations (sandbox.PACKAGES, not
    looked into but shipped, as a run sees them) TooMuchToLook, as the look that chose
    what to hide (agents/lookout.py) counts them: nothing is shipped that it did not reach."""
    from passhat.agents.archives import TooMuchToLook
    from passhat.agents.sandbox import PACKAGES, WALK_LIMIT, is_secret

    if not folder.is_dir():
        return [folder] if folder.is_file() else []
    out: list[Path] = []
    seen = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = [name for name in dirs if not is_secret(name)]
        if not PACKAGES.intersection(Path(root).relative_to(folder).parts):
            seen += len(dirs) + len(names)
        if seen > WALK_LIMIT:
            raise TooMuchToLook(
                f"{folder}: the agent's program holds more than {WALK_LIMIT:,} files and "
                "folders, more than passhat looks through before shipping it to Dask "
                "workers; install what it loads on the workers instead, or move what it "
                "need not see out of this folder",
                root,
            )
        out += [Path(root, n) for n in names if Path(root, n).is_file()]
    return out


def worker_spec(agent: CommandAgent) -> str:
    """The agent's spec as a worker resolves it: the files it names, its cwd and its
    relative `read:` paths at their copies under `{root}/program`; an interpreter named
    by a relative path at the driver's absolute path (the worker's own installation)."""
    spec = agent.spec
    named = {os.path.abspath(f) for f in agent.files}
    command = []
    for index, (given, resolved) in enumerate(zip(spec.command, agent.argv, strict=True)):
        if resolved in named:
            command.append(f"{ROOT}/{PROGRAM}{resolved}")
        elif index == 0:
            command.append(resolved)
        else:
            command.append(given)
    base = os.path.abspath(agent.base)
    # shipped at their real paths (program_files), so named by them
    read = [p if os.path.isabs(p) else f"{ROOT}/{PROGRAM}{real}" for p, real in
            zip(spec.read, _relative_reads(agent, every=True), strict=True)]  # fmt: skip
    write = [os.path.abspath(agent.base / p) for p in spec.write]
    shipped = replace(
        spec,
        command=tuple(command),
        cwd=f"{ROOT}/{PROGRAM}{base}",
        read=tuple(read),
        write=tuple(write),
    )
    return shipped.spec()


def make_cwd(spec: str) -> None:
    """The shipped agent's cwd (under the shipment folder), which may hold no file."""
    from passhat.agents.command import from_spec

    Path(from_spec(spec).cwd).mkdir(parents=True, exist_ok=True)


def shipped_hash(agent: Any, root: Path) -> str | None:
    """The source hash of a command agent loaded from a shipment: its named files'
    copies' bytes under the driver's paths."""
    from passhat.agents.command import files_hash

    return files_hash(agent.files, mirror=root / PROGRAM)


def unpack_modes(root: Path, executable: frozenset[str]) -> None:
    """The program's modes on a worker: its executables runnable. A root worker's run
    uids (--isolation namespace) must reach it: the shipment folder is then passable
    (not listable) and the program readable by others; the rest of the shipment (the
    suite, the cassette) stays the worker's own."""
    from passhat.agents.isolation import is_root

    shared = is_root()
    if shared:
        root.chmod(0o711)
    for entry in root.iterdir():
        if entry.name != PROGRAM:
            entry.chmod(0o700)
    for folder, dirs, names in os.walk(root / PROGRAM):
        for name in dirs:
            Path(folder, name).chmod(0o755 if shared else 0o700)
        for name in names:
            path = Path(folder, name)
            runs = path.relative_to(root).as_posix() in executable
            path.chmod((0o755 if runs else 0o644) if shared else (0o700 if runs else 0o600))
    (root / PROGRAM).chmod(0o755 if shared else 0o700)


def isolation_refusal(level: str) -> str | None:
    """Why this process cannot run a command agent's runs at `level` (None: it can)."""
    from passhat.agents.isolation import check_level, unavailable

    try:
        return unavailable(check_level(level))
    except ValueError as error:
        return str(error)
