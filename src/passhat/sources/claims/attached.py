"""Whether a claim is *attached* to this folder's own results: only an attached claim
plans runs (and so fails `audit --strict` over a folder holding fewer); one that is read
but not attached is kept, shown and set aside with the reason.

A claim is attached when the text it sits in reports the experiment's results, by one of
a few signals of results (docs/audit.md, "Attached to results"):

- **results reported** near it: a result measure (accuracy, pass rate, score, resolved,
  mean, ±...) with a value (82%, 0.61, 41/50, ± 0.03; a target such as ">= 90%" is no
  value), a reference to a figure or table, or a results table (a table with values);
- **told as done**: its sentence speaks of the experiment in the first person or the
  passive past ("we ran", "each task was run", "results are averaged over", "我们",
  "実行した");
- **a run configuration or script**: a setting, flag, loop or seed list in a
  configuration file (JSON, YAML, TOML...), a shell script, or a script whose path names
  a run, an evaluation, a benchmark, an experiment or its results (`run_eval.py`,
  `bench.cpp`, `experiments/`), not in its docstring or comments (shown, not run).

Prose inside a script (comments, docstrings, strings) is a write-up of its own: attached
when it reports results or tells the experiment as done, or when the script is the
experiment's (by its path). A command or a configuration shown in a write-up's code block
is attached only when the lines leading into the block report results or tell it as run
("We ran:"); otherwise it shows how to run something, not what was run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from passhat.sources.claims.aside_cues import FOLLOWED
from passhat.sources.claims.embedded import DOCSTRING

NOT_ATTACHED = "not attached to results: "
"""The start of the rule of a claim read but not attached (`--explain`, `--json`)."""

NEAR = 5
"""Lines either side of a claim read for results reported near it (not past a heading)."""

_MEASURE = re.compile(
    r"\b(?:acc(?:uracy|uracies)?|pass(?:\s*rate|ed|es)?|pass\s*[@^]|success(?:es|ful)?|solved|resolved|"
    r"scores?|win\s*rate|f1|bleu|rouge|exact\s*match|em|reward|return|error(?:\s*rate)?|"
    r"mean|average[sd]?|avg|median|std|stdev|sd|standard\s+deviation|variance|"
    r"confidence\s+interval|ci|results?|performance|precision|recall|auc|latency|throughput|"
    r"speed-?up|ms|seconds?|tokens/s)\b|±|\+/-|"
    r"准确率|準確率|正确率|正確率|成功率|通过率|通過率|平均|结果|結果|得分|分数|分數|标准差|標準差|"
    r"方差|精度|正解率|スコア|中央値|誤差|误差",
    re.I,
)
"""A measure a result is stated in (words of several languages)."""
_VALUE = re.compile(
    r"(?<![<>=≤≥~])(?<![<>=≤≥]\s)(?:\b\d+(?:\.\d+)?\s*%|\b\d*\.\d+\b|\b\d+\s*/\s*\d+\b)|±|\+/-"
)
"""A value a result is stated as: a percentage, a decimal, a fraction, a ± (a target such
as ">= 90%" or "< 5%" is no value: it says what a result should be)."""
_RESULT_WORD = re.compile(
    r"\b(?:acc(?:uracy|uracies)?|pass\s*rates?|pass\s*[@^]\s*\w|success\s*rates?|scores?|resolved|"
    r"results?|performance|win\s*rates?|f1|reward)\b|%|"
    r"准确率|準確率|正确率|正確率|成功率|通过率|通過率|结果|結果|得分|性能|指标|指標|"
    r"正解率|スコア|Ergebnis\w*|résultats?|resultados?",
    re.I,
)
"""Results named in the claim's own sentence: "held-out pass@k (n=8)", "reports aggregate
results over five random seeds"."""
_RESULTS_LEAD = re.compile(
    r"^\W*(?:results?|findings|outcomes?|结果|結果|Ergebnisse|résultats|resultados)\W*[:：]\s*$",
    re.I | re.M,
)
"""A line leading into results ("Results:", "結果:"): the lines around it report them."""
_REFERENCE = re.compile(
    r"\b(?:fig(?:ure)?\.?|table|tab\.)\s*\d|\\(?:ref|caption)\{|!\[|图\s*\d|表\s*\d|図\s*\d",
    re.I,
)
"""A figure or a table referred to (or a caption, an image): results shown."""
_TOLD = re.compile(
    r"\b(?:we|our|(?-i:us)|(?-i:I))\b|\b(?:is|are)\s+averaged\b|"
    r"\b(?:was|were|been|got)\s+(?:[\w-]+\s+){0,2}?(?:[a-z]+ed|run|ran|rerun|re-run|done|"
    r"drawn|taken|made|given|written|chosen|carried\s+out)\b|"
    r"\b(?:wiederholt|ausgeführt|durchgeführt|gemessen|exécutée?s?|répétée?s?|évaluée?s?|"
    r"evaluad[oa]s?|ejecutad[oa]s?|repetid[oa]s?|"
    # more participles of running, measuring, averaging: German, French, Spanish, Portuguese
    r"trainiert|evaluiert|getestet|gemittelt|gelaufen|vérifiée?s?|mesurée?s?|moyennée?s?|"
    r"lancée?s?|effectuée?s?|réalisée?s?|realizad[oa]s?|medid[oa]s?|promediad[oa]s?|"
    r"executad[oa]s?|testad[oa]s?|усреднен\w*|проведен\w*|запущен\w*|измерен\w*)\b|"
    r"(?:수행|실행|측정|반복|평가|실험)(?:했|하였|함)|"
    r"使用了|进行了|進行了|完成了|"
    r"\b(?:ran|reran|repeated|evaluated|averaged|executed|performed|measured|conducted|"
    r"replicated|aggregated|collected|tested)\b|"
    r"我们|我們|本文|本研究|本实验|本實驗|本次|我々|私たち|本研究|"
    r"(?:跑|运行|運行|执行|執行|重复|重複|测试|測試|实验|實驗|评测|評測)了|"
    r"(?:実行|実施|測定|評価|試行)(?:した|しました|し、|して)",
    re.I,
)
"""The experiment told as done: the first person, or a verb of running in the passive or
the past ("each task was run", "ran", "results are averaged", "跑了", "実行した")."""
_SCOPE_NOUNS = (
    r"(?:configurations?|configs?|settings?|conditions?|cells?|arms?|models?|agents?|tasks?|"
    r"methods?|variants?|experiments?|benchmarks?|problems?|prompts?|questions?|instances?|"
    r"environments?|envs?|datasets?|data\s+sets?|folds?|seeds?|baselines?|levels?|groups?|"
    r"systems?|cases?|splits?|points?|combinations?|pairs?|setups?|domains?|languages?|"
    r"samples?|items?|queries|query|episodes?|scenarios?|suites?|games?|puzzles?|repos?|"
    r"repositories|instances?|tests?)"
)
_DESIGN = re.compile(
    r"\b(?:per|each|every|for\s+(?:each|every|all)|across|of\s+(?:each|every))\s+"
    r"(?:[\w-]+\s+){0,2}?" + _SCOPE_NOUNS + r"\b|"
    r"\b(?:runs?|trials?|seeds?|attempts?|times|repetitions|rollouts|samples)\s+(?:each|apiece)\b|"
    r"\b(?:mean|means|average[sd]?|averaging|avg|median|std|stdev|standard\s+deviation|"
    r"variance|best|majority|aggregated?|independent|replicates?|random\s+seeds?)\b|±|\+/-|"
    r"重复实验|重複實驗|随机种子|隨機種子|独立重复|獨立重複|中位数|中位數|"
    r"每(?:个|個|组|組|折|格|种|種|项|項|条|條|一)?\s*(?:实验|實驗|任务|任務|模型|设定|設定|配置|组合|組合|"
    r"方法|数据集|資料集|问题|問題|样本|樣本|题|題|条件|條件|设置|設置|场景|場景)|"
    r"各\s*(?:跑|运行|運行|执行|執行|\d|[一二三四五六七八九十两兩])|"
    r"平均|均值|中央値|标准差|標準差|标准误|標準誤|正确率|正確率|准确率|準確率",
    re.I,
)
"""The experiment's design named in the claim's own sentence: its runs counted per
configuration, task, model, cell, seed... ("3 runs per configuration", "3 runs each",
"每个实验重复 3 次", "各跑 3 次"), or a statistic taken over them ("mean of 5 runs", "取
3 次平均")."""
_RUN_PATH = re.compile(
    r"(?<![a-z])(?:run|runs|runner|eval|evals|evaluat\w*|bench\w*|experiments?|exp|ablations?|"
    r"trials?|reproduc\w*|protocol|configs?|results?|summary|report|plots?|figures?|figs?|"
    r"aggregate|analy[sz]\w*|compare|measure\w*|smoke|sweeps?)(?![a-z])",
    re.I,
)
"""A script's path naming the experiment's run, evaluation, benchmark or results."""
_REPORT_PART = re.compile(
    r"[\w.-]*(?:results?|reports?|paper|experiments?|evaluation|eval|methods?|methodology|configs?|"
    r"findings|summary|benchmarks?|analysis|writeup|write-up)[\w.-]*",
    re.I,
)
"""A folder or file name of results, reports, a paper, experiments or their methods."""
_NOTES_ON_A_PAPER = re.compile(
    r"papers?[-_ ]?(?:notes?|summar\w*|reviews?|analys[ie]s|reading|translation|digest)|"
    r"(?:notes?|summar\w*|reviews?|reading|digest)[-_ ]?(?:on[-_ ]|of[-_ ])?papers?|"
    r"论文(?:笔记|解读|摘要|总结|翻译)|論文(?:筆記|解讀|摘要|總結|翻譯|メモ|まとめ)",
)
"""A file or folder of notes on a paper (paper_notes.md, paper-summary.md, reading/, 论文笔记.md):
notes on someone's paper, not the folder's own report (paper/main.tex is)."""
_PAPER_NOTES = re.compile(_NOTES_ON_A_PAPER.pattern.replace("|translation", ""), re.I)
"""Notes on a paper that are no translation of it (a translation speaking of "our" runs is
taken at its word)."""
_REVIEW_PART = re.compile(
    r"(?:peer[-_ ]?|paper[-_ ]?|papers[-_ ]?)?reviews?(?:[-_ ]?\d{1,3})?|reviewers?(?:[-_ ]?\d{1,3})?|"
    r"referee[-_ ]?reports?|reading(?:[-_ ]?(?:notes?|list|log))?|related[-_ ]?works?|"
    r"literature(?:[-_ ]?(?:review|notes?|survey))?|lit[-_ ]?review|surveys?|"
    r"(?:paper[-_ ]?)?excerpts?|digests?|(?:arxiv|paper)[-_ ]?(?:daily|digest|feed)|"
    r"sources|references|bibliography|related(?:[-_ ]?\w+)?",
    re.I,
)
"""A file or folder of a review of, or reading notes on, other works (reviews/, review_2.md,
reading.md, related-work.md, related_benchmarks.md, literature/, excerpts.md, sources.md): the
runs it counts are theirs (not
self_review.md, review-responses.md, code_review.md: those tell this work's own)."""
_PAPER_FOLDER = re.compile(r"paper|manuscript|thesis|latex|tex|sections?|chapters?", re.I)
"""The folder of a paper's own sources: its related-work section tells its own runs too."""
_NOTES_PART = re.compile(r"(?:^|[-_ ])notes?(?:$|[-_ ])|^(?:journal|log|wiki|memo)s?$", re.I)
"""A file or folder of notes (notes/, NOTES.md, eval-notes.md): about this work or about
another, as the text around a claim says (`_OTHER_WORK`), or on a paper as its name says
(notes/paper.md, notes/lstm-paper.md: `_PAPER_NAMED`)."""
_PAPER_NAMED = re.compile(
    r"(?![\w-]*translat)(?:[\w-]*[-_])?papers?(?:[-_][\w-]*)?|论文|論文|논문", re.I
)
_OTHER_WORK = re.compile(
    r"\b(?:the|this|that|their|its)\s+(?:paper|papers|authors?|study|article|preprint|"
    r"publication|blog\s*post|post|launch\s+page|model\s+card|system\s+card|leaderboard|"
    r"maintainers|vendors?)\b|\b(?:paper|authors?)['’]s?\s|(?:\[\[|\]\()[^)\]\s]{0,80}sources/|"
    r"充分性|客观性|客觀性|公平性|優缺點|优缺点|\((?:p|pp|sec|section|appendix|app|line|lines|eq)\.?\s*[A-Z]?\d|"
    r"\bPDF\s+p\.|论文|論文|该文|該文|原文|作者|著者|该研究|該研究|文中|"
    r"\b(?:l['’]article|les\s+auteurs|el\s+art[ií]culo|los\s+autores|o\s+artigo|os\s+autores|"
    r"die\s+autoren|der\s+artikel|das\s+paper|статья|статье|авторы)\b|논문|저자",
    re.I,
)
"""Another work named as the one whose runs are told: the paper, the authors, a study, a
post, a leaderboard's maintainers, a link to sources (`[[sources/x]]`, `(../sources/x.md)`), a
reviewer's words on its experiments' adequacy and fairness (充分性, 客观性, 公平性), a place in
it ("(Sec. 5.2)", "(p. 6)"), 论文, 著者,
l'article, los autores, 논문 (not a citation alone: "pass@1 (Chen et al., 2021)" names a
method the notes' own runs use)."""
_OWN = re.compile(r"\b(?:we|our|us|(?-i:I))\b|我们|我們|我々|私たち|우리", re.I)
"""The first person: a notes file telling the writer's own runs ("we ran each task 3 times",
"following the authors' protocol, we averaged our results")."""
_CODE_LINE = re.compile(
    r"^\s*(?:#|//|[$>]\s|[\w./-]+\s+-|[\w.\"'-]+\s*[:=]|[-\w]+\s+[-\w./]+\.\w+)"
)
"""A line of a code block that is a comment, a command or a setting (not output)."""
_COMMAND = re.compile(
    r"^\s*(?:[$>]\s*)?(?:python3?|uv\s+run|poetry\s+run|bash|sh|npm|npx|node|accelerate|"
    r"torchrun|deepspeed|\./|[\w/.-]+\.(?:py|sh)\s|[a-z][\w.-]*\s+run\s+[\w/.-]+\.(?:py|sh|js|ts)\s)",
)
"""A command line in a program's own text (its usage, in a docstring or comment whose
markers an excerpt left out; `modal run apps/eval.py --num-runs 5`): shown, not run (a shell
script's commands are run)."""
_COUNT_FLAG = re.compile(
    r"(?<![\w-])(--?(?:num|n|number)?[-_]?(?:runs?|trials?|attempts?|repeats?|repetitions?|"
    r"epochs?|samples?|reps|iterations?))[=\s]\s*(\d+)\b",
    re.I,
)
"""A flag counting runs, with its value (`--num-runs 5`, `--epochs=3`)."""
_CONFIGURATION = (".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".env")
_SCRIPT = (".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", "makefile", ".sbatch", ".slurm")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s|\\(?:sub)*section\*?\{")
_FENCE = re.compile(r"^\s*(?:```|~~~)")


@dataclass(frozen=True)
class Where:
    """Where a claim was read: `how` is `prose` (a write-up's text or table), `shown` (a
    write-up's code block), `embedded` (a script's comment, docstring or string) or `code`
    (a script's or configuration's setting, flag, loop or list)."""

    how: str
    name: str
    line: int
    """1-based."""


def fenced_lines(lines: list[str]) -> dict[int, tuple[int, int]]:
    """Each 1-based line of a write-up inside a code block (its fences too), with the
    block's first and last lines (an unclosed block runs to the end)."""
    blocks: dict[int, tuple[int, int]] = {}
    opened: int | None = None
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            if opened is None:
                opened = number
                continue
            blocks.update(dict.fromkeys(range(opened, number + 1), (opened, number)))
            opened = None
    if opened is not None:
        blocks.update(dict.fromkeys(range(opened, len(lines) + 1), (opened, len(lines))))
    return blocks


def docstring_lines(lines: list[str]) -> frozenset[int]:
    """The 1-based numbers of a script's lines inside a docstring (its quotes too)."""
    inside, found = False, set()
    for number, line in enumerate(lines, start=1):
        quotes = len(DOCSTRING.findall(line))
        if inside or quotes:
            found.add(number)
        if quotes % 2:
            inside = not inside
    return frozenset(found)


def _near(lines: list[str], line: int) -> str:
    """The lines within NEAR of line `line` (1-based), not past a heading either side."""
    index = line - 1
    lo = index
    while lo > 0 and index - lo < NEAR and not _HEADING.match(lines[lo]):
        lo -= 1
    if _HEADING.match(lines[lo]) and lo < index:
        lo += 1
    hi = index
    while hi + 1 < len(lines) and hi - index < NEAR and not _HEADING.match(lines[hi + 1]):
        hi += 1
    return "\n".join(x[:300] for x in lines[lo : hi + 1])


def _around_block(lines: list[str], block: tuple[int, int]) -> str:
    """The lines leading into a code block (`block`: its first and last lines, 1-based)
    and the lines after it: at most NEAR either side, not past a heading nor into
    another block."""
    first, last = block
    above = [x[:300] for x in lines[max(0, first - 1 - NEAR) : first - 1] if not _HEADING.match(x)]
    below = []
    for x in lines[last : last + NEAR]:
        if _HEADING.match(x) or _FENCE.match(x):
            break
        below.append(x[:300])
    return "\n".join(above + below)


def _reported(text: str) -> str | None:
    """What in `text` reports a result: a measure with a value, a figure or table, a line
    leading into results."""
    reference = _REFERENCE.search(text) or _RESULTS_LEAD.search(text)
    if reference:
        return f"a figure, table or results: {reference.group(0).strip()!r}"
    value = _VALUE.search(text)
    measure = _MEASURE.search(text) if value else None
    if value and measure:
        return f"results reported: {measure.group(0).strip()!r} and {value.group(0).strip()!r}"
    return None


def _told(sentence: str) -> str | None:
    told = _TOLD.search(sentence)
    return f"told as done: {told.group(0).strip()!r}" if told else None


def _named(sentence: str) -> str | None:
    named = _RESULT_WORD.search(sentence)
    return f"results named: {named.group(0).strip()!r}" if named else None


def _designed(sentence: str) -> str | None:
    design = _DESIGN.search(sentence)
    return f"the experiment's design: {design.group(0).strip()!r}" if design else None


def _is_report(name: str) -> bool:
    """Whether a write-up is the folder's own report: at its top, or in a folder of
    results, reports or a paper, or named for them (`results/README.md`, `paper/main.tex`,
    `docs/experiments.md`)."""
    *folders, file = name.lower().split("/")
    parts = [*folders, file.rsplit(".", 1)[0]]
    if any(map(_NOTES_ON_A_PAPER.search, parts)):
        return False
    return not folders or any(map(_REPORT_PART.fullmatch, parts))


def _headings_above(lines: list[str], line: int) -> str:
    """The headings above line `line` (1-based), nearest first: at most three, from at most
    200 lines up."""
    found = [x[:200] for x in reversed(lines[max(0, line - 201) : line - 1]) if _HEADING.match(x)]
    return "\n".join(found[:3])


def _other_works_notes(name: str, lines: list[str], line: int, sentence: str) -> str | None:
    """Why a claim in a write-up tells another work's runs, or None: its file is a review
    of, or reading notes on, other works (`_REVIEW_PART`, `_NOTES_ON_A_PAPER`), or a file
    of notes whose claim's sentence, nearby lines or headings name another work
    (`_OTHER_WORK`); never a sentence told in the first person (`_OWN`)."""
    if _OWN.search(sentence):
        return None
    *folders, file = name.split("/")
    if folders and _PAPER_FOLDER.fullmatch(folders[-1]):
        return None  # the paper's own sections: paper/related-work.md
    parts = [*folders, file.rsplit(".", 1)[0]]
    named = [p for p in parts if _REVIEW_PART.fullmatch(p) or _PAPER_NOTES.search(p)]
    if named:
        return f"notes on other works: the file is {'/'.join(named)!r}"
    if not any(map(_NOTES_PART.search, parts)):
        return None
    if any(map(_PAPER_NAMED.fullmatch, parts)):
        return "notes on other works: notes named for a paper"
    if FOLLOWED.search(sentence) and not _OTHER_WORK.search(FOLLOWED.sub(" ", sentence)):
        return None  # "Following the paper, each task was run 10 times": its own runs
    cue = _OTHER_WORK.search(f"{_near(lines, line)}\n{_headings_above(lines, line)}")
    return f"notes on other works: {cue.group(0).strip()!r} named" if cue else None


_LIBRARY = re.compile(r"src|lib|libs|core|components|pkg|internal|include", re.I)
"""A folder of a program's own source: its library code (`src/embed.py`,
`src/DisplayController.swift`, `Core/Src/main.c`)."""
_ENTRY = re.compile(r"main|__main__|app|dashboard|cli", re.I)
"""A program's entry point (`src/main.cpp`, `app/dashboard.py`): it drives and shows the
experiment."""


def _library(name: str) -> str | None:
    """Why a file is a program's library code, its comments and settings no part of an
    experiment's run, or None: a file in a folder of source (`src/`, `lib/`, `core/`...)
    that is no entry point and whose path names no run (`_run_file` is asked first)."""
    *folders, file = name.split("/")
    if _ENTRY.fullmatch(file.rsplit(".", 1)[0]) or not any(map(_LIBRARY.fullmatch, folders)):
        return None
    return NOT_ATTACHED + "library code in a folder of source, not the experiment's run"


def _run_file(name: str) -> str | None:
    """Why a data file or script is the experiment's own: a configuration, a shell
    script, a script named for a run, evaluation, benchmark or results."""
    lower = name.lower()
    if lower.endswith(_CONFIGURATION):
        return "a run configuration"
    if lower.endswith(_SCRIPT):
        return "a run script"
    named = _RUN_PATH.search(lower.rsplit(".", 1)[0])
    return f"a run script: its path says {named.group(0)!r}" if named else None


def attachment(
    where: Where,
    lines: list[str],
    sentence: str,
    fenced: Mapping[int, tuple[int, int]],
    docstrings: frozenset[int],
) -> str:
    """Why the claim read at `where` (its sentence `sentence`, its file's `lines`; the
    lines in code blocks, `fenced`, and in docstrings) is attached to results, or
    NOT_ATTACHED and why it is not."""
    if where.how == "code":
        return _in_code(where, lines, docstrings)
    if where.how in ("prose", "shown"):
        other = _other_works_notes(where.name, lines, where.line, sentence)
        if other:
            return NOT_ATTACHED + other
    if where.how == "shown":
        return _in_block(where, lines, sentence, fenced)
    why = _told(sentence) or _named(sentence) or _reported(_near(lines, where.line))
    if why:
        return why
    if where.how == "embedded":
        return _run_file(where.name) or _library(where.name) or "prose in the experiment's code"
    if _is_report(where.name):
        return "the folder's own report"
    return _designed(sentence) or (
        NOT_ATTACHED + "no result reported near it, nor the experiment told as done"
    )


def _in_code(where: Where, lines: list[str], docstrings: frozenset[int]) -> str:
    """A setting, flag, loop or list of a configuration or script: run, unless shown in a
    docstring or as a command in a program's text."""
    if where.line in docstrings:
        return NOT_ATTACHED + "shown in a docstring, not run"
    if not where.name.lower().endswith(_SCRIPT) and _COMMAND.match(lines[where.line - 1]):
        return NOT_ATTACHED + "a command shown in a program's text, not run"
    return _run_file(where.name) or _library(where.name) or "a setting of the experiment's code"


def _in_block(
    where: Where, lines: list[str], sentence: str, fenced: Mapping[int, tuple[int, int]]
) -> str:
    """A claim in a write-up's code block: attached when the lines around the block report
    results or tell it as run, when it is a program's output reporting results, or when
    the block is in the folder's own report."""
    around = _around_block(lines, fenced[where.line])
    why = _told(around) or _reported(around)
    if why:
        return "a code block told as run: " + why
    offered = _alternatives(lines, sorted(fenced))
    if offered:
        return NOT_ATTACHED + offered
    if not _CODE_LINE.match(sentence):  # a program's output shown, not its call
        why = _reported(sentence)
        if why:
            return why
    if _is_report(where.name) and not _usage(where, lines):
        return "a code block in the folder's own report"
    return NOT_ATTACHED + "a code block in a write-up, not told as run"


_SHOWN_COMMAND = re.compile(
    r"^\s*(?:[$>]\s*)?[\w./-]+(?:\s+[\w./:-]+)*\s+--?[a-z][\w-]*[=\s]", re.I
)
r"""A command line with a flag (`python main.py train --n-samples 50000`, `mlx_lm.benchmark \`
then `--num-trials 3`: a flag alone on a continued line too)."""
_FLAG_LINE = re.compile(r"^\s*--?[a-z][\w-]*[=\s]\s*\S", re.I)
_RAN_HEADING = re.compile(
    r"reproduc|replicat|results?|experiments?|evaluat|benchmark\s+runs?|what\s+(?:was|we)\s+ran|"
    r"復現|复现|再現|재현|結果|结果|결과|实验|實驗|実験|실험",
    re.I,
)


def _usage(where: Where, lines: list[str]) -> bool:
    """Whether a count in a code block of a README (not of a file in a folder of results
    or reports) is a command shown for use, not the run
    behind its results: a command line with a flag (or a flag continuing one) whose
    nearest heading names no reproduction, results or experiments (`## Option A: Quick test`,
    `### 4. Benchmark (mlx_lm.benchmark)`; not `## Reproduce` nor `## Results`)."""
    line = lines[where.line - 1]
    if not (_SHOWN_COMMAND.match(line) or _FLAG_LINE.match(line)):
        return False
    if any(map(_REPORT_PART.fullmatch, where.name.lower().split("/")[:-1])):
        return False  # results/bench-notes.md: the command its results came from
    return not _RAN_HEADING.search(_headings_above(lines, where.line).split("\n", 1)[0])


def _alternatives(lines: list[str], shown: list[int]) -> str | None:
    """Why a write-up's code blocks offer alternatives rather than show what was run: one
    flag counting runs given two or more values in them (`shown`: the 1-based lines in code
    blocks; `--num-runs 1` for a quick test, `--num-runs 5` for the standard one, in one
    block or in two)."""
    values: dict[str, set[str]] = {}
    for number in shown[:2000]:
        for flag, value in _COUNT_FLAG.findall(lines[number - 1][:300]):
            values.setdefault(flag.lower().replace("_", "-"), set()).add(value)
    for flag, given in values.items():
        if len(given) > 1:
            listed = ", ".join(sorted(given, key=int))
            return f"alternatives offered in code blocks ({flag} {listed}), not what was run"
    return None


def attached(rule: str) -> bool:
    """Whether a reason from `attachment` attaches its claim."""
    return not rule.startswith(NOT_ATTACHED)
