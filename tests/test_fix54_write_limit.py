"""A run's `write:` folder is bounded: an agent cannot fill the disk passhat's store is on.

A sandboxed run sees a `write:` folder (suite.yaml `agent: {write: [...]}` or
--agent-write) as the host's folder itself, bound writable: its work folder, /tmp and
/dev/shm are tmpfs of a set size (sandbox.WORK_BYTES, TMP_BYTES, SHM_BYTES), but what it
writes there is limited by nothing (no RLIMIT_FSIZE, no quota; isolation.py: "What no
level limits: CPU, memory and disk"). A run that writes without end fills the
filesystem the folder lies on, and the store with it when they share one: the next run's
transaction then fails for want of space.

What it should do: a per-run limit on what a run writes to its `write:` folders
(`--agent-write-limit SIZE`, default generous), the run stopped when it passes it and
recorded as the agent's (counted, graded on the state reached, marked `limit` like
--max-turns), the folder's growth held near the limit, passhat's store never filled.

Not done (round 16, fix54): no bound here is both small and safe. A process tree's
total writes to a host folder have no kernel limit an unprivileged passhat can set:
RLIMIT_FSIZE bounds one file (a run writes many); quotas need the filesystem's support
and root; a sized tmpfs or overlay upper layer would end the folder's being the host's
(what a run leaves there is meant to stay). The fix this test waits for: a watcher per
run that samples the growth of the run's `write:` folders (the filesystem's used blocks
from statvfs, O(1) a sample, where no other run writes the same filesystem; else the
folders' st_blocks walked) and RLIMIT_FSIZE set to the run's budget (so no one file
outruns a sample), the run's process group killed past the budget and the run recorded
`limit`; and a reserve of free space kept on the store's filesystem (a run whose
folder shares it stopped before the reserve is reached). See the report of fix54.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import run_seed
from passhat.agents import writes
from passhat.agents.writes import parse_size
from passhat.errors import InputError
from passhat.evaluation.planning import _sandbox
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_in, passhat_as

LIMIT_MIB = 8
WRITTEN_MIB = 64


def _fill(user: str, open_tmp: Path, *extra: str, how: str = "") -> tuple[int, Path, Path]:
    """One run of the agent writing WRITTEN_MIB to its write: folder (`how`: ",files", a
    file per mebibyte): (passhat's exit code, the folder, the store)."""
    suite, out = attack_in(open_tmp, "FILL", f"{WRITTEN_MIB}{how}", agent="fill_agent.py")
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "-q", "--no-report"]
    args += ["--db", str(db), "--agent-write", str(out), *extra]
    done = passhat_as(user, open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, out, db


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_control_a_run_writes_its_write_folder_without_bound(user: str, open_tmp: Path) -> None:
    """What the test below waits to see stopped: the agent's 64 MiB all written."""
    _, out, db = _fill(user, open_tmp)
    assert (out / "fill").stat().st_size == WRITTEN_MIB << 20
    with Store(db, create=False) as store:
        (r,) = store.runs(store.experiment("latest").id)
    assert r.output == {"wrote": WRITTEN_MIB, "error": None}, (r.status, r.error_message)


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_run_past_its_write_limit_is_stopped_and_recorded_as_the_agents(
    user: str, open_tmp: Path
) -> None:
    _, out, db = _fill(user, open_tmp, "--agent-write-limit", f"{LIMIT_MIB}MiB")
    written = sum(f.stat().st_size for f in out.iterdir())
    assert written <= (LIMIT_MIB + 1) << 20, written
    with Store(db, create=False) as store:
        (r,) = store.runs(store.experiment("latest").id)
    assert (r.status != "errored", r.error_type) == (True, "limit"), (r.status, r.error_type)
    assert "write" in (r.error_message or ""), r.error_message


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_run_writing_many_small_files_past_its_limit_is_stopped_by_the_watch(
    user: str, open_tmp: Path
) -> None:
    """No one file reaches the limit (RLIMIT_FSIZE does not stop it): the watch of the
    folder's growth does, within what the agent writes between two looks."""
    _, out, db = _fill(user, open_tmp, "--agent-write-limit", f"{LIMIT_MIB}MiB", how=",files")
    written = sum(f.stat().st_size for f in out.iterdir())
    assert LIMIT_MIB << 20 <= written <= (LIMIT_MIB + 24) << 20, written
    with Store(db, create=False) as store:
        (r,) = store.runs(store.experiment("latest").id)
    assert (r.status != "errored", r.error_type) == (True, "limit"), (r.status, r.error_message)
    assert "write: folders grew by" in (r.error_message or ""), r.error_message


@pytest.mark.parametrize(
    ("given", "size"),
    [("8MiB", 8 << 20), ("2GB", 2 * 10**9), ("512k", 512_000), (4096, 4096), (" 1.5GiB ", 3 << 29)],
)
def test_a_write_limit_is_read_as_bytes_and_recorded_so(given: object, size: int) -> None:
    assert parse_size(given) == size
    assert _sandbox({"write_limit": given}) == {"sandbox": {"write_limit": size}}


@pytest.mark.parametrize("given", ["lots", "8 parsecs", "-1MiB", 100, True])
def test_a_write_limit_that_is_no_size_is_refused_in_one_line(given: object) -> None:
    with pytest.raises(InputError, match=r"^--agent-write-limit .*: give (a size|at least)"):
        _sandbox({"write_limit": given})


@pytest.mark.parametrize(
    ("given", "fix"),
    [("9" * 400, "at most"), ("", "a size"), ("1001TiB", "at most"), (2**70, "at most")],
)
def test_a_write_limit_too_long_empty_or_past_what_a_shell_sets_is_refused(
    given: object, fix: str
) -> None:
    """400 nines were an OverflowError (a float's inf); past 2**55 blocks dash's `ulimit
    -f` wraps (36028797018963968 blocks sets 0): the limit is capped below it."""
    with pytest.raises(InputError, match=rf"^--agent-write-limit .*: give {fix}"):
        _sandbox({"write_limit": given})


@pytest.mark.parametrize("given", ["", "9" * 400, "36028797018963968k"])
def test_a_bad_write_limit_on_the_command_line_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, given: str
) -> None:
    """An empty --agent-write-limit was dropped: the run went on without any bound."""
    done = run_seed(capsys, "--db", str(tmp_path / "p.db"), "--agent-write-limit", given)
    assert done.code == 2, (done.code, done.err)
    assert "Traceback" not in done.err and "--agent-write-limit" in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1, done.err
    assert not (tmp_path / "p.db").exists()


