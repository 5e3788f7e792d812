"""A console that shows data, never obeys it: control characters are escaped.

Light on purpose (rich only): every CLI command prints through it, so it must
not pull in the statistics to start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

DIRECTION = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""The direction characters (a class's body): the bidirectional embeddings, overrides and
isolates, and the marks (Arabic, left-to-right, right-to-left), which reorder what is
seen around them: a case `x\\u202eexe.txt` reads `xtxt.exe`."""
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{DIRECTION}]")
"""Characters a terminal acts on instead of showing: C0 (but newline and tab), DEL,
C1, and the direction characters."""
_DIRECTION = re.compile(f"[{DIRECTION}]")


def escape_controls(text: str) -> str:
    """`text` with every control character written out as its escape: an ESC from a
    model, a case id or an error message is shown as `\\x1b`, never obeyed."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escape_one, text)


def escape_direction(text: str) -> str:
    """`text` with every direction character written out as the terminal writes it
    (`\\u202e`): what every page shows of data (the HTML report, `passhat view`, the
    Markdown summary, JUnit), so no text reorders what is seen around it."""
    if text.isascii() or not _DIRECTION.search(text):
        return text
    return _DIRECTION.sub(_escape_one, text)


def _escape_one(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


class SafeConsole(Console):
    """A Console that escapes control characters in everything it prints.

    Data (model output, suite fields, verdict case ids, error messages) reaches the
    terminal through many renderables; escaping each segment's text as it is
    written covers them all. Rich's own control codes (colours, the progress bar's
    cursor moves) are segment styles and control segments, left as they are."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(escape_controls(segment.text), segment.style)
            for segment in buffer
        )
