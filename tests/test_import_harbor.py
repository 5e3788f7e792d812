"""`passhat import harbor`: Harbor job folders (trials with attempts, errors, gaps).

Harbor needs Python 3.12 and cannot be installed beside passhat, so these folders
are written here with the fields of its pydantic models (harbor 0.26.0:
JobConfig, JobResult, TrialResult, VerifierResult, ExceptionInfo), as its job
runner dumps them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli


def trial(
    task: str,
    n: int,
    reward: float | None,
    *,
    exception: str | None = None,
    valid: bool | None = None,
    model: str = "gpt-5.4-mini",
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "id": f"00000000-0000-0000-0000-{n:012d}",
        "task_name": task,
        "trial_name": f"{task}__{n:07x}",
        "trial_uri": f"file:///jobs/j/{task}__{n:07x}",
        "task_id": {"path": f"tasks/{task}"},
        "source": "terminal-bench",
        "task_checksum": f"sum-{task}",
        "config": {},
        "agent_info": {
            "name": "terminus",
            "version": "2",
            "model_info": {"name": model, "provider": "openai"},
        },
        "agent_result": {"n_input_tokens": 100, "n_output_tokens": 20, "cost_usd": 0.01},
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None
        if exception is None
        else {
            "exception_type": exception,
            "exception_message": f"{exception} happened",
            "exception_traceback": "...",
            "occurred_at": "2026-01-01T00:00:00Z",
        },
        "reward_valid": (reward is not None and exception is None) if valid is None else valid,
        "started_at": f"2026-01-01T00:00:{n:02d}Z",
        "finished_at": f"2026-01-01T00:01:{n:02d}Z",
    }


def write_job(
    root: Path, trials: list[dict[str, Any]], n_attempts: int = 3, stats: Any = None
) -> Path:
    job = root / "jobs" / "j"
    job.mkdir(parents=True)
    (job / "config.json").write_text(
        json.dumps({"job_name": "j", "n_attempts": n_attempts, "agents": [{"name": "terminus"}]})
    )
    if stats is not None:
        (job / "result.json").write_text(
            json.dumps({"id": "x", "n_total_trials": 9, "stats": stats})
        )
    for t in trials:
        d = job / t["trial_name"]
        d.mkdir()
        (d / "result.json").write_text(json.dumps(t))
    return job


TRIALS = [
    trial("hello", 1, 1.0),
    trial("hello", 2, 1.0),
    trial("hello", 3, 0.0),
    trial("build", 4, 1.0),
    trial("build", 5, None, exception="SandboxBuildFailedError", valid=False),
    trial("build", 6, 0.0, exception="AgentTimeoutError", valid=True),
    trial("fix", 7, 1.0),
    trial("fix", 8, 1.0),
]


def test_trials_become_runs_with_errors_errored_and_gaps_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = {
        "evals": {
            "terminus__gpt-5.4-mini__terminal-bench": {
                "n_trials": 7,
                "metrics": [{"mean": 5 / 7}],
                "pass_at_k": {"2": 1.0},
            }
        }
    }
    job = write_job(tmp_path, TRIALS, stats=stats)
    unfinished = job / "fix__deadbee"
    unfinished.mkdir()  # a trial that never wrote result.json: missing
    (job / "broken__0000009").mkdir()
    (job / "broken__0000009" / "result.json").write_text('{"task_name": "br')
    db = tmp_path / "p.db"
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(db), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    assert item["k_requested"] == 3
    assert item["errored"] == [
        {
            "case": "build",
            "run": 2,
            "message": "Harbor: SandboxBuildFailedError: SandboxBuildFailedError happened",
        }
    ]
    assert item["missing"] == {"fix": [3]}
    # the agent's own timeout still has a valid reward (Harbor's policy): a failure
    assert item["passhat"]["pass_rate"] == pytest.approx(5 / 7) and item["passhat"]["j"] == 2
    assert {f["label"]: f["value"] for f in item["figures"]} == {
        "Harbor mean": pytest.approx(5 / 7),
        "Harbor pass@2": 1.0,
    }
    assert any("broken__0000009: result.json cannot be read" in n for n in item["notes"])


def test_two_models_in_one_job_never_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = write_job(
        tmp_path, [trial("hello", 1, 1.0), trial("hello", 2, 0.0, model="other")], n_attempts=1
    )
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--json")
    items = json.loads(r.out)
    assert sorted(i["source"]["model"] for i in items) == ["gpt-5.4-mini", "other"]
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--name", "x")
    assert r.code == 2 and "names one experiment" in r.err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (None, "not a Harbor job folder"),
        ('{"n_attempts": 0}', "field n_attempts is 0"),
        ('{"n_att', "the Harbor file is not valid JSON"),
        ('{"n_attempts": 2}', "no trial with a readable result.json"),
    ],
    ids=["no-config", "bad-attempts", "truncated", "no-trials"],
)
def test_bad_job_folders_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str | None, message: str
) -> None:
    job = tmp_path / "j"
    job.mkdir()
    if config is not None:
        (job / "config.json").write_text(config)
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and message in r.err and len(r.err.strip().splitlines()) == 1


def test_a_nan_reward_is_errored_and_refused_trials_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): a NaN reward was scored failed (τ² and Harbor's own
    reward_valid make it no verdict), and trials Harbor's model refuses were dropped
    with no note."""
    nan = trial("hello", 1, float("nan"))
    job = write_job(tmp_path, [nan, trial("hello", 2, 1.0), trial("fix", 3, 1.0)])
    (job / "odd").mkdir()
    (job / "odd" / "result.json").write_text(json.dumps({**trial("fix", 4, 1.0), "agent_info": []}))
    (job / "list").mkdir()
    (job / "list" / "result.json").write_text("[1, 2]")
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    assert item["errored"] == [{"case": "hello", "run": 1, "message": "Harbor: the reward is NaN"}]
    notes = "\n".join(item["notes"])
    assert "odd/result.json: field agent_info is not an object" in notes
    assert "list/result.json: it is not a JSON object" in notes
    assert item["missing"] == {"fix": [2, 3], "hello": [3]}


