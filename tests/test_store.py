"""passhat.store: migrations, whole runs, never twice, experiment lookup."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from passhat.errors import StoreError
from passhat.records import ExperimentRecord, RunRecord
from passhat.store import MIGRATIONS, Store


def experiment(
    id: str = "e1", name: str | None = None, created: str = "2026-01-01T00:00:00Z"
) -> ExperimentRecord:
    return ExperimentRecord(
        id=id,
        name=name,
        created_at=created,
        suite_name="s",
        suite_path="/x",
        suite_hash="h",
        agent="clarifier",
        model="replay:x.jsonl",
        model_config={"provider": "replay"},
        params={"max_turns": 5},
        prompt_version="abc",
        k_requested=3,
        seed=1,
        harness_version="0",
        fingerprint="f",
        case_ids=("a", "b"),
        case_hashes={"a": "ha", "b": "hb"},
        tools=("get_ticket",),
    )


def run(case: str = "a", index: int = 1, status: str = "passed") -> RunRecord:
    return RunRecord(
        experiment_id="e1",
        case_id=case,
        run_index=index,
        case_hash="ha",
        status=status,  # type: ignore[arg-type]
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "p.db")
    s.create_experiment(experiment())
    yield s
    s.close()


def test_wal_and_recorded_migrations(store: Store) -> None:
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    names = store.migrations()
    assert names[0] == "create experiments and runs" and len(names) == len(MIGRATIONS)
    store.close()
    again = Store(store.path)  # reopening applies nothing twice
    assert again.migrations() == names
    again.close()


def test_a_new_store_goes_into_wal_at_synchronous_normal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """e2e55: the switch of a new store into WAL writes its first page through a rollback
    journal; at SQLite's default (FULL) that synced once more than at NORMAL, what the
    store runs at anyway (4 fsyncs, not 3, before `passhat run`'s first run). So NORMAL
    is asked for first, and kept."""
    said: list[str] = []
    opened = Store._open

    def traced(self: Store, target: str, *, uri: bool) -> sqlite3.Connection:
        db = opened(self, target, uri=uri)
        db.set_trace_callback(said.append)
        return db

    monkeypatch.setattr(Store, "_open", traced)
    store = Store(tmp_path / "p.db")
    pragmas = [s for s in said if s.startswith("PRAGMA synchronous") or "journal_mode" in s]
    assert pragmas[:2] == ["PRAGMA synchronous=NORMAL", "PRAGMA journal_mode=WAL"]
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    store.close()


def test_the_digest_of_passhats_own_triggers_and_views_is_the_migrations() -> None:
    """OURS_DIGEST is what the migrations make: a migration that adds, drops or rewrites a
    trigger or view changes it (stale, every store would be checked the slow way)."""
    from passhat.store.schema import OURS_DIGEST, _digest, _ours

    assert _digest(_ours()) == OURS_DIGEST, f"set OURS_DIGEST to {_digest(_ours())!r}"


def test_opening_a_store_of_passhats_own_builds_no_schema_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """e2e55: a store holding passhat's own triggers and views, and no other, is known
    from their digest: `_ours` (every migration run in an in-memory database, 3-4 ms
    of every command that opens a store) is built only for a store that differs."""
    from passhat.store import schema

    def built() -> frozenset[tuple[str, str, str]]:
        raise AssertionError("_ours was built")

    monkeypatch.setattr(schema, "_ours", built)
    Store(tmp_path / "p.db").close()  # made
    Store(tmp_path / "p.db").close()  # opened
    Store(tmp_path / "p.db", read_only=True).close()


def test_a_trigger_planted_in_a_store_is_still_refused(tmp_path: Path) -> None:
    """The digest is a shortcut for the usual case only: a store holding a trigger
    passhat did not make differs from it, and is refused naming the trigger."""
    Store(tmp_path / "p.db").close()
    db = sqlite3.connect(tmp_path / "p.db")
    db.execute("CREATE TRIGGER all_pass AFTER INSERT ON runs BEGIN SELECT 1; END")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="holds trigger all_pass, which passhat did not make"):
        Store(tmp_path / "p.db")


def test_a_store_from_before_a_migration_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for statement in MIGRATIONS[0][1].split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("INSERT INTO migrations VALUES (1, 'create experiments and runs', 'then')")
    db.commit()
    db.close()
    with Store(path, create=False) as s:
        assert len(s.migrations()) == len(MIGRATIONS)
        s.create_experiment(experiment())
        assert s.experiment("e1").agent_hash is None


def test_experiment_round_trip_and_lookup(store: Store) -> None:
    store.create_experiment(experiment("e2", name="second", created="2026-02-01T00:00:00Z"))
    assert store.experiment("e1") == experiment()
    assert store.experiment("second").id == "e2"
    assert store.experiment("latest").id == "e2"
    with pytest.raises(StoreError, match=r"no experiment .nope.*`passhat list`"):
        store.experiment("nope")
    with pytest.raises(StoreError, match="named 'second' exists already"):
        store.create_experiment(experiment("e3", name="second"))


def test_latest_on_empty_store(tmp_path: Path) -> None:
    with Store(tmp_path / "empty.db") as s, pytest.raises(StoreError, match="no experiment yet"):
        s.experiment("latest")


def test_the_same_run_is_never_recorded_twice(store: Store) -> None:
    store.record_run(run())
    with pytest.raises(StoreError, match="already recorded"):
        store.record_run(run(status="failed"))
    assert [r.status for r in store.runs("e1")] == ["passed"]


def test_k_can_be_raised(store: Store) -> None:
    store.set_k("e1", 5)
    assert store.experiment("e1").k_requested == 5


def test_cases_held_by_an_adaptive_rule_keep_their_k_until_resume_raises_every_case(
    store: Store,
) -> None:
    store.hold_cases("e1", 6, {"b": 3})
    held = store.experiment("e1")
    assert held.k_requested == 6 and dict(held.case_k) == {"b": 3}
    assert held.k_of("a") == 6 and held.k_of("b") == 3 and held.runs_requested == 9
    assert [dict(e.case_k) for e in store.experiments()] == [{"b": 3}]
    with pytest.raises(StoreError, match="not below the new k"):
        store.hold_cases("e1", 6, {"b": 6})
    store.set_k("e1", 8)  # resume -k: every case is asked 8 again
    assert dict(store.experiment("e1").case_k) == {} and store.experiment("e1").runs_requested == 16


def test_adaptive_records_are_kept_with_the_experiment_in_order(store: Store) -> None:
    store.add_adaptive("e1", {"mode": "width", "runs_spent": 4})
    store.add_adaptive("e1", {"mode": "decided", "runs_spent": 2})
    assert [r["mode"] for r in store.adaptive("e1")] == ["width", "decided"]
    assert [r["runs_spent"] for r in store.experiment("e1").adaptive] == [4, 2]
    assert store.experiments()[0].adaptive == store.experiment("e1").adaptive
    store.create_experiment(experiment("e2", name="other", created="2026-02-01T00:00:00Z"))
    assert store.experiment("other").adaptive == ()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO migrations VALUES (99, 'future', 'now')")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer passhat"):
        Store(path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a passhat database"):
        Store(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=40, deadline=None)
@given(
    status=st.sampled_from(["passed", "failed", "errored"]),
    state=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    output=json_values,
    tokens=st.integers(0, 10**6),
    text=st.text(max_size=50),
)
def test_runs_round_trip_whole(
    tmp_path_factory: pytest.TempPathFactory,
    status: str,
    state: dict,
    output: object,
    tokens: int,
    text: str,
) -> None:
    with Store(tmp_path_factory.mktemp("rt") / "p.db") as s:
        s.create_experiment(experiment())
        record = replace(
            run(status=status),
            output=output,
            final_state=state,
            transcript=[{"role": "assistant", "content": text}],
            input_tokens=tokens,
            error_message=text or None,
        )
        s.record_run(record)
        assert s.run("e1", "a", 1) == record
        light = s.runs("e1", full=False)[0]
        assert light.final_state == {} and light.status == record.status


def test_an_experiment_stored_before_kinds_existed_reads_as_a_run(tmp_path: Path) -> None:
    """Regression (issue #12): the kind/source migration keeps older rows readable."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for version, (name, sql) in enumerate(MIGRATIONS[:2], start=1):
        for statement in sql.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO migrations VALUES (?, ?, 'then')", (version, name))
    db.execute(
        "INSERT INTO experiments (id, name, created_at, suite_name, suite_path, suite_hash, agent, "
        "model, model_config, params, prompt_version, k_requested, seed, harness_version, "
        "fingerprint, case_ids, case_hashes, tools) VALUES ('e1', NULL, 't', 's', '/x', 'h', "
        "'clarifier', 'm', '{}', '{}', NULL, 3, 1, '0', 'f', '[\"a\"]', '{}', '[]')"
    )
    db.commit()
    db.close()
    with Store(path, create=False) as s:
        old = s.experiment("e1")
        assert (old.kind, old.source) == ("run", None)


def test_an_experiment_with_its_runs_lands_whole_or_not_at_all(store: Store) -> None:
    imported = replace(experiment("e2", name="imp"), kind="imported", source={"tool": "inspect"})
    runs = [replace(run(), experiment_id="e2"), replace(run(index=2), experiment_id="e2")]
    assert store.add_experiment_with_runs(imported, runs) == 2
    assert store.experiment("imp").source == {"tool": "inspect"}
    assert len(store.runs("e2")) == 2
    twice = [replace(run(), experiment_id="e3"), replace(run(), experiment_id="e3")]
    with pytest.raises(StoreError, match="nothing was written"):
        store.add_experiment_with_runs(experiment("e3", name="dup"), twice)
    with pytest.raises(StoreError, match="no experiment 'dup'"):
        store.experiment("dup")
    assert store.runs("e3") == []


# run_summaries: what a report reads, kept beside the runs by triggers

detail_values = st.lists(st.text(max_size=6), max_size=3)
details = st.one_of(
    st.fixed_dictionaries(
        {"scorer": st.text(max_size=6), "passed": st.booleans(), "expected": detail_values},
        optional={
            "path": st.text(max_size=6),
            "missing": detail_values,
            "extra": detail_values,
            "actual": detail_values,
            "note": st.text(max_size=6),
        },
    ),
    st.fixed_dictionaries({"scorer": st.just("present"), "passed": st.booleans()}),
)
calls = st.fixed_dictionaries(
    {
        "tool": st.sampled_from(["get_ticket", "update_ticket", "query_background"]),
        "arguments": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
        "error": st.one_of(st.none(), st.just(""), st.text(max_size=8)),
    }
)


def summary_of(record: RunRecord) -> tuple[object, ...]:
    """What `Store.summaries` must give for a record: `records` projections in Python."""
    return (
        record.case_id,
        record.run_index,
        record.status,
        record.error_type,
        record.error_message,
        record.duration_s,
        record.input_tokens,
        record.output_tokens,
        record.model_source,
        record.attempt,
        record.graded_items,
        record.tool_counts,
    )


def summary_tuple(s: object) -> tuple[object, ...]:
    names = [
        "case_id",
        "run_index",
        "status",
        "error_type",
        "error_message",
        "duration_s",
        "input_tokens",
        "output_tokens",
        "model_source",
        "attempt",
        "graded_items",
        "tool_counts",
    ]
    return tuple(getattr(s, n) for n in names)


@settings(max_examples=40, deadline=None)
@given(score=st.lists(details, max_size=3), tool_calls=st.lists(calls, max_size=5))
# found by hypothesis: SQL text of "\x00" compared equal to '', so the error went uncounted
@example(score=[], tool_calls=[{"tool": "get_ticket", "arguments": {}, "error": "\x00"}])
def test_summaries_are_the_projections_of_the_whole_runs(
    tmp_path_factory: pytest.TempPathFactory, score: list, tool_calls: list
) -> None:
    """SQLite's JSON functions (the trigger) compute what `records.graded_items` and
    `records.tool_counts` compute in Python: a report reads the same numbers either way."""
    with Store(tmp_path_factory.mktemp("sum") / "p.db") as s:
        s.create_experiment(experiment())
        record = replace(
            run(status="failed"),
            score=score,
            tool_calls=tool_calls,
            duration_s=0.5,
            model_source="replayed",
        )
        s.record_run(record)
        (summary,) = s.summaries("e1")
        assert summary_tuple(summary) == summary_of(record)


SCORES = [[], [{"scorer": "exact_set", "passed": True, "expected": ["x"], "missing": []}]]
CALLS = [[], [{"tool": "get_ticket", "arguments": {}, "error": None}]]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("ab"), st.integers(0, 1), st.integers(0, 1)),
        max_size=12,
    )
)
def test_summaries_of_many_runs_are_each_one_s_projection(
    tmp_path_factory: pytest.TempPathFactory, runs: list[tuple[str, int, int]]
) -> None:
    """Guards `summaries` taking a value equal to the row before's from it: runs of
    several cases whose results and tool counts change, stay and come back give each
    run's own projection, in (case, index) order."""
    records = [
        replace(run(case=case, index=index), score=SCORES[score], tool_calls=CALLS[calls])
        for index, (case, score, calls) in enumerate(runs, start=1)
    ]
    with Store(tmp_path_factory.mktemp("many") / "p.db") as s:
        s.create_experiment(replace(experiment(), k_requested=max(1, len(runs))))
        for record in records:
            s.record_run(record)
        got = [summary_tuple(x) for x in s.summaries("e1")]
        lazy = s.summaries("e1", decode_items=False)
        unread = s.summaries("e1", read_items=False)
        first = min((case for case, _, _ in runs), default="a")
        chosen = [summary_tuple(x) for x in s.summaries("e1", cases=[first, "none such"])]
    ordered = sorted(records, key=lambda r: (r.case_id, r.run_index))
    assert got == [summary_of(r) for r in ordered]
    # read lazily: whether a run has items without decoding them, then the same values
    assert [bool(x.graded_items) for x in lazy] == [bool(r.graded_items) for r in ordered]
    assert [summary_tuple(x) for x in lazy] == got
    # not read: whether a run has items, every other field the same
    assert [bool(x.graded_items) for x in unread] == [bool(r.graded_items) for r in ordered]
    assert [x._replace(graded_items=[]) for x in unread] == [
        x._replace(graded_items=[]) for x in lazy
    ]
    assert chosen == [x for x in got if x[0] == first]  # the runs of some cases


