"""passhat's own failure while running a command agent is not recorded as the agent's
crash (round 16's outside attack, the classification).

A command agent runs in a process of its own: it cannot raise an exception in passhat.
Its failures reach passhat as an exit code, a signal, its stdout or its endpoints, and
each has its kind (`agent_exit`, `agent_output`, `agent_flood`...). An exception that
comes out of CommandAgent.__call__ without a kind is therefore passhat's machinery
failing (its run folder, its server, its sandbox's gate, a bug), yet execution._crashed
recorded it as `agent_error` ("the agent under test crashed"), with passhat's own frames
kept as the agent's traceback: shown to a reader as the agent's crash, which DESIGN's
accounting rule reserves for what the agent did (only infrastructure failures are the
infrastructure's). Tried here at level process, where no sandbox is needed: the disk
under the system's temporary folder full as passhat makes the run's folder (ENOSPC), and
a defect in passhat's code building the agent's environment (a TypeError). Beside it,
passhat out of descriptors for the agent's pipes as it starts it (EMFILE) was recorded as
`agent_start`, the kind of an agent program that cannot start.

Fixed: such an exception is the run's `passhat_error`, its message naming passhat and
where in passhat it failed, with no agent traceback, and so is a start that failed for
want of descriptors or memory (EMFILE, ENFILE, ENOMEM); the agent's own crash is still
`agent_exit`, and a program the kernel cannot run still `agent_start` (the controls).
"""

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


def _full_disk(payload: bytes | None, uid: int | None) -> str:
    raise OSError(errno.ENOSPC, "No space left on device", "/tmp/passhat-run-x")


def _defect(*args: Any, **kwargs: Any) -> dict[str, str]:
    raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")


def _one_run(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    program: str | None = None,
) -> Any:
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [program or PYTHON or sys.executable, str(AGENT_SCRIPT), mode],
        "env": ENV,
    }
    suite = writer.write()
    db = tmp_path / "p.db"
    args = ["-k", "1", "--timeout", "60", "--isolation", "process", "--db", str(db), "-q"]
    done = run_cli(capsys, "run", str(suite), *args, "--no-report")
    assert done.code in (0, 1) and "Traceback" not in done.err, done.err
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return run


@pytest.mark.parametrize(
    ("target", "fault", "said"),
    [
        ("make_folder", _full_disk, "OSError: [Errno 28] No space left on device"),
        ("process_environ", _defect, "TypeError: unsupported operand type(s)"),
    ],
    ids=["full-disk", "defect"],
)
def test_passhats_own_failure_running_a_command_agent_is_not_the_agents(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    fault: Any,
    said: str,
) -> None:
    monkeypatch.setattr(command, target, fault)
    run = _one_run(writer, tmp_path, capsys, "ok")
    assert run.status == "errored"
    assert run.error_type == "passhat_error", (run.error_type, run.error_message)
    message = run.error_message or ""
    assert message.startswith("passhat failed running the agent (not the agent's doing): ")
    assert said in message and "passhat/agents/command.py" in message, message
    # a defect is passhat's to fix; the machine's refusal is not (review54)
    assert message.endswith("please report it") == (target != "make_folder"), message
    assert run.traceback is None, "passhat's frames kept as the agent's traceback"


def test_passhat_out_of_descriptors_starting_the_agent_is_not_its_start_error(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Out of descriptors for the agent's pipes (EMFILE, as under a flood of other runs'
    connections) was `agent_start`, the agent's program that cannot start."""
    spawn = asyncio.create_subprocess_exec

    async def no_descriptors(*argv: Any, **kwargs: Any) -> Any:
        if str(AGENT_SCRIPT) in argv:
            raise OSError(errno.EMFILE, "Too many open files")
        return await spawn(*argv, **kwargs)

    monkeypatch.setattr(asyncio, "create_subprocess_exec", no_descriptors)
    run = _one_run(writer, tmp_path, capsys, "ok")
    assert run.error_type == "passhat_error", (run.error_type, run.error_message)
    assert "(not the agent's doing): cannot start" in (run.error_message or "")
    assert "Too many open files" in (run.error_message or "")


def test_control_a_program_that_cannot_run_is_still_the_agents_start_error(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "agent.bin"  # executable, but no program the kernel can run
    program.write_bytes(b"\x7fELF not really")
    program.chmod(0o755)
    run = _one_run(writer, tmp_path, capsys, "ok", program=str(program))
    assert (run.status, run.error_type) == ("errored", "agent_start"), run.error_message
    assert "Exec format error" in (run.error_message or "")


def test_control_the_agents_own_crash_is_still_the_agents(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _one_run(writer, tmp_path, capsys, "crash")
    assert (run.status, run.error_type) == ("errored", "agent_exit")
    assert "exited with code 3" in (run.error_message or "")
