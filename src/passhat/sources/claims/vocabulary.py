"""The nouns a run is counted by, said once: every pattern of the grammar and of the
tables that names a unit (a prose unit, a setting's key, a table column, a run's index,
a Chinese measure word) is built from these tuples, so a unit added here is read
everywhere.
"""

from __future__ import annotations

INDEX_NOUNS = ("run", "trial", "seed", "attempt", "rep", "repetition", "repeat")
"""Nouns a run is numbered by: "run 1", "seed 0", a `Trial #` column, `Run 1 | Run 2`."""
COUNT_NOUNS = (*INDEX_NOUNS, "replicate", "rollout", "sample", "completion", "epoch")
"""Nouns a count of runs is written in, in settings and table headers as in prose:
`num_trials`, `n_samples`, `| Seeds |`, `--epochs`."""
PROSE_NOUNS = (
    *COUNT_NOUNS,
    "trajectory",
    "generation",
    "episode",
    "iteration",
    "response",
    "initialization",
    "initialisation",
    "execution",
)
"""Nouns a count of runs is written in, in prose only (a setting `num_iterations` or a
column `Episodes` counts training steps as often as runs)."""
TRAINING_NOUNS = ("epoch", "iteration", "trial", "episode", "generation", "step", "rollout")
"""Nouns training or a hyper-parameter search counts in as well (an RL trainer's rollouts
per problem too): read as runs only outside a training or tuning context (docs/audit.md)."""
CHINESE_UNITS = ("次", "遍", "轮", "輪")
"""Chinese measure words of a count of runs ("跑 3 次", "三轮")."""


def plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def nouns(words: tuple[str, ...], number: str = "either") -> str:
    """A pattern of `words`, each `singular`, `plural` or `either`, longest first (so
    "repetition" is tried before "rep")."""
    forms: list[str] = []
    for word in words:
        if number in ("singular", "either"):
            forms.append(word)
        if number in ("plural", "either"):
            forms.append(plural(word))
    return "(?:" + "|".join(sorted(set(forms), key=len, reverse=True)) + ")"


def stems(words: tuple[str, ...]) -> tuple[str, ...]:
    """Lower-case substrings one of which a text holding any of `words` (in any form)
    holds, none inside another ("rep" holds "repeat"): the cheap test a rule's pattern
    waits for."""
    cut = {w[:-1] if w.endswith(("y", "e")) else w for w in words}
    return tuple(sorted(w for w in cut if not any(o != w and o in w for o in cut)))


FOREIGN_UNITS = (
    # French
    "exécutions",
    "exécution",
    "essais",
    "lancements",
    "répétitions",
    "graines",
    "tirages",
    # Spanish
    "ejecuciones",
    "corridas",
    "repeticiones",
    "semillas",
    "ensayos",
    "intentos",
    # Portuguese
    "execuções",
    "execucoes",
    "rodadas",
    "repetições",
    "repeticoes",
    "sementes",
    "ensaios",
    "tentativas",
    # German
    "läufen",
    "läufe",
    "durchläufen",
    "durchläufe",
    "wiederholungen",
    "versuchen",
    "versuche",
    # Russian, in the cases a count puts them in
    "запусков",
    "запускам",
    "запусках",
    "запуска",
    "запуски",
    "прогонов",
    "прогонам",
    "прогона",
    "прогоны",
    "повторов",
    "повторам",
    "повторений",
    "повторениям",
    "повторения",
    "сидов",
    "сидам",
    "сида",
    "сиды",
    # in the prepositional, after "на", "в": "на трёх сидах"
    "сидах",
    "прогонах",
    "повторах",
    # and in the instrumental, after "с" (with): "с тремя сидами"
    "запусками",
    "прогонами",
    "повторами",
    "повторениями",
    "сидами",
    # Italian
    "esecuzioni",
    "ripetizioni",
    "semi",
    "prove",
    # Dutch
    "herhalingen",
    "uitvoeringen",
    "pogingen",
    # the English nouns, as often written in these languages' texts ("mit drei Seeds")
    "seeds",
    "runs",
    "trials",
)
"""Plural nouns a count of runs is written in, in French, Spanish, Portuguese, German,
Russian, Italian and Dutch (and the English ones these texts borrow), read after a count with a preposition
or a statistic before it ("moyenne sur 5 exécutions", "promedio de 5 ejecuciones", "média
de 5 execuções", "über die drei Seeds", "усреднены по 10 запускам")."""

MEASURE_NOUNS = (
    "measurements",
    "timings",
    "mesures",
    "mediciones",
    "medidas",
    "medições",
    "medicoes",
    "messungen",
    "misure",
    "misurazioni",
    "измерений",
    "измерениям",
    "замеров",
    "замерам",
    "metingen",
)
"""Plural nouns of a measurement repeated, in English, French, Spanish, Portuguese, German,
Italian, Russian and Dutch: read as runs only after a statistic ("median of 5 measurements",
"media su 3 misure", "среднее по 5 замерам"), never alone ("we report 3 measurements:
latency, memory and cost" counts kinds, not repeats)."""


FOREIGN_COUNT_NAMES = (
    r"(?:运行|運行|重复|重複|实验|實驗|试验|試驗|评测|評測|采样|採樣)次数|(?:种子|種子)数|"
    r"(?:種子|种子)數|(?:運行|重複|實驗|試驗)次數|試行(?:回)?数|実行回数|シード数|"
    r"(?:반복|실행|시행|측정)\s*(?:횟수|수)|시드\s*수|"
    r"(?:nb\.?\s+|nombre\s+d['’]\s*|(?:n\.?º?|número)\s+de\s+|n\.?º?\s+|anzahl\s+(?:der\s+)?|"
    r"число\s+|кол-во\s+)?(?:exécutions|répétitions|graines|ejecuciones|repeticiones|semillas|"
    r"execuções|repetições|sementes|läufe|durchläufe|wiederholungen|запусков|запуски|прогонов|"
    r"прогоны|повторов|повторы|сидов|сиды|esecuzioni|ripetizioni|herhalingen)"
)
"""A count of runs named in Chinese, Japanese, Korean, French, Spanish, Portuguese,
German, Russian, Italian or Dutch: `运行次数`, `種子數`, `試行回数`, `반복 횟수`,
`Exécutions`, `Nº de semillas`, `Anzahl Läufe`, `Число запусков`: a table's column
(tables.py) or a count's label in prose ("Número de sementes: 3", grammar_languages.py)."""
