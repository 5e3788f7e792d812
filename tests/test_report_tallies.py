"""Store.tallies and digest.tallied: the terminal report of a large experiment, its runs
counted per case in SQL, prints exactly what reading every run prints, and the accounting
is the same; a damaged store or a run beyond the plan is read run by run instead."""

from __future__ import annotations

import contextlib
import io
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from cli_helpers import run_cli
from passhat.errors import PasshatError
from passhat.records import RunRecord
from passhat.report.digest import TALLIED_K, tallied
from passhat.report.experiment import print_experiment_report
from passhat.store import Store
from records_for_tests import experiment_record

LISTED = 3
"""Cases the reports list (a terminal report's ROWS_SHOWN, made small)."""

SCORES: list[list[dict[str, Any]]] = [
    [],
    [{"scorer": "exact_set", "path": "t", "expected": ["a", "b"], "missing": ["b"], "extra": []}],
    [{"scorer": "exact_set", "path": "t", "expected": ["a", "b"], "missing": [], "extra": ["z"]}],
]
CALLS: list[list[dict[str, Any]]] = [
    [],
    [{"tool": "get", "arguments": {}}],
    [{"tool": "get", "arguments": {}, "error": "boom"}, {"tool": "put", "arguments": {}}],
    [{"tool": "zed", "arguments": {}}],
]

RUN = st.tuples(
    st.sampled_from([f"c{n}" for n in range(1, 9)]),
    st.integers(1, 6),
    st.sampled_from(["passed", "failed", "errored"]),
    st.integers(0, len(SCORES) - 1),
    st.integers(0, len(CALLS) - 1),
    st.sampled_from([1, 1, 1, 2, 3]),
    st.sampled_from([None, "live", "replayed"]),
    st.sampled_from([None, None, "limit", "agent_error"]),
    st.sampled_from([0, 0, 7, 120]),
)


def write(store: Store, drawn: list[tuple[Any, ...]]) -> None:
    """The drawn runs, each retried run after its earlier attempts (errored)."""
    for d in drawn:
        case, index, attempt = d[0], d[1], d[5]
        for earlier in range(1, attempt):
            store.record_run(RunRecord("e1", case, index, "h", "errored", attempt=earlier))
    store.record_runs([record("e1", d) for d in drawn])


def record(eid: str, drawn: tuple[Any, ...]) -> RunRecord:
    case, index, status, score, calls, attempt, source, error, tokens = drawn
    return RunRecord(
        eid,
        case,
        index,
        "h",
        status,
        error_type=error,
        error_message=f"{error} in {case}" if error else None,
        score=SCORES[score] if status != "errored" else [],
        tool_calls=CALLS[calls],
        input_tokens=tokens,
        output_tokens=tokens // 3,
        model_source=source,
        attempt=attempt,
        traceback="Traceback ..." if status == "errored" and tokens == 7 else None,
    )


