"""A console that shows data, never obeys it: control characters are escaped.

Light on purpose (rich only): every CLI command prints through it, so it must
not pull in the statistics to start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich import text as rich_text
from rich.console import Console
from rich.control import STRIP_CONTROL_CODES
from rich.segment import Segment

DIRECTION = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""The direction characters (a class's body): the bidirectional embeddings, overrides and
isolates, and the marks (Arabic, left-to-right, right-to-left), which reorder what is
seen around them: a case `x\\u202eexe.txt` reads `xtxt.exe`."""
HIDDEN = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u2060-\u2065\u206a-\u206f"
    "\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
"""The invisible characters (a class's body: Unicode's default-ignorable ones): soft
hyphen, combining grapheme joiner, the Hangul fillers, Khmer's inherent vowels,
Mongolian's variation selectors and vowel separator, zero-width space, word joiner,
invisible operators, the deprecated format characters, variation selectors, zero-width
no-break space, the shorthand and musical format controls, and the tag characters and
variation selectors of plane 14 (invisible ASCII, one hidden byte each: text a reader
cannot see, an instruction hidden in an answer). An extra item `AC1:conflict\\u200b`
read as the goal's `AC1:conflict`. The joiners (U+200C, U+200D) and the text and emoji
presentation selectors (U+FE0E, U+FE0F) stay: scripts and emoji need them."""
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{DIRECTION}{HIDDEN}]")
"""Characters a terminal acts on instead of showing: C0 (but newline and tab), DEL,
C1, the direction characters, and the invisible ones."""
_DIRECTION = re.compile(f"[{DIRECTION}{HIDDEN}]")
_DROPPED = {code: f"\\x{code:02x}" for code in STRIP_CONTROL_CODES}
"""What rich's Text drops (BEL, backspace, VT, FF, CR), each as its escape."""
_DROPPED_ANY = re.compile("[" + "".join(map(chr, STRIP_CONTROL_CODES)) + "]")


def escape_controls(text: str) -> str:
    """`text` with every control character written out as its escape: an ESC from a
    model, a case id or an error message is shown as `\\x1b`, never obeyed."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escape_one, text)


def escape_direction(text: str) -> str:
    """`text` with every direction and invisible character written out as the terminal
    writes it (`\\u202e`, `\\u200b`): what every page shows of data (the HTML report,
    `passhat view`, the Markdown summary, JUnit), so no text reorders what is seen
    around it or hides in it."""
    if text.isascii() or not _DIRECTION.search(text):
        return text
    return _DIRECTION.sub(_escape_one, text)


def one_line(text: str) -> str:
    """An item's name on one line, its newlines written out (`\\n`): a model's extra item
    `AC9:x` + newline + `pass^3 100%` drew a line of its own in the item table, that
    read as a line of the report's."""
    return text.replace("\n", "\\n") if "\n" in text else text


def _escape_one(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _written_out(text: str) -> str:
    """`text` with the characters rich's `Text` drops written out as their escapes."""
    return text.translate(_DROPPED) if _DROPPED_ANY.search(text) else text


def keep_dropped_visible() -> None:
    """Make rich's `Text` write out the control characters it drops (BEL, backspace, VT,
    FF, CR: rich.control.strip_control_codes) as their escapes (`\\x07`, `\\x0d`), as
    escape_controls writes every other one. Every string a renderable is given (Text,
    a table's cell, a panel's title, `console.print(str)`) passes there before a
    console sees it: a model's `ok\\rfailed` was shown as `okfailed` by `show`, `diff`,
    `why` and the report, the CR gone without a trace. Process-wide (rich's module
    global), so a program's choice, not a library's: passhat's command line makes it
    with its consoles (cli/_out.console_of), and `passhat view` for its text; importing
    passhat changes nothing in a program that prints with rich itself."""
    rich_text.strip_control_codes = _written_out  # type: ignore[attr-defined,assignment]


class SafeConsole(Console):
    """A Console that escapes control characters in everything it prints.

    Data (model output, suite fields, verdict case ids, error messages) reaches the
    terminal through many renderables; escaping each segment's text as it is
    written covers them all. Rich's own control codes (colours, the progress bar's
    cursor moves) are segment styles and control segments, left as they are. The
    characters rich drops before a segment is made are written out instead
    (keep_dropped_visible)."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(escape_controls(segment.text), segment.style)
            for segment in buffer
        )
