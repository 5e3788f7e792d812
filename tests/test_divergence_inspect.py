"""Why imported runs differ: an Inspect log whose samples carry messages (written by
inspect-ai itself, tests/inspect_logs.py), and a source that keeps none."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import diff_json, run_cli


@pytest.fixture(scope="module")
def logs(inspect_logs: dict[str, Path]) -> dict[str, str]:
    """The path of each task's log (`chatty-math`, `moody-math`), written by Inspect
    (tests/inspect_logs.py: `chatty-math`'s epochs think and answer differently,
    `moody-math`'s do the same and a judge marks epoch 2 wrong)."""
    return {task: str(inspect_logs[task]) for task in ("chatty-math", "moody-math")}


def imported(root: Path, log: str, name: str) -> str:
    """`log` imported as experiment `name` of a new store in `root`; the store's path."""
    from passhat.cli import main

    db = str(root / "p.db")
    with pytest.raises(SystemExit) as exit_:
        main(["import", "inspect", log, "--db", db, "--name", name, "--json"])
    assert exit_.value.code in (0, None)
    return db


@pytest.fixture(scope="module")
def imported_db(tmp_path_factory: pytest.TempPathFactory, logs: dict[str, str]) -> str:
    """One Inspect log of 1 sample × 3 epochs, imported as experiment `chatty`."""
    return imported(tmp_path_factory.mktemp("inspect-why"), logs["chatty-math"], "chatty")


def test_the_same_run_graded_two_ways_is_graded_differently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], logs: dict[str, str]
) -> None:
    """Inspect epochs with the same transcript and final state and different verdicts."""
    db = imported(tmp_path, logs["moody-math"], "moody")
    data = diff_json(capsys, db, "moody", "s1", "1", "2")
    assert (data["a"]["status"], data["b"]["status"]) == ("passed", "failed")
    assert data["diverged_at"] is None and data["state"] == [] and data["output"] == []
    assert data["graded_differently"] and data["scorers_differ"] == ["moody"]
    r = run_cli(capsys, "diff", "moody", "s1", "1", "2", "--db", db)
    assert "graded differently: the same turns, output and final state" in " ".join(r.out.split())
    r = run_cli(capsys, "report", "moody", "--db", db)
    out = " ".join(r.out.split())
    assert "graded differently: runs 1, 2 and 3 did the same" in out and "(moody differed" in out
    r = run_cli(capsys, "why", "moody", "--db", db)
    assert "too few runs for a signature" in " ".join(r.out.split())


def test_imported_runs_part_at_the_first_differing_model_message(
    imported_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = diff_json(capsys, imported_db, "chatty", "s1", "1", "2")
    assert (data["a"]["status"], data["b"]["status"]) == ("passed", "failed")
    assert data["a"]["kind"] == "imported" and data["notes"] == []
    assert data["items"] == []  # Inspect's scorer judges the whole answer: a JSON diff instead
    paths = {row["path"]: row for row in data["state"]}
    assert paths["completion"]["a"] == "4" and paths["completion"]["b"] == "5"
    assert data["diverged_at"] == 1  # turn 0 (the question) is the same
    assert data["turns"][1]["a"]["content"][0]["content"] == "Adding: 2 and 2."
    assert data["turns"][1]["b"]["content"][0]["content"] == "Guessing."

    same = diff_json(capsys, imported_db, "chatty", "s1", "1", "3")
    assert same["diverged_at"] is None and same["state"] == []


def test_the_report_of_an_imported_log_shows_its_tree(
    imported_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "report", "chatty", "--db", imported_db)
    assert r.code == 0, r.err
    out = " ".join(r.out.split())
    assert "divergence · s1" in out
    assert "runs 1, 2 and 3 agree until turn 0 (the input); run 2 branched at turn 1" in out
    assert "runs 1 and 3 agree to the end" in out


def test_a_source_without_transcripts_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from passhat.records import RunRecord
    from passhat.store import Store
    from records_for_tests import experiment_record

    db = tmp_path / "p.db"
    with Store(db) as store:
        e = experiment_record(
            ["t"], 2, id="abcd0002", kind="imported", source={"tool": "tau2", "path": "x"}
        )
        store.create_experiment(e)
        for index, reward in ((1, 1.0), (2, 0.0)):
            store.record_run(
                RunRecord("abcd0002", "t", index, "h", "passed", final_state={"reward": reward})
            )
    r = run_cli(capsys, "diff", "abcd0002", "t", "1", "2", "--db", str(db))
    assert r.code == 0, r.err
    out = " ".join(r.out.split())
    assert "run 1 and run 2 hold no transcript: nothing to align" in out
    assert "it was imported from tau2, which kept none for it" in out
    r = run_cli(capsys, "report", "abcd0002", "--db", str(db))
    assert "divergence · t: runs 1 and 2 hold no transcript" in " ".join(r.out.split())
