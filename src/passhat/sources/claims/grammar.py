"""The grammar of claims: counts, scopes, verbs and setting keys as pattern fragments
(the units from vocabulary.py), the `Rule`s built from them (prose, figures, settings,
Chinese), each with the words a text must hold before it runs, and the contexts that set
a number aside: in its sentence (a limit, training epochs, a batch size, k neighbours, a
plan, a negation, an instruction, a schedule...) and by its frame (frames.py: a training
section, a judge's keys, a file of plans). docs/audit.md names every rule.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from passhat.sources.claims.numbers import TENS, UNITS, count_list, count_range, number
from passhat.sources.claims.vocabulary import (
    CHINESE_UNITS,
    COUNT_NOUNS,
    INDEX_NOUNS,
    PROSE_NOUNS,
    TRAINING_NOUNS,
    nouns,
    stems,
)

_WORD = (
    r"(?:(?:"
    + "|".join(TENS)
    + r")(?:[- ](?:"
    + "|".join(k for k in UNITS if UNITS[k] < 10)
    # "a dozen" before "dozen"; "nineteen" before "nine": longest first
    + r"))?|"
    + "|".join(sorted((*UNITS, "a dozen", "dozen", "a hundred", "hundred"), key=len, reverse=True))
    + r")"
)
_ONE = r"(?:\d[\d,]*|" + _WORD + r")"
_NUM = (  # "5", "five", a range read at its lower bound: "3-5", "three to five", "between 3 and 5"
    r"(?:(?P<between>between)\s+)?(?P<num>"
    + _ONE
    + r")(?:\s*(?:[-–—]|\bto\b|\bor\b|(?(between)\band\b|(?!)))\s*"
    + _ONE
    + r"(?![\w-]))?"
)
_UNIT = nouns(PROSE_NOUNS)
_NOT_ADJ = (
    r"(?:and|or|of|per|for|each|every|the|a|an|in|on|at|to|with|from|by|than|as|more|less|"
    r"fewer|other|extra|additional|further|failed|failing|crashed|errored|broken|aborted|"
    r"incomplete|unfinished|remaining|previous|prior|earlier|later|last|first|next|second|"
    r"third|final|was|were|is|are|be|been|we|it|they|not|no|all|only|that|which|some|many|"
    r"few|several|same|such|its|their|our|times|x|" + "|".join((*UNITS, *TENS)) + r")"
)
_ADJ = (  # up to three words between a count and its unit: "5 independent", "3 full end-to-end"
    r"(?:(?!" + _NOT_ADJ + r"\b)[a-z][a-z-]{0,24}(?<!s)\s+){0,3}"
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
_CN_UNIT = "(?:" + "|".join(CHINESE_UNITS) + ")"
_KEY_UNIT = nouns(COUNT_NOUNS)
_PLURAL_KEY = nouns(tuple(n for n in COUNT_NOUNS if n not in ("sample", "completion")), "plural")
"""A plural unit alone as a setting's key (`runs: 3`), not `samples` (a data set's)."""
_KEYS = (  # a setting's name: a unit with a count's prefix or suffix, or a plural unit alone
    r"(?:k|pass[-_]?k|(?:n|num|nb|number[-_]?of)[-_]?"
    + _KEY_UNIT
    + r"(?:[-_]per[-_][a-z]+)?|"
    + _PLURAL_KEY
    + r"|"
    + _KEY_UNIT
    + r"[-_](?:count|num|per[-_][a-z]+))"
)
_LIST = r"(?P<list>\d{1,9}(?:\s*,\s*\d{1,9})*(?:\s*,?\s*(?:and|&)\s*\d{1,9})?)"


# ---------------------------------------------------------------- the rules

Counter = Callable[["re.Match[str]"], int | None]


def _num(match: re.Match[str]) -> int | None:
    return number(match.group("num"))


def _items(match: re.Match[str]) -> int | None:
    count = count_list(match.group("list"))
    return count if count >= 2 else None


def _range(match: re.Match[str]) -> int | None:
    return count_range(match.group("lo"), match.group("hi"))


def _attempts(match: re.Match[str]) -> int | None:
    """The attempts of "wins of attempts" ("4 of 5": 5); None when wins exceed them."""
    k = number(match.group("num"))
    return (
        k
        if k is not None and len(match.group("wins")) <= 9 and int(match.group("wins")) <= k
        else None
    )


def _enumerated(match: re.Match[str]) -> int | None:
    """The runs of "run 1 ..., run 2 ... and run 3": the distinct numbers after the noun."""
    noun = re.escape(match.group("noun"))
    items = set(re.findall(r"\b" + noun + r"\s*#?\s*(\d{1,9})\b", match.group(0), re.I))
    return len(items) if len(items) >= 2 else None


def _loop(match: re.Match[str]) -> int | None:
    """The runs of a shell loop: its items, `seq [lo] hi` (lo 1 when left out), `{lo..hi}`."""
    if match.group("list"):
        return count_list(match.group("list"))
    if match.group("from") is not None:
        return count_range(match.group("from"), match.group("to"))
    return count_range(match.group("lo") or "1", match.group("hi"))


def _several(match: re.Match[str]) -> int | None:
    """Runs named without a count ("mean ± std over seeds", "several runs per model"): at
    least two."""
    return 2


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


_UNIT_WORDS = stems(PROSE_NOUNS)
_TRIGGERS = {
    "verb + N times": ("times", "×", "x"),
    "once / twice / thrice": ("once", "twice", "thrice"),
    "in triplicate": ("plicate",),
    "pass^k figure": ("pass",),
    "avg@k figure": ("@",),
    "k ∈ {…}": ("{",),
    "k = 1..N": ("k",),
    "setting": ("=", ":", "|"),
    "command-line flag": ("-",),
    "list of seeds": ("seed",),
    "range of seeds": ("seed",),
    "shell loop": ("for",),
    "count in Chinese": (*CHINESE_UNITS, "种子", "種子"),
    "successes over attempts": ("/", " of "),
    "short command-line flag": ("-",),
    "statistic of N": ("mean", "average", "avg", "median", "best"),
    "enumerated runs": stems(INDEX_NOUNS),
}


def _rule(name: str, pattern: str, count: Counter = _num, at_least: bool = False) -> Rule:
    trigger = _TRIGGERS.get(name, _UNIT_WORDS)
    return Rule(name, re.compile(pattern, re.I), count, at_least, trigger)


_RUNS_PLURAL = nouns((*INDEX_NOUNS, "replicate", "rollout"), "plural")
PROSE_RULES = (
    _rule(
        "count per scope",  # "3 runs per configuration", "five trials for each task"
        r"\b"
        + _NUM
        + r"(?:\s*\(\d+\))?[\s-]+"
        + _ADJ
        + _UNIT
        + r"\b(?=\s+"
        + _AFTER
        + r"\b|\s*/\s*(?:config|configuration|task|model|agent|problem|prompt|setting|seed|case)\b)",
    ),
    _rule(
        "count after a verb or preposition",  # "averaged over five seeds", "best of 3 attempts"
        r"\b" + _BEFORE + r"\s+(?:the\s+|all\s+|a\s+total\s+of\s+|about\s+|only\s+)?"
        r"(?:n\s*=\s*)?" + _NUM + r"\s+" + _ADJ + _UNIT + r"\b(?!\s+" + _NOT_COUNT + r"\b)",
    ),
    _rule(
        "count after a verb or preposition",  # "evaluated on 3 seeds" (not "on 500 samples")
        r"\bon\s+(?:the\s+|all\s+)?"
        + _NUM
        + r"\s+"
        + _ADJ
        + nouns((*INDEX_NOUNS, "replicate", "rollout"))
        + r"\b",
    ),
    _rule(
        "verb + N times",  # "we ran every configuration 5 times", "ran it 5x", "N=5 times"
        r"\b"
        + _VERB
        + r"\b(?:\s+[\w'(),-]{1,30}){0,6}?\s+(?:a\s+total\s+of\s+)?(?:n\s*=\s*)?"
        + _NUM
        + r"(?:\s*\(\d+\))?\s*(?:(?:separate|consecutive|different|independent|distinct)\s+)?"
        r"(?:times|x|×)(?!\s+" + _NOT_COUNT + r"\b)(?![\w-])",
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
        r"\b" + _NUM + r"\s+(?:independent|separate|repeated|different|random)\s+" + _UNIT + r"\b",
    ),
    _rule(
        "count + were performed",  # "Three runs were performed for each agent"
        r"\b" + _NUM + r"\s+" + _ADJ + _UNIT + r"(?:\s+(?:per|for\s+each)\s+[\w-]+)?\s+"
        r"(?:were|was|are|have\s+been|had\s+been)\s+(?:\w+\s+)?(?:performed|conducted|collected|"
        r"run|done|made|executed|carried\s+out|completed|drawn|launched|averaged|sampled|used)\b",
    ),
    _rule(
        "N-run average",  # "the 5-run average", "a 3-seed mean"
        r"\b" + _NUM + r"[-\s]" + _UNIT + r"\s+(?:average|mean|median|avg)\b",
    ),
    _rule("tasks × N runs", r"[x×*]\s*" + _NUM + r"\s+" + _UNIT + r"\b"),  # "50 tasks × 5 trials"
    _rule("tasks × N runs", r"\b" + _NUM + r"\s+" + _UNIT + r"\s*[x×*]\s*\d"),  # "3 runs × 89"
    _rule(
        "labelled count",  # "Trials: 5", "Number of runs: 4", "**Runs:** 3", "runs/config: 5"
        r"(?<![\w-])(?:number\s+of\s+|num(?:ber)?\.?\s+|no\.\s*(?:of\s+)?|#\s*(?:of\s+)?)?"
        r"(?:" + nouns(COUNT_NOUNS, "plural") + r"|" + nouns(INDEX_NOUNS, "singular") + r"\s+count)"
        r"(?:\s*(?:per|/|for\s+each)\s*[\w-]{1,30})?\s*(?:\*\*|__)?\s*[:=—–|]\s*(?:\*\*|__)?\s*"
        + _NUM
        + r"(?!\.\d|\d)",
    ),
    _rule(
        "scope: count",  # "Each task: 3 attempts"
        r"\b(?:each|every|per)\s+[\w-]{1,30}\s*:\s*" + _NUM + r"\s+" + _ADJ + _UNIT + r"\b",
    ),
    _rule(
        "successes over attempts",  # "passed 4 of 5 trials", "0/3 runs", "2 out of 3 times"
        r"\b(?P<wins>\d{1,9})\s*(?:/|\s(?:out\s+)?of\s+(?:the\s+)?)\s*(?P<num>\d[\d,]*)\s+"
        + _ADJ
        + r"(?:"
        + _UNIT
        + r"|times)\b",
        _attempts,
    ),
    _rule(
        "successes over attempts",  # "solved (3/3)", "passed (2/5)"
        r"\b(?:solved|passed|resolved|succeeded|successes|success|correct|pass(?:es)?|"
        r"fail(?:ed|s|ures)?|completed)\b[^()\n]{0,24}?\(\s*(?P<wins>\d{1,9})\s*/\s*"
        r"(?P<num>\d{1,9})\s*\)",
        _attempts,
    ),
    _rule(
        "statistic of N",  # "accuracy (mean of 3)", "best of 5", "avg over 4;" (runs implied)
        r"\b(?:mean|average|avg|median|best)\s+(?:of|over|across)\s+"
        + _NUM
        + r"(?=\s*(?:[),;]|$))",
    ),
    _rule(
        "enumerated runs",  # "run 1 (60 draws), run 2 (40 draws), run 3 (50 draws)"
        r"\b(?P<noun>" + nouns(INDEX_NOUNS, "singular") + r")\s*#?\s*(?P<num>\d{1,9})\b"
        r"(?:(?:[^.;\n]|\.(?=\d)){0,80}?\b(?P=noun)\s*#?\s*\d{1,9}\b)+",
        _enumerated,
    ),
    _rule(
        "count alone",  # "# 3 seeds", "// 5 runs", "- 4 trials", "(levels, 3 runs)"
        r"(?:^\s*(?:[-*+]|\d{1,3}[.)])?|[#(,;:]|//)\s*(?:\*\*|__)?"
        + _NUM
        + r"\s+"
        + _ADJ
        + _UNIT
        + r"\b"
        r"(?:\*\*|__)?\s*(?=$|[),;]|\.\s*$)",
    ),
    _rule(
        "statistic over runs",  # "mean ± std over seeds", "averaged across its reps"
        r"(?:\b(?:mean|means|average[sd]?|avg|median|std|stdev|standard\s+deviations?|variance|"
        r"spread|aggregated?|aggregates)\b|±)[^.;:\n]{0,24}?\b(?:over|across)\s+"
        r"(?:the\s+|its\s+|their\s+|all\s+)?(?:(?:multiple|several|many|repeated|different|"
        r"independent|random)\s+)*(?P<num>" + _RUNS_PLURAL + r")\b(?!\s+of\b)",
        _several,
        at_least=True,
    ),
)
FIGURE_RULES = (
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
    _rule(
        "k = 1..N",  # "pass^k for k = 1..5", "k=1–8"
        r"(?<![\w-])k\s*=\s*\d{1,9}\s*(?:\.\.\.?|…|–|-|\bto\b)\s*(?P<num>\d[\d,]*)(?!\d|\.\d)",
        at_least=True,
    ),
)
SETTING_RULES = (
    _rule(
        "setting",  # "k=5", "num_trials: 5", '"n_epochs": 5', "N_RUNS = 4"
        r"(?<![\w-])(?:\*\*|__|[\"'`])?"
        + _KEYS
        + r"(?:\*\*|__|[\"'`])?\s*(?::\s*int\s*(?==))?[=:|]\s*(?:\*\*|__|[\"'`])?(?P<num>\d[\d,]*)"
        r"(?!\.\d|[\d\w-]|\s*(?:\.\.|…|–)\s*\d)",
    ),
    _rule(
        "command-line flag",  # "--seeds 5", "--n-attempts 5", "--epochs=4"
        r"(?<![\w-])--" + _KEYS + r"(?:\s+|=)(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])",
    ),
    _rule(
        "short command-line flag",  # "-k 5", "-n 3", "-N=4" (set aside for tools whose -n is no count of runs)
        r"(?<![\w-])-[knN](?:\s+|=)?(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])",
    ),
    _rule(
        "list of seeds",  # "seeds: [0, 1, 2]", "seeds 0, 1 and 2", "seeds {1, 2, 3}"
        r"\bseeds?[\"']?\s*(?:[:=]\s*)?(?:are\s+|of\s+)?[\[{(]?\s*" + _LIST + r"\s*[\]})]?",
        _items,
    ),
    _rule(
        "list of seeds",  # "--seeds 0 1 2" (a flag taking several values), "SEEDS=(42 10 1)"
        r"(?:(?<![\w-])--?seeds?[=\s]\s*|\bseeds?\s*=\s*\(\s*)"
        r"(?P<list>\d{1,9}(?:[ \t]+\d{1,9})+)(?![\d.])",
        _items,
    ),
    _rule(
        "range of seeds",  # "seeds 1-5", "(seeds 0-4)"
        r"\bseeds?\s*[:=]?\s*(?P<lo>\d+)\s*[-–]\s*(?P<hi>\d+)\b",
        _range,
    ),
    _rule(
        "shell loop",  # "for seed in 0 1 2; do", "for i in $(seq 1 5)"
        r"\bfor\s+(?P<var>\w+)\s+in\s+(?:(?P<list>\d{1,9}(?:\s+\d{1,9})+)(?:\s*;?\s*do\b|\s*$)|"
        r"\$\(seq\s+(?:(?P<lo>\d+)\s+)?(?P<hi>\d+)\)|\{(?P<from>\d+)\.\.(?P<to>\d+)\})",
        _loop,
    ),
)
CHINESE_RULES = (
    _rule(
        "count in Chinese",  # "每個設定各跑 3 次", "重複執行五次", "进行了四次试验"
        r"(?:跑|运行|運行|执行|執行|重复|重複|采样|採樣|进行|進行|评测|評測|测试|測試)了?"
        r"[^。，,.；;\n]{0,8}?" + _CN_NUM + r"\s*" + _CN_UNIT,
    ),
    _rule(
        "count in Chinese",  # "10 次运行的平均值", "五次嘗試"
        _CN_NUM
        + r"\s*"
        + _CN_UNIT
        + r"(?:独立|獨立)?(?:的)?(?:运行|運行|试验|試驗|实验|實驗|嘗試|尝试|"
        r"采样|採樣|重复|重複|评测|評測)",
    ),
    _rule(
        "count in Chinese",  # "每格 12 次", "每個設定各 3 次" (a count per cell, setting...)
        r"每[个個]?[^\s\d，。,.；;：:（）()]{1,4}?(?:各|都)?\s*" + _CN_NUM + r"\s*" + _CN_UNIT,
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
            r"as\s+many\s+as|a\s+limit\s+of|capped\s+at|a\s+budget\s+of|<=|≤|"
            r"retr(?:y|ies|ied)\b.{0,20}|(?:最多|至多|上限)[^，。,;；\d]{0,8})\s*$",
            r"^\D{0,40}?\b(?:per|each|every)\s+(?:tool[-\s]call|call|api\s+call|request|step)\b",
        ),
        (
            "training epochs, not evaluation runs",
            r"(?:(?<![a-z])train(?:ed|ing|s)?(?![a-z])|fine-?tun|warm-?up|训练|訓練).{0,60}$",
            r"^(?!x)x",
        ),
        (
            "a batch size",
            r"(?:batch[-_\s]?size\b.{0,12}|(?:mini-?)?batch(?:es)?\s+of\s+)$",
            r"^\D{0,20}?\b(?:per|each|in\s+(?:a|each|every))\s+(?:mini-?)?batch\b",
        ),
        (
            "k counts neighbours or clusters",
            r"(?:top[-_\s]?|k-nn.{0,10}|k-means.{0,20})$",
            r"^\s*(?:nearest|neighbou?rs?|clusters?|-?nn\b)",
        ),
    )
)
_TODO = re.compile(r"^\W*\[ \]")
"""An unchecked box: a to-do ("- [ ] run each configuration 3 times"); a ticked one is done."""
_MODAL = re.compile(r"\b(?:will|would|should|could|might|shall)\b", re.I)
"""A modal in the number's own clause: "we will run 5 seeds", "5 runs would be needed"."""
_CLAUSE_END = re.compile(r"[,;:—–]")
_PLAN = re.compile(
    r"\b(?:plan(?:s|ned)?\s+to|future\s+work|if\s+(?:budget|time)|"
    r"ideally|intend\s+to|to\s+be\s+run|going\s+to|shall|proposal|roadmap|todo)\b|\bplan(?:ned)?\s*[:：]|"
    r"计划|計劃|未来|未來|将来|將來",
    re.I,
)
_CONDITION = re.compile(  # in the number's own clause, before it: "if you run it 5 times"
    r"\b(?:if|unless|whether|suppose|supposing|assuming|imagine|recommend(?:s|ed)?|"
    r"suggest(?:s|ed)?|advis(?:e|es|ed)|encourage[sd]?|consider|must|needs?|require[sd]?|ought\s+to|"
    r"(?:you|users?|one)\s+(?:can|may)|can\s+be|lets?|allows?|supports?|accepts?|try|"
    r"for\s+example|for\s+instance|such\s+as|"
    r"best\s+practice|it\s+is\s+(?:best|advisable|good\s+practice))\b[^,;:.!?()]*$",
    re.I,
)
_RECOMMENDED_LIST = re.compile(
    r"\b(?:recommend\w*|suggest\w*|advis\w*|practices|guidelines)\b[^.!?]{0,60}[:：][^.!?]*$", re.I
)
"""A list of recommendations the number sits in: "we recommend three practices: (1)
estimate pass@1 from multiple runs per task"."""
_CONDITION_AFTER = re.compile(
    r"^[^,;:.!?]*\b(?:(?:is|are)\s+)?(?:recommended|suggested|advised|needed|required|planned|"
    r"proposed)\b",
    re.I,
)
_NEGATED = re.compile(
    r"\b(?:not|never|nor|without|instead\s+of|rather\s+than)\s+(?!only\b|just\b)(?:[a-z]+\s+){0,2}$"
    r"|(?:不是|并非|並非|而非|沒有|没有)\s*$",
    re.I,
)
"""A count denied just before it: "not ten independent runs", "do not impersonate ten"."""
_IMPERATIVE = re.compile(
    r"(?:^|[.;:!?][*_]*\s|,\s|\b(?:then|first|please)\s)\W*"
    r"(?:for\s+[\w\s-]{1,40}?\s)?"
    r"(?:use|set|try|add|freeze|choose|pick|re-?run|specify|increase|raise|lower|change|"
    r"consider|ensure|make\s+sure|remember|report|configure|switch|bump|keep)\b(?!\s*[:：])"
    r"(?:(?!\b(?:because|since|as|which|that|where|when|so|but)\b)[^.;!?])*$",
    re.I,
)
"""An instruction: the number's clause opens with a verb telling the reader what to do
("For a smoke check use --num-trials 5", "then re-run it with --num-trials 3")."""
_ENDS_SOON = re.compile(r"[^.;!?\n]{0,40}[.;]")
_STOP_AFTER = re.compile(
    r"^[^.;!?\n]{0,40}?(?:[.,;:]\W*|\s)(?:and\s+)?then\s+(?:stop|give\s+up|revert|abort|halt|"
    r"escalate|move\s+on|mark|bail|skip|fail)\b",
    re.I,
)
"""A budget: "Three attempts per task, then stop", "Two attempts per task. Then revert"."""
_SCHEDULE = re.compile(r"\bcron(?:tab)?\b|排程|定時|定时|[每天][天日晚週周月年]|每小[時时]", re.I)
_SCHEDULE_AFTER = re.compile(
    r"^\s*(?:times\s+)?(?:(?:a|per|each|every)\s+(?:day|night|hour|week|month|year)\b|daily\b|"
    r"nightly\b|hourly\b|weekly\b|monthly\b|yearly\b|annual)|^\s*次?\s*(?:年度|每年|每天|每日)",
    re.I,
)
"""A schedule: "three times a day", "nightly", "每天執行三次", a cron job."""
_DATASET = re.compile(
    r"(?:数据集|數據集|資料集)\s*(?:包含|包括|含有|由)|"
    r"\b(?:data[-_\s]?sets?|corpus)\s*(?:\w+\s+)?(?:contains?|consists?\s+of|includes?|comprises?)"
    r"\b.{0,80}\b(?:recorded|collected|demonstrat\w*|annotated|filmed|captured|by\s+(?:different\s+)?"
    r"(?:people|participants|subjects|annotators|humans|volunteers))",
    re.I,
)
"""A data set's make-up: "数据集包含18个任务，每个任务重复5次", "the dataset contains 20 tasks,
each performed 5 times by different people" (not "the dataset contains 50 tasks, each run
3 times": a data set evaluated)."""
_GENERATION = re.compile(
    r"generat|sampl(?:ed|ing)|\bdraw|decod|temperature|pass\s*[@^]|completions?|estimat|"
    r"\bn\s*=|per\s+(?:problem|prompt|question)|生成|采样|採樣",
    re.I,
)
"""Samples a model generated (pass@k's), not samples of a data set ("200 samples per
task, seed 42", the first 200 items of each task)."""
_SUGGESTED = re.compile(
    r"(?:\b(?:suggestions?|example\s*:|e\.g\.|recommendations?|defaults|default\s*[:=(]|"
    r"\(\s*default|by\s+default|default\s+value|proposed|proposals?|propose[sd]?|options?\s*:)"
    r"|建議|建议|例如|默认|預設|补充)[^.;!?()\n]{0,80}$",
    re.I,
)
"""An example, a default, a suggestion or a proposal before it in its sentence
("Proposed defaults are ... three random seeds", `suggestion: "seeds: [0, 1, 2]"`)."""
_TIMES = r"^(?:\s*(?:times|x|×)\b)?"
_VARIANTS_AFTER = re.compile(
    _TIMES
    + r"\W{0,3}(?:[:—–]|\s-\s)\s*(?:first|once|one\s+(?:with|without|as|for|on|in|using))\b|"
    + _TIMES
    + r"\W{0,3}(?:—|–|\(|,)?\s*once\s+(?:with|without)\b|"
    + _TIMES
    + r"\W{0,3}(?:—|–|\(|,|:)?\s*(?:once\s+)?with(?:out)?\s+(?:and|&|or)\s+with(?:out)?\b",
    re.I,
)
"""A count of runs that are different configurations: "each task twice — first without
X, then with X", "twice: once with the tool and once without", "3 times, with and
without the skill"."""
_PAIR_AFTER = re.compile(
    _TIMES + r"\s*(?:\(|—|–|:)\s*(?!(?:seeds?|runs?|trials?|attempts?|reps?)\b)[a-z][\w-]*"
    r"(?:\s+[\w-]+)?\s*(?:and|vs\.?|versus|/|then)\s+(?:the\s+)?[a-z][\w-]*(?:\s+[\w-]+)?\s*(?:\)|[.;]|$)",
    re.I,
)
"""Twice, then the two configurations named: "runs each task twice (baseline and
governed)", "twice — plain vs. tooled"."""
_HELD_BACK = re.compile(
    r"^[^.;!?]{0,12}?\b(?:are|is|were|was|remain|stay)\s+(?:still\s+|kept\s+)?(?:sealed|reserved|"
    r"held[\s-](?:out|back)|withheld|hidden|private|excluded|frozen|locked|unused|not\s+(?:yet\s+)?"
    r"(?:used|run|evaluated))\b",
    re.I,
)
"""Seeds or runs held back, not run: "Seeds 0, 1 and 2 are sealed", "seeds 3-5 are held
out"."""
_QUOTED = re.compile(r"[「『][^」』\n]{0,30}$")
"""A count inside 「…」 or 『…』: a phrase mentioned, not a claim made."""
_SAME_INPUT = re.compile(r"same\s+input|(?:同样|同樣|相同)的?输入|(?:同样|同樣|相同)的?輸入", re.I)
_TRAINING_UNIT = re.compile(r"epoch", re.I)
_RETRY = re.compile(r"\b(?:retr(?:y|ies|ied)|re-?(?:ran|run|runs|tried))\b|重試|重试", re.I)
_FAILURE = re.compile(
    r"\b(?:fail\w*|crash\w*|error\w*|time[sd]?\s*out|timed\s+out)|錯誤|错误|失敗|失败|異常|异常",
    re.I,
)
_TOTAL_WORD = r"(?:in\s+total|totals?|overall|altogether|in\s+all|combined|all\s+told)"
_TOTAL_BEFORE = re.compile(r"\b" + _TOTAL_WORD + r"\b,?[^,;.!?]{0,40}$", re.I)
"""A total before the count in its clause: "Total runs: 10", "In total, we ran 120 trials"."""
_TOTAL_AFTER = re.compile(
    r"^[^\d()]{0,24}?\b(?:"
    + _TOTAL_WORD
    + r"\b|(?:across|spanning|covering)\s+(?:(?:all|both|every)"
    r"\s+)?(?:the\s+)?(?:\d[\d,]*|" + _WORD + r")\s)",
    re.I,
)
"""A total just after it: "10 runs in total", "9/9 trials pass across all three pairs"."""
_SCOPE_NOUN = (
    r"(?:configurations?|configs?|settings?|conditions?|tasks?|models?|agents?|groups?|cells?|"
    r"pairs?|levels?|prompts?|problems?|questions?|benchmarks?|experiments?|cases?|arms?|"
    r"environments?|domains?|variants?|systems?|methods?|instances?|samples?|scenarios?|"
    r"\(|[\w-]+\s*\()"
)
_SCOPED_BEFORE = re.compile(r"\b(?:each|every)\s+(?:of\s+the\s+)?" + _SCOPE_NOUN, re.I)
_SCOPED_AFTER = re.compile(
    r"^\W{0,3}(?:(?!one\b|a\b|single\b)[\w-]+\s+){0,3}?(?:per|each|for\s+(?:each|every)|apiece)\b",
    re.I,
)
_OTHER_FLAG_TOOLS = re.compile(
    # tools whose -n / -N / -k counts workers, lines, processes or nodes, or is no count
    r"\b(?:harbor|pytest|py\.test|xargs|parallel|head|tail|sed|grep|git|journalctl|seq|echo|"
    r"printf|sort|uniq|nice|ps|top|ssh|make|nproc|ls|cut|wc|mpirun|mpiexec|srun|sbatch|"
    r"torchrun|curl|wget|docker|kubectl|ping|timeout)\b",
    re.I,
)
_COMMAND_START = re.compile(r"(?:^|[`;|&(\n])[^`;|&(\n]*$")
_RUN_VARIABLE = re.compile(
    r"for\s+(?:[a-z]|idx|\w*(?:run|trial|seed|rep|attempt|iter|sample|epoch)\w*)\s", re.I
)


