"""A store in a folder passhat's user may pass through but not list, or in a file or folder
closed to that user in a `write:` folder, was left in view (round 15's outside attack).

The look for answers (agents/lookout.py) lists every folder in view and reads every file's
first bytes. A folder it could not list (EACCES) was taken for an empty one, and a file it
could not open for none of passhat's: only running out of descriptors or memory (SCARCE)
failed closed. An unprivileged passhat and its agent are one uid, so what the look cannot
read the agent cannot either, except where it may pass or change the mode:

- a folder of mode `--x` (0311, 0711: a home folder's usual mode) cannot be listed but
  can be passed through: the agent opened `vault/passhat.db`, an earlier experiment's
  store, by its name (the default one), and read the goal's items;
- in a `write:` folder the agent owns what passhat's user owns: it `chmod`s a store of
  mode 000, or a folder of mode 000 holding one, and reads it.

Tried for real as an unprivileged passhat (nobody) at `namespace`: both read, SQLite's
header and all; at `process` the same (the control). A root passhat's look lists and reads
whatever the mode, and each run is a uid of its own: held.

Fixed: a folder the look cannot list (for any reason but its being gone, or passhat being
out of descriptors: then the look raises, as before) is covered whole, and a regular file
it cannot open is covered, as a store is: the look fails closed on what it cannot see.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from passhat.agents.lookout import Looks
from passhat.records import RunRecord
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, NOBODY, attack_suite, open_to_all, runs_at

SQLITE = b"SQLite format 3\0".hex()
UNPRIVILEGED = pytest.mark.parametrize("user", ["unprivileged"], indirect=True)


def _store(path: Path) -> Path:
    """An earlier experiment's store (empty of runs: its tables are what tell it) at `path`."""
    with Store(path):
        pass
    return path


def _as_nobody(path: Path, mode: int) -> None:
    """`path` made the unprivileged passhat's (nobody under root), with `mode`."""
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    path.chmod(mode)


def _as_nobody_look(folder: Path, last: bool) -> list[str]:
    """What a look (Looks.found) over `folder` made as nobody covers, in a child process:
    the tests run as root, who lists and reads whatever the mode."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            found = Looks(last=[str(folder)] if last else []).found(str(folder))
            os.write(write_fd, json.dumps(found).encode())
        except BaseException as error:
            os.write(write_fd, json.dumps(repr(error)).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    found = json.loads(said)
    assert isinstance(found, list), found  # not the look's error
    return sorted(found)


@pytest.mark.skipif(os.geteuid() != 0, reason="looks as nobody from root")
def test_the_look_covers_what_it_cannot_list_or_read(open_tmp: Path) -> None:
    vault, shut = open_tmp / "vault", open_tmp / "shut"
    for folder in (vault, shut):
        folder.mkdir()
        _as_nobody(_store(folder / "passhat.db"), 0o644)
    closed = _store(open_tmp / "closed.db")
    plain = open_tmp / "plain.txt"
    plain.write_text("nothing of passhat's")
    _as_nobody(plain, 0o644)
    _as_nobody(open_tmp, 0o777)
    _as_nobody(vault, 0o311)  # passed through, not listed
    _as_nobody(shut, 0o000)
    _as_nobody(closed, 0o000)
    assert _as_nobody_look(open_tmp, last=True) == sorted(map(str, (vault, shut, closed)))
    shut.chmod(0o700)  # listed again: its store alone is covered
    covered = _as_nobody_look(open_tmp, last=False)
    assert str(shut / "passhat.db") in covered and str(shut) not in covered
    assert str(plain) not in covered


def _opened(user: str, open_tmp: Path, level: str) -> RunRecord:
    """A store in a folder nobody may pass through but not list, beside the agent's
    program; a store of mode 000 and a folder of mode 000 holding one in its `write:`
    folder, nobody's: the one run, at `level`, of an agent that reads each."""
    work, out = open_tmp / "work", open_tmp / "out"
    vault, shut, closed = work / "vault", out / "shut", out / "closed.db"
    env = {"ATTACK53_READ": str(vault / "passhat.db"), "ATTACK53_CHMOD": f"{closed},{shut}"}
    suite = attack_suite(work, env, "attack53_agent.py")
    out.mkdir()
    vault.mkdir()
    shut.mkdir()
    for store in (vault / "passhat.db", shut / "passhat.db", closed):
        _store(store)
    open_to_all(open_tmp)
    for path, mode in ((vault, 0o311), (shut, 0o000), (closed, 0o000), (out, 0o777)):
        _as_nobody(path, mode)
    (run,) = runs_at(user, open_tmp, suite, level, "--no-report", "--agent-write", str(out), k=1)
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    return run


def _read_stores(run: RunRecord) -> list[str]:
    """The paths whose bytes the agent read were a store's."""
    said = run.output or {}
    seen = {**said.get("read", {}), **said.get("chmod", {})}
    return sorted(path for path, head in seen.items() if head.startswith(SQLITE))


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_sandboxed_run_reads_no_store_in_a_folder_closed_to_passhats_user(
    user: str, open_tmp: Path
) -> None:
    run = _opened(user, open_tmp, "namespace")
    assert _read_stores(run) == [], run.output


@ATTACK_MARKS[1]
@UNPRIVILEGED  # the files are of the unprivileged passhat's user
def test_control_at_process_level_the_closed_stores_are_read(user: str, open_tmp: Path) -> None:
    run = _opened(user, open_tmp, "process")
    work, out = open_tmp / "work", open_tmp / "out"
    read = [work / "vault" / "passhat.db", out / "closed.db", out / "shut" / "passhat.db"]
    assert _read_stores(run) == sorted(map(str, read)), run.output
