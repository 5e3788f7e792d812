"""The claim reader's shapes added in issue 34's tenth round (claims47b), beside the corpus
(tests/claim_wordings.yaml holds their over-claims): what each shape must NOT read, and
inputs of each shape built to be hostile, read in time linear in their length (no time is
asserted: a quadratic pattern would not finish within the suite)."""

from __future__ import annotations

import pytest

from passhat.sources.claims import claims_in
from passhat.sources.claims.embedded import bare_prose

NOT_CLAIMS = [
    # a count of runs and a participle, after a future or a modal: a plan
    ("Três execuções serão realizadas na próxima semana.", "README.md"),
    ("Drei Läufe werden durchgeführt, sobald der Server frei ist.", "README.md"),
    ("Cinco ejecuciones deben ser realizadas por tarea.", "README.md"),
    # a count and its unit ending a line after a comma: the sentence goes on below
    ("**Resumo: 239 testes** (207 unitários), três execuções\nidênticas.", "RELATORIO.md"),
    # a count and a unit with more after it: not a clause of its own
    ("O limite atual: cinco execuções paralelas.", "README.md"),
    # measurements with no statistic count kinds, not repeats
    ("We report 3 measurements: latency, memory and cost.", "README.md"),
    ("Mean latency across 12 measurement points is shown in Figure 2.", "README.md"),
    # models that differ in something other than their seed; seeds with no count of runs
    ("We compare 3 models with different architectures.", "README.md"),
    ("Each of the 3 tasks uses different seeds.", "README.md"),
    # Korean: a mechanism that used to repeat (반복하던), not runs repeated
    ("실패하면 여러 번 반복하던 요청을 한 번으로 줄였다.", "README.md"),
    # a determiner before training's epochs; a statistic of several runs in a condition
    ("The model was fine-tuned over its 3 epochs on the training split.", "README.md"),
    ("Pick the best of several runs if you have the budget.", "README.md"),
    # a count inside the parentheses that is no count of the unit before them
    ("The data set has 40 trials (n=40 participants).", "README.md"),
    # a labelled count in another unit; a statistic of a count of years
    ("Execuções: 30 s por tarefa", "README.md"),
    ("A média de 3 anos de dados foi usada como referência.", "README.md"),
    # a statistic of a bare count ending its sentence: items averaged, not runs
    ("A threshold tuned on one pair may not hold for an average of ten.", "README.md"),
    # Korean: repeated as a habit in the present (반복되는), not runs that were repeated
    ("요청은 실패 시 3회 반복되는 구조다.", "README.md"),
    # "we ran" after "if" or "when": a condition
    ("Se usamos três sementes, o custo triplica.", "README.md"),
    ("Quando rodamos 3 sementes, o custo triplica.", "README.md"),
    # seeds of training under a prefixed name: not the evaluation's runs
    ("train_seeds = [1, 2, 3]", "config.py"),
    # executions that are a limit or a queue, not runs made
    ("The scheduler allows up to 5 parallel executions.", "README.md"),
    ("The job queue holds 40 executions waiting for a worker.", "README.md"),
    # a count with its sign in a column that counts no runs (a speed-up)
    ("| Agent | Runs | Speed-up |\n|---|---|---|\n| react | 1 | 3× |", "README.md"),
    # runs counted with a determiner in a condition, or with no result verb after them
    ("If all three runs pass, the gate opens.", "README.md"),
    ("Both seeds are fixed in config.yaml.", "README.md"),
    # "both" of something that is no run
    ("Ambos modelos usan la misma semilla.", "README.md"),
    # simulations that are not said to be independent repeats: different scenarios
    ("We ran 3 different simulations: wind, rain and snow.", "README.md"),
    # a mechanism averaging over several passes (external6 holds two such consistent texts)
    (
        "Die Koordinaten werden über mehrere Durchläufe gemittelt, um die Spur zu glätten.",
        "README.md",
    ),
]


@pytest.mark.parametrize("text, name", NOT_CLAIMS, ids=[t[:40] for t, _ in NOT_CLAIMS])
def test_the_shapes_read_no_claim_here(text: str, name: str) -> None:
    assert [c for c in claims_in("# Results\n\n" + text + "\n", name) if c.k > 1] == []


HOSTILE = [
    # a run of digits before a foreign unit and a participle, a clause, a statistic
    "7" * 100_000 + " execuções produziram",
    ", " + "1" * 100_000 + " sementes,",
    "среднее " + "5" * 100_000 + " запусков",
    "median of " + "5" * 100_000 + " measurements",
    "1" * 100_000 + " models trained with different seeds",
    # a word repeated: a statistic's stem, a preposition, a clause's commas
    "средн" + "е" * 100_000 + " пяти запусков",
    "moyenne " * 20_000 + "de 4 mesures",
    "runs (n=" + "1" * 100_000 + ")",
    "mean of " + "several " * 20_000 + "runs",
    "여러 " * 30_000 + "번 반복 실험",
    "Número de sementes: " + "3" * 100_000,
    "4" * 100_000 + " simulations indépendantes",
    "media di " + "5" * 100_000 + " run",
    "시드 " + "4" * 100_000 + "개의 평균",
    "rodamos " + "3" * 100_000 + " sementes",
    "se " * 30_000 + "usamos três sementes",
    "random_" * 20_000 + "seeds = (1, 2)",
    "the " * 30_000 + "three runs gave 0.6",
    "both " * 30_000 + "runs agree",
]


@pytest.mark.parametrize("text", HOSTILE, ids=[t[:12] + "..." + t[-12:] for t in HOSTILE])
def test_a_hostile_line_of_each_shape_is_read_in_linear_time(text: str) -> None:
    """Each line after a heading, then an over-claim the reader must still find below it."""
    lines = "# Results\n\n" + text + "\n\nWe ran each task 5 times.\n"
    assert 5 in [c.k for c in claims_in(lines, "REPORT.md")]


@pytest.mark.parametrize(
    "text, k",
    [
        ("Medimos todo o pipeline em três sementes: 0,82 de acurácia média.", 3),
        ("Evaluamos todo el conjunto con cinco semillas y la precisión media fue 0,71.", 5),
    ],
)
def test_todo_in_spanish_and_portuguese_is_every_not_a_to_do(text: str, k: int) -> None:
    """ "todo" (every, all) set a Spanish or Portuguese sentence aside as a plan: the plan
    rule's TODO is now the marker only (upper case, or before a colon or parenthesis)."""
    assert [c.k for c in claims_in("# Results\n\n" + text + "\n", "README.md")] == [k]


@pytest.mark.parametrize(
    "text",
    [
        "TODO: run 3 seeds per configuration and report the mean.",
        "todo: run 3 seeds per configuration and report the mean.",
        "- todo (later): rerun with 5 seeds per task",
    ],
)
def test_a_to_do_marker_still_sets_its_runs_aside_as_a_plan(text: str) -> None:
    assert claims_in("# Results\n\n" + text + "\n", "README.md") == []


def test_a_two_way_arrow_between_words_is_prose_and_an_operator_is_code() -> None:
    assert bare_prose("the host<->device copy is included in every timing")
    assert not bare_prose("ORDER BY embedding <-> query LIMIT 5 rows")
    assert not bare_prose("return a<->b for each pair")
