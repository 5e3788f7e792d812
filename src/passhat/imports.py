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
    except (Exception, SystemExit) as error:  # a user's module: any failure is theirs to fix
        raise ConfigError(f"{ref}: importing {module_name} raised {_why(error)}") from None


def candidates(filename: str, suite_dir: Path | None) -> list[Path]:
    """Where `file.py` is looked for, in order: beside suite.yaml, then the current folder
    (an absolute path is only itself)."""
    path = Path(filename)
    if path.is_absolute():
        return [path]
    here = Path.cwd() / path
    return [suite_dir / path, here] if suite_dir is not None else [here]


def module_file(filename: str, suite_dir: Path | None) -> Path:
    """The file a `file.py` reference names: the first of `candidates` that exists
    (beside suite.yaml, then the current folder), else the first of them."""
    tried = candidates(filename, suite_dir)
    found = next((p for p in tried if p.is_file()), tried[0])
    return found.resolve()


def _load_file(filename: str, ref: str, suite_dir: Path | None) -> ModuleType:
    tried = candidates(filename, suite_dir)
    found = next((p for p in tried if p.is_file()), None)
    if found is None:
        where = " nor ".join(str(p.resolve()) for p in tried)
        raise ConfigError(
            f"{ref}: no file {where}; a relative path is looked for beside suite.yaml, "
            "then in the current folder"
        )
    file = found.resolve()
    # named after the file's full path: two suites' rules.py never collide
    unique = "passhat_user_" + hashlib.sha256(str(file).encode()).hexdigest()[:16]
    loader_spec = importlib.util.spec_from_file_location(unique, file)
    if loader_spec is None or loader_spec.loader is None:
        raise ConfigError(f"{ref}: {file} cannot be imported as Python")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[unique] = module
    try:
        loader_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # a user's file: any failure is theirs to fix
        sys.modules.pop(unique, None)
        raise ConfigError(f"{ref}: importing {file.name} raised {_why(error)}") from None
    return module


def _why(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"SystemExit (it called sys.exit({error.code!r})); a module must not exit on import"
    return f"{type(error).__name__}: {error}"


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
    return None if module is None else module_source_hash(module)


def module_source_hash(module: ModuleType) -> str | None:
    """SHA-256 of the file a module was loaded from (None when there is none)."""
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
