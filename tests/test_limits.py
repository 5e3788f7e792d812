"""--max-turns and --token-budget hold for every agent at the model boundary, and a run a
limit stopped is counted: graded on the state it reached, marked `limit` (passhat.limits).

The provider is a real HTTP server on 127.0.0.1 that counts the calls reaching it
(tests/fakeserver.py); the command agent's side is in tests/test_command_agent.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_for_tests import GOAL_ANNOTATIONS
from cli_helpers import run_cli
from conftest import SuiteWriter
from fakeserver import FakeServer
from passhat.store import Store

pytest_plugins = ["fakeserver"]


def _suite(writer: SuiteWriter) -> Path:
    # the goal is what `loops_past_refusals` writes: it passes; `loops` writes less: it fails
    writer.case["goal"] = {"ticket": {"annotations": GOAL_ANNOTATIONS}}
    criteria = [{"ac": n, "text": f"criterion {n}"} for n in range(1, 8)]
    writer.case["input"]["ticket"]["acceptance_criteria"] = criteria
    return writer.write()


def _runs(db: Path) -> list[tuple[int, str, str | None, str | None, int, int]]:
    with Store(db, create=False) as store:
        experiment = store.experiment("latest")
        return [
            (
                r.run_index,
                r.status,
                r.error_type,
                r.error_message,
                r.input_tokens,
                r.output_tokens,
            )
            for r in store.runs(experiment.id)
        ]


@pytest.mark.parametrize(
    ("agent", "limit", "per_run", "status", "named"),
    [
        ("loops", ["--max-turns", "2"], 2, "failed", "past the run's limit of 2 (--max-turns 2)"),
        ("loops", ["--token-budget", "20"], 2, "failed", "its budget is 20 (--token-budget 20)"),
        (
            "loops_past_refusals",
            ["--max-turns", "3"],
            3,
            "passed",
            "past the run's limit of 3 (--max-turns 3)",
        ),
    ],
    ids=["max-turns", "token-budget", "ignores-the-refusal"],
)
def test_an_in_process_agent_that_loops_is_stopped_at_its_limit_and_counted(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    limit: list[str],
    per_run: int,
    status: str,
    named: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-limits-test-key-000000")
    fake_server.reply("again?", usage=(10, 5), times=60)
    db = tmp_path / "p.db"
    model = ["--model", "openai:gpt-test", "--base-url", fake_server.openai_url, *limit]
    agent_spec = f"agents_for_tests:{agent}"
    result = run_cli(
        capsys, "run", str(_suite(writer)), "-k", "2", "--agent", agent_spec, *model,
        "--db", str(db), "-q",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert len(fake_server.requests) == 2 * per_run, "a call past the limit reached the provider"
    runs = _runs(db)
    assert [(i, s, kind) for i, s, kind, *_ in runs] == [(1, status, "limit"), (2, status, "limit")]
    assert all(named in (message or "") for *_, message, _, _ in runs)
    # the calls that reached the provider are the ones counted
    assert [(tin, tout) for *_, tin, tout in runs] == [(10 * per_run, 5 * per_run)] * 2
    report = run_cli(capsys, "report", "latest", "--db", str(db), "--json")
    data = json.loads(report.out)
    assert data["accounting"]["runs_counted"] == 2
    assert data["limit"] == [{"case": "tiny-001", "runs": 2, "indices": [1, 2]}]
    terminal = run_cli(capsys, "report", "latest", "--db", str(db))
    assert "limit: tiny-001: 2 counted runs stopped by --max-turns or --token-budget" in " ".join(
        terminal.out.split()
    )
    page = tmp_path / "r.html"
    assert run_cli(capsys, "report", "latest", "--db", str(db), "--html", str(page)).code == 0
    assert '<li data-case="tiny-001" data-limit="2">' in page.read_text(encoding="utf-8")
    junit = tmp_path / "j.xml"
    assert run_cli(capsys, "report", "latest", "--db", str(db), "--junit-xml", str(junit)).code == 0
    said = "stopped by a limit (--max-turns, --token-budget), counted: runs 1, 2"
    assert (said in junit.read_text(encoding="utf-8")) == (status == "failed")  # in <failure>


@pytest.mark.parametrize(
    ("limit", "calls", "named"),
    [
        # the issue: the clarifier made 6 calls, 180 tokens, under a budget of 50
        (["--token-budget", "50"], 2, "--token-budget 50"),  # 30 tokens, then 60: refused
        (["--max-turns", "3"], 3, "--max-turns 3"),  # the loop's last turn still called a tool
    ],
    ids=["token-budget", "max-turns"],
)
def test_the_built_in_loop_is_held_to_its_limits_and_its_run_is_graded(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    limit: list[str],
    calls: int,
    named: str,
) -> None:
    from conftest import EXAMPLES
    from fakeserver import call

    monkeypatch.setenv("OPENAI_API_KEY", "sk-limits-test-key-000000")
    ask = call("query_background", {"query": "coupon policy"}, id="c1")
    fake_server.reply(tool_calls=[ask], usage=(20, 10), times=calls)
    db = tmp_path / "p.db"
    args = ["--model", "openai:gpt-test", "--base-url", fake_server.openai_url, *limit]
    clarify = str(EXAMPLES / "clarify")
    result = run_cli(
        capsys, "run", clarify, "--case", "ac-conflict-001", "-k", "1", *args,
        "--db", str(db), "-q",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert len(fake_server.requests) == calls
    ((_, status, kind, message, tin, tout),) = _runs(db)
    assert (status, kind, tin + tout) == ("failed", "limit", 30 * calls)
    assert named in (message or "")


def test_tokens_of_earlier_attempts_and_abandoned_calls_are_reported(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Was: after `resume --errored` the report left out the earlier attempts' tokens
    (the server served twice what it said), and calls abandoned at --call-timeout were
    billed and never mentioned."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-limits-test-key-000000")
    db = str(tmp_path / "p.db")
    model = ["--model", "openai:gpt-test", "--base-url", fake_server.openai_url]
    fake_server.reply("hi", usage=(10, 5), times=4)
    monkeypatch.setenv("PASSHAT_TEST_CRASH", "1")
    agent = ["--agent", "agents_for_tests:asks_then_crashes_when_told"]
    suite = str(_suite(writer))
    assert run_cli(capsys, "run", suite, *agent, *model, "-k", "2", "--db", db, "-q").code == 1
    monkeypatch.delenv("PASSHAT_TEST_CRASH")
    assert run_cli(capsys, "resume", "latest", "--errored", "--db", db, "-q").code == 0
    assert len(fake_server.requests) == 4  # what the server billed: 40 in, 20 out
    data = json.loads(run_cli(capsys, "report", "latest", "--db", db, "--json").out)
    assert data["usage"]["experiment"]["input_tokens"] == 20  # the counted runs'
    earlier = data["unseen"]["earlier_attempts"]
    assert (earlier["attempts"], earlier["input_tokens"], earlier["output_tokens"]) == (2, 20, 10)
    assert [(a["run"], a["attempt"]) for a in earlier["per_attempt"]] == [(1, 1), (2, 1)]
    assert data["unseen"]["with_earlier_attempts"]["input_tokens"] == 40
    terminal = " ".join(run_cli(capsys, "report", "latest", "--db", db).out.split())
    assert "earlier attempts (resume --errored): 2 attempts used 20 tokens in, 10 out" in terminal
    assert "in all 40 in, 20 out" in terminal
    # a call given up at --call-timeout: retried once, given up again; both billed, unseen
    fake_server.reply("late", usage=(10, 5), delay=1.5, times=2)
    slow = ["--call-timeout", "0.3", "--retries", "1", "--retry-max-wait", "0"]
    args = ["--agent", "agents_for_tests:asks_once", *model, *slow, "-k", "1", "--db", db, "-q"]
    assert run_cli(capsys, "run", suite, *args).code == 1
    data = json.loads(run_cli(capsys, "report", "latest", "--db", db, "--json").out)
    assert data["unseen"]["abandoned_calls"] == 2
    terminal = " ".join(run_cli(capsys, "report", "latest", "--db", db).out.split())
    assert (
        "abandoned: 2 model calls given up at --call-timeout; their tokens are billed" in terminal
    )
