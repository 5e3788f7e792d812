"""An outside review of round 9's merged code (review47): each test here failed on main
at 055a185 before the fix beside it, or is an xfail(strict=True) naming what is not
fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from passhat.store import Store
from records_for_tests import experiment_record
from test_report_json_stream import unkind


def test_streamed_json_case_tokens_past_two_to_the_53(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report --json` for a pipe (streamed at every size since STREAMED_RUNS = 0) wrote
    each case's token totals from `Store.tallies`, which sums them in SQL as floats
    (`total`): past 2**53 a case's input_tokens came out rounded (27021597764222976
    against the run-by-run 27021597764222979) and no longer added up to the
    experiment's own total, which is summed exactly."""
    import passhat.cli.read as read

    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment_record(["a", "b"], 3))
        store.record_runs(
            [
                unkind("e1", case, i, "passed", input_tokens=2**53 + 1)
                for case in ("a", "b")
                for i in (1, 2, 3)
            ]
        )
    db = str(tmp_path / "p.db")
    monkeypatch.setattr(read, "STREAMED_RUNS", 10**9)
    whole = run_cli(capsys, "report", "e1", "--json", "--db", db)
    monkeypatch.setattr(read, "STREAMED_RUNS", 0)
    streamed = run_cli(capsys, "report", "e1", "--json", "--db", db)
    assert (streamed.code, streamed.out) == (whole.code, whole.out)
    assert f'"case":"a","runs":3,"input_tokens":{3 * (2**53 + 1)},' in streamed.out
