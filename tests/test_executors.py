"""The executor protocol without a cluster: the bounded pool, a user's executor through
the same door as the built-ins, and shipping an experiment by value."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import executors_for_tests
import passhat
from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from passhat.agents import resolve_agent
from passhat.errors import ConfigError, WorkerRefused
from passhat.executors import Job, bounded, local, resolve_executor
from passhat.executors.batching import BatchSizer, batched
from passhat.executors.shipment import GRACE_S, prepare, ship, suite_files
from passhat.models import model_from_params
from passhat.records import RunRecord
from passhat.runner import RunOptions, new_experiment
from passhat.suite import load_suite

TRELLO = CLARIFY.parent / "trello"


def _record(case_id: str, index: int) -> RunRecord:
    return RunRecord("e", case_id, index, "h", "passed")


async def test_bounded_keeps_at_most_concurrency_in_flight_and_reads_the_plan_lazily() -> None:
    taken = 0
    in_flight = peak = 0

    def plan() -> Iterator[tuple[str, int]]:
        nonlocal taken
        for index in range(1, 1_000_001):  # a million planned runs: never listed
            taken += 1
            yield ("c", index)

    async def run_one(case_id: str, index: int) -> RunRecord:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return _record(case_id, index)

    records = bounded(plan(), 4, run_one)
    got = [await anext(records) for _ in range(20)]
    await records.aclose()
    assert peak == 4
    assert taken <= 20 + 2 * 4  # the plan is read one free place at a time (twice the slots)
    assert len({r.run_index for r in got}) == 20


async def test_bounded_holds_runs_back_while_the_consumer_is_slow() -> None:
    started: list[int] = []

    async def run_one(case_id: str, index: int) -> RunRecord:
        started.append(index)
        return _record(case_id, index)

    records = bounded((("c", i) for i in range(1, 101)), 3, run_one)
    await anext(records)
    await asyncio.sleep(0.05)  # the consumer (the store) stalls; runs must wait for it
    # the one taken, and at most twice the slots in flight or finished and not yet taken
    assert len(started) <= 1 + 2 * 3
    await records.aclose()


async def test_bounded_starts_a_slots_next_run_before_the_last_ones_finish() -> None:
    """A run whose last step (grading, its record) is handed back as a `Finish` is
    finished after the slot's next run has started: 50 agents' timers share one loop,
    and grading each run as its agent ended held back the next runs' starts."""
    events: list[str] = []

    async def run_one(case_id: str, index: int) -> Any:
        events.append(f"start {index}")
        await asyncio.sleep(0.001)

        def finish() -> RunRecord:
            events.append(f"finish {index}")
            return _record(case_id, index)

        return finish

    got = [r.run_index async for r in bounded((("c", i) for i in range(1, 4)), 1, run_one)]
    assert got == [1, 2, 3]
    assert events.index("start 2") < events.index("finish 1")
    assert events.index("start 3") < events.index("finish 2")


async def test_runs_finished_and_not_yielded_when_the_consumer_is_cancelled_are_kept() -> None:
    """Guards fix52: a cancel (Ctrl-C, SIGTERM) of the consumer while run 1's last step
    waited for its turn lost run 1, its agent done; it goes to `keep` now, and run 2,
    cancelled in flight, stays missing."""
    kept: list[int] = []
    got: list[int] = []
    consumer: asyncio.Task[None] | None = None

    async def run_one(case_id: str, index: int) -> Any:
        if index == 2:  # the slot's next run: its start is the last step's turn
            assert consumer is not None
            consumer.cancel()
            await asyncio.sleep(60)
        await asyncio.sleep(0.001)
        return lambda: _record(case_id, index)

    async def consume() -> None:
        plan = (("c", i) for i in range(1, 4))
        async for record in bounded(plan, 1, run_one, keep=lambda r: kept.append(r.run_index)):
            got.append(record.run_index)

    consumer = asyncio.create_task(consume())
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert (got, kept) == ([], [1])


