"""Run counts a write-up claims, read the way people write them.

The seed's second experiment is the reason: its REPORT.md said "each group ran
three times" over a folder holding one run per group. A claim can be written in
many ways, and an auditor that misses one passes the folder it exists to catch.
This is a small grammar, not a list of sentences:

- **a count** of runs: a number (digits, words "five", "a dozen", Chinese "五",
  "in triplicate", a list of seeds "seeds 0, 1 and 2", a range "seeds 1-5");
- **a unit** that counts runs: runs, trials, seeds, epochs, attempts, samples,
  completions, rollouts, repetitions, repeats, replicates, trajectories,
  generations, episodes, or "N times" after a verb of running;
- **a scope** or a context that makes it a count of runs: "per / each / for
  every configuration, task, model...", "averaged over", "best of", "(n=4
  runs)", "5-run average", "Three runs were performed";
- **settings** as their own readers: `k=5`, `num_trials: 5`, `"n_epochs": 5`,
  `--n-attempts 5`, `-k 5`, `seeds: [0, 1, 2]`, a shell loop over seeds;
- **figures** that need runs: pass^5, pass@5, pass-hat-5, avg@8, maj@5,
  `k ∈ {1, 3, 5}` (an *at-least* claim: compared with what is present);
- **tables**: markdown (with or without outer pipes, any alignment row) and
  LaTeX `tabular`, whose header names a unit (Seeds, # Runs, Runs (n), n_runs,
  Attempts per task): each row claims its count for its first cell; a pass^k
  header claims at least k.

And the contexts that make a number no claim, each a named rule: a limit ("up
to 5 attempts per tool call", "retried at most twice"), training ("fine-tuned
for 3 epochs"), a batch size, a plan or condition ("we plan to run... in future
work", "would"), a k that counts neighbours or clusters, a ratio ("3 times
faster"). Every claim keeps its file, line, sentence and the rule that read it;
every number set aside keeps the rule that set it aside (`audit --explain`).

Everything here is pure and bounded: no claim is turned into anything sized by
it (a 5,000-digit number is read as "more than MAX_CLAIM" without converting it),
and every pattern is linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from passhat.accounting import MAX_K

MAX_CLAIM = MAX_K
"""A claim above this is refused by the audit (a typo or a date, never a plan)."""
MAX_QUOTE = 200
"""Characters of the sentence kept with a claim."""
MAX_LIST = 1000
"""Items of a seed list or shell loop counted, at most (a longer one reads as more)."""

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
_PLICATE = {"duplicate": 2, "triplicate": 3, "quadruplicate": 4, "quintuplicate": 5}
_WORD_NUMBERS = {**_UNITS, **_TENS, "a dozen": 12, "dozen": 12, "a hundred": 100, "hundred": 100}
_CHINESE_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "兩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}

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
_UNIT = (
    r"(?:runs?|trials?|seeds?|epochs?|attempts?|samples?|completions?|rollouts?|"
    r"repetitions?|repeats?|replicates?|trajector(?:y|ies)|generations?|episodes?|"
    r"iterations?|responses?)"
)
_ADJ = (
    r"(?:(?:independent|separate|random|different|full|complete|repeated|distinct|"
    r"evaluation|random-seed)\s+){0,2}"
)
_VERB = (
    r"(?:ran|run|runs|running|re-?ran|re-?runs?|repeat(?:s|ed)?|evaluat(?:e|es|ed)|test(?:s|ed)?|"
    r"sampl(?:e|es|ed)|attempt(?:s|ed)?|execut(?:e|es|ed)|measured|perform(?:s|ed)?|"
    r"replicated|rolled\s+out|tried|played|scored|graded|done|quer(?:y|ies|ied)|"
    r"conduct(?:s|ed)?|carried\s+out|launch(?:es|ed)?|benchmarked)"
)
_BEFORE = (
    r"(?:over|across|with|using|of|from|in|after|averaged\s+over|averages?|mean\s+of|"
    r"mean\s+over|average\s+of|best\s+of|median\s+of|median\s+across|ran|run|did|made|"
    r"make|performed|conducted|executed|took|takes|collected|collect|launch|launched|"
    r"give|gave|gets|get|got|receives?|received|aggregates?|sampled|sample|generated?|"
    r"generates|use|used|uses|performs?|perform)"
)
_AFTER = (
    r"(?:per|each|for\s+(?:each|every|all)|of\s+(?:each|every)|on\s+(?:each|every)|"
    r"at\s+(?:each|every)|in\s+each|with\s+each|a\s+piece|apiece)"
)
_NOT_COUNT = (
    r"(?:faster|slower|more|less|fewer|larger|smaller|longer|shorter|higher|lower|as|"
    r"bigger|cheaper|better|worse|the\s+(?:cost|size|speed|number))"
)
_CN_NUM = r"(?P<num>\d+|[一二两兩三四五六七八九十百]{1,4})"
_KEYS = (
    r"(?:k|n[-_]?runs|num[-_]?runs|runs|runs[-_]per[-_]\w+|trials|n[-_]?trials|num[-_]?trials|"
    r"trials[-_]per[-_]\w+|attempts|n[-_]?attempts|num[-_]?attempts|attempts[-_]per[-_]\w+|"
    r"epochs|n[-_]?epochs|num[-_]?epochs|seeds|n[-_]?seeds|num[-_]?seeds|repeats|n[-_]?repeats|"
    r"num[-_]?repeats|repetitions|n[-_]?repetitions|num[-_]?repetitions|n[-_]?samples|"
    r"samples[-_]per[-_]\w+|rollouts|n[-_]?rollouts|num[-_]?rollouts|rollouts[-_]per[-_]\w+|"
    r"n[-_]?completions|completions[-_]per[-_]\w+|replicates|n[-_]?replicates)"
)
_LIST = r"(?P<list>\d{1,9}(?:\s*,\s*\d{1,9})*(?:\s*,?\s*(?:and|&)\s*\d{1,9})?)"


@dataclass(frozen=True)
class Claim:
    """A run count a write-up claims."""

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
    rule: str = ""
    """The rule of the grammar that read it, e.g. `count per scope` (docs/audit.md)."""

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


@dataclass(frozen=True)
class SetAside:
    """A number the grammar read as a candidate and set aside, with the rule why."""

    source: str
    """File and line."""
    quote: str
    """The sentence."""
    rule: str
    """Why it is no claim, e.g. `a limit, not a count of runs`."""
    written: str = ""


@dataclass
class Reading:
    """What one text claims, and what it seemed to claim but does not."""

    claims: list[Claim] = field(default_factory=list)
    set_aside: list[SetAside] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the bounds left unread (MAX_CANDIDATES)."""


