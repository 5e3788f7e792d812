"""Reading one file's text for claims: which readers a file gets by its kind
(prose, data, shell), the rules applied block by block within MAX_CANDIDATES, tables
added, claims in reading order; and `governing`, the claim a plan follows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from passhat.sources.claims.aside import aside_rule
from passhat.sources.claims.attached import (
    Where,
    attached,
    attachment,
    docstring_lines,
    fenced_lines,
)
from passhat.sources.claims.embedded import embedded_blocks
from passhat.sources.claims.found import Claim, Reading, SetAside
from passhat.sources.claims.frames import data_frames, prose_frames
from passhat.sources.claims.framing import (
    data_samples,
    frame_rule,
    seeds_are_inputs,
    trained_nearby,
)
from passhat.sources.claims.grammar import (
    FIGURE_RULES,
    PROSE_RULES,
    SETTING_RULES,
    WRITE_UP_RULES,
    Rule,
)
from passhat.sources.claims.grammar_languages import CHINESE_RULES
from passhat.sources.claims.numbers import MAX_LIST, number
from passhat.sources.claims.sentences import (
    Block,
    command_blocks,
    prose_blocks,
    sentence,
    sentence_span,
)
from passhat.sources.claims.tables import column_groups, latex_tables, markdown_tables

_SETTING_NAMES = frozenset(rule.name for rule in SETTING_RULES)

SPACE_RUN = 64
"""The longest run of spaces within a line the readers see (`bounded_spaces`): longer
than any indentation or alignment a write-up uses."""
NEARBY = 6
"""Lines either side of a count of epochs read for a training configuration's words."""
MAX_CANDIDATES = 1000
"""Numbers one file's text is read for, at most (claims and numbers set aside): a file
with more is no report, and each candidate costs a sentence and its context."""


@dataclass
class _Text:
    """One file's text as the rules read it: its name, lines and each line's frame (read
    as far as a candidate needs: a file cut at MAX_CANDIDATES is not framed to its end)."""

    name: str
    lines: list[str]
    frames: Iterator[str]
    framed: list[str] = field(default_factory=list)
    prose: bool = True
    blocks: dict[int, tuple[int, int]] = field(default_factory=dict)
    """A write-up's lines in code blocks, each with its block's first and last lines."""
    docstrings: frozenset[int] = frozenset()
    """A script's lines in docstrings."""

    def attach(self, claim: Claim, line: int, embedded: bool = False) -> Claim | SetAside:
        """The claim read at `line`, attached to the folder's results with the reason, or
        set aside as not attached (claims/attached.py)."""
        if self.prose:
            how = "shown" if line in self.blocks else "prose"
        else:
            how = "embedded" if embedded else "code"
        where = Where(how, self.name, line)
        why = attachment(where, self.lines, claim.quote, self.blocks, self.docstrings)
        if attached(why):
            return replace(claim, attached=why)
        return SetAside(claim.source, claim.quote, why, claim.written)

    def frame(self, line: int) -> str:
        """The frame of line `line` (1-based)."""
        while len(self.framed) < line:
            following = next(self.frames, None)
            if following is None:
                return ""
            self.framed.append(following)
        return self.framed[line - 1]

    def nearby(self, line: int) -> str:
        """Line `line` (1-based) and the NEARBY lines either side (each cut to 200)."""
        return "\n".join(x[:200] for x in self.lines[max(0, line - 1 - NEARBY) : line + NEARBY])

    def following(self, block: Block, offset: int) -> str:
        """The text after `offset` of `block`: the rest of it and the next lines (bounded)."""
        last = block.first_line + len(block.starts) - 1
        return (
            block.text[offset : offset + 200]
            + "\n"
            + "\n".join(line[:200] for line in self.lines[last : last + 8])
        )


