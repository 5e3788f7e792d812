"""Records as rows: the columns of `experiments` and `runs`, which of them hold JSON, and
how a value becomes that JSON (anything not JSON-ready made so by `json_safe`: NaN,
sets, cycles and deep nesting written as text, never an exception mid-write); and read
back, the shapes every reader counts on checked (what is not: one line, never a
traceback, whoever wrote the store).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from passhat.errors import StoreError
from passhat.records import ExperimentRecord, RunRecord, is_set_detail

_EXPERIMENT_JSON = ("model_config", "params", "case_ids", "case_hashes", "tools", "source")


_RUN_JSON = ("output", "final_state", "score", "transcript", "tool_calls", "retries")


TEXT_TOKENS = (
    "SELECT case_id, run_index, CASE WHEN typeof(input_tokens) IN ('integer', 'real') "
    "THEN 'output_tokens' ELSE 'input_tokens' END FROM run_summaries WHERE experiment_id = ? "
    "AND typeof(input_tokens) || typeof(output_tokens) NOT IN "
    "('integerinteger', 'integerreal', 'realinteger', 'realreal') LIMIT 1"
)
"""A run of an experiment whose token columns hold anything but numbers (text written
by hand: SQLite keeps it): its case, index and column, from the covering index."""


def decode(value: str, what: str) -> Any:
    """A JSON column's value; a StoreError naming `what` when the text is not JSON, or
    nested too deep to read. A lone surrogate's escape (no UTF-8 holds it: printed or
    written, it ended in a traceback) is kept as that escape, as the writer keeps it."""
    try:
        decoded = json.loads(value)
    except (TypeError, ValueError) as error:
        raise StoreError(f"the store is damaged: {what} is not JSON ({error})") from None
    except RecursionError:  # JSON nested past Python's recursion limit: no store wrote it
        raise StoreError(f"the store is damaged: {what} is JSON nested too deep to read") from None
    if _SURROGATE.search(value):  # (a regex: twice as quick as two `in` looks)
        return json_safe(decoded)
    return decoded


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""A surrogate's escape in JSON text: a pair decodes to its character, a lone one to no
text."""


def check_numbers(data: dict[str, Any]) -> None:
    """A run's row whose number columns hold anything but numbers (text written by hand:
    SQLite keeps it; `show` and `diff` ended in a traceback): a StoreError naming them."""
    for key in ("started_at", "duration_s", "input_tokens", "output_tokens"):
        if type(data.get(key, 0)) not in (int, float):
            where = f"run {data.get('run_index')} of case {data.get('case_id')!r}"
            raise StoreError(f"the store is damaged: {key} of {where} is {data[key]!r}, no number")


_OBJECTS, _TEXTS = "a JSON list of objects", "a JSON list of text"
_RUN_SHAPES = {
    "final_state": "a JSON object",
    **dict.fromkeys(("score", "transcript", "tool_calls", "retries"), _OBJECTS),
}
"""The shape of a run's JSON columns every reader counts on (`output` may be anything)."""
_EXPERIMENT_SHAPES = {
    "case_ids": _TEXTS,
    "tools": _TEXTS,
    **dict.fromkeys(("case_hashes", "params", "model_config"), "a JSON object"),
}
_DICT, _STR = frozenset((dict,)), frozenset((str,))
_FITS = {  # the element types as a set: map and set run in C (a generator cost 20 us a run)
    "a JSON object": lambda v: type(v) is dict,
    _OBJECTS: lambda v: type(v) is list and set(map(type, v)) <= _DICT,
    _TEXTS: lambda v: type(v) is list and set(map(type, v)) <= _STR,
}


def check_shapes(data: dict[str, Any], where: str, shapes: dict[str, str]) -> None:
    """A record's decoded JSON columns in the shape every reader counts on (a store someone
    else wrote, a hand edit: `tool_calls` of `[1, 2]` ended `show` in a traceback), and
    its seed a whole number: else a StoreError naming the column, `where` and what it
    holds."""
    for key, wanted in shapes.items():
        if key in data and not _FITS[wanted](data[key]):
            raise StoreError(
                f"the store is damaged: {key} of {where} is {_short(data[key])}, not {wanted}"
            )
    if type(data.get("seed", 0)) is not int:
        raise StoreError(f"the store is damaged: seed of {where} is {_short(data['seed'])}")


def set_details(items: Any, what: str | Callable[[], str]) -> list[dict[str, Any]]:
    """A run's per-item results as every report reads them: the details that are set
    details (`records.is_set_detail`; a custom scorer's `"expected": 1` is its own, and
    ended report, its --json and --html and why in a traceback); a StoreError when they
    are no JSON list, naming them `what` (or what it gives, asked only then: naming the
    first run of a shared text searches every run's, 0.5 s of `report --json`'s 1.5 s
    at 100,000 runs when asked of each)."""
    if type(items) is not list:
        name = what if isinstance(what, str) else what()
        raise StoreError(f"the store is damaged: {name} is {_short(items)}, not a JSON list")
    if all(map(is_set_detail, items)):
        return items
    return [detail for detail in items if is_set_detail(detail)]


