"""The grammar's rules for counts written in other languages: Chinese, Japanese and
Korean counts and their measure words, and the European languages' count, unit and
scope ("cinq exécutions par tâche", "drei Läufe pro Aufgabe"), built from grammar.py's
fragments and numbers.py's number words. The reader (reader.py) runs them beside
grammar.py's English prose rules, in the same places; docs/audit.md names every rule.
"""

from __future__ import annotations

from passhat.sources.claims.grammar import (
    _CN_NUM,
    _CN_UNIT,
    _OTHER_UNIT,
    WORD,
    _num_or_after,
    _rule,
    _several,
)
from passhat.sources.claims.numbers import FOREIGN, KOREAN
from passhat.sources.claims.vocabulary import (
    FOREIGN_COUNT_NAMES,
    FOREIGN_UNITS,
    MEASURE_NOUNS,
    stems,
)

_JP_NUM = r"(?P<num>(?<!\d)\d+|[一二三四五六七八九十百]{1,4})"
_DE_TIMES = "|".join(k for k in FOREIGN if k.endswith("mal"))
"""German counts of times ("dreimal"), each one word."""
_FOREIGN_WORDS = "|".join(
    sorted((k for k in FOREIGN if not k.endswith("mal")), key=len, reverse=True)
)
_FOREIGN_NUM = r"(?P<num>\d{1,9}|" + _FOREIGN_WORDS + r")"
_FOREIGN_UNIT = "(?:" + "|".join(sorted(FOREIGN_UNITS, key=len, reverse=True)) + r")(?![\w-])"
_FOREIGN_BEFORE = (  # a preposition (and an article) before the count, as "over", "of", "with"
    r"(?<![\w-])(?:sur|de|avec|sobre|con|com|em|über|mit|aus|von|bei|nach|je|по|из|на|за|с|со|"
    r"среди|su|di|met|van|uit|en|in|à|pour|para|durante|pendant|в|"
    # a preposition and its article in one word: "nas três sementes", "del promedio", "sui 5 semi"
    r"nas|nos|das|dos|na|da|pelas|pelos|às|aos|del|al|aux|du|au|nelle|nei|negli|sulle|sui|"
    r"sugli|delle|dei|degli|alle|ai|zur|beim|entre|zwischen|между|tra|fra|tussen)\s+"
    r"(?:(?:les|la|le|des|los|las|os|as|die|den|der|dem|allen?|todas|todos|toutes|tous|"
    r"всех|всем)\s+)?"
)
_FOREIGN_SCOPE = (  # a scope after the unit, as "per": "par tâche", "por tarea", "pro Aufgabe"
    r"(?:par|por|pro|je|para\s+cada|pour\s+chaque|für\s+jede[nsm]?|на|для\s+кажд\w+|"
    # Italian "per", not after the English units these texts borrow ("5 runs per task" is
    # the English rules', which read a range before it: "between 3 and 5 runs per task")
    r"(?<!runs\s)(?<!seeds\s)(?<!trials\s)per)(?![\w-])"
)
_FOREIGN_WE_RAN = (  # a verb of running or using in the first person plural, then the count: "rodamos 3 sementes"
    r"(?<![\w-])(?<!\bse\s)(?<!\bsi\s)(?<!\bquando\s)(?<!\bcuando\s)(?<!\bwenn\s)"  # not after "if", "when"
    r"(?:rodamos|usamos|utilizamos|ejecutamos|executamos|realizamos|hicimos|fizemos|"
    r"corrimos|lanzamos|lançamos|efectuamos|efetuamos|repetimos|promediamos|usiamo|utilizziamo|"
    r"eseguiamo|effettuiamo|abbiamo\s+(?:usato|utilizzato|eseguito|effettuato|lanciato)|"
    r"nous\s+(?:avons\s+(?:utilisé|lancé|effectué|réalisé|exécuté)|utilisons|lançons|effectuons)|"
    r"wir\s+(?:verwenden|nutzen|verwendeten|nutzten|führten)|мы\s+(?:провели|выполнили|сделали|"
    r"использовали|запустили))\s+(?:(?:as|os|las|los|les|i|le|die)\s+)?"
)
_FOREIGN_KIND = (  # a qualifier after the unit, before its scope: "três sementes diferentes por modelo"
    r"(?:diferentes|distintas|distintos|différentes|distinctes|aléatoires|aleatorias|aleatorios|"
    r"aleatórias|aleatórios|casuali|diversi|diverse|independientes|indépendantes|indépendants|"
    r"independentes|indipendenti|distinti|случайных|разных)"
)
_FOREIGN_EACH = (  # "for each" and a noun: "para cada tarea", "pour chaque modèle"
    r"(?:para\s+cada|pour\s+chaque|für\s+jede[nsm]?|per\s+ogni|для\s+кажд\w+|voor\s+elke)\s+\w+"
)
_FOREIGN_SCOPES = (  # what runs are counted per, in these languages (not a request, an hour)
    r"(?:tâche|configuration|modèle|problème|question|instance|graine|cas|agent|"
    r"tarea|configuración|modelo|problema|pregunta|instancia|caso|agente|semilla|partición|"
    r"escenario|tarefa|configuração|cenário|semente|pergunta|"
    r"aufgabe|konfiguration|modell|frage|instanz|variante|"
    r"compito|configurazione|domanda|задачу|конфигурацию|модель|fold|seed|prompt|task)"
)
_FOREIGN_INDEPENDENT = (  # "independent" as these languages write it, before or after the unit
    r"(?:independientes|indépendantes|indépendants|independentes|unabhängigen?|независимых|"
    r"независимые|indipendenti|onafhankelijke|distintas|distintos|distinctes)"
)
_FOREIGN_SEVERAL = (
    r"(?:plusieurs|différentes|différents|varias|varios|várias|vários|diferentes|mehrere[n]?|"
    r"verschiedene[n]?|нескольким|разным|всем|les|las|los|as|os|die|den)"
)
_FOREIGN_STATISTIC = (
    r"(?:moyenn\w*|médian\w*|écart|promedi\w*|media|média|mediana|desvio|desviación|gemiddel\w*|"
    r"mittel\w*|durchschnitt\w*|median|standardabweichung\w*|усредн\w*|средн\w*|медиан\w*)"
)
_KO_REPEATED = (
    r"실험|실행|측정|평가|수행|시행|테스트|평균|중앙값|결과|하여|해서|했|하였|한\s|후|[,(]|$|되었|됐|"
    r"하고\s*(?:그\s*)?(?:평균|중앙값)"
)
"""What follows 반복 (repeated) when runs were repeated: an experiment, a measurement, a
statistic, or the verb done ("반복 실험", "반복 중앙값", "반복하여", "반복했다"), a statistic
after "and" ("반복하고 평균을"); not the
habitual "반복하던" (that used to repeat) of a mechanism described."""
_SIMULATIONS = (  # whole simulations, counted as runs only when independent ("10 simulations indépendantes")
    r"(?:simulations|simulaciones|simulações|simulacoes|simulationen|симуляций|симуляции|"
    r"simulazioni|simulaties)(?![\w-])"
)
_KO_NUM = r"(?P<num>\d{1,9}|" + "|".join(sorted(KOREAN, key=len, reverse=True)) + r")"
_FOREIGN_DONE = (  # what runs did or had done to them, past or participle only (not "para executar")
    r"(?:(?:execut|realiz|rod|test|avali|complet|lanç|lanc)(?:ad[ao]s|aram)|medid[ao]s|feit[ao]s|"
    r"conclu[íi]d[ao]s|produziram|deram|geraram|tiveram|mostraram|obtiveram|alcançaram|atingiram|"
    r"(?:ejecut|realiz|prob|evalu|complet|lanz)(?:ad[ao]s|aron)|hech[ao]s|corrid[ao]s|corrieron|"
    r"produjeron|dieron|arrojaron|tuvieron|mostraron|obtuvieron|alcanzaron|"
    r"(?:exécut|réalis|effectu|lanc|mesur|évalu|test|termin)(?:ée?s|èrent)|donn(?:ent|èrent|é)|"
    r"produi(?:sent|t)|obtenu|montr(?:ent|é)|"
    r"gemessen|durchgeführt|ausgeführt|gelaufen|gestartet|getestet|abgeschlossen|ergaben|ergeben|"
    r"lieferten|zeigten|hatten|erreichten|"
    r"(?:esegu|effettu|lanci|misur|valut|test|complet)(?:it[ei]|at[ei])|diedero|dato|prodott[ei]|"
    r"ottenut[ei]|(?:провед|выполн|запущ)ен\w*|прошли|дали|показали|"
    r"uitgevoerd|gedraaid|gemeten|getest|gaven|leverden|"
    # used: "wurden fünf Seeds verwendet", "foram usadas três sementes"
    r"verwendet|genutzt|benutzt|(?:us|utiliz)(?:ad[ao]s|aron|aram)|utilisée?s|(?:us|utilizz)at[ei]|"
    r"использовал\w*|использован\w*|gebruikt)(?![\w-])"
)
_FOREIGN_WILL = (  # a future or a modal before the participle: a plan ("serão realizadas")
    r"(?:serão|será|serán|seront|sera|werden|wird|saranno|sarà|будут|будет|zullen|worden|devem|"
    r"deben|doivent|müssen|sollen|devono|должны|podem|pueden|peuvent|können|possono|могут|"
    r"precisam|necesitan)(?![\w-])"
)
_NATIVE_UNIT_WORDS = stems(tuple(u for u in FOREIGN_UNITS if u not in ("seeds", "runs", "trials")))
"""The units of these languages a text must hold before their newer rules run (not the English
ones they borrow: every English text holding "runs" would be read by them too)."""
_SEED_NOUNS = r"(?:seeds|semillas|sementes|graines|semi|Seeds|сидами|зернами)"
_DIFFERENT = (
    r"(?:different|distinct|varying|separate|diferentes|distintas|distintos|différentes|"
    r"distinctes|verschiedenen|unterschiedlichen|разными|различными|diversi|diverse|verschillende)"
)
_RUNS_OF_SEEDS = (  # what is run once a seed: "five trainings", "3 modelos", "drei Trainings"
    r"(?:models|trainings|training\s+runs|networks|agents|policies|replicas|"
    r"entrenamientos|modelos|redes|treinos|treinamentos|entraînements|modèles|réseaux|"
    r"trainingsläufe|modelle|netze|addestramenti|modelli|reti|обучений|моделей|модели|сетей)"
)
_ANY_NUM = r"(?P<num>\d{1,9}|" + WORD + r"|" + _FOREIGN_WORDS + r")(?![\w-])"
_MEASURE_STATISTIC = (  # a statistic, in English or these languages, before a count of measurements
    r"(?:mean|average|avg|median|best|minimum|moyenn\w*|médian\w*|meilleur\w*|promedi\w*|"
    r"media|média|mediana|melhor|mittel\w*|durchschnitt\w*|median|bester?|gemiddel\w*|"
    r"средн\w*|медиан\w*|усредн\w*|лучш\w*)"
)
_MEASURE_BEFORE = (
    r"(?:of|over|across|from|sur|de|des|du|su|di|dei|delle|sulle|über|aus|von|по|из|van|over|"
    r"entre|em|en|con|com|with)"
)
CHINESE_RULES = (
    _rule(
        "count in Chinese",  # "每组实验重复次数：n=25", "运行次数: 5" (a count labelled as one)
        r"(?:重复|重複|运行|運行|执行|執行|实验|實驗|试验|試驗|采样|採樣|评测|評測|测试|測試)次数"
        r"\s*[：:=]\s*[^。；;\n\d]{0,24}?(?:n\s*=\s*)?" + _CN_NUM + r"(?![\d.])",
    ),
    _rule(
        "count in Chinese",  # "进行多次独立重复实验", "重复了多次" (done, no count: at least 2)
        r"(?:进行|進行|开展|開展|做|完成)了?(?P<num>多次|数次|數次|几次|幾次)(?:独立|獨立)?(?:的)?(?:重复|重複)?"
        r"(?:实验|實驗|运行|運行|试验|試驗|评测|評測|采样|採樣)",
        _several,
        at_least=True,
    ),
    _rule(
        "count in Chinese",
        r"(?:重复|重複|运行|運行|执行|執行|跑)了(?P<num>多次|数次|數次|几次|幾次)",
        _several,
        at_least=True,
    ),
    _rule(
        "count in Chinese",  # "取三次平均", "取 5 次的中位数" (the statistic of N runs)
        r"取\s*" + _CN_NUM + r"\s*次\s*(?:的)?(?:平均|中位|均值|最好|最优|最佳)",
    ),
    _rule(
        "count in Japanese",  # "5シードで平均", "複数ランダムシードで平均" (several: at least 2)
        r"(?P<num>複数|多数)\s*(?:の)?(?:ランダム)?(?:シード|seeds?)\s*(?:で|の)\s*(?:平均|中央値)",
        _several,
        at_least=True,
    ),
    _rule(
        "count in Japanese",
        r"(?P<num>\d{1,9})\s*(?:個の)?(?:ランダム)?(?:シード|seeds?)\s*(?:で|の)\s*(?:平均|中央値)",
    ),
    _rule(
        "count in Japanese",  # "3つのシードで実験", "シード3つで" (つ, the counter of things)
        r"(?:"
        + _JP_NUM
        + r"\s*つの\s*(?:ランダム)?(?:シード|seeds?)|(?:シード|seeds?)(?:値)?\s*を?\s*"
        r"(?P<after>\d{1,2}|[一二三四五六七八九十])\s*つ)",
        _num_or_after,
        trigger=("シード", "seed"),
    ),
    _rule(
        "count of generations",  # "每道题采样 5 个回答", "对每个问题生成 8 个样本"
        r"(?:每|对每个|對每個|为每个|為每個)[^，。,;；\n]{0,8}?(?:采样|採樣|生成|抽样|抽樣|sample)\s*"
        + _CN_NUM
        + r"\s*[个個条條份]?\s*(?:回答|答案|样本|樣本|输出|輸出|回复|回覆|解答|候选|候選|"
        r"completions?|samples?|responses?)",
        trigger=("采样", "採樣", "生成", "抽样", "抽樣", "sample"),
    ),
    _rule(
        "count in another language",  # "dreimal wiederholt", "répétée trois fois", "3 veces"
        r"\b(?P<num>" + _DE_TIMES + r"|\d{1,9}(?=\s*-?mal\b))(?:\s*-?mal)?\b(?=[^.;:\n]{0,30}"
        r"(?:wiederhol|ausgeführt|durchgeführt|gemessen|getestet|gelaufen|gestartet|grün|laufen))",
    ),
    _rule(
        "count in another language",  # after its verb: "wiederholt dreimal"
        r"(?:wiederholt|ausgeführt|durchgeführt|gemessen|getestet|gelaufen)\s+(?:\w+\s+){0,2}?"
        r"(?P<num>" + _DE_TIMES + r")\b",
    ),
    _rule(
        "count in another language",
        r"(?:exécut|lanc|mesur|évalu|test|tenté|repetid|repeti[um]|repiti|ejecut|evalu|medid|midi|"
        r"executad|execut|rod(?:ad|ou|aram|amos|ei)|avaliad|повтор|запуск|прогон|измер|ripetut|eseguit|"
        r"misurat|valutat|intent|tentad|tentou|tentamos|corri|prob(?:ó|amos|ad)|provat)\w*\s+"
        r"(?:\w+\s+){0,4}?" + _FOREIGN_NUM + r"\s+(?:fois|veces|vezes|раз|раза|volte)(?![\w-])",
        trigger=("fois", "veces", "vezes", "раз", "volte"),
    ),
    _rule(
        "count in another language",  # "chaque expérience a été répétée 5 fois" (a run repeated)
        r"(?<![\w-])(?:expérience|exécution|mesure|évaluation|configuration|essai|run|lancement)s?"
        r"(?![\w-])[^.;:\n]{0,40}?répét\w*\s+(?:\w+\s+){0,2}?" + _FOREIGN_NUM + r"\s+fois(?![\w-])",
        trigger=("fois",),
    ),
    _rule(
        "count in another language",  # "nous avons répété chaque mesure 3 fois"
        r"répét\w*\s+(?:chaque|chacune\s+des|toutes\s+les|les|l['’])\s*(?:expérience|exécution|"
        r"mesure|évaluation|configuration|essai|run|lancement)s?\s+(?:\w+\s+){0,2}?"
        + _FOREIGN_NUM
        + r"\s+fois(?![\w-])",
        trigger=("fois",),
    ),
    _rule(
        "count in another language",  # "3 fois par tâche", "5 veces por partición", "5 Mal pro Aufgabe"
        r"(?<![\w-])"
        + _FOREIGN_NUM
        + r"\s*-?\s*(?:fois|veces|vezes|mal|volte|раз|раза)\s+(?:"
        + _FOREIGN_EACH
        + r"|(?:par|por|pro|per|на)\s+"
        + _FOREIGN_SCOPES
        + r")(?![\w-])",
        trigger=("fois", "veces", "vezes", " mal", "-mal", "volte", "раз"),
    ),
    _rule(
        "count in another language",  # "cuatro ejecuciones independientes", "drei unabhängige Läufe"
        r"(?<![\w-])"
        + _FOREIGN_NUM
        + r"\s+(?:"
        + _FOREIGN_INDEPENDENT
        + r"\s+(?:"
        + _FOREIGN_UNIT
        + r"|"
        + _SIMULATIONS
        + r")|(?:"
        + _FOREIGN_UNIT
        + r"|"
        + _SIMULATIONS
        + r")\s+"
        + _FOREIGN_INDEPENDENT
        + r")",
        trigger=(
            "indépend",
            "independ",
            "unabhängig",
            "независим",
            "indipend",
            "onafhankelijk",
            "distint",
            "distinct",
        ),
    ),
    _rule(
        "count in another language",  # Dutch, the verb after: "5 keer herhaald", "drie keer gemeten"
        r"(?<![\w-])"
        + _FOREIGN_NUM
        + r"\s*(?:keer|maal)\s+(?:\w+\s+){0,2}?(?:herhaald|uitgevoerd|gemeten|gedraaid|getest)\b",
        trigger=("keer", "maal"),
    ),
    _rule(
        "count in another language",  # "rodamos 3 sementes", "usamos cinco semillas", "мы провели пять запусков"
        _FOREIGN_WE_RAN + _FOREIGN_NUM + r"\s+(?:[^\W\d_]{2,24}\s+)?" + _FOREIGN_UNIT,
        trigger=_NATIVE_UNIT_WORDS,
    ),
    _rule(
        "count in another language",  # "moyenne sur 5 exécutions", "mit drei Seeds", "по 10 запускам"
        _FOREIGN_BEFORE + _FOREIGN_NUM + r"\s+(?:[^\W\d_]{2,24}\s+)?" + _FOREIGN_UNIT,
        trigger=stems(FOREIGN_UNITS),
    ),
    _rule(
        "count in another language",  # "3 exécutions par tâche", "5 semillas por tarea"
        r"(?<![\w-])"
        + _FOREIGN_NUM
        + r"\s+"
        + _FOREIGN_UNIT
        + r"\s+(?:"
        + _FOREIGN_KIND
        + r"\s+)?"
        + _FOREIGN_SCOPE,
        trigger=stems(FOREIGN_UNITS),
    ),
    _rule(
        "count in another language",  # "moyenne sur plusieurs graines", "усреднены по seed"
        r"(?<![\w-])"
        + _FOREIGN_STATISTIC
        + r"[^.;:\n]{0,24}?(?<![\w-])(?:sur|de|sobre|über|aus|по|из|su|di|over)\s+(?:"
        + _FOREIGN_SEVERAL
        + r"\s+)?(?P<num>"
        + _FOREIGN_UNIT
        + r"|seed|сидам)",
        _several,
        at_least=True,
        trigger=(*stems(FOREIGN_UNITS), "seed"),
    ),
    _rule(
        "count in Korean",  # "3회 반복 실험", "5회 실행의 평균", "세 번 반복했다" (회, 번: times)
        r"(?<![\d.])"
        + _KO_NUM
        + r"\s*(?:회|번)\s*(?:씩\s*)?(?:의\s*)?(?:독립(?:적인|된)\s*)?(?:반복\s*(?="
        + _KO_REPEATED
        + r")|실행|시행|측정|평균|중앙값|실험|시도|수행|돌려|돌린)",
        trigger=("회", "번"),
    ),
    _rule(
        "count in Korean",  # "5시드 평균", "3개 시드로 실행"
        r"(?<![\d.])" + _KO_NUM + r"\s*(?:개의?\s*)?(?:랜덤\s*|무작위\s*)?(?:시드|seeds?)\s*"
        r"(?:의\s*)?(?:평균|중앙값|반복|에서|로|으로|에\s*걸쳐|에\s*대해|에\s*대한)",
        trigger=("시드", "seed"),
    ),
    _rule(
        "count in Korean",  # "시드 평균", "여러 시드 평균" (a mean over seeds: at least 2)
        r"(?P<num>(?:여러|다수의?|복수의?)?\s*시드)\s*(?:간\s*|별\s*)?(?:평균|중앙값)",
        _several,
        at_least=True,
        trigger=("시드",),
    ),
    _rule(
        "count in Japanese",  # "各3回の中央値", "各3回測定", "3回ずつ", "5回の平均" (not "第3回", "3回目")
        r"各[^\s\d、。]{0,6}?" + _JP_NUM + r"\s*(?:回(?!目)|試行)",
    ),
    _rule(
        "count in Japanese",
        r"(?<![第\d])" + _JP_NUM + r"\s*(?:回|試行)(?:ずつ|の(?:平均|中央値|試行|実行|測定|計測)|"
        r"(?:測定|実行|試行|計測|繰り返|反復|評価|走ら|回し|平均))",
    ),
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
    _rule(
        "count in Chinese",  # "3 个 seed 的平均", "5 次 run" (an English unit after a measure word)
        _CN_NUM + r"\s*[个個次]\s*(?:不同的?\s*)?(?:random\s+)?(?:seeds?|runs?|trials?)\b",
        trigger=("个", "個", "次"),
    ),
    _rule(
        "count in another language",  # "As cinco execuções produziram", "drei Läufe wurden durchgeführt"
        r"(?<![\w-])"
        + _FOREIGN_NUM
        + r"\s+(?:(?:as|os|las|los|les|le|die|den)\s+)?(?:"  # "Ambas as execuções", "Entrambe le"
        + _FOREIGN_INDEPENDENT
        + r"\s+)?"
        + _FOREIGN_UNIT
        + r"(?:\s+"
        + _FOREIGN_INDEPENDENT
        + r")?\s+(?:(?!"
        + _FOREIGN_WILL
        + r")[^\W\d_]{2,14}\s+){0,2}?"
        + _FOREIGN_DONE,
        trigger=_NATIVE_UNIT_WORDS,
    ),
    _rule(
        "count in another language",  # a Russian statistic of a count in the genitive: "медианы трёх запусков"
        r"(?<![\w-])(?:усредн\w*|средн\w*|медиан\w*|лучш\w*)\s+"
        + _FOREIGN_NUM
        + r"\s+(?:[^\W\d_]{2,24}\s+)?"
        + _FOREIGN_UNIT,
        trigger=("средн", "медиан", "лучш"),
    ),
    _rule(
        "statistic of N measurements",  # "median of 5 measurements", "media su 3 misure"
        r"(?<![\w-])"
        + _MEASURE_STATISTIC
        + r"(?:\s+(?:value|time|runtime|score))?\s+(?:"
        + _MEASURE_BEFORE
        + r"\s+)?(?:(?:the|les|las|los|as|os|die|den)\s+)?"
        + _ANY_NUM
        + r"\s+(?:[^\W\d_][\w-]{1,24}\s+)?(?:"
        + "|".join(MEASURE_NOUNS)
        + r")(?![\w-])",
        trigger=(
            "measurements",
            "timings",
            "mesures",
            "mediç",
            "medic",
            "medid",
            "messung",
            "misur",
            "измерен",
            "замер",
            "meting",
        ),
    ),
    _rule(
        "count with different seeds",  # "five trainings with different seeds", "3 modelos con semillas distintas"
        r"(?<![\w-])"
        + _ANY_NUM
        + r"\s+(?:[^\W\d_][\w-]{1,24}\s+)?"
        + _RUNS_OF_SEEDS
        + r"(?:\s+(?:trained|run|entrenad[oa]s|treinad[oa]s|entraînés|trainiert|addestrati))?"
        r"\s+(?:with|using|con|com|avec|mit|met|с|со)\s+(?:des\s+|the\s+)?(?:"
        + _DIFFERENT
        + r"\s+(?:random\s+|aleat\w+\s+|zufällig\w*\s+|случайными\s+)?"
        + _SEED_NOUNS
        + r"|"
        + _SEED_NOUNS
        + r"\s+(?:aleat\w+\s+)?"
        + _DIFFERENT
        + r")(?![\w-])",
        trigger=("seeds", "semillas", "sementes", "graines", " semi", "сидами", "зернами"),
    ),
    _rule(
        "count in Korean",  # "여러 번 반복 실행하여 평균" (several times: at least 2)
        r"(?P<num>여러)\s*(?:번|회|차례)\s*(?:씩\s*)?(?:반복\s*(?="
        + _KO_REPEATED
        + r")|실행|시행|측정|실험|수행|돌려|돌린)",
        _several,
        at_least=True,
        trigger=("여러",),
    ),
    _rule(
        "labelled count",  # "Número de sementes: 3", "Läufe pro Aufgabe: 5", "Число запусков — 10"
        r"(?<![\w-])(?:"
        + FOREIGN_COUNT_NAMES
        + r")(?:\s*(?:por|par|pro|per|je|на|/)\s*[^\W\d_]{1,30})?\s*(?:\*\*|__)?\s*[:=—–|]\s*"
        r"(?:\*\*|__)?\s*(?:n\s*=\s*)?" + _FOREIGN_NUM + r"(?!\.\d|\d|" + _OTHER_UNIT + r")",
        trigger=(
            "次数",
            "次數",
            "种子数",
            "種子數",
            "種子数",
            "回数",
            "シード数",
            "횟수",
            "시드",
            *_NATIVE_UNIT_WORDS,
        ),
    ),
    _rule(
        "statistic of N",  # "(média de 3)", "Median aus 5;", "медиана из 5:" (runs implied)
        r"(?<![\w-])"
        + _FOREIGN_STATISTIC
        + r"\s+(?:de|sur|su|di|aus|von|über|из|по|van|over|em|en)\s+"
        + _FOREIGN_NUM
        + r"(?=\s*(?:[),;]|:\s*[\d.]|$))",
        trigger=(
            "moyen",
            "médian",
            "promedi",
            "media ",
            "média",
            "mediana",
            "mittel",
            "durchschnitt",
            "median",
            "gemiddel",
            "средн",
            "медиан",
            "усредн",
        ),
    ),
    _rule(
        "count in another language",  # "run" and "seed" written in these languages unchanged: "media di 5 run"
        r"(?<![\w-])(?:su|di|da|sur|de|sobre|con|com|em|über|mit|aus|von|по|из|с|nas|nos|dei|sui|"
        r"delle|sulle)\s+(?:(?:les|la|le|des|los|las|os|as|i|gli|die|den)\s+)?"
        + _FOREIGN_NUM
        + r"\s+(?:run|seed)(?![\w-])",
        trigger=(" run", " seed"),
    ),
    _rule(
        "count in Korean",  # seeds, then their count with 개: "시드 3개의 평균", "seed 5개로"
        r"(?:시드|seeds?)\s*"
        + _KO_NUM
        + r"\s*개\s*(?:의\s*)?(?:평균|중앙값|로|으로|에서|에\s*걸쳐|에\s*대해|에\s*대한)",
        trigger=("개",),
    ),
)
