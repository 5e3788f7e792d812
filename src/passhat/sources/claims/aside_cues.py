"""The patterns aside.py reads a number's sentence with: what, just before or after a
number, sets it aside (a limit, a plan, a condition, a negation, an instruction, a
schedule, another work's runs...). Each names, in its docstring or comment, what it
matches; aside.py decides with them, and docs/audit.md names every rule.
"""

from __future__ import annotations

import re

from passhat.sources.claims.grammar import WORD
from passhat.sources.claims.vocabulary import PROSE_NOUNS, nouns

_ASIDE: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (name, re.compile(before, re.I), re.compile(after, re.I))
    for name, before, after in (
        # (what sets a number aside, text just before it, text just after it)
        (
            "a limit, not a count of runs",
            r"(?:up\s+to|at\s+most|a\s+maximum\s+of|maximum\s+of|max(?:imum)?|no\s+more\s+than|"
            r"as\s+many\s+as|a\s+limit\s+of|capped\s+at|a\s+budget\s+of|<=|≤|"
            r"(?:do\s+not|don['’]t|never|must\s+not|should\s+not)\s[^.;!?]{0,60}?\bmore\s+than|"
            r"retr(?:y|ies|ied)\b.{0,20}|bis\s+zu|höchstens|maximal|jusqu['’]à|au\s+plus|hasta|"
            # a limit in French, Spanish, Portuguese, German, Italian, Russian: "o limite ... é de"
            r"(?:limite|límite|лимит)\b[^.;:!?\d]{0,30}|máximo(?:\s+de)?|massimo(?:\s+di)?|"
            r"maximum(?:\s+de)?|максимум|не\s+более|até|fino\s+a|no\s+más\s+de|pas\s+plus\s+de|"
            r"nicht\s+mehr\s+als|non\s+più\s+di|não\s+mais\s+(?:que|de)|"
            r"(?:最多|至多|上限|最大)[^，。,;；]{0,8})\s*$",
            r"^\D{0,40}?\b(?:per|each|every)\s+(?:tool[-\s]call|call|api\s+call|request|step)\b",
        ),
        (
            "training epochs, not evaluation runs",
            r"(?:(?<![a-z])train(?:ed|ing|s)?(?![a-z])|fine-?tun|warm-?up|训练|訓練).{0,60}$",
            r"^(?!x)x",
        ),
        (
            "training or tuning, not evaluation runs",
            r"(?:optuna|hyper-?param\w*|\bhpo\b|grid\s+search|random\s+search).{0,60}$",
            r"^(?!x)x",
        ),
        (
            "a batch size",
            r"(?:batch[-_\s]?size\b.{0,12}|(?:mini-?)?batch(?:es)?\s+of\s+)$",
            r"^\D{0,20}?\b(?:per|each|in\s+(?:a|each|every))\s+(?:mini-?)?batch\b",
        ),
        (
            "the latest records, not runs",
            r"(?:直近|過去|最新|最近|\b(?:the\s+)?(?:last|past|latest|most\s+recent))\s*$",
            r"^(?!x)x",
        ),
        (
            "k counts neighbours or clusters",
            r"(?:top[-_\s]?|k-nn.{0,10}|k-means.{0,20}|(?:neighbou?rs?|knn|clusters?)\W{0,3}(?:k\s*[=:]?\s*)?)$",
            r"^\s*(?:nearest|neighbou?rs?|clusters?|-?nn\b)",
        ),
    )
)
_TODO = re.compile(r"^\W*\[ \]")
"""An unchecked box: a to-do ("- [ ] run each configuration 3 times"); a ticked one is done."""
_MODAL = re.compile(
    r"\b(?:will|would|should|could|might|shall)\b|\w['’](?:d|ll)\b|我们将|我們將|将会|將會|将要|將要|"
    r"かも(?:しれ)?|[てで](?:も)?(?:いい|良い|よい)|"
    r"\b(?:sera|seront|serait|seraient|allons|será|serán|sería|serían|serão|seria|seriam|"
    r"würde|würden|будет|будут|будем|sarà|saranno|zal|zullen|zou|zouden)\b",
    re.I,
)
"""A modal in the number's own clause: "we will run 5 seeds", "5 runs would be needed", "5回の
平均にしてもいいかも" (could take the mean of 5, maybe)."""
_CLAUSE_END = re.compile(r"[,;:—–]")
_ASIDE_IN_PARENS = re.compile(r"\([^()]{0,200}\)")
"""A parenthesis within a clause: skipped when the clause is read for a modal ("variance
over multiple runs (e.g., over 3 runs) would strengthen it")."""
_TRAILING_COMMENT = re.compile(r"\s(?:#|//)")
"""Where a setting's comment starts: a modal there tells what the setting does ("N_RUNS=10
# this means we will run each fuzzer 10 times"), not a plan."""
_PLAN = re.compile(
    r"\b(?:plan(?:s|ned)?\s+to|future\s+work|if\s+(?:budget|time)|"
    r"ideally|intend\s+to|to\s+be\s+run|going\s+to|shall|proposal|roadmap|(?-i:TODO)|todo(?=\s*[:：(]))\b|"
    r"\bplan(?:ned)?\s*[:：]|"
    r"\bnext\s+steps?\s*[:：]|(?:下一步|下一项|下一項|接下来要|接下來要)\s*[:：]|"
    r"计划|計劃|未来|未來|将来|將來|予定|計画|べき|ものとする|"
    # French, Spanish, Portuguese, German, Russian, Korean: planned, future, later
    r"\b(?:prévu|prévoir|à\s+venir|planifi\w*|previst[oa]s?|planead[oa]s?|planejad[oa]s?|"
    r"futur[oa]s?|geplant\w*|künftig\w*|zukünftig\w*|später|планиру\w*|в\s+будущем|"
    r"pianificat\w*|gepland\w*|toekomstig\w*)\b|"
    r"향후|계획|예정|추후",
    re.I,
)
_CONDITION = re.compile(  # in the number's own clause, before it: "if you run it 5 times"
    r"\b(?:if|unless|whether|suppose|supposing|assuming|imagine|recommend(?:s|ed)?|"
    r"suggest(?:s|ed)?|advis(?:e|es|ed)|encourage[sd]?|consider|must|needs?|require[sd]?|ought\s+to|"
    r"(?:you|users?|one)\s+(?:can|may)|can\s+be|lets?|allows?|supports?|accepts?|try|"
    r"for\s+example|for\s+instance|such\s+as|"
    r"best\s+practice|(?:typical|common|standard|usual|good)\s+practice|"
    r"it\s+is\s+(?:best|advisable|good\s+practice)|until|possibly|potentially|"
    r"perhaps|maybe)\b[^,;:.!?()，；：。！？\"“”]*$|"
    r"\b(?:needs|requires|required|calls\s+for|until)\b[^;:.!?()]{0,160},[^;:.!?()]{0,160}$|"
    r"\b(?:for|with|given)\s+an?\s+[\d.]+\s*%[^,;:.!?()，；：。！？\"“”]*$|"
    r"(?:如果|如需|若要|假如|可以|建议|建議|推荐|推薦|需要|必须|必須)[^。；;！？!?]*$|"
    # French, Spanish, Portuguese, German, Russian: if, must, should, recommended, one has to
    r"\b(?:si|wenn|falls|если|il\s+faut|hay\s+que|tem\s+que|doit|doivent|devrait|devraient|"
    r"debe|deben|debería|deberían|deve|devem|deveria|deveriam|sollte|sollten|muss|müssen|"
    r"следует|нужно|необходимо|должн\w*|recommand\w*|recomend\w*|empfohlen|empfehl\w*|"
    r"рекоменд\w*|bisogna|occorre|dovrebbe(?:ro)?|consigliat\w*|moet|moeten|aanbevolen)\b"
    r"[^,;:.!?()，；：。！？\"“”]*$",
    re.I,
)
_IF_SENTENCE = re.compile(
    r"^\W*(?:(?:for\s+(?:example|instance)|e\.\s?g\.|say|so|but|and|now)\W{0,3}\s*)?"
    r"(?:(?:if|unless(?!\s+(?:otherwise|stated|noted))|suppose|supposing|assuming)\b|"
    r"for\s+an?\s+[\d.]+\s*%)",
    re.I,
)
"""A sentence opening with a condition: its main clause is hypothetical too ("If our
evaluator drifts from the image, local Pass^3 stops being comparable"), after "For example"
too ("For example if the sizes are [5, 15, 30], ... sampled another 15 times")."""
_PLAN_LABEL = re.compile(
    r"^\W*(?:mitigations?|proposals?|recommendations?|suggestions?|requirements?|"
    r"acceptance(?:\s+criteria)?)\s*[:：]",
    re.I,
)
"""A label of a plan, a requirement or a target opening the sentence: "Mitigation: 3 runs
per prompt per engine" (not told in the first person: "Mitigation: we run 20 replicates")."""
_QUESTION = re.compile(r"[^\W\d_]\s*[?？]\s*$")
"""A sentence ending in a question mark after a word (not a shell's `$?`)."""
_RECOMMENDED_LIST = re.compile(
    r"\b(?:recommend\w*|suggest\w*|advis\w*|practices|guidelines)\b[^.!?]{0,60}[:：][^.!?]*$", re.I
)
"""A list of recommendations the number sits in: "we recommend three practices: (1)
estimate pass@1 from multiple runs per task"."""
_CONDITION_AFTER = re.compile(
    r"^[^,;:.!?]*\b(?:(?:is|are)\s+)?(?:recommended|suggested|advised|needed|required|planned|"
    r"proposed)\b|^[^,;:.!?]*\bonly\s+(?:if|when)\b|"
    r"^[^.;!?。]*(?:권장|추천|필요|해야|하면|한다면|편이\s*(?:안전|좋|낫)|것이\s*(?:좋|바람직))",
    re.I,
)
"""A condition after the count in its clause: "3 runs are recommended", "2 more seeds only
if we decide to chase a ceiling", "three runs per task only when the route serves"; in
Korean, whose verb follows the count: "3회 반복하는 편이 안전하다" (it is safer to repeat 3
times), "…해야 한다" (must), "…권장" (recommended)."""
_NEGATED = re.compile(
    r"\b(?:not|never|nor|without|instead\s+of|rather\s+than)\s+(?!only\b|just\b)(?:[a-z]+\s+){0,2}"
    r"[`'\"“*_]{0,2}(?:--?[\w-]+[=\s]\s*)?$"
    r"|\b(?:nothing|none|no\s+(?:one|run|task|configuration|experiment|model|seed))\s+(?:was|were|is|are|"
    r"has\s+been|got)\s+(?:\w+\s+){0,2}$"
    r"|(?:不是|并非|並非|而非|沒有|没有)[*_\s]*$"
    r"|\b(?:sans|sin|sem|ohne|без|nicht|keine?[nrs]?|не|нет|não|jamais|nunca|senza|zonder|"
    r"niet|geen)\s+(?:[^\W\d_]+\s+){0,3}$",
    re.I,
)
"""A count denied just before it: "not ten independent runs", "nothing was run twice", "do not impersonate ten", "sends
one attempt, not `--n-attempts 3`" (a quoted flag)."""
_NEGATED_AFTER = re.compile(
    r"^[^.;,:!?]{0,40}?\b(?:(?:were|was|are|is|have|has|had|been|be|do|does|did)\s+(?:not|never)|"
    r"(?:weren|wasn|aren|isn|haven|hasn|hadn|don|doesn|didn)['’]t)\b|"
    r"^[^。；;\n]{0,40}?(?:未実施|未実行|未执行|未執行|未进行|未進行|していない|しなかった|範囲外|范围外)",
    re.I,
)
"""A count denied just after it: "3 runs per task were not performed", "3 seeds per model
weren't run", "各3回…は未実施" (not carried out), "…范围外" (out of scope)."""