MAX_CANDIDATES = 1000
"""Numbers one file's text is read for, at most (claims and numbers set aside): a file
with more is no report, and each candidate costs a sentence and its context."""


def number(word: str) -> int | None:
    """A count written in digits ("5", "1,000"), words ("five", "twenty-five", "a dozen",
    "twice", "triplicate") or Chinese numerals ("五", "十二"); MAX_CLAIM + 1 for any count
    above MAX_CLAIM; None for no count. Never converts more digits than MAX_CLAIM has, so
    a 5,000-digit number is cheap."""
    text = word.strip().lower().replace(",", "")
    if not text:
        return None
    if text.isascii() and text.isdigit():
        stripped = text.lstrip("0") or "0"
        if len(stripped) > len(str(MAX_CLAIM)):
            return MAX_CLAIM + 1
        value = int(stripped)
        return min(value, MAX_CLAIM + 1) or None
    text = re.sub(r"\s+", " ", text)
    for table in (_ADVERBS, _PLICATE, _WORD_NUMBERS):
        if text in table:
            return table[text]
    parts = re.split(r"[- ]", text)
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS:
        return _TENS[parts[0]] + _UNITS[parts[1]]
    return _chinese(text)


def _chinese(text: str) -> int | None:
    """一 .. 九十九 and 百 ("三" 3, "十二" 12, "二十" 20, "一百" 100); None otherwise."""
    if not text or any(c not in _CHINESE_DIGITS and c not in "十百" for c in text):
        return None
    if text in ("百", "一百"):
        return 100
    if "十" in text:
        tens, _, units = text.partition("十")
        high = _CHINESE_DIGITS.get(tens, 0 if tens else 1) if len(tens) <= 1 else None
        low = _CHINESE_DIGITS.get(units, 0 if not units else -1) if len(units) <= 1 else None
        if high is None or low is None or low < 0 or (tens and high == 0):
            return None
        return high * 10 + low or None
    return _CHINESE_DIGITS.get(text) if len(text) == 1 else None


