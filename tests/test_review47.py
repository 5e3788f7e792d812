"""An outside review of round 9's merged code (review47): each test here failed on main
at 055a185 before the fix beside it (the four strict xfails of round 9 were fixed in
round 10, xfix48), or guards a fix of round 10 and says so in its docstring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from passhat.store import Store
from records_for_tests import experiment_record
from test_report_json_stream import unkind


def test_streamed_json_case_tokens_past_two_to_the_53(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report --json` for a pipe (streamed at every size since STREAMED_RUNS = 0) wrote
    each case's token totals from `Store.tallies`, which sums them in SQL as floats
    (`total`): past 2**53 a case's input_tokens came out rounded (27021597764222976
    against the run-by-run 27021597764222979) and no longer added up to the
    experiment's own total, which is summed exactly."""
    import passhat.cli.report as read

    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment_record(["a", "b"], 3))
        store.record_runs(
            [
                unkind("e1", case, i, "passed", input_tokens=2**53 + 1)
                for case in ("a", "b")
                for i in (1, 2, 3)
            ]
        )
    db = str(tmp_path / "p.db")
    monkeypatch.setattr(read, "STREAMED_RUNS", 10**9)
    whole = run_cli(capsys, "report", "e1", "--json", "--db", db)
    monkeypatch.setattr(read, "STREAMED_RUNS", 0)
    streamed = run_cli(capsys, "report", "e1", "--json", "--db", db)
    assert (streamed.code, streamed.out) == (whole.code, whole.out)
    assert f'"case":"a","runs":3,"input_tokens":{3 * (2**53 + 1)},' in streamed.out


def test_bounded_spaces_cuts_every_run_the_patterns_read_as_space() -> None:
    """`bounded_spaces` keeps the claims readers linear by cutting runs of spaces within a
    line, but `\\s` also matches U+001F, which is neither in its class nor a line break:
    a write-up with 6,000 of them after '| Seeds |' (twice) took 8.6 s to read, and 3,000
    2.2 s (quadratic; 60,000 would be some 15 minutes). Every character `\\s` matches
    within a line must be cut."""
    import re

    from passhat.sources.claims.reader import SPACE_RUN, bounded_spaces

    spaces = [
        c
        for c in map(chr, range(0x3001))  # U+3000 is the last
        if re.match(r"\s", c) and len(f"a{c}b".splitlines()) == 1
    ]
    for c in spaces:
        cut = bounded_spaces(f"| Seeds |{c * (SPACE_RUN * 4)}x")
        assert len(cut) <= len("| Seeds |x") + SPACE_RUN, repr(c)


def test_a_change_stays_told_to_the_experiment_that_saw_it(writer: Any) -> None:
    """Experiment A's grading found its suite changed (an agent rewrote the case file),
    then the file was put back as it was. Within an experiment a change stays told.
    Experiment B then starts on the same suite in the same process (a notebook or a
    service running two): B watches the files afresh, and A's finding still stands for
    A (a fix that cleared the finding when the files were put back let B's start clear
    it for A, whose later runs were then graded). Each experiment has its own guard."""
    from passhat import tamper
    from passhat.suite import load_suite

    del writer.suite["defaults"]["model"]
    root = writer.write()
    case_file = root / "cases" / "tiny.yaml"
    original = case_file.read_text()
    suite = load_suite(root)
    a = tamper.watch(suite)  # experiment A starts
    case_file.write_text(original.replace("T-1", "T-9") + "\n# rewritten\n")
    assert tamper.changed(a, case_file) is not None  # A's grading sees it
    case_file.write_text(original)  # put back
    assert tamper.changed(a, case_file) is not None  # sticky for A
    b = tamper.watch(suite)  # experiment B starts on the same suite, same process
    assert tamper.changed(b, case_file) is None  # B grades the suite as loaded and on disk
    assert tamper.changed(a, case_file) is not None  # A's finding must stand for A
    case_file.write_text(original.replace("T-1", "T-8"))
    assert tamper.changed(b, case_file) is not None  # and B sees a change of its own
    assert a is not None and b is not None
    a.close()
    b.close()