def _imperative(verbs: str) -> re.Pattern[str]:
    return re.compile(
        r"(?:^|[.;:!?][*_]*\s|,\s(?:and\s+|or\s+)?|\b(?:then|first|please)\s)\W*(?:for\s+[\w\s-]{1,40}?\s)?"
        + verbs
        + r"\b(?!\s*[:：])(?:(?!\b(?:because|since|as|which|that|where|when|so|but)\b)"
        r"(?:[^.;!?\"]|\.(?=[\w/])))*$",
        re.I,
    )


_IMPERATIVE = _imperative(
    r"(?:use|set|try|add|freeze|choose|pick|re-?run|specify|increase|raise|lower|change|"
    r"consider|ensure|make\s+sure|remember|report|configure|switch|bump|keep)"
)
"""An instruction: the number's clause opens with a verb telling the reader what to do
("For a smoke check use --num-trials 5", "then re-run it with --num-trials 3"); a quoted
title after the verb is no part of its clause (`set title "Ratio (n=5 runs)"`); a period
inside a name ("eval.py") ends no clause."""
_RUN_IMPERATIVE = _imperative(
    r"(?P<verb>run|repeat|sample|evaluate|record|measure|collect|perform|launch|start|submit|"
    r"kick\s+off)"
)
"""An instruction to run, in prose ("Run 3-10 independent trials per task"); in a script's
comment ("# run each task 10 times") it tells what the script does."""
_RUN_OBJECT = re.compile(
    r"\s+(?:each|every|all|the|it|this|these|them|your|a|an|`|at\s+least|\d+\s*(?:[-–]|to)\s*\d+|"
    r"(?:\d+|" + WORD + r")\s+(?:[a-z-]+\s+){0,2}" + nouns(PROSE_NOUNS) + r"|"
    r"(?:[\w./'`-]+\s+){1,4}?(?:\d+|" + WORD + r")\s*(?:times|x)(?![a-z]))\b",
    re.I,
)
"""What follows a verb of running told to the reader: its object ("Run each task", "Run
3-10 independent trials", "Run three attempts per task"), not a run's number or a label ("Run 1 took 8.9 s", "Run
count: 5"); a named thing run N times ("Run SWE-bench Lite 5 times")."""
_OUTCOME_AFTER = re.compile(r"^[^.;!?]{0,60}?\band\s+(?:the|its|it|you|your)\b", re.I)
"""An imperative that states a fact by its outcome: "Run the same task eight times and the
share it gets right falls below 25%" (a conditional, told as a result)."""
_ENDS_SOON = re.compile(r"[^.;!?\n]{0,40}[.;]")
_STOP_AFTER = re.compile(
    r"^[^.;!?\n]{0,40}?(?:[.,;:]\W*|\s)(?:and\s+)?then\s+(?:stop|give\s+up|revert|abort|halt|"
    r"escalate|move\s+on|mark|bail|skip|fail)\b",
    re.I,
)
"""A budget: "Three attempts per task, then stop", "Two attempts per task. Then revert"."""
_SCHEDULE = re.compile(r"\bcron(?:tab)?\b|排程|定時|定时|[每天][天日晚週周月年]|每小[時时]", re.I)
_JUDGED = re.compile(
    r"\b(?:judge|judges|grader|graders|rater|raters|annotator|annotators|labell?ers?)\b"
    r"[^.;]{0,40}$|\bannotated\s+$",
    re.I,
)
_JUDGED_AFTER = re.compile(
    r"^[^.;]{0,30}\bby\s+(?:different\s+|\d+\s+)?(?:raters|annotators|judges)\b", re.I
)
"""A judge's or an annotator's repeats: "the judge is queried 3 times per answer", "each
sample was annotated 3 times by different raters"."""
_CI = re.compile(
    r"\bCI\s+(?:runs?|iterations?|jobs?|builds?|pipelines?|ledger)\b|\bbuilds\b|GitHub\s+Actions|"
    r"\bworkflow\s+runs\b|\bpipelines?\s+runs?\b",
    re.I,
)
"""Runs of a CI pipeline or a build ("## CI iteration ledger (5 runs)", "in the failed
builds ... (13 runs)"): no evaluation's runs."""
_SCHEDULE_AFTER = re.compile(
    r"^\s*(?:times\s+)?(?:(?:a|per|each|every)\s+(?:day|night|hour|week|month|year)\b|daily\b|"
    r"nightly\b|hourly\b|weekly\b|monthly\b|yearly\b|annual)|^\s*次?\s*(?:年度|每年|每天|每日)|"
    r"^\s*times\s+(?:over|in|within|during)\s+(?:~\s*|about\s+|approximately\s+|roughly\s+)?"
    r"(?:a|an|one|\d+(?:\.\d+)?)\s*-?\s*(?:s|secs?|seconds?|ms|milliseconds?|mins?|minutes?)\b",
    re.I,
)
"""A schedule: "three times a day", "nightly", "每天執行三次", a cron job; a polling rate:
"check 5 times over 1 minute", "sampled 8 times over ~1 minute" (seconds or minutes: a
probe, not runs)."""
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
_SUGGESTED = re.compile(
    r"(?:\b(?:suggestions?|example\s*:|e\.g\.|recommendations?|defaults|default\s*[:=(]|"
    r"\(\s*default|by\s+default|default\s+value|proposed|proposals?|propose[sd]?|options?\s*:)"
    r"|\billustrat\w*|\bhypothetical|\bdemonstrat\w*|\b(?:an|this|the\s+following)\s+example\b|"
    r"建議|建议|例如|比如|示例|範例|范例|默认|預設|补充"
    r"|\b(?:par\s+exemple|por\s+ejemplo|por\s+exemplo|zum\s+beispiel|z\.\s?b\.|например|"
    r"ad\s+esempio|per\s+esempio|bijvoorbeeld)|예를\s*들어)"
    r"(?:[^.;!?()\n]|\.(?=\d)){0,80}$",
    re.I,
)
"""An example, a default, a suggestion or a proposal before it in its sentence
("Proposed defaults are ... three random seeds", `suggestion: "seeds: [0, 1, 2]"`, "here is
an example with four seeds")."""
_CODE_DOES = re.compile(
    r"\b(?:scripts?|tools?|functions?|helpers?|utilit(?:y|ies)|modules?|tests?|commands?)\s+that\s+"
    r"[^,;:.!?]*$",
    re.I,
)
"""What a piece of code does, told before the count in its clause: "a script that averages
runs across seeds", "determinism tests that compare the values across five runs" (a tool
described, not runs made; not in a sentence told in the first person or in the past)."""
_FIRST_PERSON = re.compile(r"\b(?:we|our|us|(?-i:I))\b", re.I)
_DONE = re.compile(r"\b(?:ran|was|were|produced|gave|yielded|reported)\b", re.I)
"""A sentence telling what was done ("the evaluation script that runs each task 5 times
produced Table 1"): the code's work is the experiment's."""
_DRY_RUN = re.compile(r"\bdry[-_ ]?run\b|--dry\b|--dryrun\b", re.I)
"""A dry run: the command shows what would run and runs nothing ("--dry-run", "dry run 5
tasks")."""
_CHECK_PASSED = re.compile(
    r"\b(?:successfully|succeeded|to\s+(?:verify|check|confirm|ensure)|verified|"
    r"no\s+(?:errors?|duplicates?|failures?|regressions?|crash(?:es)?|diffs?)|all\s+(?:green|pass(?:ed)?|match(?:ed)?)|"
    r"(?:all|both)\s+runs\s+(?:match|matched|agree)|identical\s+(?:output|results?|hashes|bytes|json)|"
    r"with\s+identical|zero\s+(?:divergence|errors?|diffs?)|grün|vérifié\w*|aucun(?:e)?\s+(?:doublon|erreur)|"
    r"sans\s+erreur|fehlerfrei|keine\s+fehler|0\s+(?:errors?|erreurs?|fehler|failures?))\b|✅|✔|"
    r"全部通过|全部通過|均通过|均通過|並通過|并通过|都通过|都通過|一致|成功することを確認|成功を確認|"
    r"再発がない|問題がない|没有报错|沒有報錯|无报错|無報錯",
    re.I,
)
"""A check's verdict with no score: "successfully", "to verify", "no errors", "all green",
"identical output", "zero divergence", ✅, "全部通过" (all passed), "一致" (consistent),
"成功することを確認" (confirmed it succeeds), "aucun doublon" (no duplicate)."""
_EQUIVALENT = re.compile(
    r"\b(?:zero\s+(?:divergences?|diffs?|differences?)|byte-?\s*identical|all\s+match(?:ed)?|"
    r"(?:all|both)\s+runs\s+(?:match|matched|identical))\b",
    re.I,
)
"""A check that runs are equivalent, a verdict on the code whatever it names: "27 000 valeurs
comparées sur 5 graines, zero divergence", "3 seeds each run twice, all match"."""
_CODE_CHECKED = re.compile(
    r"\b(?:idempot\w*|determinis\w*|flak(?:y|iness)|reproducible\s+builds?|builds?|"
    r"migrations?|initiali[sz]ers?|(?:seed|import|setup|install|migration|build)\s+(?:script|command)s?|"
    r"scripts?|generators?|commands?|regressions?|(?:unit|integration|race|smoke|e2e|journey)\s*-?tests?|"
    r"tests?\s+(?:suite|run)s?|test\s+suites?|tests|fixtures?|byte-identical|schemas?|"
    r"integrationstests?|tests?\s+unitaires|commande)\b|"
    r"冪等|幂等|回归测试|回歸測試|回帰|単体テスト|ユニットテスト|テスト|ビルド|单元测试|單元測試|测试用例|測試用例|"
    r"脚本|腳本",
    re.I,
)
"""Code being checked: idempotence, determinism, a flaky test, a build, a migration, a
script or command, a regression or unit test, in several languages (冪等, 回归测试,
ユニットテスト, Integrationstests, commande)."""
_EVALUATED = re.compile(
    r"(?<![\w-])(?:accuracy|pass\s*rates?|success\s*rates?|scores?|rewards?|pass\s*[@^]|resolved|agents?|"
    r"models?|llms?|prompts?|configurations?|benchmarks?)\b|准确率|準確率|通过率|通過率|成功率|正解率|得分|"
    r"\d\s*%|\b\d*\.\d+\b",
    re.I,
)
"""An evaluation named or scored in the sentence (accuracy, a pass rate, agents, models,
a percentage, a decimal): its runs are the evaluation's, whatever was checked with them."""

