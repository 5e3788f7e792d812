"""`passhat metrics`: bring your own verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def write(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def v(case: str, run: int, status: str) -> str:
    return json.dumps({"case": case, "run": run, "status": status})


def test_bundled_example_json(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", str(EXAMPLES / "verdicts" / "coupon.jsonl"), "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    coupon = next(c for c in data["cases"] if c["case"] == "ac-conflict-001")
    assert coupon["passes"] == 0 and coupon["pass_rate"] == 0.0
    assert coupon["pass_at_k"] is False and coupon["pass_hat_k"] is False
    row = next(c for c in data["cases"] if c["case"] == "illustrative-row")
    assert row["passes"] == 2 and row["pass_at_k"] is True and row["pass_hat_k"] is False
    assert row["pass_rate"] == pytest.approx(2 / 3)
    d = data["dataset"]
    assert (d["k"], d["complete"], d["cases"], d["runs_counted"]) == (3, True, 2, 6)
    assert d["pass_at_1"] == pytest.approx(2 / 6)
    assert d["pass_at_k"] == pytest.approx(0.5) and d["pass_hat_k"] == 0.0
    assert d["k_inferred"] is True


def test_missing_run_is_named_labelled_by_counted_and_strict_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(
        tmp_path,
        v("a", 1, "passed"),
        v("a", 2, "passed"),
        v("b", 1, "failed"),
        v("b", 2, "passed"),
        v("b", 3, "passed"),
    )
    r = run_cli(capsys, "metrics", f, "--k", "3", "--json")
    data = json.loads(r.out)
    a = data["cases"][0]
    assert a["missing"] == [3] and a["counted"] == 2 and a["label_hat"] == "pass^2"
    assert data["dataset"]["complete"] is False and data["dataset"]["k"] == 2
    assert data["dataset"]["k_inferred"] is False

    r = run_cli(capsys, "metrics", f, "--k", "3")
    assert r.code == 0
    assert "Plan NOT met" in r.out and "pass@2 / pass^2, not pass@3 / pass^3" in r.out
    assert "a: 2 of 3 requested runs counted (missing run 3)" in r.out

    assert run_cli(capsys, "metrics", f, "--k", "3", "--strict").code == 1
    assert run_cli(capsys, "metrics", f, "--k", "2").code == 2  # b has run 3: beyond k
    complete = write(tmp_path, v("a", 1, "passed"))
    assert run_cli(capsys, "metrics", complete, "--strict").code == 0


def test_inferred_k_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, v("a", 1, "passed"), v("a", 2, "failed")))
    assert "inferred from the largest run index" in r.out


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"case": "a", "run": 1, "status": "passed"}', "{not json"], r":2: not valid JSON"),
        (
            ['{"case": "a", "run": 1, "status": "passd"}'],
            r":1: field 'status' is \"passd\"; use one of passed, failed, errored",
        ),
        (
            ['{"case": "a", "run": 0, "status": "passed"}'],
            r":1: field 'run' is 0; run indices start at 1",
        ),
        (
            ['{"case": "a", "run": "1", "status": "passed"}'],
            r":1: field 'run' must be a whole number",
        ),
        (['{"run": 1, "status": "passed"}'], r":1: field 'case' must be a non-empty string"),
        (["[1, 2]"], r":1: expected a JSON object"),
        ([v("a", 1, "passed"), v("a", 1, "failed")], r":2: run 1 of case 'a' is recorded twice"),
        ([], r"is empty; write one verdict per line"),
        (["", "   "], r"is empty"),
    ],
    ids=[
        "malformed-json",
        "unknown-status",
        "run-below-1",
        "run-not-int",
        "no-case",
        "not-object",
        "duplicate",
        "empty",
        "blank-only",
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], message: str
) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, *lines))
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("error: ")
    assert "Traceback" not in r.err
    import re

    assert re.search(message, r.err), r.err


@pytest.mark.parametrize("k", ["0", "-2"])
def test_k_below_one_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], k: str) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, v("a", 1, "passed")), "--k", k)
    assert r.code == 2 and "ask for at least 1 run per case" in r.err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", str(tmp_path / "nope.jsonl"))
    assert r.code == 2 and "no such file" in r.err


def test_case_ids_are_data_not_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, v("[b]x[/]", 1, "passed")))
    assert "[b]x[/]" in r.out


def test_console_script_exit_code_without_traceback(tmp_path: Path) -> None:
    f = write(tmp_path, "{oops")
    proc = subprocess.run(
        [sys.executable, "-m", "passhat", "metrics", f], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr


def test_an_endless_line_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (issue 26): `metrics /dev/zero` read one endless line until MemoryError."""
    r = run_cli(capsys, "metrics", "/dev/zero")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1
    assert "/dev/zero: line 1 is longer than 1,048,576 bytes" in r.err


def test_all_lists_every_case_past_the_default_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(tmp_path, *(v(f"case-{i:02d}", 1, "passed") for i in range(35)))
    short = run_cli(capsys, "metrics", f).out
    assert "case-29" in short and "case-30" not in short
    every = run_cli(capsys, "metrics", f, "--all").out
    assert "case-34" in every
