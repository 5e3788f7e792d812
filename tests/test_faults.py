"""The fault matrix: whatever a run, the store or the process does, the experiment
ends cleanly and every finished run is kept, counted once.

Each test names the fault it guards (issue #14). Runs and stores are real: the
`passhat` command in-process or in a subprocess, SQLite on disk.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import CLARIFY as CLARIFY_DIR
from cli_helpers import SEED as SEED_ID
from cli_helpers import run_cli, run_seed

pytest_plugins = ["fakeserver"]


def report(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, Any]:
    r = run_cli(capsys, "report", "latest", "--json", "--db", str(db))
    assert r.code == 0, r.err
    data: dict[str, Any] = json.loads(r.out)
    return data


def stored_runs(db: Path) -> list[sqlite3.Row]:
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        return con.execute("SELECT * FROM runs ORDER BY run_index").fetchall()


_WARM: list[Path] = []


def warm_up(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    """One `passhat run` in this process before a timed one, so the clock counts the
    experiment and not the first import of what a run loads: a test run first in its
    process took 11 s at load 29 (1.1 s after another test had run)."""
    if not _WARM:
        db = folder / "warm.db"
        r = run_seed(capsys, "--agent", "agents_for_tests:perfect", "--db", str(db), "-q")
        assert r.code in (0, 1), r.err
        _WARM.append(db)


def run_agent(
    capsys: pytest.CaptureFixture[str], db: Path, agent: str, *args: str
) -> tuple[int, str, float]:
    warm_up(capsys, db.parent)
    started = time.monotonic()
    r = run_seed(capsys, "--agent", f"agents_for_tests:{agent}", "--db", str(db), "-q", *args)
    return r.code, r.err, time.monotonic() - started


# -- a run that misbehaves ends as one errored run


def test_a_sync_agent_runs_in_a_thread_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "sync_perfect", "-k", "3")
    assert code == 0, err
    assert [r["status"] for r in stored_runs(db)] == ["passed"] * 3


def test_a_blocking_sync_agent_times_out_at_its_deadline_and_stalls_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents_for_tests

    # each run blocks its thread until the test releases it (60 s at most); 4 of them at
    # once under --timeout 0.5 are all errored(timeout) at the deadline, and the experiment
    # ends while every one is still blocked: it waited for none (not a clock, which also
    # counted a loaded machine's first imports)
    monkeypatch.setattr(agents_for_tests, "BLOCK_S", 60)
    agents_for_tests.RELEASE.clear()
    agents_for_tests.WOKE.clear()
    db = tmp_path / "p.db"
    try:
        code, err, _ = run_agent(
            capsys, db, "sync_blocks", "-k", "4", "--concurrency", "4", "--timeout", "0.5"
        )
        woke = len(agents_for_tests.WOKE)
    finally:
        agents_for_tests.RELEASE.set()
    assert code == 1, err  # nothing counted: exit 1
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "timeout")] * 4
    assert all(r["duration_s"] >= 0.5 for r in runs)  # each had its time
    assert woke == 0, f"the experiment waited for {woke} blocked agents"


def test_an_agent_that_swallows_the_cancel_is_still_a_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents_for_tests

    # the agent ignores the cancel at its deadline and waits 60 s more: it gets the 1 s a
    # cancelled run has to clean up, then is left behind (cancelled again, it ends there)
    # and the run recorded; waiting for it would let it write and return
    monkeypatch.setattr(agents_for_tests, "BLOCK_S", 60)
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "swallows_cancel", "-k", "2", "--timeout", "0.3")
    assert code == 1, err  # nothing counted: exit 1
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "timeout")] * 2
    assert all(r["duration_s"] >= 0.3 for r in runs), [r["duration_s"] for r in runs]
    assert "swallows_cancel" not in agents_for_tests.OVERRAN, "the runner waited for it"
    # what the agent wrote after its deadline is not what was stored
    assert all(json.loads(r["output"]) is None for r in runs)


def test_an_async_agent_blocking_the_loop_past_its_deadline_is_a_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents_for_tests

    # blocks 30 s under --timeout 0.3: the watchdog stops it inside its sleep, past its
    # deadline (one that returned late would be a timeout too, with another message)
    monkeypatch.setattr(agents_for_tests, "BLOCK_S", 30)
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "async_blocks", "-k", "2", "--timeout", "0.3")
    assert code == 1, err  # nothing counted: exit 1
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "timeout")] * 2
    assert all(
        "blocked the event loop past its deadline and was stopped there" in r["error_message"]
        for r in runs
    ), [r["error_message"] for r in runs]
    assert all(r["duration_s"] >= 0.3 for r in runs)
    assert "async_blocks" not in agents_for_tests.OVERRAN, "a blocked loop was not stopped"


def test_an_agent_error_whose_text_blocks_the_loop_past_the_deadline_is_a_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """review54: the watchdog's stop (`_stall.Deadline`) landed in passhat's own making of
    the run's failure (str() of the agent's exception, its code blocking the loop past
    the deadline), outside the agent's call that catches it: it ended the agent's task,
    then the whole experiment, with its traceback, and no run was recorded."""
    import agents_for_tests

    monkeypatch.setattr(agents_for_tests, "BLOCK_S", 30)
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "raises_slow_to_say", "-k", "2", "--timeout", "0.3")
    assert code == 1, err  # nothing counted: exit 1
    assert "Traceback" not in err and "Deadline" not in err, err
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "timeout")] * 2
    assert all("blocked the event loop" in r["error_message"] for r in runs)
    assert "raises_slow_to_say" not in agents_for_tests.OVERRAN, "a blocked loop was not stopped"


def test_an_agent_that_swallows_every_cancel_lets_passhat_exit(tmp_path: Path) -> None:
    """The run is a timeout, recorded, and passhat exits (it hung, its report unwritten,
    until killed)."""
    import subprocess
    import sys

    tests = Path(__file__).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
    }
    db = tmp_path / "p.db"
    args = [sys.executable, "-m", "passhat", "run", str(CLARIFY_DIR), "--case", SEED_ID]
    args += ["-k", "1", "--timeout", "0.5", "-q", "--db", str(db)]
    args += ["--agent", "agents_for_tests:swallows_every_cancel"]
    try:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:  # the child is killed
        pytest.fail("passhat did not exit within 15 s of a 0.5 s run")
    assert done.returncode == 1, done.stderr
    assert [(r["status"], r["error_type"]) for r in stored_runs(db)] == [("errored", "timeout")]


_LEAVES_ABANDONED = """
import asyncio, contextlib
from passhat.evaluation.running import _on_own_loop
from passhat._leftovers import abandon, run_loop