KEEPS_KEYRING = """
import ctypes, os, sys
import passhat
keyctl = {"x86_64": 250}.get(os.uname().machine, 219)
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(keyctl, 1, b"passhat-user") <= 0:  # KEYCTL_JOIN_SESSION_KEYRING
    sys.exit("cannot make a session keyring: errno %d" % ctypes.get_errno())
def session():  # KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING
    return libc.syscall(keyctl, 0, ctypes.c_long(-3), 0)
before = session()
result = passhat.evaluate(sys.argv[1], k=1, db=sys.argv[2], isolation="namespace", concurrency=1)
print(len(result.runs()), before == session())
"""


def test_evaluate_leaves_the_callers_session_keyring_as_it_was(user: str, open_tmp: Path) -> None:
    """b046ac3 seals 'the thread that starts sandboxed runs' from passhat's session keyring
    ('passhat's other threads keep the login's keyring'). For `passhat run` that thread is
    passhat's own; but a script or notebook calling `passhat.evaluate` (no loop running)
    has the experiment's loop on its own thread, so after one sandboxed experiment that
    thread's session keyring is an anonymous one with permissions 0: the user's keys (a
    Kerberos KEYRING: ticket, a token cached with keyctl) are gone for it and for every
    process it starts afterwards."""
    import json
    import os
    import subprocess

    from agent_python import PYTHON, SITE
    from conftest import SuiteWriter
    from passhat.agents import isolation
    from sandbox_helpers import ROOT, unprivileged

    if isolation.unavailable("namespace") is not None or PYTHON is None:
        pytest.skip("no sandbox for agents here")
    if os.uname().machine not in ("x86_64", "aarch64", "riscv64"):
        pytest.skip("keyctl's number known for x86_64 and the generic table only")
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), "-c", "print('{}')"]
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    # as passhat_as runs passhat: root, and nobody (a script of nobody's, its own keyring)
    prefix = unprivileged() if user == "unprivileged" else []
    paths = os.pathsep.join([str(ROOT / "src"), SITE])
    env = {"PATH": os.environ["PATH"], "HOME": str(open_tmp), "PYTHONPATH": paths}
    done = subprocess.run(
        [*prefix, str(PYTHON), "-c", KEEPS_KEYRING, str(suite), str(open_tmp / "p.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=open_tmp,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "True"]


def test_a_store_migrated_after_its_runs_is_still_covered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ccbdbb7 covers an earlier experiment's store beside the agent (every score in it
    names the goal's items), telling a store by passhat's table texts within its first
    64 KiB. SQLite puts the schema's pages where there is room: a store written by a
    passhat of 8 migrations (before run_summaries), holding 300 runs, then opened by
    today's (migrations 9-14 applied) has both texts past 200 KiB (214,368 and 216,165 of
    278,528 bytes): is_store said False, so secret_files left it in every run's view."""
    import sqlite3

    import passhat.store as store_package
    import passhat.store.schema as schema
    from passhat.agents import lookout

    path = tmp_path / "runs" / "model-a.db"
    path.parent.mkdir()
    today = list(schema.MIGRATIONS)
    monkeypatch.setattr(schema, "MIGRATIONS", today[:8])  # an older passhat's store
    monkeypatch.setattr(store_package, "MIGRATIONS", today[:8])
    with Store(path) as store:
        store.create_experiment(experiment_record([f"c{i}" for i in range(100)], 3))
        store.record_runs(
            [unkind("e1", f"c{i}", j, "passed") for i in range(100) for j in (1, 2, 3)]
        )
    monkeypatch.setattr(schema, "MIGRATIONS", today)
    monkeypatch.setattr(store_package, "MIGRATIONS", today)
    with Store(path) as store:  # today's passhat opens it: the rest of the migrations
        assert len(store.migrations()) == len(today)
        assert len(store.summaries("e1")) == 300
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert str(path) in lookout.secret_files(str(tmp_path))


def test_a_store_of_an_older_passhat_never_migrated_is_covered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store written by a passhat of 8 migrations and never opened by a later one has
    no run_summaries table: the look for 'CREATE TABLE run_summaries' left it, and every
    score it holds, in view. SQLite is asked for passhat's first tables (experiments,
    runs), which every store has; a user's own SQLite file with tables of those names
    but other columns stays in view."""
    import sqlite3

    import passhat.store as store_package
    import passhat.store.schema as schema
    from passhat.agents import lookout

    old = tmp_path / "model-a.db"
    eight = list(schema.MIGRATIONS)[:8]
    monkeypatch.setattr(schema, "MIGRATIONS", eight)
    monkeypatch.setattr(store_package, "MIGRATIONS", eight)
    with Store(old) as store:
        store.create_experiment(experiment_record(["c"], 1))
        store.record_runs([unkind("e1", "c", 1, "passed")])
    mine = tmp_path / "results.db"
    with sqlite3.connect(mine) as db:
        db.execute("CREATE TABLE experiments (id TEXT, lr REAL)")
        db.execute("CREATE TABLE runs (experiment TEXT, loss REAL)")
    db.close()
    found = lookout.secret_files(str(tmp_path))
    assert str(old) in found
    assert str(mine) not in found


def test_a_fifo_put_over_a_store_while_sqlite_opens_it_does_not_hold_the_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite opens a file by its name, without O_NONBLOCK: a FIFO renamed over a store
    between the regular-file check and SQLite's open blocks that open. The look gives
    SQLite STORE_LOOK_S, then frees its thread (opens the FIFO for writing) and judges
    what is at the path now by its first pages (a FIFO: no store). Here SQLite's open is
    the swap then a blocking open at the store's path (the race, made certain). (A guard
    of round 10's look; failing with _free_reader a no-op.)"""
    import os
    import threading
    import time

    import passhat.store.schema as schema
    from passhat.agents import sandbox

    path = tmp_path / "passhat.db"
    with Store(path):
        pass
    fifo = tmp_path / "swapped"
    os.mkfifo(fifo)
    monkeypatch.setattr(sandbox, "STORE_LOOK_S", 0.2)

    def swapped_then_opened(at: str, seconds: float, *, live: bool) -> bool | None:
        os.rename(at, at + ".kept")
        os.rename(fifo, at)
        with open(at, "rb") as stuck:  # blocks until a writer comes, as SQLite's open
            stuck.read()
        return None

    monkeypatch.setattr(schema, "holds_passhat_tables", swapped_then_opened)
    started = time.monotonic()
    assert not sandbox.is_store(str(path))
    assert time.monotonic() - started < 10  # not a speed goal: unfreed, it never ends

    def looking() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "passhat-store-look"]

    deadline = time.monotonic() + 10
    while looking() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not looking(), "SQLite's thread was left blocked"