def _nearby_rule(matched: str, nearby: str, setting: bool) -> str | None:
    """The rule that sets a number aside by the lines around it (training's words, a data
    set's, seeds that are inputs), or None: the nearby lines joined once for all three."""
    if trained_nearby(matched, nearby):
        return "training or tuning, not evaluation runs"
    if setting and data_samples(matched, nearby):
        return "samples of a data set, not generations"
    if seeds_are_inputs(matched, nearby):
        return "seeds that are inputs or an ensemble's members, not runs"
    return None


def _apply(
    rules: tuple[Rule, ...],
    block: Block,
    text: _Text,
    reading: Reading,
    found: list[tuple[tuple[int, int], Claim]],
    embedded: bool = False,
) -> bool:
    """The claims of one block (each keyed by line and place, for reading order) into
    `found`, the numbers set aside into `reading`; False once MAX_CANDIDATES were read."""
    name = text.name
    seen: set[tuple[int, int]] = set()
    lower = block.text.lower()
    triggered: dict[tuple[str, ...], bool] = {}  # rules share triggers: each looked for once
    for rule in rules:
        hit = triggered.get(rule.trigger)
        if hit is None:
            hit = triggered[rule.trigger] = any(map(lower.__contains__, rule.trigger))
        if not hit:
            continue
        for match in rule.pattern.finditer(block.text):
            if len(found) + len(reading.set_aside) >= MAX_CANDIDATES:
                reading.notes.append(
                    f"{name}: more than {MAX_CANDIDATES:,} numbers read as possible claims; "
                    f"the rest of it (from line {block.first_line}) was not read"
                )
                return False
            group = next(
                g
                for g in ("num", "after", "list", "lo", "hi", "from")
                if match.groupdict().get(g) is not None
            )
            span = match.span(group)
            key = span
            if key in seen:
                continue
            k = rule.count(match)
            if k is None:
                continue
            seen.add(key)
            line = block.line_of(span[0])
            where = f"{name}:{line}"
            quote = sentence(block.text, *match.span())
            left, right = sentence_span(block.text, *match.span())
            context = block.text[left:right]
            setting = rule.name in _SETTING_NAMES
            aside = aside_rule(
                context,
                span[0] - left,
                span[1] - left,
                match.group(0),
                text.frame(line),
                functools.partial(text.following, block, right),
                setting,
            )
            if aside is None:
                aside = _nearby_rule(match.group(0), text.nearby(line), setting)
            written = match.group(group)
            if aside:
                reading.set_aside.append(SetAside(where, quote, aside, written))
            else:
                claim = Claim(k, where, quote, rule.at_least, written=written, rule=rule.name)
                read = text.attach(claim, line, embedded)
                if isinstance(read, SetAside):
                    reading.set_aside.append(read)
                else:
                    found.append(((line, span[0]), read))
    return True


_LIST_KEY = re.compile(r"^\s*[\"']?(?:seeds|random_seeds|eval_seeds)[\"']?\s*[:=]\s*\[?\s*$", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:-\s*)?\d{1,9}\s*,?\s*$")


def listed_seeds(lines: list[str], name: str) -> Iterator[Claim]:
    """Seed lists written one item a line under their key: YAML (`seeds:` then `- 0`,
    `- 1`...) and JSON (`"seeds": [` then `0,` `1,`...), each a claim of its items."""
    index = 0
    while index < len(lines):
        if not _LIST_KEY.match(lines[index]):
            index += 1
            continue
        first, index = index, index + 1
        while index < len(lines) and _LIST_ITEM.match(lines[index]):
            index += 1
        items = min(index - first - 1, MAX_LIST + 1)
        if items >= 2:
            quote = sentence(lines[first], 0, 0)
            yield Claim(
                items, f"{name}:{first + 1}", quote, written=str(items), rule="list of seeds"
            )


