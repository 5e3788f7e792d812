"""Reports of many runs: bounded terminal tables, the same figures from summaries."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from cli_helpers import run_cli, run_seed
from passhat.accounting import Accounting, DuplicateRunError, Ledger
from passhat.records import ExperimentRecord, RunRecord, RunSummary
from passhat.report.experiment import (
    LoadRuns,
    experiment_accounting,
    experiment_dict,
    print_experiment_report,
)
from passhat.report.parts import calls_cell
from passhat.report.terminal import ROWS_SHOWN
from passhat.store import Store
from records_for_tests import experiment_record

CASES = ROWS_SHOWN + 10
K = 3


def experiment() -> ExperimentRecord:
    return experiment_record(
        (f"case-{i:03d}" for i in range(CASES)), K, tools=("get_ticket", "update_ticket")
    )


def runs() -> list[RunRecord]:
    out = []
    for i in range(CASES):
        for index in range(1, K + 1):
            missing = ["AC2"] if index == 2 else []
            out.append(
                RunRecord(
                    experiment_id="e1",
                    case_id=f"case-{i:03d}",
                    run_index=index,
                    case_hash="h",
                    status="failed" if missing else "passed",
                    score=[
                        {
                            "scorer": "exact_set",
                            "passed": not missing,
                            "path": "ticket.annotations",
                            "expected": ["AC1", "AC2"],
                            "missing": missing,
                            "extra": [],
                        }
                    ],
                    tool_calls=[{"tool": "update_ticket", "error": None}] * (1 + index % 2),
                    transcript=[{"role": "assistant", "content": "x" * 1000}],
                )
            )
    return out


def report_text(records: list[object], limit: int | None, load: LoadRuns | None = None) -> str:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    print_experiment_report(console, experiment(), records, limit=limit, load=load)  # type: ignore[arg-type]
    return out.getvalue()


def test_the_tool_use_table_is_bounded_like_the_case_table() -> None:
    """At 10,000 runs the table listed every run's call count (1.46 MB at 100k runs)."""
    text = report_text(runs(), ROWS_SHOWN)
    tool_line = next(line for line in text.splitlines() if line.strip().startswith("update_ticket"))
    # 120 runs: a tally of the call counts, not 120 numbers
    assert "2 in 80 runs, 1 in 40 runs" in tool_line and len(tool_line) < 100
    assert "item stability of 10 more cases: --all or --json" in text
    assert text.count("item stability ·") == ROWS_SHOWN
    everything = report_text(runs(), None)
    assert everything.count("item stability ·") == CASES
    assert "2 1 2" in everything  # with --all, every run's calls, case by case


def test_a_report_with_no_counted_run_lists_a_screen_of_cases() -> None:
    """Regression (issue 15): when every run errored (a wrong key, a dead endpoint) the
    report listed every case short of the plan: 20,039 lines at 100,000 runs."""
    errored = [
        replace(r, status="errored", error_type="agent_error", error_message="boom", score=[])
        for r in runs()
    ]
    text = report_text(errored, ROWS_SHOWN)
    short = [line for line in text.splitlines() if "of 3 requested runs counted" in line]
    assert len(short) == ROWS_SHOWN and "no counted run yet" in text
    assert f"... and {CASES - ROWS_SHOWN} more cases short of the plan" in text
    everything = report_text(errored, None)
    assert everything.count("of 3 requested runs counted") == CASES
    assert "more cases short of the plan" not in everything


def test_calls_cell() -> None:
    assert calls_cell([1, 0, 1], 3) == "1 0 1"
    assert calls_cell([1, 0, 1, 1], 3) == "1 in 3 runs, 0 in 1 run"
    assert calls_cell([1] * 5000, None) == " ".join(["1"] * 5000)


def test_a_report_from_summaries_equals_one_from_whole_runs(tmp_path: Path) -> None:
    records = runs()
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment())
        for record in records:
            store.record_run(record)
        summaries = store.summaries("e1")
        lazy = store.summaries("e1", decode_items=False)  # what `passhat report` reads
        unread = store.summaries("e1", read_items=False)  # ...of many runs, terminal only

        def load(cases: Sequence[str]) -> list[RunSummary]:
            return store.summaries("e1", decode_items=False, cases=cases)

        # items not read but the listed cases': the same report
        assert report_text(unread, ROWS_SHOWN, load) == report_text(records, ROWS_SHOWN)
    whole = experiment_dict(experiment(), records)
    assert experiment_dict(experiment(), summaries) == whole
    assert whole["items"][1]["misses"] == [2] and whole["tools"][1]["calls_per_run"] == [2, 1, 2]
    assert report_text(summaries, ROWS_SHOWN) == report_text(records, ROWS_SHOWN)
    for limit in (ROWS_SHOWN, None):
        assert report_text(lazy, limit) == report_text(records, limit)
    assert experiment_dict(experiment(), lazy) == whole
    # an errored run keeps its message in the summaries
    bad = replace(records[0], case_id="case-x", status="errored", error_message="boom")
    assert experiment_dict(experiment(), [bad])["errored"][0]["message"] == "boom"