written = []

async def swallows():
    while True:
        with contextlib.suppress(BaseException):
            await asyncio.sleep(30)

async def writes():  # passhat's own task: its block ends after the cancel, waited for
    try:
        await asyncio.sleep(30)
    finally:
        await asyncio.sleep(0.05)
        written.append(1)

async def main():
    left = asyncio.ensure_future(swallows())
    asyncio.ensure_future(writes())
    await asyncio.sleep(0.05)  # both started
    abandon(left, 0.2)  # the loop's closing waits this for it (CLEANUP_S, 1 s, in a run)
    await asyncio.sleep(0.05)

run_loop(main())
assert written == [1], written
_on_own_loop(main, [], apart=True)  # the loop on a thread of passhat's own
assert written == [1, 1], written
print("exited")
"""


def test_the_rounds_loop_closes_leaving_an_abandoned_task_and_waiting_for_the_rest() -> None:
    """On this thread and on passhat's own, the loop ends though an abandoned task never
    does; passhat's own tasks left are still cancelled and waited for, and the one left
    behind is not reported destroyed while pending."""
    done = _script(_LEAVES_ABANDONED, 30, "the loop did not close", "-X", "dev")
    assert (done.returncode, done.stdout) == (0, "exited\n"), done.stderr
    assert done.stderr == "", done.stderr


def _script(code: str, seconds: float, late: str, *flags: str) -> Any:
    """`python [flags] -c code` run to its end (the test fails, saying `late`, past
    `seconds`)."""
    import subprocess
    import sys

    try:
        return subprocess.run(
            [sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=seconds
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{late} within {seconds:g} s")


_CTRL_C_WHILE_CLOSING = """
import asyncio, contextlib, os, signal, threading, time
from passhat._leftovers import CLEANUP_S, abandon, run_loop

async def swallows():
    while True:
        with contextlib.suppress(BaseException):
            await asyncio.sleep(30)

async def main():
    left = asyncio.ensure_future(swallows())
    await asyncio.sleep(0.05)
    abandon(left)

def ctrl_c():  # while the loop's closing waits for the abandoned run
    time.sleep(0.3 + CLEANUP_S / 2)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=ctrl_c, daemon=True).start()
