"""The report's case section says why runs differ: the divergence tree of the runs'
turns and the evidence behind each item, on the seed's card and where a part is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli
from passhat.records import RunRecord
from passhat.report.why import Explainer
from records_for_tests import experiment_record


def flat(text: str) -> str:
    return " ".join(text.split())


def test_seed_report_shows_the_tree_and_who_wrote_each_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "--db", db, "-q")
    r = run_cli(capsys, "report", "latest", "--db", db)
    assert r.code == 0, r.err
    out = flat(r.out)
    assert "divergence · ac-conflict-001" in out
    assert (
        "runs 1, 2 and 3 agree until turn 0 (the input); runs 1, 2 and 3 each branched at turn 1"
        in out
    )
    # the tree and evidence sit in the case's section: after its items, before tool use
    assert out.index("item stability") < out.index("divergence ·") < out.index("tool use")
    evidence = out[out.index("item evidence · ac-conflict-001") : out.index("tool use")]
    assert "AC3:inconsistent_with_description 0/3 written by no run" in evidence
    assert "sent to runs 1, 2 and 3 (message 1)" in evidence
    assert "AC7:unverifiable 2/3 runs 1 and 3: turn 1, update_ticket call 1" in evidence
    assert "AC5:conflict (extra) 1/3 run 3: turn 1, update_ticket call 1" in evidence


def test_a_suite_that_cannot_be_read_leaves_the_tree_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "clarify"
    shutil.copytree(CLARIFY, suite)
    db = str(tmp_path / "p.db")
    run_cli(capsys, "run", str(suite), "--case", SEED, "--db", db, "-q")
    shutil.rmtree(suite)
    r = run_cli(capsys, "report", "latest", "--db", db)
    assert r.code == 0, r.err
    out = flat(r.out)
    assert "divergence · ac-conflict-001" in out and "item evidence ·" not in out
    # the terminal wraps a long path where it must, inside the path too: read without spaces
    said = f"item evidence needs the suite's scorers, and the suite at {suite}"
    assert "".join(said.split()) in "".join(out.split())


def test_runs_without_transcripts_are_said_plainly() -> None:
    runs = [RunRecord("e1", "c", i, "h", "failed") for i in (1, 2)]
    why = Explainer(experiment_record(["c"], 2), lambda case: runs)("c")
    assert why.tree is None and why.no_transcript == (1, 2)
    from passhat.report.diff import why_renderables

    (line,) = why_renderables(why)
    assert "runs 1 and 2 hold no transcript, so there are no turns to compare" in str(line)


def test_case_reader_reads_one_case_file_and_its_scorers() -> None:
    from passhat.suite import CaseReader, ExactSetSpec, load_suite

    reader = CaseReader(CLARIFY)
    assert any(isinstance(s, ExactSetSpec) and s.item == "AC{ac}:{label}" for s in reader.scorers)
    case = reader.case(SEED)
    whole = load_suite(CLARIFY).case(SEED)
    assert case is not None and (case.hash, case.input, case.goal) == (
        whole.hash,
        whole.input,
        whole.goal,
    )
    assert reader.case("no-such-case") is None


def test_evidence_finds_a_case_filed_under_another_name_and_says_it_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "clarify"
    shutil.copytree(CLARIFY, suite)
    db = str(tmp_path / "p.db")
    run_cli(capsys, "run", str(suite), "--case", SEED, "--db", db, "-q")
    # filed under another name (found by a whole load), and its AC 7 reworded since
    moved = suite / "cases" / "coupon.yaml"
    (suite / "cases" / f"{SEED}.yaml").rename(moved)
    moved.write_text(moved.read_text(encoding="utf-8").replace("夠快", "夠快速"), encoding="utf-8")
    r = run_cli(capsys, "report", "latest", "--db", db)
    out = flat(r.out)
    assert "AC3:inconsistent_with_description 0/3 written by no run" in out
    assert f"the case file of {SEED} changed since these runs" in out


def test_the_why_section_is_asked_for_or_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past EXPLAINED_RUNS runs the section is left out unless --why asks: it reads
    every listed case's whole runs again (1.3-1.5x the terminal report at 100,000)."""
    import passhat.report.why as why

    db = str(tmp_path / "p.db")
    assert run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "--db", db, "-q").code == 0
    assert "divergence ·" not in run_cli(capsys, "report", "latest", "--db", db, "--no-why").out
    monkeypatch.setattr(why, "EXPLAINED_RUNS", 2)  # the seed's 3 runs are "many"
    assert "divergence ·" not in run_cli(capsys, "report", "latest", "--db", db).out
    assert "divergence ·" in run_cli(capsys, "report", "latest", "--db", db, "--why").out