def _count_list(items: str) -> int:
    """The number of items of "0, 1 and 2" or "0 1 2" (at most MAX_LIST + 1 counted)."""
    return min(len(re.findall(r"\d+", items[: MAX_LIST * 12])), MAX_LIST + 1)


def _count_range(lo: str, hi: str) -> int | None:
    """Items of the range lo-hi ("seeds 1-5": 5); None for no range (hi <= lo)."""
    if len(lo) > 9 or len(hi) > 9:
        return MAX_CLAIM + 1
    span = int(hi) - int(lo) + 1
    return min(span, MAX_CLAIM + 1) if span >= 2 else None


# ---------------------------------------------------------------- the rules

Counter = Callable[["re.Match[str]"], int | None]


def _num(match: re.Match[str]) -> int | None:
    return number(match.group("num"))


def _items(match: re.Match[str]) -> int | None:
    count = _count_list(match.group("list"))
    return count if count >= 2 else None


def _range(match: re.Match[str]) -> int | None:
    return _count_range(match.group("lo"), match.group("hi"))


def _largest(match: re.Match[str]) -> int | None:
    return max((number(n) or 0 for n in re.findall(r"\d+", match.group("list"))), default=0) or None


@dataclass(frozen=True)
class Rule:
    """One way of writing a claim: a pattern, how its count is read, and its name."""

    name: str
    pattern: re.Pattern[str]
    count: Counter = _num
    at_least: bool = False
    trigger: tuple[str, ...] = ()
    """Words one of which a text must hold (lower-cased) before `pattern` runs over it:
    most lines hold no unit at all, and a substring test costs far less than a pattern."""


_UNIT_WORDS = (
    "run",
    "trial",
    "seed",
    "epoch",
    "attempt",
    "sample",
    "complet",
    "rollout",
    "repetit",
    "repeat",
    "replicat",
    "traject",
    "generat",
    "episode",
    "iterat",
    "respons",
)
_TRIGGERS = {
    "verb + N times": ("times", "×", "x"),
    "once / twice / thrice": ("once", "twice", "thrice"),
    "in triplicate": ("plicate",),
    "pass^k figure": ("pass",),
    "avg@k figure": ("@",),
    "k ∈ {…}": ("{",),
    "setting": ("=", ":"),
    "command-line flag": ("-",),
    "list of seeds": ("seed",),
    "range of seeds": ("seed",),
    "shell loop": ("for",),
    "count in Chinese": ("次", "遍", "轮", "輪", "种子", "種子"),
}


def _rule(name: str, pattern: str, count: Counter = _num, at_least: bool = False) -> Rule:
    trigger = _TRIGGERS.get(name, _UNIT_WORDS)
    return Rule(name, re.compile(pattern, re.I), count, at_least, trigger)


