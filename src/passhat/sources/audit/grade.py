"""The verdict of one run folder: its grade file (`grade.json`, `verdict.json`,
...; a reward or score outside 0..1, NaN or infinite, errors the run), or the exit code
of the `--grade` command run on it in its own process group, under a timeout, its output
read into a bounded tail.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from passhat.errors import InputError
from passhat.sources._files import parse_json, read_bytes

GRADE_FILES = ("grade.json", "verdict.json", "grading.json", "score.json", "result.json")
"""A verdict file inside a run directory, first found wins."""


MAX_GRADE_BYTES = 1024 * 1024
"""A grade file larger than this is no verdict: that run is errored."""

GradeStatus = Literal["passed", "failed", "errored", "ungraded"]


@dataclass(frozen=True)
class Grade:
    """The verdict of one run directory and where it came from."""

    status: GradeStatus
    source: str
    """The grade file's name, or the command."""
    message: str | None = None
    """Why it is errored or ungraded."""
    details: dict[str, Any] = field(default_factory=dict)


_PASS_WORDS = {"passed", "pass", "accepted", "accept", "success", "succeeded", "ok", "true"}
_FAIL_WORDS = {"failed", "fail", "rejected", "reject", "failure", "false"}


def grade_from_data(data: Any, source: str) -> Grade:
    """A verdict from a grade file's JSON; pure."""
    if isinstance(data, bool):
        return Grade("passed" if data else "failed", source)
    if not isinstance(data, dict):
        return Grade("errored", source, f"{source} holds no JSON object with a verdict")
    for key in ("passed", "pass", "success", "accepted", "correct"):
        if isinstance(data.get(key), bool):
            return Grade("passed" if data[key] else "failed", source, details=data)
    for key in ("status", "verdict", "result"):
        value = data.get(key)
        if isinstance(value, str) and value.lower() in _PASS_WORDS | _FAIL_WORDS:
            status: GradeStatus = "passed" if value.lower() in _PASS_WORDS else "failed"
            return Grade(status, source, details=data)
        if isinstance(value, str) and value.lower() in {"errored", "error"}:
            return Grade("errored", source, str(data.get("message") or value), details=data)
    for key in ("reward", "score"):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not 0 <= value <= 1:  # NaN and ±Infinity fail both comparisons
                return Grade(
                    "errored",
                    source,
                    f"{source}: {key} is {value!r}, not a score in 0..1 (a grader that "
                    "crashed or overflowed is no failure)",
                    details=data,
                )
            return Grade("passed" if value == 1 else "failed", source, details=data)
    return Grade(
        "errored",
        source,
        f"{source} has no verdict (passed: true/false, status: passed/failed, or reward: 0..1)",
        details=data,
    )


def grade_from_files(run_dir: Path) -> Grade:
    """The run directory's grade file, if any; a run folder or grade file that cannot be
    read, or one larger than MAX_GRADE_BYTES, is errored with the reason."""
    try:
        with os.scandir(run_dir) as entries:
            names = {e.name for e in entries}
    except OSError as error:
        return Grade("errored", "", f"the run folder cannot be read ({error.strerror})")
    for name in GRADE_FILES:
        if name not in names:
            continue
        try:
            data = parse_json(
                read_bytes(run_dir / name, "grade file", MAX_GRADE_BYTES),
                run_dir / name,
                "grade file",
            )
        except InputError as error:
            return Grade("errored", name, str(error).split(": ", 1)[-1])
        return grade_from_data(data, name)
    return Grade("ungraded", "", "no grade file (" + ", ".join(GRADE_FILES) + ")")


def check_command(template: str) -> list[str]:
    """The grade command as argv tokens; it must name {run_dir} (so it is never empty)."""
    if "{run_dir}" not in template:
        raise InputError(
            f"--grade {template!r} does not name {{run_dir}}; write e.g. "
            "--grade 'python grade.py {run_dir}' so every run directory is graded"
        )
    try:
        return shlex.split(template)
    except ValueError as error:
        raise InputError(f"--grade {template!r} cannot be split into words ({error})") from None


MAX_GRADER_TAIL = 64 * 1024
"""Bytes of a grader's stdout and of its stderr kept (its last ones): a grader printing
300 MB made audit hold 900 MB to keep 500 characters."""
_TRACEBACK = b"Traceback (most recent call last)"


class OutputTail:
    """The last MAX_GRADER_TAIL bytes of a stream, and whether a Python traceback was
    printed anywhere in it; read in chunks, never whole."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.traceback = False

    def feed(self, chunk: bytes) -> None:
        if not self.traceback:
            self.traceback = _TRACEBACK in bytes(self.data[-len(_TRACEBACK) :]) + chunk
        self.data += chunk
        if len(self.data) > 2 * MAX_GRADER_TAIL:
            del self.data[:-MAX_GRADER_TAIL]

    def drain(self, stream: Any) -> None:
        """Read `stream` to its end, 64 kB at a time."""
        with stream:
            for chunk in iter(lambda: stream.read(65536), b""):
                self.feed(chunk)

    def text(self) -> str:
        return bytes(self.data[-MAX_GRADER_TAIL:]).decode("utf-8", errors="replace")


def grade_with_command(tokens: Sequence[str], run_dir: Path, timeout_s: float) -> Grade:
    """Run the grader on one run directory: exit 0 passed, 1 failed (unless it is a
    Python traceback: the grader crashed), else errored. The grader runs in its own
    process group, which is killed when it times out or exits (no child outlives it);
    its output is read as bytes and shown with undecodable bytes replaced."""
    argv = [t.replace("{run_dir}", str(run_dir)) for t in tokens]
    source = " ".join(tokens)
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise InputError(
            f"--grade: command {argv[0]!r} not found; give a program on PATH or its path"
        ) from None
    except OSError as error:
        raise InputError(f"--grade: command {argv[0]!r} cannot be run ({error.strerror})") from None
    tails = (OutputTail(), OutputTail())
    readers = [
        threading.Thread(target=tail.drain, args=(stream,), daemon=True)
        for tail, stream in zip(tails, (process.stdout, process.stderr), strict=True)
    ]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.wait()
        return Grade(
            "errored", source, f"the grader ran past {timeout_s:g} s (its process group was killed)"
        )
    finally:
        _kill_group(process)
        for reader in readers:
            reader.join(timeout=5)
    stdout, stderr = (tail.text() for tail in tails)
    last = (stderr.strip().splitlines() or stdout.strip().splitlines() or [""])[-1]
    details = {
        "exit_code": process.returncode,
        "stdout_tail": stdout[-500:],
        "stderr_tail": stderr[-500:],
    }
    if process.returncode == 0:
        return Grade("passed", source, details=details)
    if process.returncode == 1 and not tails[1].traceback:
        return Grade("failed", source, details=details)
    # exit 1 with a Python traceback is the grader crashing (as the seed's run_dirs[0]
    # grader does), not a verdict: errored, never a silent "failed"
    return Grade("errored", source, f"exit {process.returncode}: {last[:200]}", details)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill what is left of the grader's process group (its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
