"""The fault matrix: whatever a run, the store or the process does, the experiment
ends cleanly and every finished run is kept, counted once.

Each test names the fault it guards (issue #14). Runs and stores are real: the
`passhat` command in-process or in a subprocess, SQLite on disk.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli, run_seed


def report(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, Any]:
    r = run_cli(capsys, "report", "latest", "--json", "--db", str(db))
    assert r.code == 0, r.err
    data: dict[str, Any] = json.loads(r.out)
    return data


def stored_runs(db: Path) -> list[sqlite3.Row]:
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        return con.execute("SELECT * FROM runs ORDER BY run_index").fetchall()


def run_agent(
    capsys: pytest.CaptureFixture[str], db: Path, agent: str, *args: str
) -> tuple[int, str, float]:
    started = time.monotonic()
    r = run_seed(capsys, "--agent", f"agents_for_tests:{agent}", "--db", str(db), "-q", *args)
    return r.code, r.err, time.monotonic() - started


# -- a run that misbehaves ends as one errored run


def test_a_sync_agent_runs_in_a_thread_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "sync_perfect", "-k", "3")
    assert code == 0, err
    assert [r["status"] for r in stored_runs(db)] == ["passed"] * 3


def test_a_blocking_sync_agent_times_out_at_its_deadline_and_stalls_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each run blocks its thread 3 s (agents_for_tests.BLOCK_S); 4 of them at once under
    # --timeout 0.5 are all errored(timeout) at the deadline, not passed after 3-12 s
    db = tmp_path / "p.db"
    code, err, took = run_agent(
        capsys, db, "sync_blocks", "-k", "4", "--concurrency", "4", "--timeout", "0.5"
    )
    assert code == 0, err
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "timeout")] * 4
    assert all(r["duration_s"] < 1.5 for r in runs)
    assert took < 2.5, f"the experiment waited for blocked agents ({took:.1f} s)"


def test_an_agent_that_swallows_the_cancel_is_still_a_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "swallows_cancel", "-k", "2", "--timeout", "0.3")
    assert code == 0, err
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "timeout")] * 2
    assert all(r["duration_s"] < 0.6 for r in runs), "recorded at the deadline"
    # what the agent wrote after its deadline is not what was stored
    assert all(json.loads(r["output"]) is None for r in runs)


def test_an_async_agent_blocking_the_loop_past_its_deadline_is_a_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents_for_tests

    monkeypatch.setattr(agents_for_tests, "BLOCK_S", 0.6)
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "async_blocks", "-k", "1", "--timeout", "0.2")
    assert code == 0, err
    (run,) = stored_runs(db)
    assert (run["status"], run["error_type"]) == ("errored", "timeout")
    assert "blocked the event loop" in run["error_message"]


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("exits", "SystemExit: the agent called sys.exit(3)"),
        ("sync_exits", "SystemExit: the agent called sys.exit(4)"),
        ("raises_cancelled", "CancelledError: the agent raised"),
        ("raises_base", "Odd: not an Exception"),
        ("sync_keyboard_interrupt", "KeyboardInterrupt"),
    ],
    ids=["sys-exit", "sync-sys-exit", "cancelled-error", "base-exception", "sync-ctrl-c"],
)
def test_base_exceptions_in_an_agent_make_errored_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, message: str
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, agent, "-k", "3", "--concurrency", "1")
    assert code == 0, err
    assert "Traceback" not in err
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "agent_error")] * 3
    assert message in runs[0]["error_message"]


def test_output_json_cannot_hold_is_stored_escaped_and_the_run_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "unencodable", "-k", "2")
    assert code == 0, err
    runs = stored_runs(db)
    assert len(runs) == 2
    output = json.loads(runs[0]["output"])
    assert output["bytes"] == "b'\\xff'"
    assert output["text"] == "half an emoji \\ud83d"
    assert output["self"] == "<circular reference>"
    (call,) = json.loads(runs[0]["tool_calls"])
    assert call["arguments"]["key"] == "\\ud83d"
    # and the store still reads back: report and a resume work
    assert report(capsys, db)["cases"][0]["completed"] == 2
    assert run_cli(capsys, "resume", "latest", "--db", str(db), "-q").code == 0


def test_an_environment_broken_by_its_agent_errors_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    code, err, _ = run_agent(capsys, db, "breaks_env", "-k", "2")
    assert code == 0, err
    runs = stored_runs(db)
    assert [(r["status"], r["error_type"]) for r in runs] == [("errored", "environment_error")] * 2
    assert "final_state() raised KeyError" in runs[0]["error_message"]


def test_a_blocking_custom_scorer_is_a_timeout_and_runs_in_a_thread(
    writer: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer.files["slow.py"] = (
        "import time\n\ndef score(final_state, goal):\n    time.sleep(3)\n    return True\n"
    )
    writer.suite["defaults"]["scorers"] = [{"custom": "slow.py:score"}]
    suite = writer.write()
    (suite / "cassettes").mkdir()
    (suite / "cassettes" / "none.jsonl").write_text('{"cassette": 1}\n', encoding="utf-8")
    db = tmp_path / "p.db"
    started = time.monotonic()
    r = run_cli(
        capsys,
        "run",
        str(suite),
        "--agent",
        "agents_for_tests:perfect",
        "-k",
        "3",
        "--concurrency",
        "3",
        "--timeout",
        "0.5",
        "--db",
        str(db),
        "-q",
    )
    assert r.code == 0, r.err
    assert time.monotonic() - started < 2.5
    runs = stored_runs(db)
    assert [(x["status"], x["error_type"]) for x in runs] == [("errored", "timeout")] * 3