_DESCRIBES = re.compile(
    r"how\s+many\s+(?:times?|runs?|repeats?|repetitions?|trials?|seeds?)\b|"
    r"number\s+of\s+(?:times|runs|repeats|repetitions|trials|seeds|attempts|replicates)\b|"
    r"\b(?:times|runs|trials|repetitions|repeats|seeds)\s+(?:per|for\s+each|each)\b|"
    r"\brepeat\w*\s+(?:each|every)\b|(?:重复|重複|运行|運行|实验|實驗|试验|試驗)次[数數]",
    re.I,
)
"""A comment saying what a setting counts, with no count of its own: "# how many times do
we repeat each experiment ?", "# number of runs per task", "// 重复次数"."""
_COUNTS_OTHER = re.compile(
    r"retr|timeout|worker|thread|parallel|concurren|batch|epoch|step|token|second|minute|"
    r"hour|max|limit|warm|train",
    re.I,
)
_ASSIGNED = re.compile(
    r"^\s*(?:export\s+|local\s+|readonly\s+|const\s+|let\s+|var\s+)?(?P<key>[A-Za-z_][\w.]{0,60})"
    r"\s*(?::\s*int\s*)?[=:]\s*[\"']?(?P<num>\d{1,9})[\"']?\s*(?:[#;,]|//|$)"
)
_COMMENT_ONLY = re.compile(r"^\s*(?:#|//)(?P<text>.*)$")


def described_settings(lines: list[str], name: str) -> Iterator[Claim]:
    """Settings whose name says nothing but whose comment says they count runs: `nloops=3`
    under "# how many times do we repeat each experiment ?", `N = 5  # number of runs per
    task` (not a comment about retries, workers, batches, epochs...)."""
    for index, line in enumerate(lines):
        if "#" not in line and "//" not in line:
            continue
        comment = _COMMENT_ONLY.match(line)
        if comment:
            text, target = comment.group("text"), index + 1
            while target < len(lines) and target <= index + 2 and not lines[target].strip():
                target += 1
        else:
            cut = min((i for i in (line.find(" #"), line.find(" //")) if i >= 0), default=-1)
            text, target = (line[cut:], index) if cut >= 0 else ("", index)
        if not _DESCRIBES.search(text) or _COUNTS_OTHER.search(text) or target >= len(lines):
            continue
        setting = _ASSIGNED.match(lines[target])
        if setting and not _COUNTS_OTHER.search(setting.group("key")):
            k = number(setting.group("num"))
            if k is not None:
                yield Claim(
                    k,
                    f"{name}:{target + 1}",
                    sentence(lines[target], 0, 0),
                    written=setting.group("num"),
                    rule="setting described by its comment",
                )


PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".tex", ".rmd", ".qmd")
"""Files read as prose by their suffix (as is any file `kind_of` names no other kind)."""
PROSE = "prose"
DATA = "data"
SHELL = "shell"
_DATA_SUFFIXES = (
    ".json",
    ".jsonl",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".cfg",
    ".py",
    ".env",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".r",
    ".jl",
    ".gp",
    ".gnuplot",
    ".plt",
    *(".c", ".cc", ".cpp", ".h", ".hpp", ".java", ".go", ".rs", ".rb", ".kt", ".scala", ".cs"),
    *(".cu", ".cuh", ".swift", ".php", ".lua", ".pl", ".dart"),
    *(".clj", ".cljs", ".cljc", ".hs", ".ml", ".ex", ".exs", ".m", ".ipynb"),
)
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", "makefile", ".sbatch", ".slurm")


SUFFIXES = (*PROSE_SUFFIXES, *_DATA_SUFFIXES, *_SHELL_SUFFIXES)
"""Every suffix a file is read for claims by: prose, data files and scripts (the audit's
walker reads the files of a folder that end so)."""


def kind_of(name: str) -> str:
    """How a file is read: `data` (keys only), `shell` (flags, keys, loops) or `prose`."""
    lower = name.lower()
    if lower.endswith(_DATA_SUFFIXES):
        return DATA
    if lower.endswith(_SHELL_SUFFIXES):
        return SHELL
    return PROSE


_LATEX_EMPHASIS = re.compile(
    r"\\(?:textbf|textit|emph|num|mathrm|mathbf|underline)\{([^{}\n]{0,40})\}"
)
"""LaTeX's emphasis around a short text, read as the text."""
_LONG_SPACE = re.compile(
    f"[ \t\x1f\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]{{{SPACE_RUN + 1},}}"
)


