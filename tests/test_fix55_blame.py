"""passhat's own failure running a command agent is its `passhat_error` also where it
lands at the run's deadline, or is a CancelledError no stop asked for; the agent's real
timeouts keep their kind (DESIGN's accounting rule; test_attack54_blame.py's sequel)."""

from __future__ import annotations

import asyncio
import errno
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_python import AGENT_SCRIPT, ENV, PYTHON
from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.agents import command
from passhat.store import Store


def _one_run(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, timeout: str
) -> Any:
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [PYTHON or sys.executable, str(AGENT_SCRIPT), mode],
        "env": ENV,
    }
    suite = writer.write()
    db = tmp_path / "p.db"
    args = ["-k", "1", "--timeout", timeout, "--isolation", "process", "--db", str(db), "-q"]
    done = run_cli(capsys, "run", str(suite), *args, "--no-report")
    assert done.code in (0, 1) and "Traceback" not in done.err, done.err
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return run


def _cancelled(*args: Any, **kwargs: Any) -> dict[str, str]:
    raise asyncio.CancelledError  # a future of passhat's own cancelled under it


def test_a_cancelled_error_out_of_passhats_own_code_is_passhats_not_the_agents(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No stop asked for it, and the agent, another process, raises nothing in passhat:
    it was recorded `agent_error` ("CancelledError: the agent raised ...")."""
    monkeypatch.setattr(command, "process_environ", _cancelled)
    run = _one_run(writer, tmp_path, capsys, "ok", "60")
    assert (run.status, run.error_type) == ("errored", "passhat_error"), run.error_message
    message = run.error_message or ""
    assert message.startswith("passhat failed running the agent (not the agent's doing): ")
    assert "CancelledError" in message and "passhat/agents/command.py" in message, message
    assert run.traceback is None


def test_passhats_failure_as_it_stops_a_run_at_its_deadline_is_passhats(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The agent hangs; at the deadline passhat's own cleanup fails (the run's folder
    cannot be removed): recorded `timeout` alone, passhat's failure went unsaid."""

    def cannot_remove(folder: Any) -> None:
        raise OSError(errno.EIO, "Input/output error", str(folder))

    monkeypatch.setattr(command, "remove_tree", cannot_remove)
    run = _one_run(writer, tmp_path, capsys, "hang", "1")
    assert (run.status, run.error_type) == ("errored", "passhat_error"), run.error_message
    message = run.error_message or ""
    assert "OSError: [Errno 5] Input/output error" in message, message
    assert message.endswith("(as it stopped the run at its deadline, 1 s)"), message


def test_a_command_agent_that_hangs_is_still_its_timeout(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: nothing of passhat's failed, the agent was too slow."""
    run = _one_run(writer, tmp_path, capsys, "hang", "1")
    assert (run.status, run.error_type) == ("errored", "timeout"), run.error_message
