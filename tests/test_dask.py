"""The Dask executor on a real cluster: `dask scheduler` and two `dask worker` processes
on 127.0.0.1, started once for this module (no mocks)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import passhat
from cli_helpers import CLARIFY, ROOT, SEED, run_cli
from dask_cluster import TESTS, Cluster, started
from passhat.agents import resolve_agent
from passhat.errors import ExecutorError
from passhat.executors.dask import DaskExecutor
from passhat.executors.identity import code_hash
from passhat.records import RunRecord
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite
from test_runner import wait_for_runs

pytest.importorskip("distributed")

TRELLO = ROOT / "examples" / "trello"
SKEWED = "async def run(input, env, ctx):\n    return {!r}\n"
"""A package agent whose source differs between the driver and the workers."""
WORKER_ENV = {"PASSHAT_TEST_DELAY": "0.25", "PASSHAT_TEST_BLOCK": "3"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("dask")
    on_workers = folder / "worker_path"
    on_workers.mkdir()
    (on_workers / "skewed_agent.py").write_text(SKEWED.format("worker"), encoding="utf-8")
    env = {**WORKER_ENV, "PYTHONPATH": f"{TESTS}{os.pathsep}{on_workers}"}
    env["PASSHAT_TEST_GO"] = str(folder / "go")  # waits_for_go's runs wait for it
    with started(folder, env) as cluster:
        yield cluster


def _rows(db: Path, ref: str) -> list[RunRecord]:
    with Store(db) as store:
        return store.runs(store.experiment(ref).id)


def _verdicts(runs: list[RunRecord]) -> list[tuple[Any, ...]]:
    """What a run decided, without its timing."""
    return [
        (r.case_id, r.run_index, r.status, r.error_type, r.score, r.final_state, r.output)
        for r in runs
    ]


@pytest.mark.parametrize("suite", [CLARIFY, TRELLO], ids=["clarify-cassette", "trello-file-agent"])
def test_same_verdicts_as_the_local_executor(
    cluster: Cluster, suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # clarify: the built-in agent replaying the seed cassette (the cases it lacks end
    # errored, alike); trello: an agent and a scorer from files beside suite.yaml
    db = str(tmp_path / "p.db")
    base = ["run", str(suite), "-k", "2", "--db", db, "-q"]
    local = run_cli(capsys, *base, "--name", "local")
    assert local.code == 0, local.err
    remote = run_cli(
        capsys, *base, "--name", "dask", "--executor", "dask", "--scheduler", cluster.address
    )
    assert remote.code == 0, remote.err
    here, there = _rows(Path(db), "local"), _rows(Path(db), "dask")
    assert len(there) == len(load_suite(suite).cases) * 2
    assert _verdicts(there) == _verdicts(here)
    assert {r.status for r in there} >= {"failed"}
    assert [r.transcript for r in there] == [r.transcript for r in here]


def test_a_file_agent_runs_from_the_shipped_source(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "cassettes").mkdir()
    for name in ("suite.yaml", "cases/ac-conflict-001.yaml", "cassettes/seed.jsonl"):
        (suite / name).write_bytes((CLARIFY / name).read_bytes())
    (suite / "where.py").write_text(
        "async def run(input, env, ctx):\n    return __file__\n", encoding="utf-8"
    )
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys, "run", str(suite), "--agent", "where.py:run", "-k", "2", "--db", db, "-q",
        "--executor", "dask", "--scheduler", cluster.address,
    )  # fmt: skip
    assert r.code == 0, r.err
    loaded = [Path(run.output) for run in _rows(Path(db), "latest")]
    # each worker loaded its own copy of the shipped bytes, not the driver's file
    assert len(loaded) == 2 and all(path.parent.name == "agent" for path in loaded)
    assert all(path.parent.parent.name.startswith("passhat-") for path in loaded)
    assert all(path.read_bytes() == (suite / "where.py").read_bytes() for path in loaded)


def test_a_worker_with_another_agent_source_refuses(
    cluster: Cluster,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = tmp_path / "driver_path"
    here.mkdir()
    (here / "skewed_agent.py").write_text(SKEWED.format("driver"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(here))
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys, "run", str(CLARIFY), "--case", SEED, "--agent", "skewed_agent:run", "-k", "2",
        "--db", db, "-q", "--executor", "dask", "--scheduler", cluster.address,
    )  # fmt: skip
    assert r.code == 1
    assert "refuses the experiment: its source of agent 'skewed_agent:run'" in r.err
    assert "install the same version of the agent's package on every worker" in r.err
    assert "Traceback" not in r.err
    assert _rows(Path(db), "latest") == []


async def test_a_worker_with_another_passhat_version_is_refused_and_the_others_run_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    # a distribution record found first on the worker's path: it reports passhat 9.9.9
    fake = tmp_path / "fake_site"
    (fake / "passhat-9.9.9.dist-info").mkdir(parents=True)
    (fake / "passhat-9.9.9.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: passhat\nVersion: 9.9.9\n", encoding="utf-8"
    )
    _, address, why = await _beside_an_odd_worker(cluster, tmp_path, fake, 6)
    assert why == f"{address} has passhat 9.9.9"


async def _beside_an_odd_worker(
    cluster: Cluster, tmp_path: Path, site: Path, k: int
) -> tuple[DaskExecutor, str, str]:
    """k runs of odd_runs_pass with one more worker whose path starts with `site`: every
    run once, none on that worker, which is refused. The executor, its address and why."""
    odd = cluster.add_worker(env={"PYTHONPATH": f"{site}{os.pathsep}{TESTS}"})
    try:
        await asyncio.to_thread(cluster.wait_for_workers, 3)
        db = tmp_path / "p.db"
        suite, agent, experiment = _experiment(db, "agents_for_tests:odd_runs_pass", k)
        executor = DaskExecutor(cluster.address, batch=1)
        with Store(db) as store:
            await run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=6),
                executor=executor,
            )  # fmt: skip
        runs = _rows(db, experiment.id)
        _parity_ok(runs, k)
        [(address, why)] = executor.refused.items()
        assert all(r.ran_on and not r.ran_on.startswith(address + " ") for r in runs)
        return executor, address, why
    finally:
        odd.send_signal(signal.SIGKILL)
        odd.wait()
        await asyncio.to_thread(cluster.wait_for_workers, 2)


def _foreign_passhat(folder: Path, how: str = "source") -> Path:
    """Another checkout of passhat, the same version string: scoring.py edited, or
    (`bytecode`) only its .pyc, which Python imports since its header matches the source."""
    import importlib.util
    import py_compile

    source = Path(passhat.__file__).resolve().parent
    shutil.copytree(source, folder / "passhat", ignore=shutil.ignore_patterns("__pycache__"))
    scoring = folder / "passhat" / "scoring.py"
    if how == "source":
        with scoring.open("a", encoding="utf-8") as f:
            f.write("\n# graded otherwise on this worker\n")
        return folder
    cached = Path(importlib.util.cache_from_source(str(scoring)))
    py_compile.compile(str(scoring), cfile=str(cached), doraise=True)
    other = folder / "other.py"
    other.write_text(scoring.read_text(encoding="utf-8") + "\nGRADED_OTHERWISE = True\n")
    forged = folder / "forged.pyc"
    py_compile.compile(str(other), cfile=str(forged), doraise=True)
    cached.write_bytes(cached.read_bytes()[:16] + forged.read_bytes()[16:])
    return folder


def _experiment(db: Path, agent: str, k: int) -> tuple[Any, Any, Any]:
    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})
    loaded = resolve_agent(agent)
    experiment = new_experiment(suite, loaded, "", None, k=k, params={"max_turns": 10})
    with Store(db) as store:
        store.create_experiment(experiment)
    return suite, loaded, experiment


def _parity_ok(runs: list[RunRecord], k: int) -> None:
    """odd_runs_pass: every index once, odd ones passed, even ones failed."""
    assert [r.run_index for r in runs] == list(range(1, k + 1))
    assert [r.status for r in runs] == ["passed" if i % 2 else "failed" for i in range(1, k + 1)]


@pytest.mark.parametrize("batch", [None, 3], ids=["one-per-task", "batches-of-3"])
async def test_kill_9_of_a_worker_mid_experiment_loses_and_doubles_nothing(
    cluster: Cluster, tmp_path: Path, batch: int | None
) -> None:
    # batches of 3: the killed worker's batch comes back from another worker, whole
    db = tmp_path / "p.db"
    k = 16
    suite, agent, experiment = _experiment(db, "agents_for_tests:slow", k)
    victim = cluster.live_workers()[0]
    executor = DaskExecutor(cluster.address, batch=batch)
    seen: list[int] = []

    def progress(run: RunRecord) -> None:
        seen.append(run.run_index)
        if len(seen) == 3:
            victim.send_signal(signal.SIGKILL)

    try:
        with Store(db) as store:
            await run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=4), progress, executor
            )
        assert victim.wait(timeout=10) == -signal.SIGKILL
        runs = _rows(db, experiment.id)
        _parity_ok(runs, k)  # 0 lost, 0 twice
        assert sorted(seen) == list(range(1, k + 1)) and executor.left_missing == []
        assert executor.tasks == (k if batch is None else -(-k // batch))
    finally:
        cluster.add_worker()
        await asyncio.to_thread(cluster.wait_for_workers, 2)


async def test_a_run_past_its_timeout_is_errored_even_when_it_blocks_its_loop(
    cluster: Cluster, tmp_path: Path
) -> None:
    # the agent sleeps 3 s without yielding: asyncio's timeout cannot fire, the worker's
    # does, for each run of a batch in turn (both runs go in one task)
    db = tmp_path / "p.db"
    suite, agent, experiment = _experiment(db, "agents_for_tests:blocks_loop", 2)
    executor = DaskExecutor(cluster.address, batch=2)
    with Store(db) as store:
        await run_experiment(
            store, experiment, suite, agent, None, RunOptions(concurrency=2, timeout_s=0.5),
            executor=executor,
        )  # fmt: skip
    runs = _rows(db, experiment.id)
    assert executor.tasks == 1
    assert [(r.status, r.error_type) for r in runs] == [("errored", "timeout")] * 2
    assert all("ignored its deadline" in (r.error_message or "") for r in runs)


def test_driver_sigkill_then_resume_completes(cluster: Cluster, tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    env = {**os.environ, "PYTHONPATH": TESTS, "PASSHAT_TEST_DELAY": "0.25"}
    dask = ["--executor", "dask", "--scheduler", cluster.address, "--db", str(db), "-q"]
    argv = [sys.executable, "-m", "passhat", "run", str(CLARIFY), "--case", SEED, "-k", "16"]
    argv += ["--agent", "agents_for_tests:slow", "--concurrency", "2", "--name", "killed", *dask]
    driver = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_runs(db, 3)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    assert len(_rows(db, "killed")) < 16, "the kill must land mid-experiment"
    resume = [sys.executable, "-m", "passhat", "resume", "killed", "--strict", *dask]
    done = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    _parity_ok(_rows(db, "killed"), 16)


async def test_losing_the_scheduler_stops_cleanly_and_resume_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = Cluster(tmp_path, env=WORKER_ENV)  # its own: this test kills the scheduler
    db = tmp_path / "p.db"
    k = 12
    suite, agent, experiment = _experiment(db, "agents_for_tests:slow", k)
    seen: list[int] = []

    def progress(run: RunRecord) -> None:
        seen.append(run.run_index)
        if len(seen) == 2:
            own.scheduler.send_signal(signal.SIGKILL)

    try:
        own.add_worker()
        await asyncio.to_thread(own.wait_for_workers, 1)
        with Store(db) as store, pytest.raises(ExecutorError, match="lost the Dask scheduler"):
            await run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=2), progress,
                DaskExecutor(own.address),
            )  # fmt: skip
    finally:
        own.close()
    kept = _rows(db, experiment.id)
    assert 2 <= len(kept) < k and len(kept) == len(seen)
    r = await asyncio.to_thread(
        run_cli, capsys, "resume", experiment.id, "--db", str(db), "-q", "--strict"
    )
    assert r.code == 0, r.err
    _parity_ok(_rows(db, experiment.id), k)


@pytest.mark.parametrize("batch", [None, 3], ids=["one-per-task", "batches-of-3"])
async def test_runs_whose_worker_dies_too_often_are_left_missing_never_half_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], batch: int | None
) -> None:
    # allowed-failures 0: the first worker death gives up on the runs it held. Run 3 kills
    # the worker it runs on (once), so the dead worker always held at least that run
    mark = tmp_path / "killed"
    own = Cluster(
        tmp_path,
        env={
            **WORKER_ENV,
            "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
            "PASSHAT_TEST_KILL_MARK": str(mark),
        },
    )
    db = tmp_path / "p.db"
    k = 12
    suite, agent, experiment = _experiment(db, "agents_for_tests:kills_its_worker", k)
    executor = DaskExecutor(own.address, batch=batch)
    try:
        own.add_worker()
        own.add_worker()
        await asyncio.to_thread(own.wait_for_workers, 2)
        with Store(db) as store:
            await run_experiment(
                store, experiment, suite, agent, None, RunOptions(concurrency=4), None,
                executor,
            )  # fmt: skip
        assert mark.exists() and [w.poll() for w in own.workers].count(-signal.SIGKILL) == 1
    finally:
        own.close()
    left = {index for _, index in executor.left_missing}
    recorded = {r.run_index for r in _rows(db, experiment.id)}
    assert 3 in left and not left & recorded and left | recorded == set(range(1, k + 1))
    if batch is not None:  # a lost batch is lost whole: none of its runs half-counted
        assert len(left) % batch == 0
    r = await asyncio.to_thread(
        run_cli, capsys, "resume", experiment.id, "--db", str(db), "-q", "--strict"
    )
    assert r.code == 0, r.err
    _parity_ok(_rows(db, experiment.id), k)


async def test_without_a_scheduler_a_local_cluster_on_loopback_runs_them(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    agent_name = "agents_for_tests:odd_runs_pass_telling_its_housekeeping"
    suite, agent, experiment = _experiment(db, agent_name, 1)
    executor = DaskExecutor()
    with Store(db) as store:
        await run_experiment(
            store, experiment, suite, agent, None, RunOptions(concurrency=2), executor=executor
        )
    # TLS with a certificate of its own: no other process of the machine connects
    assert executor.address is not None and executor.address.startswith("tls://127.0.0.1:")
    # one run to make, one worker process (each costs a second or two of CPU), though
    # --concurrency 2 on two cores would start two
    assert executor.local_processes == 1
    runs = _rows(db, experiment.id)
    _parity_ok(runs, 1)
    # its workers tick each second, not each 20 ms, and look at the system each 2 s, not
    # each 500 ms, with no profiler: a dashboard's figures, and there is no dashboard
    assert [r.output for r in runs] == [[1.0, 2000.0, False]]


def test_a_local_cluster_is_sized_by_the_runs_read_ahead_no_further() -> None:
    from itertools import count

    from passhat.executors.dask import _ahead, local_workers

    endless = ((SEED, i) for i in count(1))  # a plan read lazily: never read whole
    rest, runs = _ahead(endless, 2)
    assert runs is None and next(rest) == (SEED, 1) and next(rest) == (SEED, 2)
    rest, runs = _ahead([(SEED, 1)], 2)
    assert runs == 1 and list(rest) == [(SEED, 1)]
    assert local_workers(1, 1) == 1 and local_workers(3, 2) == min(os.cpu_count() or 1, 2)


@pytest.mark.parametrize("how", ["source", "bytecode"])
async def test_a_worker_of_other_code_present_at_the_start_is_refused_by_name(
    cluster: Cluster, tmp_path: Path, how: str
) -> None:
    # another checkout beside the two honest workers (an edited scoring.py, or only its
    # bytecode): refused before any run, naming the file; the experiment goes on with
    # the other two, every run once
    foreign = _foreign_passhat(tmp_path / "foreign", how)
    executor, address, why = await _beside_an_odd_worker(cluster, tmp_path, foreign, 12)
    assert why.startswith(f"{address} has other passhat code (")
    named = {
        "source": "passhat/scoring.py differs",
        "bytecode": "passhat/scoring.py (bytecode) only on the worker",
    }
    assert named[how] in why and "passhat/runner.py" not in why
    assert executor.tasks == 12  # refused before it took any: nothing sent twice


async def test_a_worker_of_other_code_joining_late_is_refused_and_its_runs_go_elsewhere(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Issue 32: a changed worker joining late stopped the experiment, with a message
    that did not name the file. Runs are held until it has joined (and Dask has queued
    runs for it); it answers each with a refusal, and those runs go to the others."""
    go = cluster.folder / "go"  # PASSHAT_TEST_GO of the module's cluster
    db = tmp_path / "p.db"
    k = 12
    suite, agent, experiment = _experiment(db, "agents_for_tests:waits_for_go", k)
    executor = DaskExecutor(cluster.address, batch=1)
    late: subprocess.Popen[bytes] | None = None
    try:
        with Store(db) as store:
            options = RunOptions(concurrency=8)  # 4 held by the two workers' threads
            running = asyncio.create_task(
                run_experiment(store, experiment, suite, agent, None, options, executor=executor)
            )
            foreign = _foreign_passhat(tmp_path / "foreign")
            late = cluster.add_worker(
                nthreads=4, env={"PYTHONPATH": f"{foreign}{os.pathsep}{TESTS}"}
            )
            await asyncio.to_thread(cluster.wait_for_workers, 3)
            # the scheduler hands it queued runs, which it refuses: a second under load
            # was not always enough (12 tasks for k = 12)
            for _ in range(1200):
                if executor.refused:
                    break
                await asyncio.sleep(0.05)
            go.touch()
            await running
    finally:
        go.touch()
        if late is not None:
            late.send_signal(signal.SIGKILL)
            late.wait()
            await asyncio.to_thread(cluster.wait_for_workers, 2)
    runs = _rows(db, experiment.id)
    _parity_ok(runs, k)  # none lost, none twice
    [(address, why)] = executor.refused.items()
    assert "passhat/scoring.py differs" in why and why.startswith(f"{address} has other")
    assert all(r.ran_on and not r.ran_on.startswith(address + " ") for r in runs)
    assert executor.tasks > k  # it did take runs, and they were sent again


