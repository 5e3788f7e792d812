"""`passhat import tau2`: τ²-bench results with trials, infrastructure errors and gaps.

τ²-bench is not on PyPI, so these files are written here with the fields of its
pydantic models (tau2-bench `src/tau2/data_model/simulation.py`: Results, Info,
SimulationRun, RewardInfo), as `Results.save` would dump them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli


def sim(task: str, trial: int, reward: float | None, reason: str = "user_stop") -> dict[str, Any]:
    return {
        "id": f"sim-{task}-{trial}",
        "task_id": task,
        "timestamp": "2026-01-01T00:00:00",
        "start_time": "2026-01-01T00:00:00",
        "end_time": "2026-01-01T00:01:00",
        "duration": 60.0,
        "termination_reason": reason,
        "agent_cost": 0.01,
        "user_cost": 0.01,
        "reward_info": None
        if reward is None
        else {
            "reward": reward,
            "reward_basis": ["DB"],
            "db_check": {"db_match": reward == 1, "db_reward": reward},
        },
        "messages": [
            {"role": "user", "content": "I want to cancel my order", "turn_idx": 0},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "name": "cancel_order",
                        "arguments": {"order_id": "#1"},
                        "requestor": "assistant",
                    }
                ],
                "turn_idx": 1,
            },
        ],
        "trial": trial,
        "seed": 300 + trial,
        "mode": "half_duplex",
    }


SIMULATIONS = [
    sim("0", 0, 1.0),
    sim("0", 1, 1.0),
    sim("0", 2, 1.0),
    sim("1", 0, 1.0),
    sim("1", 1, 0.0),
    sim("1", 2, None, "infrastructure_error"),
    sim("2", 0, 1.0),
    sim("2", 1, 0.5),
    # task 2, trial 2: never saved (the run was killed): missing
]
RESULTS: dict[str, Any] = {
    "timestamp": "2026-01-01T00:00:00",
    "info": {
        "git_commit": "a2c0247",
        "num_trials": 3,
        "max_steps": 200,
        "max_errors": 10,
        "user_info": {
            "implementation": "user_simulator",
            "llm": "gpt-4.1",
            "llm_args": {"temperature": 0.0},
        },
        "agent_info": {
            "implementation": "llm_agent",
            "llm": "gpt-4.1-mini",
            "llm_args": {"temperature": 0.0},
        },
        "environment_info": {"domain_name": "airline", "policy": "..."},
        "seed": 300,
    },
    "tasks": [{"id": t, "user_scenario": {"instructions": f"task {t}"}} for t in ("0", "1", "2")],
    "simulations": SIMULATIONS,
}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_trials_become_runs_infra_errors_errored_gaps_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    results = write(tmp_path / "results.json", RESULTS)
    r = run_cli(capsys, "import", "tau2", str(results), "--db", str(db), "--json", "--name", "air")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    assert item["k_requested"] == 3
    assert item["errored"] == [
        {"case": "1", "run": 3, "message": "τ²-bench: the simulation hit an infrastructure error"}
    ]
    assert item["missing"] == {"2": [3]}
    assert item["passhat"]["pass_rate"] == pytest.approx(5 / 7) and item["passhat"]["j"] == 2
    figures = {f["label"]: f["value"] for f in item["figures"]}
    assert figures["τ²-bench avg_reward"] == pytest.approx(5.5 / 7)
    assert figures["τ²-bench pass^1"] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert figures["τ²-bench pass^2"] == pytest.approx(1 / 3)
    assert "τ²-bench pass^3" not in figures
    data = json.loads(run_cli(capsys, "report", "air", "--db", str(db), "--json").out)
    assert data["experiment"]["model"] == "gpt-4.1-mini"
    assert data["accounting"]["runs_counted"] == 7 and data["accounting"]["runs_missing"] == 1
    assert data["dataset"]["label_hat"] == "pass^2"
    # the text output, into another store (the same results again would be a no-op)
    r = run_cli(capsys, "import", "tau2", str(results), "--db", str(tmp_path / "q.db"))
    assert (
        "errored: task 1, trial 2 (run 3): τ²-bench: the simulation hit an infrastructure" in r.out
    )
    assert "missing: task 2, trial 2 (run 3)" in r.out


def test_the_text_output_names_ten_missing_runs_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 15): every missing run was a line (1,971 of them at 98,029
    simulations of 100,000), while errored runs stopped at ten."""
    from passhat.cli.sources import MAX_ERRORED_SHOWN

    tasks = [str(t) for t in range(12)]  # trials 1 and 2 of each never saved: 24 missing
    data = {
        **RESULTS,
        "tasks": [{"id": t, "user_scenario": {"instructions": t}} for t in tasks],
        "simulations": [sim(t, 0, 1.0) for t in tasks],
    }
    results = write(tmp_path / "results.json", data)
    r = run_cli(capsys, "import", "tau2", str(results), "--db", str(tmp_path / "p.db"))
    assert r.code == 0, r.err
    missing = [line for line in r.out.splitlines() if line.startswith("  missing: ")]
    assert len(missing) == MAX_ERRORED_SHOWN == 10
    assert missing[0] == "  missing: task 0, trial 1 (run 2)"
    assert missing[-1] == "  missing: task 4, trial 2 (run 3)"
    assert f"… and {24 - MAX_ERRORED_SHOWN} more missing runs" in r.out
    again = run_cli(
        capsys, "import", "tau2", str(results), "--db", str(tmp_path / "q.db"), "--json"
    )
    assert sum(len(runs) for runs in json.loads(again.out)[0]["missing"].values()) == 24


