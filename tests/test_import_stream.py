"""Large results read as a stream give the runs a whole read gives (issue 34: a 300 MB
τ²-bench file held 936 MB). The stream's threshold is lowered to 0 so the tests' own
real-shaped files (test_import_tau2's, built from τ²-bench's pydantic models) are read
both ways; benchmarks/bench_import_rss.py measures the memory on 300 MB files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from passhat.records import RunRecord
from passhat.sources import Imported, tau2
from passhat.store import Store
from test_import_tau2 import RESULTS, SIMULATIONS, sim, write


def _runs(runs: Any) -> list[RunRecord]:
    """Runs without their experiment id, by case and index."""
    return sorted(
        (replace(r, experiment_id="") for r in runs), key=lambda r: (r.case_id, r.run_index)
    )


def _same_import(streamed: Imported, whole: Imported) -> None:
    assert streamed.stored is not None and whole.stored is None
    assert _runs(streamed.records()) == _runs(whole.runs)
    assert _runs(streamed.runs) == [replace(r, transcript=[]) for r in _runs(whole.runs)]
    assert any(r.transcript for r in whole.runs)
    fields = ("id", "created_at")
    assert replace(streamed.experiment, **dict.fromkeys(fields, "")) == replace(
        whole.experiment, **dict.fromkeys(fields, "")
    )
    assert (streamed.figures, streamed.notes, streamed.words) == (
        whole.figures,
        whole.notes,
        whole.words,
    )


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Imported, Imported]:
    whole = tau2.import_results(path)
    monkeypatch.setattr(tau2, "STREAM_ABOVE", 0)
    return tau2.import_results(path), whole


def test_tau2_results_read_as_a_stream_give_the_runs_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unnumbered = {k: v for k, v in sim("2", 0, 0.0).items() if k != "trial"}
    results = {**RESULTS, "simulations": [*SIMULATIONS[:6], unnumbered, SIMULATIONS[7]]}
    streamed, whole = _both(write(tmp_path / "results.json", results), monkeypatch)
    _same_import(streamed, whole)
    assert "1 simulations have no trial number; numbered in file order" in streamed.notes


def test_the_runs_stored_from_a_stream_hold_their_transcripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "results.json", RESULTS)
    stored = {}
    for stream, db in ((False, tmp_path / "whole.db"), (True, tmp_path / "stream.db")):
        if stream:
            monkeypatch.setattr(tau2, "STREAM_ABOVE", 0)
        r = run_cli(capsys, "import", "tau2", str(path), "--db", str(db), "--json")
        assert r.code == 0, r.err
        (item,) = json.loads(r.out)
        with Store(db) as store:
            stored[stream] = _runs(store.runs(item["experiment"]))
        item.pop("experiment")
        stored[stream, "shown"] = {k: v for k, v in item.items() if k != "source"}
    assert stored[True] == stored[False]
    assert stored[True, "shown"] == stored[False, "shown"]
    assert stored[True][0].transcript[0]["content"] == "I want to cancel my order"


@pytest.mark.parametrize("reward", [float("nan"), float("inf")], ids=["NaN", "Infinity"])
def test_what_the_stream_cannot_read_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reward: float
) -> None:
    """NaN and Infinity are not JSON (the stream refuses them) but Python's json writes
    and reads them: such a file is read whole, and says what it says read whole."""
    sims = [*SIMULATIONS[:4], sim("1", 1, reward), *SIMULATIONS[5:]]
    path = write(tmp_path / "results.json", {**RESULTS, "simulations": sims})
    streamed, whole = _both(path, monkeypatch)
    assert streamed.stored is None
    assert _runs(streamed.runs) == _runs(whole.runs)
    assert [r.error_type for r in _runs(streamed.runs)][4] == "reward_not_a_score"


def test_a_file_that_changes_between_the_two_reads_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "results.json", RESULTS)
    monkeypatch.setattr(tau2, "STREAM_ABOVE", 0)
    streamed = tau2.import_results(path)
    sims = [*SIMULATIONS[:4], sim("1", 1, 1.0), *SIMULATIONS[5:]]
    write(path, {**RESULTS, "simulations": sims})
    with pytest.raises(Exception, match="the file changed while it was imported"):
        list(streamed.records())
