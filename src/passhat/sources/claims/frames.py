"""What encloses a line, its *frame*: the file's path, the heading above it and the
lead-in of the list or block it sits in ("It should:", "**Training parameters:**",
"If the success rate is 80%:"), or, in a data file, the keys it is nested under
(`judge:` → `repeats: 3`, `[training]`). A number's frame can make it no claim: a
section of plans, a training configuration, a judge's settings (grammar.frame_rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.*)$")
_LATEX_HEADING = re.compile(r"\\(?:sub)*section\*?\{(?P<text>[^}]*)\}")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|\[[ xX]\])\s|^\s{2,}\S|^\s*(?:```|~~~)")
"""A list item, an indented or fenced line: it keeps the lead-in above it."""
_LEAD_IN = re.compile(r"^(?P<text>.{1,160}?)[:：]\s*(?:\*\*|__)?\s*$")
_OPENER = re.compile(
    r"^(?P<indent>\s*)-?\s*[\"']?(?P<key>[\w.-]{1,60})[\"']?\s*[:=]\s*[{\[]?\s*(?:#.*)?$"
)
"""A key whose value is the block below it: `judge:`, `"training": {`."""
_SECTION = re.compile(r"^\s*\[+(?P<key>[\w. -]{1,60})\]+\s*$")
"""A TOML or INI section: `[training]`, `[[eval.runs]]`."""
_CONTENT = re.compile(r"^(?P<indent>\s*)\S")


def prose_frames(lines: list[str], name: str) -> Iterator[str]:
    """Each line's frame in prose: `prose`, the path, the heading above, the list's
    lead-in, one a line."""
    heading = lead = ""
    for line in lines:
        yield f"prose\n{name}\n{heading}\n{lead}"
        stripped = line.strip().strip("*_").strip()
        match = _HEADING.match(line) or (_LATEX_HEADING.search(line) if "section" in line else None)
        if match:
            heading, lead = match.group("text").strip(), ""
        elif not stripped or _ITEM.match(line):
            continue
        else:
            lead_in = _LEAD_IN.match(stripped)
            lead = lead_in.group("text") if lead_in else ""


def data_frames(lines: list[str], name: str) -> Iterator[str]:
    """Each line's frame in a data file or script: `data`, the path, its TOML/INI section
    and the keys it is nested under (by indentation), one a line."""
    stack: list[tuple[int, str]] = []
    section = ""
    for line in lines:
        content = _CONTENT.match(line)
        if content and not line.lstrip().startswith(("#", "//")):
            indent = len(content.group("indent"))
            while stack and stack[-1][0] >= indent:
                stack.pop()
        keys = " ".join(k for _, k in stack)
        yield f"data\n{name}\n{section}\n{keys}"
        if (opened := _SECTION.match(line)) is not None:
            section, stack = opened.group("key"), []
        elif (opener := _OPENER.match(line)) is not None:
            stack.append((len(opener.group("indent")), opener.group("key")))