# ---------------------------------------------------------------- around the number
_TIMES = r"^(?:\s*(?:times|x|×)\b)?"
_VARIANTS_AFTER = re.compile(
    _TIMES
    + r"\W{0,3}(?:[:—–]|\s-\s)\s*(?:first|once|one\s+(?:with|without|as|for|on|in|using))\b|"
    + _TIMES
    + r"[^.;:!?\n]{0,40}?[:—–]\s*(?:once|one)\s+(?:with|without|by|as|for|on|in|using|under|via)\b|"
    + _TIMES
    + r"\s*,?\s*(?:each\s+time\s+)?(?:with\s+a\s+different|changing|varying|swapping|switching)\s+"
    r"(?!(?:only\s+)?(?:the\s+)?(?:random\b|seeds?\b|initiali[sz]ations?\b))[a-z]|"
    + _TIMES
    + r"[^.;:!?\n]{0,40}?\b(?:used|uses|using|had|has|ran\s+with|with)\s+a\s+different\s+"
    r"(?!random\b|seed|initiali[sz]ation)[a-z]|"
    + _TIMES
    + r"\W{0,3}(?:—|–|\(|,)?\s*once\s+(?:with|without)\b|"
    + _TIMES
    + r"\W{0,3}(?:—|–|\(|,|:)?\s*(?:once\s+)?with(?:out)?\s+(?:and|&|or)\s+with(?:out)?\b|"
    + _TIMES
    + r"[^.;:!?\n]{0,40}?[:—–]\s*(?:at|under|from|on|in|with|using)\s+(?!(?:the\s+|a\s+)?"
    r"(?:random\s+)?seeds?\b)[^.;:!?\n]{1,50}?\s+and\s+(?:at|under|from|on|in|with|using)\s+"
    r"(?!(?:the\s+|a\s+)?(?:random\s+)?seeds?\b)",
    re.I,
)
"""A count of runs that are different configurations: "each task twice — first without
X, then with X", "twice: once with the tool and once without", "3 times, with and
without the skill", "twice under identical conditions: once by a subagent that reads the
skill, once by one given the prompt alone", "three times, changing the prompt" (not
"varying the seed"), "each run twice from one state: at the drawn heading and at its
opposite" (not "twice: with seed 0 and with seed 1")."""
_CHANGED_BEFORE = re.compile(
    r"(?:只|仅|僅)?(?:换|換|改变|改變|更换|更換)[^，。,;；:：]{1,24}$|"
    r"\b(?:changing|varying|swapping|switching)\s+"
    r"(?!(?:only\s+)?(?:the\s+)?(?:random\s+)?seeds?\b)[a-z][^,;.:]{0,30}$",
    re.I,
)
"""Runs told by what changed between them, before the count: "只换回写键名跑了三次" (ran it
three times, changing only the key's name), "swapping the model, we ran it three times"."""
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
_SAME_INPUT = re.compile(
    r"same\s+input|(?:同样|同樣|相同)的?输入|(?:同样|同樣|相同)的?輸入|"
    r"(?:same|identical)\s+(?:settings?|config\w*|prompts?|seeds?)\b[^.!?。]{0,80}\b(?:different|differ\w*|"
    r"vary|varies|varied)\b|(?:同样|同樣|相同)的?(?:設定|设定|配置|参数|參數|提示)[^。]{0,30}(?:不同|不一样|不一樣)",
    re.I,
)
"""A statement about determinism: "the same input, run 100 times, gives the same result",
"the same settings run twice give different results", "同樣設定跑兩次結果不同"."""
_TRAINING_UNIT = re.compile(r"epoch|rollout", re.I)
"""Units a sentence about training counts in ("fine-tuned for 3 epochs", "we train with 4
rollouts per prompt"); seeds and runs stay claims there."""
_TUNING_UNIT = re.compile(r"\btrials?\b", re.I)
"""The unit a hyper-parameter search counts in ("chosen with 50 Optuna trials")."""
_OTHER_WORK = re.compile(
    r"\b(?:original\s+(?:paper|work|authors?|study|implementation|results?|benchmark|setup|"
    r"protocol)|et\s+al\.?|"
    r"prior\s+work|previous\s+work|the\s+authors|the\s+(?:(?-i:[A-Z])[\w-]*\s+){0,3}(?:paper|study|article|preprint|"
    r"launch\s+(?:post|page)|blog\s+post|post|leaderboard|system\s+card)|(?:the\s+)?vendors?)\s+"
    r"(?:\w+\s+){0,2}?(?:shows?|showed|shown|reports?|reported|uses?|used|ran|runs|averages?|"
    r"averaged|evaluates?|evaluated|says|said|states|stated|quotes?|quoted)\b[^.;]{0,60}$|"
    r"(?:原论文|原論文|原文|原作者)[^。；;]{0,30}$|"
    r"\b(?:el\s+autor|los\s+autores|l['’]auteur|les\s+auteurs|o\s+autor|os\s+autores|"
    r"der\s+autor|die\s+autoren|автор[аыу]?|model[-\s]cards?)\s+(?:\w+\s+){0,2}?(?:publica|"
    r"reporta|muestra|incluye|publie|rapporte|montre|contient|relata|mostra|inclui|bericht|"
    r"zeig|veröffentlich|enthält|сообща|приводи|публику|includ|report|show|list|state)\w*"
    r"[^.;]{0,160}$",
    re.I,
)
"""Another work's runs: "(the original paper shows performance averaged over 4 runs)", "the
authors report...", "the study ran...", "the launch post says...", "the one vendors quote"
in other languages ("los autores reportan"), a model's card (its maker's
measurements: "the model card reports throughput (mean of 5 runs)") (but
"following the original paper, we average over 5 seeds" claims 5)."""
_PAPER_SUBJECT = re.compile(r"(?:论文|論文|该文|該文|作者|著者|논문|저자)[^。；;！？!?\n]{0,100}$")
"""A paper or its authors named before the count in its sentence, in Chinese, Japanese or
Korean, whose word order puts them first: "论文正文只说明每个基线运行 5 次取平均", "論文では各
設定を5回実行した平均を報告している" (not told in the first person: "论文的设置下，我们每个任务
跑了 3 次" claims 3)."""
_OWN_WORDS = re.compile(
    r"我们|我們|我々|私たち|우리|本研究|本实验|本實驗|本论文|本論文|本稿|본\s*논문"
)
_NOT_OURS = re.compile(
    r"(?:不是|并非|並非|而非|非)(?:本文|我们|我們|本研究|本实验|本實驗)[^。；;\n]{0,24}"
    r"(?:实测|實測|测量|測量|测得|測得|结果|結果|数据|數據)|"
    r"\bnot\s+(?:new|fresh|our|this\s+(?:work|report|study|post|article)['’]s)\s+(?:own\s+)?"
    r"(?:measurements?|results?|numbers|runs|data)\b",
    re.I,
)
"""The figures said not to be this work's own, in the number's sentence or the next one:
"至少三次运行的平均值 ... 也不是本文的实测结果" (nor are they this article's measurements),
"averaged over five runs by the vendor, not our own measurements", "they are not new
measurements"."""
_NOT_OURS_WORDS: tuple[str, ...] = ("平均", "均值", "mean", "average", "vendor", "official", "官方")
"""Words of a figure quoted from elsewhere, without which the next sentence is not read."""
_RESTATED = re.compile(r"\s*(?:that\s+is|i\.e\.|namely|i\.\s*e\.)\b", re.I)
"""A clause restating the one before it ("This will run 50 experiments; that is 10
initialisations and 5 rounds"): read with it, its modal too."""