try:
    run_loop(main())
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_ctrl_c_while_the_loop_closes_leaves_the_abandoned_run_behind_all_the_same() -> None:
    """A library user's Ctrl-C (Python's own handler: asyncio.Runner's is gone once its
    run returns) during the loop's wait for an abandoned run cut the closing short: the
    run, still pending, was freed as the interpreter ended, its coroutine closed, and the
    GeneratorExit its bare except caught looped for good (the process never exited,
    "Task was destroyed but it is pending!"; review55)."""
    done = _script(_CTRL_C_WHILE_CLOSING, 20, "the process did not exit after its Ctrl-C")
    assert (done.returncode, done.stdout) == (0, "interrupted\n"), done.stderr
    assert "destroyed" not in done.stderr, done.stderr


def test_sigterm_with_an_agent_that_swallows_every_cancel_left_behind_exits_143(
    tmp_path: Path,
) -> None:
    """SIGTERM after run 1 (a timeout whose agent, left behind, never ends): passhat
    exits, run 1 kept (it hung in the loop's shutdown, review54)."""
    import signal
    import subprocess
    import sys

    from test_runner import wait_for_runs

    tests = Path(__file__).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
    }
    db = tmp_path / "p.db"
    args = [sys.executable, "-m", "passhat", "run", str(CLARIFY_DIR), "--case", SEED_ID]
    args += ["-k", "3", "--concurrency", "1", "--timeout", "0.5", "-q", "--db", str(db)]
    args += ["--agent", "agents_for_tests:swallows_every_cancel"]
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_runs(db, 1)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("passhat did not exit within 15 s of SIGTERM")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "destroyed" not in err, err
    runs = stored_runs(db)
    assert 1 <= len(runs) < 3
    assert {(r["status"], r["error_type"]) for r in runs} == {("errored", "timeout")}


@pytest.mark.parametrize(
    ("agent", "status"),
    [
        ("perfect_leaving_a_task", "passed"),
        ("perfect_leaving_an_async_generator", "passed"),
        ("blocks_in_to_thread", "errored"),
    ],
    ids=["task-left", "async-generator-left", "to-thread-blocked"],
)
def test_what_an_agent_leaves_behind_lets_passhat_exit(
    tmp_path: Path, agent: str, status: str
) -> None:
    """An agent's own task that catches every cancel, its async generator whose aclose()
    never ends, or its call blocked for good in asyncio.to_thread: the run is recorded, but
    the loop's shutdown waited for them all, for good, passhat's report never printed nor
    its process ended (review55; run_loop bounded only the abandoned runs)."""
    import subprocess
    import sys

    tests = Path(__file__).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
        "PASSHAT_TEST_BLOCK": "30",
    }
    db = tmp_path / "p.db"
    args = [sys.executable, "-m", "passhat", "run", str(CLARIFY_DIR), "--case", SEED_ID]
    args += ["-k", "1", "--timeout", "1", "-q", "--db", str(db), "--agent"]
    args += [f"agents_for_tests:{agent}"]
    try:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:  # the child is killed
        pytest.fail("passhat did not exit within 20 s of a run of at most 1 s")
    assert "Traceback" not in done.stderr and "destroyed" not in done.stderr, done.stderr
    assert [r["status"] for r in stored_runs(db)] == [status]


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("exits", "SystemExit: the agent called sys.exit(3)"),
        ("sync_exits", "SystemExit: the agent called sys.exit(4)"),
        ("raises_cancelled", "CancelledError: the agent raised"),
        ("raises_base", "Odd: not an Exception"),
        ("sync_keyboard_interrupt", "KeyboardInterrupt"),
        # an in-process agent's exception names no kind of passhat's: its crash is its own
        ("raises_with_passhats_kind", "_ClaimsAKind: passhat failed"),
    ],
    ids=["sys-exit", "sync-sys-exit", "cancelled-error", "base-exception", "sync-ctrl-c", "kind"],
)
def test_base_exceptions_in_an_agent_make_errored_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, message: str
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, agent, "-k", "3", "--concurrency", "1")
    assert code == 1, err  # nothing counted: exit 1
    assert "Traceback" not in err
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "agent_error")] * 3
    assert message in runs[0]["error_message"]


