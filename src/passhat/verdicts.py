"""Verdict files: bring your own per-run verdicts as JSON Lines.

One JSON object per line::

    {"case": "ac-conflict-001", "run": 1, "status": "failed"}

`status` is one of passed, failed, errored; `run` is the 1-based run index.
Other keys are allowed and ignored here, which leaves room for later optional
fields (per-item findings, timing). Blank lines are skipped.

Lines are parsed with pydantic-core's JSON parser (already installed with
pydantic), which is several times faster than `json.loads` on a million lines.
That parser keeps the last value of a key written twice: a line writing `case`, `run`
or `status` twice (`"status": "passed", "status": "failed"`) is refused. A plain verdict
holds ten quotes and a key written again adds two, so the file's quotes are counted as
it is read (per buffer, at C speed: `_Quoted`); only a file holding more than ten a
line is read again (`_keys_once`: its keys' texts counted over the whole file, and only
where some is there more than once a verdict, or escaped, each line looked at). A pipe
is read once: each line of more than ten quotes is looked at as it comes.
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from passhat._gc import without_gc
from passhat.accounting import STATUSES, Ledger, duplicate_run
from passhat.errors import VerdictFileError

EXAMPLE = '{"case": "ac-conflict-001", "run": 1, "status": "failed"}'
_STATUSES = frozenset(STATUSES)


MAX_LINE = 1 << 20
"""Bytes of one verdict line, at most: `/dev/zero` or a binary file is one endless line."""


def _unreadable(error: OSError) -> str:
    """Why a verdict file cannot be opened, and for a wrong path what to give instead."""
    if isinstance(error, FileNotFoundError):
        return "no such file; give the path of a .jsonl verdict file"
    return f"cannot be read ({error.strerror})"


@without_gc
def read_verdicts(path: str | Path) -> Ledger:
    """Read a verdict file into a `Ledger`; any bad line is one clear error."""
    path = Path(path)
    try:
        raw = _Quoted(path)
    except OSError as error:
        raise VerdictFileError(f"{path}: {_unreadable(error)}") from None
    handle = io.BufferedReader(raw, 1 << 20)
    regular = stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
    read: Iterator[bytes] = iter(partial(handle.readline, MAX_LINE), b"")
    if not regular:  # a pipe is read once: its lines are looked at as they come
        read = _looked_at(read, path)
    cases: dict[str, dict[int, str]] = {}  # Ledger.add inlined: a million lines
    ok = _STATUSES
    lines = 0
    with handle:
        for number, line in enumerate(read, start=1):
            if len(line) == MAX_LINE and not line.endswith(b"\n"):
                raise VerdictFileError(
                    f"{path}: line {number} is longer than {MAX_LINE:,} bytes; a verdict is "
                    'one small JSON object per line, e.g. {"case": "a", "run": 1, '
                    '"status": "passed"} (is this a verdict file?)'
                )
            try:
                record = from_json(line)
            except ValueError as error:
                if not line.strip():
                    continue
                raise _bad_json(path, number, error) from None
            lines += 1
            # the common case inline; _fields explains whatever is off
            if type(record) is dict:
                case = record.get("case")
                run = record.get("run")
                status = record.get("status")
                if not (
                    type(case) is str
                    and case
                    and type(run) is int
                    and run >= 1
                    and type(status) is str
                    and status in ok
                ):
                    case, run, status = _fields(record, line, path, number)
            else:
                case, run, status = _fields(record, line, path, number)
            runs = cases.get(case)
            if runs is None:
                runs = cases[case] = {}
            elif run in runs:
                _once(line, path, number)  # a run written twice says so, not "run 2 again"
                raise VerdictFileError(f"{path}:{number}: {duplicate_run(case, run)}")
            runs[run] = status
    if lines == 0:
        raise VerdictFileError(f"{path}: is empty; write one verdict per line, e.g. {EXAMPLE}")
    if regular and raw.quotes != PLAIN_QUOTES * lines:  # a line holds more than a plain one
        _keys_once(path, lines, (raw.size, raw.quotes))
    return Ledger.of(cases)


class _Quoted(io.FileIO):
    """A file read for its lines, counting the bytes and quotes of all it reads."""

    size = quotes = 0

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")

    def readinto(self, buffer: Any) -> int | None:
        read = super().readinto(buffer)
        if read:
            self.size += read
            self.quotes += memoryview(buffer)[:read].tobytes().count(b'"')
        return read


def _bad_json(path: Path, number: int, error: ValueError) -> VerdictFileError:
    return VerdictFileError(
        f"{path}:{number}: not valid JSON ({error}); each line must be one object like {EXAMPLE}"
    )


PLAIN_QUOTES = 10
"""The quotes of a plain verdict (`case` and `status` strings, `run` a number), the
fewest any verdict holds: every key written again, escaped or not, adds two."""
DECIDING = ("case", "run", "status")
"""The keys that decide what a line counts: none may be written twice."""
_WRITTEN = tuple(f'"{key}"'.encode() for key in DECIDING)


def _keys_once(path: Path, lines: int, read: tuple[int, int]) -> None:
    """Read the verdict file again, whose `lines` verdicts hold more quotes than plain
    ones (`read`: its bytes and quotes as first read), and refuse a DECIDING key written
    twice (`_once`). Where each key's text is in the file once a verdict and no escape
    is, none is (a count over the whole file, at C speed); else each line of more
    quotes than a plain verdict is looked at. A file that changed since it was read is
    refused: which content counted is unclear."""
    size, quotes, escapes, *written = _counts(path)
    if (size, quotes) != read:
        raise _changed(path)
    if escapes == 0 and all(n == lines for n in written):
        return
    seen = verdicts = 0
    with _reopened(path) as handle:
        for number, line in enumerate(iter(partial(handle.readline, MAX_LINE), b""), start=1):
            held = line.count(b'"')
            seen += held
            verdicts += held > 0  # a blank line holds none, a verdict at least ten
            if held > PLAIN_QUOTES:
                _once(line, path, number)
    if (seen, verdicts) != (quotes, lines):
        raise _changed(path)


def _counts(path: Path) -> list[int]:
    """The file's bytes, quotes, backslashes, and each DECIDING key's text (`"run"`)."""
    found = [0] * (3 + len(_WRITTEN))
    last = b""
    with _reopened(path) as handle:
        for chunk in iter(partial(handle.read, 1 << 20), b""):
            found[0] += len(chunk)
            found[1] += chunk.count(b'"')
            found[2] += chunk.count(b"\\")
            for index, key in enumerate(_WRITTEN, start=3):
                seam = last[1 - len(key) :] + chunk[: len(key) - 1]  # one across the two
                found[index] += chunk.count(key) + seam.count(key)
            last = chunk
    return found


def _reopened(path: Path) -> io.BufferedReader:
    try:
        return path.open("rb")
    except OSError as error:
        raise VerdictFileError(f"{path}: {_unreadable(error)}") from None


def _changed(path: Path) -> VerdictFileError:
    return VerdictFileError(f"{path}: changed while it was read; read it when nothing writes to it")


def _looked_at(read: Iterator[bytes], path: Path) -> Iterator[bytes]:
    """The lines of `read`, each of more quotes than a plain verdict checked by `_once`
    first (a line cut at MAX_LINE is left to the reader's own message)."""
    for number, line in enumerate(read, start=1):
        if line.count(b'"') > PLAIN_QUOTES and (len(line) < MAX_LINE or line.endswith(b"\n")):
            _once(line, path, number)
        yield line


class _Pairs(list[tuple[str, Any]]):
    """A JSON object's keys and values, in the order written (duplicates kept)."""


def _once(line: bytes, path: Path, number: int) -> None:
    """Refuse a verdict line (a JSON object) that writes a DECIDING key twice, which the
    parser would read as its last value: a line holding each key's text once and no
    escape (a key can be written `"st\\u0061tus"`) needs no second parse."""
    if (
        b"\\" not in line
        and line.count(b'"status"') < 2
        and line.count(b'"run"') < 2
        and line.count(b'"case"') < 2
    ):
        return
    try:  # numbers kept as text: a 5,000-digit one is no reason to pass the line
        pairs = json.loads(line, object_pairs_hook=_Pairs, parse_int=str, parse_float=str)
    except ValueError as error:
        raise _bad_json(path, number, error) from None
    except RecursionError:  # deeper than pydantic-core reads: the reader says so
        return
    if not isinstance(pairs, _Pairs):
        return  # not an object: the reader says so
    keys = [key for key, _ in pairs]
    for key in DECIDING:
        if keys.count(key) > 1:
            raise VerdictFileError(
                f"{path}:{number}: field '{key}' is written {keys.count(key)} times in one "
                f"verdict, so which value counts is unclear; write it once, e.g. {EXAMPLE}"
            )


def _fields(record: Any, line: bytes, path: Path, number: int) -> tuple[str, int, str]:
    if type(record) is dict:
        case = record.get("case")
        run = record.get("run")
        status = record.get("status")
        known = isinstance(status, str) and status in _STATUSES
        if type(case) is str and case and type(run) is int and run >= 1 and known:
            return case, run, str(status)
    if type(record) is dict:
        _once(line, path, number)  # a key written twice is said first
    raise VerdictFileError(f"{path}:{number}: {_problem(record)}")


def _problem(record: Any) -> str:
    """Why a parsed line is not a verdict (the slow path, only for bad lines)."""
    if not isinstance(record, dict):
        return f"expected a JSON object like {EXAMPLE}"
    case, run, status = record.get("case"), record.get("run"), record.get("status")
    if not isinstance(case, str) or not case:
        return "field 'case' must be a non-empty string (the case id)"
    if not isinstance(run, int) or isinstance(run, bool):
        return "field 'run' must be a whole number (1 for the first run)"
    if run < 1:
        return f"field 'run' is {run}; run indices start at 1"
    return f"field 'status' is {json.dumps(status)}; use one of {', '.join(STATUSES)}"