_PLAN_SECTION = re.compile(
    r"(?<![a-z])(?:plan|plans|planned|planning|proposal|proposed|todo|to-?do|roadmap|"
    r"next\s+steps?|future|checklist|assignment|should|must|mitigation|"
    r"instructions?|guidelines?|usage|options|examples?|e\.g|suggest\w*|"
    r"recommend\w*|improvements?)(?![a-z])|(?m:^\W*if\b)|"
    r"计划|計劃|规划|規劃|风险|風險|缓解|緩解|待办|待辦|用法|示例|例如|建議|建议|如果|假如|假设|假設",
    re.I,
)
"""A heading or lead-in of plans, instructions, options or examples: "## Next steps",
"It should:", "Example invocations of the script:", "If the success rate is 80%:"."""
_PLAN_FILE = re.compile(
    r"(?<![a-z])(?:plan|planning|proposal|todo|roadmap|next[-_ ]?steps?|checklist|assignment|"
    r"spec|specification|outline|api|usage|instructions?|guidelines?)(?![a-z])|"
    r"^(?:task|agents|claude|gemini|contributing)$",
    re.I,
)
"""A file of plans, instructions or options, by its name: PLAN.md, docs/next_steps.md,
TASK.md, AGENTS.md, docs/api.md."""
_TRAINING_FRAME = re.compile(
    r"(?<![a-z])(?:train|trains|training|trainer|fine[\s_-]?tun\w*|finetun\w*|hyper[\s_-]?param\w*|"
    r"optimi[sz]ers?|tune|tuning|sweeps?|hpo|optuna|(?:random|grid|hyper-?parameter)\s+search|"
    r"fit|fitting|pretrain\w*)(?![a-z])|"
    r"训练|訓練|调参|調參|微调|微調",
    re.I,
)
"""A frame of training or a hyper-parameter search: its epochs, iterations and trials
are no evaluation runs ("### Training hyperparameters", `fine_tuning:`, tune.yaml)."""
_OTHER_KEYS = re.compile(
    r"(?<![a-z])(?:judge|judges|grader|graders|critic|reward_model|retry|retries|backoff|"
    r"train|training|trainer|fine_tuning|finetuning|optimizer|scheduler|schedule|cron|sweep|"
    r"tuning|hpo|optuna)(?![a-z])",
    re.I,
)
"""Keys a setting nested under counts something other than the evaluated runs: a
judge's repeats, retries, training, a schedule, a search (`judge:` → `repeats: 3`)."""
_TRAINING_NOUN = re.compile(nouns(TRAINING_NOUNS) + r"|轮|輪", re.I)