def test_output_json_cannot_hold_is_stored_escaped_and_the_run_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "unencodable", "-k", "2")
    assert code == 0, err
    runs = stored_runs(db)
    assert len(runs) == 2
    output = json.loads(runs[0]["output"])
    assert output["bytes"] == "b'\\xff'"
    assert output["text"] == "half an emoji \\ud83d"
    assert output["self"] == "<circular reference>"
    (call,) = json.loads(runs[0]["tool_calls"])
    assert call["arguments"]["key"] == "\\ud83d"
    # and the store still reads back: report and a resume work
    assert report(capsys, db)["cases"][0]["completed"] == 2
    assert run_cli(capsys, "resume", "latest", "--db", str(db), "-q").code == 0


def test_an_environment_broken_by_its_agent_errors_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "breaks_env", "-k", "2")
    assert code == 1, err  # nothing counted: exit 1
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "environment_error")] * 2
    assert "final_state() raised KeyError" in runs[0]["error_message"]


def test_a_blocking_custom_scorer_is_a_timeout_and_runs_in_a_thread(
    writer: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents_for_tests

    # each scorer blocks its thread until the test releases it (20 s at most); three of
    # them under --timeout 0.5 are timeouts at the deadline, and the experiment ends while
    # every one is still blocked. A scorer run on the event loop would hold it for its
    # whole wait, return, and be recorded in OVERRAN first.
    monkeypatch.setattr(agents_for_tests, "BLOCK_S", 20)
    agents_for_tests.RELEASE.clear()
    writer.files["slow.py"] = "from agents_for_tests import blocking_score as score\n"
    writer.suite["defaults"]["scorers"] = [{"custom": "slow.py:score"}]
    suite = writer.write()
    (suite / "cassettes").mkdir()
    (suite / "cassettes" / "none.jsonl").write_text('{"cassette": 1}\n', encoding="utf-8")
    db = tmp_path / "p.db"
    try:
        r = run_cli(
            capsys,
            "run",
            str(suite),
            "--agent",
            "agents_for_tests:perfect",
            "-k",
            "3",
            "--concurrency",
            "3",
            "--timeout",
            "0.5",
            "--db",
            str(db),
            "-q",
        )
        returned = agents_for_tests.OVERRAN.count("blocking_score")
    finally:
        agents_for_tests.RELEASE.set()
    assert r.code == 1, r.err  # nothing counted: exit 1
    runs = stored_runs(db)
    assert [(x["status"], x["error_type"]) for x in runs] == [("errored", "timeout")] * 3
    assert returned == 0, f"the experiment waited for {returned} blocked scorers"


# -- store and process faults: one clear line, exit 2, no lease left behind


def seeded_store(tmp_path: Path, capsys: pytest.CaptureFixture[str], k: int = 2) -> Path:
    db = tmp_path / "p.db"
    r = run_seed(capsys, "--agent", "agents_for_tests:perfect", "-k", str(k), "--db", str(db))
    assert r.code == 0, r.err
    return db


def leases(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT experiment_id, pid, host FROM leases").fetchall()


def test_a_store_locked_past_the_busy_timeout_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = seeded_store(tmp_path, capsys)
    monkeypatch.setenv("PASSHAT_BUSY_TIMEOUT", "0.2")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for args in (("resume", "latest", "-k", "3"), ("run", str(CLARIFY_DIR), "--case", SEED_ID)):
            r = run_cli(capsys, *args, "--db", str(db), "-q")
            assert r.code == 2, (args, r.err)
            assert "locked by another process for more than 0.2 s" in r.err
            assert "PASSHAT_BUSY_TIMEOUT" in r.err and "Traceback" not in r.err
            assert len(r.err.strip().splitlines()) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert leases(db) == []


def test_a_full_disk_is_one_line_and_the_lease_is_released(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio
    import gc

    from passhat.agents import resolve_agent
    from passhat.errors import StoreError
    from passhat.runner import RunOptions, new_experiment, run_experiment
    from passhat.store import Store
    from passhat.suite import load_suite

    suite = load_suite(CLARIFY_DIR)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED_ID),)})
    agent = resolve_agent("agents_for_tests:perfect")
    experiment = new_experiment(suite, agent, "none", None, k=400, params={})
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        # SQLITE_FULL, as a full disk gives it: the database may not grow past a few pages
        store._db.execute(f"PRAGMA max_page_count = {pages + 3}")
        with pytest.raises(StoreError) as raised:
            asyncio.run(run_experiment(store, experiment, suite, agent, None, RunOptions()))
        recorded = len(store.recorded(experiment.id))
    message = str(raised.value)
    assert "the disk is full" in message and "stays missing" in message
    assert 0 < recorded < 400
    assert leases(tmp_path / "p.db") == []
    # several writes of one group commit fail together: every error is retrieved, so
    # asyncio logs no "Task exception was never retrieved" traceback after the one line
    gc.collect()
    assert "never retrieved" not in caplog.text