_PARTICIPLE = re.compile(
    r"\s*(?:averaged|aggregated|measured|computed|taken|estimated|evaluated|pooled|pass\s*@)\b",
    re.I,
)
"""A clause that is a participle phrase of the one before it ("…will be 10% lower than the
baseline, averaged across 3 seeds"): read with it, its modal too."""


FOLLOWED = re.compile(
    r"\b(?:following|as\s+in|as\s+with|like|per|according\s+to|in\s+line\s+with|"
    r"consistent\s+with|adopting|as\s+(?:done|described|specified|prescribed|proposed)\s+(?:in|by))"
    r"\s+(?:the|this|that|their|its)\s+(?:original\s+)?(?:paper|authors?|study|article|preprint)"
    r"(?:['’]s?(?:\s+[\w-]+){0,2}?\s+(?:protocol|setup|set-?up|settings?|procedure|recipe|"
    r"configuration|design|method|practice))?",
    re.I,
)
"""Another work named only as the one whose method is followed: "Following the paper,
each task was run 10 times", "as in the original paper's protocol" (the sentence tells the
writer's own runs; in a file of notes, claims/attached.py)."""


_ORDINAL_BEFORE = re.compile(r"第\s*$")
"""An ordinal in Chinese: "第三次实验" (the third experiment), "第 2 轮" (round 2)."""