def test_a_name_taken_is_one_clean_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "p.db"
    results = write(tmp_path / "results.json", RESULTS)
    assert (
        run_cli(capsys, "import", "tau2", str(results), "--db", str(db), "--name", "t2").code == 0
    )
    r = run_cli(capsys, "import", "tau2", str(results), "--db", str(db), "--name", "t2")
    assert r.code == 2 and "an experiment named 't2' exists already" in r.err
    assert "UNIQUE" not in r.err and "Traceback" not in r.err


def test_the_dir_format_reads_simulation_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    (folder / "simulations").mkdir(parents=True)
    meta = {k: v for k, v in RESULTS.items() if k != "simulations"}
    write(folder / "results.json", meta)
    for s in SIMULATIONS:
        write(folder / "simulations" / f"{s['id']}.json", s)
    r = run_cli(capsys, "import", "tau2", str(folder), "--db", str(tmp_path / "p.db"), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    assert item["accounting"]["runs_completed"] == 8 and item["accounting"]["runs_counted"] == 7


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (json.dumps(RESULTS)[:500], "is not valid JSON"),
        (json.dumps({"info": {"agent_info": {"llm": "m"}}}), "field info.num_trials is null"),
        (json.dumps([1]), "not τ²-bench results"),
        (
            json.dumps({**RESULTS, "simulations": [sim("0", 0, 1.0), sim("0", 0, 0.0)]}),
            "two simulations of trial 0",
        ),
    ],
    ids=["truncated", "no-trials", "not-results", "duplicate-trial"],
)
def test_bad_results_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(content)
    r = run_cli(capsys, "import", "tau2", str(path), "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and message in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1


# ------------------------------------------------ what τ²-bench's loader refuses


def _sims_with(change: dict[str, Any], drop: str | None = None) -> dict[str, Any]:
    sims = [dict(s) for s in SIMULATIONS]
    sims[1] = {**sims[1], **change}
    if drop:
        del sims[1][drop]
    return {**RESULTS, "simulations": sims}


@pytest.mark.parametrize(
    ("results", "part"),
    [
        (_sims_with({}, drop="task_id"), "field simulations[1].task_id is missing"),
        (_sims_with({"task_id": None}), "field simulations[1].task_id is null"),
        (_sims_with({"task_id": ""}), 'field simulations[1].task_id is ""'),
        (_sims_with({"task_id": "  "}), 'field simulations[1].task_id is "  "'),
        (_sims_with({"trial": "one"}), 'field simulations[1].trial is "one"'),
        (_sims_with({"duration": "60 s"}), 'field simulations[1].duration is "60 s"'),
        (_sims_with({"duration": 10**400}), "field simulations[1].duration is 1000"),
        (_sims_with({"reward_info": "ok"}), 'field simulations[1].reward_info is "ok"'),
        (_sims_with({"messages": {"a": 1}}), "field simulations[1].messages is"),
        ({**RESULTS, "info": {**RESULTS["info"], "num_trials": 10**12}}, "num_trials is 1,000"),
        ({**RESULTS, "info": {**RESULTS["info"], "agent_info": "x"}}, "info.agent_info.llm"),
        ({**RESULTS, "tasks": "all"}, "field tasks is not a list"),
    ],
    ids=[
        "no-task-id",
        "null-task-id",
        "empty-task-id",
        "blank-task-id",
        "string-trial",
        "string-duration",
        "huge-duration",
        "string-reward-info",
        "object-messages",
        "huge-num-trials",
        "string-agent-info",
        "string-tasks",
    ],
)
def test_what_tau2s_loader_refuses_is_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], results: dict[str, Any], part: str
) -> None:
    """Regression (issue 26): simulations without task_id imported into a case "None"
    (exit 0); wrong types ended in ValueError, OverflowError or AttributeError."""
    db = tmp_path / "p.db"
    r = run_cli(capsys, "import", "tau2", str(write(tmp_path / "r.json", results)), "--db", str(db))
    assert r.code == 2 and part in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert not db.exists()  # nothing half-written: the store is never opened


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"info": {"num_trials": 1' + "0" * 5000 + "}}", "not valid JSON"),
    ],
    ids=["deep", "5000-digit-int"],
)
def test_unreadable_json_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, part: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(text)
    r = run_cli(capsys, "import", "tau2", str(path), "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and part in r.err and len(r.err.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_device_or_a_fifo_is_refused_without_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """Regression (issue 26): `import tau2 /dev/zero` read until MemoryError."""
    import os

    if kind == "device":
        path = Path("/dev/zero")
    else:
        path = tmp_path / "fifo.json"
        os.mkfifo(path)
    for source in ("tau2", "inspect"):
        r = run_cli(capsys, "import", source, str(path), "--db", str(tmp_path / "p.db"))
        assert r.code == 2, (source, r.err)
        assert ("a device, not a file" if kind == "device" else "a FIFO, not a file") in r.err
        assert len(r.err.strip().splitlines()) == 1


def test_what_tau2s_model_allows_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """τ²'s SimulationRun makes `trial` optional and `messages` null for full-duplex runs:
    neither is refused; the unnumbered simulation is numbered in file order, with a note."""
    results = _sims_with({"messages": None}, drop="trial")
    r = run_cli(
        capsys,
        "import",
        "tau2",
        str(write(tmp_path / "r.json", results)),
        "--db",
        str(tmp_path / "p.db"),
        "--json",
    )
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    assert "1 simulations have no trial number; numbered in file order" in item["notes"]


@pytest.mark.parametrize("reward", [float("inf"), float("-inf"), 2.0, -1.0, float("nan")])
def test_a_reward_that_is_no_score_is_errored_with_the_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reward: float
) -> None:
    """Regression (issue 34): a reward of Infinity or 2.0 was counted as a failed run."""
    sims = [dict(s) for s in SIMULATIONS]
    sims[4] = sim("1", 1, reward)
    path = tmp_path / "r.json"
    path.write_text(json.dumps({**RESULTS, "simulations": sims}))
    r = run_cli(capsys, "import", "tau2", str(path), "--db", str(tmp_path / "p.db"), "--json")
    assert r.code == 0, r.err
    (item,) = json.loads(r.out)
    errored = {(e["case"], e["run"]): e["message"] for e in item["errored"]}
    assert errored[("1", 2)] == (
        f"τ²-bench: reward {reward!r} is no score in 0..1 (termination: user_stop)"
    )
    figures = {f["label"]: f["value"] for f in item["figures"]}
    assert figures["τ²-bench avg_reward"] == pytest.approx(5.5 / 6)  # left out, as errored
