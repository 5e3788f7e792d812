"""Command agents on Dask workers (issue 32, item 7): the agent's program is shipped by
value, and each run is sealed on the worker at the experiment's level, as locally.

A real cluster (`dask scheduler` and two `dask worker` processes on 127.0.0.1), a real
agent process per run, bubblewrap on the worker at --isolation namespace; no mocks.
"""

from __future__ import annotations

import shutil
import signal
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import passhat
from agent_python import ENV, PYTHON, skip_if_closed
from cli_helpers import CLARIFY, ROOT, SEED, run_cli
from dask_cluster import TESTS, Cluster, started
from passhat.agents import isolation
from passhat.agents.command import CommandSpec
from passhat.errors import WorkerRefused
from passhat.executors.base import Job
from passhat.executors.program import PROGRAM
from passhat.executors.shipment import Shipment, prepare, ship
from passhat.records import RunRecord
from passhat.runner import RunOptions
from test_dask import _rows, _verdicts

pytest.importorskip("distributed")

EXAMPLE = ROOT / "examples" / "command-agent" / "agent.py"
TS_AGENT = ROOT / "examples" / "clarify-ts" / "dist" / "agent.js"
WORKER_KEY = "sk-worker-only-" + "w" * 24
"""A provider key in the workers' environment, never in the driver's."""

ATTACK = """
import glob, json, os, socket
found = {"goals": [], "scheduler": False, "keys": None}
case = os.environ["ATTACK_CASE"] + ".yaml"  # this suite's: other experiments' stay out
for path in glob.glob("/tmp/passhat-*/suite/cases/" + case) + glob.glob(
    os.environ["ATTACK_SUITE"] + "/cases/" + case
):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        continue
    if text not in found["goals"]:
        found["goals"].append(text)
address = os.environ["ATTACK_SCHEDULER"]
host, port = address.removeprefix("tcp://").rsplit(":", 1)
try:
    socket.create_connection((host, int(port)), 3).close()
    found["scheduler"] = True
except OSError:
    pass
if found["scheduler"]:  # as issue 32 did: run code on every worker through the scheduler
    from distributed import Client

    with Client(address, timeout=20) as client:
        got = client.run(lambda: __import__("os").environ.get("OPENAI_API_KEY"))
        found["keys"] = sorted({v for v in got.values() if v})
print(json.dumps(found))
"""
"""An agent that looks for its case's goal (in the worker's shipment and in the driver's
suite), connects to the Dask scheduler on loopback, and through it reads the workers'
provider key."""


def _python_or_skip() -> str:
    if PYTHON is None:
        pytest.skip("no Python any user may run (a root passhat's runs need one)")
    return PYTHON


