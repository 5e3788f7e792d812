"""`passhat diff` on the seed's coupon card: the demo's runs 1 and 2, across two
experiments, and the one-line refusals of bad arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import diff_json, run_cli


@pytest.fixture(scope="module")
def seed_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo twice: experiments `one` and `two` (the same cassette, 3 runs each)."""
    from cli_helpers import CLARIFY, SEED
    from passhat.cli import main

    db = str(tmp_path_factory.mktemp("diff") / "p.db")
    for name in ("one", "two"):
        with pytest.raises(SystemExit) as done:
            main(["run", str(CLARIFY), "--case", SEED, "--db", db, "--name", name, "-q"])
        assert done.value.code in (0, 1, None)
    return db


def test_demo_runs_1_and_2_differ_by_ac7_from_turn_1(
    seed_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = diff_json(capsys, seed_db, "one", "ac-conflict-001", "1", "2")
    (items,) = data["items"]
    assert items["only_a"] == ["AC7:unverifiable"] and items["only_b"] == []
    assert data["diverged_at"] == 1
    assert [t["same"] for t in data["turns"]] == [True, False, False]
    (call,) = data["tool_calls"]
    assert call["a"]["tool"] == "update_ticket" and call["a"]["turn"] == 1 and not call["same"]
    r = run_cli(capsys, "diff", "one", "ac-conflict-001", "1", "2", "--db", seed_db)
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "only in run 1 AC7:unverifiable" in flat
    assert "first diverge at turn 1: the model's tool calls differ" in flat


def test_a_run_against_itself_in_another_experiment_is_the_same(
    seed_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = diff_json(capsys, seed_db, "one:ac-conflict-001:3", "two:ac-conflict-001:3")
    assert data["diverged_at"] is None and data["state"] == []
    assert data["items"][0]["only_a"] == [] and data["items"][0]["only_b"] == []
    assert all(t["same"] for t in data["turns"]) and all(c["same"] for c in data["tool_calls"])
    assert (data["a"]["name"], data["b"]["name"]) == ("one", "two")
    r = run_cli(capsys, "diff", "one:ac-conflict-001:3", "two:ac-conflict-001:3", "--db", seed_db)
    assert "transcripts: the same, turn by turn (3 turns)" in r.out


@pytest.mark.parametrize(
    ("refs", "says"),
    [
        (("nope", "ac-conflict-001", "1", "2"), "no experiment 'nope'"),
        (("one", "ac-conflict-00", "1", "2"), "has no case 'ac-conflict-00'"),
        (("one", "ac-conflict-001", "1", "4"), "there is no run 4"),
        (("one", "ac-conflict-001", "1", "x"), "run 'x' is not a run index"),
        (("one", "ac-conflict-001", "1"), "give EXPERIMENT CASE RUN_A RUN_B"),
        (("one:ac-conflict-001", "two:ac-conflict-001:1"), "give EXPERIMENT CASE RUN_A RUN_B"),
    ],
    ids=["experiment", "case", "run", "index", "count", "ref"],
)
def test_bad_arguments_are_one_line_and_exit_2(
    refs: tuple[str, ...], says: str, seed_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "diff", *refs, "--db", seed_db)
    assert r.code == 2
    assert says in r.err and len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


def two_runs(db: Path, texts: tuple[str, ...], k: int = 2) -> None:
    """Experiment abcd0001 of case `c` asking `k` runs, one run per text (its answer)."""
    from passhat.records import RunRecord
    from passhat.store import Store
    from records_for_tests import experiment_record

    with Store(db) as store:
        store.create_experiment(experiment_record(["c"], k, id="abcd0001"))
        for index, text in enumerate(texts, 1):
            transcript = [{"role": "user", "content": "go"}, {"role": "assistant", "content": text}]
            store.record_run(
                RunRecord("abcd0001", "c", index, "h", "failed", transcript=transcript)
            )


def test_a_missing_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    two_runs(tmp_path / "p.db", ("only",))
    r = run_cli(capsys, "diff", "abcd0001", "c", "1", "2", "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and "has no run 2" in r.err and len(r.err.strip().splitlines()) == 1


def test_model_output_is_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transcript holding rich markup and an escape: printed as written."""
    two_runs(tmp_path / "p.db", ("[bold red]boom[/] \x1b[31m", "plain"))
    r = run_cli(capsys, "diff", "abcd0001", "c", "1", "2", "--db", str(tmp_path / "p.db"))
    assert r.code == 0, r.err
    assert "[bold red]boom[/]" in r.out and "\\x1b[31m" in r.out and "\x1b" not in r.out
    assert "first diverge at turn 1: the model's message differs" in " ".join(r.out.split())
