"""Regression tests for defects a review found: each names what it guards."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from passhat.errors import ConfigError, StoreError
from passhat.models.replay import Cassette
from passhat.store import Store

pytest_plugins = ["fakeserver"]

ROOT = Path(__file__).resolve().parents[1]
TRELLO = ROOT / "examples" / "trello"


def test_the_agent_never_sees_the_goal_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    r = run_seed(
        capsys,
        "--agent",
        "agents_for_tests:peeks",
        "-k",
        "1",
        "--db",
        db,
        "-q",
    )
    assert r.code == 0, r.err
    with Store(db) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is False


def test_an_edited_cassette_is_another_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "clarify"
    shutil.copytree(CLARIFY, suite)
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys, "run", str(suite), "--case", SEED, "-k", "1", "--db", db, "-q", "--name", "tape"
    )
    assert r.code == 0, r.err
    cassette = suite / "cassettes" / "seed.jsonl"
    cassette.write_text(
        cassette.read_text(encoding="utf-8").replace('"ac": 5', '"ac": 6'), encoding="utf-8"
    )
    r = run_cli(capsys, "resume", "tape", "-k", "3", "--db", db)
    assert r.code == 2 and "model configuration.sha256" in r.err


def test_a_cassette_beside_the_suite_wins_over_one_in_the_working_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = tmp_path / "cassettes"
    decoy.mkdir()
    (decoy / "seed.jsonl").write_text('{"cassette": 1}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = run_seed(capsys, "--db", str(tmp_path / "p.db"), "-q")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        runs = store.runs(store.experiment("latest").id)
    assert [x.status for x in runs] == ["failed"] * 3  # the seed's answers, not errored ones


def test_an_edited_agent_file_changes_the_fingerprint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "trello"
    shutil.copytree(TRELLO, suite)
    db = str(tmp_path / "p.db")
    r = run_cli(capsys, "run", str(suite), "-k", "1", "--db", db, "-q", "--name", "cards")
    assert r.code == 0, r.err
    agent = suite / "card_writer.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    r = run_cli(capsys, "resume", "cards", "-k", "2", "--db", db)
    assert r.code == 2 and "agent source (hash)" in r.err


def test_one_process_runs_an_experiment_at_a_time(tmp_path: Path) -> None:
    with Store(tmp_path / "p.db") as store:
        from test_store import experiment

        store.create_experiment(experiment())
        db = sqlite3.connect(tmp_path / "p.db")
        db.execute(
            "INSERT INTO leases (experiment_id, pid, host, taken_at) VALUES ('e1', 1, ?, 'then')",
            (__import__("socket").gethostname(),),
        )
        db.commit()
        db.close()
        with pytest.raises(StoreError, match="is being run by process 1"), store.lease("e1"):
            pass  # pid 1 is alive: init
        db = sqlite3.connect(tmp_path / "p.db")
        db.execute("UPDATE leases SET pid = 2147483000")  # a pid that does not exist
        db.commit()
        db.close()
        with store.lease("e1"):  # a dead process's lease is taken over
            pass
        assert store._db.execute("SELECT count(*) FROM leases").fetchone()[0] == 0


def test_damaged_or_foreign_stores_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    assert run_seed(capsys, "--db", str(db), "-q", "-k", "1").code == 0
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET score = '{not json'")
    con.commit()
    con.close()
    r = run_cli(capsys, "report", "latest", "--db", str(db))
    assert r.code == 2 and "the store is damaged" in r.err and "Traceback" not in r.err

    foreign = tmp_path / "other.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = foreign.read_bytes()
    r = run_cli(capsys, "list", "--db", str(foreign))
    assert r.code == 2 and "not a passhat store" in r.err
    # `run` creates a store where none is, but never in someone's database (it added
    # passhat's tables to it), and neither command switches its journal to WAL first
    r = run_seed(capsys, "--db", str(foreign), "-q", "-k", "1")
    assert r.code == 2 and "not a passhat store" in r.err and "Traceback" not in r.err
    assert foreign.read_bytes() == before  # untouched: no table added, header as it was
    assert not (tmp_path / "other.db-wal").exists()
    # a file passhat made but never filled (its first migration cut short) is still its own
    empty = tmp_path / "empty.db"
    con = sqlite3.connect(empty)
    con.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    con.commit()
    con.close()
    assert run_seed(capsys, "--db", str(empty), "-q", "-k", "1").code == 0


@pytest.mark.parametrize("name", ["latest", "522333da", " "])
def test_names_that_read_as_ids_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    r = run_seed(capsys, "--db", str(tmp_path / "p.db"), "--name", name)
    assert r.code == 2 and "could be read as an experiment id" in r.err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"case": "c", "run": 1, "turn": 0, "message": {"role": "assistant", "content": "x"}}',
            "a second answer",
        ),
        (
            '{"case": "c", "run": 1, "turn": 1, "message": {"role": "user", "content": "x"}}',
            ":2: message.role",
        ),
        (
            '{"case": "c", "run": 1, "turn": 1, "message": {"role": "assistant", "content": {"a": 1}}}',
            ":2: message.content",
        ),
        ("[" * 100_000, ":2: not JSON"),
    ],
    ids=["duplicate", "not-assistant", "non-text", "deep-nesting"],
)
def test_bad_cassettes_are_refused(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "c.jsonl"
    good = '{"case": "c", "run": 1, "turn": 0, "message": {"role": "assistant", "content": "x"}}'
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        Cassette.load(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-turns", "-3"], "--max-turns is -3"),
        (["--max-turns", "0"], "--max-turns is 0"),
        (["--timeout", "0"], "--timeout is 0"),
        (["--retries", "-1"], "--retries is -1"),
        (["--concurrency", "0"], "--concurrency is 0"),
        (["--base-url", "https://user:sk-secret@proxy.example/v1"], "carries credentials"),
        (["--base-url", "http://127.0.0.1:8000/v1?api-key=sk"], "carries credentials"),
        (["--base-url", "localhost:8000"], "not an http(s) URL"),
    ],
    ids=[
        "turns-negative",
        "turns-zero",
        "timeout-zero",
        "retries-negative",
        "concurrency-zero",
        "url-userinfo",
        "url-query",
        "url-no-scheme",
    ],
)
def test_run_options_are_checked_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    db = tmp_path / "p.db"
    r = run_seed(capsys, "--db", str(db), *args)
    assert r.code == 2 and message in r.err, r.err
    assert "sk-secret" not in r.err
    assert not db.exists()


def test_suite_params_reach_the_model_and_resume_keeps_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server,  # type: ignore[no-untyped-def]
) -> None:
    from fakeserver import call

    suite = tmp_path / "clarify"
    shutil.copytree(CLARIFY, suite)
    yaml_file = suite / "suite.yaml"
    yaml_file.write_text(
        yaml_file.read_text(encoding="utf-8").replace(
            "  k: 3\n", "  k: 3\n  params: {temperature: 0.25}\n"
        ),
        encoding="utf-8",
    )
    for _ in range(2):
        fake_server.reply(
            tool_calls=[
                call(
                    "update_ticket",
                    {
                        "key": "SHOP-1042",
                        "goal": "g",
                        "scope_in": ["a"],
                        "scope_out": [],
                        "annotations": [],
                    },
                    id="c",
                )
            ]
        )
        fake_server.reply("done")
    db = str(tmp_path / "p.db")
    r = run_cli(
        capsys,
        "run",
        str(suite),
        "--case",
        SEED,
        "-k",
        "1",
        "--timeout",
        "60",
        "--name",
        "p",
        "--model",
        "openai:m",
        "--base-url",
        fake_server.openai_url,
        "--db",
        db,
        "-q",
    )
    assert r.code == 0, r.err
    assert fake_server.requests[0].body["temperature"] == 0.25
    r = run_cli(capsys, "resume", "p", "-k", "2", "--db", db, "-q")
    assert r.code == 0, r.err
    assert fake_server.requests[-1].body["temperature"] == 0.25
    with Store(db) as store:
        e = store.experiment("p")
        assert e.params["timeout_s"] == 60 and e.params["base_url"] == fake_server.openai_url
        assert len(store.runs(e.id)) == 2


def test_json_report_lists_missing_runs_even_with_none_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from passhat.agents import resolve_agent
    from passhat.runner import new_experiment
    from passhat.suite import load_suite

    suite = load_suite(CLARIFY)
    db = tmp_path / "p.db"
    with Store(db) as store:
        e = new_experiment(
            suite, resolve_agent("clarifier"), "", None, k=2, params={}, name="empty"
        )
        store.create_experiment(e)
    r = run_cli(capsys, "report", "empty", "--db", str(db), "--json")
    data = json.loads(r.out)
    assert data["dataset"] is None and data["accounting"]["runs_missing"] == 2 * len(suite.cases)
    assert data["cases"][0]["missing"] == [1, 2]


def test_a_run_index_far_beyond_any_plan_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text('{"case": "b", "run": 50000000, "status": "failed"}\n', encoding="utf-8")
    r = run_cli(capsys, "metrics", str(path))
    assert r.code == 2 and "probably a typo" in r.err


def test_unwritable_outputs_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    assert run_seed(capsys, "--db", db, "-q", "-k", "1").code == 0
    r = run_cli(
        capsys, "cassette", "latest", "-o", str(tmp_path / "no" / "dir" / "c.jsonl"), "--db", db
    )
    assert r.code == 2 and "cannot write" in r.err
    r = run_cli(capsys, "report", "latest", "--html", str(tmp_path), "--db", db)
    assert r.code == 2 and "cannot write" in r.err


def test_a_cassette_of_runs_that_asked_no_model_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    assert run_seed(capsys, "--agent", "agents_for_tests:perfect", "--db", db, "-q").code == 0
    tape = tmp_path / "c.jsonl"
    r = run_cli(capsys, "cassette", "latest", "-o", str(tape), "--db", db)
    assert r.code == 2 and "holds no model answer" in r.err and not tape.exists()
    # was "none asked a model", said too of runs whose every model call failed
    assert "none of its 3 runs (of kind 'run') has a model answer in its transcript" in r.err


def test_a_cassette_that_lacks_answers_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_seed(
        capsys,
        "--case",
        "clean-order-tracking-002",
        "-k",
        "1",
        "--db",
        str(tmp_path / "p.db"),
    )
    assert r.code == 0
    assert "has no answer for 1 of 2 runs (cases: clean-order-tracking-002)" in r.err


def test_a_repeated_extra_counts_its_run_once() -> None:
    from passhat.analysis import item_stability
    from passhat.records import RunRecord

    detail = {
        "scorer": "exact_set",
        "path": "cards.0.labels",
        "expected": [],
        "missing": [],
        "extra": ["bug", "bug"],
    }
    runs = [
        RunRecord("e", "c", 1, "h", "failed", score=[detail]),
        RunRecord("e", "c", 2, "h", "passed", score=[{**detail, "extra": []}]),
    ]
    (extra,) = item_stability(runs)
    assert extra.hits == (1,) and extra.verdict == "extra, sometimes"