async def test_a_run_whose_agent_returned_as_the_stop_came_is_kept() -> None:
    """A stop that cancels a slot after its run's agent returned, before the run took the
    result (execution.Returned), lost the run; its last step now goes to `keep`."""
    from passhat.execution import Returned

    kept: list[int] = []
    consumer: asyncio.Task[None] | None = None

    async def run_one(case_id: str, index: int) -> Any:
        assert consumer is not None
        consumer.cancel()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stop = Returned(("done", None))
            stop.last_step = lambda: _record(case_id, index)
            raise stop from None

    async def consume() -> None:
        plan = (("c", i) for i in range(1, 4))
        async for _ in bounded(plan, 1, run_one, keep=lambda r: kept.append(r.run_index)):
            pass

    consumer = asyncio.create_task(consume())
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert kept == [1]


async def test_a_last_step_that_raises_as_the_consumer_is_cancelled_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A last step made as the iterator closed (a stop) that raised was dropped: no one
    saw it, and the run stayed missing unexplained. It is logged as passhat's error now,
    with its traceback; the runs that finished are kept all the same."""
    kept: list[int] = []
    consumer: asyncio.Task[None] | None = None

    async def run_one(case_id: str, index: int) -> Any:
        if index == 2:  # the slot's next run: its start is run 1's last step's turn
            assert consumer is not None
            consumer.cancel()
            await asyncio.sleep(60)

        def finish() -> RunRecord:
            raise RuntimeError("a bug in the last step")

        await asyncio.sleep(0.001)
        return finish

    async def consume() -> None:
        plan = (("c", i) for i in range(1, 4))
        async for _ in bounded(plan, 1, run_one, keep=lambda r: kept.append(r.run_index)):
            pass

    consumer = asyncio.create_task(consume())
    with caplog.at_level(logging.ERROR, logger="passhat"), pytest.raises(asyncio.CancelledError):
        await consumer
    assert kept == []
    (logged,) = [r for r in caplog.records if r.name == "passhat"]
    assert "last step failed as the runs stopped" in logged.getMessage()
    assert logged.exc_info is not None and "a bug in the last step" in str(logged.exc_info[1])


async def test_a_finish_that_raises_is_raised_to_the_consumer() -> None:
    async def run_one(case_id: str, index: int) -> Any:
        def finish() -> RunRecord:
            raise RuntimeError("grading broke")

        await asyncio.sleep(0)
        return finish

    with pytest.raises(RuntimeError, match="grading broke"):
        async for _ in bounded((("c", i) for i in range(1, 4)), 2, run_one):
            pass


async def test_a_slot_whose_run_waited_starts_its_next_run_in_the_same_turn() -> None:
    """No extra turn of the loop between a run that waited and the slot's next one (the
    turn for a cancel to land is taken only after a run that never waited)."""
    turned: list[bool] = []
    marks: list[list[bool]] = []

    async def run_one(case_id: str, index: int) -> RunRecord:
        if marks:
            turned.append(marks[-1][0])
        await asyncio.sleep(0.001)
        mark = [False]
        asyncio.get_running_loop().call_soon(mark.__setitem__, 0, True)
        marks.append(mark)
        return _record(case_id, index)

    got = [r async for r in bounded((("c", i) for i in range(1, 5)), 1, run_one)]
    assert len(got) == 4
    assert turned == [False, False, False]


async def test_bounded_starts_its_slots_a_ramp_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs started together finish together and queue on the one event loop, wave
    after wave: slot i takes its first item i ramps after the first (the local
    executor's ramp is RAMP_S, shorter when many slots would make it long)."""
    waits: list[float] = []
    sleep = asyncio.sleep

    async def recorded(delay: float, *args: Any) -> Any:
        if delay > 0:
            waits.append(delay)
        return await sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", recorded)

    async def run_one(case_id: str, index: int) -> RunRecord:
        return _record(case_id, index)

    got = [r async for r in bounded((("c", i) for i in range(1, 9)), 4, run_one, ramp=0.001)]
    assert sorted(r.run_index for r in got) == list(range(1, 9))
    assert waits == pytest.approx([0.001, 0.002, 0.003])


