"""Counts in messages take their noun in the right number: "1 case", "1 run", never
"(1 cases)" or "1 runs"; the Chinese messages have no plural and stay as they were."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli
from passhat.accounting import account
from passhat.plain import plural
from passhat.report.i18n import LABELS, tn

WRONG = re.compile(
    r"(?<![\d.,])1 (cases|runs|epochs|model answers|errored runs|more cases|counted runs)\b"
)
"""A count of one with a plural noun."""


def test_plural() -> None:
    assert plural(1, "case") == "1 case" and plural(0, "case") == "0 cases"
    assert plural(2, "run") == "2 runs" and plural(1200, "run") == "1,200 runs"
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == (
        "3 entries"
    )


def test_every_counted_noun_has_both_numbers_in_every_language() -> None:
    for lang, labels in LABELS.items():
        for key in [k for k in labels if k.startswith("n_") and k + "s" in labels]:
            assert tn(key, lang, 1) == labels[key].format(n="1")
            assert tn(key, lang, 2) == labels[key + "s"].format(n="2")
    assert tn("n_case", "en", 1) == "1 case" and tn("n_case", "en", 3) == "3 cases"
    assert tn("n_case", "zh-TW", 1) == "1 個案例"


def test_one_case_one_run_reads_in_the_singular_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed's card once: run, report (terminal and HTML), metrics and a resume with
    nothing to do. It used to print "1 cases × k=1 = 1 runs", "dataset (1 cases)",
    "1 runs replayed from a cassette" and "0 runs to do"."""
    db = tmp_path / "p.db"
    html = tmp_path / "r.html"
    outputs = []
    r = run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "-k", "1", "--db", str(db))
    assert r.code in (0, 1), r.err
    assert ": 1 case × k=1 = 1 run → " in r.err
    assert "(1 case)" in r.out and "1 run replayed from a cassette" in r.out
    outputs.append(r.out + r.err)
    for args in (
        ("report", "latest"),
        ("report", "latest", "--html", str(html)),
        ("metrics", "latest"),
        ("resume", "latest"),
    ):
        r = run_cli(capsys, *args, "--db", str(db))
        outputs.append(r.out + r.err)
    assert "nothing to do, every requested run is recorded (1 run: " in outputs[-1]
    page = html.read_text(encoding="utf-8")
    assert "1 run replayed from a cassette" in page
    for text in [*outputs, page]:
        assert not WRONG.search(" ".join(text.split())), WRONG.search(" ".join(text.split()))


def test_a_plan_met_with_one_run_per_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_cli(
        capsys,
        *("run", str(CLARIFY), "--case", SEED, "-k", "1", "--db", str(db)),
        *("--agent", "agents_for_tests:perfect"),
    )
    assert "Plan met: every case has 1 counted run." in r.out, r.out


def _verdicts(path: Path, rows: list[tuple[str, int, str]]) -> Path:
    lines = [json.dumps({"case": c, "run": r, "status": s}) for c, r, s in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_metrics_with_one_requested_run_one_left_out_and_one_counted_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "a: 0 of 1 requested runs counted", "1 of 2 cases have no counted run and
    are left out", "forecast of the next 1 runs" and (JSON) "no interval: 1 cases"."""
    path = _verdicts(tmp_path / "v.jsonl", [("a", 1, "errored"), ("b", 1, "passed")])
    r = run_cli(capsys, "metrics", str(path), "-k", "1", "-m", "1", "--lang", "en")
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "a: 0 of 1 requested run counted (errored run 1)" in flat
    assert "Plan NOT met: 1 of 2 cases has no counted run and is left out" in flat
    assert not WRONG.search(flat), WRONG.search(flat)
    r = run_cli(capsys, "metrics", str(path), "-k", "1", "--json")
    share = json.loads(r.out)["dataset"]["forecast"]["expected_share"]
    assert share["note"].startswith("no interval: 1 case; a calibrated dataset forecast")
    r = run_cli(capsys, "metrics", str(path), "-k", "1", "-m", "1", "--lang", "zh-TW")
    assert "a：要求 1 次，計入 0 次（" in r.out and "1 個沒有計入的執行" in r.out


def test_forecast_of_one_run_and_a_plan_of_one_run_per_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "forecast of the next 1 runs" and "1 runs per case on these 30 cases"."""
    rows = [
        (f"c{i}", r, "passed" if (i + r) % 3 else "failed") for i in range(30) for r in (1, 2, 3, 4)
    ]
    path = _verdicts(tmp_path / "v.jsonl", rows)
    r = run_cli(capsys, "metrics", str(path), "-m", "1", "--plan", "0.3", "--lang", "en")
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "forecast of the next 1 run " in flat and "1 run per case on these 30 cases" in flat
    assert "1 runs" not in flat


def test_share_note_and_accounting_lines_at_one() -> None:
    """The English lines passhat.stats and Accounting write themselves, and their
    Chinese translations through the catalog."""
    from passhat.report.terminal.phrases import _phrase  # how report translates what stats wrote
    from passhat.stats import share_forecast

    note = share_forecast([2], [1], 10).note
    assert note is not None and note.startswith("no interval: 1 case; ")
    assert _phrase(note, "zh-TW") == "無區間：只有 1 個案例；校準的資料集預測至少需要 10 個"
    many = share_forecast([2, 2], [1, 2], 10).note
    assert many is not None and _phrase(many, "zh-TW").startswith("無區間：只有 2 個案例")
    short = account([("a", 1, "errored"), ("b", 1, "passed")], 1).shortfalls()
    assert short == ["a: 0 of 1 requested run counted (errored run 1)"]
    assert (
        account([("a", 1, "errored")], 3)
        .shortfalls()[0]
        .startswith("a: 0 of 3 requested runs counted")
    )


def test_adaptive_messages_at_one() -> None:
    from passhat.adaptive import Look, halted, schedule, unreachable, width_look
    from passhat.errors import InputError

    assert "1 look planned at k = 5" in schedule(5, 5, 2).rule()
    with pytest.raises(InputError, match="already asks for 1 run per case"):
        schedule(1, 0, 1)
    look = Look(2, 0, math.nan, 0.0, 1.0, None, None, False, "test")
    why = halted(look, 1, 0).halt
    assert why == "the round at k = 2 added 1 run and none was counted (it errored)"
    assert "added 3 runs and none was counted (every one errored)" in str(halted(look, 3, 0).halt)
    assert (
        "no interval: 1 case with counted runs"
        in width_look(schedule(2, 4, 2), 2, [2], [1], 0.5).method
    )
    assert "with 1 case the sign flip" in str(unreachable(schedule(1, 4, 1), 1))
