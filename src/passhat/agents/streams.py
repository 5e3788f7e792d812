"""A command agent's process as passhat sees it: its pipes, its exit, its stderr's tail.

Its input is fed and stdin closed, its stdout read up to a cap, its stderr kept as a
bounded tail with every secret value cut out (also a partial value the cut left at
its start), its process group killed whole (also when a stop cancels its start), its
exit put in words, and its stdout read as the run's output (`parse_output`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import signal
import traceback
from collections.abc import Callable
from typing import Any


class AgentProcessError(Exception):
    """The agent process failed; `error_type` is what the run records."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def kind_of(error: BaseException) -> str | None:
    """The run's kind `error` names (`error_type`) when one of passhat's own classes made
    it (AgentProcessError, a run's limit, a look stopped); None for any other: an
    in-process agent's exception, or a library's it let through, that happens to carry an
    `error_type` text (`passhat_error`, `timeout`...) is its crash, not that kind."""
    kind = getattr(error, "error_type", None)
    ours = type(error).__module__.partition(".")[0] == "passhat"
    return kind if isinstance(kind, str) and ours else None


PASSHATS_OWN = "passhat_error"
"""The kind of a run that passhat's own machinery failed, not its agent."""


def passhats_own(error: BaseException) -> AgentProcessError | None:
    """What a command agent's run records for `error`, an exception out of passhat's part of
    the run, when it has no kind of its own: `passhat_error`, naming where in passhat it
    failed. The agent is another process and raises nothing here: an exception without a
    kind is passhat's machinery failing (its folder, its server, a defect), never the
    agent's crash (`agent_error`, a crash charged to the agent). None when it has a kind,
    or is a model's failure, or the experiment's stop (StopRuns: no run, no record)."""
    from passhat.errors import ModelError, StopRuns

    if kind_of(error) is not None or isinstance(error, ModelError | StopRuns):
        return None
    # the machine's refusal (a full disk, no descriptors left) is no defect to report
    report = "" if isinstance(error, OSError) else "; please report it"
    said = str(error)  # none for a bare CancelledError
    what = f"{type(error).__name__}: {said}" if said else type(error).__name__
    return passhats_failure(f"{what}{_where(error)}{report}")


def passhats_failure(why: str) -> AgentProcessError:
    """The run's `passhat_error`: passhat failed running the agent for `why`."""
    return AgentProcessError(
        PASSHATS_OWN, f"passhat failed running the agent (not the agent's doing): {why}"
    )


def _where(error: BaseException) -> str:
    """` (at passhat/x.py:N)`: the innermost of passhat's own frames `error` passed."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ours = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename.startswith(package + os.sep)
    ]
    if not ours:
        return ""
    name = os.path.relpath(ours[-1].filename, os.path.dirname(package))
    return f" (at {name.replace(os.sep, '/')}:{ours[-1].lineno})"


async def bounded_output(raw: bytes | bytearray) -> None:
    """AgentProcessError when a JSON output brings more than endpoints.VALUES values,
    counted before it is parsed with the event loop turning (serve.app.bounded):
    json.loads, a C call, held the loop every run shares 2.5 s CPU for 16 MiB of `[]`
    (tests/test_attack53_output.py), as a model request's did (test_attack49_loop.py)."""
    from passhat.serve.app import TooLarge, bounded, marks
    from passhat.serve.endpoints import VALUES

    data = bytes(raw)
    try:
        await bounded(data, marks(data))
    except TooLarge:
        raise AgentProcessError(
            "agent_output",
            f"the agent's output is JSON of more than {VALUES:,} values (keys, values, "
            "objects and arrays); print a smaller value",
        ) from None


MESSAGE_TAIL = 2000
"""Characters of stderr quoted in a run's error message."""


def exit_reason(returncode: int, sandboxed: bool = False) -> str:
    if sandboxed and 128 < returncode < 128 + 65:  # bwrap reports a signal as 128 + N
        returncode = 128 - returncode
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the agent process was killed by {name}"
    return f"the agent process exited with code {returncode}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Control characters (terminal escapes among them) written out as \\xNN:
    an agent's stderr is data, and must not drive the terminal it is shown on."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def with_tail(reason: str, stderr: str, secrets: tuple[str, ...] = ()) -> str:
    tail = printable(stderr.strip())
    if not tail:
        return reason + " (stderr was empty)"
    if len(tail) > MESSAGE_TAIL:
        tail = "..." + cut_secrets(tail[-MESSAGE_TAIL:], secrets)
    return f"{reason}; stderr ends:\n{tail}"


PARTIAL_MIN = 4
"""Characters of a secret's end that count as a piece of it at the start of a cut text."""


def cut_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """`text`, a tail cut from a longer one, without the end of a secret it may begin
    with (whole secrets are blanked where the run is stored; a cut one would not be)."""
    for secret in secrets:
        for start in range(1, len(secret) - PARTIAL_MIN + 1):
            if text.startswith(secret[start:]):
                return "***" + text[len(secret) - start :]
    return text