@pytest.mark.parametrize("concurrency", [8, 50, 1000])
def test_the_local_executor_ramps_its_first_runs(
    monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    ramps: list[float] = []

    def recorded(todo: Any, n: int, run_one: Any, *, ramp: float = 0.0, keep: Any = None) -> Any:
        ramps.append(ramp)
        return bounded(todo, n, run_one, ramp=ramp, keep=keep)

    monkeypatch.setattr(local, "bounded", recorded)
    suite = load_suite(CLARIFY)
    agent = resolve_agent("agents_for_tests:odd_runs_pass")
    experiment = new_experiment(suite, agent, "", None, k=1, params={})
    options = RunOptions(concurrency=concurrency)
    local.LocalExecutor().run(Job(experiment, suite, agent, None, options), iter([]))
    assert ramps == [pytest.approx(min(local.RAMP_S, local.RAMP_MAX_S / concurrency))]
    assert ramps[0] * concurrency <= local.RAMP_MAX_S + 1e-12


async def test_bounded_raises_the_first_failure_and_skips_items_left_missing() -> None:
    async def run_one(case_id: str, index: int) -> RunRecord | None:
        if index == 5:
            raise RuntimeError("the cluster fell over")
        return None if index % 2 else _record(case_id, index)

    got: list[int] = []
    with pytest.raises(RuntimeError, match="the cluster fell over"):
        async for record in bounded((("c", i) for i in range(1, 10)), 1, run_one):
            got.append(record.run_index)
    assert got == [2, 4]


def test_a_users_executor_comes_through_the_same_door(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    executors_for_tests.RAN.clear()
    db = str(tmp_path / "p.db")
    r = run_seed(capsys, "--executor", "executors_for_tests:Sequential", "--db", db, "-q")
    assert r.code == 0, r.err
    assert executors_for_tests.RAN == [(SEED, 1), (SEED, 2), (SEED, 3)]
    assert "passes" in r.out and "0/3" in r.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "executors_for_tests:not_an_executor"], "has no run(job, todo) method"),
        (["--executor", "nope"], "is neither built in (local, dask) nor an import path"),
        (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler is for --executor dask"),
        (["--executor", "dask", "--scheduler", "8786"], "write tcp://HOST:PORT"),
    ],
    ids=["no-run-method", "unknown-name", "scheduler-without-dask", "bad-address"],
)
def test_bad_executor_options_are_one_line_before_anything_runs(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_seed(capsys, *args, "--db", str(db), "-q")
    assert r.code == 2 and message in r.err and "Traceback" not in r.err
    assert (
        not db.exists()
        or sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    )


def test_an_unreachable_scheduler_is_refused_before_an_experiment_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("distributed")
    db = tmp_path / "p.db"
    args = ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--name", "dk"]
    r = run_seed(capsys, *args, "--db", str(db), "-q")
    assert r.code == 2 and "cannot reach the Dask scheduler" in r.err, r.err
    assert "Traceback" not in r.err
    # nothing holds the name: the same command with a reachable executor may use it
    assert (
        not db.exists()
        or not sqlite3.connect(db).execute("SELECT count(*) FROM experiments").fetchone()[0]
    )


def _job(suite_dir: Path, model_spec: str) -> Job:
    suite = load_suite(suite_dir)
    agent = resolve_agent(suite.defaults.agent, suite_dir=suite.path)
    model = model_from_params(model_spec, {}, suite.path)
    experiment = new_experiment(suite, agent, model_spec, model, k=1, params={"max_turns": 6})
    return Job(experiment, suite, agent, model, RunOptions())


def test_suite_files_leave_out_stores_caches_and_hidden_files(tmp_path: Path) -> None:
    suite = tmp_path / "trello"
    shutil.copytree(TRELLO, suite)
    sqlite3.connect(suite / "passhat.db").execute("CREATE TABLE t (x)").connection.commit()
    (suite / "passhat.db-wal").write_bytes(b"")
    (suite / ".git").mkdir()
    (suite / ".git" / "HEAD").write_text("ref")
    (suite / "__pycache__").mkdir(exist_ok=True)
    (suite / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"\0")
    names = {name for name, _ in suite_files(suite)}
    assert {"suite.yaml", "rules.py", "card_writer.py", "cassettes/cards.jsonl"} <= names
    assert not {n for n in names if "passhat.db" in n or ".git" in n or "__pycache__" in n}


def test_a_shipment_rebuilds_the_experiment_from_bytes_alone(tmp_path: Path) -> None:
    # the cassette lives outside the suite folder: it must travel too
    suite = tmp_path / "trello"
    shutil.copytree(TRELLO, suite)
    outside = tmp_path / "elsewhere" / "cards.jsonl"
    outside.parent.mkdir()
    shutil.move(suite / "cassettes" / "cards.jsonl", outside)
    job = _job(suite, f"replay:{outside}")
    shipment = ship(job)
    shutil.rmtree(suite)  # nothing on disk is read past this point
    outside.unlink()
    ready = prepare(shipment, "test")
    assert ready.suite.hash == job.suite.hash and ready.suite.path != job.suite.path
    assert ready.agent.source_hash == job.agent.source_hash
    record = ready.run(job.suite.cases[0].id, 1)
    assert record.status in ("passed", "failed") and record.transcript


@pytest.mark.parametrize("what", ["version", "agent source"])
def test_a_worker_refuses_another_passhat_or_agent_source(what: str, tmp_path: Path) -> None:
    shipment = ship(_job(TRELLO, "replay:cassettes/cards.jsonl"))
    if what == "version":
        shipment = replace(shipment, version="0.0.1")
        expected = f"has passhat {passhat.__version__}, the experiment needs passhat 0.0.1"
    else:
        files = dict(shipment.files)
        files["agent/card_writer.py"] += b"\n# edited on the worker\n"
        shipment = replace(shipment, files=files)
        expected = "its source of agent 'card_writer.py:write_card' (sha256) is"
    with pytest.raises(WorkerRefused, match="install the same") as refused:
        prepare(shipment, "tcp://127.0.0.1:1")
    assert expected in str(refused.value) and "worker tcp://127.0.0.1:1" in str(refused.value)


def test_run_and_resume_take_the_executor_options(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "resume"):
        r = run_cli(capsys, command, "--help")
        assert "--executor" in r.out and "--scheduler" in r.out


def test_runs_an_executor_gives_up_on_are_named_missing_and_resume_runs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    agent = ["--agent", "agents_for_tests:odd_runs_pass", "-k", "4"]
    r = run_seed(capsys, "--executor", "executors_for_tests:SkipsEven", *agent, "--db", db)
    assert r.code == 0, r.err
    assert "2 runs were left missing because their workers kept dying" in r.err
    assert f"{SEED} run 2, {SEED} run 4" in r.err
    r = run_cli(capsys, "resume", "latest", "--db", db, "-q", "--strict")
    assert r.code == 0, r.err


def test_a_worker_an_executor_refused_is_named_with_the_file_and_the_runs_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    executor = ["--executor", "executors_for_tests:RefusedOne", "--db", str(tmp_path / "p.db")]
    r = run_seed(capsys, "--agent", "agents_for_tests:odd_runs_pass", *executor)
    assert r.code == 0, r.err
    assert (
        "Dask worker tcp://127.0.0.1:9 has other passhat code (a against b): passhat/scoring.py "
        "differs: refused; it ran none of this experiment's runs, the other workers made them"
    ) in " ".join(r.err.split())


def test_dask_without_its_extra_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "passhat.executors.dask", raising=False)
    with pytest.raises(ConfigError, match=r"pip install 'passhat\[dask\]'"):
        resolve_executor("dask")