def test_a_schema_sqlite_cannot_read_in_time_leaves_no_thread_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look's deadline was a progress handler, which SQLite calls between the steps
    of a statement, not while it parses one: a schema row of one view whose text is an
    8 MB list with no space in it (`1 IN (1,1,...)`; Connection.interrupt() is not seen
    either, the parser looks for it at spaces only) is parsed for seconds, and the look's
    thread went on after the look gave up, one such thread per such file (fix49a; seen
    failing on main at 14e7e39). SQLite is now refused any schema text or value longer
    than a store ever holds (schema.STORE_SQL_MAX), so it gives up on that row at once."""
    import sqlite3
    import threading

    from passhat.agents import sandbox

    path = tmp_path / "passhat.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE experiments (fingerprint TEXT)")
    con.execute("PRAGMA writable_schema = ON")
    view = "CREATE VIEW v AS SELECT 1 WHERE 1 IN (" + ",".join(["1"] * 4_000_000) + ")"
    con.execute("INSERT INTO sqlite_master VALUES ('view', 'v', 'v', 0, ?)", (view,))
    con.commit()
    con.close()
    monkeypatch.setattr(sandbox, "STORE_LOOK_S", 0.1)
    assert not sandbox.is_store(str(path))
    assert not [t for t in threading.enumerate() if t.name == "passhat-store-look"]


def test_a_file_with_a_sqlite_header_sqlite_cannot_read_is_judged_by_its_first_pages(
    tmp_path: Path,
) -> None:
    """A file that starts as SQLite but is not one (garbage after the header) is not
    read past its first pages, and is no store; one that also holds passhat's table
    texts there is covered, as before SQLite was asked. (A guard of round 10's look:
    the same on main.)"""
    from passhat.agents import sandbox

    junk = tmp_path / "passhat.db"
    junk.write_bytes(sandbox.SQLITE_MAGIC + b"\xff" * 50_000)
    assert not sandbox.is_store(str(junk))
    marked = tmp_path / "marked.db"
    marked.write_bytes(sandbox.SQLITE_MAGIC + b"\xff" * 100 + b" ".join(sandbox.STORE_MARKS))
    assert sandbox.is_store(str(marked))


SECRET_PEEK = """import json, os
env = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".env")
try:
    with open(env) as f:
        seen = f.read()
