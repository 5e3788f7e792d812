"""Verdict files: bring your own per-run verdicts as JSON Lines.

One JSON object per line::

    {"case": "ac-conflict-001", "run": 1, "status": "failed"}

`status` is one of passed, failed, errored; `run` is the 1-based run index.
Other keys are allowed and ignored here, which leaves room for later optional
fields (per-item findings, timing). Blank lines are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

from passhat.accounting import STATUSES, Ledger
from passhat.errors import InputError, VerdictFileError

EXAMPLE = '{"case": "ac-conflict-001", "run": 1, "status": "failed"}'


def read_verdicts(path: str | Path) -> Ledger:
    """Read a verdict file into a `Ledger`; any bad line is one clear error."""
    path = Path(path)
    try:
        handle = path.open("r", encoding="utf-8")
    except FileNotFoundError:
        raise VerdictFileError(f"{path}: no such file; give the path of a .jsonl verdict file")
    except OSError as error:
        raise VerdictFileError(f"{path}: cannot be read ({error.strerror})") from None
    ledger = Ledger()
    lines = 0
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                lines += 1
                case, run, status = _parse_line(line, path, number)
                try:
                    ledger.add(case, run, status)
                except InputError as error:
                    raise VerdictFileError(f"{path}:{number}: {error}") from None
        except UnicodeDecodeError:
            raise VerdictFileError(f"{path}: is not UTF-8 text; save it as UTF-8 JSON Lines") from None
    if lines == 0:
        raise VerdictFileError(f"{path}: is empty; write one verdict per line, e.g. {EXAMPLE}")
    return ledger


def _parse_line(line: str, path: Path, number: int) -> tuple[str, int, str]:
    where = f"{path}:{number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise VerdictFileError(
            f"{where}: not valid JSON ({error.msg} at column {error.colno}); "
            f"each line must be one object like {EXAMPLE}"
        ) from None
    if not isinstance(record, dict):
        raise VerdictFileError(f"{where}: expected a JSON object like {EXAMPLE}")
    case = record.get("case")
    run = record.get("run")
    status = record.get("status")
    if not isinstance(case, str) or not case:
        raise VerdictFileError(f"{where}: field 'case' must be a non-empty string (the case id)")
    if not isinstance(run, int) or isinstance(run, bool):
        raise VerdictFileError(f"{where}: field 'run' must be a whole number (1 for the first run)")
    if run < 1:
        raise VerdictFileError(f"{where}: field 'run' is {run}; run indices start at 1")
    if status not in STATUSES:
        raise VerdictFileError(
            f"{where}: field 'status' is {json.dumps(status)}; use one of {', '.join(STATUSES)}"
        )
    return case, run, status
