"""The HTML page's table of repeated strings, undone as the page's script undoes it."""

from __future__ import annotations

from typing import Any


def resolved(value: Any, strings: list[str]) -> Any:
    """`value` with every reference (U+0000 then an index) replaced by its string, and a
    doubled U+0000 (a string that starts with one) undone."""
    if isinstance(value, str):
        if not value.startswith("\x00"):
            return value
        return value[1:] if value[1:2] == "\x00" else strings[int(value[1:])]
    if isinstance(value, list):
        return [resolved(v, strings) for v in value]
    if isinstance(value, dict):
        return {k: resolved(v, strings) for k, v in value.items()}
    return value
