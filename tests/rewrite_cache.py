"""pytest's assertion-rewrite cache for the test files, written once before xdist's
workers start (tests/conftest.py's `pytest_configure`, in the controller).

pytest rewrites the asserts of every test module as it imports it, and keeps the result
beside it (`__pycache__/NAME.cpython-311-pytest-X.pyc`, a hash-checked pyc), unless
Python may not write bytecode: under PYTHONDONTWRITEBYTECODE=1 (CI's machine sets it)
each of `make test`'s workers parsed and rewrote all ~250 test files itself, about 5 of
the 10 CPU-seconds a worker spent collecting. pytest reads that cache even then; it only
declines to write it. So the controller writes it, with pytest's own rewriter, as
`compileall` writes the plain bytecode of src/ and tests/ (Makefile). A file whose cached
pyc matches its source is skipped; a pytest that no longer has these (private) functions
leaves the cache to pytest, which is only slower (test_rewrite_cache.py would say so).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest


def rewritten(config: pytest.Config, folder: Path) -> list[Path]:
    """The files of `folder` pytest rewrites as it collects: its test files (the ini's
    `python_files`) and conftest.py."""
    patterns = [*config.getini("python_files"), "conftest.py"]
    return sorted(
        p for p in folder.glob("*.py") if any(fnmatch.fnmatch(p.name, g) for g in patterns)
    )


def prewarm(config: pytest.Config, folder: Path) -> int:
    """Write the rewrite cache of each of `folder`'s rewritten files that lacks a current
    one: how many were written."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        cache_dir, tail, makedirs = rewrite.get_cache_dir, rewrite.PYC_TAIL, rewrite.try_makedirs
        read, rewrite_file, write = rewrite._read_pyc, rewrite._rewrite_test, rewrite._write_pyc
    except (ImportError, AttributeError, KeyError):  # another pytest, or --assert=plain
        return 0
    written = 0
    for source in rewritten(config, folder):
        pyc = cache_dir(source) / (source.name[:-3] + tail)
        if read(source, pyc) is not None:
            continue
        source_hash, code = rewrite_file(source, config)
        if makedirs(pyc.parent) and write(state, code, source_hash, pyc):
            written += 1
    return written