def test_items_read_lazily_are_decoded_when_read_and_damage_is_still_said(store: Store) -> None:
    """Was: the terminal report decoded every run's per-item results to list those of
    30 cases (at 100,000 runs of cases with their own items, 0.1 s of 0.7)."""
    detail = {"scorer": "exact_set", "passed": True, "expected": ["x"], "missing": []}
    store.record_run(replace(run(index=1), score=[detail]))
    store.record_run(replace(run(index=2), score=[]))
    one, two = store.summaries("e1", decode_items=False)
    assert one.graded_items == [detail] and len(one.graded_items) == 1 and not two.graded_items
    assert one.graded_items[0] == detail and list(one.graded_items[:1]) == [detail]
    with store.atomic() as db:  # damaged where only a read would see it
        db.execute("UPDATE run_summaries SET items = '[not json' WHERE run_index = 1")
    one, _ = store.summaries("e1", decode_items=False)  # nothing decoded: nothing said yet
    assert one.graded_items
    with pytest.raises(StoreError, match="items of run 1 of 'a' is not JSON"):
        list(one.graded_items)
    with pytest.raises(StoreError, match="the store is damaged"):
        store.summaries("e1")  # decoding every run says it at once
    with store.atomic() as db:  # a score that is not JSON: its items are not a list
        db.execute("UPDATE runs SET score = '{not json' WHERE run_index = 1")
    for unread in (False, True):
        with pytest.raises(StoreError, match="the store is damaged"):
            store.summaries("e1", decode_items=False, read_items=not unread)


