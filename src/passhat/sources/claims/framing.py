"""What sets a number aside by where it sits rather than what its sentence says: its
*frame* (frames.py: a training section, a judge's or retry policy's keys, a file or
section of plans, options or examples, a test of the code) and the lines around it
(training's words, a data set's, seeds that are inputs or an ensemble's members). The
readers (reader.py) ask `frame_rule`, `trained_nearby`, `data_samples` and
`seeds_are_inputs`; docs/audit.md names every rule.
"""

from __future__ import annotations

import functools
import re

from passhat.sources.claims.vocabulary import TRAINING_NOUNS, nouns

GENERATION = re.compile(
    r"generat|sampl(?:ed|ing)|\bdraw|decod|temperature|pass\s*[@^]|completions?|estimat|"
    r"\bn\s*=|per\s+(?:problem|prompt|question)|best\s+of|majority|生成|采样|採樣",
    re.I,
)
"""Samples a model generated (pass@k's), not samples of a data set ("200 samples per
task, seed 42", the first 200 items of each task)."""

_PLAN_SECTION = re.compile(
    r"(?<![a-z])(?:plan|plans|planned|planning|proposal|proposed|todo|to-?do|roadmap|"
    r"next\s+steps?|future|checklist|assignment|should|must|mitigation|"
    r"instructions?|guidelines?|usage|options|examples?|e\.g|suggest\w*|"
    r"recommend\w*|improvements?|illustrat\w*|hypothetical|exercises?|homework|preregist\w*|"
    r"pre-registration|to\s+be\s+(?:run|written|done|filled|decided|measured|completed|added)|"
    r"before\s+(?:the\s+)?first\s+run|requirements?)(?![a-z])|(?m:^\W*if\b)|"
    r"(?m:(?:^|\s)defaults?:?\s*$)|"
    r"(?m:(?:^|/\s)\W*(?:use|run|follow|record|measure|install|configure|try|set\s+up|submit|launch)\b"
    r"(?!\s*(?:\d|#|count|id|time|log|results?|summary)\b))|"
    r"计划|計劃|规划|規劃|风险|風險|缓解|緩解|待办|待辦|用法|示例|範例|范例|例如|比如|建議|建议|如果|假如|"
    r"假设|假設|练习|練習|习题|習題|作业|作業|应该|應該|该怎么|該怎麼|怎么做|怎麼做|改进|改進|"
    r"(?:默认|默認|預設|デフォルト)(?:值|設定|设置|設置|で)?\s*$|(?:默认|默認|預設)(?:报告|報告|输出|輸出)|"
    r"必须|必須|务必|務必|"
    r"향후|계획|과제|예정|\b(?:prochaines?\s+étapes|travaux\s+futurs|trabajo\s+futuro|"
    r"próximos\s+pasos|trabalhos?\s+futuros|próximos\s+passos|nächste\s+schritte|ausblick|"
    r"план\w*)\b",
    re.I,
)
"""A heading or lead-in of plans, instructions, options, examples or exercises: "## Next
steps", "It should:", "Example invocations of the script:", "If the success rate is 80%:",
"# Illustrative CI gate configuration" (a comment opening a code block), "## Trial ledger
(to be written before first run)", "### 练习 3" (an exercise), "## 每层该怎么做" (how it
should be done), a lead-in or heading opening with a verb told to the reader ("Use a
staged ladder:", "## Run an evaluation"; not "## Run 1"), requirements, a lead-in that is
only "Defaults:" or a `defaults:` key opening a code block."""
_PLAN_FILE = re.compile(
    r"(?<![a-z])(?:plans?|planning|proposals?|todo|roadmap|next[-_ ]?steps?|checklist|assignments?|"
    r"spec|specification|outline|api|usage|instructions?|guidelines?|preregist\w*|exercises?|"
    r"requirements?|brief|guides?|tutorials?|handbook|manual|howto|examples?|demos?|adr|"
    r"improvements?|deliverables?|wishlist|backlog|rules|handoffs?|runbooks?|playbooks?|"
    r"acceptance|polic(?:y|ies)|templates?|skills?|"
    r"regeln|règles|reglas|regras|правила|requisitos|exigences|anforderungen|требования|"
    r"enunciado|consignes?|aufgabenstellung|planificaci[oó]n|planification|plano|"
    r"ejercicios?|exercices?|exerc[ií]cios?|übungen|задани[ея])(?![a-z])|"
    r"요구사항|계획|과제|"
    r"^(?:task|next|agents|claude|gemini|contributing)$|"
    r"计划|計劃|计画|計画|规划|規劃|方案|提案|需求|要件|教程|练习|練習|"
    r"(?<=[a-z])plan(?:s|ung)?$",  # a compound ending in a plan: studienplan, testplan
    re.I,
)
"""A file or folder of plans, instructions, options, examples, requirements, guides,
tutorials or rules, by its name: PLAN.md, docs/next_steps.md, plans/phase-05.md, TASK.md,
AGENTS.md, NEXT.md, docs/api.md, docs/requirements.md, AGENT_BRIEF.md, EXAMPLES.md,
docs/improvements.md (what could be done better), BACKLOG.md, RULES.md, TESTPLAN.md (a name
ending in a plan), HANDOFF.md and RUNBOOK.md (what the next person is to run),
docs/acceptance.md, evaluation_policy.md, a template, an agent's SKILL.md, 研究计划.md (not a protocol,
a design, lessons or a review: each tells what was run as often as what should be)."""
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
    r"tuning|hpo|optuna|sweeper|sweepers|search_space|trace|traces|transcript|messages|"
    r"completion|completions|observation|observations)(?![a-z])",
    re.I,
)
"""Keys a setting nested under counts something other than the evaluated runs: a
judge's repeats, retries, training, a schedule, a search (`judge:` → `repeats: 3`,
`sweeper:` → `n_trials: 5`), a model's trace or transcript (`"trace": {` → `"n_seeds": 3`)."""
_TRAINING_NOUN = re.compile(nouns(TRAINING_NOUNS) + r"|轮|輪", re.I)