_TRAINING_HINT = re.compile(
    r"learning[\s_-]?rate|(?<![\w-])-?-?lr\b|batch[\s_-]?size|weight[\s_-]?decay|"
    r"warm-?up[\s_-]?(?:steps|ratio)|\boptimi[sz]er\b|gradient[\s_-]accumulation|学习率|學習率",
    re.I,
)
"""Words of a training configuration: epochs or iterations a few lines from a learning
rate or a batch size are training's (`--epochs 5 --lr 2e-5`; `Epochs: 5` under
`Batch size: 16`)."""


def trained_nearby(matched: str, nearby: str) -> bool:
    """Whether a count of epochs, iterations, trials... (`matched`) sits among the words of
    a training configuration (`nearby`: its line and the lines around it)."""
    return bool(_TRAINING_NOUN.search(matched) and _TRAINING_HINT.search(nearby))


def frame_rule(frame: str, matched: str) -> str | None:
    """The rule that makes a number no claim by its frame (see `_frame_rule`)."""
    return _frame_rule(frame, bool(_TRAINING_NOUN.search(matched)))


@functools.lru_cache(maxsize=256)
def _frame_rule(frame: str, training_noun: bool) -> str | None:
    """The rule that makes a number no claim by its frame, `KIND\\nPATH\\nHEADING\\nLEAD`
    (frames.py: the heading and lead-in of prose, the section and parent keys of data);
    None when its frame says nothing."""
    kind, path, heading, lead, option = [*frame.split("\n"), "", "", "", "", ""][:5]
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if training_noun and _TRAINING_FRAME.search(f"{path} {heading} {lead}"):
        return "training or tuning, not evaluation runs"
    if kind != "prose":
        if option:
            return "an option's help or default, not a result"
        if _OTHER_KEYS.search(f"{heading} {lead}"):
            return "a setting of something else (a judge, retries, training, a schedule)"
        return None
    if lead.startswith("table:") and re.search(r"\bdefaults?\b", lead, re.I):
        return "an option's help or default, not a result"
    if _PLAN_FILE.search(stem) or _PLAN_SECTION.search(f"{heading}\n{lead}"):
        return "a section of plans, instructions, options or examples"
    return None


