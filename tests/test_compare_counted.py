"""`passhat compare` counts each stored side in SQL (`Store.tallies`, `digest.tallied`) as
`report --json` does: the same accounting and token usage as streaming every run's status
and tokens (`account`, `usage_of`), which it falls back to where SQL cannot count them."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passhat.accounting import account
from passhat.cli.compare import _counted
from passhat.errors import PasshatError
from passhat.records import RunRecord
from passhat.store import Store
from passhat.usage import Prices, usage_of
from records_for_tests import experiment_record
from test_report_tallies import RUN, write

PRICES = Prices(3.0, 15.0)


def streamed(store: Store, eid: str, prices: Prices | None) -> tuple[Any, Any]:
    """The accounting and usage as compare made them before: every run streamed."""
    e = store.experiment(eid)
    accounting = account(store.statuses(eid), e.k_requested, e.case_ids, e.case_k)
    return accounting, usage_of(store.tokens(eid), prices)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(RUN, min_size=1, max_size=40, unique_by=lambda r: (r[0], r[1])),
    st.lists(st.sampled_from(["c1", "c3", "c9", "c10"]), unique=True),
    st.sampled_from([6, 8]),
    st.booleans(),
    st.sampled_from([None, PRICES]),
)
def test_counted_in_sql_as_streaming_every_run(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: list[tuple[Any, ...]],
    planned: list[str],
    k: int,
    hold: bool,
    prices: Prices | None,
) -> None:
    """Runs with gaps, planned cases without runs, cases held at a smaller k, errored and
    retried runs: the same accounting (errored run indices, missing runs) and usage; a
    run beyond its case's k is the same error."""
    store = Store(tmp_path_factory.mktemp("counted") / "p.db")
    store.create_experiment(experiment_record(planned, k, tools=("get", "put")))
    if hold:  # an adaptive round asked c2 for fewer runs
        store.hold_cases("e1", k + 1, {"c2": 5})
    write(store, drawn)
    try:
        expected = streamed(store, "e1", prices)
    except PasshatError as error:
        with pytest.raises(type(error), match=str(error)[:40]):
            _counted(store, store.experiment("e1"), prices)
        return
    assert _counted(store, store.experiment("e1"), prices) == expected
    store.close()


def small_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "p.db")
    store.create_experiment(experiment_record(["a", "b", "c"], 3))
    store.record_runs(
        [
            RunRecord("e1", case, i, "h", status, input_tokens=10 * i, output_tokens=i)
            for case, status in [("a", "passed"), ("b", "failed"), ("c", "errored")]
            for i in (1, 2)
        ]
    )
    return store


def test_no_run_is_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sound store is counted in SQL: no run's status or tokens taken into Python."""
    store = small_store(tmp_path)
    expected = streamed(store, "e1", PRICES)
    for name in ("statuses", "tokens"):
        monkeypatch.setattr(store, name, lambda *_, name=name: pytest.fail(f"{name} read"))
    assert _counted(store, store.experiment("e1"), PRICES) == expected
    tallies = store.tallies("e1", parts=False, errored_runs=False)
    assert tallies is not None and tallies.errored == []
    assert tallies.errored_at == {"c": [1, 2]}


def test_a_token_count_not_whole_is_summed_as_streamed(tmp_path: Path) -> None:
    """A real number written by hand into a token column: summed as a float, as
    streaming did (SQL's per-case totals are whole numbers: 2.5 would lose its half)."""
    store = small_store(tmp_path)
    store.close()
    with sqlite3.connect(tmp_path / "p.db") as db:
        db.execute("UPDATE runs SET input_tokens = 2.5 WHERE case_id = 'a' AND run_index = 1")
    db.close()
    store = Store(tmp_path / "p.db")
    expected = streamed(store, "e1", None)
    assert not store.whole_tokens("e1")
    counted = _counted(store, store.experiment("e1"), None)
    assert counted == expected
    assert repr(counted[1]) == repr(expected[1])  # 82.5, a float (82 == 82.0 would pass)
    assert expected[1].input_tokens == 82.5
