"""Text a model, an agent or a user hands passhat is written to the store whatever it
holds (round 14's attack on what passhat writes and shows).

A lone surrogate (`"\\ud800"` is valid JSON: a model's reply, a judge's answer, a replay
cassette's line all decode to one) is no UTF-8: SQLite cannot hold it. The JSON columns
escaped it (store/columns.json_safe), the text columns did not: a judge answering one
without a verdict line, quoted in the run's error message, ended `passhat run` in a
UnicodeEncodeError traceback from the store's writer, the runs of the same commit lost
with it, and every `resume` ended the same way. Now every text column's value is
escaped as the JSON columns' are (`\\ud800` written out), the run recorded.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cli_helpers import run_cli
from passhat.store import Store
from test_report_html import errored, experiment, run
from test_scorers_more import RUBRIC, _judge_line, write_suite

LONE = "\ud800"


def test_a_judge_answering_a_lone_surrogate_errs_its_run_not_the_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        tmp_path / "s",
        [{"judge": RUBRIC, "model": "replay:judge.jsonl"}],
        [_judge_line(1, "VERDICT: PASS"), _judge_line(2, f"unsure {LONE} here")],
    )
    assert '"unsure \\ud800 here"' in (suite / "judge.jsonl").read_text()  # valid JSON
    result = run_cli(capsys, "run", str(suite), "--db", str(tmp_path / "p.db"), "-q")
    assert result.code == 0, result.err
    with Store(tmp_path / "p.db") as store:
        runs = store.runs(store.experiment("latest").id)
    assert [x.status for x in runs] == ["passed", "errored"]
    assert (runs[1].error_message or "").endswith("line: unsure \\ud800 here")


def test_every_text_column_of_a_batch_is_written_with_its_lone_surrogates_escaped(
    tmp_path: Path,
) -> None:
    e = experiment(["a", "b"], k=1, name=f"name{LONE}")
    good = run("a", 1, ["x"], ["x"])
    bad = replace(
        errored("b", 1, message=f"agent said {LONE}"),
        error_type=f"crash{LONE}",
        stderr=f"tail {LONE}",
        traceback=f"Traceback: {LONE}",
    )
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(e)
        store.record_runs([good, bad])  # one commit: neither lost to the other
        runs = store.runs(e.id)
        assert store.experiment(e.id).name == "name\\ud800"
    assert [(x.case_id, x.status) for x in runs] == [("a", "passed"), ("b", "errored")]
    written = runs[1]
    assert (written.error_type, written.error_message, written.stderr, written.traceback) == (
        "crash\\ud800",
        "agent said \\ud800",
        "tail \\ud800",
        "Traceback: \\ud800",
    )
