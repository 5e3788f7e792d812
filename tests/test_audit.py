"""`passhat audit DIR`: the seed's Trello folder and result folders like it."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from passhat.sources.audit import grade_from_data
from passhat.sources.claims import find_claims

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
    # docs/audit.md's fields of a claim, in its order (`written` is not one)
    assert ", ".join(data["claimed"]) == "k, source, quote, at_least, scope, rule, attached"
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


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "2.0", "-1"])
def test_a_reward_that_is_no_score_is_errored_never_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    """Regression (issue 34): `{"reward": NaN}` was counted as a failed run."""
    root = make_folder(tmp_path, {"a": {1: {}}}, {"k": 1})
    (root / "outputs" / "a" / "run-1" / "grade.json").write_text('{"reward": ' + text + "}")
    data = audit_json(capsys, str(root))
    (c,) = data["configurations"]
    assert c["errored"] == [1] and c["graded"] == []
    shown = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(text, text)
    assert f"grade.json: reward is {shown}, not a score in 0..1" in (c["not_graded"][0]["reason"])


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
        (["--grade", "python 'grade.py {run_dir}"], "cannot be split into words"),
        (["--grade", "no-such-grader-xyz {run_dir}"], "command 'no-such-grader-xyz' not found"),
        (["--run-pattern", "run-\\d+"], "captures no run index"),
        (["--declared-k", "0"], "--declared-k is 0"),
    ],
    ids=["no-run-dir", "unclosed-quote", "no-command", "no-group", "zero-k"],
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


# ------------------------------------------------- --json carries what the text shows


def test_json_carries_totals_figures_and_the_reason_of_each_errored_grade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(
        tmp_path,
        {
            "a": {1: {"grade": {"passed": True}}, 2: {"grade": {"note": "fine"}}, 3: {}},
            "b": {1: {"grade": {"passed": False}}},
        },
        {"k": 3},
    )
    data = audit_json(capsys, str(root))
    assert data["schema_version"] == 3
    assert data["totals"] == {
        "configurations": 2,
        "requested": 6,
        "present": 4,
        "graded": 2,
        "passed": 1,
        "failed": 1,
        "errored": 1,
        "ungraded": 1,
        "missing": 2,
    }
    assert data["figures"] == {
        "pass_rate": 0.5,
        "passes": 1,
        "graded_runs": 2,
        "j": 1,
        "pass_at_j": 0.5,
        "pass_hat_j": 0.5,
        "configurations": 2,
        "left_out": [],
    }
    (a,) = (c for c in data["configurations"] if c["configuration"] == "a")
    assert a["failed"] == [] and a["planned"] == 3
    assert [g["run"] for g in a["not_graded"]] == [2, 3]
    errored, ungraded = a["not_graded"]
    assert errored["status"] == "errored" and errored["source"] == "grade.json"
    assert "has no verdict" in errored["reason"]
    assert ungraded["status"] == "ungraded" and "no grade file" in ungraded["reason"]
    # the text shows the same figures
    r = run_cli(capsys, "audit", str(root))
    assert "pass rate   50.0%  1 passed / 2 graded runs (of 6 planned)" in r.out


def test_json_figures_are_null_when_nothing_was_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(tmp_path, {"a": {1: {}}})
    data = audit_json(capsys, str(root))
    assert data["figures"] is None and data["totals"]["ungraded"] == 1


# ------------------------------------------------ bad folders: one line, bounded


def one_line_exit_2(r: Any, *parts: str) -> None:
    assert r.code == 2, r.out + r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    for part in parts:
        assert part in r.err


@pytest.mark.parametrize("name", ["run-20241203", "run_1733299200", "trial-" + "9" * 200])
def test_a_run_folder_named_by_a_date_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Regression (issue 26): run-20241203 made a plan of 20 million runs and allocated
    its missing indices until MemoryError."""
    (tmp_path / "outputs" / "a" / name).mkdir(parents=True)
    r = run_cli(capsys, "audit", str(tmp_path))
    one_line_exit_2(r, name, "more than 100,000", "--run-pattern")