def test_passhat_report_reads_the_items_of_the_cases_it_lists_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal report lists the items of `ROWS_SHOWN` cases: of many runs (or with
    --no-why) it reads those cases' alone (at 100,000 runs the items are 23 MB of the
    30 MB of text the summaries hold), and prints what it prints from them all (as with
    --junit-xml, which needs every run's)."""
    db = tmp_path / "p.db"
    with Store(db) as store:
        store.create_experiment(experiment())
        for record in runs():
            store.record_run(record)
    reads: list[tuple[bool, object]] = []
    summaries = Store.summaries

    def spy(self: Store, *args: object, **kwargs: Any) -> list[RunSummary]:
        reads.append((kwargs.get("read_items", True), kwargs.get("cases")))
        return summaries(self, *args, **kwargs)

    monkeypatch.setattr(Store, "summaries", spy)
    unread = run_cli(capsys, "report", "e1", "--db", str(db), "--no-why")
    assert [read for read, _ in reads] == [False, True] and reads[1][1] is not None
    assert len(reads[1][1]) == ROWS_SHOWN  # type: ignore[arg-type]
    reads.clear()
    whole = run_cli(
        capsys, "report", "e1", "--db", str(db), "--no-why", "--junit-xml", str(tmp_path / "j")
    )
    assert reads == [(True, None)]
    assert unread.code == whole.code == 0 and "item stability ·" in unread.out
    assert unread.out == whole.out


def test_run_can_skip_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "p.db")
    r = run_seed(capsys, "--db", db, "-q", "--no-report", "--name", "seed-run")
    assert r.code == 0 and r.out == ""
    assert "3 runs recorded; the report: passhat report seed-run" in r.err
    # --strict still judges the accounting: a k the cassette cannot answer leaves errored runs
    r = run_seed(capsys, "--db", db, "-q", "--no-report", "--strict", "-k", "4")
    assert r.code == 1 and r.out == ""


def test_a_large_run_ends_with_figures_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past SUMMARY_ABOVE runs the end report loads no run: figures and accounting only."""
    monkeypatch.setattr("passhat.cli.run.SUMMARY_ABOVE", 2)
    r = run_seed(capsys, "--db", str(tmp_path / "p.db"), "-q")
    assert r.code == 0 and "pass@3" in r.out and "requested k = 3" in r.out
    assert "item stability" not in r.out.replace("item stability and tool use", "")
    assert "3 runs: figures and accounting only" in r.out
    full = run_cli(capsys, "report", "latest", "--db", str(tmp_path / "p.db"))
    assert "item stability ·" in full.out


def plain_accounting(e: ExperimentRecord, runs: list[RunSummary]) -> Accounting:
    """The accounting read run by run through `Ledger.add`, planned cases first."""
    ledger = Ledger()
    for case in e.case_ids:
        ledger.expect(case)
    for r in runs:
        ledger.add(r.case_id, r.run_index, r.status)
    return ledger.close(e.k_requested, e.case_k)


def summary_of(case: str, index: int, status: str) -> RunSummary:
    return RunSummary(case, index, status, None, None, 0.0, 0, 0, None, 1, None, [], {})


SUMMARIES = st.lists(
    st.builds(
        summary_of,
        st.sampled_from(["a", "b", "c", "d"]),
        st.integers(1, 4),
        st.sampled_from(["passed", "failed", "errored"]),
    ),
    max_size=24,
)


@settings(max_examples=300, deadline=None)
@given(SUMMARIES, st.booleans(), st.lists(st.sampled_from(["a", "b", "z"]), unique=True))
def test_the_report_accounting_equals_one_run_by_run(
    runs: list[RunSummary], presorted: bool, planned: list[str]
) -> None:
    """Guards the report's inlined `Ledger.add`: the same cases in the same order, the
    same runs, and the same error for a run recorded twice, whether the runs come by
    case (as a store gives them) or in any order."""
    if presorted:
        runs = sorted(runs, key=lambda r: (r.case_id, r.run_index))
    e = replace(experiment(), case_ids=tuple(planned), k_requested=4)
    try:
        want: Accounting | str = plain_accounting(e, runs)
    except DuplicateRunError as error:
        want = str(error)
    try:
        got: Accounting | str = experiment_accounting(e, runs)
    except DuplicateRunError as error:
        got = str(error)
    assert got == want
