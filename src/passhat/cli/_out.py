"""JSON on standard output (`write_json`, `write_json_pieces`): every command's --json.

A module of its own, importing no typer, so that `passhat report REF --json`, run
without the command-line parser (`passhat.cli.quick_report`), writes through
the same two functions as every other command."""

from __future__ import annotations

import codecs
import sys
from collections.abc import Iterable
from typing import Any


def write_json(data: Any) -> None:
    """JSON on stdout: indented for a person at a terminal, compact for a pipe.

    pydantic-core's serializer (Rust) writes 100,000 cases several times faster
    than `json.dumps`, and writes NaN and infinities as null: always valid JSON."""
    from pydantic_core import to_json

    indent = 2 if sys.stdout.isatty() else None
    write_json_pieces([to_json(data, indent=indent, inf_nan_mode="null")])


def write_json_pieces(pieces: Iterable[bytes]) -> None:
    """UTF-8 JSON, given in pieces, on stdout, then a newline. A UTF-8 stdout gets the
    bytes as they are (27 MB at 100,000 runs: decoding them to text and encoding them
    back cost 25-50 ms); any other gets them as text in its encoding, each character
    that encoding cannot hold written as a JSON escape (`\\u010d` for `č`: the same
    JSON value; it was a UnicodeEncodeError traceback at an ASCII stdout)."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None or codecs.lookup(out.encoding or "ascii").name != "utf-8":
        encoding = getattr(out, "encoding", None)
        if encoding:
            codecs.register_error(JSON_ESCAPE, _json_escape)
        for piece in pieces:
            text = piece.decode("utf-8")
            out.write(text.encode(encoding, JSON_ESCAPE).decode(encoding) if encoding else text)
        out.write("\n")
        return
    out.flush()  # text written before stays before
    for piece in pieces:
        buffer.write(piece)
    buffer.write(b"\n")
    buffer.flush()


JSON_ESCAPE = "passhat.json_escape"
"""The codec error handler `_json_escape` is registered under."""


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """Characters an encoding cannot hold, as JSON escapes: `\\uXXXX`, a pair of them
    (UTF-16 surrogates) past U+FFFF. Only ever inside a JSON string: the rest of JSON is
    ASCII."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start : error.end]:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped), error.end