def test_a_write_limit_past_passhats_own_hard_file_size_limit_is_refused() -> None:
    """A run's `ulimit -f` cannot raise the hard limit passhat has: every run failed in
    its prefix (exit 126, charged to the agent). Lowered in a child: it is for good."""
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))\n"
        "from passhat.evaluation.planning import _sandbox\n"
        "from passhat.errors import InputError\n"
        "assert _sandbox({'write_limit': '1MiB'}) == {'sandbox': {'write_limit': 1 << 20}}\n"
        "try:\n"
        "    _sandbox({'write_limit': '2MiB'})\n"
        "except InputError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "--agent-write-limit 2097152: passhat's own file size limit is 1048576 bytes"
    ), done.stdout
    assert "give at most 1048576" in done.stdout, done.stdout


async def test_a_folder_given_twice_or_inside_another_is_counted_once(tmp_path: Path) -> None:
    """The suite's `write:` and --agent-write naming one folder (or one inside the
    other) had its growth walked twice: the run was stopped at half its limit."""
    inner = tmp_path / "out" / "inner"
    inner.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "out")

    class Agent:
        def extra_paths(self, params: object) -> tuple[list[str], list[str]]:
            return [], [str(tmp_path / "out"), str(link), str(inner), str(tmp_path / "out")]

    stop = asyncio.Event()
    params = {"sandbox": {"write_limit": 3 << 20}}
    async with writes.watched(Agent(), params, stop):
        (inner / "f").write_bytes(os.urandom(2 << 20))  # 2 MiB: under 3, twice over it
        os.fsync(os.open(inner / "f", os.O_RDONLY))
        await asyncio.sleep(writes.SAMPLE_S * 3)
        assert not stop.is_set()
    assert writes.distinct([str(link), str(inner)]) == [str(tmp_path / "out")]
