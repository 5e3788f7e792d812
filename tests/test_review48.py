"""An outside review of round 10's merged code (review48): each test here failed on main
at 249beba before the fix beside it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import passhat
from conftest import SuiteWriter
from passhat.store import Store, StoreError


@pytest.mark.parametrize(
    "sql",
    [
        # TypeORM's and Laravel's own tables are named `migrations`
        "CREATE TABLE migrations (id INTEGER PRIMARY KEY, timestamp BIGINT, name VARCHAR)",
        # shaped like passhat's, but its rows are another tool's: not a first migration
        # cut short (that leaves passhat's table empty)
        "CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)",
    ],
)
def test_a_foreign_file_whose_one_table_is_named_migrations_stays_untouched(
    tmp_path: Path, sql: str
) -> None:
    """`_check_is_ours` took any file whose only table is named `migrations` as a store
    whose first migration was cut short: a writable open then set journal_mode=WAL (the
    file's header bytes 18-19 went from 1 to 2) before `_migrate` failed on the other
    tool's table, so the refused file was changed, which the check exists to prevent."""
    path = tmp_path / "app.db"
    con = sqlite3.connect(path)
    con.execute(sql)
    con.execute("INSERT INTO migrations VALUES (1, 2, '3')")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a passhat store"):
        Store(path, create=False)
    with pytest.raises(StoreError, match="not a passhat store"):
        Store(path)
    assert path.read_bytes() == before


def test_a_store_whose_first_migration_was_cut_short_still_opens(tmp_path: Path) -> None:
    """The case `_check_is_ours` lets through: passhat's own migrations table, empty (its
    CREATE runs outside the first migration's transaction)."""
    path = tmp_path / "p.db"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    con.commit()
    con.close()
    with Store(path, create=False) as store:
        assert store.migrations()


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_waits_for_the_rounds_own_thread(presses: int) -> None:
    """A round of sandboxed runs has its loop on a thread of passhat's own
    (`_on_own_loop(apart=True)`, the default path of `passhat run`). On Ctrl-C it cancels
    the round and joins the thread again, but on Python 3.11 a `thread.join()` that Ctrl-C
    interrupted has marked the thread ended while it runs on (threading's bpo-45274
    handling), so the second join returned at once: `_round` read the store's count for
    Interrupted's "N runs kept" while the round still stopped its runs and wrote those
    finished, on the same connection, and at exit the interpreter no longer waited for
    that thread (the last batch could be lost). A second Ctrl-C, as with asyncio.run,
    cancels again and still waits."""
    import asyncio
    import signal
    import threading
    import time

    from passhat.evaluation.running import _on_own_loop

    done: list[str] = []

    async def main() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            time.sleep(0.6)  # the writer's last batch, written as the round stops
            done.append("written")
            raise

    main_thread = threading.get_ident()

    def press_ctrl_c() -> None:  # as the terminal does: SIGINT to the main thread
        for _ in range(presses):
            time.sleep(0.25)
            signal.pthread_kill(main_thread, signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _on_own_loop(main, [], apart=True)
        assert done == ["written"]
        assert not [t for t in threading.enumerate() if t.name == "passhat-evaluate"]
    finally:
        presser.join()
        while not done and time.sleep(0.1) is None:  # main's bug: let its thread end
            if not any(t.name == "passhat-evaluate" for t in threading.enumerate()):
                break


class _Threaded:
    """A user's executor that makes each run on a loop of its own in a worker thread
    (`loop.run_in_executor`, which, unlike the loop's tasks, does not carry the caller's
    context), calling `run_once` without a guard as the protocol's Job allowed."""

    async def run(self, job: Any, todo: Any) -> Any:
        import asyncio

        from passhat.runner import run_once

        cases = {c.id: c for c in job.suite.cases}
        loop = asyncio.get_running_loop()
        for case_id, index in todo:

            def one(case: Any = cases[case_id], index: int = index) -> Any:
                return asyncio.run(
                    run_once(
                        job.experiment, job.suite, case, index, job.agent, job.model, job.options
                    )
                )

            yield await loop.run_in_executor(None, one)


def test_a_users_executor_running_run_once_on_its_own_threads_is_still_guarded(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """Round 10 gave each experiment a guard of its own, found by a user's executor that
    calls `run_once` without one through a ContextVar (`tamper.current()`): a thread the
    executor starts does not carry it, so its runs were graded unguarded, a goal the agent
    rewrote to its own wrong answer graded `passed` (before, one guard per suite folder
    was found from any thread)."""
    from test_tamper import _cheater, _suite

    suite = _suite(writer)
    cheat = _cheater(suite / "cases" / "tiny.yaml")
    done = passhat.evaluate(
        suite, agent=cheat, k=2, db=tmp_path / "p.db", model="", executor=_Threaded()
    )
    assert [r.error_type for r in done.runs()] == ["suite_changed", "suite_changed"]


def test_a_sigterm_as_the_rounds_own_loop_shuts_down_still_ends_the_call() -> None:
    """SIGTERM while the round's own thread shuts its loop down (its runs done, asyncio.run
    waiting for the default executor's threads) reached `stop`, which found the task done
    and cancelled nothing: `_on_own_loop` returned as if no signal came and the process
    went on (the next round, exit 0). On the caller's own loop (asyncio.run here) the
    signal's handler is gone by then and SIGTERM ends the process (143). A signal taken
    is now always told: the call ends as a stopped round does."""
    import asyncio
    import signal
    import threading
    import time

    from passhat.evaluation.running import _on_own_loop

    async def main() -> None:  # done at once; the loop's shutdown waits for the thread
        asyncio.get_running_loop().run_in_executor(None, time.sleep, 0.8)

    main_thread = threading.get_ident()

    def send_sigterm() -> None:
        time.sleep(0.3)
        signal.pthread_kill(main_thread, signal.SIGTERM)

    sender = threading.Thread(target=send_sigterm)
    sender.start()
    terminated: list[int] = []
    try:
        with pytest.raises((KeyboardInterrupt, asyncio.CancelledError)):
            _on_own_loop(main, terminated, apart=True)
    finally:
        sender.join()
    assert terminated == [signal.SIGTERM]
