"""The lost-runs examples docs/numbers.md shows are what `passhat metrics` prints for
the files it names (issue 33: the lossy experiment and the coupon card with its runs
2 and 3 errored)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import ROOT, run_cli

NUMBERS = ROOT / "docs" / "numbers.md"
LOSSY = ROOT / "examples" / "verdicts" / "lossy.jsonl"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _takeaway(output: str) -> str:
    """The line under the intervals table: 'pass rate ... whatever they hide.'"""
    found = re.search(
        r"pass rate \(mean of per-case rates\) [^\n]*\n?[^\n]*whatever they hide\.", output
    )
    assert found is not None, output
    return _flat(found.group(0))


def test_the_lossy_experiment_in_the_docs_is_what_metrics_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = [json.loads(line) for line in LOSSY.read_text(encoding="utf-8").splitlines()]
    errored = sum(r["status"] == "errored" for r in records)
    assert (len({r["case"] for r in records}), errored, 30 * 5 - len(records)) == (30, 6, 8)
    r = run_cli(capsys, "metrics", str(LOSSY), "-k", "5")
    assert r.code == 0, r.err
    line = _takeaway(r.out)
    assert "if the 14 runs not counted are unrelated to the outcome" in line
    assert line in _flat(NUMBERS.read_text(encoding="utf-8"))


def test_the_coupon_card_with_runs_lost_reads_as_the_docs_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (ROOT / "examples" / "verdicts" / "coupon.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in lines.splitlines()]
    for record in records:
        if record["case"] == "ac-conflict-001" and record["run"] in (2, 3):
            record["status"] = "errored"
    file = tmp_path / "coupon.jsonl"
    file.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    out = run_cli(capsys, "metrics", str(file)).out
    assert _takeaway(out) == (
        "pass rate (mean of per-case rates) 33.3% [0.0%–99.8%] if the 2 runs not counted "
        "are unrelated to the outcome; 0.0%–99.8% whatever they hide."
    )
    docs = _flat(NUMBERS.read_text(encoding="utf-8"))
    assert "(0/1 + 2/3) / 2 = 33.3 % [0.0 – 99.8 %] if the 2 errored runs" in docs
    assert "0.0 – 99.8 % whatever they hide" in docs


def test_the_toolathlon_row_and_its_share_forecast_read_as_the_docs_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reconstruction docs/numbers.md uses (108 tasks: 68 at 3/3, 16 at 2/3, 10 at
    1/3, 14 at 0/3) gives the leaderboard's row, 75.9 / 87.0 / 63.0, and its share of
    tasks passing 10 in a row passes the Beta check and keeps 51.2 % (39.0 - 62.7 %)."""
    split = [3] * 68 + [2] * 16 + [1] * 10 + [0] * 14
    records = [
        {"case": f"t{i:03d}", "run": run, "status": "passed" if run <= passes else "failed"}
        for i, passes in enumerate(split)
        for run in (1, 2, 3)
    ]
    file = tmp_path / "toolathlon.jsonl"
    file.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    r = run_cli(capsys, "metrics", str(file), "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)["dataset"]
    row = [round(data[key] * 100, 1) for key in ("pass_at_1", "pass_at_k", "pass_hat_k")]
    assert row == [75.9, 87.0, 63.0]
    share = data["forecast"]["expected_share"]
    assert [round(share[key] * 100, 1) for key in ("estimate", "low", "high")] == [51.2, 39.0, 62.7]
    assert share["check"].startswith("Beta population checked") and "widened" not in share["method"]
    docs = _flat(NUMBERS.read_text(encoding="utf-8"))
    assert "pass@1 75.9, pass@3 87.0, pass^3 63.0" in docs
    assert "**51.2 %** (39.0 – 62.7 %)" in docs