def bounded_spaces(text: str) -> str:
    r"""`text` with every run of spaces within a line cut to SPACE_RUN characters (line
    breaks kept, so every line keeps its number): the readers' patterns, which let two
    `\s*` share a run of spaces, then take time linear in the text, where a hostile file's
    line of 20,000 spaces took 23 s and one of 2 MB would have taken days."""
    return _LONG_SPACE.sub(lambda run: run[0][:SPACE_RUN], text)


def read_text(text: str, name: str) -> Reading:
    """Every claim of one file's text, and every number set aside, each with its file and
    line; `name` (the file's path in the folder) chooses the readers: prose, tables,
    settings and figures for text, settings and figures for data and scripts; pure."""
    text = bounded_spaces(text)
    kind = kind_of(name)
    if kind == PROSE:
        # LaTeX inline math ("$n=3$ seeds", "$5$ times") and markdown bold ("run **3 times**"),
        # LaTeX's emphasis around a word or number ("evaluated with \textbf{3} seeds")
        text = _LATEX_EMPHASIS.sub(r"\1", text.replace("$", " ").replace("**", ""))
    lines = text.splitlines()
    reading = Reading()
    found: list[tuple[tuple[int, int], Claim]] = []
    rules: tuple[Rule, ...] = SETTING_RULES + FIGURE_RULES
    if kind == PROSE:
        rules = PROSE_RULES + CHINESE_RULES + WRITE_UP_RULES + rules
    blocks = prose_blocks(lines) if kind == PROSE else command_blocks(lines)
    frames = prose_frames(lines, name) if kind == PROSE else data_frames(lines, name)
    read = _Text(name, lines, frames, prose=kind == PROSE)
    if kind == PROSE:
        read.blocks = fenced_lines(lines)
    else:
        read.docstrings = docstring_lines(lines)
    for block in blocks:
        if not _apply(rules, block, read, reading, found):
            break
    else:
        if kind != PROSE:  # comments, docstrings and string values read as prose
            for block in embedded_blocks(lines):
                if not _apply(PROSE_RULES + CHINESE_RULES, block, read, reading, found, True):
                    break
    tables = (*markdown_tables(lines, name), *latex_tables(lines, name)) if kind == PROSE else ()
    described = described_settings(lines, name) if kind != PROSE else ()
    grouped = column_groups(lines, name)
    for claim in (*tables, *grouped, *listed_seeds(lines, name), *described):
        line = int(claim.source.rsplit(":", 1)[1])
        aside = frame_rule(read.frame(line), claim.quote)
        if aside:  # a table in a plan, a seed list under a judge's key
            reading.set_aside.append(SetAside(claim.source, claim.quote, aside, claim.written))
        elif isinstance(kept := read.attach(claim, line), SetAside):
            reading.set_aside.append(kept)
        else:
            found.append(((line, -1), kept))
    found.sort(key=lambda kc: kc[0])
    reading.claims = [claim for _, claim in found]
    return reading


def claims_in(text: str, name: str) -> list[Claim]:
    """Every run count one file's text claims (see `read_text`)."""
    return read_text(text, name).claims


def find_claims(text: str, source: str) -> list[Claim]:
    """Every run count a report's prose, tables and settings claim; pure."""
    return read_text(text, source if kind_of(source) == PROSE else source + ".md").claims


def find_json_claims(text: str, source: str) -> list[Claim]:
    """Run counts a JSON summary states (`"num_trials": 5`, a `"pass^5"` key), each with
    its line; read from the text so every claim keeps its line; pure."""
    return read_text(text, source if kind_of(source) == DATA else source + ".json").claims


def governing(claims: list[Claim]) -> Claim | None:
    """The claim the plan follows: the largest count, a count before a figure at a tie,
    the first in reading order after that."""
    if not claims:
        return None
    _, claim = max(enumerate(claims), key=lambda ic: (ic[1].k, not ic[1].at_least, -ic[0]))
    return claim
