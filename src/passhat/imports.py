"""Loading a user's object — an agent or a scorer — named `package.module:name` or
`file.py:name` (a file beside suite.yaml). One loader, so both behave alike."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from passhat.errors import ConfigError


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


def module_file(filename: str, suite_dir: Path | None) -> Path:
    """The file a `file.py` reference names: beside suite.yaml first, then as given."""
    path = Path(filename)
    if not path.is_absolute() and suite_dir is not None and (suite_dir / path).is_file():
        path = suite_dir / path
    return path.resolve()


def _load_file(filename: str, ref: str, suite_dir: Path | None) -> ModuleType:
    file = module_file(filename, suite_dir)
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
    except (Exception, SystemExit) as error:  # a user's file: any failure is theirs to fix
        sys.modules.pop(unique, None)
        raise ConfigError(f"{ref}: importing {file.name} raised {_why(error)}") from None
    return module


def _why(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"SystemExit (it called sys.exit({error.code!r})); a module must not exit on import"
    return f"{type(error).__name__}: {error}"