_ACROSS = re.compile(r"\b(?:across|spanning|covering)\s+(?:(?:all|both|every)\s+)?(?:the\s+)?(.+)$")


def _fewer_than_items(after_total: str, count: str) -> bool:
    """ "3 runs across 5 packages": fewer runs than items cannot be a total over them (each
    item had the 3)."""
    across = _ACROSS.search(after_total.strip())
    runs, items = number(count), number(across.group(1)) if across else None
    return runs is not None and items is not None and runs < items


def _total(before: str, after: str, matched: str, count: str = "") -> bool:
    """A total (over configurations) with no scope of its own: "Total runs: 10", "10 runs
    in total", "10 total runs", "9/9 trials pass across all three pairs" (but "45 runs (9
    tests × 5 runs)" claims 5: a product's factor is per item, and "3 runs across 5
    packages" is 3 each)."""
    after_total = _TOTAL_AFTER.search(after[:60])
    total = (
        _TOTAL_BEFORE.search(before[-60:])
        or (after_total and not _fewer_than_items(after_total.group(0), count))
        or re.search(r"\btotal\b", matched, re.I)
    )
    scoped = _SCOPED_AFTER.search(after) or _SCOPED_BEFORE.search(before)
    return bool(total) and not (scoped or re.search(r"(?:\s[x*]|×)\s*$", before))


