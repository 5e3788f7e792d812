"""The runner and `passhat run / resume / report / show / list`, on the seed and beyond."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from passhat.agents import RetryPolicy, resolve_agent
from passhat.errors import ConfigError
from passhat.models.openai_compat import OpenAIModel
from passhat.records import RunRecord
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
TESTS = str(Path(__file__).resolve().parent)

pytest_plugins = ["fakeserver"]


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    """A private copy of the clarify suite, so a test may edit it."""
    target = tmp_path / "clarify"
    shutil.copytree(CLARIFY, target)
    return target


SLOW_ENV = {**os.environ, "PYTHONPATH": TESTS, "PASSHAT_TEST_DELAY": "0.15"}
"""A real `passhat` process whose agent takes 0.15 s a run: time to kill it mid-way."""


def start_slow_run(db: Path, *, k: int, name: str, stderr: int) -> subprocess.Popen[str]:
    """`passhat run` of the slow test agent on the seed card, in its own process."""
    argv = [sys.executable, "-m", "passhat", "run", str(CLARIFY), "--case", SEED]
    argv += ["--agent", "agents_for_tests:slow", "-k", str(k), "--concurrency", "2"]
    argv += ["--db", str(db), "-q", "--name", name]
    return subprocess.Popen(argv, env=SLOW_ENV, stdout=subprocess.DEVNULL, stderr=stderr, text=True)


def wait_for_runs(db: Path, n: int, timeout: float = 60.0) -> None:
    """Poll the store of a running `passhat` until it holds n runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if not db.exists():
            continue  # connecting would create it
        try:
            with sqlite3.connect(db) as con:
                if con.execute("SELECT count(*) FROM runs").fetchone()[0] >= n:
                    return
        except sqlite3.OperationalError:
            pass  # the store is being created
    raise AssertionError(f"{db} did not reach {n} runs within {timeout:g} s")


def report_json(capsys: pytest.CaptureFixture[str], db: Path, ref: str = "latest") -> dict:
    r = run_cli(capsys, "report", ref, "--json", "--db", str(db))
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_the_seed_experiment_reproduced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "p.db"
    r = run_seed(capsys, "--db", str(db), "-q")
    assert r.code == 0, r.err
    assert "always missed" in r.out and "sometimes missed" in r.out
    data = report_json(capsys, db)
    (case,) = data["cases"]
    assert (case["passes"], case["counted"], case["pass_rate"]) == (0, 3, 0.0)
    assert case["pass_at_k"] is False and case["pass_hat_k"] is False
    d = data["dataset"]
    assert (d["k"], d["complete"], d["label_at"], d["label_hat"]) == (3, True, "pass@3", "pass^3")
    items = {(i["item"], i["expected"]): i for i in data["items"]}
    assert items[("AC3:conflict", True)]["hits"] == [1, 2, 3]
    assert items[("AC4:unverifiable", True)]["hits"] == [1, 2, 3]
    assert items[("AC7:unverifiable", True)]["misses"] == [2]
    assert items[("AC3:inconsistent_with_description", True)]["hits"] == []
    assert items[("AC3:inconsistent_with_description", True)]["verdict"] == "always missed"
    extras = [i for i in data["items"] if not i["expected"]]
    assert [(e["item"], e["hits"]) for e in extras] == [("AC5:conflict", [3])]
    tools = {t["tool"]: t for t in data["tools"]}
    assert tools["query_background"]["runs_calling"] == 0
    assert tools["update_ticket"]["calls_per_run"] == [1, 1, 1]
    assert data["experiment"]["model_config"]["recorded"]["prompt_version"] == "cd590b9ba593"


def test_show_list_and_lookup_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "p.db")
    assert run_seed(capsys, "--db", db, "-q", "--name", "seed").code == 0
    r = run_cli(capsys, "show", "seed", SEED, "3", "--db", db)
    assert r.code == 0, r.err
    assert (
        "update_ticket" in r.out and "AC5" not in r.out.split("score")[0]
    ) or "conflict" in r.out
    assert "failed" in r.out
    r = run_cli(capsys, "list", "--db", db)
    assert "seed" in r.out and "3/3" in r.out
    r = run_cli(capsys, "show", "seed", SEED, "9", "--db", db)
    assert r.code == 2 and "no run 9" in r.err
    r = run_cli(capsys, "report", "nope", "--db", db)
    assert r.code == 2 and "no experiment 'nope'" in r.err


