"""fix52: defects left at round 13's stop, each shown by a test that failed before its fix
(the runs a stop keeps are in test_faults.py and test_executors.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import passhat
from conftest import SuiteWriter


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="no prlimit (util-linux) here")
def test_a_dask_worker_whose_threads_do_not_fit_its_descriptors_refuses_by_name(
    tmp_path: Path,
) -> None:
    """A worker of 4 threads under `prlimit --nofile=150:150` holds one command-agent run
    at 8 connections: it took all four, and runs past its limit were errored for want of
    a descriptor, counted as the agent's errored runs. Now the worker refuses the
    experiment in one line naming itself, its limit and the fix; no run is recorded."""
    pytest.importorskip("distributed")
    from cli_helpers import CLARIFY, SEED
    from dask_cluster import limited
    from passhat.errors import WorkerRefused
    from passhat.executors.dask import DaskExecutor
    from test_dask import _rows

    with limited(tmp_path, nthreads=4, nofile=150) as (cluster, spec):
        db = tmp_path / "p.db"
        with pytest.raises(WorkerRefused) as refused:
            passhat.evaluate(
                CLARIFY,
                agent=spec,
                cases=[SEED],
                k=4,
                db=db,
                isolation="process",
                concurrency=4,
                executor=DaskExecutor(cluster.address),
            )
    said = str(refused.value)
    assert "\n" not in said
    assert said.startswith("Dask workers cannot run this experiment: tcp://127.0.0.1:"), said
    assert "its 4 threads are 4 command-agent runs at once" in said
    assert "its limit of 150 open files holds (1 at most, 8 connections each)" in said
    assert "start it with --nthreads 1 or raise its limit" in said
    assert "install the same passhat" not in said  # not what is wrong with it
    assert _rows(db, "latest") == []


def _export(capsys: pytest.CaptureFixture[str], db: str, out: Path) -> tuple[int, str]:
    from cli_helpers import run_cli

    r = run_cli(capsys, "export", "latest", "-o", str(out), "--db", db)
    return r.code, r.err


def _tokens(path: Path) -> list[tuple[object, object]]:
    """(input_tokens, output_tokens) of each row of an export, as its format holds them."""
    import csv
    import json

    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines()]
    elif path.suffix == ".csv":
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    return [(row["input_tokens"], row["output_tokens"]) for row in rows]


@pytest.fixture
def two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    from cli_helpers import CLARIFY, SEED, run_cli

    db = tmp_path / "p.db"
    r = run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "-k", "2", "--db", str(db))
    assert r.code == 0, r.err
    return db


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("column", ["input_tokens", "output_tokens"])
def test_a_token_count_stored_as_a_fraction_is_refused_by_every_export_format_alike(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, two_runs: Path, fmt: str, column: str
) -> None:
    """12.5 written by hand into a run's token column (an INTEGER column keeps a fraction
    as REAL): Parquet's int64 column truncated it to 12 without a word while JSONL and
    CSV wrote 12.5, so the three files disagreed. Now each refuses it, naming the run
    and the column; no file is left."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    from cli_helpers import SEED
    from test_fuzz49 import damaged, one_line

    copy = damaged(two_runs, tmp_path, f"{column} = 12.5")
    out = tmp_path / f"runs.{fmt}"
    code, err = _export(capsys, copy, out)
    one_line(code, err, f"damaged: {column}", f"run 1 of case {SEED!r} is 12.5, no whole number")
    assert not out.exists() and not list(tmp_path.glob(f".runs.{fmt}.*"))


def test_the_three_export_formats_hold_the_same_token_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, two_runs: Path
) -> None:
    """The control: whole counts, and the largest SQLite holds, read back alike."""
    pytest.importorskip("pyarrow")
    from test_fuzz49 import damaged

    copy = damaged(two_runs, tmp_path, "input_tokens = 9223372036854775807, output_tokens = 0")
    got = {}
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"runs.{fmt}"
        code, err = _export(capsys, copy, out)
        assert code == 0, err
        got[fmt] = [(int(str(a)), int(str(b))) for a, b in _tokens(out)]
    assert got["jsonl"] == got["csv"] == got["parquet"]
    assert got["jsonl"][0] == (9223372036854775807, 0)