_PROSE_RULES = (
    _rule(
        "count per scope",  # "3 runs per configuration", "five trials for each task"
        r"\b" + _NUM + r"(?:\s*\(\d+\))?[\s-]+" + _ADJ + _UNIT + r"\b(?=\s+" + _AFTER + r"\b)",
    ),
    _rule(
        "count after a verb or preposition",  # "averaged over five seeds", "best of 3 attempts"
        r"\b" + _BEFORE + r"\s+(?:the\s+|all\s+|a\s+total\s+of\s+|about\s+|only\s+)?"
        r"(?:n\s*=\s*)?" + _NUM + r"\s+" + _ADJ + _UNIT + r"\b(?!\s+" + _NOT_COUNT + r"\b)",
    ),
    _rule(
        "verb + N times",  # "we ran every configuration 5 times", "ran it 5x", "N=5 times"
        r"\b"
        + _VERB
        + r"\b(?:\s+[\w'(),-]{1,30}){0,6}?\s+(?:a\s+total\s+of\s+)?(?:n\s*=\s*)?"
        + _NUM
        + r"(?:\s*\(\d+\))?\s*(?:times|x|×)(?!\s+"
        + _NOT_COUNT
        + r"\b)(?![\w-])",
    ),
    _rule(
        "once / twice / thrice", r"\b" + _VERB + r"\s+(?:\w+\s+){0,3}?(?P<num>once|twice|thrice)\b"
    ),
    _rule("in triplicate", r"\bin\s+(?P<num>duplicate|triplicate|quadruplicate|quintuplicate)\b"),
    _rule(
        "n = N units",  # "(n=4 runs)", "n = 5 trials", "N = 6 runs"
        r"(?<![\w-])n\s*=\s*" + _NUM + r"\s+" + _ADJ + _UNIT + r"\b",
    ),
    _rule(
        "parenthesised count",  # "(5 seeds)", "(3 runs each)"
        r"\(\s*" + _NUM + r"\s+" + _ADJ + _UNIT + r"(?:\s+each)?\s*\)",
    ),
    _rule(
        "count of independent runs",  # "5 independent runs"
        r"\b" + _NUM + r"\s+(?:independent|separate|repeated|different)\s+" + _UNIT + r"\b",
    ),
    _rule(
        "count + were performed",  # "Three runs were performed for each agent"
        r"\b" + _NUM + r"\s+" + _ADJ + _UNIT + r"(?:\s+(?:per|for\s+each)\s+[\w-]+)?\s+"
        r"(?:were|was|are|have\s+been|had\s+been)\s+(?:\w+\s+)?(?:performed|conducted|collected|"
        r"run|done|made|executed|carried\s+out|completed|drawn|launched|averaged|sampled|used)\b",
    ),
    _rule(
        "N-run average",  # "the 5-run average", "a 3-seed mean"
        r"\b" + _NUM + r"-" + _UNIT + r"\s+(?:average|mean|median|avg)\b",
    ),
    _rule("tasks × N runs", r"[x×*]\s*" + _NUM + r"\s+" + _UNIT + r"\b"),  # "50 tasks × 5 trials"
    _rule("tasks × N runs", r"\b" + _NUM + r"\s+" + _UNIT + r"\s*[x×*]\s*\d"),  # "3 runs × 89"
    _rule(
        "labelled count",  # "Trials: 5", "Number of runs: 4", "**Runs:** 3", "runs/config: 5"
        r"(?<![\w-])(?:number\s+of\s+|num(?:ber)?\.?\s+|#\s*)?"
        r"(?:runs|trials|epochs|attempts|seeds|repeats|repetitions|rollouts|samples|replicates|"
        r"(?:run|trial|seed|attempt)\s+count)"
        r"(?:\s*(?:per|/|for\s+each)\s*[\w-]{1,30})?\s*(?:\*\*|__)?\s*[:=—–]\s*(?:\*\*|__)?\s*"
        + _NUM
        + r"(?!\.\d|\d)",
    ),
    _rule(
        "scope: count",  # "Each task: 3 attempts"
        r"\b(?:each|every|per)\s+[\w-]{1,30}\s*:\s*" + _NUM + r"\s+" + _ADJ + _UNIT + r"\b",
    ),
)
_FIGURE_RULES = (
    _rule(
        "pass^k figure",  # pass^5, pass@5, pass\^4, $\text{pass}^{8}$, pass-hat-3, pass_at_5
        r"\bpass\s*\}?\s*(?:\\?\^|@|[-_\s]hat[-_\s]?|_at_)\s*\{?\s*(?P<num>\d[\d,]*)",
        at_least=True,
    ),
    _rule("avg@k figure", r"\b(?:avg|maj|mean|cons)\s*@\s*(?P<num>\d[\d,]*)", at_least=True),
    _rule(
        "k ∈ {…}",  # "k ∈ {1, 3, 5}", "$k \in \{1, 2, 3\}$"
        r"(?<![\w-])k\s*(?:∈|\\in\b|\bin\b)\s*\\?\{\s*(?P<list>\d{1,9}(?:\s*,\s*\d{1,9})*)\s*\\?\}",
        _largest,
        at_least=True,
    ),
)
_SETTING_RULES = (
    _rule(
        "setting",  # "k=5", "num_trials: 5", '"n_epochs": 5', "N_RUNS = 4"
        r"(?<![\w-])[\"']?" + _KEYS + r"[\"']?\s*[=:]\s*[\"']?(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])",
    ),
    _rule(
        "command-line flag",  # "--seeds 5", "--n-attempts 5", "--epochs=4"
        r"(?<![\w-])--" + _KEYS + r"(?:\s+|=)(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])",
    ),
    _rule("command-line flag", r"(?<![\w-])-k(?:\s+|=)(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])"),
    _rule(
        "list of seeds",  # "seeds: [0, 1, 2]", "seeds 0, 1 and 2", "seeds {1, 2, 3}"
        r"\bseeds?[\"']?\s*(?:[:=]\s*)?(?:are\s+|of\s+)?[\[{(]?\s*" + _LIST + r"\s*[\]})]?",
        _items,
    ),
    _rule(
        "range of seeds",  # "seeds 1-5", "(seeds 0-4)"
        r"\bseeds?\s*[:=]?\s*(?P<lo>\d+)\s*[-–]\s*(?P<hi>\d+)\b",
        _range,
    ),
    _rule(
        "shell loop",  # "for seed in 0 1 2; do", "for i in $(seq 1 5)"
        r"\bfor\s+\w+\s+in\s+(?:(?P<list>\d{1,9}(?:\s+\d{1,9})+)\s*;?\s*do\b|"
        r"\$\(seq\s+(?P<lo>\d+)\s+(?P<hi>\d+)\))",
        lambda m: _count_list(m.group("list")) if m.group("list") else _range(m),
    ),
)
_CHINESE_RULES = (
    _rule(
        "count in Chinese",  # "每個設定各跑 3 次", "重複執行五次", "进行了四次试验"
        r"(?:跑|运行|運行|执行|執行|重复|重複|采样|採樣|进行|進行|评测|評測|测试|測試)了?"
        r"[^。，,.；;\n]{0,8}?" + _CN_NUM + r"\s*(?:次|遍|轮|輪)",
    ),
    _rule(
        "count in Chinese",  # "10 次运行的平均值", "五次嘗試"
        _CN_NUM + r"\s*(?:次|轮|輪)(?:独立|獨立)?(?:的)?(?:运行|運行|试验|試驗|实验|實驗|嘗試|尝试|"
        r"采样|採樣|重复|重複|评测|評測)",
    ),
    _rule(
        "count in Chinese",  # "三個隨機種子"
        _CN_NUM + r"\s*[个個]?(?:不同的?)?(?:随机|隨機)?(?:种子|種子)",
    ),
)