def test_a_trial_folder_that_cannot_be_listed_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Permission bits do not stop root, so listing is refused as the kernel would.)"""
    import os

    job = write_job(tmp_path, TRIALS[:3])
    blocked = job / TRIALS[0]["trial_name"]
    real = os.scandir

    def scandir(path: Any) -> Any:
        if Path(path) == blocked:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    assert (
        f"{blocked.name}: cannot be read (Permission denied); that trial counts as missing"
        in item["notes"]
    )
    assert item["missing"] == {"hello": [3]}


def test_a_name_that_is_not_text_is_a_refused_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by test_fuzz_sources: a model name of [] reached the grouping of trials by
    (agent, model, dataset) and raised TypeError: unhashable type: 'list'."""
    bad = trial("fix", 3, 1.0)
    bad["agent_info"]["model_info"]["name"] = []
    odd = trial("fix", 4, 1.0)
    odd["source"] = {"a": 1}
    job = write_job(tmp_path, [trial("hello", 1, 1.0), trial("hello", 2, 1.0)])
    for folder, data in (("bad", bad), ("odd", odd)):
        (job / folder).mkdir()
        (job / folder / "result.json").write_text(json.dumps(data))
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    notes = "\n".join(item["notes"])
    assert "bad/result.json: field agent_info.model_info.name is not text" in notes
    assert "odd/result.json: field source is not text or null" in notes


def _import_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], **change: Any
) -> dict[str, Any]:
    t = trial("hello", 1, 1.0)
    for key, value in change.items():
        if key == "reward":
            t["verifier_result"] = {"rewards": {"reward": value}}
        else:
            t[key] = value
    job = write_job(tmp_path, [t, trial("hello", 2, 0.0)])
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    return dict(item)


@pytest.mark.parametrize(
    ("change", "passed"),
    [({"reward": "1"}, True), ({"reward_valid": "yes"}, True), ({"reward_valid": "no"}, False)],
    ids=["reward-string-1", "valid-yes", "valid-no"],
)
def test_what_harbors_model_converts_is_read_as_it_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], passed: bool
) -> None:
    """Regression (issue 34): reward "1" and reward_valid "yes" were dropped with a note
    that "Harbor refuses" them; Harbor's pydantic model reads them as 1 and true."""
    item = _import_one(tmp_path, capsys, **change)
    assert not any("refuses" in n for n in item["notes"])
    errored = [e["run"] for e in item["errored"]]
    assert (errored == []) if passed else (errored == [1])
    assert item["passhat"]["pass_rate"] == (0.5 if passed else 0.0)


@pytest.mark.parametrize(
    ("change", "part"),
    [
        ({"started_at": "not a date"}, "field started_at is not a time or null"),
        ({"reward_valid": "maybe"}, "field reward_valid is not true, false or null"),
        ({"reward": "one"}, "field rewards is not an object of numbers or null"),
    ],
    ids=["started-at", "valid-maybe", "reward-word"],
)
def test_what_harbors_model_refuses_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], part: str
) -> None:
    """Regression (issue 34): started_at "not a date" was read; Harbor refuses it."""
    item = _import_one(tmp_path, capsys, **change)
    assert any(part in n and "Harbor's TrialResult refuses it" in n for n in item["notes"])
    assert item["missing"] == {"hello": [3]} or item["missing"] == {"hello": [2, 3]}


@pytest.mark.parametrize("reward", [float("inf"), float("-inf")])
def test_an_infinite_reward_is_errored_never_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reward: float
) -> None:
    """Regression (issue 34): a reward of Infinity was counted as a failed trial."""
    t = trial("hello", 1, reward, valid=True)
    job = write_job(tmp_path, [t, trial("hello", 2, 0.0)])
    r = run_cli(capsys, "import", "harbor", str(job), "--db", str(tmp_path / "p.db"), "--json")
    (item,) = json.loads(r.out)
    assert item["errored"] == [
        {"case": "hello", "run": 1, "message": f"Harbor: the reward is {reward!r}, no score"}
    ]


def test_harbors_own_model_reads_the_trial_where_it_is_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where `harbor` is importable its TrialResult decides (here a stand-in model that
    requires a trial_uri starting with file://, which passhat's own reading never checks)."""
    import sys
    import types

    from pydantic import BaseModel, field_validator

    from passhat.sources import harbor

    class TrialResult(BaseModel):
        task_name: str
        trial_uri: str

        @field_validator("trial_uri")
        @classmethod
        def _file(cls, value: str) -> str:
            if not value.startswith("file://"):
                raise ValueError("not a file URI")
            return value

    module = types.ModuleType("harbor.models.trial.result")
    module.TrialResult = TrialResult  # type: ignore[attr-defined]
    for name in ("harbor", "harbor.models", "harbor.models.trial"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "harbor.models.trial.result", module)
    harbor.harbor_model.cache_clear()
    try:
        item = _import_one(tmp_path, capsys, trial_uri="s3://bucket/hello")
    finally:
        harbor.harbor_model.cache_clear()
    assert any(
        "field trial_uri: Value error, not a file URI (Harbor's TrialResult refuses it)" in n
        for n in item["notes"]
    )
