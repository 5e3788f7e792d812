"""Counts in messages take their noun in the right number: "1 case", "1 run", never
"(1 cases)" or "1 runs"; the Chinese messages have no plural and stay as they were."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli
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