_ASIDE: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (name, re.compile(before, re.I), re.compile(after, re.I))
    for name, before, after in (
        # (what sets a number aside, text just before it, text just after it)
        (
            "a limit, not a count of runs",
            r"(?:up\s+to|at\s+most|a\s+maximum\s+of|maximum\s+of|max(?:imum)?|no\s+more\s+than|"
            r"retr(?:y|ies|ied)\b.{0,20}|最多|至多|上限)\s*$",
            r"^\D{0,40}?\b(?:per|each|every)\s+(?:tool[-\s]call|call|api\s+call|request|step)\b",
        ),
        (
            "training epochs, not evaluation runs",
            r"(?:\btrain(?:ed|ing|s)?\b|fine-?tun|warm-?up|训练|訓練).{0,60}$",
            r"^(?!x)x",
        ),
        ("a batch size", r"batch[-_\s]?size\b.{0,12}$", r"^(?!x)x"),
        (
            "k counts neighbours or clusters",
            r"(?:top[-_\s]?|k-nn.{0,10}|k-means.{0,20})$",
            r"^\s*(?:nearest|neighbou?rs?|clusters?|-?nn\b)",
        ),
    )
)
_PLAN = re.compile(
    r"\b(?:plan(?:s|ned)?\s+to|will|would|should|could|might|future\s+work|if\s+(?:budget|time)|"
    r"ideally|intend\s+to|to\s+be\s+run)\b|计划|計劃|未来|未來|将来|將來",
    re.I,
)
_SAME_INPUT = re.compile(r"same\s+input|(?:同样|同樣|相同)的?输入|(?:同样|同樣|相同)的?輸入", re.I)
_TRAINING_UNIT = re.compile(r"epoch", re.I)