def _zipped_export(path: Path) -> Path:
    """A .zip holding a passhat export (its first line as `export` writes it)."""
    import zipfile

    line = '{"experiment": "0123abcd", "experiment_name": null, "kind": "run"}\n'
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("runs.jsonl", line)
    return path


def test_a_look_into_an_archive_out_of_memory_raises_not_holds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """holds_answers took every OSError for "not what it seemed": a read that failed for
    want of memory (ENOMEM, answers.SCARCE) said an archive of answers held none, and the
    agent saw it. Such an error now raises, as the rest of the look does (lookout.py)."""
    import errno
    import os

    from passhat.agents import archives

    zipped = _zipped_export(tmp_path / "old.zip")
    assert archives.holds_answers(str(zipped))  # the control: it does hold one
    real = os.pread

    def scarce(fd: int, size: int, at: int) -> bytes:
        if at > 0:  # the look past the first bytes: the zip's directory
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        return real(fd, size, at)

    monkeypatch.setattr(archives.os, "pread", scarce)
    with pytest.raises(OSError) as raised:
        archives.holds_answers(str(zipped))
    assert raised.value.errno == errno.ENOMEM


def test_an_archive_whose_data_is_bad_holds_nothing_still(tmp_path: Path) -> None:
    """The OSError that does mean "not what it seemed": bz2's and gzip's bad data."""
    from passhat.agents import archives

    for name, data in (("bad.bz2", b"BZh9" + b"\x00" * 64), ("bad.gz", b"\x1f\x8b" + b"\x07" * 64)):
        (tmp_path / name).write_bytes(data)
        assert archives.holds_answers(str(tmp_path / name)) is False


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench(*args: str) -> tuple[int, str, str]:
    """bench_calibration.py run with `args`: (exit code, stdout, stderr), in a session of
    its own killed whole at the end (a run of the grid starts worker processes)."""
    from test_fix52b import _script

    return _script("bench_calibration", *args, cwd=BENCHMARKS.parent)


def test_bench_calibration_help_prints_its_usage_and_runs_nothing() -> None:
    """`bench_calibration.py --help` read its options by hand and ran the whole grid
    (255 CPU-seconds); an option it does not know was ignored alike."""
    code, out, err = _bench("--help")
    assert code == 0, err
    assert out.startswith("usage: bench_calibration.py") and "--seed-base" in out
    assert "coverage of 95 % intervals" not in out
    code, out, err = _bench("--fats")
    assert code == 2 and "unrecognized arguments: --fats" in err, err
    assert "coverage of 95 % intervals" not in out


def test_show_lists_each_tool_call_with_what_it_returned_escaped(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`passhat show` listed a run's tool calls as `tool {arguments} → ok`: what a call
    returned, which the run records, was nowhere but in --json. Each call is shown with
    its result now (or its error), as text: markup and escape sequences stay literal."""
    from typing import Any

    from cli_helpers import run_cli

    fixture = writer.case["fixtures"]["query_background"][0]
    fixture["response"] = "One coupon [bold red]per[/] order \x1b[2J."
    suite = writer.write()

    async def asks(input: Any, env: Any, ctx: Any) -> str:
        await env.call("query_background", {"query": "coupon policy"})
        await env.call("get_ticket", {"key": "T-404"})
        return "asked"

    db = tmp_path / "p.db"
    passhat.evaluate(suite, agent=asks, k=1, db=db, model="")
    r = run_cli(capsys, "show", "latest", "tiny-001", "1", "--db", str(db))
    assert r.code == 0, r.err
    calls = r.out.split("tool calls\n", 1)[1].split("\noutput\n", 1)[0]
    said = " ".join(calls.split())  # as wrapped to the terminal's width, joined
    assert said.startswith(
        'query_background {"query": "coupon policy"} → "One coupon [bold red]per[/] order '
        '\\u001b[2J." get_ticket {"key": "T-404"} → error: no ticket'
    ), said
    assert "\x1b" not in r.out


def test_a_long_tool_result_is_cut_in_show_and_says_how_much_more() -> None:
    from passhat.report.run import RESULT_SHOWN, tool_call_line

    call = {"tool": "t", "arguments": {}, "result": "x" * 5000, "error": None}
    shown = tool_call_line(call).plain
    head = '  t {} → "' + "x" * (RESULT_SHOWN - 1)
    assert shown == head + " ... 3,002 characters more (show --json)"