def check_messages(transcript: list[dict[str, Any]], where: str) -> None:
    """A transcript's messages with their tool calls in the shape every reader counts on
    (`"tool_calls": 7` ended show, diff, why and report in a traceback): else a
    StoreError naming the message. A role or content of another type is shown as it is."""
    for number, message in enumerate(transcript):
        calls = message.get("tool_calls")
        if calls is not None and not _FITS[_OBJECTS](calls):
            raise StoreError(
                f"the store is damaged: tool_calls of message {number} of the transcript of "
                f"{where} is {_short(calls)}, not {_OBJECTS}"
            )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


_RUN_COLUMNS = tuple(f.name for f in fields(RunRecord))
"""The columns of `runs`, one per field of RunRecord (as `_row` writes them)."""


def _row(record: ExperimentRecord | RunRecord) -> dict[str, Any]:
    """A record's fields, shallow: `dataclasses.asdict` would deep-copy every transcript.
    An experiment's `case_k` and `adaptive` live in their own tables
    (`Store.hold_cases`, `Store.add_adaptive`)."""
    return {
        f.name: getattr(record, f.name)
        for f in fields(record)
        if f.name not in ("case_k", "adaptive")
    }


def _encode(value: Any) -> str:
    """JSON text for a column: pydantic-core's serializer, several times faster than
    json.dumps on a transcript; anything that is not JSON becomes its str().

    What even that cannot write (bytes that are not UTF-8, a lone surrogate, a
    structure that contains itself) is made safe first by `json_safe`: the run is
    recorded with those values escaped, never lost to an encoding error.
    """
    try:
        return _to_json(value, fallback=str, inf_nan_mode="null").decode("utf-8")
    except (ValueError, RecursionError):  # PydanticSerializationError is a ValueError
        return _to_json(json_safe(value), inf_nan_mode="null").decode("utf-8")


def _encode_small(value: Any) -> str:
    """`_encode` for an experiment's few, small columns: the standard library's encoder
    writes plain JSON data (text keys; text, numbers, booleans, null, lists) as
    pydantic-core would, so creating an experiment loads no pydantic-core (its import,
    20-40 ms, came before the first run of every `passhat run`; the runs' writer
    thread loads it while the first runs wait on their agents). Anything else goes to
    `_encode`, as before."""
    try:
        if not _text_keys(value):  # (a structure that contains itself: RecursionError)
            return _encode(value)
        text = json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_refuse
        )
        text.encode("utf-8")  # a lone surrogate: `_encode` escapes it
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return _encode(value)
    return text


def _text_keys(value: Any) -> bool:
    """Whether every mapping in `value` has text keys only (the two encoders write a
    key of None differently)."""
    if isinstance(value, dict):
        return all(type(k) is str and _text_keys(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_text_keys(v) for v in value)
    return True


def _refuse(value: Any) -> Any:
    raise TypeError(f"not plain JSON data: {type(value).__name__}")


def _to_json(value: Any, **options: Any) -> bytes:
    """pydantic-core's `to_json`, imported on the first write: a command that only
    reads the store (report, show, list) never loads pydantic-core's schema module."""
    from pydantic_core import to_json

    return to_json(value, **options)


_MAX_DEPTH = 200
"""Deeper structures are cut (to a line naming their type) rather than recursing without
end: not to their repr, which recursed through what was left (RecursionError at 950)."""


def json_safe(value: Any, _seen: frozenset[int] = frozenset(), _depth: int = 0) -> Any:
    """Plain JSON data for any value, keeping all it can and escaping the rest.

    Strings with lone surrogates keep them as `\\udXXX` escapes; bytes become
    their repr (`b'\\xff'`); a container met again inside itself becomes
    `"<circular reference>"`; other objects their str()."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return _safe_text(value)
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if _depth > _MAX_DEPTH:
            return f"<{type(value).__name__} nested deeper than {_MAX_DEPTH} levels, cut>"
        if id(value) in _seen:
            return "<circular reference>"
        seen = _seen | {id(value)}
        if isinstance(value, dict):
            return {
                _safe_text(k if isinstance(k, str) else str(k)): json_safe(v, seen, _depth + 1)
                for k, v in value.items()
            }
        return [json_safe(v, seen, _depth + 1) for v in value]
    try:
        return _safe_text(str(value))
    except Exception:  # RecursionError included
        return f"<unprintable {type(value).__name__}>"


def _safe_text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