def unshare_works() -> bool:
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(
    not unshare_works(),
    reason="needs `unshare -rm` (a user namespace) to mount the store read-only",
)
def test_a_read_only_store_can_be_read_and_refuses_runs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only bind mount, not chmod: CI runs as root, whom permissions do not stop."""
    import subprocess
    import sys

    folder = tmp_path / "ro"
    folder.mkdir()
    db = seeded_store(folder, capsys)

    def passhat(*args: str) -> subprocess.CompletedProcess[str]:
        inner = " ".join(
            ["exec", sys.executable, "-m", "passhat", *[f"'{a}'" for a in args], "--db", str(db)]
        )
        script = f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} && {inner}"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
        return subprocess.run(
            ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env
        )

    for reading in (("report", "latest"), ("list",), ("show", "latest", SEED_ID, "1")):
        done = passhat(*reading)
        assert done.returncode == 0, (reading, done.stderr)
    done = passhat("report", "latest", "--json")
    assert json.loads(done.stdout)["cases"][0]["completed"] == 2
    done = passhat("resume", "latest", "-k", "3", "-q")
    assert done.returncode == 2, done.stderr
    assert "read-only" in done.stderr and "Traceback" not in done.stderr
    assert "not a passhat database" not in done.stderr


def test_sigterm_keeps_finished_runs_releases_the_lease_and_exits_143(tmp_path: Path) -> None:
    import signal
    import subprocess

    from test_runner import start_slow_run, wait_for_runs

    db = tmp_path / "p.db"
    proc = start_slow_run(db, k=20, name="terminated", stderr=subprocess.PIPE)
    wait_for_runs(db, 3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 143, err
    assert "passhat resume terminated" in err and "Traceback" not in err
    assert 3 <= len(stored_runs(db)) < 20
    assert leases(db) == []


@pytest.mark.parametrize(
    "kind", ["TERM", "INT", "INT_END"], ids=["sigterm", "ctrl-c", "ctrl-c-as-the-agent-returns"]
)
def test_a_stop_while_a_finished_runs_last_step_waits_still_records_it(
    tmp_path: Path, kind: str
) -> None:
    """Guards fix52: a run's last step left for the loop's next turn (run_once_then) was
    lost when SIGTERM or Ctrl-C stopped passhat in that turn: run 1's agent had
    finished, yet run 1 was never recorded. The agent signals its own process at the
    moment (agents_for_tests.signals_itself); resume then counts every run once.
    fix52b: a Ctrl-C as run 1's agent returns (INT_END: Python's handler cancels at once,
    before the run took its agent's result) lost run 1 too."""
    import signal
    import subprocess
    import sys

    from cli_helpers import CLARIFY, SEED
    from test_runner import SLOW_ENV

    db = tmp_path / "p.db"
    argv = [sys.executable, "-m", "passhat", "run", str(CLARIFY), "--case", SEED]
    argv += ["--agent", "agents_for_tests:signals_itself", "-k", "3", "--concurrency", "1"]
    argv += ["--db", str(db), "-q", "--name", "stopped"]
    env = {**SLOW_ENV, "PASSHAT_TEST_SIGNAL": kind}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    signum = signal.SIGTERM if kind == "TERM" else signal.SIGINT
    assert done.returncode == 128 + signum, done.stderr
    assert "passhat resume stopped" in done.stderr and "Traceback" not in done.stderr
    assert 1 in [row["run_index"] for row in stored_runs(db)], done.stderr
    resumed = subprocess.run(
        [sys.executable, "-m", "passhat", "resume", "stopped", "--db", str(db), "-q"],
        env=SLOW_ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode in (0, 1), resumed.stderr
    assert sorted(row["run_index"] for row in stored_runs(db)) == [1, 2, 3]
    assert leases(db) == []


def plant_lease(db: Path, host: str, heartbeat_age: float) -> None:
    with sqlite3.connect(db) as con:
        (experiment,) = con.execute("SELECT id FROM experiments").fetchone()
        con.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, 4242, ?, '2026-01-01T00:00:00Z', ?)",
            (experiment, host, time.time() - heartbeat_age),
        )


