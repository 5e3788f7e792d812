"""Files fed where passhat reads one, as an outside reviewer would: a FIFO nobody writes
to, a sparse 2 GB file, /dev/zero, text that is not UTF-8, JSON nested 100,000 deep, a
key written twice, an alias bomb. Each ends in one line naming the file and the fix,
exit 2, no traceback, no hang; memory stays bounded (the CLI runs under a 1 GB cap).

The doors that hung or ran out of memory are run as a real `passhat` process with a
timeout and an address-space cap: in-process, a hang would stop the test run itself.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli

MEMORY_CAP = 1 << 30
"""The address space a `passhat` process under test may take (1 GB)."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def passhat(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`passhat ARGS` as a process, capped at 1 GB and 20 s: its exit code and stderr. A
    hang fails the test (TimeoutExpired) instead of stopping the test run."""
    done = subprocess.run(
        [sys.executable, "-m", "passhat", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        preexec_fn=_capped,
        check=False,
    )
    return done.returncode, done.stderr


def one_line(code: int, err: str, *words: str) -> None:
    """Exit 2 with one line on stderr that holds every word (and no traceback)."""
    assert code == 2 and "Traceback" not in err, err[-2000:]
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of the bundled clarify suite."""
    return Path(shutil.copytree(CLARIFY, tmp_path / "clarify"))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one replayed run of the seed's card (for `report --prices`)."""
    import contextlib
    import io

    from passhat.cli import main

    db = tmp_path_factory.mktemp("store") / "p.db"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            main(["run", str(CLARIFY), "--case", SEED, "-k", "1", "--db", str(db)])
        except SystemExit as exit_:
            assert not exit_.code, out.getvalue()
    return db


def sparse(path: Path, size: int = 2 << 30) -> Path:
    """A sparse file of `size` bytes (2 GB: all holes, no disk taken)."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


def test_a_store_that_is_a_fifo_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """PASSHAT_DB naming a FIFO hung every command in SQLite's open (seen: `list` never
    returned, on main)."""
    fifo = tmp_path / "store.db"
    os.mkfifo(fifo)
    code, err = passhat("list", cwd=tmp_path, env={"PASSHAT_DB": str(fifo)})
    one_line(code, err, str(fifo), "FIFO", "--db")


def test_a_store_that_is_a_device_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "list", "--db", "/dev/null")
    one_line(r.code, r.err, "/dev/null", "not a file")