class Tail:
    """The last `limit` bytes written."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()

    cut = False
    """Whether more was written than is kept."""

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]
            self.cut = True

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def read_capped(stream: asyncio.StreamReader, limit: int, out: bytearray) -> None:
    while chunk := await stream.read(65536):
        out += chunk
        if len(out) > limit:
            raise AgentProcessError(
                "agent_output",
                f"the agent printed more than {limit // (1024 * 1024)} MiB on stdout; the "
                "process was killed. Print one JSON value (logs go to stderr)",
            )


async def drain(stream: asyncio.StreamReader, tail: Tail) -> None:
    while chunk := await stream.read(65536):
        tail.add(chunk)


async def discard(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass


async def drain_for(seconds: float, *streams: asyncio.StreamReader) -> None:
    """Read `streams` to their end for at most `seconds`, then stop (no task is left
    with an exception nobody reads, even when this is cancelled)."""
    tasks = [asyncio.ensure_future(discard(s)) for s in streams]
    try:
        await asyncio.wait(tasks, timeout=seconds)
    finally:
        for task in tasks:
            task.cancel()


async def feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    # an agent that never reads its stdin is fine: it has PASSHAT_INPUT
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()


async def exited(proc: asyncio.subprocess.Process) -> int:
    """The process's exit code, as soon as it exits: `proc.wait()` of Python 3.11 also
    waits for its pipes to close, which a child that left the group can hold open."""
    fd = -1
    with contextlib.suppress(AttributeError, OSError):
        fd = os.pidfd_open(proc.pid)
    loop = asyncio.get_running_loop()
    try:
        if fd >= 0:
            gone: asyncio.Future[None] = loop.create_future()

            def wake() -> None:
                if not gone.done():
                    gone.set_result(None)

            loop.add_reader(fd, wake)
            try:
                await gone
            finally:
                loop.remove_reader(fd)
        delay = 0.001 if fd >= 0 else 0.05  # reaped by the child watcher at once, after exit
        while proc.returncode is None:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)
        return proc.returncode
    finally:
        if fd >= 0:
            os.close(fd)


def close_pipe(stream: asyncio.StreamReader) -> None:
    """Close a pipe a surviving child still holds, so its transport is not left open."""
    transport = getattr(stream, "_transport", None)
    if transport is not None:
        transport.close()


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_sandbox(pid: int) -> None:
    """kill_group for a sandboxed run (bwrap leads the group), and bwrap's PID 1 when it
    has left the group: its setsid (--new-session) comes before it binds its life to
    bwrap's (--die-with-parent), so a kill in between left PID 1, and the agent it
    starts, running on without bwrap."""
    held = _held_children(pid)
    kill_group(pid)
    for pidfd in held:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        os.close(pidfd)


def _held_children(pid: int) -> list[int]:
    """pidfds of `pid`'s children (none when it has ended or where pidfds are not had).
    None either once passhat has reaped it (the run's end: its pid may be another
    process's by now, whose children are not ours to kill): `pid` must be passhat's
    child still, running or a zombie (reaped on this, the loop's, thread)."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # not passhat's child (reaped)
        return []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            pids = [int(word) for word in listed.read().split()]
    except OSError:
        return []
    held = []
    for child in pids:
        with contextlib.suppress(OSError, AttributeError):
            held.append(os.pidfd_open(child))
    return held


async def spawn(
    *argv: str, kill: Callable[[int], None] = kill_group, **options: Any
) -> asyncio.subprocess.Process:
    """asyncio.create_subprocess_exec for a process that leads its own group
    (start_new_session): a stop (Ctrl-C) that cancels the wait once the process is
    started kills its whole group (`kill`), then raises. asyncio itself would kill the process
    only: bwrap's PID 1 inside the sandbox, started but still waiting on an eventfd for
    bwrap to let it run (before its own --die-with-parent), stayed asleep for good."""
    started = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **options))
    try:
        return await asyncio.shield(started)
    except asyncio.CancelledError:
        # a second cancel cuts the wait, not the kill
        started.add_done_callback(functools.partial(_stop_started, kill))
        with contextlib.suppress(BaseException):  # not started (OSError): nothing to wait for
            await (await asyncio.shield(started)).wait()
        raise


def _stop_started(
    kill: Callable[[int], None], started: asyncio.Future[asyncio.subprocess.Process]
) -> None:
    """Kill the group of a process whose start was cancelled, and close its pipes."""
    if started.cancelled() or started.exception() is not None:
        return
    proc = started.result()
    kill(proc.pid)
    if proc.stdin is not None:
        proc.stdin.close()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            close_pipe(stream)


OUTPUT_DEPTH = 100
"""Levels of nesting an agent's JSON output may have: the store cuts deeper structures
(store/columns.py), and an output past what that cut can take (a list 950 levels deep)
ended the whole experiment with a RecursionError."""


def parse_output(raw: bytes, mode: str) -> Any:
    """stdout as the run's output; AgentProcessError when it is not what `mode` asks."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AgentProcessError(
            "agent_output",
            f"the agent printed bytes that are not UTF-8 text on stdout (at byte {error.start}); "
            "print one JSON value",
        ) from None
    if mode == "text":
        return text
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        head = text.strip()[:200]
        raise AgentProcessError(
            "agent_output",
            f"the agent's stdout is not JSON ({error}); it began {head!r}. Print one JSON "
            "value, or set output: text in the agent's config",
        ) from None
    if _deeper_than(value, OUTPUT_DEPTH):
        raise AgentProcessError(
            "agent_output",
            f"the agent's output is JSON nested deeper than {OUTPUT_DEPTH} levels; print "
            "a flatter value",
        )
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` (parsed JSON) nests lists and objects more than `limit` levels deep
    ([] is one level), looked at level by level, without recursion."""
    level = [value]
    for _ in range(limit):
        level = [
            item
            for node in level
            if isinstance(node, list | dict)
            for item in (node.values() if isinstance(node, dict) else node)
        ]
        if not any(isinstance(item, list | dict) for item in level):
            return False
    return any(isinstance(item, list | dict) for item in level)
