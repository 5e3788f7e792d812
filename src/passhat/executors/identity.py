"""Which passhat code a process runs: a hash of its files, not its version string.

Two checkouts with the same version string can grade differently (an edited
scorer, a branch); a Dask worker is accepted only when the SHA-256 over its
passhat package's files (paths and bytes: Python sources, prompt and report
templates) equals the driver's. A mismatch names the files that differ.

What is imported can also be bytecode: Python runs `__pycache__/x.cpython-311.pyc`
instead of `x.py` when the .pyc's header matches the source (its mtime and size, or
its hash, or an unchecked hash). Bytecode is not byte-for-byte reproducible, so it is
not hashed; instead each .pyc Python would use is compared with the source compiled
again, and one that is not what its source compiles to enters the manifest as
`passhat/x.py (bytecode)`, so such a worker is refused, naming the file.

Compiling every source again costs about half a CPU-second, in every worker and
driver that starts. A comparison that matched is remembered, keyed by this Python
and the SHA-256 of both the source and the .pyc (`CHECKED`), in a file beside this
module's own bytecode: a process able to write it can replace that bytecode too,
the check itself, so it vouches for nothing such a process could not forge already.
A .pyc changed in any byte is another key, compared again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import marshal
import os
import sys
import tempfile
from pathlib import Path

import passhat

SHOWN = 5
"""Differing files named in a refusal (the rest are counted)."""
CHECKED = Path(importlib.util.cache_from_source(__file__)).with_name("bytecode-checked.txt")
"""The keys of the .pyc files found to be what their sources compile to: one a line."""
KEPT = 4096
"""Keys CHECKED holds at most, the newest: a release of passhat adds about 230."""


@functools.cache
def code_manifest() -> dict[str, str]:
    """Relative path (from the package's parent, e.g. passhat/scoring.py) -> SHA-256."""
    root = Path(passhat.__file__).resolve().parent
    checked = _checked()
    known = len(checked)
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root.parent)
        if "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo") or not path.is_file():
            continue
        out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        if path.suffix == ".py" and not bytecode_matches(path, checked):
            out[rel.as_posix() + " (bytecode)"] = "not what the source compiles to"
    if len(checked) > known:
        _remember(checked)
    return out


def bytecode_matches(source: Path, checked: dict[str, None] | None = None) -> bool:
    """Whether the cached bytecode Python would import for `source` (if any) is what the
    source compiles to: a .pyc it would not use (stale header) does not matter. A match
    whose key is in `checked` is not compiled again; one found is added to it."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        data = cached.read_bytes()
        raw = source.read_bytes()
        st = source.stat()
    except OSError:
        return True
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return True  # another Python's, or not bytecode: this one recompiles
    flags = int.from_bytes(data[4:8], "little")
    if flags == 0:  # stamped with the source's mtime and size
        stamp = (int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
        if stamp != (int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")):
            return True
    elif flags & 0b10 and data[8:16] != importlib.util.source_hash(raw):
        return True  # a checked hash that no longer matches: recompiled
    key = _key(raw, data)
    if checked is not None and key in checked:
        return True
    try:
        loaded = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return False
    matches = bool(loaded == compile(raw, str(source), "exec", dont_inherit=True))
    if matches and checked is not None:
        checked[key] = None
    return matches


def _key(source: bytes, pyc: bytes) -> str:
    """What a comparison depends on: this Python (its compiler), its optimization level,
    the source's bytes and the .pyc's (a code object's equality ignores its file name)."""
    digest = hashlib.sha256(f"{sys.version}\0{sys.flags.optimize}\0".encode())
    digest.update(hashlib.sha256(source).digest() + hashlib.sha256(pyc).digest())
    return digest.hexdigest()


def _checked() -> dict[str, None]:
    """CHECKED's keys, oldest first (none when it cannot be read)."""
    try:
        return dict.fromkeys(CHECKED.read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return {}


def _remember(checked: dict[str, None]) -> None:
    """CHECKED rewritten whole (the newest KEPT keys), atomically; only where Python keeps
    this module's bytecode already, and silently not where it may not write."""
    try:
        fd, temporary = tempfile.mkstemp(dir=CHECKED.parent, prefix=".bytecode-checked-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write("".join(f"{key}\n" for key in list(checked)[-KEPT:]))
        os.chmod(temporary, 0o644)  # hashes, no secret: every user's passhat may read them
        os.replace(temporary, CHECKED)
    except OSError:
        Path(temporary).unlink(missing_ok=True)


@functools.cache
def code_hash() -> str:
    """The first 16 hex digits of a SHA-256 over the manifest: this process's passhat code."""
    digest = hashlib.sha256()
    for rel, sha in code_manifest().items():
        digest.update(f"{rel}\0{sha}\n".encode())
    return digest.hexdigest()[:16]


def identity() -> tuple[str, str]:
    """(passhat version, code hash) of this process: what a worker reports. The version
    is the installed distribution's, as pip sees it (the package's own string else)."""
    try:
        version = importlib.metadata.version("passhat")
    except importlib.metadata.PackageNotFoundError:
        version = passhat.__version__
    return version, code_hash()


def foreign(where: str, found: tuple[str, str], version: str, code: str) -> str | None:
    """Why a worker reporting (version, code hash) `found` cannot run the driver's runs."""
    if found[0] != version:
        return (
            f"worker {where} has passhat {found[0]}, the experiment needs passhat {version}; "
            "install the same passhat on every worker (docs/dask.md)"
        )
    if found[1] != code:
        return (
            f"worker {where} runs other passhat code than the driver (both say passhat "
            f"{version}, but its code hashes to {found[1]}, the driver's to {code}); install "
            "the same passhat checkout on every worker (docs/dask.md)"
        )
    return None


def differences(mine: dict[str, str], theirs: dict[str, str]) -> str:
    """The files that differ between two manifests, for a message: 'passhat/x.py differs,
    passhat/y.py only on the worker, ... and 3 more'."""
    out = []
    for rel in sorted(set(mine) | set(theirs)):
        if rel not in theirs:
            out.append(f"{rel} missing on the worker")
        elif rel not in mine:
            out.append(f"{rel} only on the worker")
        elif mine[rel] != theirs[rel]:
            out.append(f"{rel} differs")
    if len(out) > SHOWN:
        out = [*out[:SHOWN], f"and {len(out) - SHOWN} more"]
    return ", ".join(out) or "no file differs (the manifests hash alike)"