def test_items_left_unread_are_true_and_never_read(store: Store) -> None:
    """`summaries(read_items=False)` says which runs have per-item results and reads
    none: reading them then is the caller's mistake, said, never an empty list."""
    detail = {"scorer": "exact_set", "passed": True, "expected": ["x"], "missing": []}
    store.record_run(replace(run(index=1), score=[detail]))
    store.record_run(replace(run(index=2), score=[]))
    one, two = store.summaries("e1", read_items=False)
    assert one.graded_items and two.graded_items == [] and not two.graded_items
    for read in (list, len, lambda items: items[0]):
        with pytest.raises(TypeError, match="per-item results not read"):
            read(one.graded_items)


def test_summaries_share_equal_values_and_follow_updates_and_deletes(store: Store) -> None:
    detail = {"scorer": "exact_set", "passed": True, "expected": ["x"], "missing": []}
    for index in (1, 2):
        store.record_run(replace(run(index=index), score=[detail, {"scorer": "present"}]))
    store.record_run(replace(run(index=3, status="errored"), error_type="timeout"))
    one, two, three = store.summaries("e1")
    assert one.graded_items == [detail] and one.graded_items is two.graded_items
    assert three.graded_items == [] and three.error_type == "timeout" and not three.counted
    with store.atomic() as db:  # a regrade rewrites a run in place; a resume may drop one
        db.execute("UPDATE runs SET status = 'failed', score = '[]' WHERE run_index = 1")
        db.execute("DELETE FROM runs WHERE run_index = 3")
    first, second = store.summaries("e1")
    assert (first.status, first.graded_items, second.status) == ("failed", [], "passed")