def reports(store: Store, eid: str) -> tuple[str, str | None, Any, Any]:
    """The report printed from the runs read, and from the runs counted in SQL (None when
    `tallied` leaves them to be read), with the accounting of each."""
    e = store.experiment(eid)

    def load(cases: Any) -> Any:
        return store.summaries(eid, decode_items=False, cases=cases)

    def printed(runs: Any, counted: Any) -> tuple[str, Any]:
        out = io.StringIO()
        console = Console(file=out, width=100, color_system=None)
        accounting = print_experiment_report(
            console, e, runs, limit=LISTED, load=load, counted=counted
        )
        return out.getvalue(), accounting

    read, accounting = printed(store.summaries(eid, decode_items=False, read_items=False), None)
    tallies = store.tallies(eid)
    assert tallies is not None
    counted = tallied(tallies, e, LISTED)
    if counted is None:
        return read, None, accounting, None
    text, counted_accounting = printed([], counted)
    return read, text, accounting, counted_accounting


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(RUN, min_size=1, max_size=40, unique_by=lambda r: (r[0], r[1])),
    st.lists(st.sampled_from(["c1", "c3", "c9", "c10"]), unique=True),
    st.sampled_from([6, 8]),
    st.booleans(),
)
def test_counted_in_sql_prints_what_reading_the_runs_prints(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: list[tuple[Any, ...]],
    planned: list[str],
    k: int,
    hold: bool,
) -> None:
    """Guards `Store.tallies` and `tallied` against the report made from every run: the
    same text (header, figures, items of the listed cases, tools, tokens, errored,
    limited and retried runs) and the same accounting, over runs with gaps, planned
    cases without runs, cases held at a smaller k, errors, limits, retries and replays."""
    store = Store(tmp_path_factory.mktemp("tallies") / "p.db")
    e = experiment_record(planned, k, tools=("get", "put"))
    store.create_experiment(e)
    if hold:  # an adaptive round asked c2 for fewer runs
        store.hold_cases("e1", k + 1, {"c2": 5})
    beyond = hold and any(case == "c2" and index > 5 for case, index, *_ in drawn)
    write(store, drawn)
    try:
        read, counted, accounting, counted_accounting = reports(store, "e1")
    except PasshatError:
        assert beyond  # a run beyond its case's k: said as reading the runs says it
        return
    runs, cases = len(drawn), {d[0] for d in drawn}
    small = min(len(accounting.cases), len(cases), runs) <= LISTED
    assert (counted is None) == (small or beyond)
    if counted is not None:
        assert counted == read
        assert counted_accounting == accounting
    store.close()


def test_a_large_experiment_is_counted_not_read(tmp_path: Path) -> None:
    """Guards the fast path itself: an experiment of more cases than a report lists is
    counted in SQL (its accounting, tokens and tools), and the report names its
    errored run and limited runs as reading every run would."""
    store = Store(tmp_path / "p.db")
    cases = [f"c{n:02}" for n in range(40)]
    store.create_experiment(experiment_record(cases, 3, tools=("get",)))
    errored, limited = ("c07", 2), "c11"
    drawn = [
        (case, i, "errored" if (case, i) == errored else "passed", 1, 1, 1, "live", None, 5)
        for case, i in itertools.product(cases, range(1, 4))
    ]
    drawn = [(*d[:7], "limit" if d[0] == limited else None, 5) for d in drawn]
    write(store, drawn)
    read, counted, accounting, counted_accounting = reports(store, "e1")
    assert counted is not None and counted == read
    assert counted_accounting == accounting and accounting.runs_counted == 119
    assert "c07" in counted and "limit" in counted


@pytest.mark.parametrize(
    ("column", "damage"),
    [("items", "not json"), ("tool_counts", "damaged: the tool_calls column")],
)
def test_a_damaged_store_is_read_run_by_run(tmp_path: Path, column: str, damage: str) -> None:
    """Guards the damaged store's message: tallies leave it to the summaries, which name
    the run whose column is damaged."""
    store = Store(tmp_path / "p.db")
    store.create_experiment(experiment_record(["c1"], 2))
    store.record_runs([record("e1", ("c1", i, "passed", 1, 1, 1, None, None, 0)) for i in (1, 2)])
    with store.atomic() as db:
        db.execute(f"UPDATE run_summaries SET {column} = ? WHERE run_index = 2", (damage,))
    assert store.tallies("e1") is None
    with pytest.raises(PasshatError, match="run 2 of 'c1'"):
        store.summaries("e1", decode_items=False, read_items=False)