def _set_aside_by_kind(context: str, before: str, matched: str) -> str | None:
    """Rules that depend on what the number was written in: a retry of failures, a tool's
    own -n, a loop over other things."""
    if re.search(r"\bretr(?:y|ies|ied)\b", matched, re.I) or (
        _RETRY.search(context) and _FAILURE.search(context)
    ):
        return "retries of failures, not runs"
    if re.match(r"-[nN]\b", matched):
        command = _COMMAND_START.search(before)
        if command and _OTHER_FLAG_TOOLS.search(command.group(0)):
            return "a flag the tool uses for something else"
    if matched.lower().startswith("for ") and not _RUN_VARIABLE.match(matched):
        return "a loop over something other than runs"
    return None


def _nothing() -> str:
    return ""


def aside_rule(
    context: str,
    start: int,
    end: int,
    matched: str,
    frame: str = "",
    following: Callable[[], str] = _nothing,
) -> str | None:
    """The rule that makes the number at [start, end) of `context` (one sentence) no claim;
    None when it is a claim. `frame` is where it sits (frames.py), `following` gives the
    text after its sentence (the next lines), made only when a rule needs it."""
    before, after = context[:start], context[end:]
    by_kind = _set_aside_by_kind(context, before, matched)
    if by_kind:
        return by_kind
    for name, near_before, near_after in _ASIDE:
        if name.startswith("training") and not _TRAINING_UNIT.search(matched):
            continue
        if name.startswith("k counts") and not re.match(r"-?-?k\b", matched.strip("\"'"), re.I):
            continue
        if near_before.search(before[-80:]) or near_after.search(after[:80]):
            return name
    if "then" in after[:60].lower() and _STOP_AFTER.search(after[:60]):
        return "a limit, not a count of runs"
    if _ENDS_SOON.match(after) and _STOP_AFTER.search(after[:60] + following()[:60]):
        return "a limit, not a count of runs"
    by_frame = frame_rule(frame, matched) if frame else None
    if by_frame:
        return by_frame
    return _set_aside_by_sentence(context, before, after, matched, following, context[start:end])


