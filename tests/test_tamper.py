"""Grading reads a suite whose hash is checked again (issue 32): a run graded after the
suite's goals changed on disk is errored `suite_changed`, never given a verdict."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import passhat
from conftest import SuiteWriter
from passhat import tamper
from passhat.suite import load_suite

ANSWER = {"key": "T-1", "goal": "g", "scope_in": ["s"], "scope_out": []}


def _answer(wrong: bool) -> list[dict[str, Any]]:
    return [{"ac": 1 if wrong else 2, "label": "unverifiable", "note": "n"}]


def _suite(writer: SuiteWriter) -> Path:
    del writer.suite["defaults"]["model"]  # type: ignore[union-attr]
    return writer.write()


def _cheater(case_file: Path) -> Any:
    """An agent whose every run rewrites its goal to the wrong answer it then gives."""

    async def cheat(input: Any, env: Any, ctx: Any) -> str:
        case = yaml.safe_load(case_file.read_text())
        case["goal"]["ticket"]["annotations"] = _answer(wrong=True)
        case_file.write_text(yaml.safe_dump(case))
        await env.call("update_ticket", {**ANSWER, "annotations": _answer(wrong=True)})
        return "done"

    return cheat


@pytest.mark.parametrize("spaced", [False, True], ids=["every-look", "whole-looks-spaced-out"])
def test_an_agent_that_rewrites_its_goal_gets_no_verdict(
    writer: SuiteWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spaced: bool
) -> None:
    if spaced:  # the whole suite is not looked at again: the run's case file still is
        monkeypatch.setattr(tamper, "SPACING", 1e12)
    suite = _suite(writer)
    cheat = _cheater(suite / "cases" / "tiny.yaml")
    done = passhat.evaluate(suite, agent=cheat, k=2, db=tmp_path / "p.db", concurrency=1, model="")
    runs = done.runs()
    assert [r.status for r in runs] == ["errored", "errored"]
    assert {r.error_type for r in runs} == {"suite_changed"}
    assert "cases/tiny.yaml" in (runs[0].error_message or "")


def test_run_experiment_notes_the_suite_before_its_first_agent_starts(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """`run_experiment` called on its own (the runner's API; `evaluate` notes the suite
    before it) looks at the suite's files before any agent starts: a goal rewritten by
    the first run is a change, not the state the guard first sees at the first grading."""
    from passhat.agents import LoadedAgent
    from passhat.runner import RunOptions, new_experiment, run_experiment
    from passhat.store import Store

    suite = load_suite(_suite(writer))
    agent = LoadedAgent("t:cheat", _cheater(suite.path / "cases" / "tiny.yaml"), None)
    experiment = new_experiment(suite, agent, "", None, k=2, params={"max_turns": 1})
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment)
        options = RunOptions(concurrency=1)
        asyncio.run(run_experiment(store, experiment, suite, agent, None, options))
        runs = store.runs(experiment.id)
    assert [r.status for r in runs] == ["errored", "errored"]
    assert {r.error_type for r in runs} == {"suite_changed"}


def test_the_control_an_honest_agent_is_graded(writer: SuiteWriter, tmp_path: Path) -> None:
    suite = _suite(writer)

    async def honest(input: Any, env: Any, ctx: Any) -> str:
        await env.call("update_ticket", {**ANSWER, "annotations": _answer(wrong=False)})
        return "done"

    done = passhat.evaluate(suite, agent=honest, k=2, db=tmp_path / "p.db", concurrency=1, model="")
    assert [r.status for r in done.runs()] == ["passed", "passed"]


def test_a_touch_or_a_comment_is_not_a_change(writer: SuiteWriter) -> None:
    suite = load_suite(_suite(writer))
    guard = tamper.SuiteGuard(suite)
    case_file = suite.path / "cases" / "tiny.yaml"
    case_file.write_text(case_file.read_text() + "\n# a comment\n")
    assert guard.check(force=True) is None
    case_file.write_text(case_file.read_text().replace("vague", "changed"))
    reason = guard.check(force=True)
    assert reason is not None and "cases/tiny.yaml" in reason
    case_file.write_text(case_file.read_text().replace("changed", "vague"))
    assert guard.check(force=True) == reason, "once changed, the experiment stays told"


def test_a_case_file_caught_half_written_is_named(writer: SuiteWriter) -> None:
    """A look made while a case file is being rewritten (truncated, not yet whole) finds
    a suite that does not load: the reason still names the file that moved, as it does
    for a whole rewrite (a regrade's test saw the load error alone, without the file)."""
    suite = load_suite(_suite(writer))
    guard = tamper.SuiteGuard(suite)
    case_file = suite.path / "cases" / "tiny.yaml"
    case_file.write_text(case_file.read_text()[:40] + "\n  goal: [")
    reason = guard.check(force=True)
    assert reason is not None and "cases/tiny.yaml" in reason


def test_files_grading_does_not_read_may_change(writer: SuiteWriter) -> None:
    """An environment that keeps its state in the suite folder, a log, a store beside
    suite.yaml: none of them is the suite's content, none makes a run suite_changed."""
    suite = load_suite(_suite(writer))
    guard = tamper.SuiteGuard(suite)
    (suite.path / "state").mkdir()
    (suite.path / "state" / "plan").write_text("one,two")
    (suite.path / "passhat.db").write_bytes(b"rows")
    assert guard.check(force=True) is None


def test_the_whole_look_is_made_by_the_guards_thread(
    writer: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Walking every file of the suite does not hold up the event loop: a grading whose
    own files did not move asks the guard's thread for the look and goes on; what that
    look finds errors the gradings after it."""
    suite = load_suite(_suite(writer))
    guard = tamper.SuiteGuard(suite)
    walkers: list[str] = []
    walk = tamper.signature

    def watched(root: Path) -> tamper.Signature:
        walkers.append(threading.current_thread().name)
        return walk(root)

    monkeypatch.setattr(tamper, "signature", watched)
    case_file = suite.path / "cases" / "tiny.yaml"
    case_file.write_text(case_file.read_text().replace("vague", "changed"))
    guard.checked_at = -1e9  # a whole look is due
    assert guard.check() is None  # suite.yaml, the only file this grading reads, is as it was
    deadline = time.monotonic() + 10
    while guard.changed is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert walkers == ["passhat-tamper"]
    reason = guard.check()
    assert reason is not None and "cases/tiny.yaml" in reason


def test_a_suite_put_back_is_watched_afresh_by_the_next_experiment(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """One process (a notebook, a service) runs two experiments on one suite. The first
    one's agent rewrote its goal, so its runs are errored; the file is then put back as
    it was. The second experiment starts on the suite as loaded and as on disk: its
    runs are graded, not errored by the first experiment's finding."""
    suite = _suite(writer)
    case_file = suite / "cases" / "tiny.yaml"
    original = case_file.read_text()
    db = tmp_path / "p.db"
    first = passhat.evaluate(suite, agent=_cheater(case_file), k=1, db=db, concurrency=1, model="")
    assert [r.error_type for r in first.runs()] == ["suite_changed"]
    case_file.write_text(original)

    async def honest(input: Any, env: Any, ctx: Any) -> str:
        await env.call("update_ticket", {**ANSWER, "annotations": _answer(wrong=False)})
        return "done"

    second = passhat.evaluate(suite, agent=honest, k=2, db=db, concurrency=1, model="")
    assert [r.status for r in second.runs()] == ["passed", "passed"]


def test_a_users_executor_that_calls_run_once_alone_is_still_guarded(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """A user's executor calls `run_once` without the experiment's guard (the protocol's
    Job predates it): the guard of the experiment running in its context still errors a
    run graded after its goal was rewritten."""
    from executors_for_tests import Sequential

    suite = _suite(writer)
    cheat = _cheater(suite / "cases" / "tiny.yaml")
    done = passhat.evaluate(
        suite, agent=cheat, k=2, db=tmp_path / "p.db", model="", executor=Sequential()
    )
    assert [r.error_type for r in done.runs()] == ["suite_changed", "suite_changed"]


def test_each_experiments_guard_ends_its_thread_with_it(
    writer: SuiteWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A guard per experiment has a thread of its own once a whole look is due: it ends
    with its experiment, so a process that runs many keeps none of them (nor their
    suites)."""
    monkeypatch.setattr(tamper, "SPACING", 0)  # every grading asks the thread for a look
    suite = _suite(writer)

    async def honest(input: Any, env: Any, ctx: Any) -> str:
        await env.call("update_ticket", {**ANSWER, "annotations": _answer(wrong=False)})
        return "done"

    def watchers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "passhat-tamper"]

    before = watchers()
    for n in range(3):
        done = passhat.evaluate(suite, agent=honest, k=2, db=tmp_path / f"{n}.db", model="")
        assert [r.status for r in done.runs()] == ["passed", "passed"]
    deadline = time.monotonic() + 10
    while len(watchers()) > len(before) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert watchers() == before


def _honest() -> Any:
    async def honest(input: Any, env: Any, ctx: Any) -> str:
        await env.call("update_ticket", {**ANSWER, "annotations": _answer(wrong=False)})
        return "done"

    return honest


def _rewritten_once_made(monkeypatch: pytest.MonkeyPatch, case_file: Path) -> None:
    """The goal is rewritten after the suite was loaded and before any run starts (while
    the experiment's agent and model are made), once."""
    from passhat.evaluation import calls

    make = calls._made

    def then_rewritten(*args: Any, **kwargs: Any) -> Any:
        made = make(*args, **kwargs)
        if not getattr(then_rewritten, "done", False):
            case = yaml.safe_load(case_file.read_text())
            case["goal"]["ticket"]["annotations"] = _answer(wrong=True)
            case_file.write_text(yaml.safe_dump(case))
            then_rewritten.done = True  # type: ignore[attr-defined]
        return made

    monkeypatch.setattr(calls, "_made", then_rewritten)


def test_a_goal_rewritten_between_the_load_and_the_first_run_is_a_change(
    writer: SuiteWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """evaluate's guard took the suite's files as they were once the agent was made, not
    as the load read them: a goal rewritten in between was the guard's baseline, and the
    honest runs were graded against goals the experiment never loaded (seen passing on
    14e7e39). The guard's look is now taken before the load (tamper.look)."""
    suite = _suite(writer)
    _rewritten_once_made(monkeypatch, suite / "cases" / "tiny.yaml")
    done = passhat.evaluate(
        suite, agent=_honest(), k=2, db=tmp_path / "p.db", concurrency=1, model=""
    )
    runs = done.runs()
    assert [r.error_type for r in runs] == ["suite_changed", "suite_changed"]
    assert "cases/tiny.yaml" in (runs[0].error_message or "")


def test_resume_too_watches_the_suite_from_its_load(
    writer: SuiteWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, db = _suite(writer), tmp_path / "p.db"
    first = passhat.evaluate(suite, agent=_honest(), k=1, db=db, concurrency=1, model="")
    assert [r.status for r in first.runs()] == ["passed"]
    _rewritten_once_made(monkeypatch, suite / "cases" / "tiny.yaml")
    done = passhat.resume(first.id, k=3, db=db, agent=_honest(), concurrency=1)
    assert [r.status for r in done.runs()] == ["passed", "errored", "errored"]
    assert {r.error_type for r in done.runs()[1:]} == {"suite_changed"}


def test_a_thread_look_counts_its_wake_up_in_its_cost(
    writer: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next whole look waits SPACING times the last one's cost, counted from when it
    was asked for: a small suite's walk costs about as much as waking the guard's thread
    (a futex, the GIL taken from the loop), and spaced by the walk alone the looks cost
    a command agent's run more CPU than the 2 % SPACING promises (issue 38)."""
    guard = tamper.SuiteGuard(load_suite(_suite(writer)))
    woken = threading.Event()
    real_wait = threading.Event.wait

    def late_wake(self: threading.Event, timeout: float | None = None) -> bool:
        found = real_wait(self, timeout)
        if threading.current_thread().name == "passhat-tamper" and not woken.is_set():
            time.sleep(0.2)  # the thread woke 0.2 s after the look was asked for
            woken.set()
        return found

    monkeypatch.setattr(threading.Event, "wait", late_wake)
    with guard.lock:
        guard.checked_at = time.monotonic() - 1  # a look is due
    assert guard.check() is None
    deadline = time.monotonic() + 10
    while guard.checked_at == float("inf") and time.monotonic() < deadline:
        time.sleep(0.01)
    guard.close()
    assert guard.cost >= 0.2
