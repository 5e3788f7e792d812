"""Reading files nobody on the team wrote, within bounds.

A reader of foreign results is handed whatever is there: a FIFO that blocks
forever, `/dev/zero` that never ends, a sparse 8 GB file that is mostly holes,
JSON nested 100,000 levels deep, a number of 5,000 digits. Each of these ends
here in one `InputError` naming the file and the fix, before anything sized by
the input is built.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from passhat.errors import InputError

MAX_JSON_BYTES = 512 * 1024 * 1024
"""A results file larger than this is refused (τ²-bench's largest public results are
tens of MB)."""
MAX_SMALL_BYTES = 16 * 1024 * 1024
"""Manifests, grade files and report files: larger ones are not what they claim to be."""


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def regular_size(path: Path, what: str) -> int:
    """The size of a regular file; InputError for a FIFO, a device, a folder or a
    file that cannot be read (never opened, so a FIFO cannot block)."""
    try:
        info = path.stat()
    except OSError as error:
        raise InputError(f"{path}: the {what} cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(info.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(info.st_mode)
            else "a device"
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
            else "not a regular file"
        )
        raise InputError(f"{path}: the {what} is {kind}, not a file; give the file itself")
    return info.st_size


def read_bytes(path: Path, what: str, cap: int, *, truncate: bool = False) -> bytes:
    """A regular file's bytes, at most `cap` of them: a larger file is refused (or, with
    `truncate`, its first `cap` bytes returned). Its size is checked before reading."""
    size = regular_size(path, what)
    if size > cap and not truncate:
        raise InputError(
            f"{path}: the {what} is {_size(size)}, more than the {_size(cap)} passhat reads; "
            "is it the right file?"
        )
    try:
        with path.open("rb") as handle:
            return handle.read(cap)
    except OSError as error:
        raise InputError(f"{path}: the {what} cannot be read ({error.strerror})") from None


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A `\\uD800`-`\\uDFFF` escape: JSON may write half of a surrogate pair, which Python
reads as a lone surrogate that no UTF-8 encoder (SQLite's, a hash's) accepts."""


def parse_json(text: str | bytes, path: Path, what: str, fix: str = "is it truncated?") -> Any:
    """JSON, or one InputError line: invalid, nested too deep, a number too long, or
    text holding half of a surrogate pair (valid JSON that is no Unicode text)."""
    try:
        value = json.loads(text)
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        if _SURROGATE_ESCAPE.search(raw):  # rare: only then is the whole checked
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        raise InputError(
            f"{path}: the {what} holds a lone surrogate escape (\\uD800-\\uDFFF without "
            f"its pair), which is no Unicode text; {fix}"
        ) from None
    except RecursionError:
        raise InputError(f"{path}: the {what} is nested too deeply to read; {fix}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: the {what} is not UTF-8 text; {fix}") from None
    except ValueError as error:
        reason = str(error).splitlines()[0][:200] if str(error) else "invalid"
        raise InputError(f"{path}: the {what} is not valid JSON ({reason}); {fix}") from None


MAX_STREAM_DEPTH = 64
"""Nesting a file read as a stream may hold: ijson names every level of a value's path,
so a deep one costs the square of its depth; a deeper file is read whole, where a
depth the whole read cannot take is one line (real results nest about 10 levels)."""


def streamable(path: Path, key: str) -> bool:
    """Whether a large JSON file can be read as a stream (ijson) to the same values a whole
    read gives: it is an object whose `key` is an array (the stream's `key.item` would
    also read an object's "item" member), it nests at most MAX_STREAM_DEPTH levels, and it
    holds no surrogate escape (the stream reads a lone one as '?' where the whole read
    refuses it, and a pair as undecodable bytes). Reads the file twice, never whole."""
    import ijson  # type: ignore[import-untyped]  # no stubs

    try:
        with path.open("rb") as handle:
            tail = b""
            for block in iter(lambda: handle.read(1 << 20), b""):
                if _SURROGATE_ESCAPE.search(tail + block):
                    return False
                tail = block[-8:]
            handle.seek(0)
            return _array_at(ijson.basic_parse(handle), key)
    except (ijson.JSONError, ValueError, OSError):
        return False


def _array_at(events: Iterator[tuple[str, Any]], key: str) -> bool:
    """True when the events are of an object whose `key` is an array (once), nested at
    most MAX_STREAM_DEPTH levels."""
    depth = 0
    found = after_key = False
    for event, value in events:
        if after_key:
            found, after_key = event == "start_array", False
        if event in ("start_map", "start_array"):
            depth += 1
            if depth > MAX_STREAM_DEPTH or (depth == 1 and event != "start_map"):
                return False
        elif event in ("end_map", "end_array"):
            depth -= 1
        elif event == "map_key" and depth == 1 and value == key:
            if found:
                return False  # twice: the whole read keeps the last, the stream both
            after_key = True
    return found


def load_json(
    path: Path, what: str, cap: int = MAX_JSON_BYTES, fix: str = "is it truncated?"
) -> Any:
    """A regular file's JSON, bounded in size and depth; one InputError line otherwise."""
    return parse_json(read_bytes(path, what, cap), path, what, fix)


def is_readable_dir(path: Path) -> bool:
    """True for a folder whose entries can be listed."""
    try:
        with os.scandir(path):
            return True
    except OSError:
        return False
