"""`passhat import inspect`: real Inspect logs with errored and absent epochs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from cli_helpers import run_cli
from inspect_logs import (
    invalidated_log,
    rescored_log,
    rewritten_log,
    trimmed_json_log,
    two_reducer_log,
)
from passhat.sources.inspect_log import pass_rule


@pytest.fixture(scope="module")
def logs(
    tmp_path_factory: pytest.TempPathFactory, inspect_logs: dict[str, Path]
) -> dict[str, Path]:
    """One real .eval log (alone in its folder), and the same log as .json with s1's
    epoch 3 absent."""
    full = inspect_logs["tiny-math"]
    root = tmp_path_factory.mktemp("inspect")
    trimmed = trimmed_json_log(full, root / "trimmed" / "trimmed.json", ("s1", 3))
    return {"full": full, "trimmed": trimmed, "dir": full.parent}


def imported(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> list[dict[str, Any]]:
    r = run_cli(capsys, "import", "inspect", *args, "--db", str(db), "--json")
    assert r.code == 0, r.err
    data: list[dict[str, Any]] = json.loads(r.out)
    return data


def report(capsys: pytest.CaptureFixture[str], db: Path, ref: str) -> dict[str, Any]:
    r = run_cli(capsys, "report", ref, "--db", str(db), "--json")
    assert r.code == 0, r.err
    data: dict[str, Any] = json.loads(r.out)
    return data


def test_errored_samples_stay_in_the_plan_and_out_of_the_pass_rate(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    (item,) = imported(capsys, db, str(logs["full"]), "--name", "tiny")
    assert item["k_requested"] == 3
    assert item["errored"] == [
        {"case": "s3", "run": 2, "message": "RuntimeError('tool crashed in epoch 2')"}
    ]
    assert item["source"]["tool"] == "inspect" and item["source"]["task"] == "tiny-math"
    assert item["source"]["inspect_version"] and len(item["source"]["sha256"]) == 64
    data = report(capsys, db, "tiny")
    assert data["accounting"] == {
        "k_requested": 3,
        "complete": False,
        "runs_requested": 9,
        "runs_completed": 9,
        "runs_counted": 8,
        "runs_errored": 1,
        "runs_missing": 0,
        "runs_replayed": 0,
    }
    assert data["dataset"]["pass_at_1"] == pytest.approx(6 / 8)
    # s3 has 2 counted runs: the dataset is labelled pass@2 / pass^2, never pass@3
    assert (data["dataset"]["label_at"], data["dataset"]["label_hat"]) == ("pass@2", "pass^2")
    cases = {c["case"]: c for c in data["cases"]}
    assert cases["s3"]["counted"] == 2 and cases["s3"]["errored"] == [2]
    assert [e.pop("traceback") for e in data["errored"]] == [None]  # Inspect keeps its own
    assert data["errored"] == [
        {
            "case": "s3",
            "run": 2,
            "type": "sample_error",
            "message": "RuntimeError('tool crashed in epoch 2')",
        }
    ]


def test_inspects_own_figure_is_printed_beside_passhats_labelled(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    (item,) = imported(capsys, db, str(logs["full"]))
    accuracy = next(f for f in item["figures"] if f["label"] == "Inspect accuracy (match)")
    assert accuracy["value"] == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert item["passhat"]["pass_rate"] == pytest.approx(0.75)
    # the text output, into another store (the same log again would be a no-op)
    r = run_cli(capsys, "import", "inspect", str(logs["full"]), "--db", str(tmp_path / "q.db"))
    assert "pass rate          0.750  6/8 runs (weighs runs)" in r.out
    assert "Inspect accuracy (match)  0.778" in r.out
    assert "weighs samples: each sample's scored epochs reduced by mean first" in r.out
    assert "pass@2 / pass^2" in r.out
    assert "errored: sample s3, epoch 2: RuntimeError('tool crashed in epoch 2')" in r.out


def test_an_absent_epoch_is_missing_and_json_logs_read_too(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    (item,) = imported(capsys, db, str(logs["trimmed"]))
    assert item["missing"] == {"s1": [3]}
    data = report(capsys, db, item["experiment"])
    assert data["accounting"]["runs_missing"] == 1 and data["accounting"]["runs_counted"] == 7
    assert data["dataset"]["label_at"] == "pass@2" and data["dataset"][
        "pass_at_1"
    ] == pytest.approx(5 / 7)
    assert (
        run_cli(capsys, "import", "inspect", str(logs["trimmed"]), "--db", str(db), "--strict").code
        == 1
    )


def test_pass_if_decides_what_passes(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    (item,) = imported(capsys, db, str(logs["full"]), "--pass-if", "I")
    assert item["passhat"]["pass_rate"] == pytest.approx(2 / 8)
    (item,) = imported(capsys, db, str(logs["full"]), "--pass-if", ">=0.5")
    assert item["passhat"]["pass_rate"] == pytest.approx(6 / 8)
    r = run_cli(capsys, "import", "inspect", str(logs["full"]), "--db", str(db), "--pass-if", ">=x")
    assert r.code == 2 and "is not a number" in r.err


def test_a_folder_of_logs_report_html_compare_and_export_work_on_imports(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    items = imported(capsys, db, str(logs["dir"]), str(logs["trimmed"]))
    assert len(items) == 2
    a, b = (i["experiment"] for i in items)
    html = tmp_path / "r.html"
    r = run_cli(capsys, "report", a, "--db", str(db), "--html", str(html))
    page = html.read_text()
    assert r.code == 0 and "s3" in page and "imported (inspect): task tiny-math" in page
    r = run_cli(capsys, "report", a, "--db", str(db))
    assert "imported (inspect): task tiny-math, Inspect " in r.out
    # Inspect's own figure stays beside passhat's in every later report
    assert "Inspect accuracy (match) 0.778" in " ".join(r.out.split())
    assert "Inspect accuracy (match) 0.778" in page
    r = run_cli(capsys, "compare", a, b, "--db", str(db), "--json", "-B", "200")
    assert r.code == 0, r.err
    assert json.loads(r.out)["verdict"]["outcome"]
    # export → DuckDB gives the report's pass rate; export → `passhat metrics` too
    out = tmp_path / "runs.parquet"
    assert run_cli(capsys, "export", a, "--db", str(db), "-o", str(out)).code == 0
    ((rate,),) = duckdb.sql(
        f"SELECT count(*) FILTER (WHERE status = 'passed') / count(*) FILTER (WHERE counted) "
        f"FROM '{out}'"
    ).fetchall()
    assert rate == pytest.approx(report(capsys, db, a)["dataset"]["pass_at_1"])
    jsonl = tmp_path / "runs.jsonl"
    assert run_cli(capsys, "export", a, "--db", str(db), "-o", str(jsonl)).code == 0
    r = run_cli(capsys, "metrics", str(jsonl), "--json", "-B", "200")
    assert json.loads(r.out)["dataset"]["pass_at_1"] == pytest.approx(rate)


def test_a_truncated_log_is_one_line_exit_2(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.eval"
    broken.write_bytes(logs["full"].read_bytes()[:2000])
    r = run_cli(capsys, "import", "inspect", str(broken), "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and f"{broken}: not a readable Inspect log" in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    half = tmp_path / "half.json"
    half.write_text(logs["trimmed"].read_text()[:3000])
    r = run_cli(capsys, "import", "inspect", str(half), "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and "not a readable Inspect log" in r.err
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli(capsys, "import", "inspect", str(empty), "--db", str(tmp_path / "p.db"))
    assert r.code == 2 and "no Inspect logs" in r.err
    assert (
        not (tmp_path / "p.db").exists()
        or run_cli(capsys, "list", "--db", str(tmp_path / "p.db")).code == 0
    )


def test_a_sample_invalidated_in_inspect_is_errored_with_the_reason(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = invalidated_log(logs["full"], tmp_path / "edited.eval", ("s1", 1), "leaked answer")
    (item,) = imported(capsys, tmp_path / "p.db", str(edited))
    assert {(e["case"], e["run"]) for e in item["errored"]} == {("s1", 1), ("s3", 2)}
    assert any("leaked answer" in e["message"] for e in item["errored"])
    assert item["passhat"]["pass_rate"] == pytest.approx(5 / 7)


def test_a_scorer_the_log_lacks_leaves_every_scored_run_errored(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (item,) = imported(capsys, tmp_path / "p.db", str(logs["full"]), "--scorer", "nope")
    assert len(item["errored"]) == 9 and "passhat" not in item
    assert "no score from scorer 'nope' (scorers: match)" in item["errored"][0]["message"]


@pytest.mark.parametrize(
    ("specs", "value", "verdict"),
    [
        ([], "C", True),
        ([], "I", False),
        ([], True, True),
        ([], 1, True),
        ([], 0.5, False),
        (["C", "P"], "P", True),
        ([">=0.5"], "P", True),
        ([">=0.5"], 0.49, False),
        ([">0.9"], "C", True),
        ([">=0.5"], "maybe", None),
        ([], {"a": 1}, None),
    ],
    ids=lambda v: repr(v),
)
def test_pass_rules(specs: list[str], value: Any, verdict: bool | None) -> None:
    assert pass_rule(specs).passes(value) is verdict


def test_the_same_log_twice_is_stored_once(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As for τ²-bench and Harbor (tests/test_import_again.py)."""
    from test_import_again import check_same_input_twice, inspect_source

    check_same_input_twice(inspect_source(tmp_path, logs["full"]), tmp_path, capsys)


