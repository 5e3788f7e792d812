"""Executors: what runs an experiment's planned runs, while the driver alone writes.

    local           every run on this process's event loop (the default)
    dask            Dask distributed workers: a LocalCluster on 127.0.0.1, or a
                    scheduler's workers on other machines (`--scheduler`)
    module:name     a user's executor, through the same door

The protocol (`Executor`, `Job`) and its contract are in `base.py`.
"""

from __future__ import annotations

from pathlib import Path

from passhat.errors import ConfigError, InputError
from passhat.executors.base import Executor, Job, WorkItem, bounded
from passhat.executors.local import LocalExecutor
from passhat.imports import load_module

__all__ = ["Executor", "Job", "LocalExecutor", "WorkItem", "bounded", "resolve_executor"]

BUILTIN = ("local", "dask")


def resolve_executor(
    spec: str, *, scheduler: str | None = None, suite_dir: Path | None = None
) -> Executor:
    """A built-in executor by name, or a user's (`package.module:name`, `file.py:name`).

    A user's names an object with a `run(job, todo)` method, or a class (or other
    callable) that makes one when called without arguments; it is checked now.
    """
    if scheduler is not None and spec != "dask":
        raise InputError(f"--scheduler is for --executor dask, not {spec!r}; drop one of them")
    if spec == "local":
        return LocalExecutor()
    if spec == "dask":
        try:
            from passhat.executors.dask import DaskExecutor
        except ImportError as error:
            raise ConfigError(
                f"--executor dask needs Dask distributed: pip install 'passhat[dask]' ({error})"
            ) from None
        return DaskExecutor(scheduler)
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(
            f"executor {spec!r} is neither built in ({', '.join(BUILTIN)}) nor an import path; "
            "write package.module:name"
        )
    module = load_module(module_name, f"executor {spec!r}", suite_dir)
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"executor {spec!r}: {module_name!r} has no {attr!r}") from None
    if isinstance(obj, type) or not hasattr(obj, "run"):
        try:
            obj = obj() if callable(obj) else obj
        except Exception as error:  # a user's constructor: any failure is theirs to fix
            raise ConfigError(
                f"executor {spec!r}: calling it raised {type(error).__name__}: {error}"
            ) from None
    if not callable(getattr(obj, "run", None)):
        raise ConfigError(
            f"executor {spec!r} has no run(job, todo) method; see passhat.executors.base"
        )
    executor: Executor = obj
    return executor
