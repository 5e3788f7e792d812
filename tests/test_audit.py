"""`passhat audit DIR`: the seed's Trello folder and result folders like it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from passhat.sources.audit import find_claims, grade_from_data

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "audit" / "trello"
FIXED = EXAMPLE / "grader" / "grade_fixed.py"


def audit_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    r = run_cli(capsys, "audit", *args, "--json")
    assert r.code == 0, r.err
    data: dict[str, Any] = json.loads(r.out)
    return data


def make_folder(root: Path, runs: dict[str, dict[int, Any]], manifest: Any = None) -> Path:
    """Run dirs `outputs/CONFIG/run-N` with a card and, when given, a grade.json."""
    for config, by_index in runs.items():
        for index, grade in by_index.items():
            run_dir = root / "outputs" / config / f"run-{index}"
            run_dir.mkdir(parents=True)
            (run_dir / "card.json").write_text(json.dumps(grade.get("card", {})))
            if "grade" in grade:
                (run_dir / "grade.json").write_text(json.dumps(grade["grade"]))
    if manifest is not None:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        (root / "benchmark.json").write_text(text)
    return root


GOOD_CARD = {
    "title": "Checkout times out on slow networks",
    "labels": ["bug"],
    "acceptance_criteria": ["pays within 30 s"],
}
BAD_CARD = {"title": "broken", "labels": [], "acceptance_criteria": []}


# ------------------------------------------------------------ the seed's folder


def test_the_seed_folder_names_declared_claimed_present_graded_and_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = audit_json(capsys, str(EXAMPLE))
    assert data["declared"]["k"] == 1
    assert data["declared"]["source"] == "benchmark.json: runs_per_configuration"
    assert data["claimed"]["k"] == 3
    assert data["claimed"]["quote"] == "Each group ran three times."
    assert data["k_plan"] == 3
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert set(by_name) == {"baseline", "writing-guide"}
    for c in by_name.values():
        assert c["present"] == [1] and c["graded"] == [1] and c["missing"] == [2, 3]
    assert by_name["writing-guide"]["passed"] == [1] and by_name["baseline"]["passed"] == []


def test_the_seed_folder_in_one_screen(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "audit", str(EXAMPLE))
    assert r.code == 0
    lines = r.out.splitlines()
    assert len(lines) <= 24, "the audit fits one screen"
    assert "declared  1  (benchmark.json: runs_per_configuration)" in r.out
    assert 'claimed   3  (REPORT.md:6: "Each group ran three times.")' in r.out
    assert "claimed 3 runs per configuration (REPORT.md:6) but the manifest declares 1" in r.out
    assert "baseline: 1 of 3 planned runs graded (missing run 2, 3)" in r.out
    # the three numbers are labelled by what was counted, at the j the graded runs reach
    assert "pass rate   50.0%  1 passed / 2 graded runs (of 6 planned)" in r.out
    assert "pass@1 " in r.out and "pass^1 " in r.out
    assert "pass@3" not in r.out and "pass^3" not in r.out
    row = next(line for line in lines if line.strip().startswith("baseline "))
    assert row.split() == ["baseline", "1", "3", "1", "1", "0", "2,", "3"]


def test_strict_exits_1_on_the_seed_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "audit", str(EXAMPLE), "--strict").code == 1


def test_the_fixed_grader_grades_every_run_dir_of_the_seed_folder(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = audit_json(capsys, str(EXAMPLE), "--grade", f"{sys.executable} {FIXED} {{run_dir}}")
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert by_name["writing-guide"]["passed"] == [1]
    assert by_name["baseline"]["graded"] == [1] and by_name["baseline"]["passed"] == []


# ------------------------------------------------------------- folders like it


def test_a_grader_that_read_run_dirs_0_leaves_the_other_runs_ungraded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three runs present, but the buggy grader wrote a grade into run-1 only."""
    root = make_folder(
        tmp_path,
        {
            "guide": {
                1: {"card": GOOD_CARD, "grade": {"status": "accepted"}},
                2: {"card": BAD_CARD},
                3: {"card": GOOD_CARD},
            }
        },
        {"runs_per_configuration": 3},
    )
    data = audit_json(capsys, str(root))
    (c,) = data["configurations"]
    assert c["present"] == [1, 2, 3] and c["graded"] == [1] and c["ungraded"] == [2, 3]
    assert any("ungraded run 2, 3" in f for f in data["findings"])
    # grading every run dir with the fixed grader: run 2's bad card fails, run 3 passes
    data = audit_json(capsys, str(root), "--grade", f"{sys.executable} {FIXED} {{run_dir}}")
    (c,) = data["configurations"]
    assert c["graded"] == [1, 2, 3] and c["passed"] == [1, 3] and c["ungraded"] == []
    assert data["findings"] == []
    assert (
        run_cli(
            capsys,
            "audit",
            str(root),
            "--grade",
            f"{sys.executable} {FIXED} {{run_dir}}",
            "--strict",
        ).code
        == 0
    )


