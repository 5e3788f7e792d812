"""The grammar of claims: counts, scopes, verbs and setting keys as pattern fragments
(the units from vocabulary.py), and the `Rule`s built from them (prose, figures, settings,
a write-up's prose), each with the words a text must hold before it runs; the rules for
counts in other languages are grammar_languages.py's, built from these fragments. What
sets a number a rule read aside is aside.py's. docs/audit.md names every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from passhat.sources.claims.numbers import (
    MAX_LIST,
    TENS,
    UNITS,
    count_list,
    count_range,
    number,
)
from passhat.sources.claims.vocabulary import (
    CHINESE_UNITS,
    COUNT_NOUNS,
    INDEX_NOUNS,
    PROSE_NOUNS,
    nouns,
    stems,
)

WORD = (  # a number written as a word: "three", "twenty-one", "a dozen"
    r"(?:(?:"
    + "|".join(TENS)
    + r")(?:[- ](?:"
    + "|".join(k for k in UNITS if UNITS[k] < 10)
    # "a dozen" before "dozen"; "nineteen" before "nine": longest first
    + r"))?|"
    + "|".join(sorted((*UNITS, "a dozen", "dozen", "a hundred", "hundred"), key=len, reverse=True))
    + r")"
)
_ONE = r"(?:\d[\d,]*|" + WORD + r")"
_NUM = (  # "5", "five", a range read at its lower bound: "3-5", "three to five", "between 3 and 5"
    r"(?:(?P<between>between)\s+)?(?P<num>"
    + _ONE
    + r")(?:\s*(?:[-–—]|\bto\b|\bor\b|(?(between)\band\b|(?!)))\s*"
    + _ONE
    + r"(?![\w-]))?(?:\+(?![\d+]))?"  # "50+ trials": at least 50
)
_UNIT = nouns(PROSE_NOUNS)
_NOT_ADJ = (
    r"(?:and|or|of|per|for|each|every|the|a|an|in|on|at|to|with|from|by|than|as|more|less|"
    r"fewer|other|extra|additional|further|failed|failing|crashed|errored|broken|aborted|"
    r"incomplete|unfinished|remaining|previous|prior|earlier|later|last|first|next|second|"
    r"third|final|was|were|is|are|be|been|we|it|they|not|no|all|only|that|which|some|many|"
    r"few|several|same|such|its|their|our|times|x|" + "|".join((*UNITS, *TENS)) + r")"
)
_ADJ = (  # up to three words between a count and its unit: "5 independent", "3 full end-to-end",
    # "15 fresh, process-isolated"
    r"(?:(?!" + _NOT_ADJ + r"\b)[a-z][a-z-]{0,24}(?<!s),?\s+){0,3}"
)
_VERB = (
    r"(?:ran|run|runs|running|re-?ran|re-?runs?|repeat(?:s|ed)?|evaluat(?:e|es|ed)|test(?:s|ed)?|"
    r"sampl(?:e|es|ed)|attempt(?:s|ed)?|execut(?:e|es|ed)|measured|perform(?:s|ed)?|"
    r"replicated|rolled\s+out|tried|played|scored|graded|done|quer(?:y|ies|ied)|"
    r"conduct(?:s|ed)?|carried\s+out|launch(?:es|ed)?|benchmarked|asked|submitted|prompted|posed|"
    r"resubmitted|simulated|answered)"
)
_BEFORE = (
    r"(?:over|across|with|using|of|from|in|after|averaged\s+over|averages?|mean\s+of|"
    r"mean\s+over|average\s+of|best\s+of|median\s+of|median\s+across|ran|run|did|made|"
    r"make|performed|conducted|executed|took|takes|collected|collect|launch|launched|"
    r"give|gave|gets|get|got|receives?|received|aggregates?|sampled|sample|generated?|"
    r"generates|use|used|uses|performs?|perform|je|running|generating|sampling|"
    r"averaging|using|performing|conducting|drawing|drew|drawn|among|amongst)"
)
_AFTER = (
    r"(?:per|each|for\s+(?:each|every|all)|of\s+(?:each|every)|on\s+(?:each|every)|"
    r"at\s+(?:each|every)|in\s+each|with\s+each|a\s+piece|apiece|(?:of|for)\s+everything|"
    r"pro|par|por)"
)
_DETERMINER = (  # between a preposition and its count: "over the same 100 episodes", "from our 5 runs"
    r"(?:the\s+same\s+|the\s+|all\s+(?:the\s+|of\s+the\s+)?|a\s+total\s+of\s+|about\s+|only\s+|"
    r"these\s+|those\s+|our\s+|its\s+|their\s+|my\s+|each\s+of\s+(?:the\s+|our\s+)?)?"
)
_NOT_COUNT = (
    r"(?:faster|slower|more|less|fewer|larger|smaller|longer|shorter|higher|lower|as|"
    r"bigger|cheaper|better|worse|the\s+(?:cost|size|speed|number))"
)
_CN_NUM = r"(?P<num>(?<!\d)\d+|[一二两兩三四五六七八九十百]{1,4})"
_CN_UNIT = "(?:" + "|".join(CHINESE_UNITS) + ")"
_KEY_UNIT = nouns(COUNT_NOUNS)
_PLURAL_KEY = nouns(tuple(n for n in COUNT_NOUNS if n not in ("sample", "completion")), "plural")
"""A plural unit alone as a setting's key (`runs: 3`), not `samples` (a data set's)."""
_EVAL = r"(?:eval|evaluation|test|bench|benchmark|inference)[-_]"
"""What a setting's runs are of, between its count's prefix and its unit: `num_eval_runs`,
`eval_seeds` (runs, trials, seeds, attempts, reps only: `eval_samples` is a data set's)."""
_KEYS = (  # a setting's name: a unit with a count's prefix or suffix, or a plural unit alone
    r"(?:k|pass[-_]?k|(?:n|num|nb|number[-_]?of)[-_]?"
    + _KEY_UNIT
    + r"(?:[-_]per[-_][a-z]+)?|(?:(?:n|num|nb|number[-_]?of)[-_]?)?"
    + _EVAL
    + nouns(INDEX_NOUNS, "plural")
    + r"(?:[-_]per[-_][a-z]+)?|"
    + _PLURAL_KEY
    + r"|"
    + _KEY_UNIT
    + r"[-_](?:count|num|per[-_][a-z]+))"
)
_OTHER_UNIT = (
    r"\s*(?:steps?|tokens?|seconds?|secs?|s|ms|minutes?|mins?|hours?|h|days?|[kmg]?b|%|examples?|"
    r"items?|tasks?|problems?|questions?|episodes?|epochs?|iterations?)\b"
)
"""A unit after a labelled number that is no count of runs ("runs: 5000 steps")."""
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


_LOOP_VAR = r"(?:" + nouns(INDEX_NOUNS, "singular") + r")(?:_?(?:idx|id|i|no|num|index))?"
"""A loop's variable that names a run: `seed`, `run_idx`, `trial`, `rep_i`."""


def _counted_loop(match: re.Match[str]) -> int | None:
    """The runs of a counted loop: `range(5)` (5), `range(1, 6)` (5), `i = 0; i < 3` (3),
    `i = 1; i <= 5` (5): its end is left out unless the loop says `<=`."""
    lo, hi = match.group("lo") or "0", match.group("hi")
    if len(hi) > 9:
        return count_range(lo, hi)
    last = int(hi) if match.groupdict().get("op") == "<=" else int(hi) - 1
    return count_range(lo, str(last))


def _several(match: re.Match[str]) -> int | None:
    """Runs named without a count ("mean ± std over seeds", "several runs per model"): at
    least two."""
    return 2


_VALUE = r"-?\d{1,9}(?:\.\d{1,12})?(?:[eE]-?\d{1,3})?"
"""A number in a list of values (a score, a seed)."""


def _values(match: re.Match[str]) -> int | None:
    """The values of a list, one a run ("[0.6, 0.62, 0.61]": 3)."""
    return min(match.group("list").count(",") + 1, MAX_LIST + 1)


_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5}