@pytest.mark.parametrize("k", [TALLIED_K, TALLIED_K - 1])
def test_passhat_report_counts_a_large_experiment_in_sql(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    k: int,
) -> None:
    """Guards the command's choice: `passhat report` of more cases than it lists, at
    TALLIED_K runs a case or more, reads no run but the errored ones and the listed
    cases'; below it, every run (the same report either way). (--no-why: an experiment
    this small shows why its runs differ by default, which reads them all.)"""
    db = tmp_path / "p.db"
    store = Store(db)
    cases = [f"c{n:02}" for n in range(40)]
    store.create_experiment(experiment_record(cases, k, tools=("get",)))
    drawn = [(c, i, "passed", 1, 1, 1, "live", None, 5) for c in cases for i in range(1, k + 1)]
    write(store, drawn)
    store.close()
    whole: list[bool] = []
    summaries = Store.summaries

    def watched(self: Store, experiment_id: str, **options: Any) -> Any:
        whole.append(options.get("cases") is None and not options.get("errored_only"))
        return summaries(self, experiment_id, **options)

    monkeypatch.setattr(Store, "summaries", watched)
    result = run_cli(capsys, "report", "e1", "--db", str(db), "--no-why")
    assert result.code == 0 and f"{40 * k}/{40 * k}" in result.out.replace(",", "")
    assert any(whole) == (k < TALLIED_K)


@pytest.mark.parametrize("busy", [True, False])
def test_sqlite_counts_while_meanwhile_is_held(tmp_path: Path, busy: bool) -> None:
    """Guards `Store.tallies(meanwhile=...)`: while the other thread is busy, SQLite does
    its counting (grouping the runs per case, finding and sorting the errored ones)
    inside `meanwhile`, before a row is taken into Python, so that the thread's imports
    run beside that work and not between the rows (each row taken waits for the GIL);
    once it is done, the rows are read in the index's order, unsorted (sorting then
    costs and hides nothing). The tallies are the same either way, and as without it.
    Measured in SQLite's virtual-machine steps (a progress handler)."""
    store = Store(tmp_path / "p.db")
    cases = [f"c{n:03}" for n in range(300)]
    store.create_experiment(experiment_record(cases, 5, tools=("get",)))
    statuses = ["passed", "failed", "errored", "passed", "passed"]
    drawn = [(c, i, statuses[i - 1], 1, 1, 1, "live", None, 5) for c in cases for i in range(1, 6)]
    write(store, drawn)
    steps = itertools.count()
    store._db.set_progress_handler(lambda: next(steps) < 0, 10)
    held: list[tuple[int, int]] = []

    @contextlib.contextmanager
    def meanwhile() -> Iterator[Callable[[], bool]]:
        start = next(steps)
        yield lambda: busy
        held.append((start, next(steps)))

    start = next(steps)
    tallies = store.tallies("e1", meanwhile=meanwhile())
    end = next(steps)
    assert len(held) == 1
    inside = (held[0][1] - held[0][0]) / (end - start)
    assert inside >= 0.8 if busy else inside <= 0.5, inside
    assert tallies is not None and len(tallies.errored) == 300
    assert tallies == store.tallies("e1")


@pytest.mark.parametrize("as_json", [False, True])
def test_passhat_report_imports_while_sqlite_counts_but_not_for_json(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    as_json: bool,
) -> None:
    """Guards the command's use of `Store.tallies(meanwhile=...)`: the terminal report of
    a large experiment hands it the thread that imports the report's modules; a streamed
    `report --json` (for a pipe) none, as it reads every run's row afterwards, and rows
    cost more once a process has started a thread."""
    db = tmp_path / "p.db"
    store = Store(db)
    cases = [f"c{n:02}" for n in range(40)]
    store.create_experiment(experiment_record(cases, TALLIED_K, tools=("get",)))
    runs = range(1, TALLIED_K + 1)
    write(store, [(c, i, "passed", 1, 1, 1, "live", None, 5) for c in cases for i in runs])
    store.close()
    given: list[object] = []
    tallies = Store.tallies

    def watched(self: Store, experiment_id: str, **options: Any) -> Any:
        given.append(options.get("meanwhile"))
        return tallies(self, experiment_id, **options)

    monkeypatch.setattr(Store, "tallies", watched)
    result = run_cli(capsys, "report", "e1", "--db", str(db), "--no-why", *["--json"] * as_json)
    assert result.code == 0 and len(given) == 1
    assert (given[0] is None) == as_json