_PLACEHOLDER = re.compile(
    r"<(?!/?(?:a|b|i|u|p|br|hr|em|strong|code|pre|span|div|sup|sub|img|td|tr|th|table|li|ul|ol|"
    r"kbd|details|summary|small|mark)\b)[A-Za-z][\w./ -]{0,60}>"
)
"""A placeholder the reader fills in (`<full-commit-id>`, `<path/to/repo>`): its command is
a usage template, not one that was run (not an HTML tag, `<b>`)."""

_COMPUTED = re.compile(r"[×*]\s*[^=\n.;!?×*]{0,40}=\s*\d")
"""A product worked out in the number's sentence ("1 pair × 1 scenario × 5 trials = 5
matchups"): in a test file, the expected value of a fixture."""

_TEST_COMMAND = re.compile(
    r"\b(?:cargo|go|npm|yarn|pnpm|bun|deno|mix|dotnet|mvn|gradle|make)\s+test\b[\w:-]*|"
    r"\b(?:pytest|rspec|ctest|phpunit|vitest|jest|tox)\b",
    re.I,
)
"""A command running the code's own tests, named in the number's sentence: "Ran three times
locally (`cargo test` aborts ...)", "a full `make test-integration`": the test suite's runs,
not the evaluation's (unless an evaluation is named or scored there, `_EVALUATED`)."""