def _set_aside(context: str, start: int, end: int, matched: str) -> str | None:
    """The rule that makes the number at [start, end) of `context` (one sentence) no claim;
    None when it is a claim."""
    before, after = context[:start], context[end:]
    for name, near_before, near_after in _ASIDE:
        if name.startswith("training") and not _TRAINING_UNIT.search(matched):
            continue
        if name.startswith("k counts") and not re.match(r"-?-?k\b", matched.strip("\"'"), re.I):
            continue
        if near_before.search(before[-80:]) or near_after.search(after[:80]):
            return name
    if _PLAN.search(context):
        return "a plan or condition, not a result"
    if _SAME_INPUT.search(context):
        return "a statement about determinism, not a count of runs"
    return None


# ------------------------------------------------------------------ reading


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
class _Block:
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
_SENTENCE_END = re.compile(r"[.!?:。；;]\s*$")


def _blocks(lines: list[str]) -> Iterator[_Block]:
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
            and not _NOT_PROSE.match(lines[j])
            and not _NOT_PROSE.match(lines[j + 1])
            and "|" not in lines[j] + lines[j + 1]
            and not _SENTENCE_END.search(lines[j])
        ):
            j += 1
            parts.append(lines[j])
            starts.append(offset)
            offset += len(lines[j]) + 1
        yield _Block(" ".join(parts), tuple(starts), i + 1)
        i = j + 1


def _apply(
    rules: tuple[Rule, ...],
    block: _Block,
    name: str,
    reading: Reading,
    found: list[tuple[tuple[int, int], Claim]],
) -> bool:
    """The claims of one block (each keyed by line and place, for reading order) into
    `found`, the numbers set aside into `reading`; False once MAX_CANDIDATES were read."""
    seen: set[tuple[int, int]] = set()
    lower = block.text.lower()
    for rule in rules:
        if not any(word in lower for word in rule.trigger):
            continue
        for match in rule.pattern.finditer(block.text):
            if len(found) + len(reading.set_aside) >= MAX_CANDIDATES:
                reading.notes.append(
                    f"{name}: more than {MAX_CANDIDATES:,} numbers read as possible claims; "
                    f"the rest of it (from line {block.first_line}) was not read"
                )
                return False
            group = next(g for g in ("num", "list", "lo") if match.groupdict().get(g) is not None)
            span = match.span(group)
            key = span
            if key in seen:
                continue
            k = rule.count(match)
            if k is None:
                continue
            seen.add(key)
            where = f"{name}:{block.line_of(span[0])}"
            quote = sentence(block.text, *match.span())
            left, right = sentence_span(block.text, *match.span())
            context = block.text[left:right]
            aside = _set_aside(context, span[0] - left, span[1] - left, match.group(0))
            written = match.group(group)
            if aside:
                reading.set_aside.append(SetAside(where, quote, aside, written))
            else:
                claim = Claim(k, where, quote, rule.at_least, written=written, rule=rule.name)
                found.append(((block.line_of(span[0]), span[0]), claim))
    return True


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*`_ ") for c in line.strip().strip("|").split("|")]


def _is_separator(line: str) -> bool:
    if "-" not in line:
        return False
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return bool(cells) and all(re.fullmatch(r":?-+:?", c) for c in cells)


_COLUMN = re.compile(
    r"^(?:#|n|num|number\s+of|no\.?)?\s*[_ ]?\s*(?:runs|trials|seeds|epochs|attempts|samples|"
    r"rollouts|repetitions|repeats|replicates|completions|reps|k)"
    r"(?:\s*\(\s*(?:n|#|k)\s*\))?(?:\s*(?:/|per|for\s+each)\s*[\w-]+)?$",
    re.I,
)


def _header_claims(cells: list[str], where: str, quote: str) -> Iterator[Claim]:
    """A pass^k header claims at least k runs."""
    for cell in cells:
        for rule in _FIGURE_RULES[:2]:
            match = rule.pattern.fullmatch(cell.strip())
            if match and (k := number(match.group("num"))):
                yield Claim(
                    k, where, quote, True, written=match.group("num"), rule="table pass^k header"
                )


def _rows(
    header: list[str], rows: list[tuple[int, list[str]]], name: str, lines: list[str], rule: str
) -> Iterator[Claim]:
    columns = [i for i, h in enumerate(header) if _COLUMN.match(h.strip())]
    for line_no, cells in rows:
        for column in columns:
            cell = cells[column].strip().strip("*`_ ") if column < len(cells) else ""
            if cell.isascii() and cell.isdigit() and (k := number(cell)):
                scope = cells[0].strip() if column != 0 and cells[0].strip() else None
                yield Claim(
                    k,
                    f"{name}:{line_no}",
                    sentence(lines[line_no - 1], 0, 0),
                    scope=scope,
                    written=cell,
                    rule=rule,
                )