_TRAINING_HINT = re.compile(
    r"learning[\s_-]?rate|(?<![\w-])-?-?lr\b|weight[\s_-]?decay|dropout|"
    r"warm-?up[\s_-]?(?:steps|ratio)|\boptimi[sz]er\b|gradient[\s_-]accumulation|学习率|學習率|"
    r"botorch|bayesian\s+optimi[sz]ation|acquisition|hyperopt|search_space",
    re.I,
)
"""Words of a training configuration or a Bayesian optimisation: epochs or trials a few
lines from a learning rate or an acquisition function are training's or tuning's
(`--epochs 5 --lr 2e-5`; botorch's `"num_trials": 50`)."""
_BATCH_HINT = re.compile(r"batch[\s_-]?size", re.I)
"""A batch size: training's only for epochs, iterations and steps (an inference
benchmark has batch sizes and trials too)."""


_SEED_INPUTS = re.compile(
    r"\bseed[\s_-]?(?:prompts?|intents?|examples?|questions?|tasks?|inputs?|data|instructions?|"
    r"texts?|queries|query|utterances?|documents?|sets?)\b",
    re.I,
)
"""Seeds that are inputs a generator starts from (seed prompts, seed examples), not random
seeds: a count of them is no count of runs."""


_ENSEMBLE = re.compile(
    r"(?<![^\W_])ensembl\w*|\bbagging\b|\bblend(?:ing|ed)?\b|集成|アンサンブル|앙상블", re.I
)


def seeds_are_inputs(matched: str, nearby: str) -> bool:
    """Whether a count of seeds (`matched`, a seed list or a loop too) sits among words
    naming seeds as inputs (`nearby`: its line and the lines around it: `seed_prompts: []`
    above `num_seeds: 3`) or the members of an ensemble (`gapfill.ensemble`, `--seeds 0 1
    2` of one blended prediction)."""
    lower = matched.lower()
    seeds = any(map(lower.__contains__, _SEED_WORDS))
    if not seeds and not lower.startswith("for "):
        return False
    return bool(("seed" in lower and _SEED_INPUTS.search(nearby)) or _ENSEMBLE.search(nearby))