def test_a_lease_from_another_host_blocks_until_it_expires_or_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = seeded_store(tmp_path, capsys)
    plant_lease(db, "another-host", heartbeat_age=5)
    r = run_cli(capsys, "resume", "latest", "-k", "3", "--db", str(db), "-q")
    assert r.code == 2 and "process 4242 on another-host" in r.err
    assert "--break-lease" in r.err
    r = run_cli(capsys, "resume", "latest", "-k", "3", "--break-lease", "--db", str(db), "-q")
    assert r.code == 0, r.err
    assert "warning: broke the lease of process 4242 on another-host" in r.err
    assert len(stored_runs(db)) == 3 and leases(db) == []
    # a lease nobody renewed for longer than the expiry is taken over without asking
    plant_lease(db, "another-host", heartbeat_age=3600)
    r = run_cli(capsys, "resume", "latest", "-k", "4", "--db", str(db), "-q")
    assert r.code == 0, r.err
    assert len(stored_runs(db)) == 4


def test_a_running_experiment_renews_its_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    import passhat.store.leases
    from passhat.agents import resolve_agent
    from passhat.runner import RunOptions, new_experiment, run_experiment
    from passhat.store import Store
    from passhat.suite import load_suite

    monkeypatch.setattr(passhat.store.leases, "HEARTBEAT_S", 0.05)
    monkeypatch.setenv("PASSHAT_TEST_DELAY", "0.1")
    suite = load_suite(CLARIFY_DIR)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED_ID),)})
    agent = resolve_agent("agents_for_tests:slow")
    experiment = new_experiment(suite, agent, "none", None, k=4, params={})
    beats: list[float] = []

    def watch(_: Any) -> None:
        with sqlite3.connect(tmp_path / "p.db") as con:
            beats.append(con.execute("SELECT heartbeat_at FROM leases").fetchone()[0])

    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        options = RunOptions(concurrency=1)
        asyncio.run(run_experiment(store, experiment, suite, agent, None, options, watch))
    assert len(beats) == 4 and beats == sorted(beats) and beats[-1] > beats[0]


# -- errored runs can be run again, honestly


def test_resume_errored_reruns_errored_runs_keeping_earlier_attempts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "p.db"
    monkeypatch.setenv("PASSHAT_TEST_DOWN", "1")
    code, err, _ = run_agent(capsys, db, "flaky", "-k", "4")
    assert code == 0, err
    assert [r["status"] for r in stored_runs(db)] == ["passed", "errored"] * 2
    # a model outage is no crash of the agent: its run keeps no traceback of passhat's frames
    assert [r["traceback"] for r in stored_runs(db) if r["status"] == "errored"] == [None] * 2
    # a plain resume has nothing to do: errored runs are recorded runs
    r = run_cli(capsys, "resume", "latest", "--db", str(db))
    assert r.code == 0 and "nothing to do, every requested run is recorded (4 runs: " in r.err
    assert "errored 2); `passhat resume " in r.err and " --errored` runs the errored" in r.err
    r = run_cli(capsys, "resume", "latest", "--errored", "--db", str(db))
    assert r.code == 0 and "2 runs to do" in r.err  # still down: errored again, attempt 2
    monkeypatch.delenv("PASSHAT_TEST_DOWN")
    r = run_cli(capsys, "resume", "latest", "--errored", "--retries", "6", "--db", str(db))
    assert r.code == 0, r.err
    out = " ".join(r.out.split())  # unwrapped
    assert "retried: 2 runs were run again after an error (4 earlier attempts kept)" in out
    assert "retried runs passed 2/2 (100%), first attempts 2/2 (100%)" in out
    runs = stored_runs(db)
    assert [(r["run_index"], r["status"], r["attempt"]) for r in runs] == [
        (1, "passed", 1),
        (2, "passed", 3),
        (3, "passed", 1),
        (4, "passed", 3),
    ]
    with sqlite3.connect(db) as con:
        earlier = con.execute(
            "SELECT run_index, attempt, status, error_type FROM run_attempts ORDER BY 1, 2"
        ).fetchall()
    assert earlier == [(i, a, "errored", "model_error") for i in (2, 4) for a in (1, 2)]
    data = report(capsys, db)
    assert data["accounting"]["runs_counted"] == 4  # the last attempt counts, once
    assert data["retried"]["runs_retried"] == 2
    assert data["retried"]["retried"]["pass_rate"] == 1.0