def test_a_store_from_before_run_summaries_is_backfilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = next(i for i, (name, _) in enumerate(MIGRATIONS) if name.startswith("run_summaries"))
    detail = {"scorer": "exact_set", "passed": False, "expected": ["x", "y"], "missing": ["y"]}
    calls = [{"tool": "get_ticket", "error": None}, {"tool": "get_ticket", "error": "no"}]
    records = [
        replace(run(index=1, status="failed"), score=[detail], tool_calls=calls),
        replace(run(case="b", index=2, status="errored"), error_message="boom"),
    ]
    monkeypatch.setattr("passhat.store.schema.MIGRATIONS", MIGRATIONS[:index])
    with Store(tmp_path / "old.db") as old:
        old.create_experiment(experiment())
        for record in records:
            old.record_run(record)
    monkeypatch.undo()
    with Store(tmp_path / "old.db", create=False) as s:
        assert [summary_tuple(x) for x in s.summaries("e1")] == [summary_of(r) for r in records]
        assert s.summaries("e1")[0].tool_counts == {"get_ticket": (2, 1)}


def test_a_damaged_score_is_reported_not_hidden(store: Store) -> None:
    store.record_run(run())
    with store.atomic() as db:
        db.execute("UPDATE runs SET score = '{not json'")
    with pytest.raises(StoreError, match="the store is damaged"):
        store.summaries("e1")


