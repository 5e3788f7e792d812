"""Run counts a report claims, read the way people write them.

The seed's second experiment is the reason: its REPORT.md said "each group ran
three times" over a folder holding one run per group. A claim can be written in
many ways, and an auditor that misses one passes the folder it exists to catch:

- a count of runs: "We ran every configuration 5 times", "each task was
  attempted five times", "3 runs per configuration", "averaged over five
  seeds", "best of 3 attempts", "ran once", "k=5", "--epochs 5",
  "num_trials: 5";
- a figure that needs runs: "pass^5" or "pass@5" needs at least 5 runs of
  every case (an *at-least* claim: it is compared with what is present, never
  with the manifest's count as if it were one);
- a markdown table with a `runs` / `trials` / `epochs` / `k` / `seeds` column
  (each row a claim, scoped to the row's first cell), or a `pass^5` column;
- a JSON summary (`summary.json`, `results.json`, ...) with `"num_trials": 5`,
  `"k": 5` or a `"pass^5"` key.

Every claim keeps its file, line and sentence. Numbers are read in digits or in
words ("five", "twenty-five", "once", "twice", "a dozen"). Everything here is
pure and bounded: no claim is turned into anything sized by it (a 5,000-digit
number is read as "more than MAX_CLAIM" without converting it), and each pattern
is linear in the line's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from passhat.accounting import MAX_K

MAX_CLAIM = MAX_K
"""A claim above this is refused by the audit (a typo or a date, never a plan)."""
MAX_QUOTE = 200
"""Characters of the sentence kept with a claim."""

_UNITS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ADVERBS = {"once": 1, "twice": 2, "thrice": 3}
_WORD_NUMBERS = {**_UNITS, **_TENS, "a dozen": 12, "dozen": 12, "a hundred": 100, "hundred": 100}

_WORD = (
    r"(?:(?:"
    + "|".join(_TENS)
    + r")(?:[- ](?:"
    + "|".join(k for k in _UNITS if _UNITS[k] < 10)
    # "a dozen" before "dozen"; "nineteen" before "nine": longest first
    + r"))?|"
    + "|".join(sorted((*_UNITS, "a dozen", "dozen", "a hundred", "hundred"), key=len, reverse=True))
    + r")"
)
_NUM = r"(?P<num>\d[\d,]*|" + _WORD + r")"
_NOUN = (
    r"(?:runs?|trials?|epochs?|attempts?|seeds?|repetitions?|repeats?|replicates?|rollouts?"
    r"|samples?|iterations?|episodes?|times)"
)
_ADJ = r"(?:(?:independent|separate|random|different|full|complete|repeated)\s+){0,2}"
_VERB = (
    r"(?:ran|run|runs|running|re-?ran|re-?run|executed|repeated|evaluated|tested|sampled|"
    r"attempted|measured|performed|replicated|rolled\s+out|tried|played|scored|graded|done)"
)
_BEFORE = (
    r"(?:over|across|with|using|of|from|for|in|after|all|on|averaged\s+over|mean\s+of|"
    r"average\s+of|best\s+of|median\s+of|ran|run|did|made|make|performed|executed|took|"
    r"collected|each\s+got|gets|get|got)"
)
_AFTER = r"(?:per|each|for\s+each|for\s+every|of\s+each|of\s+every|a\s+piece|apiece)"
_NOT_COUNT = (
    r"(?:faster|slower|more|less|fewer|larger|smaller|longer|shorter|higher|lower|as|"
    r"the|bigger|cheaper|better|worse)"
)

_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # "we ran every configuration 5 times", "each group ran three times", "ran it 5x"
    (
        re.compile(
            r"\b" + _VERB + r"\b(?:\s+[\w'-]{1,30}){0,6}?\s+" + _NUM + r"\s*(?:times|x|×)"
            r"(?!\s+" + _NOT_COUNT + r"\b)(?![\w-])",
            re.I,
        ),
        False,
    ),
    # "ran once", "was evaluated twice"
    (re.compile(r"\b" + _VERB + r"\s+(?:\w+\s+){0,3}?(?P<num>once|twice|thrice)\b", re.I), False),
    # "3 runs per configuration", "five trials for each task", "three times each"
    (
        re.compile(
            r"\b" + _NUM + r"\s+" + _ADJ + _NOUN + r"\s+" + _AFTER + r"\b",
            re.I,
        ),
        False,
    ),
    # "averaged over five seeds", "best of 3 attempts", "we ran 5 trials"
    (
        re.compile(
            r"\b" + _BEFORE + r"\s+(?:the\s+|all\s+)?" + _NUM + r"\s+" + _ADJ + _NOUN + r"\b"
            r"(?!\s+" + _NOT_COUNT + r"\b)",
            re.I,
        ),
        False,
    ),
    # "5 independent runs" (an adjective of repetition says the count is of runs)
    (
        re.compile(r"\b" + _NUM + r"\s+(?:independent|separate|repeated)\s+" + _NOUN + r"\b", re.I),
        False,
    ),
    # "k=5", "k: 5", "--epochs 5", "num_trials: 5", "n_attempts = 5"
    (
        re.compile(
            r"(?<![\w-])(?:--)?(?:k|n[-_]?runs|num[-_]?runs|runs[-_]per[-_]\w+|num[-_]?trials|"
            r"n[-_]?trials|epochs|n[-_]?attempts|num[-_]?attempts|num[-_]?seeds|n[-_]?seeds|"
            r"repeats|repetitions)[\"']?\s*(?:[=:]|\s)\s*(?P<num>\d[\d,]*)\b",
            re.I,
        ),
        False,
    ),
    # "Trials: 5", "Runs per config: 3", "seeds = 5" (a plural noun: "Run 3:" names a run)
    (
        re.compile(
            r"(?<![\w-])(?:runs|trials|epochs|attempts|seeds|repeats|repetitions|rollouts)"
            r"(?:\s+(?:per|for\s+each|each)\s+[\w-]{1,30})?\s*[:=]\s*(?P<num>\d[\d,]*)\b",
            re.I,
        ),
        False,
    ),
    # "(5 seeds)", "(3 runs each)"
    (
        re.compile(r"\(\s*" + _NUM + r"\s+" + _ADJ + _NOUN + r"(?:\s+each)?\s*\)", re.I),
        False,
    ),
    # "pass^5", "pass@5", "pass\^5" (markdown), "pass^{5}": at least 5 runs of every case
    (
        re.compile(r"\bpass\s*\\?(?:\^|@|\s*hat\s*)\s*\{?\s*(?P<num>\d[\d,]*)\s*\}?", re.I),
        True,
    ),
)

_TABLE_HEADERS = re.compile(
    r"^(?:#\s*|n\s*|num\s*|number\s+of\s+)?(?:runs?|trials?|epochs?|attempts?|seeds?|"
    r"repeats?|repetitions?|k)(?:\s*(?:/|per)\s*\w+)?$",
    re.I,
)
_PASS_HEADER = re.compile(r"^pass\s*\\?[\^@]\s*\{?(\d+)\}?$", re.I)
_JSON_KEYS = re.compile(
    r"\"(?P<key>k|num_trials|n_trials|epochs|n_runs|num_runs|runs_per_\w+|"
    r"n_attempts|num_attempts|num_seeds|n_seeds|repeats)\"\s*:\s*"
    r"(?P<num>-?\d[\d.eE+]*)",
)
_JSON_PASS = re.compile(r"\"pass(?:\^|@|_hat_|_at_|\^k=|@k=)(?P<num>\d+)\"\s*:")


@dataclass(frozen=True)
class Claim:
    """A run count a report claims."""

    k: int
    """The count; MAX_CLAIM + 1 stands for any count above MAX_CLAIM (see `too_large`)."""
    source: str
    """File and line, e.g. `REPORT.md:3`, or `--claimed`."""
    quote: str
    """The sentence that claims it ('' for --claimed)."""
    at_least: bool = False
    """True for a figure that needs k runs (pass^k, pass@k) rather than a count of them."""
    scope: str | None = None
    """The configuration a table row claims it for (None: every configuration)."""
    written: str = ""
    """The number as written, e.g. `five` or `100000000`."""

    @property
    def too_large(self) -> bool:
        return self.k > MAX_CLAIM

    def shown_number(self) -> str:
        """The number as written, shortened when it is long (a 5,000-digit claim)."""
        text = self.written or str(self.k)
        digits = sum(c.isdigit() for c in text)
        return f"a {digits:,}-digit number" if len(text) > 24 else text

    def describe(self) -> str:
        """E.g. `3 runs per configuration`, `pass^5 (needs 5 runs per configuration)`."""
        count = f"{self.k} run{'s' if self.k != 1 else ''}"
        where = f"of {self.scope}" if self.scope else "per configuration"
        if self.at_least:
            return f"a figure over {count} {where}"
        return f"{count} {where}"


def number(word: str) -> int | None:
    """A count written in digits ("5", "1,000") or words ("five", "twenty-five", "a
    dozen", "twice"); MAX_CLAIM + 1 for any count above MAX_CLAIM; None for no count.
    Never converts more digits than MAX_CLAIM has, so a 5,000-digit number is cheap."""
    text = word.strip().lower().replace(",", "")
    if not text:
        return None
    if text.isdigit():
        stripped = text.lstrip("0") or "0"
        if len(stripped) > len(str(MAX_CLAIM)):
            return MAX_CLAIM + 1
        value = int(stripped)
        return min(value, MAX_CLAIM + 1) or None
    text = re.sub(r"\s+", " ", text)
    if text in _ADVERBS:
        return _ADVERBS[text]
    if text in _WORD_NUMBERS:
        return _WORD_NUMBERS[text]
    parts = re.split(r"[- ]", text)
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS:
        return _TENS[parts[0]] + _UNITS[parts[1]]
    return None


def sentence(line: str, start: int, end: int) -> str:
    """The sentence of `line` holding [start, end), at most MAX_QUOTE characters."""
    left = max(line.rfind(". ", 0, start), line.rfind("! ", 0, start), line.rfind("? ", 0, start))
    left = 0 if left < 0 else left + 2
    ends = [i for i in (line.find(". ", end), line.find("! ", end), line.find("? ", end)) if i >= 0]
    right = min(ends) + 1 if ends else len(line)
    text = line[left:right].strip().strip("|").strip()
    if len(text) > MAX_QUOTE:
        middle = (start + end) // 2 - left
        lo = max(0, middle - MAX_QUOTE // 2)
        text = ("…" if lo else "") + text[lo : lo + MAX_QUOTE] + "…"
    return "".join(c if c.isprintable() else " " for c in text)


def _line_claims(line: str, where: str) -> list[Claim]:
    """The claims of one line, in the order they are written."""
    found: dict[tuple[int, int], Claim] = {}
    for pattern, at_least in _PATTERNS:
        for match in pattern.finditer(line):
            k = number(match.group("num"))
            span = match.span("num")
            if k is None or span in found:
                continue
            found[span] = Claim(
                k,
                where,
                sentence(line, *match.span()),
                at_least=at_least,
                written=match.group("num"),
            )
    return [found[span] for span in sorted(found)]


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*`_ ") for c in line.strip().strip("|").split("|")]


def _table_claims(lines: list[str], first: int, source: str) -> Iterator[Claim]:
    """Claims of one markdown table (lines[first] is its header row)."""
    header = _cells(lines[first])
    columns = [i for i, h in enumerate(header) if _TABLE_HEADERS.match(h)]
    for h in header:
        passes = _PASS_HEADER.match(h)
        if passes and (k := number(passes.group(1))):
            where = f"{source}:{first + 1}"
            yield Claim(k, where, sentence(lines[first], 0, 0), True, written=passes.group(1))
    if not columns:
        return
    for row in range(first + 2, len(lines)):
        if not lines[row].lstrip().startswith("|"):
            break
        cells = _cells(lines[row])
        for column in columns:
            if column < len(cells) and (k := number(cells[column])) and cells[column].isdigit():
                scope = cells[0] if column != 0 and cells[0] else None
                yield Claim(
                    k,
                    f"{source}:{row + 1}",
                    sentence(lines[row], 0, 0),
                    scope=scope,
                    written=cells[column],
                )


def _is_separator(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r":?-{3,}:?", c) for c in cells)


def find_claims(text: str, source: str) -> list[Claim]:
    """Every run count a report text claims, each with its file and line; pure."""
    lines = text.splitlines()
    claims: list[Claim] = []
    for index, line in enumerate(lines):
        claims.extend(_line_claims(line, f"{source}:{index + 1}"))
        if (
            line.lstrip().startswith("|")
            and index + 1 < len(lines)
            and _is_separator(lines[index + 1])
        ):
            claims.extend(_table_claims(lines, index, source))
    return claims


def find_json_claims(text: str, source: str) -> list[Claim]:
    """Run counts a JSON summary states (`"num_trials": 5`, a `"pass^5"` key), each
    with its line; read from the text so every claim keeps its line; pure."""
    claims = []
    for index, line in enumerate(text.splitlines()):
        for match in _JSON_KEYS.finditer(line):
            raw = match.group("num")
            if not raw.isdigit():
                continue  # a fraction or a negative number is no run count
            k = number(raw)
            if k:
                claims.append(
                    Claim(
                        k,
                        f"{source}:{index + 1}",
                        sentence(line, *match.span()),
                        written=raw,
                    )
                )
        for match in _JSON_PASS.finditer(line):
            k = number(match.group("num"))
            if k:
                claims.append(
                    Claim(
                        k,
                        f"{source}:{index + 1}",
                        sentence(line, *match.span()),
                        at_least=True,
                        written=match.group("num"),
                    )
                )
    return claims


def governing(claims: list[Claim]) -> Claim | None:
    """The claim the plan follows: the largest count, a count before a figure at a tie,
    the first in reading order after that."""
    if not claims:
        return None
    _, claim = max(enumerate(claims), key=lambda ic: (ic[1].k, not ic[1].at_least, -ic[0]))
    return claim
