"""A root passhat's look for stores wrote and chowned a file a run pointed it at (round 13).

Before each run passhat looks for stores in the folders in view, asking SQLite of every
file that starts as one; a file whose WAL holds pages is opened live (`mode=ro`), and
SQLite then opens its `-shm` for writing, writes its index there and, run by root,
chowns it to the database's owner. A run left, in its `write:` folder, an SQLite file of
its own in WAL mode whose `-shm` is a hard link to another file of that folder (one the
kernel let it link: root's, mode 0666). Tried for real as root at `namespace`: the look
before the next run overwrote that file with 32 KiB of SQLite's index and gave it to the
run's uid. Now SQLite is asked on its thread as the file's owner (sandbox.as_owner:
setfsuid/setfsgid, which take the thread's file capabilities), so it does only what
that owner could: a root file stays root's, and one it could not write is not written.
An unprivileged passhat is the agent's own user already; at `process` the agent is
passhat's user itself, so the look is passhat's sandbox's alone.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from passhat.agents import sandbox
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_in, passhat_as

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the tests do not run as root here")
RUN_UID = 1234


def _left(folder: Path, name: str, victim: Path) -> Path:
    """`folder`/`name`: an SQLite file of RUN_UID's in WAL mode, its WAL not yet
    checkpointed, whose -shm is a hard link to `victim`, as a run left it."""
    path = folder / name
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=wal")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE notes (text)")
    db.commit()
    shutil.copyfile(path, folder / "copy")  # the file and its WAL as the open connection left them
    shutil.copyfile(f"{path}-wal", folder / "copy-wal")
    db.close()
    os.replace(folder / "copy", path)
    os.replace(folder / "copy-wal", f"{path}-wal")
    os.unlink(f"{path}-shm") if os.path.exists(f"{path}-shm") else None
    os.link(victim, f"{path}-shm")
    for item in (path, Path(f"{path}-wal")):
        os.chown(item, RUN_UID, RUN_UID)
    return path


def _asked(path: Path) -> bool:
    said: list[bool] = []
    thread = threading.Thread(target=lambda: said.append(sandbox.is_store(str(path))))
    thread.start()  # is_store asks SQLite on a thread of its own; this one stays root
    thread.join()
    return said[0]


@ROOT_ONLY
@pytest.mark.parametrize("mode", [0o666, 0o644])
def test_the_look_at_a_file_with_a_wal_writes_and_chowns_nothing_its_owner_could_not(
    tmp_path: Path, mode: int
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("the user's own notes\n")
    victim.chmod(mode)
    path = _left(tmp_path, "notes.db", victim)
    assert _asked(path) is False  # no passhat tables in it: not a store
    info = victim.stat()
    assert (info.st_uid, info.st_gid) == (0, 0), info
    if mode == 0o644:  # the owner could not write it: left as it was
        assert victim.read_text() == "the user's own notes\n"
    # the ids were the look's thread's alone: this one's file-system uid is still root's
    status = Path("/proc/thread-self/status").read_text().splitlines()
    assert [line.split()[4] for line in status if line.startswith("Uid:")] == ["0"]


@ROOT_ONLY
@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_run_cannot_have_a_root_passhat_chown_a_file_of_its_write_folder(
    open_tmp: Path,
) -> None:
    suite, out = attack_in(open_tmp, "ATTACK_SHM", "shared.txt")
    shared = out / "shared.txt"
    shared.write_text("notes every user may edit\n")
    shared.chmod(0o666)
    db = open_tmp / "p.db"
    args = ["-k", "2", "--concurrency", "1", "--timeout", "120", "--isolation", "namespace"]
    args += ["--db", str(db), "-q", "--agent-write", str(out), "--no-report"]
    done = passhat_as("root", open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {r.run_index: r for r in store.runs(store.experiment("latest").id)}
    assert runs[1].output["shm"]["wal"] > 0, runs[1].output  # the run left its trap
    assert runs[2].status != "errored", (runs[2].error_type, runs[2].error_message)
    assert shared.stat().st_uid == 0, shared.stat()  # looked at before run 2: still root's