def test_k_zero_and_unknown_agent_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(CLARIFY), "-k", "0", "--db", db)
    assert r.code == 2 and "at least 1 run per case" in r.err
    r = run_cli(capsys, "run", str(CLARIFY), "--agent", "nowhere", "--db", db)
    assert r.code == 2 and "neither built in" in r.err
    r = run_cli(capsys, "run", str(CLARIFY), "--model", "gpt-4", "--db", db)
    assert r.code == 2 and "is not provider:name" in r.err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("agents_for_tests:two_args", "does not take three arguments"),
        ("agents_for_tests:missing", "has no 'missing'"),
        ("no_such_module_x:agent", "cannot import"),
    ],
    ids=["two-args", "no-attr", "no-module"],
)
def test_user_agents_are_checked_on_load(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_agent(spec)


def test_errored_runs_are_kept_apart_from_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    r = run_seed(
        capsys,
        "--agent",
        "agents_for_tests:crashes",
        "-k",
        "2",
        "--db",
        db,
        "-q",
    )
    assert r.code == 1  # nothing was counted: never a success, --strict or not
    data = report_json(capsys, Path(db))
    assert data["dataset"] is None
    assert [(e["run"], e["type"]) for e in data["errored"]] == [
        (1, "agent_error"),
        (2, "agent_error"),
    ]
    assert "the agent fell over" in data["errored"][0]["message"]
    # the crash's traceback is kept, from the agent's own frame down
    tb = data["errored"][0]["traceback"]
    assert 'in crashes\n    raise RuntimeError("the agent fell over")' in tb
    assert "runner.py" not in tb and "asyncio" not in tb

    r = run_seed(
        capsys,
        "--agent",
        "agents_for_tests:hangs",
        "-k",
        "1",
        "--timeout",
        "0.2",
        "--db",
        db,
        "-q",
        "--strict",
    )
    assert r.code == 1  # strict: the plan was not met
    data = report_json(capsys, Path(db))
    assert data["errored"][0]["type"] == "timeout"


async def test_a_model_answering_429_twice_is_graded_with_two_retries(
    tmp_path: Path, fake_server
) -> None:  # type: ignore[no-untyped-def]
    from fakeserver import call

    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})
    args = {
        "key": "SHOP-1042",
        "goal": "g",
        "scope_in": ["a"],
        "scope_out": [],
        "annotations": [
            {"ac": 3, "label": "conflict", "note": "n"},
            {"ac": 3, "label": "inconsistent_with_description", "note": "n"},
            {"ac": 4, "label": "unverifiable", "note": "n"},
            {"ac": 7, "label": "unverifiable", "note": "n"},
        ],
    }
    fake_server.fail(429, retry_after=0, times=2)
    fake_server.reply(tool_calls=[call("update_ticket", args, id="c1")], usage=(100, 20))
    fake_server.reply("done", usage=(120, 3))
    model = OpenAIModel("test-model", base_url=fake_server.openai_url)
    agent = resolve_agent("clarifier")
    experiment = new_experiment(
        suite, agent, "openai:test-model", model, k=1, params={"max_turns": 4}
    )
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        options = RunOptions(
            concurrency=1, timeout_s=30, retry=RetryPolicy(max_retries=3, base_delay=0.01)
        )
        await run_experiment(store, experiment, suite, agent, model, options)
        (run,) = store.runs(experiment.id)
    await model.aclose()
    assert run.status == "passed", run.error_message
    assert len(run.retries) == 2 and all(r["error"] == "TransientModelError" for r in run.retries)
    assert (run.input_tokens, run.output_tokens) == (220, 23)
    assert [m["role"] for m in run.transcript] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


