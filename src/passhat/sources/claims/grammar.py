"""The grammar of claims: the vocabulary (counts, units, scopes, verbs, setting
keys) as pattern fragments, the `Rule`s built from them (prose, figures, settings,
Chinese), each with the words a text must hold before it runs, and the contexts that set
a number aside (a limit, training epochs, a batch size, k neighbours, a plan).
docs/audit.md names every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from passhat.sources.claims.numbers import TENS, UNITS, count_list, count_range, number

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


# ---------------------------------------------------------------- the rules

Counter = Callable[["re.Match[str]"], int | None]


def _num(match: re.Match[str]) -> int | None:
    return number(match.group("num"))


def _items(match: re.Match[str]) -> int | None:
    count = count_list(match.group("list"))
    return count if count >= 2 else None


def _range(match: re.Match[str]) -> int | None:
    return count_range(match.group("lo"), match.group("hi"))


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


PROSE_RULES = (
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
)
SETTING_RULES = (
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
        lambda m: count_list(m.group("list")) if m.group("list") else _range(m),
    ),
)
CHINESE_RULES = (
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


def aside_rule(context: str, start: int, end: int, matched: str) -> str | None:
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
