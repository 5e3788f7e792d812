"""Where a claim sits in its text: the sentence around a match (looked for in a
bounded window, kept to MAX_QUOTE characters) and the blocks of prose lines read as one
(a sentence broken across lines), each line keeping its own number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_QUOTE = 200
"""Characters of the sentence kept with a claim."""


_STOPS = (". ", "! ", "? ", "。", "；")
_WINDOW = 2 * MAX_QUOTE
"""Characters either side of a match searched for its sentence's ends: a 4 MB line of
minified JSON is never searched whole once per match."""


def sentence_span(line: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence of `line` holding [start, end) begins and ends (looked for at
    most _WINDOW characters either side)."""
    lo = max(0, start - _WINDOW)
    left = max((i + len(s) for s in _STOPS if (i := line.rfind(s, lo, start)) >= 0), default=lo)
    ends = [i for i in (line.find(s, end, end + _WINDOW) for s in _STOPS) if i >= 0]
    right = min(ends) + 1 if ends else min(len(line), end + _WINDOW)
    return left, right


def sentence(line: str, start: int, end: int) -> str:
    """The sentence of `line` holding [start, end), at most MAX_QUOTE characters."""
    left, right = sentence_span(line, start, end)
    text = line[left:right].strip().strip("|").strip()
    if len(text) > MAX_QUOTE:
        middle = (start + end) // 2 - left
        lo = max(0, middle - MAX_QUOTE // 2)
        text = ("…" if lo else "") + text[lo : lo + MAX_QUOTE] + "…"
    return "".join(c if c.isprintable() else " " for c in text)


@dataclass(frozen=True)
class Block:
    """Consecutive lines read as one (a sentence broken across lines), with where each
    line starts in `text` so a match is reported at its own line."""

    text: str
    starts: tuple[int, ...]
    first_line: int

    def line_of(self, offset: int) -> int:
        line = 0
        for i, start in enumerate(self.starts):
            if start <= offset:
                line = i
        return self.first_line + line


_NOT_PROSE = re.compile(r"^\s*(?:[|#>*+\-]|\d+[.)]\s|\\|```|~~~|[\w\"'-]+\s*[:=]\s*\S)")
_WRAPPED = re.compile(r"^\s{2,}[a-z(`]")
"""A list item's sentence going on in the next, indented line ("- Confirm whether" then
"  a single run per task is ...")."""
SENTENCE_END = re.compile(r"[.!?:。；;]\s*$")
"""A line that ends its sentence: the next line begins another."""


def prose_blocks(lines: list[str]) -> Iterator[Block]:
    """Each line, with a prose line that does not end its sentence joined to the next."""
    i = 0
    while i < len(lines):
        parts, starts, offset = [lines[i]], [0], len(lines[i]) + 1
        j = i
        while (
            j + 1 < len(lines)
            and len(parts) < 8
            and lines[j].strip()
            and lines[j + 1].strip()
            and (not _NOT_PROSE.match(lines[j]) or _WRAPPED.match(lines[j + 1]) is not None)
            and not _NOT_PROSE.match(lines[j + 1])
            and "|" not in lines[j] + lines[j + 1]
            and not SENTENCE_END.search(lines[j])
        ):
            j += 1
            parts.append(lines[j])
            starts.append(offset)
            offset += len(lines[j]) + 1
        yield Block(" ".join(parts), tuple(starts), i + 1)
        i = j + 1


MAX_CONTINUED = 40
"""Lines of one command joined by trailing backslashes, at most."""


_COMMENT_LINE = re.compile(r"^\s*(?:#|//|/\*|\*(?:\s|/|$))")
"""A comment's line: `#`, `//`, and a block comment's `/*` and ` * ` lines (JSDoc's, C's)."""


def command_blocks(lines: list[str]) -> Iterator[Block]:
    """Each line of a data file or script, with a command continued by a trailing `\\`
    joined to its next lines (`harbor run \\` ... `-n 4 \\`: the -n is harbor's); not
    comment lines (a commented-out `--num-trials 5`, a usage line ` *   node x.mjs --repeat 3`
    of a block comment, is not run; embedded.py reads comments as prose)."""
    i = 0
    while i < len(lines):
        if _COMMENT_LINE.match(lines[i]):
            i += 1
            continue
        parts, starts, offset = [lines[i]], [0], len(lines[i]) + 1
        while (
            i + len(parts) < len(lines)
            and len(parts) < MAX_CONTINUED
            and parts[-1].rstrip().endswith("\\")
        ):
            following = lines[i + len(parts)]
            parts.append(following)
            starts.append(offset)
            offset += len(following) + 1
        yield Block(" ".join(parts), tuple(starts), i + 1)
        i += len(parts)
