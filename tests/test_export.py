"""`passhat export`: one row per run (or per case), read back by DuckDB."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from cli_helpers import ROOT, run_cli

TRELLO = ROOT / "examples" / "trello"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trello example run for real (replayed answers): 3 cases × 3 runs, one flawed
    run per case; and the seed's Trello folder audited, with two runs missing per group."""
    db = tmp_path_factory.mktemp("export") / "p.db"
    from passhat.cli import main

    for args in (
        ["run", str(TRELLO), "--db", str(db), "--name", "cards", "-q"],
        [
            "audit",
            str(ROOT / "examples" / "audit" / "trello"),
            "--into-store",
            "--db",
            str(db),
            "--name",
            "audited",
        ],
    ):
        try:
            main(args)
        except SystemExit as exit_:
            assert not exit_.code
    return db


def report_json(capsys: pytest.CaptureFixture[str], db: Path, ref: str) -> dict[str, Any]:
    r = run_cli(capsys, "report", ref, "--db", str(db), "--json")
    data: dict[str, Any] = json.loads(r.out)
    return data


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("ref", ["cards", "audited"])
def test_duckdb_reads_the_reports_pass_rate_back(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, ref: str
) -> None:
    out = tmp_path / f"runs.{fmt}"
    r = run_cli(capsys, "export", ref, "--db", str(store), "-o", str(out))
    assert r.code == 0, r.err
    ((rate, rows),) = duckdb.sql(
        "SELECT count(*) FILTER (WHERE status = 'passed') / count(*) FILTER (WHERE counted), "
        f"count(*) FROM '{out}'"
    ).fetchall()
    data = report_json(capsys, store, ref)
    assert rate == pytest.approx(data["dataset"]["pass_at_1"])
    assert rows == data["accounting"]["runs_completed"]


def test_a_run_row_carries_what_the_run_recorded(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(out)).code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 9
    row = rows[0]
    assert set(row) >= {
        "experiment",
        "case",
        "run",
        "status",
        "error_type",
        "verdict_details",
        "input_tokens",
        "output_tokens",
        "duration_s",
        "retries",
        "answers",
        "fingerprint",
    }
    assert row["answers"] == "replayed" and row["kind"] == "run"
    details = json.loads(row["verdict_details"])
    assert {d["scorer"] for d in details} >= {"exact_set"}
    assert {(r["case"], r["run"]) for r in rows} == {
        (c, i) for c in {r["case"] for r in rows} for i in (1, 2, 3)
    }


def test_per_case_rows_name_missing_runs(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cases.csv"
    r = run_cli(capsys, "export", "audited", "--db", str(store), "-o", str(out), "--per-case")
    assert r.code == 0 and "2 cases" in r.err
    with out.open() as handle:
        rows = {row["case"]: row for row in csv.DictReader(handle)}
    assert rows["baseline"]["missing_runs"] == "2 3"
    assert rows["baseline"]["k_requested"] == "3" and rows["baseline"]["counted"] == "1"
    assert rows["writing-guide"]["pass_rate"] == "1.0" and rows["baseline"]["pass_rate"] == "0.0"
    # CSV has no types: booleans as true/false (DuckDB, polars), never Python's True
    assert {rows[c]["pass_at_n"] for c in rows} <= {"true", "false", ""}
    assert rows["writing-guide"]["pass_at_n"] == "true"


def test_export_refuses_an_unknown_format_in_one_line(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(tmp_path / "x.xlsx"))
    assert r.code == 2 and "give --format jsonl, csv or parquet" in r.err
    r = run_cli(
        capsys, "export", "cards", "--db", str(store), "-o", str(tmp_path / "x"), "--format", "xml"
    )
    assert r.code == 2 and "--format 'xml'" in r.err
    r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(tmp_path / "no" / "x.csv"))
    assert r.code == 2 and "cannot write" in r.err