def test_a_grader_that_crashes_makes_the_run_errored_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(tmp_path, {"a": {1: {"card": GOOD_CARD}, 2: {"card": GOOD_CARD}}})
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.exit(3 if sys.argv[1].endswith('run-2') else 0)\n")
    data = audit_json(capsys, str(root), "--grade", f"{sys.executable} {crash} {{run_dir}}")
    (c,) = data["configurations"]
    assert c["passed"] == [1] and c["errored"] == [2] and c["graded"] == [1]


def test_a_python_grader_that_raises_is_errored_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an uncaught exception exits 1 like a "failed" verdict would; its traceback says
    # the grader crashed (the seed's run_dirs[0] grader does), so the run is errored
    root = make_folder(tmp_path, {"a": {1: {"card": GOOD_CARD}, 2: {"card": GOOD_CARD}}})
    grader = tmp_path / "grade.py"
    grader.write_text(
        "import sys\n"
        "if sys.argv[1].endswith('run-2'):\n"
        "    raise IndexError('list index out of range')\n"
        "sys.exit(1)\n"
    )
    data = audit_json(capsys, str(root), "--grade", f"{sys.executable} {grader} {{run_dir}}")
    (c,) = data["configurations"]
    assert c["graded"] == [1] and c["passed"] == [] and c["errored"] == [2]


def test_declared_and_claimed_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(tmp_path, {"a": {1: {"grade": {"passed": True}}}})
    data = audit_json(capsys, str(root))
    assert data["declared"] is None and data["claimed"] is None and data["k_plan"] == 1
    assert any("no manifest declares a run count" in f for f in data["findings"])
    data = audit_json(capsys, str(root), "--declared-k", "2", "--claimed", "4")
    assert data["declared"] == {"k": 2, "source": "--declared-k"}
    assert data["claimed"]["k"] == 4 and data["k_plan"] == 4
    assert data["configurations"][0]["missing"] == [2, 3, 4]


def test_a_configuration_the_manifest_plans_but_no_folder_holds_is_all_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(
        tmp_path,
        {"a": {1: {"grade": {"passed": True}}, 2: {"grade": {"passed": False}}}},
        {"k": 2, "configurations": ["a", "b"]},
    )
    data = audit_json(capsys, str(root))
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert by_name["b"]["present"] == [] and by_name["b"]["missing"] == [1, 2]
    r = run_cli(capsys, "audit", str(root))
    assert "left out, no graded run: b" in r.out