def test_abandoned_calls_are_counted_from_the_runs_with_retries_or_errors_alone(
    store: Store,
) -> None:
    """The retries sit after the transcript in a row: the count reads the runs that have
    some, and the errored ones for a last call given up (partial indexes), not every
    run's row (at 100,000 runs it cost `passhat report` 0.25 s of CPU)."""
    from passhat.store.reads import _ABANDONED_RETRIES, _GAVE_UP

    retries = [{"attempt": 1, "abandoned": True}, {"attempt": 2, "abandoned": False}]
    store.record_run(replace(run(index=1), retries=retries))
    store.record_run(run(index=2))
    assert store.abandoned_calls("e1") == 1
    gave_up = "model_error: TimeoutError: no response within 60 s"
    store.record_run(replace(run(index=3, status="errored"), error_type="model_error"))
    store.record_run(
        replace(run(case="b", status="errored"), error_type="model_error", error_message=gave_up)
    )
    assert store.abandoned_calls("e1") == 2
    for sql, index in [
        (_ABANDONED_RETRIES, "runs_retried"),
        (_GAVE_UP.format(source="run_summaries INDEXED BY run_summaries_errored"), "errored"),
    ]:
        plan = store._db.execute("EXPLAIN QUERY PLAN " + sql, ("e1",)).fetchall()
        assert any("USING INDEX" in row[-1] and index in row[-1] for row in plan), plan