except OSError:
    seen = None
print(json.dumps({"env": seen}))
"""


def test_a_symlinked_program_in_a_writable_folder_runs(user: str, open_tmp: Path) -> None:
    """An agent whose program is a symlink (w/agent/agent.py -> ../real/agent.py) in a
    folder the suite made writable (write: [w]; the link's target is outside it, so
    553a73c's 'holds its own program' check lets it through): every run was errored
    agent_exit, bwrap saying "Can't make symlink at .../agent.py: File exists", at
    --isolation namespace, where the same suite runs at process. The link is in view
    with its folder; a secret beside it (w/.env) is still covered. Root and nobody."""
    import json
    import os

    from agent_python import PYTHON
    from conftest import SuiteWriter
    from passhat.agents import isolation
    from sandbox_helpers import passhat_as

    if isolation.unavailable("namespace") is not None or PYTHON is None:
        pytest.skip("no sandbox for agents here")
    (open_tmp / "real").mkdir()
    (open_tmp / "real" / "agent.py").write_text(SECRET_PEEK)
    (open_tmp / "w" / "agent").mkdir(parents=True)
    (open_tmp / "w" / ".env").write_text("KEY=answer\n")
    link = open_tmp / "w" / "agent" / "agent.py"
    os.symlink(open_tmp / "real" / "agent.py", link)
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(link)],
        "write": [str(open_tmp / "w")],
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        if not item.is_symlink():
            item.chmod(0o777 if item.is_dir() else 0o666)
    for level, env in (("namespace", None), ("process", "KEY=answer\n")):  # process: control
        db = open_tmp / f"{level}.db"
        args = ["-k", "2", "--concurrency", "1", "--timeout", "60", "--isolation", level]
        done = passhat_as(user, open_tmp, "run", str(suite), *args, "--db", str(db), "-q")
        assert done.returncode in (0, 1), done.stderr[-2000:]
        with Store(db, create=False) as store:
            runs = store.runs(store.experiment("latest").id)
        assert [r.error_type for r in runs] == [None, None], [r.error_message for r in runs]
        assert [r.output for r in runs] == [{"env": env}] * 2, level


HANGS = """import os, sys, time
folder = sys.argv[1]
open(os.path.join(folder, "up-" + os.urandom(8).hex()), "w").close()
time.sleep(120)
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_sandboxed_round_run_on_passhats_own_thread(
    sig: str, open_tmp: Path
) -> None:
    """Runs sealed from the caller's keyring start on a thread of passhat's own (the
    round's loop runs there, not on the caller's): Ctrl-C and SIGTERM reach the main
    thread, which stops that loop as they stopped it on the main thread, one line and
    no traceback, exit 130 / 143. (A guard of round 10's thread: the same on main, where
    the loop ran on the main thread; failing without the signals passed on.)"""
    import json
    import signal
    import subprocess
    import sys
    import time

    from agent_python import PYTHON
    from conftest import SuiteWriter
    from passhat.agents import isolation

    if isolation.unavailable("namespace") is not None or PYTHON is None:
        pytest.skip("no sandbox for agents here")
    up = open_tmp / "up"
    up.mkdir()
    (open_tmp / "agent").mkdir()
    (open_tmp / "agent" / "hang.py").write_text(HANGS)
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(open_tmp / "agent" / "hang.py"), str(up)],
        "write": [str(up)],
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    args = ["-k", "2", "--concurrency", "2", "--isolation", "namespace", "-q"]
    argv = [sys.executable, "-m", "passhat", "run", str(suite), *args]
    proc = subprocess.Popen(
        [*argv, "--db", str(open_tmp / "p.db")], stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(up.glob("up-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(list(up.glob("up-*"))) == 2, "every run's agent must be up"
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 128 + getattr(signal, sig), err
    assert "Traceback" not in err
    assert err.strip().splitlines()[0].startswith("interrupted: 0 runs recorded")
