"""Small wording defects a new user met in `--help`, `compare` and `metrics`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli


def _verdicts(path: Path, rows: list[tuple[str, int, str]]) -> Path:
    lines = [json.dumps({"case": c, "run": r, "status": s}) for c, r, s in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _two_of_three(path: Path) -> Path:
    """Three cases, each passing 2 of 3 runs (the trello example's shape)."""
    rows = [(c, r, "failed" if r == 2 else "passed") for c in "abc" for r in (1, 2, 3)]
    return _verdicts(path, rows)


def test_help_names_every_value_and_the_store_default_alike(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """audit showed `--grade-jobs GRADE_JOBS`; compare and audit said "$PASSHAT_DB or
    ./passhat.db" where every other command says "if set, else"."""
    r = run_cli(capsys, "audit", "--help")
    assert "--grade-jobs N " in r.out and "GRADE_JOBS" not in r.out
    for command in ("audit", "compare"):
        flat = " ".join(run_cli(capsys, command, "--help").out.split())
        assert "$PASSHAT_DB if set, else ./passhat.db" in flat, command


def test_compare_with_every_flip_enumerated_names_how_many(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three paired cases have 2^3 = 8 sign patterns, all enumerated: it said "B = 2000
    (every flip enumerated)"."""
    a = _two_of_three(tmp_path / "a.jsonl")
    b = _two_of_three(tmp_path / "b.jsonl")
    r = run_cli(capsys, "compare", str(a), str(b), "--lang", "en")
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "B = 8 (every flip enumerated)" in flat and "B = 2000" not in flat


def test_no_two_alike_pass_rate_rows_when_both_methods_fall_to_a_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case at 2/3: the table showed two identical pass-rate rows when both methods
    fell back to the binomial floor. Since issue 33 the headline is the (continuity-
    corrected) score interval at that floor and the bootstrap's floor is Wilson on the
    runs: two rows that differ, each naming its floor, never two alike."""
    r = run_cli(capsys, "metrics", str(_two_of_three(tmp_path / "v.jsonl")), "--lang", "en")
    assert r.code == 0, r.err
    rows = [line for line in r.out.splitlines() if line.strip().startswith("pass rate (over runs)")]
    assert len(rows) == 2 and rows[0] != rows[1], rows
    assert "Wilson score" in rows[0] and "Wilson on all 9 runs" in rows[1]