def _ordinal(match: re.Match[str]) -> int | None:
    """The runs an ordinal needs: "a third seed" (at least 3)."""
    return _ORDINALS[match.group("num").lower()]


def _summed(match: re.Match[str]) -> int | None:
    """The values of a mean written out, when they are as many as it divides by
    ("(0.67 + 0.62) / 2": 2; "(a + b) / 3" is no mean of runs)."""
    k = number(match.group("num"))
    return k if k is not None and match.group("terms").count("+") + 1 == k else None


def _num_or_after(match: re.Match[str]) -> int | None:
    """The count written before its unit (`num`) or after it (`after`)."""
    return number(match.group("num") or match.group("after"))


def _several_unless(before: re.Pattern[str]) -> Counter:
    """`_several`, unless `before` occurs earlier in the match's sentence (a requirement
    listing "multiple trials per cell", a Chinese "cannot infer the mean of several runs")."""

    def count(match: re.Match[str]) -> int | None:
        text = match.string[max(0, match.start() - 240) : match.start()]
        cut = max(text.rfind(stop) for stop in (". ", "。", "！", "？", "\n\n"))
        return None if before.search(text[cut + 1 :]) else 2

    return count


_REQUIRED = re.compile(
    r"\b(?:requires?|required|needs?|needed|should|must|recommend\w*|ideally|would)\b", re.I
)
"""A requirement before runs named with no count: "a credible benchmark requires ...,
multiple trials per cell" is no result."""
_NOT_DONE_ZH = re.compile(r"不能|无法|無法|不可|未能|没有|沒有|可以|能够|能夠")
"""Before a Chinese mean of several runs: cannot (不能推論多次實驗的平均), not done, or can
(a tool that can average): no result."""


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
    "setting": ("=", ":", "|", "<-"),
    "command-line flag": ("-",),
    "list of seeds": ("seed",),
    "range of seeds": ("seed",),
    "shell loop": ("for",),
    "count in Chinese": (*CHINESE_UNITS, "种子", "種子"),
    "successes over attempts": ("/", " of "),
    "short command-line flag": ("-",),
    "statistic of N": ("mean", "average", "avg", "median", "best"),
    "enumerated runs": stems(INDEX_NOUNS),
    "count of generations": ("output", "answer", "solution", "respons", "completion", "sampl"),
    "count in Japanese": ("回", "試行", "シード", "seed"),
    "count in another language": ("mal", "fois", "veces"),
}


