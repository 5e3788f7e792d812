"""review53: defects found reviewing round 52's work (d397407..b8441e0), each with the
test that failed before its fix."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED
from test_runner import SLOW_ENV


def test_a_run_kept_as_a_ctrl_c_lands_on_its_agents_return_has_its_own_duration(
    tmp_path: Path,
) -> None:
    """A Ctrl-C as run 1's agent returned (execution.Returned) kept the run, its last
    step made as the runs stopped (`bounded`), but `ran.paused` was never set on that
    path: `_finish_now` added the whole perf_counter to the run's clock and the run was
    stored with a duration of minus that (-20111 s on this machine)."""
    db = tmp_path / "p.db"
    argv = [sys.executable, "-m", "passhat", "run", str(CLARIFY), "--case", SEED]
    argv += ["--agent", "agents_for_tests:signals_itself", "-k", "3", "--concurrency", "1"]
    argv += ["--db", str(db), "-q", "--name", "stopped"]
    env = {**SLOW_ENV, "PASSHAT_TEST_SIGNAL": "INT_END"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT run_index, duration_s FROM runs").fetchall()
    assert [index for index, _ in rows] == [1], done.stderr
    assert 0 <= rows[0][1] < 60, rows


@pytest.mark.skipif(
    sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"), reason="3.11's watcher"
)
def test_a_child_whose_pidfd_cannot_be_opened_is_still_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """_children._PidfdWatcher opened the child's pidfd after asyncio had started it, and
    asyncio adds the handler outside its own cleanup: out of descriptors (EMFILE) there,
    the spawn failed with the child started, never waited for nor killed (an agent
    running on past its run, unsupervised). It is now waited for by a thread, as 3.11's
    own watcher does."""
    import asyncio
    import errno

    from passhat import _children

    _children.child_watcher()
    if not isinstance(asyncio.get_child_watcher(), _children._PidfdWatcher):
        pytest.skip("the pidfd watcher is not installed here")

    def no_descriptor(pid: int) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    async def spawn() -> int:
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", "exit(7)")
        return await asyncio.wait_for(process.wait(), 30)

    monkeypatch.setattr(os, "pidfd_open", no_descriptor)
    assert asyncio.run(spawn()) == 7