@pytest.mark.parametrize(
    ("manifest", "part"),
    [
        ('{"k": 1000000000000}', "field k is 1,000,000,000,000, more than 100,000"),
        ('{"k": 1' + "0" * 5000 + "}", "the manifest is not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
    ids=["k-10^12", "k-5000-digits", "deep"],
)
def test_a_manifest_too_large_to_plan_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: str, part: str
) -> None:
    root = make_folder(tmp_path, {"a": {1: {"grade": {"passed": True}}}}, manifest)
    one_line_exit_2(run_cli(capsys, "audit", str(root)), "benchmark.json", part)


def test_sparse_huge_grade_and_report_files_are_never_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(tmp_path, {"a": {1: {}, 2: {"grade": {"passed": True}}}}, {"k": 2})
    with (root / "outputs" / "a" / "run-1" / "grade.json").open("wb") as f:
        f.truncate(8 << 30)  # sparse: 8 GB of holes
    with (root / "README.md").open("wb") as f:
        f.write(b"Each configuration ran twice.\n")
        f.truncate(8 << 30)
    data = audit_json(capsys, str(root))
    (c,) = data["configurations"]
    assert c["errored"] == [1] and c["passed"] == [2]
    assert "more than the 1.0 MB passhat reads" in c["not_graded"][0]["reason"]
    assert data["claimed"]["k"] == 2
    assert "README.md: only its first 1 MB was read for claims" in data["notes"]


def test_a_fifo_or_a_folder_as_grade_file_is_errored_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_folder(tmp_path, {"a": {1: {}, 2: {}}}, {"k": 2})
    os.mkfifo(root / "outputs" / "a" / "run-1" / "grade.json")
    (root / "outputs" / "a" / "run-2" / "verdict.json").mkdir()
    data = audit_json(capsys, str(root))
    reasons = [g["reason"] for g in data["configurations"][0]["not_graded"]]
    assert "is a FIFO, not a file" in reasons[0] and "is a folder" in reasons[1]


def test_1500_nested_folders_are_walked_without_recursion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): os.walk recursed once per level: RecursionError."""
    deep = tmp_path / "outputs"
    deep.mkdir()
    levels = [deep]
    for _ in range(1500):  # one level at a time: Path.mkdir(parents=True) recurses too
        deep = deep / "d"
        deep.mkdir()
        levels.append(deep)
    try:
        (deep / "run-1").mkdir()
        (deep / "run-1" / "grade.json").write_text('{"passed": true}')
        (tmp_path / "outputs" / "top" / "run-1").mkdir(parents=True)
        data = audit_json(capsys, str(tmp_path))
        assert data["totals"]["present"] == 2 and data["totals"]["passed"] == 1
    finally:
        # removed here, deepest first: shutil.rmtree recurses once per level, and
        # pytest's removal of old temporary folders at session end died of it
        (deep / "run-1" / "grade.json").unlink(missing_ok=True)
        for level in [deep / "run-1", *reversed(levels[1:])]:
            level.rmdir()


def test_a_grader_printing_0xff_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (issue 26): a grader writing byte 0xff raised UnicodeDecodeError."""
    root = make_folder(tmp_path, {"a": {1: {}}})
    grader = tmp_path / "g.py"
    grader.write_text("import sys\nsys.stdout.buffer.write(b'\\xff\\xfe ok')\nsys.exit(1)\n")
    data = audit_json(capsys, str(root), "--grade", f"{sys.executable} {grader} {{run_dir}}")
    assert data["configurations"][0]["graded"] == [1]