def test_resume_fills_only_the_missing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})
    agent = resolve_agent("agents_for_tests:odd_runs_pass")
    experiment = new_experiment(suite, agent, "", None, k=6, params={"max_turns": 10}, name="cut")
    seen: list[int] = []

    async def gated(input: Any, env: Any, ctx: Any) -> Any:
        if ctx.run_index > 2:  # in flight when the cancel lands: never finishes
            await asyncio.Event().wait()
        return await agent.agent(input, env, ctx)

    first_two = replace(agent, agent=gated)  # the same spec and source hash: resumable

    async def interrupted() -> None:
        with Store(db) as store:
            store.create_experiment(experiment)
            task = asyncio.current_task()
            assert task is not None

            def progress(run) -> None:  # type: ignore[no-untyped-def]
                seen.append(run.run_index)
                if len(seen) == 2:
                    task.cancel()

            with pytest.raises(asyncio.CancelledError):
                await run_experiment(
                    store, experiment, suite, first_two, None, RunOptions(concurrency=1), progress
                )

    asyncio.run(interrupted())
    with Store(db) as store:
        assert store.recorded(experiment.id) == {(SEED, 1), (SEED, 2)}
        before = {r.run_index: r.started_at for r in store.runs(experiment.id)}
    r = run_cli(capsys, "resume", "cut", "--db", str(db), "-q")
    assert r.code == 0, r.err
    with Store(db) as store:
        runs = store.runs(experiment.id)
    assert [r.run_index for r in runs] == [1, 2, 3, 4, 5, 6]
    assert {r.run_index: r.started_at for r in runs if r.run_index <= 2} == before  # not re-run
    resumed = report_json(capsys, db, "cut")

    r = run_seed(
        capsys,
        "--agent",
        "agents_for_tests:odd_runs_pass",
        "-k",
        "6",
        "--db",
        str(db),
        "-q",
        "--name",
        "whole",
    )
    assert r.code == 0
    whole = report_json(capsys, db, "whole")
    assert resumed["dataset"] == whole["dataset"] and resumed["cases"] == whole["cases"]
    assert whole["cases"][0]["passes"] == 3

    r = run_cli(capsys, "resume", "whole", "-k", "8", "--db", str(db), "-q")
    assert r.code == 0
    grown = report_json(capsys, db, "whole")
    assert grown["cases"][0]["counted"] == 8 and grown["cases"][0]["passes"] == 4
    r = run_cli(capsys, "resume", "whole", "-k", "2", "--db", str(db))
    assert r.code == 2 and "k can only grow" in r.err


def test_fingerprint_mismatch_is_refused(
    suite_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys, "run", str(suite_copy), "--case", SEED, "--db", db, "-q", "-k", "1", "--name", "fp"
    )
    assert r.code == 0
    case_file = suite_copy / "cases" / f"{SEED}.yaml"
    case_file.write_text(
        case_file.read_text(encoding="utf-8").replace("簡單直覺", "簡單"), encoding="utf-8"
    )
    r = run_cli(capsys, "resume", "fp", "-k", "3", "--db", db)
    assert r.code == 2
    assert "cannot be resumed" in r.err and "suite content (hash)" in r.err