def test_when_no_worker_matches_the_experiment_stops_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = Cluster(tmp_path)
    foreign = _foreign_passhat(tmp_path / "foreign")
    try:
        own.add_worker(env={"PYTHONPATH": f"{foreign}{os.pathsep}{TESTS}"})
        own.wait_for_workers(1)
        db = str(tmp_path / "p.db")
        r = run_cli(
            capsys, "run", str(CLARIFY), "--case", SEED, "-k", "2", "--db", db, "-q",
            "--executor", "dask", "--scheduler", own.address,
        )  # fmt: skip
    finally:
        own.close()
    assert r.code == 1 and "Traceback" not in r.err
    said = " ".join(r.err.split())
    assert "Dask workers cannot run this experiment: tcp://127.0.0.1:" in said
    assert "has other passhat code" in said and "passhat/scoring.py differs" in said
    assert f"the driver has passhat {passhat.__version__} (code {code_hash()})" in said
    assert _rows(Path(db), "latest") == []


def test_a_worker_refuses_a_shipment_from_other_code_and_each_run_says_where_it_ran(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from passhat.executors.identity import foreign

    assert (
        foreign("w", (passhat.__version__, code_hash()), passhat.__version__, code_hash()) is None
    )
    refusal = foreign("w", (passhat.__version__, "0" * 16), passhat.__version__, code_hash())
    assert refusal is not None and "runs other passhat code than the driver" in refusal
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys, "run", str(CLARIFY), "--case", SEED, "-k", "2", "--db", db, "-q",
        "--executor", "dask", "--scheduler", cluster.address,
    )  # fmt: skip
    assert r.code in (0, 1), r.err
    runs = _rows(Path(db), "latest")
    assert len(runs) == 2
    for run in runs:
        assert run.ran_on is not None and run.ran_on.startswith("tcp://127.0.0.1:")
        assert f"(passhat {passhat.__version__}, code {code_hash()})" in run.ran_on
    shown = run_cli(capsys, "show", "latest", SEED, "1", "--db", db)
    assert "ran on tcp://127.0.0.1:" in " ".join(shown.out.split())  # rich wraps the line