def test_batches_are_sized_by_run_time_and_long_runs_go_alone() -> None:
    sizer = BatchSizer(target_s=0.05, cap=64)
    assert sizer.size() == 1  # no run time known yet
    for _ in range(20):
        sizer.observe(0.005)
    assert sizer.size() in (9, 10)  # about 50 ms of 5 ms runs
    for _ in range(20):
        sizer.observe(0.2)
    assert sizer.size() == 1  # a run past the target is never held back by a batch
    for _ in range(60):  # a moving mean: older run times fade
        sizer.observe(0.0001)
    assert sizer.size() == 64  # tiny runs: the cap
    assert BatchSizer(fixed=3).size() == 3


async def test_batched_keeps_at_most_concurrency_batches_in_flight_and_reads_lazily() -> None:
    taken = 0
    running = peak = 0
    sizes: list[int] = []

    def plan() -> Iterator[tuple[str, int]]:
        nonlocal taken
        for index in range(1, 1_000_001):  # a million planned runs: never listed
            taken += 1
            yield ("c", index)

    async def run_batch(batch: list[tuple[str, int]]) -> list[RunRecord]:
        nonlocal running, peak
        sizes.append(len(batch))
        records = []
        running += 1  # a batch runs its runs one after another: one under way at a time
        peak = max(peak, running)
        for case_id, index in batch:
            await asyncio.sleep(0.001)
            records.append(replace(_record(case_id, index), duration_s=0.001))
        running -= 1
        return records

    records = batched(plan(), 4, BatchSizer(target_s=0.005), run_batch)
    got = [await anext(records) for _ in range(200)]
    await records.aclose()
    assert peak == 4
    assert sizes[:4] == [1, 1, 1, 1] and max(sizes) == 5  # grown to 5 ms of 1 ms runs
    assert taken <= 200 + 4 * 5  # the plan is read one batch at a time
    assert len({r.run_index for r in got}) == 200  # each run once