_SEED_WORDS = ("seed", "시드", "シード", "种子", "種子", "graine", "semilla", "semente", "сид")
"""A random seed in the languages the grammar reads."""


def data_samples(matched: str, nearby: str) -> bool:
    """Whether a setting counting samples (`num_samples: 500`) sits among words of a data
    set and none of generating them (`nearby`: "dataset", a split; no temperature, pass@k,
    sampling...): a data set's samples (a bare `n_samples: 5` stays a claim)."""
    lower = matched.lower()
    return "sample" in lower and bool(_DATA_NEARBY.search(nearby)) and not GENERATION.search(nearby)


_DATA_NEARBY = re.compile(r"data[-_\s]?sets?\b|\bcorpus\b|\bsplits?\b|\bsubsets?\b|wikitext", re.I)


def trained_nearby(matched: str, nearby: str) -> bool:
    """Whether a count of epochs, iterations, trials... (`matched`) sits among the words of
    a training configuration (`nearby`: its line and the lines around it)."""
    noun = _TRAINING_NOUN.search(matched)
    if noun is None:
        return False
    stepped = re.match(r"epoch|iteration|step", noun.group(0), re.I) is not None
    return bool(_TRAINING_HINT.search(nearby) or (stepped and _BATCH_HINT.search(nearby)))


def frame_rule(frame: str, matched: str, before: str = "", fixture: bool = False) -> str | None:
    """The rule that makes a number no claim by its frame (see `_frame_rule`); a
    statistic over trials ("mean ... over 3 trials", `before` the match and the match) is
    repeats even in a sweep; `fixture` when the number is a setting of code (or a sum
    worked out in a comment): a test file's fixture."""
    stated = _STATISTIC_OVER.search(before[-40:] + matched) is not None
    return _frame_rule(frame, bool(_TRAINING_NOUN.search(matched)), stated, fixture)


_STATISTIC_OVER = re.compile(
    r"\b(?:mean|average[sd]?|avg|median|std)\b.{0,40}\b(?:over|across|of)\s+\S+\s+trials?\b", re.I
)


@functools.lru_cache(maxsize=256)
def _frame_rule(
    frame: str, training_noun: bool, stated: bool = False, fixture: bool = False
) -> str | None:
    """The rule that makes a number no claim by its frame, `KIND\\nPATH\\nHEADING\\nLEAD`
    (frames.py: the heading and lead-in of prose, the section and parent keys of data);
    None when its frame says nothing."""
    kind, path, heading, lead, option = [*frame.split("\n"), "", "", "", "", ""][:5]
    if training_noun and _TRAINING_FRAME.search(f"{path} {heading} {lead}") and not stated:
        return "training or tuning, not evaluation runs"
    if kind != "prose":
        if option or _DEFAULTS.search(lead):
            return "an option's help or default, not a result"
        if (
            _CODE_TESTS.search(path)
            or _TEST_FUNCTION.search(lead)
            or (fixture and _TEST_FILE.search(path))
        ):
            return "a test of the code, not a result"
        if any(map(_DEMO_FILE.search, _parts(path))):
            return "a demo, example or tutorial, not a result"
        if _OTHER_KEYS.search(f"{heading} {lead}"):
            return "a setting of something else (a judge, retries, training, a schedule)"
        return None
    if lead.startswith("table:") and re.search(r"\bdefaults?\b", lead, re.I):
        return "an option's help or default, not a result"
    if lead.startswith("table:") and _DICTIONARY.match(lead) and not _VALUES.search(lead):
        return "a data dictionary (what a field holds), not a result"
    if any(map(_PLAN_FILE.search, _parts(path))) or _PLAN_SECTION.search(f"{heading}\n{lead}"):
        return "a section of plans, instructions, options or examples"
    if any(map(_TEST_DOC.fullmatch, _parts(path))) or _CHECKS_LEAD.search(lead):
        return "a test of the code, not a result"
    if any(map(_SOFTWARE_DOC.fullmatch, _parts(path))):
        return "what the software does (its features, its architecture), not a result"
    return None