async def test_short_runs_go_several_to_a_task_each_recorded_once_with_where_it_ran(
    cluster: Cluster, tmp_path: Path
) -> None:
    # runs of a few ms: after the first (one per task), batches of about 50 ms of runs
    db = tmp_path / "p.db"
    k = 40
    suite, agent, experiment = _experiment(db, "agents_for_tests:odd_runs_pass", k)
    executor = DaskExecutor(cluster.address)
    with Store(db) as store:
        await run_experiment(
            store, experiment, suite, agent, None, RunOptions(concurrency=2), executor=executor
        )
    runs = _rows(db, experiment.id)
    _parity_ok(runs, k)
    # one run a task would make k tasks; under load a run lasts longer and a batch holds
    # fewer (22 tasks at load 20)
    assert executor.tasks <= 3 * k // 4
    assert all(r.ran_on is not None and r.ran_on.startswith("tcp://127.0.0.1:") for r in runs)


_WAITS = (
    "import asyncio\nfrom pathlib import Path\n\n\n"
    "async def run(input, env, ctx):\n"
    "    Path({started!r}).touch()\n"
    "    while not Path({go!r}).exists():\n"
    "        await asyncio.sleep(0.05)\n"
    "    return __file__\n"
)
"""A file agent that says it started, waits for a file to appear, and says where it ran."""


