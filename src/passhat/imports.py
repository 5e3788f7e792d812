"""Loading a user's object — an agent, an environment or a scorer — named `package.module:name` or
`file.py:name` (a file beside suite.yaml). One loader, so both behave alike."""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from passhat.errors import ConfigError

BUILTIN_ENVIRONMENTS: dict[str, str] = {
    "ticket": "passhat.envs.ticket:TicketEnvironment",
    "board": "passhat.envs.board:BoardEnvironment",
    "tools": "passhat.envs.tools:ToolsEnvironment",
}
"""Built-in environment names and the import paths they stand for: suite.yaml's
`environment: ticket` is loaded exactly as a user's `file.py:Class` is."""


def load_module(module_name: str, ref: str, suite_dir: Path | None) -> ModuleType:
    """The module a reference names; every failure is a ConfigError starting with `ref`.

    A `file.py` is looked for beside suite.yaml first, then as given.
    """
    if module_name.endswith(".py"):
        return _load_file(module_name, ref, suite_dir)
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(
            f"{ref}: cannot import {module_name} ({error}); install it, or name a file "
            "beside suite.yaml as file.py:name"
        ) from None
    except Exception as error:  # a user's module: any failure is theirs to fix
        raise ConfigError(
            f"{ref}: importing {module_name} raised {type(error).__name__}: {error}"
        ) from None


def _load_file(filename: str, ref: str, suite_dir: Path | None) -> ModuleType:
    path = Path(filename)
    if not path.is_absolute() and suite_dir is not None and (suite_dir / path).is_file():
        path = suite_dir / path
    file = path.resolve()
    if not file.is_file():
        raise ConfigError(f"{ref}: no file {file}; the path is relative to the suite folder")
    # named after the file's full path: two suites' rules.py never collide
    unique = "passhat_user_" + hashlib.sha256(str(file).encode()).hexdigest()[:16]
    loader_spec = importlib.util.spec_from_file_location(unique, file)
    if loader_spec is None or loader_spec.loader is None:
        raise ConfigError(f"{ref}: {file} cannot be imported as Python")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[unique] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as error:  # a user's file: any failure is theirs to fix
        sys.modules.pop(unique, None)
        raise ConfigError(
            f"{ref}: importing {file.name} raised {type(error).__name__}: {error}"
        ) from None
    return module


def load_object(ref: str, suite_dir: Path | None, *, what: str) -> Any:
    """The object `package.module:name` or `file.py:name` names; ConfigError otherwise.

    `what` names the kind in messages ("environment"...), which start with
    `{what} {ref}:` so one line says which file and which piece is wrong.
    """
    module_name, sep, attr = ref.partition(":")
    head = f"{what} {ref}" if what else ref
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"{what + ' ' if what else ''}{ref!r} is not an import path; write "
            "package.module:name or file.py:name (a file beside suite.yaml)"
        )
    module = load_module(module_name, head, suite_dir)
    if not hasattr(module, attr):
        public = [n for n in vars(module) if not n.startswith("_")]
        close = difflib.get_close_matches(attr, public, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"{head}: {module_name} has no '{attr}'{hint}")
    return getattr(module, attr)


def source_hash(obj: Any) -> str | None:
    """SHA-256 of the source file an object was defined in (None when there is none)."""
    module = inspect.getmodule(obj)
    if module is None:
        return None
    try:
        path = inspect.getsourcefile(module)
    except TypeError:
        return None
    if path is None:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