def _rule(
    name: str,
    pattern: str,
    count: Counter = _num,
    at_least: bool = False,
    trigger: tuple[str, ...] = (),
) -> Rule:
    trigger = trigger or _TRIGGERS.get(name, _UNIT_WORDS)
    return Rule(name, re.compile(pattern, re.I), count, at_least, trigger)


_RESULT_VERBS = (
    *("gave", "yield", "produc", "reach", "scor", "achiev", "got", "return", "averag", "landed"),
    *("ended", "solved", "pass", "fail", "agree", "converg", "show", "match", "differ", "succe"),
    *("complet", "finish", "crash", "took", "diverg"),
)
"""What counted runs gave or did, as the words a text must hold before that rule runs."""
_RUNS_PLURAL = nouns((*INDEX_NOUNS, "replicate", "replica", "rollout"), "plural")
_GENERATED = r"(?:outputs?|answers?|solutions?|responses?|completions?|samples?)"
"""What a model generates for one problem: "sample 4 outputs", "generating 2-4 samples"."""
_INDEX_COUNT = _NUM + r"\s+" + _ADJ + nouns((*INDEX_NOUNS, "replicate", "rollout")) + r"\b"
"""A count of seeds, replicates or rollouts ending a list or after "on": "and 10 seeds"."""
_REPEATED_THINGS = (
    r"(?:runs?|experiments?|configurations?|evaluations?|measurements?|trials?|benchmarks?)"
)
"""What is repeated when runs are: "each run was repeated" (not "each step", a mechanism's)."""
_ROUND_WORDS = ("evaluations", "sessions", "passes", "rounds", "replica")
"""Words of a whole evaluation done again, read as runs with a qualifier or a scope."""
_SCOPES = (
    r"(?:config(?:uration)?s?|models?|tasks?|agents?|settings?|prompts?|problems?|questions?|"
    r"cells?|arms?|conditions?|variants?|instances?|benchmarks?|environments?|methods?|cases?)"
)
"""What runs are counted per when a count of runs is their design ("runs per model")."""
PROSE_RULES = (
    _rule(
        "count per scope",  # "3 runs per configuration", "five trials for each task"
        r"\b"
        + _NUM
        + r"(?:\s*\(\d+\)|[x×])?[\s-]+"
        + _ADJ
        + _UNIT
        + r"\b(?=\s+"
        + _AFTER
        + r"\b|\s*/\s*(?:config|configuration|task|model|agent|problem|prompt|setting|seed|case)\b)",
    ),
    _rule(
        "count after a verb or preposition",  # "averaged over five seeds", "best of 3 attempts"
        r"\b"
        + _BEFORE
        + r"\s+"
        + _DETERMINER
        + r"(?:n\s*=\s*)?"
        + _NUM
        + r"\s+"
        + _ADJ
        + _UNIT
        + r"\b(?!\s+"
        + _NOT_COUNT
        + r"\b)",
    ),
    _rule(
        "count after a verb or preposition",  # "across 3 feeders and 10 seeds", "over 4 models, 3 seeds"
        r"\b(?:over|across|with|using|on)\s+(?:the\s+|all\s+)?(?:\d[\d,]*|"
        + WORD
        + r")\s+(?:[a-z-]+\s+)?[a-z-]+s(?:\s*,\s*(?:\d[\d,]*|"
        + WORD
        + r")\s+(?:[a-z-]+\s+)?[a-z-]+s){0,3}\s*(?:,\s*)?(?:and|&|,|×|x)\s+"
        + _INDEX_COUNT,
    ),
    _rule(
        "count after a verb or preposition",  # "evaluated on 3 seeds" (not "on 500 samples")
        r"\bon\s+(?:the\s+|all\s+)?" + _INDEX_COUNT,
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
        "verb + N times",  # "repeated each experiment 10 rounds" (rounds of a repeat: times)
        r"\brepeat(?:s|ed|ing)?\b(?:\s+[\w'(),-]{1,30}){0,4}?\s+(?:for\s+)?"
        + _NUM
        + r"\s+rounds\b(?!\s+of\b)",
        trigger=("rounds",),
    ),
    _rule(
        "once / twice / thrice", r"\b" + _VERB + r"\s+(?:\w+\s+){0,3}?(?P<num>once|twice|thrice)\b"
    ),
    _rule(
        "verb + N times",  # "each configuration was run multiple times" (at least 2)
        r"\b" + _VERB + r"\s+(?:\w+\s+){0,3}?(?P<num>multiple|several|numerous)\s+times\b",
        _several,
        at_least=True,
    ),
    _rule(
        "count + participle",  # "five seeds measured", "3 runs evaluated on the test split"
        r"\b"
        + _NUM
        + r"\s+"
        + _ADJ
        + _UNIT
        + r"\s+(?:measured|evaluated|tested|completed|performed|"
        r"conducted|executed|averaged|collected)\b",
    ),
    _rule(
        "in triplicate",  # "experiments were run in triplicate" (not "filed in triplicate")
        r"\b(?:run|ran|performed|measured|conducted|repeated|done|carried\s+out|tested|evaluated|"
        r"assayed|executed|sampled|determined|assessed|obtained|recorded|quantified|analy[sz]ed)\s+"
        r"(?:\S+\s+){0,16}?in\s+"
        r"(?P<num>duplicate|triplicate|quadruplicate|quintuplicate)\b",
    ),
    _rule(
        "in triplicate",  # "averaged over triplicate runs", "duplicate measurements"
        r"\b(?P<num>duplicate|triplicate|quadruplicate|quintuplicate)\s+"
        r"(?:runs|experiments|measurements|trials|evaluations|assays|replicates)\b",
    ),
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
        r"\b"
        + _NUM
        + r"\s+(?:independent|separate|repeated|different|distinct|random)\s+"
        + _UNIT
        + r"\b",
    ),
    _rule(
        "count of independent runs",  # "10 independent simulations" (whole simulations: only independent)
        r"\b"
        + _NUM
        + r"\s+(?:independent|separate|repeated)\s+(?:simulations|simulation\s+runs)\b",
        trigger=("simulation",),
    ),
    _rule(
        "count of rounds",  # "three independent evaluations", "3 evaluation rounds"
        r"\b"
        + _NUM
        + r"\s+(?:(?:independent|separate|repeated|full|complete|evaluation|benchmark)\s+)+"
        r"(?:evaluations|sessions|passes|rounds|replications|replicas)\b",
        trigger=_ROUND_WORDS,
    ),
    _rule(
        "count of rounds",  # "3 full passes over the benchmark", "five replications per condition"
        r"\b"
        + _NUM
        + r"\s+(?:full\s+|complete\s+)?(?:rounds|passes|sessions|replications|replicas)\s+"
        r"(?:of\s+(?:evaluation|testing|benchmarking|the\s+(?:benchmark|suite|evaluation))\b|"
        r"over\s+the\s+(?:benchmark|suite|test\s+set|tasks)\b|"
        r"(?:per|for\s+each|of\s+each|on\s+each)\s+" + _SCOPES + r"\b)",
        trigger=_ROUND_WORDS,
    ),
    _rule(
        "several runs per scope",  # "multiple trials per configuration", "a handful of runs per model"
        r"\b(?P<num>multiple|several|numerous|a\s+few|a\s+handful\s+of)\s+"
        + nouns(INDEX_NOUNS, "plural")
        + r"\s+(?:per|for\s+each|for\s+every|on\s+each|of\s+each)\s+"
        + _SCOPES
        + r"\b",
        _several_unless(_REQUIRED),
        at_least=True,
        trigger=("multiple", "several", "numerous", "a few", "handful"),
    ),
    _rule(
        "count + were performed",  # "Three runs were performed for each agent"
        r"\b" + _NUM + r"\s+" + _ADJ + _UNIT + r"(?:\s+(?:per|for\s+each)\s+[\w-]+)?\s+"
        r"(?:were|was|are|have\s+been|had\s+been)\s+(?:\w+\s+)?(?:performed|conducted|collected|"
        r"run|done|made|executed|carried\s+out|completed|drawn|launched|averaged|sampled|used)\b",
    ),
    _rule(
        "count + result verb",  # "Seven seeds of the baseline gave ...", "5 runs of each agent scored"
        r"\b"
        + _NUM
        + r"\s+"
        + _ADJ
        + _UNIT
        + r"\s+of\s+(?:the\s+|a\s+|an\s+|our\s+|each\s+|every\s+)?(?:[\w-]+\s+){0,3}?"
        r"(?:gave|give|gives|yielded|yields?|produced|produces?|reached|reach(?:es)?|scored|"
        r"scores?|achieved|achieves?|got|returned|averaged|landed|ended)\b",
    ),
    _rule(
        "count + result verb",  # "The three runs gave ...", "All five seeds converge", "Both runs agree"
        r"\b(?:(?:the|our|all|all\s+the|all\s+of\s+the|these|those|my|its|their)\s+" + _NUM + r"\s+"
        r"|(?P<after>both)\s+)" + _ADJ + _RUNS_PLURAL + r"\s+(?:(?:all|each|also|then|again)\s+)?"
        r"(?:gave|yielded|yield|produced|produce|reached|reach|scored|score|achieved|achieve|got|"
        r"returned|return|averaged|landed|ended|solved|passed|pass|failed|fail|agreed|agree|"
        r"converged|converge|showed|show|matched|match|differed|differ|succeeded|succeed|"
        r"completed|finished|crashed|took|diverged)\b",
        _num_or_after,
        trigger=_RESULT_VERBS,
    ),
    _rule(
        "statistic over runs",  # "reporting the metrics with multiple seeds (mean +/- std)"
        r"\b(?:with|using|over|across|from)\s+(?P<num>(?:multiple|several|many|different|various)"
        r"\s+(?:random\s+)?(?:seeds|runs|trials|repetitions|replicates))\b"
        r"(?=[^.;\n]{0,40}?(?:\bmean\b|\baverage|\bmedian\b|\bstd\b|±|\+/-|\bvariance\b))",
        _several,
        at_least=True,
    ),
    _rule(
        "N-run average",  # "the 5-run average", "a 3-seed mean", "5-seed averages"
        r"\b" + _NUM + r"[-\s]" + _UNIT + r"\s+(?:averages?|means?|medians?|avg)\b",
    ),
    _rule(
        "statistic over runs",  # "the best of a few repeats", "mean of several seeds" (at least 2)
        r"\b(?:mean|means|average|avg|median|best|worst|min|max|minimum|maximum)\s+of\s+(?:the\s+)?"
        r"(?P<num>(?:a\s+few|several|multiple|many|a\s+handful\s+of|a\s+couple\s+of|a\s+number\s+of|"
        r"repeated)\s+(?:independent\s+|random\s+|separate\s+)?" + _RUNS_PLURAL + r")\b",
        _several,
        at_least=True,
        trigger=("mean", "average", "avg", "median", "best", "worst", "min", "max"),
    ),
    _rule(
        "n = N units",  # "repeated trials (n=5–6)", "seeds (N = 3)", "runs (n=4 each)"
        r"\b" + _UNIT + r"\s*\(\s*n\s*=\s*" + _NUM + r"(?:\s+each)?\s*[),;]",
        trigger=("(n", "( n"),
    ),
    _rule("tasks × N runs", r"[x×*]\s*" + _NUM + r"\s+" + _UNIT + r"\b"),  # "50 tasks × 5 trials"
    _rule("tasks × N runs", r"\b" + _NUM + r"\s+" + _UNIT + r"\s*[x×*]\s*\d"),  # "3 runs × 89"
    _rule(
        "labelled count",  # "Trials: 5", "Number of runs: 4", "**Runs:** 3", "runs/config: 5"
        r"(?<![\w-])(?:number\s+of\s+|num(?:ber)?\.?\s+|no\.\s*(?:of\s+)?|#\s*(?:of\s+)?)?"
        r"(?:" + nouns(COUNT_NOUNS, "plural") + r"|" + nouns(INDEX_NOUNS, "singular") + r"\s+count)"
        r"(?:\s*(?:per|/|for\s+each)\s*[\w-]{1,30})?\s*(?:\*\*|__)?\s*[:=—–|]\s*(?:\*\*|__)?\s*"
        + _NUM
        + r"(?!\.\d|\d|"
        + _OTHER_UNIT
        + r")",
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
        r"\b(?:mean|average|avg|median|best)(?:\s+|-)(?:of|over|across)(?:\s+|-)"
        + _NUM
        + r"(?=\s*(?:[),;]|:\s*[\d.]|$)|-?\s*(?:selection|sampling|decoding|inference)\b)",
    ),
    _rule(
        "statistic of N",  # "Average success rate: 64.50% (67.00% + 62.00%) / 2": the mean of 2 runs
        r"\b(?:mean|average|avg)\b(?:[^.\n]|\.(?=\d)){0,40}?\(\s*(?P<terms>"
        + _VALUE
        + r"\s*%?(?:\s*\+\s*"
        + _VALUE
        + r"\s*%?){1,19})\s*\)?\s*/\s*(?P<num>\d{1,2})\b",
        _summed,
        trigger=("/",),
    ),
    _rule(
        "enumerated runs",  # "run 1 (60 draws), run 2 (40 draws), run 3 (50 draws)"
        r"\b(?P<noun>" + nouns(INDEX_NOUNS, "singular") + r")\s*#?\s*(?P<num>\d{1,9})\b"
        r"(?:(?:[^.\n]|\.(?=\d)){0,80}?\b(?P=noun)\s*#?\s*\d{1,9}\b)+",  # "seed 0: 0.61; seed 1: 0.63"
        _enumerated,
    ),
    _rule(
        "count alone",  # "# 3 seeds", "// 5 runs", "- 4 trials", "(levels, 3 runs)"
        r"(?:^\s*(?:[-*+]|\d{1,3}[.)])?|[#(,;:|]|//)\s*(?:\*\*|__)?"
        + _NUM
        + r"\s+"
        + _ADJ
        + _UNIT
        + r"\b"
        r"(?:\*\*|__)?\s*(?=$|[),;|]|\.\s*$)",
    ),
    _rule(
        "count of generations",  # "sample 4 outputs with temperature 0.6", "generating 2-4 samples"
        r"\b(?:sampl(?:e|es|ed|ing)|generat(?:e|es|ed|ing)|draw(?:s|n|ing)?|drew|decod(?:e|es|ed|ing))"
        r"\s+(?:the\s+|about\s+|only\s+)?" + _NUM + r"\s+" + _ADJ + _GENERATED + r"\b",
    ),
    _rule(
        "statistic over runs",  # "mean ± std over seeds", "averaged across its reps"
        r"(?:\b(?:mean|means|average[sd]?|avg|median|std|stdev|standard\s+deviations?|variance|"
        r"spread|aggregated?|aggregates|reproduced|replicated)\b|±)"
        r"[^.;:\n]{0,24}?\b(?:over|across)\s+"
        r"(?:the\s+|its\s+|their\s+|all\s+)?(?P<several>(?:(?:multiple|several|many|repeated|"
        r"different|independent|random)\s+)+)?(?P<num>" + _RUNS_PLURAL + r")\b"
        # "several runs of the benchmark"; not "runs of tokens", "repetitions of the question set"
        r"(?:(?(several)(?<!repetitions)(?<!repeats)(?<!reps)|(?!))|(?!\s+of\b))",
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
        + r"(?:\*\*|__|[\"'`])?\s*(?::\s*(?:int|usize|u32|u64|i32|i64|uint|number|Int)\s*(?==))?"
        r"(?:[=:|]|<-)\s*(?:\*\*|__|[\"'`])?(?P<num>\d[\d,]*)"
        r"(?!\.\d|[\d\w-]|\s*(?:\.\.|…|–)\s*\d|" + _OTHER_UNIT + r")",
    ),
    _rule(
        "command-line flag",  # "--seeds 5", "--n-attempts 5", "--epochs=4"
        r"(?<![\w-])--(?:" + _KEYS + r"|repeat)(?:\s+|=)(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])",
    ),
    _rule(
        "short command-line flag",  # "-k 5", "-n 3", "-N=4" (set aside for tools whose -n is no count of runs)
        r"(?<![\w-])-[knN](?:\s+|=)?(?P<num>\d[\d,]*)(?!\.\d|[\d\w-])",
    ),
    _rule(
        "list of seeds",  # "seeds: [0, 1, 2]", "seeds 0, 1 and 2", "seeds {1, 2, 3}", "RANDOM_SEEDS = (11, 22)"
        r"(?<![\w-])(?:(?:random|eval|evaluation|test|run|experiment|bench|benchmark)[_-])?seeds?[\"']?"
        r"\s*(?:[:=]\s*)?(?:are\s+|of\s+|in\s+)?[\[{(]?\s*" + _LIST + r"\s*[\]})]?",
        _items,
    ),
    _rule(
        "list of seeds",  # "--seeds 0 1 2" (a flag taking several values), "SEEDS=(42 10 1)"
        r"(?:(?<![\w-])--?seeds?[=\s]\s*|\bseeds?\s*=\s*\(\s*)"
        r"(?P<list>\d{1,9}(?:[ \t]+\d{1,9})+)(?![\d.])",
        _items,
    ),
    _rule(
        "range of seeds",  # "seeds = list(range(5))", "SEEDS = range(1, 6)"
        r"\bseeds?\s*[:=]\s*(?:list\(\s*)?range\(\s*(?:(?P<lo>\d{1,9})\s*,\s*)?(?P<hi>\d{1,9})\s*\)",
        _counted_loop,
    ),
    _rule(
        "values of runs",  # '"runs": [0.6, 0.62, 0.61]', "scores_per_seed = [0.6, 0.62]"
        r"(?<![\w-])[\"']?(?:"
        + nouns(INDEX_NOUNS, "plural")
        + r"|(?:scores?|results?|accurac(?:y|ies)|rewards?|pass_rates?)_(?:per|by)_(?:run|seed|trial)|"
        r"(?:run|seed|trial|per_run|per_seed)_(?:scores|results|accuracies|rewards|values|pass_rates))"
        r"[\"']?\s*[:=]\s*\[\s*(?P<list>" + _VALUE + r"(?:\s*,\s*" + _VALUE + r"){1,999})\s*\]",
        _values,
        trigger=(":[", ": [", "=[", "= [", ":  [", "=  ["),
    ),
    _rule(
        "range of seeds",  # "seeds 1-5", "(seeds 0-4)", "seeds 1 through 5"
        r"\bseeds?\s*[:=]?\s*(?P<lo>\d+)\s*(?:[-–]|\bto\b|\bthrough\b|\bthru\b)\s*(?P<hi>\d+)\b",
        _range,
    ),
    _rule(
        "loop over runs",  # "for (int run = 0; run < 3; run++)", "for ((seed=1; seed<=5; seed++))"
        r"\bfor\s*\(\(?\s*(?:(?:int|let|var|auto|size_t|unsigned)\s+)?(?P<var>"
        + _LOOP_VAR
        + r")\s*=\s*(?P<lo>\d{1,9})\s*;\s*(?P=var)\s*(?P<op><=?)\s*(?P<hi>\d{1,9})\s*;",
        _counted_loop,
        trigger=("for (", "for((", "for ((", "for(("),
    ),
    _rule(
        "loop over runs",  # "for seed in range(5):", "for run_idx in range(1, 4):"
        r"\bfor\s+(?:"
        + _LOOP_VAR
        + r")\s+in\s+range\(\s*(?:(?P<lo>\d{1,9})\s*,\s*)?(?P<hi>\d{1,9})\s*\)",
        _counted_loop,
        trigger=("range(",),
    ),
    _rule(
        "shell loop",  # "for seed in 0 1 2; do", "for i in $(seq 1 5)"
        r"\bfor\s+(?P<var>\w+)\s+in\s+(?:(?P<list>\d{1,9}(?:\s+\d{1,9})+)(?:\s*;?\s*do\b|\s*$)|"
        r"\$\(seq\s+(?:(?P<lo>\d+)\s+)?(?P<hi>\d+)\)|\{(?P<from>\d+)\.\.(?P<to>\d+)\})",
        _loop,
    ),
)
WRITE_UP_RULES = (
    _rule(
        "a second run",  # "A second run gave 0.63", "repeated with a third seed" (at least 2, 3)
        r"(?:\b(?:with|using|on)\s+a|(?<![\w-])a(?=\s+\w+\s+(?:independent\s+)?(?:run|seed|trial)\s+"
        r"(?:gave|yielded|produced|scored|reached|returned|confirmed|reproduced|got|showed|"
        r"matched)\b))\s+(?P<num>second|third|fourth|fifth)\s+(?:independent\s+)?(?:run|seed|trial)\b",
        _ordinal,
        at_least=True,
        trigger=("second", "third", "fourth", "fifth"),
    ),
    _rule(
        "runs repeated",  # "Each run was repeated", "We reran the benchmark" (at least 2)
        r"(?P<num>\b(?:each|every|all)\s+(?:of\s+the\s+)?" + _REPEATED_THINGS + r"\s+"
        r"(?:was|were|has\s+been|have\s+been|is|are)\s+(?:\w+\s+)?(?:repeated|replicated|re-?run)\b"
        r"(?!\s+(?:once|until|if|when|whenever|unless|on\s+(?:failure|error)|after)\b)|"
        r"\b(?:we|i|they|and)\s+(?:re-?ran|re-?executed)\s+(?:the\s+|every\s+|each\s+|all\s+"
        r"(?:the\s+)?|our\s+)(?:whole\s+|full\s+|entire\s+)?(?:benchmark|evaluation|experiment|suite|"
        r"configuration|eval|study)s?\b(?!\s+(?:on|for)\s+(?:the\s+)?failed))",
        _several,
        at_least=True,
        trigger=("repeated", "replicated", "rerun", "re-run", "ran", "executed"),
    ),
    _rule(
        "count in Chinese",  # "多次实验的平均结果", "多次運行的平均值" (several runs' mean: at least 2)
        r"(?P<num>多次|数次|數次|几次|幾次)(?:独立|獨立)?(?:的)?(?:重复|重複)?"
        r"(?:实验|實驗|运行|運行|试验|試驗|评测|評測)(?:结果|結果)?(?:的|之)?"
        r"(?:平均|均值|中位数|中位數)",
        _several_unless(_NOT_DONE_ZH),
        at_least=True,
        trigger=("多次", "数次", "數次", "几次", "幾次"),
    ),
)
"""Runs named with no count, read in a write-up's prose only: in a script's comment or
docstring "each run was repeated" or "多次实验的平均" tells what the code does (a check
of determinism, a plot of the mean), not the folder's own results."""