def test_a_shipment_evicted_from_a_workers_cache_while_its_run_goes_on_still_grades_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker keeps the last 4 shipments it unpacked (shipment._KEPT); a fifth evicted
    the oldest, closing its tamper guard and removing its folder, while a run of it was
    still going: graded with its suite gone, that run was errored suite_changed. A
    shipment now ends only once its last batch does (its folder is gone then, the four
    others' are kept). One worker, so that all five experiments land in the one cache."""
    db = str(tmp_path / "p.db")
    go = tmp_path / "go"
    (tmp_path / "cluster").mkdir()
    with started(tmp_path / "cluster", WORKER_ENV, workers=1) as cluster:
        suites = []
        for n in range(5):  # five shipments: each agent file differs
            suite = tmp_path / f"suite{n}"
            shutil.copytree(TRELLO, suite)
            started_file = tmp_path / f"started{n}"
            waits_for = go if n == 0 else tmp_path
            text = _WAITS.format(started=str(started_file), go=str(waits_for))
            (suite / "waits.py").write_text(text, encoding="utf-8")
            suites.append(suite)
        args = ["--agent", "waits.py:run", "--case", "export-orders-csv", "-k", "1", "-q"]
        args += ["--db", db, "--executor", "dask", "--scheduler", cluster.address]
        first = subprocess.Popen(
            [sys.executable, "-m", "passhat", "run", str(suites[0]), "--name", "first", *args],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not (tmp_path / "started0").exists():
                assert first.poll() is None and time.monotonic() < deadline, "never started"
                time.sleep(0.05)
            for n, suite in enumerate(suites[1:], 1):  # the fifth evicts the first
                r = run_cli(capsys, "run", str(suite), "--name", f"next{n}", *args)
                assert r.code in (0, 1), r.err
            go.touch()
            _, err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
    assert first.returncode in (0, 1), err
    [run] = _rows(Path(db), "first")
    assert (run.status, run.error_type) == ("failed", None), run.error_message
    assert run.output and not Path(run.output).parent.exists()
    [kept] = _rows(Path(db), "next4")
    assert kept.output and Path(kept.output).parent.exists()


_REWRITES_ON_WORKERS = """

import pathlib as _pathlib

_HERE = _pathlib.Path(__file__).resolve().parent
if _HERE.parent.name.startswith("passhat-"):  # a worker's unpacked shipment, not the driver's
    _CASE = _HERE / "cases" / "export-orders-csv.yaml"
    _TEXT = _CASE.read_text(encoding="utf-8")
    if "[feature, customer-reported]" in _TEXT:
        _TEXT = _TEXT.replace("[feature, customer-reported]", "[feature]")
        _CASE.write_text(_TEXT, encoding="utf-8")
"""
"""Appended to trello's rules.py: on a worker, importing it (as the suite loads, once the
cases were read) rewrites a goal on disk."""


def test_a_worker_watches_its_suite_from_before_its_load(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker took its suite guard's look after load_suite, so a goal rewritten while
    the suite loaded (here by the suite's own scorer file, imported once the cases were
    read) was the guard's baseline: its runs were graded as if the suite on disk were the
    one loaded (seen given verdicts, not suite_changed, before the fix). run, resume and regrade take their look
    before the load (tamper.look); so does the worker now: its runs are errored
    suite_changed."""
    suite = tmp_path / "suite"
    shutil.copytree(TRELLO, suite)
    with (suite / "rules.py").open("a", encoding="utf-8") as rules:
        rules.write(_REWRITES_ON_WORKERS)
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys, "run", str(suite), "--case", "export-orders-csv", "-k", "2", "--db", db,
        "-q", "--executor", "dask", "--scheduler", cluster.address,
    )  # fmt: skip
    assert r.code in (0, 1), r.err
    runs = _rows(Path(db), "latest")
    assert [run.error_type for run in runs] == ["suite_changed", "suite_changed"]
    assert "cases/export-orders-csv.yaml" in (runs[0].error_message or "")
    driver_side = (suite / "cases" / "export-orders-csv.yaml").read_text(encoding="utf-8")
    assert "[feature, customer-reported]" in driver_side  # the driver's suite untouched
