"""The paths every sandboxed run keeps out of its view: the stores passhat writes (and
their SQLite companions). A registry with no passhat imports, so that an experiment of
an in-process agent, which records its store here as every experiment does, need not
import the sandbox (agents/sandbox.py re-exports both functions; command agents read
the list there)."""

from __future__ import annotations

import os
from pathlib import Path

_PROTECTED: dict[str, None] = {}


def protect(path: Path) -> None:
    """Keep `path` (and its SQLite companions) out of every later run's view: passhat
    calls this for the store it writes; a folder in view that holds it is covered."""
    text = os.path.abspath(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        _PROTECTED[text + suffix] = None


def protected() -> list[Path]:
    return [Path(p) for p in _PROTECTED]