def _has(text: str, words: tuple[str, ...]) -> bool:
    """Whether lower-cased `text` holds one of `words`: the cheap test before a pattern."""
    return any(map(text.__contains__, words))


_PLAN_WORDS: tuple[str, ...] = (
    "plan",
    "future",
    "if ",
    "ideally",
    "intend",
    "to be run",
    "going to",
)
_PLAN_WORDS += (
    "shall",
    "proposal",
    "roadmap",
    "todo",
    "计划",
    "計劃",
    "未来",
    "未來",
    "将来",
    "將來",
)
_MODAL_WORDS: tuple[str, ...] = ("will", "would", "should", "could", "might", "shall")
_SUGGESTED_WORDS: tuple[str, ...] = (
    "sugg",
    "exampl",
    "e.g",
    "recomm",
    "default",
    "propos",
    "option",
    "建議",
    "建议",
    "例如",
    "默认",
    "預設",
    "补充",
)
_NEGATED_WORDS: tuple[str, ...] = (
    "not",
    "never",
    "nor",
    "without",
    "instead",
    "rather",
    "不是",
    "并非",
    "並非",
    "而非",
    "沒有",
    "没有",
)
_IMPERATIVE_WORDS: tuple[str, ...] = (
    "use",
    "set",
    "try",
    "add",
    "freeze",
    "choose",
    "pick",
    "rerun",
    "re-run",
    "specify",
    "report",
    "raise",
    "increase",
    "lower",
    "change",
    "consider",
    "ensure",
    "make sure",
    "keep",
    "remember",
    "configure",
    "switch",
    "bump",
)
_SCHEDULE_WORDS: tuple[str, ...] = ("cron", "每", "天", "排程", "定時", "定时")
_DATASET_WORDS: tuple[str, ...] = ("data", "corpus", "数据集", "數據集", "資料集")
_RECOMMENDED_WORDS: tuple[str, ...] = ("recommend", "suggest", "advis", "practices", "guidelines")