def test_the_docs_query_gives_the_reports_pass_rate(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/export.md's first SQL block, run as written against a Parquet export."""
    text = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    sql = text.split("```sql\n")[1].split("```")[0]
    out = tmp_path / "runs.parquet"
    assert run_cli(capsys, "export", "audited", "--db", str(store), "-o", str(out)).code == 0
    ((rate, counted, errored),) = duckdb.sql(sql.replace("runs.parquet", str(out))).fetchall()
    data = report_json(capsys, store, "audited")
    assert rate == pytest.approx(data["dataset"]["pass_at_1"])
    assert counted == data["accounting"]["runs_counted"]
    assert errored == data["accounting"]["runs_errored"]


def test_the_cli_loads_inspect_pyarrow_and_the_readers_only_when_asked() -> None:
    """Regression guard: `passhat` starts without inspect-ai, pyarrow or the readers."""
    import subprocess
    import sys

    heavy = ("inspect_ai", "pyarrow", "duckdb", "passhat.sources.audit", "passhat.export")
    code = f"import sys, passhat.cli; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


HEAVY = {"output", "final_state", "transcript", "tool_calls", "stderr", "traceback"}
"""What a run row never shows: an export must not read it (issue 15)."""


def test_run_rows_read_no_transcript_output_final_state_or_tool_call(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): export read and decoded every run's tool calls (with their
    results) and held every row at once: 9-13 s and 1.26 GB at 100,000 real runs."""
    from cli_helpers import columns_read

    out = tmp_path / "runs.jsonl"
    read = columns_read(monkeypatch)
    assert run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(out)).code == 0
    runs = {column for table, column in read if table == "runs"}
    assert {"status", "score", "retries", "started_at"} <= runs
    assert not runs & HEAVY


def test_per_case_rows_read_each_runs_status_only(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): --per-case read every run's score and tool calls to count
    statuses: 6.5 s and 1.17 GB at 100,000 runs."""
    from cli_helpers import columns_read

    before = tmp_path / "before.csv"
    assert (
        run_cli(
            capsys, "export", "audited", "--db", str(store), "-o", str(before), "--per-case"
        ).code
        == 0
    )
    read = columns_read(monkeypatch)
    out = tmp_path / "cases.csv"
    assert (
        run_cli(capsys, "export", "audited", "--db", str(store), "-o", str(out), "--per-case").code
        == 0
    )
    assert out.read_bytes() == before.read_bytes()
    runs = {column for table, column in read if table in ("runs", "run_summaries")}
    assert runs <= {"experiment_id", "case_id", "run_index", "status"}


