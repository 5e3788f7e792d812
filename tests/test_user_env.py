"""A user's environment, `file.py:Class` in suite.yaml: loaded, checked, hashed, run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cli_helpers import run_cli
from passhat.errors import SuiteError
from passhat.store import Store
from passhat.suite import load_suite

COUNTER_ENV = '''
from typing import Any
from passhat import Environment, ToolError, tool


class Counter(Environment):
    input_schema = {"type": "object", "required": ["start"],
                    "properties": {"start": {"type": "integer"}}}
    goal_schema = {"type": "object", "required": ["count"],
                   "properties": {"count": {"type": "integer"}}}

    def setup(self, input: dict[str, Any]) -> None:
        self.count = input["start"]

    @tool
    def add(self, n: int) -> int:
        """Add n to the counter."""
        if n > 10:
            raise ToolError("add at most 10 at a time")
        self.count += n
        return self.count

    def final_state(self) -> dict[str, Any]:
        return {"count": self.count}
'''

AGENT = """
async def add_three(input, env, ctx):
    return (await env.call("add", {"n": 3})).content
"""


def write_suite(
    root: Path, env_source: str = COUNTER_ENV, env_ref: str = "counter.py:Counter"
) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "cassettes").mkdir()
    (root / "cassettes" / "none.jsonl").write_text('{"cassette": 1}\n', encoding="utf-8")
    (root / "counter.py").write_text(env_source, encoding="utf-8")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    suite = {
        "name": "counter",
        "environment": env_ref,
        "defaults": {
            "agent": "agent.py:add_three",
            "model": "replay:cassettes/none.jsonl",
            "k": 2,
            "scorers": [{"custom": "rules.py:same_count"}],
        },
    }
    (root / "rules.py").write_text(
        "def same_count(final_state, goal):\n    return final_state == goal\n", encoding="utf-8"
    )
    (root / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    for start, goal in ((1, 4), (5, 9)):
        case = {"id": f"from-{start}", "input": {"start": start}, "goal": {"count": goal}}
        (root / "cases" / f"from-{start}.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")
    return root


def test_a_user_environment_runs_and_is_graded_on_its_final_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "counter")
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(suite), "--db", db, "-q")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        experiment = store.experiment("latest")
        runs = store.runs(experiment.id)
    assert experiment.environment_hash is not None and len(experiment.environment_hash) == 64
    assert experiment.tools == ("add",)
    verdicts = {(x.case_id, x.run_index): x.status for x in runs}
    assert verdicts == {
        ("from-1", 1): "passed",
        ("from-1", 2): "passed",
        ("from-5", 1): "failed",
        ("from-5", 2): "failed",
    }
    assert {json.dumps(x.final_state) for x in runs if x.case_id == "from-5"} == {'{"count": 8}'}


def test_a_case_is_checked_against_the_user_schemas(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "counter")
    (suite / "cases" / "from-1.yaml").write_text(
        "id: from-1\ninput: {start: one}\ngoal: {count: 4}\n", encoding="utf-8"
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(suite)
    assert caught.value.problems == [
        f"{suite}/cases/from-1.yaml: input.start: expected a whole number, got 'one'"
    ]


@pytest.mark.parametrize(
    ("source", "ref", "expected"),
    [
        pytest.param(
            COUNTER_ENV.replace("def final_state", "def final_stat"),
            "counter.py:Counter",
            "suite.yaml: environment: counter.py:Counter: Counter does not define "
            "final_state(); add def final_state(self) -> dict returning the state the "
            "scorers grade",
            id="no-final-state",
        ),
        pytest.param(
            COUNTER_ENV,
            "counter.py:Countr",
            "suite.yaml: environment: counter.py:Countr: counter.py has no "
            "'Countr'; did you mean 'Counter'?",
            id="misspelt-class",
        ),
        pytest.param(
            COUNTER_ENV,
            "countr.py:Counter",
            "suite.yaml: environment: countr.py:Counter: no file",
            id="no-such-file",
        ),
        pytest.param(
            COUNTER_ENV + "\nbroken = 1 / 0\n",
            "counter.py:Counter",
            "suite.yaml: environment: counter.py:Counter: importing counter.py "
            "raised ZeroDivisionError: division by zero",
            id="module-raises",
        ),
        pytest.param(
            COUNTER_ENV + "\nclass Plain:\n    pass\n",
            "counter.py:Plain",
            "suite.yaml: environment: counter.py:Plain: 'Plain' is not a passhat "
            "Environment; write class Name(passhat.Environment) with @tool methods",
            id="not-an-environment",
        ),
        pytest.param(
            COUNTER_ENV.replace("def add(self, n: int)", "def add(self, *n: int)"),
            "counter.py:Counter",
            "suite.yaml: environment: counter.py:Counter: tool add: *n cannot be "
            "described by a schema",
            id="varargs-tool",
        ),
    ],
)
def test_passhat_check_refuses_a_broken_environment_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    source: str,
    ref: str,
    expected: str,
) -> None:
    suite = write_suite(tmp_path / "counter", source, ref)
    r = run_cli(capsys, "check", str(suite))
    assert r.code == 2
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert len(lines) == 1, r.err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in r.err


def test_an_edited_environment_blocks_resume_naming_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "counter")
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(suite), "-k", "1", "--db", db, "-q", "--name", "count")
    assert r.code == 0, r.err
    env_file = suite / "counter.py"
    env_file.write_text(env_file.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    r = run_cli(capsys, "resume", "count", "-k", "2", "--db", db)
    assert r.code == 2
    assert "environment source (hash)" in r.err
    assert "suite content (hash)" not in r.err  # only what changed is named


def test_the_unchanged_environment_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "counter")
    db = str(tmp_path / "p.db")
    assert run_cli(capsys, "run", str(suite), "-k", "1", "--db", db, "-q", "--name", "c").code == 0
    r = run_cli(capsys, "resume", "c", "-k", "2", "--db", db, "-q")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        assert len(store.runs(store.experiment("c").id)) == 4


def test_an_environment_whose_final_state_raises_errors_the_run_and_closes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = COUNTER_ENV.replace(
        '        return {"count": self.count}',
        '        if self.count > 5:\n            raise RuntimeError("state lost")\n'
        '        return {"count": self.count}\n\n'
        "    def close(self) -> None:\n"
        '        with open(__file__ + ".closed", "a") as f:\n            f.write("x")',
    )
    suite = write_suite(tmp_path / "counter", source)
    r = run_cli(capsys, "run", str(suite), "-k", "1", "--db", str(tmp_path / "p.db"), "-q")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        runs = {x.case_id: x for x in store.runs(store.experiment("latest").id)}
    assert runs["from-1"].status == "passed"
    assert (runs["from-5"].status, runs["from-5"].error_type) == ("errored", "environment_error")
    assert runs["from-5"].error_message == "final_state() raised RuntimeError: state lost"
    # close() ran after every run (and after the load-time checks of each case)
    assert len((suite / "counter.py.closed").read_text()) >= 2