def test_a_counted_run_is_never_replaced_by_another_attempt(tmp_path: Path) -> None:
    from dataclasses import replace

    from passhat.errors import StoreError
    from passhat.store import Store
    from test_store import experiment, run

    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment())
        passed = run()
        store.record_run(passed)
        with pytest.raises(StoreError, match="a counted run is never re-run"):
            store.record_run(replace(passed, attempt=2, status="failed"))
        (kept,) = store.runs(passed.experiment_id)
    assert (kept.status, kept.attempt) == (passed.status, 1)


def test_call_timeout_bounds_each_model_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_server: Any
) -> None:
    fake_server.reply("too late", delay=3.0)
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--model",
        "openai:m",
        "--base-url",
        fake_server.openai_url,
        "--call-timeout",
        "0.3",
        "--retries",
        "0",
        "-k",
        "1",
        "--db",
        str(db),
        "-q",
    )
    assert r.code == 1, r.err  # nothing counted: exit 1
    (run,) = stored_runs(db)
    assert run["error_type"] == "model_error"
    assert "no response within 0.3s" in run["error_message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--retries", "-1"), "--retries is -1"),
        (("--retry-max-wait", "-2"), "--retry-max-wait is -2"),
        (("--call-timeout", "0"), "--call-timeout is 0"),
    ],
    ids=["retries", "retry-max-wait", "call-timeout"],
)
def test_resume_refuses_bad_retry_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    db = seeded_store(tmp_path, capsys, k=1)
    r = run_cli(capsys, "resume", "latest", *args, "--db", str(db))
    assert r.code == 2 and message in r.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--temperature", "nan"), "--temperature is nan; give a number, 0 or more, e.g. 0.7"),
        (("--temperature", "-1"), "--temperature is -1; give a number, 0 or more, e.g. 0.7"),
        (("--temperature", "inf"), "--temperature is inf; give a number, 0 or more, e.g. 0.7"),
        (("--max-tokens", "0"), "--max-tokens is 0; let a model call write at least 1 token"),
    ],
    ids=["temperature-nan", "temperature-negative", "temperature-inf", "max-tokens"],
)
def test_run_refuses_model_parameters_no_provider_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    """Was: recorded with the experiment and sent to the provider, whose 400 errored every
    run (a replay ignored them, so the experiment even looked fine)."""
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(CLARIFY_DIR), "--case", SEED_ID, *args, "--db", db, "-q")
    assert r.code == 2 and message in r.err, r.err
    assert not Path(db).exists()  # refused before the store was made


@pytest.mark.parametrize("option", ["--junit-xml", "--summary"])
def test_a_ci_file_in_a_folder_that_is_not_there_is_said_before_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """Was: every run was made, then `cannot write (No such file or directory)`, exit 2."""
    db = tmp_path / "p.db"
    out = tmp_path / "nowhere" / "out.xml"
    r = run_cli(
        capsys, "run", str(CLARIFY_DIR), "--case", SEED_ID, option, str(out), "--db", str(db)
    )
    assert r.code == 2, r.err
    assert f"{option} {out}: no folder {out.parent}; make it first" in r.err
    assert not db.exists()  # nothing ran


# -- bad input: one clean line, exit 2