async def test_batched_streams_a_batch_as_it_finishes_while_others_run() -> None:
    release = asyncio.Event()

    async def run_batch(batch: list[tuple[str, int]]) -> list[RunRecord]:
        if batch[0][1] == 1:
            await release.wait()  # the first batch is slow
        return [_record(c, i) for c, i in batch]

    records = batched((("c", i) for i in range(1, 5)), 2, BatchSizer(fixed=2), run_batch)
    first = await asyncio.wait_for(anext(records), 5)
    assert first.run_index == 3  # the second batch's record, before the first batch ends
    release.set()
    rest = [r.run_index async for r in records]
    assert sorted([first.run_index, *rest]) == [1, 2, 3, 4]


async def test_batched_leaves_a_lost_batch_wholly_missing_and_raises_the_first_failure() -> None:
    async def run_batch(batch: list[tuple[str, int]]) -> list[RunRecord] | None:
        if batch[0][1] == 7:
            raise RuntimeError("the cluster fell over")
        if batch[0][1] == 3:
            return None  # its worker died too often: none of 3, 4 is recorded
        return [_record(c, i) for c, i in batch]

    got: list[int] = []
    with pytest.raises(RuntimeError, match="the cluster fell over"):
        plan = (("c", i) for i in range(1, 11))
        async for record in batched(plan, 1, BatchSizer(fixed=2), run_batch):
            got.append(record.run_index)
    assert got == [1, 2, 5, 6]


def _shipped_runs(agent_name: str, k: int, timeout_s: float) -> list[RunRecord]:
    """Runs 1..k of the clarify suite's SEED case by `agents_for_tests:<agent_name>`, in
    one batch of a shipment prepared here."""
    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})
    agent = resolve_agent(f"agents_for_tests:{agent_name}")
    experiment = new_experiment(suite, agent, "", None, k=k, params={"max_turns": 4})
    job = Job(experiment, suite, agent, None, RunOptions(timeout_s=timeout_s))
    ready = prepare(ship(job), "test")
    return ready.run_batch([(SEED, index, 1) for index in range(1, k + 1)])


def test_a_run_past_its_deadline_in_a_batch_is_errored_and_the_rest_of_the_batch_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # run 2 blocks its loop 20 s, far past timeout + grace: abandoned at the grace, it is
    # told apart from a run waited for by the message, not by the clock
    monkeypatch.setenv("PASSHAT_TEST_BLOCK", "20")
    records = _shipped_runs("blocks_loop_on_run_2", 3, 0.2)
    assert [(r.run_index, r.status, r.error_type) for r in records] == [
        (1, "passed", None),
        (2, "errored", "timeout"),
        (3, "passed", None),  # run in a new thread once run 2 was abandoned
    ]
    assert "ignored its deadline" in (records[1].error_message or "")
    assert records[1].duration_s >= 0.2 + GRACE_S  # it had its time and the grace