def test_a_grader_that_times_out_leaves_no_child_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): the grader's children outlived its timeout."""
    root = make_folder(tmp_path, {"a": {1: {}}})
    pid_file = tmp_path / "child.pid"
    grader = tmp_path / "g.py"
    grader.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    command = f"{sys.executable} {grader} {{run_dir}}"
    data = audit_json(capsys, str(root), "--grade", command, "--grade-timeout", "2")
    (reason,) = [g["reason"] for g in data["configurations"][0]["not_graded"]]
    assert "ran past 2 s" in reason
    child = int(pid_file.read_text())
    for _ in range(100):
        if not _alive(child):
            break
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_unreadable_folders_are_findings_not_silence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 26): an unreadable run folder raised PermissionError and an
    unreadable configuration was left out silently. (Permission bits do not stop root,
    so listing is refused here the way the kernel would refuse it.)"""
    root = make_folder(
        tmp_path,
        {"a": {1: {"grade": {"passed": True}}, 2: {"grade": {"passed": True}}}},
        {"k": 2},
    )
    (root / "outputs" / "b" / "run-1").mkdir(parents=True)
    (root / "outputs" / "c").mkdir(parents=True)
    real = os.scandir
    blocked = {root / "outputs" / "a" / "run-2", root / "outputs" / "c"}

    def scandir(path: Any) -> Any:
        if Path(path) in blocked:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    r = run_cli(capsys, "audit", str(root), "--json", "--strict")
    assert r.code == 1
    data = json.loads(r.out)
    (a,) = (c for c in data["configurations"] if c["configuration"] == "a")
    assert a["errored"] == [2]
    assert "the run folder cannot be read (Permission denied)" in a["not_graded"][0]["reason"]
    assert any(
        f.endswith("c (Permission denied): cannot be read; the runs it holds cannot be counted")
        for f in data["findings"]
    )


# ------------------------------------------------------------------- layouts


def test_terminal_bench_layout_one_folder_per_whole_suite_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """terminal-bench keeps `runN/<task>/`: the run folder holds every task. Without a
    layout the tasks are no run folders at all; with one, each task is a configuration."""
    for run, tasks in ((1, ("hello", "build")), (2, ("hello", "build")), (3, ("hello",))):
        for task in tasks:
            d = tmp_path / f"run{run}" / task
            d.mkdir(parents=True)
            (d / "result.json").write_text(json.dumps({"passed": task == "hello"}))
    (tmp_path / "README.md").write_text("Each task was attempted 3 times.\n")
    data = audit_json(capsys, str(tmp_path), "--layout", "run{run}/{task}")
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert by_name["hello"]["passed"] == [1, 2, 3]
    assert by_name["build"]["graded"] == [1, 2] and by_name["build"]["missing"] == [3]
    assert data["k_plan"] == 3
    r = run_cli(capsys, "audit", str(tmp_path), "--layout", "run{run}/{task}", "--strict")
    assert r.code == 1 and "build: 2 of 3 planned runs graded (missing run 3)" in r.out


def test_the_seeds_layout_reads_as_the_default_does(capsys: pytest.CaptureFixture[str]) -> None:
    default = audit_json(capsys, str(EXAMPLE))
    laid_out = audit_json(capsys, str(EXAMPLE), "--layout", "outputs/{config}/run-{run}")
    assert laid_out["configurations"] == default["configurations"]


def test_a_layout_of_configurations_tasks_and_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for config in ("base", "guide"):
        for task in ("t1", "t2"):
            for trial in (0, 1):
                d = tmp_path / config / task / f"trial_{trial}"
                d.mkdir(parents=True)
                (d / "grade.json").write_text('{"reward": 1}')
    (tmp_path / "base" / "notes").mkdir()  # not a task folder of the layout: never a run
    data = audit_json(capsys, str(tmp_path), "--layout", "{config}/{task}/trial_{run}")
    names = [c["configuration"] for c in data["configurations"]]
    assert names == ["base/t1", "base/t2", "guide/t1", "guide/t2"]
    assert all(c["passed"] == [1, 2] for c in data["configurations"])
    assert data["notes"] == ["run directories count from 0: run-0 is reported as run 1"]


@pytest.mark.parametrize(
    ("layout", "part"),
    [
        ("outputs/{config}", "name the run number exactly once with {run}"),
        ("run{run}/{run}", "exactly once"),
        ("../run{run}", "folders below DIR only"),
        ("nothing-{run}", "no folder matches --layout 'nothing-{run}'"),
    ],
    ids=["no-run", "two-runs", "parent", "no-match"],
)
def test_a_bad_layout_is_one_line(
    capsys: pytest.CaptureFixture[str], layout: str, part: str
) -> None:
    one_line_exit_2(run_cli(capsys, "audit", str(EXAMPLE), "--layout", layout), part)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_manifest_that_is_no_regular_file_is_named_not_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """Regression (issue 34): benchmark.json as a FIFO or /dev/zero was reported as "no
    manifest declares a run count", as if it were not there."""
    import os

    root = make_folder(tmp_path, {"a": {1: {"grade": {"passed": True}}}})
    manifest = root / "benchmark.json"
    if kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "dev-zero":
        manifest.symlink_to("/dev/zero")
    else:
        manifest.mkdir()
    r = run_cli(capsys, "audit", str(root))
    assert r.code == 2
    wanted = {"fifo": "a FIFO", "dev-zero": "a device", "folder": "a folder"}[kind]
    assert r.err.strip() == (
        f"error: {manifest}: the manifest is {wanted}, not a file; give the file itself"
    )


