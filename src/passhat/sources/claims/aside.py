"""What sets a number aside, so that it is no claim, by its sentence: a limit, training
epochs, a batch size, k neighbours, a plan, a negation, an instruction, a schedule, a
data set's make-up... (its frame and the lines around it: framing.py). The readers
(reader.py) ask `aside_rule` of each number a rule of grammar.py read; docs/audit.md
names every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from passhat.sources.claims.aside_cues import (
    _ALERTED,
    _ASIDE,
    _ASIDE_IN_PARENS,
    _CHANGED_BEFORE,
    _CHECK_PASSED,
    _CI,
    _CLAUSE_END,
    _CODE_CHECKED,
    _CODE_DOES,
    _COMPUTED,
    _CONDITION,
    _CONDITION_AFTER,
    _DATASET,
    _DONE,
    _DRY_RUN,
    _ENDS_SOON,
    _EQUIVALENT,
    _EVALUATED,
    _FIRST_PERSON,
    _HELD_BACK,
    _IF_SENTENCE,
    _IMPERATIVE,
    _JUDGED,
    _JUDGED_AFTER,
    _MODAL,
    _NEGATED,
    _NEGATED_AFTER,
    _NOT_OURS,
    _NOT_OURS_WORDS,
    _ORDINAL_BEFORE,
    _OTHER_WORK,
    _OUTCOME_AFTER,
    _OWN_WORDS,
    _PAIR_AFTER,
    _PAPER_SUBJECT,
    _PARTICIPLE,
    _PLACEHOLDER,
    _PLAN,
    _PLAN_LABEL,
    _PUBLISHED,
    _QUESTION,
    _QUOTED,
    _RECOMMENDED_LIST,
    _RESTATED,
    _RUN_IMPERATIVE,
    _RUN_OBJECT,
    _SAME_INPUT,
    _SCHEDULE,
    _SCHEDULE_AFTER,
    _SIGNAL,
    _SIGNATURE,
    _SIMULATION_CALL,
    _SIMULATION_KEY,
    _STOP_AFTER,
    _SUGGESTED,
    _TEST_COMMAND,
    _THRESHOLD,
    _TODO,
    _TRAILING_COMMENT,
    _TRAINING_UNIT,
    _TUNING_UNIT,
    _VARIANTS_AFTER,
)
from passhat.sources.claims.framing import GENERATION, frame_rule
from passhat.sources.claims.grammar import WORD
from passhat.sources.claims.numbers import number
from passhat.sources.claims.vocabulary import INDEX_NOUNS, PROSE_NOUNS, nouns


def _continued(text: str) -> str:
    """The lines of a shell command continued by a trailing backslash, from `text` (the
    lines after the number's line), up to the first line that does not continue."""
    kept = []
    for line in text.lstrip().splitlines()[:40]:
        kept.append(line)
        if not line.rstrip().endswith("\\"):
            break
    return "\n".join(kept)


def _dry_run(context: str, following: Callable[[], str]) -> bool:
    """Whether the number's command is a dry run: `--dry-run` on its line or on the lines
    continuing it."""
    if _DRY_RUN.search(context):
        return True
    return context.rstrip().endswith("\\") and bool(_DRY_RUN.search(_continued(following())))


def _next_sentence(text: str) -> str:
    """The first sentence of `text` (the text after a number's sentence), bounded."""
    return re.split(r"(?<=[.!?。！？])\s*", text[:300].lstrip(), maxsplit=1)[0]


_RETRY = re.compile(
    r"\b(?:retr(?:y|ies|ied)|re-?(?:ran|run|runs|tried)|reconnect\w*|riprov\w*|ritent\w*|"
    r"fall-?backs?|fail-?overs?|"
    r"réessa\w*|reintent\w*|retent\w*|erneut\s+versuch\w*|wiederholungsversuch\w*|"
    r"повторн\w*\s+попытк\w*)\b|重試|重试|重连|重連|再接続|再試行|リトライ",
    re.I,
)
_FAILURE = re.compile(
    r"\b(?:fail\w*|crash\w*|error\w*|time[sd]?\s*out|timed\s+out|erreur\w*|échec\w*|errore|"
    r"fall-?backs?|"
    r"fall[oa]s?|falha\w*|fehler\w*|fehlgeschlag\w*|ошибк\w*|сбо[йея]\w*|guast\w*)|"
    r"錯誤|错误|失敗|失败|異常|异常",
    re.I,
)
_TOTAL_WORD = r"(?:in\s+total|totals?|overall|altogether|in\s+all|combined|all\s+told)"
_TOTAL_BEFORE = re.compile(r"\b" + _TOTAL_WORD + r"\b,?[^,;.!?]{0,40}$", re.I)
"""A total before the count in its clause: "Total runs: 10", "In total, we ran 120 trials"."""
_TOTAL_AFTER = re.compile(
    r"^[^\d()]{0,24}?\b(?:"
    + _TOTAL_WORD
    + r"\b|(?:across|spanning|covering)\s+(?:(?:all|both|every)"
    r"\s+)?(?:the\s+)?(?:\d[\d,]*|" + WORD + r")\s)",
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
_FIGURE = re.compile(r"(?:pass|avg|maj|mean|cons)\s*\}?\s*(?:\\?\^|@|[-_\s]hat|_at_)", re.I)
_FORMULA_AFTER = re.compile(r"\s*(?:≈|==|=|~|≠)\s*[`(]?\s*[a-zA-Z_\\]")
_FORMULA_BEFORE = re.compile(r"(?:@|\^)\s*[\w{}]+\s*(?:≈|==|=|~|≠)\s*[`(]?\s*\w*\W{0,2}$")
"""A figure equated with another figure or a formula, not a value: "avg@8 ≈ avg@16",
"pass^k = p^k" (but "pass@5 = 0.82" is a result)."""
_STATISTIC_CALL = re.compile(
    r"\b(?:permutation_importance|Repeated(?:Stratified)?KFold|repeatedcv|trainControl|"
    r"cross_val(?:idate|_score|_predict)?|bootstrap\w*)\s*\([^()]{0,300}$",
    re.I,
)
"""A setting inside a call of a statistical procedure (`permutation_importance(...,
n_repeats=5)`, `trainControl(method = "repeatedcv", repeats = 5`): its repeats shuffle or
resample the data; they are no runs of an experiment."""
_SUBSTITUTED = re.compile(r"(?:^|[\s\"'])s/[^/\n]*$")
"""Inside the pattern of a `sed` substitution: `s/^  num_seeds: 3/  num_seeds: 1/` replaces
the setting, it sets nothing."""
_INLINE_TRACE = re.compile(
    r"[\"'](?:trace|traces|transcript|messages|output|outputs|response|responses|completion|"
    r"completions|answer|reasoning|observation|observations|tool_calls?)[\"']\s*:\s*[{\[][^{}\[\]]*"
    r"(?:[{\[][^{}\[\]]*){0,3}$",
    re.I,
)
"""A setting inside a model's output or trace, on its line: `"trace": {"walk_shape":
{"n_seeds": 3` (what the model did, not how it was evaluated)."""
_RUNS_TESTS = re.compile(r"\bdo\b[^;\n]*?(?:^|[\s\"'=(])(?:\./)?tests?/")
"""A loop whose body runs the code's own tests (`for seed in 1 2 3; do tests/fuzz/run.sh
"$seed"; done`): a test of the code, not an evaluation's runs."""
_CALLED = re.compile(
    r"(?:callback|handler|hook|listener|関数|函数|回调|回調|コールバック)[^。，,;；.!?\n\d×]{0,16}$",
    re.I,
)
"""A function called, just before a count of times: "関数"callback"は3回実行されます" (the
callback is executed 3 times), "the handler fires 3 times"."""
_GENERATOR_SEEDS = re.compile(
    r"\b(?:generators?|rngs?|prngs?|hash(?:es|ing)?|xorshift\w*|xoshiro\w*)\s+(?:with|using|of|from)\s+$",
    re.I,
)
"""A generator's seeds, its state: "a random number generator with four seeds"."""


_COMMAND_START = re.compile(r"(?:^|[`;|&(\n])[^`;|&(\n]*$")
_RUN_VARIABLE = re.compile(
    r"for\s+(?:[a-z]|idx|\w*(?:run|trial|seed|rep|attempt|iter|sample|epoch)\w*)\s|"
    r"for\s*\(\(?\s*(?:\w+\s+)?\w*(?:run|trial|seed|rep|attempt)\w*\s*=",  # C: "for (int run = 0;"
    re.I,
)


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
    packages" is 3 each); or a count in parentheses after a count per configuration
    (`_PER_SCOPE_THEN_PARENS`)."""
    after_total = _TOTAL_AFTER.search(after[:60])
    total = (
        _TOTAL_BEFORE.search(before[-60:])
        or (after_total and not _fewer_than_items(after_total.group(0), count))
        or re.search(r"\btotal\b", matched, re.I)
    )
    if _PER_SCOPE_THEN_PARENS.search(before[-80:]):
        return True
    scoped = _SCOPED_AFTER.search(after) or _SCOPED_BEFORE.search(before)
    return bool(total) and not (scoped or re.search(r"(?:\s[x*]|×)\s*$", before))


_PER_SCOPE_THEN_PARENS = re.compile(
    r"(?<![\w@^.])(?:\d+|" + WORD + r")\s+(?:[\w-]+\s+)?" + nouns(PROSE_NOUNS) + r"\s+"
    r"(?:per|each|for\s+each)\s+[\w×*/-]+"
    r"(?:\s+(?:and|x|×)?\s*[\w×*/-]+)?\s*\(\s*$",
    re.I,
)
"""A count in parentheses just after a count per configuration: the product, a total ("one
trial per task and arm (18 runs)", "3 seeds per task (9 episodes)"); the count before it is
read on its own."""


_RUN_THINGS = (
    r"(?:runs?|trials?|experiments?|evaluations?|evals?|tests?|configurations?|configs?|"
    r"settings?|conditions?|tasks?|models?|agents?|episodes?|benchmarks?|prompts?|questions?|"
    r"problems?|quer(?:y|ies)|instances?|cases?|measurements?|simulations?|jobs?|seeds?|"
    r"methods?|variants?|arms?|samples?|games?|polic(?:y|ies)|scenarios?|studies|study|"
    r"procedures?|assays?|analys[ie]s|calls?|requests?|pipelines?|protocols?|inputs?|items?|"
    r"groups?|cells?|pairs?|levels?|systems?|domains?|environments?|setups?|ablations?|"
    r"tools?|fuzzers?|solvers?|planners?|baselines?|treatments?|combinations?|everything|all|"
    r"it|this|that|these|those|they|them|which|each|every|both|one|ones|process|sessions?|"
    r"attempts?|generations?|rounds?|iterations?|repetitions?|suites?|workloads?|programs?|"
    r"scripts?|commands?|steps?|checks?|specimens?|subjects?|participants?|animals?|plants?|"
    r"patients?|mice|rats|replicates?|batch(?:es)?|conversations?|dialogues?|datasets?)"
)
"""What a count of repeats counts runs of: a run, a trial, an experiment, an evaluated
configuration, task, model, prompt..., a measurement, a pronoun (whose thing is unknown)."""
_REPEATED_THING = re.compile(
    r"(?:^|.*[^\w-])(?!(?:is|are|was|were|gets?|got|been|being|each|all|then|again|also|"
    r"independently)\b)(?P<thing>[a-z][a-z-]*)[`'\"]?(?:\s+|\s*[(—–]\s*(?:[a-z]+\s*[—–:]\s*)?(?=(?:is|are|was|were)\s))"
    r"(?:(?:is|are|was|were|gets?|got|been|being)\s+)?"
    r"(?:(?:each|all|then|again|also|independently)\s+)?(?:over-?)?(?:sampled|repeated|"
    r"duplicated|copied|replicated)\s*$|"
    r"\b(?:we|i|they|you)\s+(?:then\s+)?(?:over-?)?(?:sampled|repeated|duplicated|replicated)\s+"
    r"(?:(?:each|every|all|the|a|an|our|this|that|these|those)\s+)?(?:[a-z-]+\s+){0,2}?"
    r"(?P<object>[a-z][a-z-]*)\s+(?:for\s+)?$",
    re.I,
)
"""The thing a count of repeats is of, just before it: the subject of a passive ("each bit
is sampled 16 times", "12 units sampled 4 times"), the thing a parenthesis or a dash with no
subject of its own is about ("a helper (DRY — was repeated 4 times)") or the object of an
active verb ("we sampled each pixel 4 times")."""


def _repeated_thing(before: str, count: str, after: str) -> str | None:
    """What is repeated or sampled `count` times when it is something other than a run
    (`_RUN_THINGS`): a bit, a genotype, a code pattern, a packet; None when it is a run or
    is not said, or the verb counts no number ("across repeated runs")."""
    words = count.split()
    if not words or number(words[0]) is None:
        return None
    if not _TIMES_COUNT.match(count[len(words[0]) :].lstrip() + after):
        return None
    found = _REPEATED_THING.search(before[-80:])
    if found is None:
        return None
    thing = found.group("thing") or found.group("object")
    if re.fullmatch(_RUN_THINGS, thing, re.I) or thing.lower() in _NO_SUBJECT:
        return None
    return thing


_EACH_THING_REPEATED = re.compile(
    r"每[个個]\s*(?:字|字元|字符|字母|字节|字節|像素|位元?|比特|帧|幀|词|詞|单词|單詞|句子?|符号|符號|"
    r"按键|按鍵|音符|消息|訊息|封包|数据包|數據包)\s*(?:都|各)?\s*(?:重复|重複|复制|複製)\s*$"
)
"""Each character, pixel, frame, message... repeated: "每個字重複三次" (each character typed
three times), not a run."""
_SHOWN_BY_TOOL = re.compile(r"[^。\n]{0,30}を表示")
"""What a tool displays: "5回の平均・最速・最遅を表示" (shows the mean, fastest and slowest of
five tries): a feature, not runs made (not "表2に3回の平均を表示する": a table shows results)."""
_TABLE_OR_FIGURE = re.compile(r"[表図图]\s*\d|\b(?:table|fig(?:ure)?\.?)\s*\d", re.I)
_TIMES_AFTER = re.compile(r"\s*(?:times\b|x\b|×|回|次|遍)", re.I)
"""A count of times just after the number: "3 times", "3回", "3次"."""
_TIMES_COUNT = re.compile(r"\s*(?:more\s+)?(?:times\b|x\b|×|rounds\b)", re.I)
"""A count of repeats: "8 times", "3x", not "five replicates" (a count of what was made)."""
_NO_SUBJECT = frozenset(
    (
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "and",
        "or",
        "then",
        "also",
        "and",
        "we",
        "i",
        "they",
        "you",
        "he",
        "she",
        "not",
        "had",
        "have",
        "has",
        "times",
        "once",
        "twice",
        "were",
        "the",
        "a",
        "an",
        "each",
        "every",
        "independently",
        "randomly",
    )
)
"""Words before the verb that are no subject ("We then repeated", "was then sampled")."""


def _set_aside_by_kind(
    context: str, before: str, after: str, matched: str, setting: bool = False
) -> str | None:
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
    if matched.lower().startswith("for ") and _RUNS_TESTS.search(after[:300]):
        return "a test of the code, not a result"
    if _FIGURE.match(matched) and (_FORMULA_AFTER.match(after) or _FORMULA_BEFORE.search(before)):
        return "a figure in a formula, not a result"
    if "s/" in before and _SUBSTITUTED.search(before):
        return "a text substitution's pattern, not a setting"
    if setting and "(" in before and _SIGNATURE.search(before[-300:]):
        return "an option's help or default, not a result"
    if (
        setting
        and "(" in before
        and _SIMULATION_CALL.search(before[-300:])
        and not _SIMULATION_KEY.search(matched)
    ):
        return "a simulation's repetitions, not evaluation runs"
    if "(" in before and _STATISTIC_CALL.search(before[-300:]):
        return "a statistical procedure's repeats (permutation importance, repeated cross-validation), not runs"
    if _INLINE_TRACE.search(before[-200:]):
        return "a setting of something else (a judge, retries, training, a schedule)"
    if "第" in before[-4:] and _ORDINAL_BEFORE.search(before[-4:]):
        return "an ordinal, not a count of runs"
    if matched.startswith("-") and "<" in context and _PLACEHOLDER.search(context):
        return "a usage template (a placeholder to fill in), not what was run"
    return None


_FOLD = re.compile(r"(?<![\w.])(\d{1,3})\s*-?\s*(?:fold|折)(?![a-z])", re.I)


def _folds(count: str, text: str) -> bool:
    """Whether a count is the folds of a cross-validation its sentence or heading names
    with the same number ("5-fold cross-validation" above "5회 반복 실험", "10折交叉验证,
    10 次"): each fold is a split of the data, not a run."""
    k = number(count)
    return k is not None and any(number(n) == k for n in _FOLD.findall(text))


_EACH_FOLD = re.compile(
    r"^[^.;!?\n]{0,40}?\b(?:with|for)\s+each\s+fold\b|^[^.;!?\n]{0,40}?\bonce\s+per\s+fold\b|"
    r"^[^。；;\n]{0,20}?(?:每折|各折|每一折)|^\s*次?\s*的?\s*\d{1,3}\s*折|"
    r"^\s*(?:times\s+)?(?:repeated\s+)?\d{1,3}\s*-?\s*fold",
    re.I,
)
"""A count whose runs are the folds of a cross-validation, told after it: "repeated 10
times, with each fold serving once as the test set", "每折一次"; or the repeats of a
repeated k-fold cross-validation: "重复 3 次的 5 折交叉验证", "3 times repeated 5-fold"."""
_QUOTED_OPEN = re.compile(r"(?:^|[\s:(\-–—])[\"“][A-Z][^\"“”\n]{0,240}$")
_QUOTED_CLOSE = re.compile(r"^[^\"“”\n]{0,240}(?:[.!?][\"”]|[\"”]\s*\((?:[A-Z§]|p\.))")
"""A count inside a whole sentence quoted from elsewhere (its quote opens on a capital
letter and closes after the count, on the sentence's end or before a citation): "From the
announcement: \"Scores are the mean of 4 attempts per task.\"", "\"Each condition was
tested 10 times\" (Methods)" (not "says \"be brief\"; we ran each 3 times", nor a plot's
title `set title "Pass rate (n=4 runs)"`)."""


def _nothing() -> str:
    return ""


def aside_rule(
    context: str,
    start: int,
    end: int,
    matched: str,
    frame: str = "",
    following: Callable[[], str] = _nothing,
    setting: bool = False,
) -> str | None:
    """The rule that makes the number at [start, end) of `context` (one sentence) no claim;
    None when it is a claim. `frame` is where it sits (frames.py), `following` gives the
    text after its sentence (the next lines), made only when a rule needs it; `setting`
    when a setting's rule read it (its trailing comment is no part of its clause)."""
    before, after = context[:start], context[end:]
    by_kind = _set_aside_by_kind(context, before, after, matched, setting)
    if by_kind:
        return by_kind
    if _folds(context[start:end], f"{context}\n{frame}") or _EACH_FOLD.match(after):
        return "folds of a cross-validation, not runs"
    for name, near_before, near_after in _ASIDE:
        if name.startswith("training epochs") and not _TRAINING_UNIT.search(matched):
            continue
        if name.startswith("training or tuning") and not _TUNING_UNIT.search(matched):
            continue
        if name.startswith("k counts") and not re.match(r"-?-?k\b", matched.strip("\"'"), re.I):
            continue
        if near_before.search(before[-80:]) or near_after.search(after[:80]):
            return name
    if "then" in after[:60].lower() and _STOP_AFTER.search(after[:60]):
        return "a limit, not a count of runs"
    if _ENDS_SOON.match(after) and _STOP_AFTER.search(after[:60] + following()[:60]):
        return "a limit, not a count of runs"
    fixture = setting or bool(_COMPUTED.search(context))
    by_frame = frame_rule(frame, matched, before, fixture) if frame else None
    if by_frame:
        return by_frame
    clause_after = _TRAILING_COMMENT.split(after, 1)[0] if setting else after
    return _set_aside_by_sentence(
        context,
        before,
        after,
        matched,
        following,
        context[start:end],
        clause_after,
        not frame.startswith("data"),
    )


def _has(text: str, words: tuple[str, ...]) -> bool:
    """Whether lower-cased `text` holds one of `words`: the cheap test before a pattern."""
    return any(map(text.__contains__, words))


_PLAN_WORDS: tuple[str, ...] = (  # the words without which _PLAN cannot match
    "plan",
    "next",
    "下一",
    "接下",
    "future",
    "if ",
    "ideally",
    "intend",
    "to be run",
    "going to",
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
    "予定",
    "計画",
    "べき",
    "ものとする",
    *("prévu", "prévoir", "venir", "planifi", "previst", "planead", "planejad", "futur"),
    *("geplant", "künftig", "später", "планиру", "будущ", "향후", "계획", "예정", "추후"),
    *("pianificat", "gepland", "toekomstig"),
)
_MODAL_WORDS: tuple[str, ...] = (
    *("will", "would", "should", "could", "might", "shall", "'d", "'ll", "’d", "’ll"),
    *("我们将", "我們將", "将会", "將會", "将要", "將要", "かも", "いい", "良い", "よい"),
    *("sera", "allons", "será", "serán", "sería", "serão", "seria", "würde", "буд", "sarà"),
    *("saranno", "zal", "zullen", "zou"),
)
_SUGGESTED_WORDS: tuple[str, ...] = (
    "sugg",
    "exampl",
    "e.g",
    "recomm",
    "default",
    "propos",
    "option",
    "illustrat",
    "hypothetical",
    "demonstrat",
    "建議",
    "建议",
    "例如",
    "比如",
    "示例",
    "範例",
    "范例",
    "默认",
    "預設",
    "补充",
    *("exemple", "ejemplo", "exemplo", "beispiel", "z.b", "z. b", "например", "예를", "esempio"),
    "bijvoorbeeld",
)
_NEGATED_WORDS: tuple[str, ...] = (
    *("sans", "sin", "sem", "ohne", "без", "nicht", "kein", "не", "нет", "não", "jamais", "nunca"),
    *("senza", "zonder", "niet", "geen"),
    "not",
    "never",
    "nor",
    "none",
    "no ",
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
_RUN_WORDS: tuple[str, ...] = (
    "run",
    "repeat",
    "sample",
    "evaluate",
    "record",
    "measur",
    "collect",
    "perform",
)
_OTHER_WORK_WORDS: tuple[str, ...] = (
    *("original", "et al", "prior", "previous", "author", "原", "autor", "auteur", "автор"),
    *("model card", "model-card", "paper", "study", "article", "preprint", "post", "vendor"),
    *("leaderboard", "system card", "launch"),
)
_SCHEDULE_WORDS: tuple[str, ...] = ("cron", "每", "天", "排程", "定時", "定时")
_DATASET_WORDS: tuple[str, ...] = ("data", "corpus", "数据集", "數據集", "資料集")
_RECOMMENDED_WORDS: tuple[str, ...] = ("recommend", "suggest", "advis", "practices", "guidelines")


def _told_to_run(before: str, after: str, count: str) -> bool:
    """Whether the number's clause opens with a verb of running told to the reader, with
    its object after it (`_RUN_IMPERATIVE`, `_RUN_OBJECT`)."""
    near = before[-200:]
    told = _RUN_IMPERATIVE.search(near)
    return told is not None and bool(_RUN_OBJECT.match((near + count + after)[told.end("verb") :]))


def _set_aside_by_sentence(
    context: str,
    before: str,
    after: str,
    matched: str,
    following: Callable[[], str],
    count: str = "",
    clause_after: str = "",
    prose: bool = True,
) -> str | None:
    """Rules read in the number's sentence: a plan, a condition, a negation, an
    instruction, a schedule, a total, a data set, configurations one run each. Each
    pattern runs only when its words are there (`_has`): every candidate is read by all."""
    lower, lower_before, lower_after = context.lower(), before.lower(), after.lower()
    clauses = _CLAUSE_END.split(_ASIDE_IN_PARENS.sub(" ", before))
    if len(clauses) > 1 and (_RESTATED.match(clauses[-1]) or _PARTICIPLE.match(clauses[-1])):
        clauses[-1] = clauses[-2] + clauses[-1]  # "…will run 50; that is, 10 × 5": one clause
    clause = clauses[-1] + _CLAUSE_END.split(_ASIDE_IN_PARENS.sub(" ", clause_after))[0]
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
    if _IF_SENTENCE.match(context):
        return "a condition or recommendation, not a result"
    if _PLAN_LABEL.match(context) and not _FIRST_PERSON.search(context):
        return "a plan or condition, not a result"
    if prose and _QUESTION.search(context[-8:]):
        return "a question, not a claim"
    if "[ ]" in before and _TODO.search(before):
        return "a plan or condition, not a result"
    if "backoff" in lower or "back-off" in lower:
        return "retries of failures, not runs"
    if _has(lower_before[-120:], _SUGGESTED_WORDS) and _SUGGESTED.search(before[-120:]):
        return "an example, default or suggestion, not a result"
    if (_has(lower_before[-60:], _NEGATED_WORDS) and _NEGATED.search(before[-60:])) or (
        _NEGATED_AFTER.search(after[:60])
    ):
        return "a negation, not a claim"
    if (
        (_has(lower_before[-120:], _IMPERATIVE_WORDS) and _IMPERATIVE.search(before[-120:]))
        or (prose and _has(lower_before[-200:], _RUN_WORDS) and _told_to_run(before, after, count))
    ) and not _OUTCOME_AFTER.search(after):
        return "an instruction, not a result"
    if context.lstrip().startswith(("#", "//")) and _RETRY.search(following()[:120]):
        return "retries of failures, not runs"
    if _CI.search(context):
        return "CI or build runs, not evaluation runs"
    if _TEST_COMMAND.search(context) and not _EVALUATED.search(context):
        return (
            "a check of the code (idempotence, determinism, a test, a build), not evaluation runs"
        )
    if ("dry" in lower or "\\" in context[-4:]) and _dry_run(context, following):
        return "a dry run, nothing run"
    if (
        " that " in lower_before
        and _CODE_DOES.search(_CLAUSE_END.split(before)[-1])
        and not _FIRST_PERSON.search(context)
        and not _DONE.search(context)
    ):
        return "what a piece of code does, not a result"
    if _JUDGED.search(before[-80:]) or _JUDGED_AFTER.search(after[:60]):
        return "a judge's or annotator's repeats, not runs"
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
    if "sample" in lower_after[:80] and _SAMPLES.match(after) and not GENERATION.search(context):
        return "samples of a data set, not generations"
    if _GENERATED_AFTER.match(after) and _FOR_TRAINING.search(context):
        return "generations for training or a data set, not evaluation runs"
    if (
        _VARIANTS_AFTER.search(after[:60])
        or (number(count) == 2 and _PAIR_AFTER.search(after[:80]))
        or _variants_listed(after, following)
        or _CHANGED_BEFORE.search(_CLAUSE_END.split(before)[-1][-60:])
    ):
        return "different configurations, one run each"
    if (
        "sampl" in lower_before[-40:]
        or "repeat" in lower_before[-40:]
        or "licat" in lower_before[-40:]
        or "copied" in lower_before[-40:]
    ) and _repeated_thing(before, count, after):
        return "what is repeated is not a run"
    if ("每" in before and _EACH_THING_REPEATED.search(before[-30:])) or (
        "表示" in after[:40]
        and _SHOWN_BY_TOOL.match(after)
        and not _TABLE_OR_FIGURE.search(context)
    ):
        return "what is repeated is not a run"
    if _HELD_BACK.search(after[:60]):
        return "held back, not run"
    if _CALLED.search(before[-40:]) and _TIMES_AFTER.match(after):
        return "a function's calls, not runs"
    if _GENERATOR_SEEDS.search(before[-40:]) and re.match(r"\s*seeds?\b", after, re.I):
        return "a generator's seeds, not runs"
    if ("「" in before or "『" in before) and _QUOTED.search(before):
        return "a phrase quoted, not a claim"
    if (
        prose
        and ('"' in before or "“" in before)
        and _QUOTED_OPEN.search(before[-250:])
        and _QUOTED_CLOSE.match(after)
    ):
        return "a sentence quoted from elsewhere, not a claim"
    if _has(lower, ("same", "identical", "同样", "同樣", "相同")) and _SAME_INPUT.search(context):
        return "a statement about determinism, not a count of runs"
    if (
        _CHECK_PASSED.search(context)
        and (_CODE_CHECKED.search(context) or _EQUIVALENT.search(context))
        and not _EVALUATED.search(context)
    ):
        return (
            "a check of the code (idempotence, determinism, a test, a build), not evaluation runs"
        )
    if _has(lower_before, _OTHER_WORK_WORDS) and _OTHER_WORK.search(before[-160:]):
        return "another work's runs, not this one's"
    if _SIGNAL.search(context) and not _EVALUATED.search(context):
        return "readings of a sensor or a system signal averaged, not runs"
    if _PUBLISHED.search(before[-160:]) and not _FIRST_PERSON.search(context):
        return "another work's runs, not this one's"
    if _THRESHOLD.search(context) and _ALERTED.search(context):
        return "a condition or recommendation, not a result"
    if _PAPER_SUBJECT.search(before[-120:]) and not _OWN_WORDS.search(context):
        return "another work's runs, not this one's"
    if _NOT_OURS.search(context) or (
        _has(lower, _NOT_OURS_WORDS) and _NOT_OURS.search(_next_sentence(following()))
    ):
        return "another work's runs, not this one's"
    return None


_GENERATED_AFTER = re.compile(
    r"^\s*(?:[\w-]+\s+){0,2}?(?:responses?|samples?|completions?|rollouts?|generations?|"
    r"trajector(?:y|ies)|outputs?|answers?|solutions?)\b",
    re.I,
)
_FOR_TRAINING = re.compile(
    r"\btraining\b|\btrain(?:ed)?\s+(?:on|set|data|split)|fine-?tun\w*|rejection\s+sampling|"
    r"reward\s+model|rollout\s+(?:pro-?\s*cess|phase|stage)|\b(?:RL|GRPO|PPO|DPO|RLHF|PRM|ORM)\b|"
    r"\b(?:we|to)\s+train\b|"
    r"policy\s+(?:update|gradient|optimi[sz]ation)|distill\w*|\bprotocol\b|learning\s+rate|"
    r"(?:form|build|construct|creat)\w*\s+(?:a\s+|the\s+)?(?:\w+\s+)?(?:data\s*set|corpus)|"
    r"\bKL\b|训练|訓練|微调|微調|(?:group[-\s]relative|normali[sz]ed?)\s+advantages?\b|"
    r"\bcompute\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?advantages?\b|\bfilter(?:ed|ing)?\s+out\s+(?:the\s+)?"
    r"(?:easiest|hardest|easy|hard|trivial\w*|unsolv\w*|solved|too\s+easy|never[-\s]solved)",
    re.I,
)
"""Generations made to train a model or to build a data set, not to evaluate it: "we
sample 5 responses for each training query", "during the rollout process ... with the KL
coefficient", "sample 5 responses per question ... forming a dataset", "following the
SafeChain protocol, we sample 5 responses per prompt and retain the prompt only if...", "128
prompts × 8 samples per prompt, ..., learning rate 1e-6"; responses sampled to compute a
group-relative advantage, or to filter out the easiest problems (a training set's
difficulty)."""
_SAMPLES = re.compile(
    r"^\s*(?:(?!(?:per|each|for|over|across|of|from|in|on|with|"
    + nouns(INDEX_NOUNS)
    + r")\b)[\w-]+\s+){0,3}?samples?\b",
    re.I,
)
"""The unit just after a count is samples ("200 samples per task", not "12 epochs per
sample", nor "mean of 3 runs over 200 samples": the count's own unit is runs)."""
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
