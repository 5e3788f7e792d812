"""`passhat metrics`: bring your own verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def write(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def v(case: str, run: int, status: str) -> str:
    return json.dumps({"case": case, "run": run, "status": status})


def test_bundled_example_json(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", str(EXAMPLES / "verdicts" / "coupon.jsonl"), "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    coupon = next(c for c in data["cases"] if c["case"] == "ac-conflict-001")
    assert coupon["passes"] == 0 and coupon["pass_rate"] == 0.0
    assert coupon["pass_at_k"] is False and coupon["pass_hat_k"] is False
    row = next(c for c in data["cases"] if c["case"] == "illustrative-row")
    assert row["passes"] == 2 and row["pass_at_k"] is True and row["pass_hat_k"] is False
    assert row["pass_rate"] == pytest.approx(2 / 3)
    d = data["dataset"]
    assert (d["k"], d["complete"], d["cases"], d["runs_counted"]) == (3, True, 2, 6)
    assert d["pass_at_1"] == pytest.approx(2 / 6)
    assert d["pass_at_k"] == pytest.approx(0.5) and d["pass_hat_k"] == 0.0
    assert d["k_inferred"] is True


def test_missing_run_is_named_labelled_by_counted_and_strict_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(
        tmp_path,
        v("a", 1, "passed"),
        v("a", 2, "passed"),
        v("b", 1, "failed"),
        v("b", 2, "passed"),
        v("b", 3, "passed"),
    )
    r = run_cli(capsys, "metrics", f, "--k", "3", "--json")
    data = json.loads(r.out)
    a = data["cases"][0]
    assert a["missing"] == [3] and a["counted"] == 2 and a["label_hat"] == "pass^2"
    assert data["dataset"]["complete"] is False and data["dataset"]["k"] == 2
    assert data["dataset"]["k_inferred"] is False

    r = run_cli(capsys, "metrics", f, "--k", "3")
    assert r.code == 0
    assert "Plan NOT met" in r.out and "pass@2 / pass^2, not pass@3 / pass^3" in r.out
    assert "a: 2 of 3 requested runs counted (missing run 3)" in r.out

    assert run_cli(capsys, "metrics", f, "--k", "3", "--strict").code == 1
    assert run_cli(capsys, "metrics", f, "--k", "2").code == 2  # b has run 3: beyond k
    complete = write(tmp_path, v("a", 1, "passed"))
    assert run_cli(capsys, "metrics", complete, "--strict").code == 0


def test_inferred_k_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, v("a", 1, "passed"), v("a", 2, "failed")))
    assert "inferred from the largest run index" in r.out


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"case": "a", "run": 1, "status": "passed"}', "{not json"], r":2: not valid JSON"),
        (
            ['{"case": "a", "run": 1, "status": "passd"}'],
            r":1: field 'status' is \"passd\"; use one of passed, failed, errored",
        ),
        (
            ['{"case": "a", "run": 0, "status": "passed"}'],
            r":1: field 'run' is 0; run indices start at 1",
        ),
        (
            ['{"case": "a", "run": "1", "status": "passed"}'],
            r":1: field 'run' must be a whole number",
        ),
        (['{"run": 1, "status": "passed"}'], r":1: field 'case' must be a non-empty string"),
        (["[1, 2]"], r":1: expected a JSON object"),
        ([v("a", 1, "passed"), v("a", 1, "failed")], r":2: run 1 of case 'a' is recorded twice"),
        ([], r"is empty; write one verdict per line"),
        (["", "   "], r"is empty"),
    ],
    ids=[
        "malformed-json",
        "unknown-status",
        "run-below-1",
        "run-not-int",
        "no-case",
        "not-object",
        "duplicate",
        "empty",
        "blank-only",
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], message: str
) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, *lines))
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("error: ")
    assert "Traceback" not in r.err
    import re

    assert re.search(message, r.err), r.err


@pytest.mark.parametrize("k", ["0", "-2"])
def test_k_below_one_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], k: str) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, v("a", 1, "passed")), "--k", k)
    assert r.code == 2 and "ask for at least 1 run per case" in r.err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", str(tmp_path / "nope.jsonl"))
    assert r.code == 2 and "no such file" in r.err


def test_case_ids_are_data_not_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "metrics", write(tmp_path, v("[b]x[/]", 1, "passed")))
    assert "[b]x[/]" in r.out


def test_console_script_exit_code_without_traceback(tmp_path: Path) -> None:
    f = write(tmp_path, "{oops")
    proc = subprocess.run(
        [sys.executable, "-m", "passhat", "metrics", f], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr


def test_an_endless_line_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (issue 26): `metrics /dev/zero` read one endless line until MemoryError."""
    r = run_cli(capsys, "metrics", "/dev/zero")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1
    assert "/dev/zero: line 1 is longer than 1,048,576 bytes" in r.err


