"""An earlier experiment's answers kept beside the agent in another form are out of
reach too (round 10's outside attack).

Round 9 covered, in every folder a run sees, a passhat store named like one (*.db,
*.sqlite, *.sqlite3, *.db3, passhat*) and a report passhat wrote, kept as .json, .html
or .htm. Every other form of the same answers stayed readable: `passhat export` of the
runs (JSON Lines, CSV, Parquet: each run's `verdict_details` names the goal's items it
missed), `report --json`, the terminal report, `show --json` kept under another name (`>
results.txt`: the item-stability table names every goal item), `--junit-xml` (its failure
text names each missed item), and a copy of a store under a name of
no database (`cp passhat.db backup`, a hard link `store.bak`). Now a file is told by
its content, whatever its name (sandbox.is_report, is_store). As root and as nobody;
`process` is the control.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS


def _open(folder: Path) -> None:
    """Every file and folder under `folder` opened to every user (the next passhat's user,
    and a root passhat's run uids, may be others)."""
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)


def _suite(folder: Path, reads: list[Path], name: str = "suite", **agent: object) -> Path:
    """A suite in `folder`/`name` whose agent, `folder`/work/agent.py, reads `reads`
    (`agent`: more of its spec, its env's other ATTACK_* variables among them)."""
    (folder / "work").mkdir(exist_ok=True)
    shutil.copyfile(TESTS / "attack48_agent.py", folder / "work" / "agent.py")
    writer = SuiteWriter(folder / name)
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    env = {"ATTACK_READ": ",".join(str(p) for p in reads), **agent.pop("env", {})}  # type: ignore[dict-item]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(folder / "work" / "agent.py")],
        "env": env,
        **agent,
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