def test_a_log_rewritten_with_other_runs_is_refused_in_one_line(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_import_again import check_other_runs_refused, inspect_source

    check_other_runs_refused(inspect_source(tmp_path, logs["full"]), tmp_path, capsys)


def test_a_log_recording_no_epochs_takes_k_from_what_it_holds_and_says_so(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): eval.config {} was read as 1 epoch, and a log holding epoch 3
    was refused as "samples of epoch 3 but the task asked for 1 epoch"."""
    path = rewritten_log(
        logs["full"], tmp_path / "no-epochs.json", epochs=None, status="success", samples=True
    )
    (item,) = imported(capsys, tmp_path / "p.db", str(path))
    assert item["k_requested"] == 3 and item["missing"] == {}
    assert (
        "the log records no epochs (eval.config has none): requested k taken as 3, "
        "the highest epoch it holds"
    ) in item["notes"]


def test_a_header_only_cancelled_log_holds_no_runs_rather_than_never_ran(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rewritten_log(
        logs["full"], tmp_path / "header.json", epochs=3, status="cancelled", samples=False
    )
    (item,) = imported(capsys, tmp_path / "p.db", str(path))
    assert item["accounting"]["runs_missing"] == 9 and item["accounting"]["runs_completed"] == 0
    (note,) = item["notes"]
    assert "holds no sample (a header-only log): its 9 runs are not held here" in note
    assert "never ran" not in json.dumps(item)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_score_that_is_nan_or_infinite_is_errored_never_a_failure(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    """Regression (issue 34): an Inspect score of NaN was counted as a failed run."""
    edited = rescored_log(logs["full"], tmp_path / "nan.eval", ("s1", 1), value)
    (item,) = imported(capsys, tmp_path / "p.db", str(edited))
    errored = {(e["case"], e["run"]): e["message"] for e in item["errored"]}
    assert errored[("s1", 1)] == f"score {value!r} of match is no score"
    assert item["passhat"]["pass_rate"] == pytest.approx(5 / 7)


def test_two_reducers_of_one_scorer_are_labelled_by_reducer(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 34): two lines both labelled "Inspect accuracy (match)"."""
    edited = two_reducer_log(logs["full"], tmp_path / "two.eval")
    (item,) = imported(capsys, tmp_path / "p.db", str(edited))
    labels = {f["label"]: f for f in item["figures"] if f["label"].startswith("Inspect accuracy")}
    assert set(labels) == {"Inspect accuracy (match, mean)", "Inspect accuracy (match, max)"}
    assert "reduced by max first" in labels["Inspect accuracy (match, max)"]["weighs"]
    assert labels["Inspect accuracy (match, max)"]["value"] == 1.0


def test_a_json_log_read_as_a_stream_gives_the_runs_read_whole(
    logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: a .json log above STREAM_ABOVE is read one sample at a time (each through
    Inspect's EvalSample model); its runs, notes and figures are those of the whole read,
    and the runs it stores hold their transcripts."""
    from dataclasses import replace

    from passhat.sources import inspect_log

    whole = inspect_log.import_log(logs["trimmed"])
    monkeypatch.setattr(inspect_log, "STREAM_ABOVE", 0)
    streamed = inspect_log.import_log(logs["trimmed"])
    assert streamed.stored is not None and whole.stored is None

    def runs(items: Any) -> list[Any]:
        return [replace(r, experiment_id="") for r in items]

    assert runs(streamed.records()) == runs(whole.runs)
    assert runs(streamed.runs) == [replace(r, transcript=[]) for r in runs(whole.runs)]
    assert all(r.transcript for r in whole.runs if r.status != "errored")
    assert {r.status for r in whole.runs} == {"passed", "failed", "errored"}
    assert (streamed.figures, streamed.notes) == (whole.figures, whole.notes)
    assert streamed.experiment.fingerprint == whole.experiment.fingerprint
    assert streamed.experiment.case_ids == whole.experiment.case_ids