def test_an_audit_of_many_configurations_lists_a_screen_unless_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 15): the terminal audit listed every configuration and every
    finding: 12,587 lines for 10,000 configurations. Short ones are listed first."""
    from passhat.cli.audit import ROWS_SHOWN

    whole = {
        f"full-{i:02d}": {1: {"grade": {"passed": True}}, 2: {"grade": {"passed": True}}}
        for i in range(10)
    }
    short = {f"short-{i:02d}": {1: {"grade": {"passed": True}}} for i in range(40)}
    root = make_folder(tmp_path, {**whole, **short}, {"k": 2})
    r = run_cli(capsys, "audit", str(root))
    assert r.code == 0, r.err
    rows = [line for line in r.out.splitlines() if line.startswith((" full-", " short-"))]
    assert len(rows) == ROWS_SHOWN and all("short-" in row for row in rows)
    assert "20 more configurations not listed (--all lists every one" in r.out
    findings = [line for line in r.out.splitlines() if line.startswith("  ✗ short-")]
    assert len(findings) == ROWS_SHOWN
    assert "✗ ... and 10 more findings (--all lists them" in r.out
    assert "pass rate" in r.out  # the figures still close the screen

    everything = run_cli(capsys, "audit", str(root), "--all")
    lines = everything.out.splitlines()
    assert len([x for x in lines if x.startswith((" full-", " short-"))]) == 50
    assert len([x for x in lines if x.startswith("  ✗ short-")]) == 40
    assert "not listed" not in everything.out and "more findings" not in everything.out


def test_run_dir_patterns_are_configurable_and_zero_based_indices_shift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in (0, 1):
        d = tmp_path / "task-x" / f"sample_{i}"
        d.mkdir(parents=True)
        (d / "result.json").write_text(json.dumps({"reward": 1.0 if i == 0 else 0.0}))
    r = run_cli(capsys, "audit", str(tmp_path), "--json")
    assert r.code == 2 and "no run directories found" in r.err
    data = audit_json(capsys, str(tmp_path), "--run-pattern", r"sample_(\d+)")
    (c,) = data["configurations"]
    assert c["configuration"] == "task-x" and c["present"] == [1, 2] and c["passed"] == [1]
    assert data["notes"] == ["run directories count from 0: run-0 is reported as run 1"]


def test_into_store_keeps_the_audit_as_an_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_cli(
        capsys, "audit", str(EXAMPLE), "--into-store", "--db", str(db), "--name", "trello-audit"
    )
    assert r.code == 0 and "kind audited" in r.err
    r = run_cli(capsys, "report", "trello-audit", "--db", str(db), "--json")
    data = json.loads(r.out)
    assert data["accounting"]["k_requested"] == 3
    assert data["accounting"]["runs_counted"] == 2
    assert data["accounting"]["runs_missing"] == 4
    assert data["dataset"]["pass_at_1"] == 0.5


# ------------------------------------------------------------------ pure parts


@pytest.mark.parametrize(
    ("text", "k"),
    [
        ("Each group ran three times.", 3),
        ("We ran it 5 times per task", 5),
        ("3 runs per configuration were made", 3),
        ("settings: k = 4", 4),
        ("the agent was evaluated twice", 2),
    ],
    ids=["words", "digits", "runs-per", "k-equals", "twice"],
)
def test_claims_in_report_text(text: str, k: int) -> None:
    (claim,) = find_claims(text, "R.md")
    assert claim.k == k and claim.source == "R.md:1"


def test_no_claim_in_unrelated_text() -> None:
    assert find_claims("The card has three acceptance criteria.", "R.md") == []


@pytest.mark.parametrize(
    ("data", "status"),
    [
        ({"passed": True}, "passed"),
        ({"status": "rejected"}, "failed"),
        ({"reward": 1}, "passed"),
        ({"score": 0.5}, "failed"),
        ({"note": "looks fine"}, "errored"),
    ],
    ids=["bool", "word", "reward-1", "partial-score", "no-verdict"],
)
def test_grade_files(data: Any, status: str) -> None:
    assert grade_from_data(data, "grade.json").status == status


# ------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ('{"runs_per_configuration": 1,', "benchmark.json: the manifest is not valid JSON"),
        ('{"runs_per_configuration": "three"}', 'field runs_per_configuration is "three"'),
        ("[1, 2]", "the manifest is not a JSON object"),
    ],
    ids=["truncated", "bad-field", "not-object"],
)
def test_an_unreadable_manifest_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: str, message: str
) -> None:
    root = make_folder(tmp_path, {"a": {1: {}}}, manifest)
    r = run_cli(capsys, "audit", str(root))
    assert r.code == 2 and message in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grade", "python grade.py"], "does not name {run_dir}"),
        (["--grade", "no-such-grader-xyz {run_dir}"], "command 'no-such-grader-xyz' not found"),
        (["--run-pattern", "run-\\d+"], "captures no run index"),
        (["--declared-k", "0"], "--declared-k is 0"),
    ],
    ids=["no-run-dir", "no-command", "no-group", "zero-k"],
)
def test_bad_options_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    root = make_folder(tmp_path, {"a": {1: {}}})
    r = run_cli(capsys, "audit", str(root), *args)
    assert r.code == 2 and message in r.err and len(r.err.strip().splitlines()) == 1


def test_a_folder_with_no_runs_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "benchmark.json").write_text('{"k": 3}')
    r = run_cli(capsys, "audit", str(tmp_path))
    assert r.code == 2 and "no run directories found" in r.err
    r = run_cli(capsys, "audit", str(tmp_path / "nope"))
    assert r.code == 2 and "not a folder" in r.err


def test_two_folders_for_one_run_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(tmp_path, {"a": {1: {"grade": {"passed": True}}}})
    (root / "outputs" / "a" / "trial-1").mkdir()
    r = run_cli(capsys, "audit", str(root))
    assert r.code == 2 and "are both run 1 of 'a'" in r.err


def test_grading_runs_several_at_once_and_keeps_each_grade_with_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = {i: {"card": GOOD_CARD if i % 2 else BAD_CARD} for i in range(1, 9)}
    root = make_folder(tmp_path, {"a": runs})
    grader = f"{sys.executable} {FIXED} {{run_dir}}"
    data = audit_json(capsys, str(root), "--grade", grader, "--grade-jobs", "4")
    (c,) = data["configurations"]
    assert c["passed"] == [1, 3, 5, 7] and c["graded"] == list(range(1, 9))
    r = run_cli(capsys, "audit", str(root), "--grade", grader, "--grade-jobs", "0")
    assert r.code == 2 and "--grade-jobs is 0" in r.err


def test_the_walk_through_shows_what_the_command_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/audit/README.md quotes the audit of the seed's folder; it must stay true."""
    monkeypatch.chdir(EXAMPLE.parents[2])
    text = (EXAMPLE.parent / "README.md").read_text(encoding="utf-8")
    quoted = text.split("$ passhat audit examples/audit/trello\n")[1].split("```")[0]
    r = run_cli(capsys, "audit", "examples/audit/trello")

    def lines(s: str) -> list[str]:
        return [line.rstrip() for line in s.strip().splitlines()]

    assert lines(quoted) == lines(r.out)
