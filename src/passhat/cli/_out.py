"""Standard output and error: every command's --json (`write_json`,
`write_json_pieces`) and the two consoles (`console_of`: `passhat.cli._app.console`
and `err_console`).

A module of its own, importing no typer, so that `passhat report EXPERIMENT [--json]`
(or `--html FILE`), run without the command-line parser (`passhat.cli.quick_report`),
writes through the same functions and consoles as every other command."""

from __future__ import annotations

import codecs
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.report.console import SafeConsole


_CONSOLES: dict[str, SafeConsole] = {}


def console_of(name: str) -> SafeConsole:
    """The console `name` ("console": stdout, "err_console": stderr), made the first
    time it is asked for (rich's console is a tenth of the start-up `passhat --help`
    needs none of); every line printed escapes control characters: data is shown,
    never obeyed."""
    made = _CONSOLES.get(name)
    if made is None:
        from passhat.report.console import SafeConsole, keep_dropped_visible

        keep_dropped_visible()  # a model's CR shown as \x0d, not dropped: the program's choice
        # no emoji codes: a path or label holding `:smile:` is shown as written (and
        # rich's table of emoji codes, 4 ms of a report's start, stays unloaded)
        made = _CONSOLES[name] = SafeConsole(
            stderr=name == "err_console", highlight=False, emoji=False
        )
    return made


def write_json(data: Any) -> None:
    """JSON on stdout: indented for a person at a terminal, compact for a pipe.

    pydantic-core's serializer (Rust) writes 100,000 cases several times faster
    than `json.dumps`, and writes NaN and infinities as null: always valid JSON."""
    from pydantic_core import PydanticSerializationError, to_json

    indent = 2 if sys.stdout.isatty() else None
    try:
        written = to_json(data, indent=indent, inf_nan_mode="null")
    except PydanticSerializationError as error:
        if "depth" not in str(error):
            raise
        from passhat.errors import StoreError

        raise StoreError(  # its serializer stops at 255 levels; a store's read at ~1,000
            "the store is damaged: a value in it is JSON nested 255 levels deep or more, "
            "deeper than passhat stores (200) or writes out as JSON; read it with sqlite3"
        ) from None
    write_json_pieces([written])


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