def test_bytecode_that_is_not_its_source_compiled_changes_the_code_identity(
    tmp_path: Path,
) -> None:
    """A worker whose only change is a .pyc that Python would import (its header matches
    the source) must not pass as the driver's code: the .pyc is compared with the source
    compiled again, and one that differs enters the manifest, naming the file."""
    import importlib.util
    import py_compile

    from passhat.executors.identity import bytecode_matches

    source = tmp_path / "scoring.py"
    source.write_text("def passed(x):\n    return x == 1\n")
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert bytecode_matches(source), "no bytecode yet: nothing to doubt"
    py_compile.compile(str(source), cfile=str(cached), doraise=True)
    assert bytecode_matches(source), "honest bytecode must match"
    # the attack: bytecode of other code under the header of this source
    other = tmp_path / "other.py"
    other.write_text("def passed(x):\n    return True\n")
    forged = tmp_path / "forged.pyc"
    py_compile.compile(str(other), cfile=str(forged), doraise=True)
    header = cached.read_bytes()[:16]
    cached.write_bytes(header + forged.read_bytes()[16:])
    assert not bytecode_matches(source), "forged bytecode passed as the source's"
    # a stale .pyc (its header no longer matches the source) is not imported: no matter
    source.write_text("def passed(x):\n    return x == 2\n\n")
    assert bytecode_matches(source)


def test_a_bytecode_check_that_matched_is_remembered_and_a_pyc_changed_since_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Dask worker and driver compiled each of passhat's sources again to compare it
    with its .pyc: half a CPU-second a process. A match is remembered (CHECKED, beside
    identity's own bytecode), keyed by the bytes of the source and the .pyc: the next
    process compiles nothing; a .pyc forged afterwards is another key, compared again
    and refused, and a mismatch is never remembered."""
    import importlib.util
    import py_compile
    from types import SimpleNamespace

    from passhat.executors import identity

    package = tmp_path / "passhat"
    package.mkdir()
    init, scoring = package / "__init__.py", package / "scoring.py"
    init.write_text("")
    scoring.write_text("def passed(x):\n    return x == 1\n")
    for source in (init, scoring):
        py_compile.compile(str(source), importlib.util.cache_from_source(str(source)))
    monkeypatch.setattr(identity, "passhat", SimpleNamespace(__file__=str(init)))
    monkeypatch.setattr(identity, "CHECKED", tmp_path / "checked.txt", raising=False)
    compiled: list[str] = []

    def counted(source: bytes, filename: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(Path(filename).name)
        return compile(source, filename, *args, **kwargs)

    monkeypatch.setattr(identity, "compile", counted, raising=False)
    manifest = identity.code_manifest.__wrapped__  # a new process's, each call
    honest = manifest()
    assert sorted(compiled) == ["__init__.py", "scoring.py"]
    assert "passhat/scoring.py (bytecode)" not in honest
    assert manifest() == honest and len(compiled) == 2, "compiled again: not remembered"
    # the attack of the test above, once the honest .pyc was remembered
    other = tmp_path / "other.py"
    other.write_text("def passed(x):\n    return True\n")
    forged = tmp_path / "forged.pyc"
    py_compile.compile(str(other), cfile=str(forged), doraise=True)
    cached = Path(importlib.util.cache_from_source(str(scoring)))
    cached.write_bytes(cached.read_bytes()[:16] + forged.read_bytes()[16:])
    for compiles in (3, 4):
        refused = manifest()
        assert refused["passhat/scoring.py (bytecode)"] == "not what the source compiles to"
        assert compiled[2:] == ["scoring.py"] * (compiles - 2)
    # where it may not write (no such folder), each process compares again, silently
    monkeypatch.setattr(identity, "CHECKED", tmp_path / "absent" / "checked.txt")
    py_compile.compile(str(scoring), importlib.util.cache_from_source(str(scoring)))
    assert manifest() == manifest() == honest
    assert compiled[4:] == ["__init__.py", "scoring.py"] * 2


def test_a_shipped_run_whose_agent_leaves_a_task_behind_keeps_its_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each shipped run has a loop of its own (asyncio.run): an agent that returned but
    left a task catching every cancel held that loop's shutdown for good, the run's own
    record made, and the run was given up at its deadline and grace as one that ignored
    its deadline (errored, timeout) though it had passed; its thread left behind
    (review55). The loop is run_loop's now: the task is left behind after CLEANUP_S."""
    monkeypatch.setenv("PASSHAT_TEST_BLOCK", "20")
    records = _shipped_runs("perfect_leaving_a_task", 2, 5)
    assert [(r.status, r.error_type) for r in records] == [("passed", None)] * 2
