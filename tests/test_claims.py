"""The claim reader against the wording corpus (tests/claim_wordings.yaml): every way
people write "we ran it k times" is read, with its file and line, and `audit --strict`
fails a folder holding fewer runs than any of them claims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import run_cli
from passhat.sources.claims import MAX_CLAIM, find_claims, find_json_claims, governing, number

CORPUS = yaml.safe_load((Path(__file__).parent / "claim_wordings.yaml").read_text("utf-8"))
POSITIVE: list[dict[str, Any]] = CORPUS["positive"]
NEGATIVE: list[str] = CORPUS["negative"]


def _id(text: str) -> str:
    return text.splitlines()[0][:40]


@pytest.mark.parametrize("entry", POSITIVE, ids=[_id(e["text"]) for e in POSITIVE])
def test_every_positive_wording_is_read_with_its_count(entry: dict[str, Any]) -> None:
    claims = find_claims(entry["text"], "README.md")
    claim = governing(claims)
    assert claim is not None, entry["text"]
    assert claim.k == entry["k"]
    assert claim.at_least == entry.get("at_least", False)
    assert claim.scope == entry.get("scope")
    assert claim.source.startswith("README.md:") and claim.quote


@pytest.mark.parametrize("text", NEGATIVE, ids=[_id(t) for t in NEGATIVE])
def test_no_negative_wording_is_read_as_a_claim(text: str) -> None:
    assert find_claims(text, "README.md") == []


def _folder(root: Path, text: str, configuration: str = "a") -> Path:
    run = root / "outputs" / configuration / "run-1"
    run.mkdir(parents=True)
    (run / "grade.json").write_text('{"passed": true}')
    (root / "README.md").write_text("# Results\n\n" + text + "\n", encoding="utf-8")
    return root


STRICT = [e for e in POSITIVE if e["k"] >= 2]


@pytest.mark.parametrize("entry", STRICT, ids=[_id(e["text"]) for e in STRICT])
def test_strict_fails_a_folder_with_fewer_runs_than_any_wording_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: dict[str, Any]
) -> None:
    """One run per configuration on disk, a README claiming k >= 2: exit 1, the claim
    quoted with its file and line (the line after the heading and the blank line)."""
    root = _folder(tmp_path, entry["text"], entry.get("scope") or "a")
    r = run_cli(capsys, "audit", str(root), "--strict", "--json")
    assert r.code == 1, r.out + r.err
    data = json.loads(r.out)
    assert data["claimed"]["k"] == entry["k"]
    assert data["claimed"]["source"].startswith("README.md:")
    assert int(data["claimed"]["source"].split(":")[1]) >= 3
    assert any(f.startswith("claimed ") for f in data["findings"])


@pytest.mark.parametrize("text", NEGATIVE, ids=[_id(t) for t in NEGATIVE])
def test_strict_passes_a_whole_folder_whose_readme_claims_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    root = _folder(tmp_path, text)
    (root / "benchmark.json").write_text('{"k": 1}')
    r = run_cli(capsys, "audit", str(root), "--strict", "--json")
    assert r.code == 0, r.out
    assert json.loads(r.out)["claims"] == []


def test_the_seeds_failure_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (issue 26): "We ran every configuration 5 times and report pass^5." beside
    3 runs per configuration printed `claimed –` and exited 0 under --strict."""
    for config in ("baseline", "guide"):
        for i in (1, 2, 3):
            run = tmp_path / "outputs" / config / f"run-{i}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text('{"passed": true}')
    (tmp_path / "README.md").write_text(
        "We ran every configuration 5 times and report pass^5.\n", encoding="utf-8"
    )
    r = run_cli(capsys, "audit", str(tmp_path), "--strict")
    assert r.code == 1
    assert 'claimed   5  (README.md:1: "We ran every configuration 5 times' in r.out
    assert "baseline: 3 of 5 planned runs graded (missing run 4, 5)" in r.out