def test_abandoned_calls_counted_from_runs_already_read_equal_those_read_again(
    store: Store,
) -> None:
    """A report passes the runs it read: the errored runs that gave up on a call are
    counted from them as SQLite's LIKE counts them (ASCII letters folded alone)."""
    messages = [
        "model_error: TimeoutError: no response within 60 s",
        "model_error: TimeoutError: NO Response Within 60 s",  # LIKE folds ASCII
        "model_error: TimeoutError: no respon\u017fe within 60 s",  # long s: not folded
        "model_error: TimeoutError: no response in 60 s",
        None,
    ]
    for index, message in enumerate(messages, start=1):
        errored = replace(run(index=index, status="errored"), error_type="model_error")
        store.record_run(replace(errored, error_message=message))
    store.record_run(
        replace(run(case="b", status="errored"), error_type="tool_error", error_message=messages[0])
    )
    store.record_run(run(case="c"))
    assert store.abandoned_calls("e1") == 2
    assert store.abandoned_calls("e1", store.summaries("e1")) == 2
    errored = store.summaries("e1", read_items=False, errored_only=True)
    assert store.abandoned_calls("e1", errored) == 2
    assert store.abandoned_calls("e1", []) == 0  # none passed: none counted from them


def _open_each(folder: str, count: int, start: Any, said: Any) -> None:
    """A process of the race: at each round, with the other, open a new store."""
    failures = []
    for n in range(count):
        start.wait()
        try:
            Store(Path(folder) / f"{n}.db").close()
        except Exception as error:  # told to the test, whatever it is
            failures.append(f"store {n}: {type(error).__name__}: {error}")
    said.put(failures)


def test_two_processes_making_the_same_new_store_at_once_both_open_it(tmp_path: Path) -> None:
    """Two processes that open one new store at the same moment (two `passhat run`s
    started together on a fresh --db) both read an empty `migrations` table, then each
    applied migration 1 in turn: the second failed with "table experiments already
    exists"; or, at once, "locked for more than 30 s" (journal_mode=WAL, which SQLite
    does not wait for). A migration is now applied only if still missing once its write
    lock is held, and WAL is asked for again until the busy timeout. 60 rounds, two real
    processes, each round a new file (fix49a; seen failing on main at 14e7e39)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    rounds = 60
    start = context.Barrier(2)
    said = context.Queue()
    racers = [
        context.Process(target=_open_each, args=(str(tmp_path), rounds, start, said))
        for _ in range(2)
    ]
    for racer in racers:
        racer.start()
    failures = [*said.get(timeout=300), *said.get(timeout=300)]
    for racer in racers:
        racer.join(timeout=60)
    assert failures == [], "\n".join(failures)
    for n in range(rounds):
        with Store(tmp_path / f"{n}.db", create=False) as store:
            assert len(store.migrations()) == len(MIGRATIONS)


def test_a_store_made_by_another_process_between_two_reads_of_the_check_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race above, made certain at one step. The check that a file is passhat's read
    its table names (only `migrations`: another process has begun making the store),
    then whether `migrations` is empty; that other process's first migration committed
    in between, so the table was no longer empty and a store was refused as "not a
    passhat store". The check's reads are now one snapshot. (Seen failing without it.)"""
    from passhat.store import connection
    from passhat.store.schema import _statements

    path = tmp_path / "p.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute(
        "CREATE TABLE migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )

    committed: list[bool] = []

    def first_migration_committed(statement: str) -> None:
        if "FROM migrations LIMIT 1" in statement and not committed:
            committed.append(True)
            name, sql = MIGRATIONS[0]
            other.execute("BEGIN IMMEDIATE")
            for part in _statements(sql):
                other.execute(part)
            other.execute("INSERT INTO migrations VALUES (1, ?, 'now')", (name,))
            other.execute("COMMIT")

    opened = connection._Connection._open

    def traced(self: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = opened(self, *args, **kwargs)
        db.set_trace_callback(first_migration_committed)
        return db

    monkeypatch.setattr(connection._Connection, "_open", traced)
    try:
        with Store(path) as store:
            assert len(store.migrations()) == len(MIGRATIONS)
    finally:
        other.close()
    assert committed  # the other process's commit came between the two reads
