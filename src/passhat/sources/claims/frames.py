"""What encloses a line, its *frame*: the file's path, the heading above it and the
lead-in of the list or block it sits in ("It should:", "**Training parameters:**",
"If the success rate is 80%:"), or, in a data file, the keys it is nested under
(`judge:` → `repeats: 3`, `[training]`). A number's frame can make it no claim: a
section of plans, a training configuration, a judge's settings (aside.frame_rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from passhat.sources.claims.tables import is_separator

MAX_FRAME = 160
"""Characters of a heading kept in a frame (each line's frame is its own string)."""
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


_OPTION = re.compile(
    r"add_argument\(|add_option\(|\bclick\.(?:option|argument)\(|\btyper\.(?:Option|Argument)\(|"
    r"\bhelp\s*=\s*[\"'f]|[\"']help[\"']\s*:",
)
"""A line defining a command-line option: its help and default describe what a user may
pass, not what was run (`parser.add_argument("--n", help="run each task 3 times")`)."""


def prose_frames(lines: list[str], name: str) -> Iterator[str]:
    """Each line's frame in prose: `prose`, the path, the heading above, the list's
    lead-in, one a line (one string while they stay the same)."""
    heading = lead = ""
    frame = f"prose\n{name}\n\n"
    for index, line in enumerate(lines):
        yield frame
        stripped = line.strip().strip("*_").strip()
        if not stripped:
            continue
        if "|" in line and index + 1 < len(lines) and is_separator(lines[index + 1]):
            lead = "table: " + line.strip()[:MAX_FRAME]  # its rows: "| Option | Default |"
            frame = f"prose\n{name}\n{heading}\n{lead}"
            continue
        if "|" in line and lead.startswith("table:"):
            continue
        match = (
            _HEADING.match(line)
            if stripped.startswith("#") or line.startswith("#")
            else (_LATEX_HEADING.search(line) if "section" in line else None)
        )
        if match:
            heading, lead = match.group("text").strip()[:MAX_FRAME], ""
        elif _ITEM.match(line):
            continue
        else:
            lead_in = _LEAD_IN.match(stripped) if stripped.endswith((":", "：")) else None
            lead = lead_in.group("text") if lead_in else ""
        frame = f"prose\n{name}\n{heading}\n{lead}"


def data_frames(lines: list[str], name: str) -> Iterator[str]:
    """Each line's frame in a data file or script: `data`, the path, its TOML/INI section
    and the keys it is nested under (by indentation), one a line (one string while they
    stay the same), and `option` on a line defining a command-line option."""
    stack: list[tuple[int, str]] = []
    section = ""
    frame = f"data\n{name}\n\n"
    for line in lines:
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("#", "//")):
            indent = len(line) - len(stripped)
            if stack and stack[-1][0] >= indent:
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                frame = _data_frame(name, section, stack)
        yield frame + "\noption" if _OPTION.search(line) else frame
        if stripped.startswith("[") and (opened := _SECTION.match(line)) is not None:
            section, stack = opened.group("key"), []
        elif (":" in line or "=" in line) and (opener := _OPENER.match(line)) is not None:
            stack.append((len(opener.group("indent")), opener.group("key")))
        else:
            continue
        frame = _data_frame(name, section, stack)


def _data_frame(name: str, section: str, stack: list[tuple[int, str]]) -> str:
    return f"data\n{name}\n{section}\n" + " ".join(k for _, k in stack[-8:])