def _read(user: str, folder: Path, suite: Path, db: Path, level: str) -> dict[str, str | None]:
    """What the one run of `passhat run SUITE` at `level` as `user` read of its paths."""
    _open(folder)
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    done = passhat_as(user, folder, "run", str(suite), *args, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    read: dict[str, str | None] = run.output["read"]
    return read


def _answers(user: str, folder: Path, old: Path) -> dict[str, Path]:
    """An earlier experiment's answers, in `folder`/work in every form passhat writes
    them, under names of no store or report: name -> path."""
    work = folder / "work"
    forms = {
        "export jsonl": (work / "runs.jsonl", ["export", "latest", "-o"]),
        "export json": (work / "runs.json", ["export", "latest", "-o"]),
        "export csv": (work / "runs.csv", ["export", "latest", "-o"]),
        "report --json, kept as text": (work / "results.txt", ["report", "latest", "--json"]),
        "the terminal report, kept as text": (work / "notes.md", ["report", "latest"]),
        "show --json": (work / "run.txt", ["show", "latest", "tiny-001", "1", "--json"]),
        "--junit-xml": (work / "junit.xml", ["report", "latest", "--junit-xml"]),
    }
    if _has_pyarrow():
        forms["export parquet"] = (work / "runs.parquet", ["export", "latest", "-o"])
    made: dict[str, Path] = {}
    for name, (path, command) in forms.items():
        out = [str(path)] if command[-1] in ("-o", "--junit-xml") else []
        done = passhat_as(user, folder, *command, *out, "--db", str(old))
        assert done.returncode == 0, done.stderr
        if not out:
            path.write_text(done.stdout, encoding="utf-8")
        made[name] = path
    copy = work / "backup"
    shutil.copyfile(old, copy)
    made["a copy of the store"] = copy
    os.link(copy, work / "store.bak")
    made["a hard link to that copy"] = work / "store.bak"
    return made


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def test_an_earlier_experiments_answers_under_any_name_are_out_of_reach(
    user: str, open_tmp: Path
) -> None:
    work = open_tmp / "work"
    own = [work / "mine.csv", work / "mine.jsonl", work / "mine.txt"]  # the agent's own
    names = [
        "runs.jsonl",
        "runs.json",
        "runs.csv",
        "results.txt",
        "notes.md",
        "run.txt",
        "junit.xml",
        "runs.parquet",
        "backup",
        "store.bak",
    ]
    suite = _suite(open_tmp, [*own, *(work / n for n in names)])
    own[0].write_text("experiment,case,run\nx,y,1\n")
    own[1].write_text('{"experiment": "mine", "run": 1}\n')
    own[2].write_text("experiment 1: the coupon field\n")
    old = open_tmp / "old.db"
    _read(user, open_tmp, suite, old, "process")  # the earlier experiment
    answers = _answers(user, open_tmp, old)
    for name, path in answers.items():
        text = path.read_bytes()
        assert b"AC2:unverifiable" in text or path.suffix == ".parquet" or b"SQLite" in text, name
    seen = _read(user, open_tmp, suite, open_tmp / "new.db", "namespace")
    readable = [name for name, path in answers.items() if seen[str(path)] is not None]
    assert readable == [], f"an earlier experiment's answers were readable: {readable}"
    assert all(seen[str(p)] is not None for p in own), "the agent's own files were covered"
    control = _read(user, open_tmp, suite, open_tmp / "control.db", "process")
    assert all(control[str(path)] is not None for path in answers.values())


def test_an_earlier_store_inside_an_archive_is_out_of_reach(user: str, open_tmp: Path) -> None:
    """A store, or an export of its runs, kept inside an archive (.tar, .zip stored or
    deflated, .tar.gz, .tgz, a store gzipped alone) was read by opening the archive, which
    the look for answers did not do. It now looks at the members' first bytes, within
    bounds (agents/archives.py); an archive of the agent's own files stays in view."""
    import gzip
    import tarfile
    import zipfile

    work = open_tmp / "work"
    archives = {
        name: work / name
        for name in ("runs.tar", "runs.zip", "packed.zip", "runs.tar.gz", "runs.tgz", "old.db.gz")
    }
    mine = work / "mine.zip"
    suite = _suite(open_tmp, [*archives.values(), mine])
    old = open_tmp / "old.db"
    _read(user, open_tmp, suite, old, "process")
    export = open_tmp / "runs.jsonl"
    made = passhat_as(user, open_tmp, "export", "latest", "--db", str(old), "-o", str(export))
    assert made.returncode == 0, made.stderr
    with tarfile.open(archives["runs.tar"], "w") as tar:
        tar.add(old, arcname="old.db")
    with zipfile.ZipFile(archives["runs.zip"], "w") as stored:
        stored.write(old, arcname="old.db")
    with zipfile.ZipFile(archives["packed.zip"], "w", zipfile.ZIP_DEFLATED) as packed:
        packed.write(export, arcname="results/runs.txt")
    for name in ("runs.tar.gz", "runs.tgz"):
        with tarfile.open(archives[name], "w:gz") as tar:
            tar.add(export, arcname="notes.txt")
            tar.add(old, arcname="backup")
    archives["old.db.gz"].write_bytes(gzip.compress(old.read_bytes()))
    with zipfile.ZipFile(mine, "w", zipfile.ZIP_DEFLATED) as own:
        own.writestr("data.csv", "experiment,case,run\nx,y,1\n")
    seen = _read(user, open_tmp, suite, open_tmp / "new.db", "namespace")
    assert [name for name, path in archives.items() if seen[str(path)] is not None] == []
    assert seen[str(mine)] is not None, "the agent's own archive was covered"
    control = _read(user, open_tmp, suite, open_tmp / "control.db", "process")
    assert all(control[str(path)] is not None for path in archives.values())


def test_an_earlier_store_held_open_is_out_of_reach(user: str, open_tmp: Path) -> None:
    """While another connection holds a store open (`passhat view` watching it, the
    experiment still running, or killed), its tables and every run it wrote are in its
    write-ahead log alone: the main file is a bare SQLite header, not taken for a store,
    and the log, `old.db-wal`, was readable whole (sandbox.is_store_wal)."""
    import sqlite3

    work = open_tmp / "work"
    old = work / "old.db"
    suite = _suite(open_tmp, [old, Path(f"{old}-wal")])
    with Store(old):
        hold = sqlite3.connect(old)  # as `passhat view --db old.db` would, from the start
        hold.execute("SELECT count(*) FROM sqlite_master").fetchall()
    try:
        _read(user, open_tmp, suite, old, "process")  # the earlier experiment, into old.db
        log = Path(f"{old}-wal").read_bytes()
        assert b"AC2:unverifiable" in log and b"AC2:unverifiable" not in old.read_bytes()
        seen = _read(user, open_tmp, suite, open_tmp / "new.db", "namespace")
        assert seen == {str(old): None, f"{old}-wal": None}, "the held store's log was readable"
        control = _read(user, open_tmp, suite, open_tmp / "control.db", "process")
        assert control[f"{old}-wal"] is not None
    finally:
        hold.close()


def test_a_store_made_after_the_experiment_started_is_out_of_reach(
    user: str, open_tmp: Path
) -> None:
    """What a run sees was decided once, before an experiment's first run
    (CommandAgent.view): a store and an export a second experiment made beside a long
    one, in a folder in view, were readable by the first experiment's later runs. The
    look is now made again before each run, on what changed (agents/lookout.py). The
    first experiment has two runs, one after the other: the second experiment makes its
    store and export while the first run waits (made during a run, they are that run's
    to see: its folders are bound live, docs/command-agents.md), and the second run,
    started after, must find them covered."""
    import threading

    work, flags = open_tmp / "work", open_tmp / "flags"
    flags.mkdir()
    # the second experiment's store (0600: a root passhat's run uids cannot open it, an
    # unprivileged passhat's runs can), and an export of its runs
    later, export = work / "later.db", work / "later.jsonl"
    started, done = flags / "started", work / "later-done"
    suite = _suite(
        open_tmp,
        [later, export],
        env={"ATTACK_TOUCH": str(started), "ATTACK_AWAIT": str(done)},
        write=[str(flags)],
    )
    other = _suite(open_tmp, [], name="other")
    _open(open_tmp)
    db = open_tmp / "new.db"
    args = ["-k", "2", "--concurrency", "1", "--timeout", "60", "--isolation", "namespace"]
    ran: list[int] = []
    first = threading.Thread(
        target=lambda: ran.append(
            passhat_as(user, open_tmp, "run", str(suite), *args, "--db", str(db), "-q").returncode
        )
    )
    first.start()
    try:
        for _ in range(600):  # the first experiment's first run has started: its view is made
            if started.exists() or not first.is_alive():
                break
            first.join(0.1)
        assert started.exists(), "the first experiment's run never started"
        _read(user, open_tmp, other, later, "process")  # the second, beside it
        made = passhat_as(user, open_tmp, "export", "latest", "--db", str(later), "-o", str(export))
        assert made.returncode == 0 and b"AC2:unverifiable" in export.read_bytes(), made.stderr
    finally:
        done.write_text("done")
        first.join(120)
    assert ran and ran[0] in (0, 1)
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    assert [r.run_index for r in runs] == [1, 2]
    assert runs[1].output is not None, runs[1].error_message
    seen = runs[1].output["read"]
    assert seen == {str(later): None, str(export): None}, "made after the experiment started"


def test_the_look_opens_no_device_or_fifo_a_link_in_view_points_to(tmp_path: Path) -> None:
    """A run may leave links in a `write:` folder, which the next experiment's look for
    answers reads: `report.json` or `passhat.db` linked to /dev/watchdog (opened, it
    starts the machine's watchdog: a reboot unless it is fed), a tape (opened, it
    rewinds) or a FIFO (opened, it frees a writer waiting on it). The look checked the
    kind of file only once it had it open (sandbox._head: open, then fstat); it now
    passes over what is not a regular file before opening it. A FIFO stands in for the
    device: inotify says whether anything opened it."""
    import ctypes

    from passhat.agents.lookout import secret_files

    libc = ctypes.CDLL(None, use_errno=True)
    in_open, in_nonblock = 0x20, 0o4000
    (tmp_path / "view").mkdir()
    device = tmp_path / "device"
    os.mkfifo(device)
    for name in ("report.json", "passhat.db", "runs.csv", "backup"):
        (tmp_path / "view" / name).symlink_to(device)
    watch = libc.inotify_init1(in_nonblock)
    assert watch >= 0 and libc.inotify_add_watch(watch, str(device).encode(), in_open) >= 0
    try:
        assert secret_files(str(tmp_path / "view")) == []
        try:
            events = os.read(watch, 4096)
        except BlockingIOError:
            events = b""
        assert events == b"", "the look opened the FIFO a link in view points to"
    finally:
        os.close(watch)
