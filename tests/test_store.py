"""passhat.store: migrations, whole runs, never twice, experiment lookup."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
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