def test_sigkill_mid_experiment_then_resume_loses_and_doubles_nothing(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    proc = start_slow_run(db, k=12, name="killed", stderr=subprocess.DEVNULL)
    wait_for_runs(db, 4)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = con.execute(
            "SELECT run_index, status, final_state, transcript, score FROM runs"
        ).fetchall()
    assert 4 <= len(rows) < 12, "the kill must land mid-experiment"
    for index, status, final_state, transcript, score in rows:  # whole rows only
        assert status == ("passed" if index % 2 else "failed")
        assert json.loads(final_state)["ticket"]["annotations"]
        assert isinstance(json.loads(transcript), list) and json.loads(score)
    done = subprocess.run(
        [sys.executable, "-m", "passhat", "resume", "killed", "--db", str(db), "-q", "--strict"],
        env=SLOW_ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as con:
        indices = [r[0] for r in con.execute("SELECT run_index FROM runs ORDER BY run_index")]
        passes = con.execute("SELECT count(*) FROM runs WHERE status = 'passed'").fetchone()[0]
    assert indices == list(range(1, 13))
    assert passes == 6


def test_report_html_and_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "p.db")
    assert run_seed(capsys, "--db", db, "-q").code == 0
    page = tmp_path / "seed.html"
    r = run_cli(capsys, "report", "latest", "--db", db, "--html", str(page), "--lang", "zh-TW")
    assert r.code == 0, r.err
    html = page.read_text(encoding="utf-8")
    assert 'lang="zh-TW"' in html and "ac-conflict-001" in html and "<script src" not in html
    r = run_cli(capsys, "report", "latest", "--db", db, "--lang", "fr")
    assert r.code == 2 and "zh-TW" in r.err
    r = run_cli(capsys, "report", "latest", "--db", db, "--json")
    data = json.loads(r.out)
    assert data["dataset"]["forecast"]["m"] == 10
    assert data["cases"][0]["forecast"]["m"] == 10


def test_read_commands_do_not_create_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.db"
    for command in (
        ["report", "latest"],
        ["list"],
        ["show", "latest", SEED, "1"],
        ["resume", "latest"],
    ):
        r = run_cli(capsys, *command, "--db", str(missing))
        assert r.code == 2 and "no passhat store here" in r.err, command
    assert not missing.exists()


def test_ctrl_c_keeps_finished_runs_and_says_how_to_resume(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    proc = start_slow_run(db, k=20, name="interrupted", stderr=subprocess.PIPE)
    wait_for_runs(db, 3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "passhat resume interrupted" in err
    assert "Traceback" not in err
    with sqlite3.connect(db) as con:
        kept = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert 3 <= kept < 20


def test_the_plan_is_made_as_it_is_read_and_gives_what_a_list_would() -> None:
    """runner.Plan yields the missing (case, index) pairs without holding them (a
    10,000-case suite at k = 10 held 100,000 tuples for the whole experiment); its
    pairs, their order and its len must be the list the runner planned before."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from passhat.runner import Plan

    @settings(max_examples=200, deadline=None)
    @given(
        cases=st.integers(0, 6),
        k=st.integers(1, 5),
        own_k=st.dictionaries(st.integers(0, 5), st.integers(1, 7)),
        recorded=st.sets(st.tuples(st.integers(0, 7), st.integers(0, 8))),
        then=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), max_size=3),
        case_major=st.booleans(),
        full=st.sets(st.integers(0, 7)),
    )
    def check(
        cases: int,
        k: int,
        own_k: dict[int, int],
        recorded: set[tuple[int, int]],
        then: list[tuple[int, int]],
        case_major: bool,
        full: set[int],
    ) -> None:
        ids = tuple(f"c{i}" for i in range(cases))
        k_of = {f"c{i}": n for i, n in own_k.items()}
        done = {(f"c{i}", n) for i, n in recorded}
        after = [(f"c{i}", n) for i, n in then]
        complete = {f"c{i}" for i in full}
        made = Plan(
            ids,
            k,
            k_of=lambda c: k_of.get(c, k),
            recorded=done,
            then=after,
            case_major=case_major,
            full=complete,
        )
        wanted = [
            (c, i)
            for i in range(1, k + 1)
            for c in ids
            if i <= k_of.get(c, k) and (c, i) not in done and c not in complete
        ]
        if case_major:
            wanted.sort(key=lambda pair: (ids.index(pair[0]), pair[1]))
        wanted += after
        assert list(made) == wanted
        assert list(made) == wanted  # read again from the start
        assert len(made) == len(wanted)
        assert bool(made) == bool(wanted)

    check()


def test_a_runs_environment_is_freed_as_the_run_ends_and_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool holds a bound method of its environment: a reference cycle, so each
    run's state and fixtures (and each case's check at load) waited for the cyclic
    garbage collector. The runner and the load let go of the tools instead."""
    import gc
    import weakref

    import passhat.env
    import passhat.runner
    from passhat.agents import LoadedAgent
    from passhat.runner import run_once

    made: list[weakref.ref[Any]] = []
    real = passhat.env.Environment.__init__

    def tracked(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(passhat.env.Environment, "__init__", tracked)

    async def instant(input: Any, env: Any, ctx: Any) -> str:
        await env.call("get_ticket", {"key": input["ticket"]["key"]})
        return "done"

    gc.collect()
    gc.disable()
    try:
        suite = load_suite(CLARIFY)
        assert made and all(ref() is None for ref in made)  # the load's checks
        agent = LoadedAgent("t:instant", instant, None)
        experiment = new_experiment(suite, agent, "", None, k=1, params={"max_turns": 1})
        made.clear()
        record = asyncio.run(
            run_once(experiment, suite, suite.cases[0], 1, agent, None, RunOptions())
        )
        assert record.tool_calls and len(made) == 1
        assert made[0]() is None
    finally:
        gc.enable()


def _seen_by_runs(tmp_path: Path, look: Any) -> tuple[list[Any], int]:
    """What `look()` gave in each run of an agent on the clarify suite at k = 2, made by
    run_experiment itself; and how many cases the suite has."""
    from passhat.agents import LoadedAgent

    seen: list[Any] = []

    async def observing(input: Any, env: Any, ctx: Any) -> str:
        seen.append(look())
        return "done"

    suite = load_suite(CLARIFY)
    agent = LoadedAgent("t:observing", observing, None)
    experiment = new_experiment(suite, agent, "", None, k=2, params={"max_turns": 1})
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        asyncio.run(run_experiment(store, experiment, suite, agent, None, RunOptions()))
    return seen, len(suite.cases)


def test_runs_are_made_with_collections_spaced_and_the_heap_set_aside(tmp_path: Path) -> None:
    """While an experiment's runs are in flight the collector's young generation waits
    for RUN_YOUNG_THRESHOLD new containers and the heap from before is frozen (passhat._gc
    .gc_spaced); afterwards both are as they were."""
    import gc

    from passhat._gc import RUN_YOUNG_THRESHOLD

    before = gc.get_threshold()
    seen, cases = _seen_by_runs(tmp_path, lambda: (gc.get_threshold()[0], gc.get_freeze_count()))
    assert len(seen) == 2 * cases
    assert all(young == RUN_YOUNG_THRESHOLD and frozen > 0 for young, frozen in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_runs_are_made_with_the_interpreter_switching_threads_often(tmp_path: Path) -> None:
    """While an experiment's runs are in flight the interpreter hands the GIL on every
    0.5 ms (passhat._lazy.quick_switching), so the event loop waking for its agents'
    timers does not wait 5 ms for the writer thread's encoding of a batch; afterwards
    the interval is what it was."""
    from passhat._lazy import WARM_UP_SWITCH_S

    before = sys.getswitchinterval()
    assert before > WARM_UP_SWITCH_S  # the interpreter's own 5 ms
    seen, _ = _seen_by_runs(tmp_path, sys.getswitchinterval)
    assert seen and set(seen) == {WARM_UP_SWITCH_S}
    assert sys.getswitchinterval() == before


def test_once_every_run_has_started_a_finished_run_is_committed_without_a_linger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished run waits up to COMMIT_LINGER_S for company in its commit; once every
    planned run has started none comes but the runs still in flight, so each is committed
    as it comes (the experiment's end no longer waits for its last batch). With an hour's
    linger, the last run here goes on only once the run before it is recorded."""
    import passhat.runner as runner_module
    from passhat.agents import LoadedAgent

    monkeypatch.setattr(runner_module, "COMMIT_LINGER_S", 3600.0)
    suite = load_suite(CLARIFY)
    suite = replace(suite, cases=(suite.case("ac-conflict-001"),))
    first_recorded = asyncio.Event()

    async def agent_fn(input: Any, env: Any, ctx: Any) -> str:
        if ctx.run_index == 2:  # started last: every run has started
            await first_recorded.wait()
        return "done"

    agent = LoadedAgent("t:waits_for_the_first", agent_fn, None)
    experiment = new_experiment(suite, agent, "", None, k=2, params={"max_turns": 1})

    def recorded(record: RunRecord) -> None:
        if record.run_index == 1:
            first_recorded.set()

    async def main() -> None:
        with Store(tmp_path / "p.db") as store:
            store.create_experiment(experiment)
            options = RunOptions(concurrency=2)
            made = run_experiment(store, experiment, suite, agent, None, options, recorded)
            await asyncio.wait_for(made, 30)  # not the linger's hour
            assert len(store.recorded(experiment.id)) == 2

    asyncio.run(main())


def test_the_writer_thread_imports_what_it_needs_while_the_first_runs_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer thread imports the runs' encoder and the case items' maker (writer
    .WARM_UP) once every slot's first run has started and while those runs wait on their
    agents: not at the writer's start, among the first runs' starts on the loop, nor on
    the loop's thread after the last run (the store's case items at the lease's end),
    and before the first commit: before any run is reported recorded. (At 0.15 s here,
    not WARM_UP_AFTER_S: a loaded machine's loop may start the first runs late.)"""
    import threading

    import passhat.runner as runner_module
    import passhat.writer as writer_module
    from passhat.agents import LoadedAgent

    events: list[tuple[str, str, float]] = []  # (what, thread, when)
    probe = "passhat_warm_probe_" + os.urandom(4).hex()
    (tmp_path / f"{probe}.py").write_text(
        "import threading, time\n"
        "import test_runner\n"
        "test_runner.WARM_EVENTS.append(\n"
        "    ('imported', threading.current_thread().name, time.monotonic()))\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(writer_module, "WARM_UP", (probe,))
    monkeypatch.setattr(runner_module, "WARM_UP_AFTER_S", 0.15)
    monkeypatch.setattr(sys.modules[__name__], "WARM_EVENTS", events, raising=False)

    async def waits(input: Any, env: Any, ctx: Any) -> str:
        events.append(("started", threading.current_thread().name, time.monotonic()))
        await asyncio.sleep(0.6)
        events.append(("returned", "", time.monotonic()))
        return "done"

    suite = load_suite(CLARIFY)
    agent = LoadedAgent("t:waits", waits, None)
    experiment = new_experiment(suite, agent, "", None, k=1, params={"max_turns": 1})

    def recorded(record: RunRecord) -> None:
        events.append(("recorded", "", time.monotonic()))

    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        options = RunOptions(concurrency=len(suite.cases))
        asyncio.run(run_experiment(store, experiment, suite, agent, None, options, recorded))
    imported = [(thread, when) for what, thread, when in events if what == "imported"]
    assert len(imported) == 1 and imported[0][0].startswith("passhat-store"), events
    when = imported[0][1]
    starts = [t for what, _, t in events if what == "started"]
    assert len(starts) == len(suite.cases) and max(starts) < when
    assert when < min(t for what, _, t in events if what == "returned")
    assert when < min(t for what, _, t in events if what == "recorded")


def test_a_slots_next_run_starts_two_turns_of_the_loop_after_its_agent_returned(
    tmp_path: Path,
) -> None:
    """A run waits on its agent's task through a future the task's last step sets
    (execution._invoke_telling), not through asyncio.wait, whose wake-up came a turn after
    the task's done callbacks: its slot goes on in the next turn and the next run's agent
    starts in the one after (three turns before, each a wait behind other runs' work)."""
    from passhat.agents import LoadedAgent

    turns = 0
    seen: list[tuple[str, int]] = []

    def tick() -> None:
        nonlocal turns
        turns += 1
        asyncio.get_running_loop().call_soon(tick)

    async def agent_fn(input: Any, env: Any, ctx: Any) -> str:
        seen.append(("started", turns))
        await asyncio.sleep(0.01)
        seen.append(("returned", turns))
        return "done"

    suite = load_suite(CLARIFY)
    suite = replace(suite, cases=(suite.case("ac-conflict-001"),))
    agent = LoadedAgent("t:counted", agent_fn, None)
    experiment = new_experiment(suite, agent, "", None, k=3, params={"max_turns": 1})

    async def main() -> None:
        asyncio.get_running_loop().call_soon(tick)
        with Store(tmp_path / "p.db") as store:
            store.create_experiment(experiment)
            options = RunOptions(concurrency=1)
            await run_experiment(store, experiment, suite, agent, None, options)

    asyncio.run(main())
    assert [what for what, _ in seen] == ["started", "returned"] * 3
    gaps = [seen[i + 1][1] - seen[i][1] for i in range(1, len(seen) - 1, 2)]
    assert gaps == [2, 2], seen


def test_pending_reads_run_by_run_only_the_cases_with_gaps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resume plans from per-case counts in SQL (issue 38): a case whose runs 1..k are all
    recorded is never read run by run, and the plan is the one every recorded pair gives
    (a case held at a lower k by an adaptive rule is full at its own k)."""
    from passhat.records import RunRecord
    from passhat.runner import pending, plan
    from records_for_tests import experiment_record

    experiment = experiment_record(["a", "b", "c", "d", "e"], 3, case_k={"e": 2})
    done = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 3), ("c", 2), ("d", 2), ("e", 1)]
    done += [("d", 1), ("d", 3), ("e", 2)]
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        store.record_runs(
            [RunRecord("e1", case, index, "h", "passed") for case, index in done]  # type: ignore[arg-type]
        )
        asked: list[list[str] | None] = []
        read = store.recorded

        def spied(experiment_id: str, cases: list[str] | None = None) -> set[tuple[str, int]]:
            asked.append(cases)
            return read(experiment_id, cases)

        monkeypatch.setattr(store, "recorded", spied)
        todo, _ = pending(store, experiment)
        assert [sorted(cases or []) for cases in asked] == [["b", "c"]]
        assert list(todo) == list(plan(experiment, set(done))) == [("c", 1), ("b", 2), ("c", 3)]
        assert len(todo) == 3


def test_a_cancel_lands_when_the_executor_never_waits(tmp_path: Path) -> None:
    """An executor whose records come without a wait (and a store with room for them):
    a cancel asked for meanwhile still stops the runner at the next record, not after
    the last one; the records handed over before it are written, the rest stay missing."""
    suite = load_suite(CLARIFY)
    agent = resolve_agent("agents_for_tests:odd_runs_pass")
    experiment = new_experiment(suite, agent, "", None, k=40, params={"max_turns": 10})
    yielded: list[int] = []

    class Eager:
        async def run(self, job: Any, todo: Any) -> Any:
            for case_id, index in todo:
                if len(yielded) == 5:
                    task = asyncio.current_task()  # the runner's: it reads this iterator
                    assert task is not None
                    task.cancel()
                yielded.append(index)
                yield RunRecord(experiment.id, case_id, index, suite.case(case_id).hash, "passed")

    async def main() -> None:
        with Store(tmp_path / "p.db") as store:
            store.create_experiment(experiment)
            with pytest.raises(asyncio.CancelledError):
                await run_experiment(
                    store, experiment, suite, agent, None, RunOptions(), executor=Eager()
                )
            assert len(store.recorded(experiment.id)) == 6

    asyncio.run(main())
    assert len(yielded) == 6  # not the 40 x cases planned


@pytest.mark.skipif(
    sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"),
    reason="Python 3.12 waits on pidfds itself; no pidfd_open here",
)
def test_a_command_agents_exit_is_read_from_its_pidfd_not_waited_for_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11's default child watcher started a thread per agent process to wait for
    it; the runner installs a pidfd watcher instead, and the runs are recorded alike."""
    import threading

    from passhat._children import _PidfdWatcher
    from passhat.agents.command import CommandSpec

    monkeypatch.setattr(asyncio.get_event_loop_policy(), "_watcher", None)  # 3.11's default
    started: list[str] = []
    start = threading.Thread.start

    def noted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", noted)
    suite = load_suite(CLARIFY)
    suite = replace(suite, cases=(suite.case(SEED),))
    spec = CommandSpec(("true",), cwd=str(tmp_path), output="text")
    agent = resolve_agent(spec.spec())
    params = {"max_turns": 1, "isolation": "process"}
    experiment = new_experiment(suite, agent, "", None, k=3, params=params)
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        asyncio.run(
            run_experiment(store, experiment, suite, agent, None, RunOptions(concurrency=3))
        )
        runs = store.runs(experiment.id)
    assert [r.status for r in runs] == ["failed"] * 3, runs[0].error_message  # graded
    assert isinstance(asyncio.get_child_watcher(), _PidfdWatcher)
    assert not [name for name in started if name.startswith("asyncio-waitpid")], started


def test_a_programs_own_child_watcher_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat._children import child_watcher

    own = asyncio.PidfdChildWatcher() if hasattr(asyncio, "PidfdChildWatcher") else None
    if own is None or sys.version_info >= (3, 12):
        pytest.skip("Python 3.12 has no child watchers to keep")
    monkeypatch.setattr(asyncio.get_event_loop_policy(), "_watcher", own)
    child_watcher()
    assert asyncio.get_child_watcher() is own


async def test_a_run_given_up_starts_no_more_model_calls(tmp_path: Path, fake_server) -> None:  # type: ignore[no-untyped-def]
    """A model call the deadline's cancel does not reach (a command agent's, in the proxy's
    request task) makes no retry once the run is given up: its provider requests after
    the record was made were billed, and never on the record."""
    from passhat.models.base import Message

    suite = load_suite(CLARIFY)
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case(SEED),)})
    fake_server.fail(503, times=10_000)
    model = OpenAIModel("test-model", base_url=fake_server.openai_url)
    calls: list[asyncio.Task[Any]] = []

    async def agent(input: Any, env: Any, ctx: Any) -> Any:
        call = asyncio.create_task(ctx.generate([Message("user", "T-1")], []))
        calls.append(call)
        return await asyncio.shield(call)

    loaded = replace(resolve_agent("agents_for_tests:odd_runs_pass"), agent=agent)
    experiment = new_experiment(suite, loaded, "openai:test-model", model, k=1, params={})
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        retry = RetryPolicy(max_retries=10_000, base_delay=0.01, max_delay=0.01)
        # 3 s: a machine at load 25 made no retry at all within 0.5 s (the first 503's round
        # trip took longer); the test needs the deadline to come while the call is retrying
        options = RunOptions(concurrency=1, timeout_s=3.0, retry=retry)
        await run_experiment(store, experiment, suite, loaded, model, options)
        (run,) = store.runs(experiment.id)
        sent = len(fake_server.requests)
        await asyncio.sleep(0.3)  # the call, left running, had 30 more tries' time
        after = len(fake_server.requests)
    calls[0].cancel()
    await model.aclose()
    # it was retrying when the deadline came (one retry shows it), and it started nothing
    # after: the server saw the recorded retries' calls and at most the one in flight at the
    # deadline, which may reach the server's thread only after the record is read (CI saw
    # 49 before and 50 after, with 49 retries)
    assert run.error_type == "timeout" and len(run.retries) >= 1
    assert sent <= after <= len(run.retries) + 1


async def test_a_runs_last_step_comes_back_to_call_later_when_grading_only_reads() -> None:
    """run_once_then (the local executor's): with a built-in environment and scorers that
    only read, the grading and the record come back as a function, and the record is
    run_once's; the time it waited to be called is not the run's duration."""
    from passhat.execution import run_once, run_once_then
    from passhat.executors import Job

    suite = load_suite(CLARIFY)
    agent = resolve_agent("agents_for_tests:perfect")
    experiment = new_experiment(suite, agent, "", None, k=1, params={"max_turns": 1})
    case = suite.cases[0]
    finish = await run_once_then(Job(experiment, suite, agent, None, RunOptions()), case, 1)
    assert callable(finish) and not isinstance(finish, RunRecord)
    await asyncio.sleep(0.2)  # other runs' turns
    later = finish()
    now = await run_once(experiment, suite, case, 1, agent, None, RunOptions())
    assert later.status == now.status == "passed"
    assert (later.score, later.final_state, later.output) == (
        now.score,
        now.final_state,
        now.output,
    )
    assert [c["tool"] for c in later.tool_calls] == [c["tool"] for c in now.tool_calls]
    assert later.duration_s < 0.2


async def test_a_run_whose_grading_waits_is_finished_before_it_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A judge's grading (or a user's scorer, or a user's world) may wait: the run is
    graded in run_once_then itself, as run_once grades it."""
    import passhat.execution
    from passhat.execution import run_once_then
    from passhat.executors import Job

    monkeypatch.setattr(passhat.execution, "grading", lambda suite: "waits")
    suite = load_suite(CLARIFY)
    agent = resolve_agent("agents_for_tests:perfect")
    experiment = new_experiment(suite, agent, "", None, k=1, params={"max_turns": 1})
    job = Job(experiment, suite, agent, None, RunOptions())
    record = await run_once_then(job, suite.cases[0], 1)
    assert isinstance(record, RunRecord) and record.status == "passed"


def test_the_plan_says_when_its_last_run_is_taken_then_when_every_run_started() -> None:
    """runner54: `_then` tells `taken` as the executor takes the plan's last item (the
    writer copies its log then, a wave of runs before the end), and `done` once it asks
    past it; an empty plan tells only `done`."""
    from passhat.runner import _then

    told: list[str] = []
    items = _then([("a", 1), ("a", 2)], lambda: told.append("taken"), lambda: told.append("done"))
    assert next(items) == ("a", 1) and told == []
    assert next(items) == ("a", 2) and told == ["taken"]
    assert next(items, None) is None and told == ["taken", "done"]
    told.clear()
    assert list(_then([], lambda: told.append("taken"), lambda: told.append("done"))) == []
    assert told == ["done"]