def test_a_grader_printing_megabytes_is_kept_as_a_bounded_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 34): a grader printing 300 MB made audit hold 900 MB to keep 500
    characters; the tail is read in chunks, the traceback looked for in every one."""
    import sys

    from passhat.sources.audit import MAX_GRADER_TAIL, OutputTail

    tail = OutputTail()
    for _ in range(200):
        tail.feed(b"x" * 50_000)
    tail.feed(b"Traceback (most")
    tail.feed(b" recent call last)\nthe end")
    assert len(tail.data) <= 2 * MAX_GRADER_TAIL and tail.traceback
    assert tail.text().endswith("recent call last)\nthe end")
    root = make_folder(tmp_path, {"a": {1: {}}})
    grader = tmp_path / "grade.py"
    grader.write_text(
        "import sys\nsys.stdout.write('y' * 20_000_000 + 'LAST')\n"
        "sys.stderr.write('Traceback (most recent call last)\\n' + 'z' * 5_000_000)\nsys.exit(1)\n"
    )
    data = audit_json(capsys, str(root), "--grade", f"{sys.executable} {grader} {{run_dir}}")
    (c,) = data["configurations"]
    assert c["errored"] == [1]  # exit 1 after a traceback early in a long stderr: a crash


def test_a_run_pattern_that_backtracks_without_end_is_stopped_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 34): a user --run-pattern with a nested repeat hung audit."""
    root = make_folder(tmp_path, {"a": {1: {"grade": {"passed": True}}}})
    (root / "outputs" / ("a" * 60)).mkdir()
    r = run_cli(capsys, "audit", str(root), "--run-pattern", r"(a|aa)+b(\d+)")
    assert r.code == 2
    assert r.err.startswith(r"error: --run-pattern '(a|aa)+b(\\d+)' ran past 0.5 s on the folder")
    assert len(r.err.strip().splitlines()) == 1


@pytest.mark.parametrize("timeout", ["0", "-1", "nan"])
def test_a_grade_timeout_that_leaves_no_time_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], timeout: str
) -> None:
    """Was: `--grade-timeout -1` graded anyway, each run errored or not as the race went."""
    root = make_folder(tmp_path, {"a": {1: {"card": GOOD_CARD}}})
    grader = f"{sys.executable} {FIXED} {{run_dir}}"
    r = run_cli(capsys, "audit", str(root), "--grade", grader, "--grade-timeout", timeout)
    assert r.code == 2, r.out
    assert f"--grade-timeout is {timeout}; give a grading more than 0 seconds" in r.err
