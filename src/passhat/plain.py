"""Plain JSON data: canonical text, hashes, copies, paths, and how messages quote values.

The lowest layer: suites, environments and scorers all use these, and this
module imports nothing of passhat, so none of them needs another at import time.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import pickle
from collections.abc import Iterable, Sequence
from typing import Any, Literal

MAX_K = 100_000
"""More runs per case than anyone plans: a larger k is a typo, not a plan to account.
A suite's `k`, `-k` and the accounting all stop here."""

Status = Literal["passed", "failed", "errored"]
"""A run's status (passhat.accounting re-exports it): defined low so a run's record
(records.py) need not import the accounting, and the metrics under it, on the runs' way."""

Loc = tuple[str | int, ...]
"""Where a value sits in a file: keys and list indices, e.g. ("goal", "ticket", 0)."""

MISSING: Any = object()
"""What `get_path` gives for a path the data does not hold."""


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count with its noun in the right number: `1 case`, `3 cases`, `1,200 runs`.
    `many` is the plural when adding an s is wrong (`1 entry`, `2 entries`)."""
    word = noun if count == 1 else (many if many is not None else noun + "s")
    return f"{count:,} {word}"


def named(record: Any, names: Iterable[str]) -> dict[str, Any]:
    """The attributes `names` of a record by name, in that order: the JSON-ready form
    of a record whose keys are its own attribute names."""
    return {name: getattr(record, name) for name in names}


def named_lists(record: Any, names: Iterable[str]) -> dict[str, Any]:
    """`named`, with each tuple value as a list: what JSON gives back for it."""
    return {name: _listed(getattr(record, name)) for name in names}


def _listed(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal content, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def clone(value: Any) -> Any:
    """A deep copy of plain data (a round trip through pickle: about twice as fast as
    copy.deepcopy, which matters when every run copies its world several times)."""
    return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def clones(value: Any) -> tuple[Any, Any]:
    """Two deep copies of plain data for one pickling: a tool call's arguments (the
    record's and the handler's), its result (the agent's and the record's)."""
    blob = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    return pickle.loads(blob), pickle.loads(blob)


def field_path(loc: Sequence[str | int]) -> str:
    """`("goal", "ticket", "annotations", 2, "label")` -> `goal.ticket.annotations[2].label`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`"; did you mean 'x'?"` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {show(close[0])}?" if close else ""


def show(value: Any, limit: int = 60) -> str:
    """A value as a message quotes it: text in single quotes, the rest as JSON."""
    text = f"'{value}'" if isinstance(value, str) else canonical_json(_jsonable(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def get_path(data: Any, path: str) -> Any:
    """The value at a dotted path (digits index lists), or `MISSING`."""
    current = data
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return MISSING
    return current


def path_loc(path: str) -> Loc:
    """A dotted path as a location: `cards.0.labels` -> ("cards", 0, "labels")."""
    return tuple(int(p) if p.isdigit() else p for p in path.split("."))