def test_an_integer_too_long_to_read_is_one_line(
    writer: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    writer.case["input"]["ticket"]["acceptance_criteria"][0]["ac"] = "BIG"
    suite = writer.write()
    case = suite / "cases" / "tiny.yaml"
    case.write_text(case.read_text().replace("BIG", "9" * 5000), encoding="utf-8")
    r = run_cli(capsys, "check", str(suite))
    assert r.code == 2 and "Traceback" not in r.err
    assert "cases/tiny.yaml" in r.err and "number too long to read" in r.err


@pytest.mark.parametrize("template", ["AC{ac:>10000000000}:{label}", "AC{ac:09999999}"])
def test_an_item_template_with_a_giant_width_is_refused(
    writer: Any, capsys: pytest.CaptureFixture[str], template: str
) -> None:
    writer.suite["defaults"]["scorers"][0]["item"] = template
    r = run_cli(capsys, "check", str(writer.write()))
    assert r.code == 2 and "Traceback" not in r.err
    assert "suite.yaml" in r.err and "use at most 100" in r.err


def test_a_scorer_or_agent_file_calling_sys_exit_on_import_is_one_line(
    writer: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer.files["exits.py"] = "import sys\nsys.exit(7)\n\ndef score(s, g):\n    return True\n"
    writer.suite["defaults"]["scorers"] = [{"custom": "exits.py:score"}]
    r = run_cli(capsys, "check", str(writer.write()))
    assert r.code == 2, r.err
    assert "exits.py:score: importing exits.py raised SystemExit" in r.err
    agent = tmp_path / "agent_exits.py"
    agent.write_text("import sys\nsys.exit(7)\n", encoding="utf-8")
    r = run_seed(capsys, "--agent", f"{agent}:run", "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and "raised SystemExit (it called sys.exit(7))" in r.err


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_verdict_status_that_is_a_list_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write_lines(tmp_path / "v.jsonl", ['{"case": "a", "run": 1, "status": ["passed"]}'])
    r = run_cli(capsys, "metrics", str(f))
    assert r.code == 2 and "Traceback" not in r.err
    assert "v.jsonl:1: field 'status' is [\"passed\"]" in r.err


def test_verdicts_at_a_large_run_index_take_memory_by_the_data_not_the_index(
    tmp_path: Path,
) -> None:
    """3,000 cases with one run each at index 100,000: k is 100,000, 299,997,000 runs
    are missing. Listing them one by one took 6-8 GB; the report must fit in 1.5 GB."""
    import resource
    import subprocess
    import sys

    lines = [f'{{"case": "c{i}", "run": 100000, "status": "passed"}}' for i in range(3000)]
    f = write_lines(tmp_path / "far.jsonl", lines)

    def limit() -> None:
        cap = 1536 * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))

    done = subprocess.run(
        [sys.executable, "-m", "passhat", "metrics", str(f), "--json"],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-500:]
    data = json.loads(done.stdout)
    assert data["dataset"]["runs_missing"] == 3000 * 99_999
    (first, *_) = data["cases"]
    assert first["missing"] is None and first["missing_ranges"] == [[1, 99_999]]


def test_k_past_the_report_limit_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    started = time.monotonic()
    r = run_seed(capsys, "-k", "1000000000", "--db", str(db))
    assert r.code == 2 and "more than 100,000 runs per case" in r.err
    assert time.monotonic() - started < 10 and not db.exists()
    db = seeded_store(tmp_path, capsys, k=1)
    r = run_cli(capsys, "resume", "latest", "-k", "200000", "--db", str(db))
    assert r.code == 2 and "more than 100,000 runs per case" in r.err


ESC = "\x1b"


def test_escape_sequences_reach_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: Any
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "shouts", "-k", "1")
    assert code == 1, err  # nothing counted: exit 1
    shown = {
        "report": run_cli(capsys, "report", "latest", "--db", str(db)),
        "show": run_cli(capsys, "show", "latest", SEED_ID, "1", "--db", str(db)),
    }
    f = write_lines(
        tmp_path / "v.jsonl", ['{"case": "x\\u001b]0;t\\u001b[2J", "run": 1, "status": "passed"}']
    )
    shown["metrics"] = run_cli(capsys, "metrics", str(f))
    writer.suite["description"] = f"tiny {ESC}[2J suite"
    shown["check"] = run_cli(capsys, "check", str(writer.write()))
    shown["error"] = run_cli(capsys, "metrics", str(tmp_path / f"no{ESC}[2Jfile.jsonl"))
    for command, r in shown.items():
        assert ESC not in r.out + r.err, command
        assert "\\x1b" in r.out + r.err, command


def test_a_key_echoed_by_the_server_is_written_nowhere(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-echo-1234567890abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    fake_server.reply(f"your key is {key}")
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--model",
        "openai:m",
        "--base-url",
        fake_server.openai_url,
        "-k",
        "1",
        "--db",
        str(db),
        "-q",
    )
    assert r.code == 0, r.err
    html, tape = tmp_path / "r.html", tmp_path / "tape.jsonl"
    outputs = [
        run_cli(capsys, "show", "latest", SEED_ID, "1", "--db", str(db)).out,
        run_cli(capsys, "report", "latest", "--json", "--html", str(html), "--db", str(db)).out,
        run_cli(capsys, "cassette", "latest", "-o", str(tape), "--db", str(db)).out,
    ]
    written = [html.read_text(encoding="utf-8"), tape.read_text(encoding="utf-8")]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("p.db*"))
    assert key.encode() not in stored
    assert all(key not in text for text in outputs + written)
    assert "your key is ***" in outputs[0]


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/v1#sk-hidden-key", "http://127.0.0.1:9/v1;key=sk-hidden-key"]
)
def test_a_key_hidden_in_the_base_url_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    r = run_seed(capsys, "--model", "openai:m", "--base-url", url, "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and "carries credentials" in r.err
    assert not (tmp_path / "p.db").exists()
