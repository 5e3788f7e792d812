"""`export.run_lines`, the JSON Lines export made as text, against the rows it stands for:
each line is `_dumps(run_row(...))` byte for byte, whatever the stored values."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.errors import StoreError
from passhat.export import (
    RUN_COLUMNS,
    StoredRun,
    _dumps,
    run_lines,
    run_row,
    run_rows,
    write_rows,
    write_runs,
)
from passhat.records import ExperimentRecord


def experiment(name: str | None = "mine-1", model: str = "replay:x.jsonl") -> ExperimentRecord:
    return ExperimentRecord(
        id="0badcafe",
        name=name,
        created_at="2026-01-01T00:00:00Z",
        suite_name="s",
        suite_path="/s",
        suite_hash="0" * 64,
        agent="a",
        model=model,
        model_config={},
        params={},
        prompt_version=None,
        k_requested=3,
        seed=0,
        harness_version="t",
        fingerprint="f" * 16,
        case_ids=("c1",),
        case_hashes={"c1": "h"},
    )


SCORE = json.dumps(
    [{"scorer": "exact_set", "path": "t.a", "passed": False, "expected": ["AC3"], "missing": []}]
)
ODD_TEXT = 'naïve "quoted" \\ back\nline\ttab \x00\x1f \u2028 猫 🐈 \ud800'
"""Quotes, escapes, control characters, non-ASCII, and a lone surrogate."""


def stored(**changes: Any) -> tuple[Any, ...]:
    run = {
        "case_id": "c1",
        "run_index": 1,
        "status": "passed",
        "error_type": None,
        "error_message": None,
        "score": SCORE,
        "input_tokens": 1200,
        "output_tokens": 300,
        "duration_s": 0.25,
        "retries": "[]",
        "model_source": "replayed",
        "started_at": 1767225600.123456,
    }
    return tuple(StoredRun(**(run | changes)))


def rows_as_before(e: ExperimentRecord, runs: list[tuple[Any, ...]]) -> list[str]:
    """Each run's row by itself (`run_row`), as JSON: what the export wrote."""
    rows = [run_row(e, StoredRun(*values)) for values in runs]
    assert list(run_rows(e, runs)) == rows  # the rows of csv and parquet: a case's scores kept
    return [_dumps(row) + "\n" for row in rows]


def test_each_line_is_the_rows_json_on_odd_values() -> None:
    runs = [
        stored(),
        stored(run_index=2, status="errored", error_type="RuntimeError", error_message=ODD_TEXT),
        stored(run_index=3, status="failed", model_source=None, retries='[{"a": 1}, {"b": 2}]'),
        stored(case_id=ODD_TEXT, score=json.dumps([{"scorer": ODD_TEXT, "é": [1.5, None]}])),
        stored(case_id=ODD_TEXT, run_index=2, score=SCORE.replace(" ", "")),  # same value
        stored(case_id="c3", duration_s=math.nan, started_at=math.inf, input_tokens=0),
        stored(case_id="c3", run_index=2, duration_s=-math.inf, output_tokens=10**30),
        stored(case_id="c4", duration_s=3, input_tokens=1, output_tokens=12),
        stored(case_id="c5", error_type=b"\x00blob", model_source=7, status="odd\u00e9"),
        stored(case_id="c6", score="[]", retries="[]", started_at=0.1 + 0.2),
    ]
    for e in (experiment(), experiment(name=None, model=ODD_TEXT)):
        assert list(run_lines(e, runs)) == rows_as_before(e, runs)


def test_a_score_shared_by_two_cases_is_written_for_each() -> None:
    """A case's scores are kept while its runs come; another case's equal text is its own."""
    runs = [stored(case_id=c, run_index=i) for c in ("a", "b", "a") for i in (1, 2)]
    assert list(run_lines(experiment(), runs)) == rows_as_before(experiment(), runs)


def test_a_damaged_score_or_retries_is_named_as_the_rows_say() -> None:
    # a fraction in a token column too (fix52: Parquet's int64 truncated it)
    damage = ({"score": "{not json"}, {"retries": "[oops"}, {"output_tokens": "12"})
    for bad in (*damage, {"input_tokens": 12.5}, {"output_tokens": -0.0}):
        runs = [stored(), stored(run_index=4, **bad)]
        with pytest.raises(StoreError) as lines:
            list(run_lines(experiment(), runs))
        with pytest.raises(StoreError) as rows:
            rows_as_before(experiment(), runs)
        assert str(lines.value) == str(rows.value) and "run 4 of case 'c1'" in str(lines.value)


scalars = st.one_of(
    st.none(),
    st.text(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["c1", "c2", "ç3"]),
            scalars,
            st.sampled_from(["passed", "failed", "errored"]),
            scalars,
            scalars,
            st.lists(st.dictionaries(st.text(max_size=3), scalars, max_size=3), max_size=2),
            scalars,
            scalars,
            scalars,
            st.lists(st.integers(), max_size=3),
            scalars,
            scalars,
        ),
        max_size=8,
    )
)
def test_lines_equal_rows_for_any_stored_values(values: list[tuple[Any, ...]]) -> None:
    """The same lines, or the same one-line refusal (text in a number column)."""
    runs = [
        (c, i, s, et, em, json.dumps(score), a, b, d, json.dumps(retries), src, at)
        for c, i, s, et, em, score, a, b, d, retries, src, at in values
    ]
    try:
        lines = list(run_lines(experiment(), runs))
    except StoreError as refused:
        with pytest.raises(StoreError) as too:
            rows_as_before(experiment(), runs)
        assert str(too.value) == str(refused), (refused, too.value)
        return
    assert lines == rows_as_before(experiment(), runs)


def test_write_runs_writes_the_lines_as_write_rows_wrote_rows(tmp_path: Path) -> None:
    runs = [stored(case_id=f"c{i // 3}", run_index=i % 3 + 1) for i in range(2500)]
    fast, slow = tmp_path / "fast.jsonl", tmp_path / "slow.jsonl"
    assert write_runs(fast, experiment(), runs, "jsonl") == 2500  # several batches of lines
    assert write_rows(slow, run_rows(experiment(), runs), RUN_COLUMNS, "jsonl") == 2500
    assert fast.read_bytes() == slow.read_bytes()
    assert json.loads(fast.read_text(encoding="utf-8").splitlines()[0]) == run_row(
        experiment(), StoredRun(*runs[0])
    )
