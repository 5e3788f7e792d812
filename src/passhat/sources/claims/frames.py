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
MAX_OPTION_LINES = 30
"""Lines an option's definition is followed for its closing parenthesis (its help string
continued over several lines is the option's help too)."""
"""Characters of a heading kept in a frame (each line's frame is its own string)."""
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.*)$")
_LATEX_HEADING = re.compile(r"\\(?P<level>(?:sub)*section)\*?\{(?P<text>[^}]*)\}")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|\[[ xX]\])\s|^\s{2,}\S|^\s*(?:```|~~~)")
"""A list item, an indented or fenced line: it keeps the lead-in above it."""
_LEAD_IN = re.compile(r"^(?P<text>.{1,160}?)[:：]\s*(?:(?:\*\*|__)\s*)?$")
_OPENER = re.compile(
    r"^(?P<indent>\s*)(?:-\s*)?(?:(?:export\s+)?(?:const|let|var|final|static)\s+)?[\"']?"
    r"(?P<key>[\w.-]{1,60})[\"']?\s*[:=]\s*(?:[{\[]\s*)?(?:#.*)?$|"
    r"^(?P<block>\s*)(?:class|def)\s+(?P<name>\w{1,60})[^:]{0,200}:\s*(?:#.*)?$|"
    r"^(?P<fn_block>\s*)(?:(?:pub(?:\([\w\s]*\))?|export|async|static|public|private|void)\s+)*"
    r"(?:fn|function|func)\s+(?P<fn>\w{1,60})[^{]{0,200}\{\s*(?://.*)?$"
)
"""A key whose value is the block below it: `judge:`, `"training": {`, `const G_DEFAULT =
{`; a Python class or function (`class TuningConfig:`), a Rust, JavaScript or Go function
(`fn replicate_test() {`): its name encloses its body."""
_TEST_MARK = re.compile(r"#\[(?:[\w:]+::)?test\]|@(?:Test|ParameterizedTest)\b|@pytest\.mark\.")
"""An attribute marking the function below it a test (`#[test]`, `@Test`): its name is read
as a test's (`test_` before it)."""
_SECTION = re.compile(r"^\s*\[+(?P<key>[\w. -]{1,60})\]+\s*$")
"""A TOML or INI section: `[training]`, `[[eval.runs]]`."""


_OPTION = re.compile(
    r"add_argument\(|add_option\(|\bclick\.(?:option|argument)\(|\btyper\.(?:Option|Argument)\(|"
    r"\bhelp\s*=\s*[\"'f]|[\"']help[\"']\s*:",
)
_STRING_LINE = re.compile(r"^\s*[rfbuRFBU]{0,2}[\"']")
"""A line that is a string literal continuing the one above (`help="... "` then `"Reports
mean ± std across seeds.")`)."""
_PRINTS = re.compile(r"\b(?:echo|print|printf)\b")
_SHOWS_USAGE = re.compile(r"\$0\b|\$\{0\}|sys\.argv\[0\]|%\(prog\)s|\busage\s*:", re.I)
"""A line defining a command-line option, or printing how to call the script: its help
and default describe what a user may pass, not what was run (`parser.add_argument("--n",
help="run each task 3 times")`, `echo "  $0 --iterations 3"`)."""


_USAGE = re.compile(
    r"^\s*(?:usage|examples?|example\s+usage|用法|示例|使用方法)\s*[:：]?\s*$", re.I
)
"""A docstring's heading of usage examples: the more indented lines below it show how to
call the script, not what was run."""
_UNDERLINE = re.compile(r"^\s*(?:-{3,}|={3,}|~{3,})\s*$")


def prose_frames(lines: list[str], name: str) -> Iterator[str]:
    """Each line's frame in prose: `prose`, the path, the headings above (each enclosing
    one, "## Improvements / ### Short term"), the list's lead-in, one a line (one string
    while they stay the same). Inside a code fence nothing is a heading: a comment or a
    key opening a block there (`# Illustrative config`, `training:`) adds to the lead-in
    above the fence."""
    headings: list[tuple[int, str]] = []
    lead = inner = ""
    fenced = False
    frame = f"prose\n{name}\n\n"
    for index, line in enumerate(lines):
        yield frame
        stripped = line.strip().strip("*_").strip()
        if not stripped:
            continue
        if stripped.startswith(("```", "~~~")):
            fenced, inner = not fenced, ""
        elif fenced:
            if stripped.startswith(("#", "//")) or stripped.endswith(":"):
                inner = (inner + " " + stripped.lstrip("#/ "))[-MAX_FRAME:]
            else:
                continue
        elif "|" in line and index + 1 < len(lines) and is_separator(lines[index + 1]):
            lead = "table: " + line.strip()[:MAX_FRAME]  # its rows: "| Option | Default |"
        elif "|" in line and lead.startswith("table:"):
            continue
        elif (heading := _heading(line, stripped)) is not None:
            level, text = heading
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, text[:MAX_FRAME]))
            lead = ""
        elif _ITEM.match(line):
            continue
        else:
            lead_in = _LEAD_IN.match(stripped) if stripped.endswith((":", "：")) else None
            lead = lead_in.group("text") if lead_in else ""
        enclosing = " / ".join(text for _, text in headings[-4:])
        frame = f"prose\n{name}\n{enclosing}\n{lead} {inner}".rstrip(" ")


_LATEX_LEVELS = {"section": 1, "subsection": 2, "subsubsection": 3}


def _heading(line: str, stripped: str) -> tuple[int, str] | None:
    """(level, text) of a markdown or LaTeX heading; None for any other line."""
    if stripped.startswith("#") or line.startswith("#"):
        match = _HEADING.match(line)
        if match:
            return len(line.lstrip().split(" ", 1)[0]), match.group("text").strip()
        return None
    latex = _LATEX_HEADING.search(line) if "section" in line else None
    if latex:
        return _LATEX_LEVELS.get(latex.group("level"), 1), latex.group("text").strip()
    return None


def data_frames(lines: list[str], name: str) -> Iterator[str]:
    """Each line's frame in a data file or script: `data`, the path, its TOML/INI section
    (or the comment heading the block it sits in: `# Hyperparameter optimization` over
    `sweeper:`) and the keys it is nested under (by indentation), one a line (one string
    while they stay the same), and `option` on a line defining a command-line option or
    showing its usage (`echo "  $0 --iterations 3"`, the lines under a docstring's
    `Usage` heading)."""
    stack: list[tuple[int, str]] = []
    section = comment = ""
    usage: int | None = None
    marked = marking = False
    option_open = option_depth = 0  # an option's call still open: lines left, parentheses
    helped = False  # the line before was an option's or its help string's
    frame = f"data\n{name}\n\n"
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if usage is not None and stripped and indent <= usage and not _UNDERLINE.match(line):
            usage = None
        if not stripped:
            if comment:
                comment = ""
                frame = _data_frame(name, section, stack)
        elif stripped.startswith(("#", "//")):
            if indent == 0 and not stripped.startswith("#!"):
                comment = stripped.lstrip("#/ ")[:MAX_FRAME]
                frame = _data_frame(name, section or comment, stack)
        elif stack and stack[-1][0] >= indent:
            while stack and stack[-1][0] >= indent:
                stack.pop()
            frame = _data_frame(name, section or comment, stack)
        defines = _OPTION.search(line) is not None
        shown = (
            usage is not None
            or defines
            or option_open > 0
            or (helped and _STRING_LINE.match(line) is not None)
            or (_PRINTS.search(line) and _SHOWS_USAGE.search(line))
        )
        helped = (defines or helped) and (defines or _STRING_LINE.match(line) is not None)
        if option_open > 0:  # `add_argument(..., help="..."` then `"... across seeds.")`
            option_depth += line.count("(") - line.count(")")
            option_open = option_open - 1 if option_depth > 0 else 0
        elif defines:
            option_depth = line.count("(") - line.count(")")
            option_open = MAX_OPTION_LINES if option_depth > 0 else 0
        yield frame + "\noption" if shown else frame
        if stripped:
            marked, marking = marking, bool(_TEST_MARK.match(stripped))
        if _USAGE.match(line):
            usage = indent
        if stripped.startswith("[") and (opened := _SECTION.match(line)) is not None:
            section, stack = opened.group("key"), []
        elif (":" in line or "=" in line or "{" in line) and (opener := _OPENER.match(line)):
            if opener.group("fn"):
                named = ("test_" if marked else "") + opener.group("fn")
                stack.append((len(opener.group("fn_block")), _words(named)))
            elif opener.group("name"):
                stack.append((len(opener.group("block")), _words(opener.group("name"))))
            else:
                stack.append((len(opener.group("indent")), _words(opener.group("key"))))
        else:
            continue
        frame = _data_frame(name, section or comment, stack)


def _words(key: str) -> str:
    """A key's words apart: `TuningConfig` → `Tuning Config`, `G_DEFAULT` stays."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)


def _data_frame(name: str, section: str, stack: list[tuple[int, str]]) -> str:
    return f"data\n{name}\n{section}\n" + " ".join(k for _, k in stack[-8:])
