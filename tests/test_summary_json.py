"""passhat.report.summary_json: `metrics --json` written shape by shape.

The streamed writer must give, once parsed, exactly what the plain path gives:
`summary_with_uncertainty` over intervals of every case, serialised whole. These
tests compare the two on errored, missing and unequal runs and odd case ids.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from cli_helpers import run_cli
from passhat.accounting import Accounting, Ledger
from passhat.errors import MetricsError
from passhat.report.summary import MAX_LISTED, summary_with_uncertainty
from passhat.report.summary_json import CHUNK, representatives, summary_json_chunks
from passhat.stats import JEFFREYS, UNIFORM, Prior, uncertainty
from passhat.verdicts import read_verdicts

ODD_IDS = ['quote"d', "back\\slash", "new\nline", "tab\t", "\x00nul", "ünï", "\u2028", "😀", "/"]


def plain(accounting: Accounting, k_inferred: bool = False, **options: Any) -> Any:
    """The straightforward path: every case's interval, one dict, one serialisation."""
    u = uncertainty(accounting, **options)
    data = summary_with_uncertainty(accounting, u, k_inferred=k_inferred)
    return json.loads(to_json(data, inf_nan_mode="null"))


def streamed(accounting: Accounting, k_inferred: bool = False, **options: Any) -> Any:
    u = uncertainty(accounting, only=representatives(accounting), **options)
    return json.loads("".join(summary_json_chunks(accounting, u, k_inferred=k_inferred)))


def same(a: Any, b: Any) -> None:
    assert a == b
    assert json.dumps(a) == json.dumps(b)  # key order too


STATUS = st.sampled_from(["passed", "failed", "errored", None])  # None: no record (missing)
PRIORS: list[Prior] = [JEFFREYS, UNIFORM, "fitted"]


@settings(max_examples=100, deadline=None)
@given(
    k=st.integers(1, 6),
    plans=st.lists(
        st.tuples(st.lists(STATUS, min_size=6, max_size=6), st.integers(0, 6)),
        min_size=1,
        max_size=30,
    ),
    ids=st.lists(st.text(min_size=1, max_size=4), min_size=30, max_size=30, unique=True),
    prior=st.sampled_from(PRIORS),
    target=st.sampled_from([None, 0.1]),
    confidence=st.sampled_from([0.9, 0.95]),
    m=st.integers(1, 12),
    k_inferred=st.booleans(),
)
def test_streamed_json_equals_plain_json(
    k: int,
    plans: list[tuple[list[str | None], int]],
    ids: list[str],
    prior: Prior,
    target: float | None,
    confidence: float,
    m: int,
    k_inferred: bool,
) -> None:
    """Errored and missing runs, cases asked fewer runs (adaptive k), cases with no
    counted run, any unicode id: the parsed JSON is the plain path's, number for number."""
    ledger = Ledger()
    case_k: dict[str, int] = {}
    for case, (statuses, fewer) in zip(ids, plans, strict=False):
        ledger.expect(case)
        asked = max(1, k - fewer) if fewer > 3 else k
        if asked < k:
            case_k[case] = asked
        for index, status in enumerate(statuses[:asked], start=1):
            if status is not None:
                ledger.add(case, index, status)
    accounting = ledger.close(k, case_k)
    assume(any(c.counted for c in accounting.cases))
    options: dict[str, Any] = {
        "m": m,
        "resamples": 100,
        "confidence": confidence,
        "prior": prior,
        "target": target,
        "seed": 3,
    }
    try:
        expected = plain(accounting, k_inferred, **options)
    except MetricsError as error:  # e.g. a fitted prior with no spread to fit: the same refusal
        with pytest.raises(MetricsError, match=re.escape(str(error))):
            streamed(accounting, k_inferred, **options)
        return
    same(streamed(accounting, k_inferred, **options), expected)


def test_one_case_odd_ids_and_missing_past_the_listed_limit() -> None:
    """One case (no dataset interval), ids JSON must escape, and a case whose missing
    runs are too many to list (`missing` null, `missing_ranges` only)."""
    ledger = Ledger()
    ledger.add("only", 1, "passed")
    same(streamed(ledger.close(1)), plain(ledger.close(1)))

    ledger = Ledger()
    for number, case in enumerate(ODD_IDS):
        for run in range(1, 4):
            ledger.add(case, run, ["passed", "failed", "errored"][(number + run) % 3])
    ledger.add("far", MAX_LISTED + 5, "passed")
    accounting = ledger.close(MAX_LISTED + 10)
    got = streamed(accounting, resamples=100)
    same(got, plain(accounting, resamples=100))
    far = next(c for c in got["cases"] if c["case"] == "far")
    assert far["missing"] is None and len(far["missing_ranges"]) == 2
    assert [c["case"] for c in got["cases"]] == [*ODD_IDS, "far"]


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    """One verdict per line, with the liberties a verdict file may take: blank lines,
    CRLF endings, extra keys, keys in any order."""
    text = [json.dumps(x) + ("\r\n" if n % 11 == 0 else "\n") for n, x in enumerate(lines)]
    text[::97] = [line + "\n  \n" for line in text[::97]]
    path.write_text("".join(text), encoding="utf-8")
    return path


def test_metrics_json_command_equals_plain_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command, over more cases than one written piece, with errored and missing runs,
    unequal runs per case and odd ids, prints the plain path's JSON."""
    statuses = ["passed", "failed", "errored"]
    lines = []
    for n in range(CHUNK + 700):
        case = ODD_IDS[n] if n < len(ODD_IDS) else f"case-{n}"
        for run in range(1, 2 + n % 5):
            if (n + run) % 7:  # some runs missing
                lines.append({"case": case, "run": run, "status": statuses[(n * run) % 3]})
            if n % 13 == 0 and lines:
                lines[-1] = {"note": "extra", **dict(reversed(lines[-1].items()))}
    f = write(tmp_path / "verdicts.jsonl", lines)
    args = ["--forecast", "7", "-B", "150", "--seed", "5", "--plan", "0.05", "--prior", "fitted"]
    r = run_cli(capsys, "metrics", str(f), "--json", *args)
    assert r.code == 0, r.err
    assert r.out.endswith("}\n") and r.out.count("\n") == 1
    accounting = read_verdicts(f).close(5)
    options: dict[str, Any] = {"m": 7, "resamples": 150, "seed": 5, "target": 0.05}
    same(json.loads(r.out), plain(accounting, k_inferred=True, prior="fitted", **options))

    r = run_cli(capsys, "metrics", str(f), "--json", "--k", "6")
    same(json.loads(r.out), plain(read_verdicts(f).close(6)))


def test_intervals_of_the_representatives_are_required() -> None:
    ledger = Ledger()
    ledger.add("a", 1, "passed")
    ledger.add("b", 1, "failed")
    accounting = ledger.close(1)
    u = uncertainty(accounting, resamples=100, only={"a"})
    with pytest.raises(MetricsError, match="no interval for case 'b'"):
        "".join(summary_json_chunks(accounting, u))