_SIGNATURE = re.compile(
    r"\b(?:def|function|fn|func|sub)\s+[\w$]+\s*\([^()]{0,300}$|\bconstructor\s*\([^()]{0,300}$"
)
"""A setting in a function's parameter list (`def __init__(self, players, repetitions=10):`,
`function bench(fn, { trials = 5 } = {})`): the default a caller may change, not a run."""
_SIMULATION_CALL = re.compile(
    r"\b\w*(?:simulat|monte_?carlo|montecarlo|tournament)\w*\s*\([^()]{0,300}$", re.I
)
"""A setting inside a call of a simulation (`simulate_market(agents, repetitions=100)`,
`Tournament(players, repetitions=10)`): its repetitions are the model's draws, not runs of
an evaluation (its trials and seeds stay claims: a simulated user's episodes are runs)."""
_SIMULATION_KEY = re.compile(r"trial|seed|epoch|attempt|episode", re.I)
_PUBLISHED = re.compile(
    r"\b(?:official|published)\s+(?:leaderboard|results?|numbers|scores|baselines?|models?|"
    r"checkpoints?)\b[^.;]{0,60}$",
    re.I,
)
"""Another work's figures named as official or published just before the count: "Official
leaderboard models (5 seeds each)" (not told in the first person: "we re-ran the published
baselines with 3 seeds")."""
_THRESHOLD = re.compile(
    r"\b(?:falls?|drops?|dips?|sinks?|goes)\s+(?:below|under)\b|\b(?:fällt|sinkt)\b[^.;!?]{0,60}\bunter\b|"
    r"\bunter\s+\d[\d.,]{0,8}\s*%?\s*(?:fällt|sinkt)\b|"
    r"unterschreite\w*|\b(?:tombe|passe|descend)\w*\s+(?:sous|en\s+dessous)|\bca[ey]\w*\s+por\s+debajo|"
    r"\bcai\w*\s+abaixo|\bscend\w*\s+sotto|\bпада\w*\s+ниже|\bопуска\w*\s+ниже",
    re.I,
)
_ALERTED = re.compile(
    r"\b(?:if|whenever|as\s+soon\s+as|unless|wenn|sobald|sowie|si|d[èe]s\s+que|если|"
    r"alert\w*|alarm\w*|warn\w*|gates?|pages?|notif\w*|"
    r"alerte\w*|alerta\w*|тревог\w*|оповещ\w*)\b|^\W*(?:fällt|sinkt|liegt)\b",
    re.I,
)
"""A condition on a figure crossing a threshold, in the present: "Alarm, sobald die Rate über
drei Läufe unter 0.4 fällt", "the gate fails when the mean over 3 runs drops below 0.6" (a
rule a monitor applies; not "Retail pass^8 falls below 25%", a result)."""

_SIGNAL = re.compile(
    r"\b(?:sensors?|adc|a/d|analog(?:ue)?|voltages?|rssi|humidity|ping|packet\s+loss)\b|"
    r"노이즈|센서|전압|传感器|傳感器|センサ|电压|電圧|电平|丢包|使用率",
    re.I,
)
"""A reading of a sensor or a system signal (an ADC, a voltage, CPU usage, a ping) averaged
over several samples: "// 노이즈를 줄이기 위해 8회 측정후 평균" (8 readings averaged to reduce
noise), "查看cpu使用率(取三次平均值)": a measurement's samples, not runs of an evaluation."""