def _set_aside_by_sentence(
    context: str,
    before: str,
    after: str,
    matched: str,
    following: Callable[[], str],
    count: str = "",
) -> str | None:
    """Rules read in the number's sentence: a plan, a condition, a negation, an
    instruction, a schedule, a total, a data set, configurations one run each. Each
    pattern runs only when its words are there (`_has`): every candidate is read by all."""
    lower, lower_before, lower_after = context.lower(), before.lower(), after.lower()
    clause = _CLAUSE_END.split(before)[-1] + _CLAUSE_END.split(after)[0]
    if (_has(lower, _PLAN_WORDS) and _PLAN.search(context)) or (
        _has(clause.lower(), _MODAL_WORDS) and _MODAL.search(clause)
    ):
        return "a plan or condition, not a result"
    if (
        _CONDITION.search(before[-200:])
        or _CONDITION_AFTER.search(after[:80])
        or (
            _has(lower_before[-200:], _RECOMMENDED_WORDS)
            and _RECOMMENDED_LIST.search(before[-200:])
        )
    ):
        return "a condition or recommendation, not a result"
    if "[ ]" in before and _TODO.search(before):
        return "a plan or condition, not a result"
    if "backoff" in lower or "back-off" in lower:
        return "retries of failures, not runs"
    if _has(lower_before[-120:], _SUGGESTED_WORDS) and _SUGGESTED.search(before[-120:]):
        return "an example, default or suggestion, not a result"
    if _has(lower_before[-60:], _NEGATED_WORDS) and _NEGATED.search(before[-60:]):
        return "a negation, not a claim"
    if _has(lower_before[-120:], _IMPERATIVE_WORDS) and _IMPERATIVE.search(before[-120:]):
        return "an instruction, not a result"
    if (_has(lower, _SCHEDULE_WORDS) and _SCHEDULE.search(context)) or _SCHEDULE_AFTER.search(
        after[:30]
    ):
        return "a schedule, not a count of runs"
    if _total(before, after, matched, count):
        return "a total over configurations, not a count per configuration"
    if (
        _has(lower_before, _DATASET_WORDS)
        and (dataset := _DATASET.search(context)) is not None
        and dataset.start() < len(before)
    ):
        return "a data set's make-up, not runs"
    if "sample" in lower_after[:80] and _SAMPLES.match(after) and not _GENERATION.search(context):
        return "samples of a data set, not generations"
    if (
        _VARIANTS_AFTER.search(after[:60])
        or (number(count) == 2 and _PAIR_AFTER.search(after[:80]))
        or _variants_listed(after, following)
    ):
        return "different configurations, one run each"
    if _HELD_BACK.search(after[:60]):
        return "held back, not run"
    if ("「" in before or "『" in before) and _QUOTED.search(before):
        return "a phrase quoted, not a claim"
    if _has(lower, ("same", "同样", "同樣", "相同")) and _SAME_INPUT.search(context):
        return "a statement about determinism, not a count of runs"
    return None


_SAMPLES = re.compile(r"^\s*(?:(?!per\b|each\b|for\b)[\w-]+\s+){0,3}?samples?\b", re.I)
"""The unit just after a count is samples ("200 samples per task", not "12 epochs per
sample")."""
_ENDS_WITH_COLON = re.compile(r"[^.;!?\n]{0,40}[:：]\s*$")
_LISTED = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?P<item>\S.*)$")
_RUN_ITEM = re.compile(r"\W*(?:" + nouns(INDEX_NOUNS) + r"\b|\d)", re.I)


def _variants_listed(after: str, following: Callable[[], str]) -> bool:
    """ "Runs each task twice:" then a list of items that are no runs (`- baseline: ...`,
    `- governed: ...`): configurations, one run each (not `- run 1: 0.8`)."""
    if ":" not in after[:42] and "：" not in after[:42]:
        return False
    if not _ENDS_WITH_COLON.match(after):
        return False
    items = []
    for line in following().splitlines()[:8]:
        if (item := _LISTED.match(line)) is not None:
            items.append(item.group("item"))
        elif line.strip() or items:
            break
    return len(items) >= 2 and not any(_RUN_ITEM.match(i) for i in items)