def test_all_lists_every_case_past_the_default_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(tmp_path, *(v(f"case-{i:02d}", 1, "passed") for i in range(35)))
    short = run_cli(capsys, "metrics", f).out
    assert "case-29" in short and "case-30" not in short
    every = run_cli(capsys, "metrics", f, "--all").out
    assert "case-34" in every


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('{"case": "a", "run": 1, "status": "passed", "status": "failed"}', "status"),
        ('{"case": "a", "run": 1, "run": 2, "status": "passed"}', "run"),
        ('{"case": "b", "run": 1, "status": "passed", "case": "a"}', "case"),
        ('{"case": "a", "run": 1, "status": "passed", "st\\u0061tus": "failed"}', "status"),
        ('{"case":"a","run":1,"status":"passed","note":"x","status":"failed"}', "status"),
        (
            '{"case": "a", "run": 1, "status": "failed", "status": "failed", "n": 1e999999}',
            "status",
        ),
    ],
    ids=["status", "run", "case", "escaped", "beside-another-key", "huge-number"],
)
def test_a_key_that_decides_the_count_written_twice_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, key: str
) -> None:
    """pydantic-core's parser keeps a key's last value: the line would count what its
    last `status` (run, case) says. Refused, naming file:line and the key; failed on main
    (the line counted)."""
    path = write(tmp_path, v("a", 2, "passed"), line)
    r = run_cli(capsys, "metrics", path)
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    assert f"{path}:2: field '{key}' is written 2 times" in r.err


@pytest.mark.parametrize(
    "line",
    [
        '{"case": "a", "run": 1, "status": "passed", "details": {"status": "x", "status": "y"}}',
        '{"case": "a", "run": 1, "status": "passed", "note": "the \\"status\\" was \\"run\\""}',
        '{"case": "a", "run": 1, "status": "passed", "why": "status", "of": "status"}',
        '{"case": "a", "status": "passed", "run": 1, "score": 0.5}',
    ],
    ids=["nested", "escaped-in-a-value", "as-values", "another-key"],
)
def test_a_verdict_with_more_than_its_keys_still_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str
) -> None:
    """What is not a deciding key written twice at the line's top passes the check."""
    r = run_cli(capsys, "metrics", write(tmp_path, line, v("a", 2, "failed")), "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["dataset"]["pass_rate"] == 0.5


def test_a_key_written_twice_in_a_pipe_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO (`passhat metrics <(...)`) is read once: its lines are looked at as they
    come, not in a second read (which would find nothing)."""
    import os
    import threading

    fifo = tmp_path / "verdicts.jsonl"
    os.mkfifo(fifo)
    lines = [v("a", 1, "passed"), '{"case": "a", "run": 2, "status": "passed", "status": "failed"}']

    def feed() -> None:
        with fifo.open("w", encoding="utf-8") as writer:
            writer.write("".join(line + "\n" for line in lines))

    feeder = threading.Thread(target=feed)
    feeder.start()
    r = run_cli(capsys, "metrics", str(fifo))
    feeder.join(10)
    assert r.code == 2 and f"{fifo}:2: field 'status' is written 2 times" in r.err, r.err


def test_a_verdict_file_that_changed_between_its_reads_is_refused(tmp_path: Path) -> None:
    """The second read (of a file holding more than plain verdicts) finds other quotes or
    lines than the first counted: which content counted is unclear."""
    from passhat.errors import VerdictFileError
    from passhat.verdicts import _keys_once

    path = Path(
        write(tmp_path, v("a", 1, "passed"), '{"case": "a", "run": 2, "status": "x", "n": 1}')
    )
    size = path.stat().st_size
    _keys_once(path, 2, (size, 22))  # as read: nothing to say
    for lines, read in [(2, (size, 20)), (2, (size - 1, 22)), (3, (size, 22))]:
        with pytest.raises(VerdictFileError, match="changed while it was read"):
            _keys_once(path, lines, read)


def test_a_key_text_across_two_reads_of_the_file_is_counted(tmp_path: Path) -> None:
    """The second read counts each key's text over the file 1 MiB at a time: one cut by
    the read's bound is counted too, else it would hide a key written twice elsewhere
    (the counts would come out one a verdict)."""
    from passhat.errors import VerdictFileError
    from passhat.verdicts import read_verdicts

    def line(case: int, pad: str = "") -> str:
        return json.dumps({"case": f"c{case:07d}", "pad": pad, "run": 1, "status": "passed"})

    size = len(line(0)) + 1
    cut = line(0).index('"status"') + 3  # the bound falls here, inside `"status"`
    pad = "x" * ((2**20 - cut) % size)
    count = (2**20 - cut - len(pad)) // size
    lines = [line(0, pad), *(line(i) for i in range(1, count + 2))]
    lines.append('{"case": "z", "pad": "", "run": 1, "status": "passed", "status": "failed"}')
    path = Path(write(tmp_path, *lines))
    text = path.read_bytes()
    assert text[2**20 - 3 : 2**20 + 5] == b'"status"'
    with pytest.raises(VerdictFileError, match=r":\d+: field 'status' is written 2 times"):
        read_verdicts(path)