def _markdown_tables(lines: list[str], name: str) -> Iterator[Claim]:
    """Claims of markdown tables: a header row, an alignment row (`---`, `:--`, `--:`,
    with or without outer pipes), then rows while lines hold a `|`."""
    for index in range(len(lines) - 1):
        if "|" not in lines[index] or not _is_separator(lines[index + 1]):
            continue
        header = _cells(lines[index])
        yield from _header_claims(header, f"{name}:{index + 1}", sentence(lines[index], 0, 0))
        rows = []
        for row in range(index + 2, len(lines)):
            if "|" not in lines[row]:
                break
            rows.append((row + 1, _cells(lines[row])))
        yield from _rows(header, rows, name, lines, "table column")


_LATEX_CELL = re.compile(
    r"\\(?:textbf|textit|emph|text|mathrm|multicolumn\{\d+\}\{\w+\})\{([^{}]*)\}"
)


def _latex_cells(line: str) -> list[str]:
    line = re.sub(r"\\\\.*$", "", line)
    line = re.sub(r"\\(?:toprule|midrule|bottomrule|hline|cline\{[^}]*\})", "", line)
    line = _LATEX_CELL.sub(r"\1", line).replace("\\#", "#").replace("$", "")
    return [c.strip() for c in line.split("&")]


def _latex_tables(lines: list[str], name: str) -> Iterator[Claim]:
    """Claims of LaTeX `tabular` environments: the first row with `&` is the header."""
    index = 0
    while index < len(lines):
        if "\\begin{tabular" not in lines[index]:
            index += 1
            continue
        header: list[str] | None = None
        rows = []
        index += 1
        while index < len(lines) and "\\end{tabular" not in lines[index]:
            if "&" in lines[index]:
                cells = _latex_cells(lines[index])
                if header is None:
                    header = cells
                    yield from _header_claims(
                        cells, f"{name}:{index + 1}", sentence(lines[index], 0, 0)
                    )
                else:
                    rows.append((index + 1, cells))
            index += 1
        if header:
            yield from _rows(header, rows, name, lines, "LaTeX table column")


PROSE = "prose"
DATA = "data"
SHELL = "shell"
_DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".py", ".env")
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", "makefile")


def kind_of(name: str) -> str:
    """How a file is read: `data` (keys only), `shell` (flags, keys, loops) or `prose`."""
    lower = name.lower()
    if lower.endswith(_DATA_SUFFIXES):
        return DATA
    if lower.endswith(_SHELL_SUFFIXES):
        return SHELL
    return PROSE


def read_text(text: str, name: str) -> Reading:
    """Every claim of one file's text, and every number set aside, each with its file and
    line; `name` (the file's path in the folder) chooses the readers: prose, tables,
    settings and figures for text, settings and figures for data and scripts; pure."""
    kind = kind_of(name)
    if kind == PROSE:
        text = text.replace("$", " ")  # LaTeX inline math: "$n=3$ seeds", "$5$ times"
    lines = text.splitlines()
    reading = Reading()
    found: list[tuple[tuple[int, int], Claim]] = []
    rules: tuple[Rule, ...] = _SETTING_RULES + _FIGURE_RULES
    if kind == PROSE:
        rules = _PROSE_RULES + _CHINESE_RULES + rules
    blocks = (
        _blocks(lines)
        if kind == PROSE
        else (_Block(line, (0,), i + 1) for i, line in enumerate(lines))
    )
    for block in blocks:
        if not _apply(rules, block, name, reading, found):
            break
    if kind == PROSE:
        for claim in (*_markdown_tables(lines, name), *_latex_tables(lines, name)):
            found.append(((int(claim.source.rsplit(":", 1)[1]), -1), claim))
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