def _level_or_skip(level: str) -> None:
    reason = isolation.unavailable(isolation.check_level(level))
    if reason is not None:
        pytest.skip(f"no {level} level here: {reason}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("dask_command")
    with started(folder, {"OPENAI_API_KEY": WORKER_KEY, "PYTHONPATH": TESTS}) as cluster:
        yield cluster


def _spec(*command: str, **env: str) -> str:
    return CommandSpec(command=command, env={**ENV, **env}).spec()


def _evaluate(suite: Path, spec: str, db: Path, level: str, **kwargs: Any) -> Any:
    return passhat.evaluate(
        suite, agent=spec, cases=[SEED], db=db, isolation=level, concurrency=2, **kwargs
    )


def _calls(run: RunRecord) -> list[tuple[Any, ...]]:
    """The run's tool calls, without their timing."""
    return [(c["tool"], c["arguments"], c["result"], c["error"]) for c in run.tool_calls]


@pytest.mark.parametrize(
    ("example", "level"),
    [("python", "namespace"), ("python", "process"), ("typescript", "namespace")],
)
def test_a_command_agent_on_dask_gives_the_local_verdicts_and_counts(
    cluster: Cluster, tmp_path: Path, example: str, level: str
) -> None:
    """The example agents (Python, and TypeScript with its node_modules; the official
    mcp and openai SDKs) on the seed's cassette: the same verdicts, tool calls,
    transcripts and counts from the workers as locally, each run made on a worker,
    under the same source hash and fingerprint."""
    skip_if_closed(level)
    from passhat.executors.dask import DaskExecutor

    _level_or_skip(level)
    if example == "python":
        spec = _spec(_python_or_skip(), str(EXAMPLE))
    else:
        node = shutil.which("node")
        assert node is not None, "node is needed for the TypeScript example"
        assert TS_AGENT.is_file(), f"{TS_AGENT} is missing: run `make clarify-ts`"
        spec = CommandSpec(command=(node, str(TS_AGENT))).spec()
    db = tmp_path / "p.db"
    here = _evaluate(CLARIFY, spec, db, level, k=3, name="local")
    there = _evaluate(
        CLARIFY, spec, db, level, k=3, name="dask", executor=DaskExecutor(cluster.address)
    )
    local, remote = _rows(db, "local"), _rows(db, "dask")
    assert len(remote) == 3 and _verdicts(remote) == _verdicts(local)
    assert {r.status for r in remote} == {"failed"}  # the seed's three, graded alike
    assert [_calls(r) for r in remote] == [_calls(r) for r in local]
    assert [r.transcript for r in remote] == [r.transcript for r in local]
    assert all(r.ran_on and r.ran_on.startswith("tcp://127.0.0.1:") for r in remote)
    assert all(r.ran_on is None for r in local)
    assert here.record.agent_hash == there.record.agent_hash is not None
    assert here.record.fingerprint == there.record.fingerprint
    assert here.record.params == there.record.params  # the level recorded alike


@pytest.mark.parametrize("level", ["namespace", "process"])
def test_an_agent_on_a_worker_cannot_read_goals_reach_the_scheduler_or_the_workers_key(
    cluster: Cluster, tmp_path: Path, level: str
) -> None:
    """Issue 32: an agent ran code as root on passhat's Dask cluster and read the worker's
    OPENAI_API_KEY. Under namespace on a worker it finds no goal (not the worker's
    shipped suite, not the driver's), and the scheduler's loopback port refuses it; the
    control at process level shows each attack working there."""
    skip_if_closed(level)
    from passhat.executors.dask import DaskExecutor

    _level_or_skip(level)
    agent = tmp_path / "attacker" / "attack.py"
    agent.parent.mkdir()
    agent.write_text(ATTACK, encoding="utf-8")
    spec = _spec(
        _python_or_skip(),
        str(agent),
        ATTACK_SUITE=str(CLARIFY),
        ATTACK_CASE=SEED,
        ATTACK_SCHEDULER=cluster.address,
    )
    db = tmp_path / "p.db"
    executor = DaskExecutor(cluster.address)
    _evaluate(CLARIFY, spec, db, level, k=2, executor=executor)
    runs = _rows(db, "latest")
    assert [r.status for r in runs] == ["failed", "failed"], runs[0].error_message
    goal = (CLARIFY / "cases" / f"{SEED}.yaml").read_text(encoding="utf-8")
    for run in runs:
        found = run.output
        if level == "namespace":
            assert found == {"goals": [], "scheduler": False, "keys": None}
        else:
            assert goal in found["goals"] and found["scheduler"] is True
            assert found["keys"] == [WORKER_KEY]
        assert WORKER_KEY not in str(run.stderr)


def _quiet_agent_and_no_bwrap(tmp_path: Path) -> tuple[str, Path]:
    """(the spec of an agent that answers nothing, a folder for a PATH without bwrap);
    skips where runs cannot be sealed here."""
    _level_or_skip("namespace")
    agent = tmp_path / "quiet.py"
    agent.write_text("print('{}')\n", encoding="utf-8")
    empty = tmp_path / "no_bwrap"
    empty.mkdir()
    return _spec(_python_or_skip(), str(agent)), empty


def test_a_worker_without_bwrap_is_refused_by_name_and_the_others_run_the_experiment(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A worker that cannot seal runs at namespace (no bwrap on its PATH) never runs one
    weaker: it is refused before any run, named with what to install, and the others
    make every run. The control at process level: the same worker takes runs."""
    skip_if_closed()
    from passhat.executors.dask import DaskExecutor

    spec, empty = _quiet_agent_and_no_bwrap(tmp_path)
    odd = cluster.add_worker(env={"PATH": str(empty)})
    try:
        cluster.wait_for_workers(3)
        ran_on: dict[str, set[str]] = {}
        refused: dict[str, dict[str, str]] = {}
        for level in ("namespace", "process"):
            executor = DaskExecutor(cluster.address, batch=1)
            db = tmp_path / f"{level}.db"
            _evaluate(CLARIFY, spec, db, level, k=9, executor=executor)
            runs = _rows(db, "latest")
            assert [r.run_index for r in runs] == list(range(1, 10))
            assert {r.status for r in runs} == {"failed"}, runs[0].error_message
            ran_on[level] = {str(r.ran_on).split(" ")[0] for r in runs}
            refused[level] = executor.refused
        [(address, why)] = refused["namespace"].items()
        assert why.startswith(f"{address} cannot seal the runs: --isolation namespace needs bwrap")
        assert "install bubblewrap" in why
        assert address not in ran_on["namespace"] and len(ran_on["namespace"]) == 2
        assert refused["process"] == {} and address in ran_on["process"]
    finally:
        odd.send_signal(signal.SIGKILL)
        odd.wait()
        cluster.wait_for_workers(2)


def test_a_driver_without_bwrap_runs_a_namespace_experiment_on_workers_that_seal(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """passhat's own machine makes none of the runs on Dask, so it need not be able to
    seal them: with no bwrap on the driver's PATH, a namespace experiment runs on workers
    that have it, each sealed there. The control: the same experiment on the driver's
    own loop is refused, naming what to install."""
    skip_if_closed()
    from passhat.executors.dask import DaskExecutor

    spec, empty = _quiet_agent_and_no_bwrap(tmp_path)
    monkeypatch.setenv("PATH", str(empty))
    isolation.unavailable.cache_clear()
    try:
        with pytest.raises(passhat.InputError, match="namespace needs bwrap"):
            _evaluate(CLARIFY, spec, tmp_path / "here.db", "namespace", k=2)
        executor = DaskExecutor(cluster.address, batch=1)
        _evaluate(CLARIFY, spec, tmp_path / "dask.db", "namespace", k=4, executor=executor)
    finally:
        isolation.unavailable.cache_clear()
    runs = _rows(tmp_path / "dask.db", "latest")
    assert [r.run_index for r in runs] == [1, 2, 3, 4]
    assert {r.status for r in runs} == {"failed"}, runs[0].error_message
    assert executor.refused == {} and all(r.ran_on for r in runs)


# ------------------------------------------------------------ the shipment, in-process


def _command_job(suite: Path, spec: str, params: dict[str, Any] | None = None) -> Job:
    from passhat.agents import resolve_agent
    from passhat.runner import new_experiment
    from passhat.suite import load_suite

    loaded = load_suite(suite)
    agent = resolve_agent(spec, suite_dir=loaded.path)
    experiment = new_experiment(loaded, agent, "", None, k=1, params=params or {})
    return Job(experiment, loaded, agent, None, RunOptions())


def _agent_beside_a_suite(tmp_path: Path) -> Path:
    """A suite whose agent lives in its folder, with a module of its own, a secret and
    a cache beside it."""
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    for name in ("suite.yaml", f"cases/{SEED}.yaml"):
        (suite / name).write_bytes((CLARIFY / name).read_bytes())
    tools = tmp_path / "bot"
    (tools / "__pycache__").mkdir(parents=True)
    (tools / "bot.py").write_text("import helper\nprint(helper.ANSWER)\n", encoding="utf-8")
    (tools / "helper.py").write_text("ANSWER = '{}'\n", encoding="utf-8")
    (tools / ".env").write_text("SERP_API_KEY=sk-not-for-workers\n", encoding="utf-8")
    (tools / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\0")
    (suite / "run.sh").write_text("#!/bin/sh\necho '{}'\n", encoding="utf-8")
    (suite / "run.sh").chmod(0o755)
    return suite


def _shipped(suite: Path, spec: str) -> tuple[Shipment, set[Path]]:
    """The shipment of a command agent's experiment, and the driver paths of its program."""
    shipment = ship(_command_job(suite, spec))
    return shipment, {
        Path(n.removeprefix(PROGRAM)) for n in shipment.files if n.startswith(PROGRAM)
    }


def test_the_shipment_holds_the_agents_program_and_nothing_a_run_may_not_see(
    tmp_path: Path,
) -> None:
    suite = _agent_beside_a_suite(tmp_path)
    bot = tmp_path / "bot"
    shipment, program = _shipped(suite, _spec(sys.executable, str(bot / "bot.py")))
    assert program == {bot / "bot.py", bot / "helper.py"}  # not .env, not __pycache__
    assert shipment.level == "namespace"  # the default, as locally
    # beside suite.yaml: only the file the command names, never the suite's cases
    shipment, program = _shipped(suite, CommandSpec(command=("./run.sh",)).spec())
    assert program == {suite / "run.sh"}
    assert shipment.executable == frozenset({f"{PROGRAM}{suite / 'run.sh'}"})
    # a read: path relative to its cwd is part of its program, at its place beside it
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "prices.csv").write_text("sku,price\n", encoding="utf-8")
    spec = CommandSpec(command=(sys.executable, "bot.py"), cwd=str(bot), read=("../data",))
    shipment, program = _shipped(suite, spec.spec())
    assert program == {bot / "bot.py", bot / "helper.py", tmp_path / "data" / "prices.csv"}
    assert f'"read": ["{{root}}/{PROGRAM}{tmp_path / "data"}"]' in shipment.agent_spec
    # the agent's own virtualenv beside it is its interpreter: the worker's to have
    venv = bot / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    (venv / "bin" / "python").symlink_to(sys.executable)
    shipment, program = _shipped(suite, _spec(str(venv / "bin" / "python"), str(bot / "bot.py")))
    assert program == {bot / "bot.py", bot / "helper.py"}
    assert f'"{venv / "bin" / "python"}"' in shipment.agent_spec


def test_a_worker_rebuilds_the_agent_from_the_shipped_bytes_under_the_same_hash(
    tmp_path: Path,
) -> None:
    suite = _agent_beside_a_suite(tmp_path)
    bot = tmp_path / "bot"
    job = _command_job(suite, _spec(sys.executable, str(bot / "bot.py")), {"isolation": "process"})
    shipment = ship(job)
    for path in (bot / "bot.py", bot / "helper.py"):
        path.unlink()  # nothing of the driver's program is read past this point
    ready = prepare(shipment, "test")
    agent = ready.agent.agent
    assert ready.agent.source_hash == job.agent.source_hash is not None
    assert agent.argv[1] == f"{ready.root}/{PROGRAM}{bot / 'bot.py'}"
    record = ready.run(SEED, 1)
    assert record.error_type is None and record.output == {}, record.error_message

    # the worker's copy of the suite rewritten before its first run (an agent at the
    # process level could): the runs graded after it are errored, as locally
    again = prepare(shipment, "again")
    case = again.root / "suite" / "cases" / f"{SEED}.yaml"
    text = case.read_text(encoding="utf-8")
    case.write_text(text.replace("label: conflict", "label: unverifiable"), encoding="utf-8")
    record = again.run(SEED, 1)
    assert record.error_type == "suite_changed", record.error_message

    # other bytes than the driver hashed: refused, naming the agent's source
    files = dict(shipment.files)
    files[f"{PROGRAM}{bot / 'bot.py'}"] += b"# edited on the way\n"
    with pytest.raises(WorkerRefused, match=r"its source of agent .* \(sha256\) is"):
        prepare(replace(shipment, files=files, digest="other"), "tcp://127.0.0.1:1")


def test_a_worker_refuses_a_level_it_cannot_have_rather_than_run_weaker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker process with no bwrap on its PATH refuses a namespace experiment, saying
    what to install; the same shipment at the process level it takes."""
    _level_or_skip("namespace")
    suite = _agent_beside_a_suite(tmp_path)
    spec = _spec(sys.executable, str(tmp_path / "bot" / "bot.py"))
    empty = tmp_path / "no_bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    isolation.unavailable.cache_clear()
    try:
        with pytest.raises(WorkerRefused) as refused:
            prepare(ship(_command_job(suite, spec)), "tcp://127.0.0.1:1")
        ready = prepare(ship(_command_job(suite, spec, {"isolation": "process"})), "w")
    finally:
        isolation.unavailable.cache_clear()
    assert str(refused.value).startswith(
        "worker tcp://127.0.0.1:1 refuses the experiment: --isolation namespace needs bwrap"
    )
    assert ready.agent.source_hash is not None


def test_a_command_agents_experiment_resumes_on_dask_from_the_command_line(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was refused (`--executor dask does not run command agents yet`): a command agent's
    experiment run locally is resumed on the workers, each run again there."""
    db = tmp_path / "p.db"
    cmd = ["--case", SEED, "--agent-cmd", "false", "--db", str(db), "-q"]
    r = run_cli(capsys, "run", str(CLARIFY), *cmd, "-k", "2", "--name", "cmd")
    assert r.code == 1 and [run.ran_on for run in _rows(db, "cmd")] == [None, None]
    resume = ["resume", "cmd", "--errored", "--db", str(db), "-q"]
    r = run_cli(capsys, *resume, "--executor", "dask", "--scheduler", cluster.address)
    assert "Traceback" not in r.err
    runs = _rows(db, "cmd")
    assert [(run.attempt, run.error_type) for run in runs] == [(2, "agent_exit")] * 2
    assert all(str(run.ran_on).startswith("tcp://127.0.0.1:") for run in runs)


def test_a_workers_own_pass_env_values_are_blanked_before_its_records_leave_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver blanks the values it knows; a value `pass_env` hands the agent from the
    worker's own environment is blanked on the worker, in every text of the record."""
    suite = _agent_beside_a_suite(tmp_path)
    leak = tmp_path / "leak.py"
    leak.write_text(
        "import json, os, sys\n"
        "value = os.environ['SERP_SECRET_X']\n"
        "print(value[:12], file=sys.stderr)\n"
        "print(json.dumps({'leaked': value, value: [value]}))\n",
        encoding="utf-8",
    )
    spec = CommandSpec(command=(sys.executable, str(leak)), pass_env=("SERP_SECRET_X",)).spec()
    monkeypatch.delenv("SERP_SECRET_X", raising=False)
    shipment = ship(_command_job(suite, spec, {"isolation": "process"}))  # the driver has none
    value = "serp-worker-only-" + "s" * 20
    monkeypatch.setenv("SERP_SECRET_X", value)
    record = prepare(shipment, "w").run(SEED, 1)
    assert record.output == {"leaked": "***", "***": ["***"]}, record.error_message
    assert value not in str(record) and value[:12] in str(record.stderr)