_SOFTWARE_DOC = re.compile(
    r"features?|capabilities|architecture|funktionen|fonctionnalit[ée]s", re.I
)
"""A write-up of what the software does (docs/features.md, docs/architecture.md): "runs each
task 4 times and reports the median" is a feature, not this folder's runs
(docs/feature_ablation.md is results)."""


_DICTIONARY = re.compile(
    r"table:\s*\|?\s*[`*_]*(?:fields?|columns?|variables?|keys?|attributes?|properties|property|"
    r"feld|spalte|champ|colonne|campo|columna|поле|столбец|字段|列名?|項目)[`*_]*\s*\|"
    r"[^\n]{0,160}?\b(?:types?|descriptions?|definitions?|meanings?|beschreibung|bedeutung|"
    r"signification|descripci[oó]n|descri[cç][aã]o|significado|описание|说明|描述|含义|含義|説明)\b",
    re.I,
)
"""A table whose header names fields and what they hold (`| Column | Type | Description |`):
a data dictionary, where "mean of 3 runs" tells what a column means, not this folder's runs."""
_VALUES = re.compile(r"\b(?:values?|results?|scores?|runs?|seeds?|trials?|counts?|n)\b", re.I)
"""A header that also holds values (`| Variable | Value | Meaning |`): a settings table."""
_TEST_DOC = re.compile(
    r"tests?|testing|test[-_ ]?(?:cases?|suite|strategy|guide|notes|matrix|specs?|checklist)|"
    r"verification",
    re.I,
)
"""A write-up named for the code's tests or its verification (TESTING.md, TESTS.md,
tests/README.md, docs/test-cases.md, docs/verification.md): what the tests do, not results
(docs/test-results.md is results)."""
_CHECKS_LEAD = re.compile(
    r"\b(?:validator|validation|checker|linter|verifier|tests?|test\s+suite|CI|script)\s+"
    r"(?:checks|verifies|asserts|enforces|ensures|requires)\b|^\W*checks\W*$",
    re.I,
)
"""A lead-in of what a validator or a test checks ("The validator checks:", "Checks:"): its
list is the check's conditions, not results."""


def _parts(path: str) -> list[str]:
    """The folders and the file's stem of a path (`plans/phase-05.md`: plans, phase-05)."""
    *folders, name = path.split("/")
    return [*folders[-3:], name.rsplit(".", 1)[0]]


_DEFAULTS = re.compile(r"(?<![a-z])defaults?(?![a-z])", re.I)
"""A data file's key holding defaults (`const G_DEFAULT = {`, `defaults:`): options."""
_CODE_TESTS = re.compile(r"(?:^|/)tests?/")
_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[\w.-]+\.(?:py|c|cc|cpp|rs|ml|jl|r|exs?)|[\w.-]+_test\.(?:go|exs|c|cc|cpp|rs|dart)|"
    r"[\w.-]+\.(?:test|spec)\.[cm]?[jt]sx?|[\w-]+_spec\.rb|\w+Tests?\.(?:java|cs|kt|swift|scala))$",
    re.I,
)
"""A file named as a test by its language's convention (`catalog_test.go`, `arena.test.ts`,
`test_metrics.py`, `ParserTest.java`): its settings are a test's fixtures (`Trials: 5` in a
struct the test builds), not the experiment's (a comment reporting a measurement there stays
prose; `smoke_test.py`, `run_module_test.sh` may be the evaluation itself)."""
_TEST_FUNCTION = re.compile(r"(?<![\w-])(?:test_\w+|\w+_test|Test\s\w+)(?![\w-])")
"""A test function or class the line is nested in (`def test_median():`, `fn
replicate_is_stable_test() {`, `class Test Runner:` as its words): a test of the code."""
_DEMO_FILE = re.compile(
    r"(?<![a-z])(?:demos?|examples?|tutorials?|basics|toy|playground|sandbox|scratch)(?![a-z])",
    re.I,
)
"""A script or data file named as a demo, an example or a tutorial (pass_at_k_demo.py,
examples/config.yaml, numpy_basics.py): what it prints or sets shows how, not what was run."""
"""A test of the code (in tests/): its docstrings and settings are no result (a script
named smoke_test.py or run_module_test.sh may well be the evaluation)."""
