"""equals, subset, superset, matches and judge: the scorers users expect beside exact_set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import run_cli
from fakeserver import FakeServer
from passhat.errors import ConfigError, SuiteError
from passhat.scoring import (
    Equals,
    ExactSet,
    Matches,
    ScorerError,
    json_diff,
    score_run,
    score_run_async,
)
from passhat.store import Store
from passhat.suite import Suite, load_suite

pytest_plugins = ["fakeserver"]

# ------------------------------------------------------------------ state-based


def test_equals_passes_on_json_equality_whatever_the_key_order() -> None:
    state = {"rows": [{"id": 1, "name": "Ada"}], "n": 1.0}
    goal = {"n": 1, "rows": [{"name": "Ada", "id": 1}]}
    assert Equals(".")(state, goal) == {"scorer": "equals", "path": ".", "passed": True, "diff": []}


def test_equals_lists_every_difference_by_path() -> None:
    state = {"rows": [{"id": 1, "name": "Ada", "vip": 1}, {"id": 3}], "extra": "x"}
    goal = {"rows": [{"id": 1, "name": "Ada", "vip": True}, {"id": 2}, {"id": 4}]}
    detail = Equals("rows")(state, goal)
    assert detail["passed"] is False
    assert detail["diff"] == [
        {"path": "rows.0.vip", "expected": True, "actual": 1},  # true is not 1
        {"path": "rows.1.id", "expected": 2, "actual": 3},
        {"path": "rows.2", "expected": {"id": 4}},  # missing from the final state
    ]
    assert json_diff({"a": 1}, {"a": 1, "b": 2}) == [{"path": "b", "actual": 2}]


def test_equals_on_a_path_the_final_state_lacks_fails_with_a_problem() -> None:
    detail = Equals("rows")({}, {"rows": []})
    assert detail["passed"] is False and detail["problem"] == "rows is not in the final state"


@pytest.mark.parametrize(
    ("kind", "actual", "passed", "missing", "extra"),
    [
        pytest.param("subset", ["a"], True, ["b"], [], id="subset-missing-allowed"),
        pytest.param("subset", ["a", "z"], False, ["b"], ["z"], id="subset-extra-fails"),
        pytest.param("superset", ["a", "b", "z"], True, [], ["z"], id="superset-extra-allowed"),
        pytest.param("superset", ["a", "z"], False, ["b"], ["z"], id="superset-missing-fails"),
        pytest.param("exact_set", ["a", "b"], True, [], [], id="exact"),
    ],
)
def test_subset_and_superset_report_missing_and_extra(
    kind: str, actual: list[str], passed: bool, missing: list[str], extra: list[str]
) -> None:
    detail = ExactSet("items", name=kind)({"items": actual}, {"items": ["a", "b"]})
    assert (detail["scorer"], detail["passed"]) == (kind, passed)
    assert (detail["missing"], detail["extra"]) == (missing, extra)


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        pytest.param("AC-12 is vague", True, id="match"),
        pytest.param("ac-12 is vague", False, id="no-match"),
    ],
)
def test_matches_searches_the_text(value: str, passed: bool) -> None:
    assert Matches("note", r"AC-\d+")({"note": value}, {})["passed"] is passed


def test_matches_on_something_that_is_not_text_fails_with_a_problem() -> None:
    detail = Matches("note", "x")({"note": 3}, {})
    assert detail["passed"] is False and detail["problem"] == "note holds 3, not text"


# ----------------------------------------------------------- suites using them

ENV_TOOLS = [
    {
        "name": "answer",
        "description": "Give the answer.",
        "writes": "answer",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
]
AGENT = """
async def answer(input, env, ctx):
    await env.call("answer", {"text": input["reply"]})
    return "ok"
