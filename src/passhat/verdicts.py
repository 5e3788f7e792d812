"""Verdict files: bring your own per-run verdicts as JSON Lines.

One JSON object per line::

    {"case": "ac-conflict-001", "run": 1, "status": "failed"}

`status` is one of passed, failed, errored; `run` is the 1-based run index.
Other keys are allowed and ignored here, which leaves room for later optional
fields (per-item findings, timing). Blank lines are skipped.

Lines are parsed with pydantic-core's JSON parser (already installed with
pydantic), which is several times faster than `json.loads` on a million lines.
"""

from __future__ import annotations

import json
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
        handle = path.open("rb")
    except OSError as error:
        raise VerdictFileError(f"{path}: {_unreadable(error)}") from None
    cases: dict[str, dict[int, str]] = {}  # Ledger.add inlined: a million lines
    ok = _STATUSES
    lines = 0
    with handle:
        for number, line in enumerate(iter(partial(handle.readline, MAX_LINE), b""), start=1):
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
                    case, run, status = _fields(record, path, number)
            else:
                case, run, status = _fields(record, path, number)
            runs = cases.get(case)
            if runs is None:
                runs = cases[case] = {}
            elif run in runs:
                raise VerdictFileError(f"{path}:{number}: {duplicate_run(case, run)}")
            runs[run] = status
    if lines == 0:
        raise VerdictFileError(f"{path}: is empty; write one verdict per line, e.g. {EXAMPLE}")
    return Ledger.of(cases)


def _bad_json(path: Path, number: int, error: ValueError) -> VerdictFileError:
    return VerdictFileError(
        f"{path}:{number}: not valid JSON ({error}); each line must be one object like {EXAMPLE}"
    )


def _fields(record: Any, path: Path, number: int) -> tuple[str, int, str]:
    if type(record) is dict:
        case = record.get("case")
        run = record.get("run")
        status = record.get("status")
        known = isinstance(status, str) and status in _STATUSES
        if type(case) is str and case and type(run) is int and run >= 1 and known:
            return case, run, str(status)
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