def test_a_table_row_claims_runs_of_its_own_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for config, runs in (("baseline", 3), ("guide", 1)):
        for i in range(1, runs + 1):
            run = tmp_path / "outputs" / config / f"run-{i}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text('{"passed": false}')
    (tmp_path / "REPORT.md").write_text(
        "| configuration | runs | pass rate |\n|---|---|---|\n"
        "| baseline | 3 | 0.0 |\n| guide | 3 | 0.0 |\n",
        encoding="utf-8",
    )
    (tmp_path / "benchmark.json").write_text('{"k": 1}')
    r = run_cli(capsys, "audit", str(tmp_path), "--json")
    data = json.loads(r.out)
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert by_name["baseline"]["planned"] == 3 and by_name["baseline"]["missing"] == []
    assert by_name["guide"]["planned"] == 3 and by_name["guide"]["missing"] == [2, 3]
    assert "claimed 3 runs of guide (REPORT.md:4) but it has 1 run directory" in data["findings"]
    assert not any("of baseline (REPORT.md:3)" in f for f in data["findings"])


def test_a_json_summary_claims_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path, "Results below.")
    (root / "summary.json").write_text(
        '{\n  "model": "m",\n  "num_trials": 4,\n  "pass^4": 0.25,\n  "ratio": 0.5\n}\n'
    )
    r = run_cli(capsys, "audit", str(root), "--json", "--strict")
    assert r.code == 1
    data = json.loads(r.out)
    assert data["claimed"]["source"] == "summary.json:3" and data["claimed"]["k"] == 4
    assert {(c["source"], c["at_least"]) for c in data["claims"]} == {
        ("summary.json:3", False),
        ("summary.json:4", True),
    }


def test_json_summary_values_that_are_no_count() -> None:
    assert find_json_claims('{"k": 0.5, "epochs": -1, "trials": 3}', "s.json") == []


# ------------------------------------------------------------------- bounded


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("We ran it 100000000 times.", "100000000"),
        ("We ran it " + "9" * 5000 + " times.", "a 5,000-digit number"),
        ("k = " + "7" * 5000, "a 5,000-digit number"),
    ],
    ids=["hundred-million", "5000-digits", "k-5000-digits"],
)
def test_a_claim_too_large_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, shown: str
) -> None:
    """Regression (issue 26): "ran 100000000 times" allocated until MemoryError and a
    5,000-digit claim raised ValueError."""
    root = _folder(tmp_path, text)
    r = run_cli(capsys, "audit", str(root))
    assert r.code == 2
    assert r.err.startswith("error: README.md:3: claims " + shown + " runs")
    assert f"more than {MAX_CLAIM:,} per configuration" in r.err
    assert "--claimed K" in r.err and len(r.err.strip().splitlines()) == 1
    # --claimed is the fix: the report is not read at all then
    assert run_cli(capsys, "audit", str(root), "--claimed", "1").code == 0


def test_numbers_in_words_and_digits() -> None:
    assert [number(w) for w in ("five", "Twenty-five", "a dozen", "thrice", "1,000", "0")] == [
        5,
        25,
        12,
        3,
        1000,
        None,
    ]
    assert number("9" * 5000) == MAX_CLAIM + 1


def test_the_text_lists_the_other_claims_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path, "We ran it 3 times.\n\nWe report pass^2 and k=2.")
    r = run_cli(capsys, "audit", str(root))
    assert 'claimed   3  (README.md:3: "We ran it 3 times.")' in r.out
    assert "also claimed: 2+ (README.md:5), 2 (README.md:5)" in r.out  # in reading order


def test_a_row_planning_more_runs_of_one_configuration_is_stored_as_its_own_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for config in ("baseline", "guide"):
        for i in (1, 2, 3):
            run = tmp_path / "outputs" / config / f"run-{i}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text('{"passed": true}')
    (tmp_path / "README.md").write_text("| configuration | runs |\n|---|---|\n| baseline | 5 |\n")
    db = tmp_path / "p.db"
    data = json.loads(run_cli(capsys, "audit", str(tmp_path), "--json").out)
    assert data["totals"]["requested"] == 8 and data["totals"]["missing"] == 2
    r = run_cli(capsys, "audit", str(tmp_path), "--into-store", "--db", str(db), "--name", "a")
    assert r.code == 0, r.err
    report = json.loads(run_cli(capsys, "report", "a", "--db", str(db), "--json").out)
    assert report["accounting"]["runs_requested"] == 8
    assert report["accounting"]["runs_missing"] == 2