"""


def write_suite(
    root: Path, scorers: list[dict[str, Any]], cassette: list[dict[str, Any]] | None = None
) -> Path:
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "none.jsonl").write_text('{"cassette": 1}\n', encoding="utf-8")
    if cassette is not None:
        lines = [{"cassette": 1, "model": "judge-model", "note": "test"}, *cassette]
        (root / "judge.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
        )
    suite = {
        "name": "answers",
        "environment": "tools",
        "tools": ENV_TOOLS,
        "defaults": {
            "agent": "agent.py:answer",
            "model": "replay:none.jsonl",
            "k": 2,
            "scorers": scorers,
        },
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    case = {
        "id": "refund-1",
        "input": {"reply": "Refunds take 5 days."},
        "goal": {"answer": {"text": "Refunds take 5 days."}},
    }
    (root / "cases" / "refund-1.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("scorer", "expected"),
    [
        pytest.param(
            {"equals": "answer.txt"},
            "cases/refund-1.yaml: goal.answer.txt: missing; "
            "the equals scorer in suite.yaml compares this path",
            id="equals-goal-path",
        ),
        pytest.param(
            {"matches": "answer.text", "pattern": "(unclosed"},
            "defaults.scorers[0].pattern: '(unclosed' is not a regular expression",
            id="bad-regex",
        ),
        pytest.param(  # re.compile raises RecursionError here: was a traceback at load
            {"matches": "answer.text", "pattern": "(" * 500 + "a" + ")" * 500},
            "defaults.scorers[0].pattern: '((((",
            id="regex-nested-too-deep",
        ),
        pytest.param(  # and OverflowError here
            {"matches": "answer.text", "pattern": "a{99999999999999999999}"},
            "defaults.scorers[0].pattern: 'a{99999999999999999999}' is not a regular expression",
            id="regex-count-too-large",
        ),
        pytest.param(
            {"judge": "Is it kind?", "model": "gpt-4o"},
            "defaults.scorers[0].model: 'gpt-4o' is not provider:name",
            id="judge-model",
        ),
        pytest.param(
            {"superset": "answer"},
            "goal.answer: expected a list of items for the superset scorer",
            id="superset-needs-a-list",
        ),
    ],
)
def test_scorer_mistakes_are_found_when_the_suite_loads(
    tmp_path: Path, scorer: dict[str, Any], expected: str
) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(write_suite(tmp_path / "s", [scorer]))
    assert any(expected in p for p in caught.value.problems), caught.value.problems


def _judge_line(run: int, text: str) -> dict[str, Any]:
    return {
        "case": "refund-1",
        "run": run,
        "turn": 0,
        "message": {"role": "assistant", "content": text},
        "usage": {"input_tokens": 120, "output_tokens": 30},
    }


RUBRIC = "The answer tells the customer how long a refund takes."


def test_a_replayed_judge_grades_each_run_and_records_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        tmp_path / "s",
        [
            {"equals": "answer"},
            {"judge": RUBRIC, "model": "replay:judge.jsonl", "paths": ["answer.text"]},
        ],
        [
            _judge_line(1, "It states 5 days.\nVERDICT: PASS"),
            _judge_line(2, "It gives no time.\n\nVERDICT: FAIL"),
        ],
    )
    r = run_cli(capsys, "run", str(suite), "--db", str(tmp_path / "p.db"), "-q")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        runs = store.runs(store.experiment("latest").id)
    assert [x.status for x in runs] == ["passed", "failed"]
    judged = [x.score[1] for x in runs]
    assert [(d["verdict"], d["reasoning"]) for d in judged] == [
        ("pass", "It states 5 days."),
        ("fail", "It gives no time."),
    ]
    assert judged[0]["model"] == "replay:judge.jsonl"
    assert judged[0]["model_config"]["provider"] == "replay"
    assert len(judged[0]["model_config"]["sha256"]) == 64
    assert judged[0]["usage"] == {"input_tokens": 120, "output_tokens": 30}
    assert runs[0].score[0] == {"scorer": "equals", "path": "answer", "passed": True, "diff": []}


def test_a_judge_without_an_answer_makes_the_run_errored_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        tmp_path / "s",
        [{"judge": RUBRIC, "model": "replay:judge.jsonl"}],
        [_judge_line(1, "VERDICT: PASS"), _judge_line(2, "I am not sure.")],
    )
    run_cli(capsys, "run", str(suite), "--db", str(tmp_path / "p.db"), "-q")
    with Store(tmp_path / "p.db") as store:
        runs = store.runs(store.experiment("latest").id)
    assert [x.status for x in runs] == ["passed", "errored"]
    assert runs[1].error_type == "scorer_error"
    assert "no 'VERDICT: PASS' or 'VERDICT: FAIL' line: I am not sure." in (
        runs[1].error_message or ""
    )


def test_a_judge_cassette_that_is_missing_stops_the_run_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "s", [{"judge": RUBRIC, "model": "replay:nope.jsonl"}])
    r = run_cli(capsys, "run", str(suite), "--db", str(tmp_path / "p.db"), "-q")
    assert r.code == 2 and "nope.jsonl" in r.err and "Traceback" not in r.err


# ------------------------------------------------------ over real HTTP


def _http_suite(tmp_path: Path, server: FakeServer) -> Suite:
    return load_suite(
        write_suite(
            tmp_path / "s",
            [
                {
                    "judge": RUBRIC,
                    "model": "openai:judge-1",
                    "base_url": server.openai_url,
                    "params": {"temperature": 0},
                }
            ],
        )
    )


async def test_a_judge_over_http_sends_the_rubric_and_the_state(
    tmp_path: Path, fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-test")
    suite = _http_suite(tmp_path, fake_server)
    fake_server.reply("Says 5 days, as the reference.\nVERDICT: PASS", usage=(200, 12))
    state = {"answer": {"text": "Refunds take 5 days."}}
    score = await score_run_async(suite, suite.cases[0], state, run_index=1, seed=7)
    assert score.passed
    detail = score.details[0]
    assert detail["reasoning"] == "Says 5 days, as the reference."
    assert detail["model_config"]["provider"] == "openai"
    assert "sk-judge-test" not in json.dumps(detail)  # the key never reaches the store
    body = fake_server.requests[-1].body
    assert body["model"] == "judge-1" and body["temperature"] == 0
    prompt = body["messages"][-1]["content"]
    assert RUBRIC in prompt and "Refunds take 5 days." in prompt


async def test_a_judge_whose_server_keeps_failing_is_errored(
    tmp_path: Path, fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-test")
    suite = _http_suite(tmp_path, fake_server)
    fake_server.fail(401, message="bad key")
    with pytest.raises(ScorerError, match=r"judge: the judge's model failed: .*401"):
        await score_run_async(suite, suite.cases[0], {"answer": {"text": "x"}})


def test_score_run_runs_a_judge_outside_an_event_loop(
    tmp_path: Path, fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-test")
    suite = _http_suite(tmp_path, fake_server)
    fake_server.reply("No.\nVERDICT: FAIL")
    score = score_run(suite, suite.cases[0], {"answer": {"text": "x"}})
    assert not score.passed and score.details[0]["verdict"] == "fail"


def test_a_judge_model_without_a_key_is_refused_before_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passhat.scoring import build_scorers

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    suite = load_suite(write_suite(tmp_path / "s", [{"judge": RUBRIC, "model": "openai:judge-1"}]))
    with pytest.raises(ConfigError):
        build_scorers(suite)


def test_regrading_replays_a_judge_by_each_runs_own_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        tmp_path / "s",
        [{"judge": RUBRIC, "model": "replay:judge.jsonl"}],
        [_judge_line(1, "VERDICT: PASS"), _judge_line(2, "VERDICT: FAIL")],
    )
    db = str(tmp_path / "p.db")
    assert run_cli(capsys, "run", str(suite), "--db", db, "-q", "--name", "judged").code == 0
    r = run_cli(capsys, "regrade", "judged", "--db", db, "--name", "again")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        runs = store.runs(store.experiment("again").id)
    assert [(x.run_index, x.status) for x in runs] == [(1, "passed"), (2, "failed")]
