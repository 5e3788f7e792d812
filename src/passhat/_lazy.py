"""Import a heavy module on first use, so a command that never needs it starts faster.

`passhat --help`, `check` and `list` never compute an interval; importing
numpy (with its BLAS) for them was half of their start-up time. Commands that do
load it but run no user code start its BLAS with one thread (`one_blas_thread`).
"""

from __future__ import annotations

import importlib.util
import os
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


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""What numpy's OpenBLAS reads, in its order, for the size of its thread pool."""


def one_blas_thread() -> None:
    """Let numpy's OpenBLAS start one thread, unless the user chose a number.

    OpenBLAS starts a pool of threads when numpy is loaded: measured, 50 ms of CPU
    (and more wall time on a busy machine) for a report whose matrices (2,000
    resamples by a dozen case records) one thread multiplies in microseconds. Only
    for commands that run none of a user's code (their numpy keeps its threads), and
    only before numpy is loaded (OpenBLAS reads it then)."""
    if not any(name in os.environ for name in BLAS_THREADS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