def test_parquet_written_in_batches_holds_every_row_once(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parquet is written a batch of rows at a time (flat memory): batches of 4 of 9 runs
    give the rows the JSON Lines export has, in its order."""
    import passhat.export

    monkeypatch.setattr(passhat.export, "PARQUET_BATCH", 4)
    jsonl, parquet = tmp_path / "runs.jsonl", tmp_path / "runs.parquet"
    for out in (jsonl, parquet):
        r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(out))
        assert r.code == 0 and ": 9 runs of experiment cards" in r.err
    import pyarrow.parquet as pq

    assert pq.ParquetFile(parquet).metadata.num_row_groups == 3
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert pq.read_table(parquet).to_pylist() == rows


def test_store_columns_reads_only_named_run_columns(store: Path) -> None:
    from passhat.store import Store

    with Store(store, create=False, read_only=True) as s:
        eid = s.experiment("cards").id
        rows = list(s.columns(eid, ("case_id", "run_index", "status")))
        assert len(rows) == 9 and rows == sorted(rows)[: len(rows)]
        assert all(len(row) == 3 for row in rows)
        for bad in (("case_id", "1; DROP TABLE runs"), ("nope",), ()):
            with pytest.raises(ValueError, match="runs have no column"):
                list(s.columns(eid, bad))


def test_cassette_reads_each_runs_transcript_only(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): `passhat cassette` read every run whole (output, final state,
    score, tool calls...) to take its transcript: 28 s and 1.8 GB at 100,000 runs."""
    from cli_helpers import columns_read
    from passhat.models.replay import Cassette

    before = tmp_path / "before.jsonl"
    assert run_cli(capsys, "cassette", "cards", "--db", str(store), "-o", str(before)).code == 0
    read = columns_read(monkeypatch)
    tape = tmp_path / "tape.jsonl"
    r = run_cli(capsys, "cassette", "cards", "--db", str(store), "-o", str(tape))
    assert r.code == 0 and " model answers from 9 runs" in r.out
    assert tape.read_bytes() == before.read_bytes()
    assert Cassette.load(tape).answers
    runs = {column for table, column in read if table == "runs"}
    assert runs == {"experiment_id", "case_id", "run_index", "transcript"}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_an_export_stopped_half_way_leaves_the_earlier_file_whole(tmp_path: Path, fmt: str) -> None:
    """The rows stream (a damaged run or Ctrl-C can stop them after some are written):
    nothing of the stopped export is left, and the file it would have replaced stays."""
    from passhat.errors import StoreError
    from passhat.export import RUN_COLUMNS, write_rows

    rows = [{name: None for name, _ in RUN_COLUMNS} | {"case": f"c{i}"} for i in range(3)]
    out = tmp_path / f"runs.{fmt}"
    assert write_rows(out, rows[:1], RUN_COLUMNS, fmt) == 1  # type: ignore[arg-type]
    before = out.read_bytes()

    def stopped() -> Any:
        yield from rows
        raise StoreError("run 4 of 'c3': damaged")

    with pytest.raises(StoreError):
        write_rows(out, stopped(), RUN_COLUMNS, fmt)  # type: ignore[arg-type]
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


# ------------------------------------------ -o onto what is not a regular file


def test_export_onto_a_device_writes_through_it_never_replaces_it(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): -o onto a device node replaced it with a regular file (as
    root, `-o /dev/stdout` destroyed /dev/stdout). /dev/null stays a device."""
    import stat

    r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", "/dev/null", "--format", "csv")
    assert r.code == 0, r.err
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
    assert not list(Path("/dev").glob(".null.*.part"))
    r = run_cli(
        capsys, "export", "cards", "--db", str(store), "-o", "/dev/null", "--format", "parquet"
    )
    assert r.code == 2 and "Parquet needs a file it can seek in" in r.err


def test_export_onto_a_fifo_writes_through_it(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import threading

    fifo = tmp_path / "runs.jsonl"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(fifo))
    reader.join(timeout=60)
    assert r.code == 0, r.err
    assert fifo.is_fifo() and len(got[0].decode().splitlines()) == 9


def test_export_onto_a_symlink_keeps_the_link_and_writes_its_target(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(link))
    assert r.code == 0, r.err
    assert link.is_symlink() and len(target.read_text().splitlines()) == 9
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    r = run_cli(capsys, "export", "cards", "--db", str(store), "-o", str(loop))
    assert r.code == 2 and "cannot be written" in r.err and len(r.err.strip().splitlines()) == 1
    r = run_cli(
        capsys, "export", "cards", "--db", str(store), "-o", str(tmp_path), "--format", "csv"
    )
    assert r.code == 2 and "is a folder" in r.err


def test_the_line_written_counts_one_case_and_one_run_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A one-run experiment exported is `1 run`, its per-case table `1 case` (not `1 runs`)."""
    db = str(tmp_path / "p.db")
    clarify = str(ROOT / "examples" / "clarify")
    r = run_cli(capsys, "run", clarify, "--case", "ac-conflict-001", "-k", "1", "--db", db, "-q")
    assert r.code == 0, r.err
    runs = run_cli(capsys, "export", "latest", "--db", db, "-o", str(tmp_path / "r.jsonl"))
    cases = run_cli(
        capsys, "export", "latest", "--db", db, "-o", str(tmp_path / "c.csv"), "--per-case"
    )
    assert (runs.code, cases.code) == (0, 0)
    assert ": 1 run of experiment " in runs.err, runs.err
    assert ": 1 case of experiment " in cases.err, cases.err
