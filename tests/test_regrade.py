"""`passhat regrade`: stored final states scored again under a suite's current goals
and scorers; no agent, no model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import ROOT, run_cli, run_seed


def json_out(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    r = run_cli(capsys, *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.fixture
def trello(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A copy of the trello suite, run once for real (replayed answers): 9 runs."""
    suite = tmp_path / "trello"
    shutil.copytree(ROOT / "examples" / "trello", suite)
    db = tmp_path / "p.db"
    r = run_cli(capsys, "run", str(suite), "--db", str(db), "--name", "cards", "-q")
    assert r.code == 0, r.err
    return suite, db


def edit_yaml(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def test_a_new_goal_regrades_the_stored_runs_without_a_model(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, db = trello
    before = json_out(capsys, "report", "cards", "--db", str(db))
    # the goal of one case changes; the cassette is gone: a model call would fail
    case = suite / "cases" / "export-orders-csv.yaml"
    edit_yaml(case, lambda d: d["goal"]["cards"][0].update(labels=["feature"]))
    (suite / "cassettes" / "cards.jsonl").unlink()
    out = json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "relabelled")
    assert out["runs"] == 9
    changed = {(c["case"], c["run"]) for c in out["changes"]}
    assert changed and {case for case, _ in changed} == {"export-orders-csv"}
    assert all(c["before"] == "passed" and c["after"] == "failed" for c in out["changes"])
    source = out["source"]
    assert source["experiment"] == before["experiment"]["id"]
    assert source["fingerprint"] == before["experiment"]["fingerprint"]
    assert set(source["goal_hashes"]) == {
        "checkout-card-timeout",
        "export-orders-csv",
        "rotate-payment-keys",
    }
    assert out["fingerprint"] != before["experiment"]["fingerprint"]
    after = json_out(capsys, "report", "relabelled", "--db", str(db))
    cases = {c["case"]: c for c in after["cases"]}
    assert cases["export-orders-csv"]["passes"] == 0
    assert after["dataset"]["passes"] == before["dataset"]["passes"] - len(changed)
    # the runs are the stored ones: same transcripts, same final states
    a = run_cli(capsys, "show", "cards", "export-orders-csv", "1", "--db", str(db)).out
    b = run_cli(capsys, "show", "relabelled", "export-orders-csv", "1", "--db", str(db)).out
    assert a.split("final state")[0].splitlines()[1:] == b.split("final state")[0].splitlines()[1:]
    # compare pairs the two gradings case by case
    cmp = json_out(capsys, "compare", "cards", "relabelled", "--db", str(db), "-B", "200")
    assert cmp["verdict"]["outcome"]


def test_a_stricter_scorer_regrades_and_the_same_grading_gives_the_same_fingerprint(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, db = trello
    same = json_out(capsys, "regrade", "cards", "--db", str(db))
    assert same["changes"] == []
    again = json_out(capsys, "regrade", "cards", "--db", str(db))
    assert again["fingerprint"] == same["fingerprint"]
    edit_yaml(
        suite / "suite.yaml",
        lambda d: d["defaults"]["scorers"][0]["params"].update(max_title=10),
    )
    strict = json_out(capsys, "regrade", "cards", "--db", str(db), "--suite", str(suite))
    assert strict["fingerprint"] != same["fingerprint"]
    assert strict["source"]["scorer_hash"] != same["source"]["scorer_hash"]
    assert strict["changes"] and all(c["after"] == "failed" for c in strict["changes"])


def test_errored_runs_stay_errored_and_resume_refuses_a_regrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--agent",
        "agents_for_tests:crashes_on_run_2",
        "--db",
        str(db),
        "--name",
        "src",
        "-q",
        "-k",
        "3",
    )
    assert r.code == 0, r.err
    out = json_out(capsys, "regrade", "src", "--db", str(db), "--name", "again")
    data = json_out(capsys, "report", "again", "--db", str(db))
    tracebacks = [e.pop("traceback") for e in data["errored"]]
    assert data["errored"] == [
        {
            "case": "ac-conflict-001",
            "run": 2,
            "type": "agent_error",
            "message": "RuntimeError: the agent fell over in run 2",
        }
    ]
    assert "in crashes_on_run_2" in tracebacks[0]  # the source run's crash, kept
    assert out["runs"] == 3 and out["changes"] == []
    assert [c["passes"] for c in data["cases"]] == [2]
    r = run_cli(capsys, "resume", "again", "--db", str(db))
    assert r.code == 2 and "is of kind 'regrade', not a run" in r.err


def test_regrade_refuses_imports_and_a_suite_without_the_cases(
    trello: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, db = trello
    r = run_cli(
        capsys,
        "audit",
        str(ROOT / "examples" / "audit" / "trello"),
        "--into-store",
        "--db",
        str(db),
        "--name",
        "aud",
    )
    assert r.code == 0
    r = run_cli(capsys, "regrade", "aud", "--db", str(db))
    assert r.code == 2 and "is audited (audit)" in r.err
    r = run_cli(
        capsys, "regrade", "cards", "--db", str(db), "--suite", str(ROOT / "examples" / "clarify")
    )
    assert r.code == 2 and "has none of the cases" in r.err


def test_regrade_reads_the_runs_a_few_cases_at_a_time(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): regrade read every run whole, then held every regraded run
    too, before writing one: 2.2 GB at 100,000 runs. It now reads CASES_READ cases at a
    time, writes their runs as they are scored, and stores the same runs."""
    import passhat.cli.regrade
    from passhat.store import Store

    suite, db = trello
    edit_yaml(
        suite / "cases" / "export-orders-csv.yaml",
        lambda d: d["goal"]["cards"][0].update(labels=["feature"]),
    )
    whole = json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "whole")
    reads: list[tuple[str, ...] | None] = []
    runs = Store.runs

    def spied(self: Store, experiment_id: str, **options: Any) -> Any:
        cases = options.get("cases")
        reads.append(None if cases is None else tuple(cases))
        return runs(self, experiment_id, **options)

    monkeypatch.setattr(Store, "runs", spied)
    monkeypatch.setattr(passhat.cli.regrade, "CASES_READ", 2)
    parts = json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "parts")
    assert reads == [("checkout-card-timeout", "export-orders-csv"), ("rotate-payment-keys",)]
    assert parts["runs"] == whole["runs"] == 9
    assert parts["changes"] == whole["changes"] and parts["changes"]
    a, b = (json_out(capsys, "report", ref, "--db", str(db)) for ref in ("whole", "parts"))
    assert a["cases"] == b["cases"]
