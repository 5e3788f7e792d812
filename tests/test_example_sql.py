"""examples/sql: a user's SQLite world on the Environment protocol, run from its cassette."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import ROOT, run_cli
from passhat.env import make_environment
from passhat.store import Store
from passhat.suite import load_suite

SQL = ROOT / "examples" / "sql"


def test_the_sql_example_runs_from_its_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "run", str(SQL), "--db", str(tmp_path / "p.db"), "-q")
    assert r.code == 0, r.err
    with Store(tmp_path / "p.db") as store:
        experiment = store.experiment("latest")
        runs = store.runs(experiment.id)
    assert experiment.environment_hash is not None
    assert experiment.tools == ("query", "insert_answer", "glossary")
    status = {(x.case_id, x.run_index): x.status for x in runs}
    assert status == {
        ("active-customers", 1): "passed",
        ("active-customers", 2): "failed",  # never read the glossary: Linus is not active
        ("active-customers", 3): "passed",
        ("big-spenders", 1): "passed",
        ("big-spenders", 2): "passed",
        ("big-spenders", 3): "failed",  # >= 100 where the question says more than 100
    }
    first = next(x for x in runs if (x.case_id, x.run_index) == ("big-spenders", 1))
    # the query really ran on this run's own SQLite database
    assert first.tool_calls[0]["result"] == {
        "columns": ["customer", "total"],
        "rows": [["Ada", 150], ["Grace", 230]],
    }
    assert first.final_state == {
        "answer": [{"customer": "Ada", "total": 150}, {"customer": "Grace", "total": 230}]
    }
    failed = next(x for x in runs if (x.case_id, x.run_index) == ("big-spenders", 3))
    assert failed.score[0]["extra"] == ["Linus=100"]


async def test_the_sql_world_refuses_writes_through_query_and_wrong_answer_columns() -> None:
    suite = load_suite(SQL)
    env = make_environment(suite, suite.case("big-spenders"))
    try:
        write = await env.call("query", {"sql": "DELETE FROM orders"})
        assert write.is_error and write.text().startswith("query failed: attempt to write")
        rows = await env.call("query", {"sql": "SELECT COUNT(*) AS n FROM orders"})
        assert rows.content == {"columns": ["n"], "rows": [[6]]}
        wrong = await env.call("insert_answer", {"rows": [{"name": "Ada", "total": 1}]})
        assert wrong.is_error and "nothing was written" in wrong.text()
        assert env.final_state() == {"answer": []}
    finally:
        env.close()
