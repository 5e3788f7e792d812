"""Import a heavy module on first use, so a command that never needs it starts faster.

`passhat --help`, `check` and `list` never compute an interval; importing
numpy (with its BLAS) for them was half of their start-up time.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """`name` as a module whose code runs on the first attribute access
    (`importlib.util.LazyLoader`); the real module if it is already imported."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
