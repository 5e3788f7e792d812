"""Scorers: the seed's three runs, exact-set semantics, presence, custom scorers."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passhat.env import make_environment
from passhat.errors import SuiteError
from passhat.scoring import (
    Custom,
    ExactSet,
    Present,
    ScorerError,
    build_scorers,
    score_run,
)
from passhat.suite import Suite, load_suite

if TYPE_CHECKING:
    from conftest import SuiteWriter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GOAL_ITEMS = [
    "AC3:conflict",
    "AC3:inconsistent_with_description",
    "AC4:unverifiable",
    "AC7:unverifiable",
]


@pytest.fixture(scope="module")
def clarify() -> Suite:
    return load_suite(EXAMPLES / "clarify")


def annotation(item: str) -> dict[str, Any]:
    ac, label = item.split(":")
    return {"ac": int(ac.removeprefix("AC")), "label": label, "note": "見 AC 描述"}


async def seed_final_state(suite: Suite, items: list[str]) -> dict[str, Any]:
    """What one run leaves behind after a single update_ticket, as in the seed."""
    env = make_environment(suite, suite.case("ac-conflict-001"))
    outcome = await env.call(
        "update_ticket",
        {
            "key": "SHOP-1042",
            "goal": "讓顧客在結帳頁使用優惠碼折抵訂單金額。",
            "scope_in": ["結帳頁優惠碼欄位", "優惠碼驗證與折抵"],
            "scope_out": ["優惠碼發放"],
            "annotations": [annotation(i) for i in items],
        },
    )
    assert not outcome.is_error, outcome.text()
    return env.final_state()


# The seed's three runs of ac-conflict-001: all found AC3:conflict and AC4:unverifiable;
# run 2 missed AC7:unverifiable; all missed AC3:inconsistent_with_description; run 3 had
# 4 annotations, one of them wrong. The seed does not say which; we take AC5:conflict
# (marking both sides of the AC3/AC5 conflict), as the bundled cassette does.
SEED_RUNS = [
    pytest.param(
        ["AC3:conflict", "AC4:unverifiable", "AC7:unverifiable"],
        ["AC3:inconsistent_with_description"],
        [],
        id="run-1",
    ),
    pytest.param(
        ["AC3:conflict", "AC4:unverifiable"],
        ["AC3:inconsistent_with_description", "AC7:unverifiable"],
        [],
        id="run-2",
    ),
    pytest.param(
        ["AC3:conflict", "AC4:unverifiable", "AC5:conflict", "AC7:unverifiable"],
        ["AC3:inconsistent_with_description"],
        ["AC5:conflict"],
        id="run-3",
    ),
]


@pytest.mark.parametrize(("found", "missing", "extra"), SEED_RUNS)
async def test_the_seeds_three_runs_fail_with_their_missing_and_extra_items(
    clarify: Suite, found: list[str], missing: list[str], extra: list[str]
) -> None:
    state = await seed_final_state(clarify, found)
    score = score_run(clarify, clarify.case("ac-conflict-001"), state)
    assert score.passed is False
    exact, present = score.details
    assert exact == {
        "scorer": "exact_set",
        "passed": False,
        "path": "ticket.annotations",
        "expected": GOAL_ITEMS,
        "actual": sorted(found),
        "missing": missing,
        "extra": extra,
    }
    assert present == {
        "scorer": "present",
        "passed": True,
        "paths": ["ticket.goal", "ticket.scope_in"],
        "empty": [],
    }


async def test_the_goal_state_passes(clarify: Suite) -> None:
    state = await seed_final_state(clarify, list(reversed(GOAL_ITEMS)))
    score = score_run(clarify, clarify.case("ac-conflict-001"), state)
    assert score.passed is True
    assert score.details[0]["missing"] == [] and score.details[0]["extra"] == []


async def test_notes_are_not_compared(clarify: Suite) -> None:
    state = await seed_final_state(clarify, GOAL_ITEMS)
    for a in state["ticket"]["annotations"]:
        a["note"] = "completely different wording"
    assert score_run(clarify, clarify.case("ac-conflict-001"), state).passed


async def test_a_run_that_never_wrote_the_ticket_fails_every_scorer(clarify: Suite) -> None:
    case = clarify.case("ac-conflict-001")
    state = make_environment(clarify, case).final_state()
    score = score_run(clarify, case, state)
    assert score.passed is False
    assert score.details[0]["missing"] == GOAL_ITEMS
    assert score.details[1]["empty"] == ["ticket.goal", "ticket.scope_in"]


async def test_clean_case_passes_only_with_no_annotation(clarify: Suite) -> None:
    case = clarify.case("clean-order-tracking-002")
    env = make_environment(clarify, case)
    args = {"key": "SHOP-1107", "goal": "g", "scope_in": ["s"], "scope_out": []}
    await env.call("update_ticket", {**args, "annotations": []})
    assert score_run(clarify, case, env.final_state()).passed
    await env.call(
        "update_ticket", {**args, "annotations": [{"ac": 4, "label": "unverifiable", "note": ""}]}
    )
    score = score_run(clarify, case, env.final_state())
    assert not score.passed and score.details[0]["extra"] == ["AC4:unverifiable"]


# ------------------------------------------------------------------- exact_set

PAIRS = st.lists(
    st.tuples(st.integers(1, 12), st.sampled_from(["conflict", "unverifiable", "x"])),
    max_size=8,
)


@given(goal=PAIRS, actual=PAIRS, note=st.text(max_size=5))
def test_exact_set_passes_exactly_when_the_multisets_are_equal(
    goal: list[tuple[int, str]], actual: list[tuple[int, str]], note: str
) -> None:
    scorer = ExactSet("ticket.annotations", "AC{ac}:{label}")
    as_state = lambda pairs: {  # noqa: E731
        "ticket": {"annotations": [{"ac": a, "label": b, "note": note} for a, b in pairs]}
    }
    detail = scorer(as_state(actual), as_state(goal))
    named = lambda pairs: Counter(f"AC{a}:{b}" for a, b in pairs)  # noqa: E731
    assert detail["passed"] is (Counter(goal) == Counter(actual))
    assert Counter(detail["expected"]) == named(goal)
    assert Counter(detail["actual"]) == named(actual)
    assert Counter(detail["missing"]) == named(goal) - named(actual)
    assert Counter(detail["extra"]) == named(actual) - named(goal)
    for key in ("expected", "actual", "missing", "extra"):
        numbers = [int(item.split(":")[0].removeprefix("AC")) for item in detail[key]]
        assert numbers == sorted(numbers)


@pytest.mark.parametrize(
    ("goal", "actual", "missing", "extra"),
    [
        pytest.param(["bug"], ["bug", "bug"], [], ["bug"], id="an-item-written-twice-is-extra"),
        pytest.param(["bug"], ["bug"] * 3, [], ["bug", "bug"], id="extras-repeat"),
        pytest.param(["bug", "bug"], ["bug"], ["bug"], [], id="missing-repeats"),
        pytest.param(
            ["chore", "bug"], ["bug", "chore", "chore", "bug"], [], ["bug", "chore"], id="mixed"
        ),
    ],
)
def test_exact_set_compares_multisets(
    goal: list[str], actual: list[str], missing: list[str], extra: list[str]
) -> None:
    # Guards against set() collapsing duplicates: labels [bug, bug] passed against [bug].
    detail = ExactSet("cards.0.labels")(
        {"cards": [{"labels": actual}]}, {"cards": [{"labels": goal}]}
    )
    assert detail["passed"] is False
    assert (detail["missing"], detail["extra"]) == (missing, extra)
    assert (detail["expected"], detail["actual"]) == (sorted(goal), sorted(actual))


def test_duplicates_keep_the_natural_order() -> None:
    scorer = ExactSet("items", "AC{ac}:{label}")
    items = [{"ac": n, "label": "u"} for n in (10, 9, 10)]
    detail = scorer({"items": items}, {"items": items[:2]})
    assert detail["actual"] == ["AC9:u", "AC10:u", "AC10:u"]
    assert detail["extra"] == ["AC10:u"]


@pytest.mark.parametrize(
    ("template", "goal", "actual", "missing", "extra"),
    [
        pytest.param(
            "AC{ac}:{label}",
            [{"ac": 3, "label": "conflict", "note": ""}],
            ["AC3:conflict"],
            ["AC3:conflict"],
            ['"AC3:conflict"'],
            id="text-spelling-a-templated-item",
        ),
        pytest.param(
            "AC{ac}:{label}",
            [{"ac": 3, "label": "conflict"}],
            [{"ac": 3, "label": "conflict"}, {"ac": 3}],
            [],
            ['{"ac":3}'],
            id="object-lacking-a-field",
        ),
        pytest.param(
            "{name}",
            [{"name": "[1]"}],
            [[1]],
            ["[1]"],
            ["[1]"],
            id="json-equal-to-a-templated-name",
        ),
    ],
)
def test_with_a_template_only_objects_holding_its_fields_are_items(
    template: str, goal: list[Any], actual: list[Any], missing: list[str], extra: list[str]
) -> None:
    # Guards against a plain "AC3:conflict" in the final state passing for the goal's
    # {ac: 3, label: conflict}: an agent that wrote text did not write an annotation.
    detail = ExactSet("items", template)({"items": actual}, {"items": goal})
    assert detail["passed"] is False
    assert (detail["missing"], detail["extra"]) == (missing, extra)


def test_items_sort_with_numbers_compared_as_numbers() -> None:
    scorer = ExactSet("items", "AC{ac}:{label}")
    goal = {"items": [{"ac": n, "label": "u"} for n in (10, 2, 1)]}
    assert scorer({"items": []}, goal)["missing"] == ["AC1:u", "AC2:u", "AC10:u"]


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        pytest.param(["bug", "feature"], ["bug", "feature"], id="text-items-as-they-are"),
        pytest.param([3, 1], ["1", "3"], id="numbers-as-json"),
        pytest.param([{"b": 1, "a": 2}], ['{"a":2,"b":1}'], id="objects-as-canonical-json"),
    ],
)
def test_items_without_a_template(items: list[Any], expected: list[str]) -> None:
    detail = ExactSet("x")({"x": items}, {"x": items})
    assert detail["passed"] and detail["actual"] == expected


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        pytest.param({}, "ticket.annotations is not in the final state", id="path-missing"),
        pytest.param(
            {"ticket": {"annotations": "AC3"}},
            "ticket.annotations holds 'AC3', not a list",
            id="not-a-list",
        ),
    ],
)
def test_exact_set_on_a_final_state_without_the_list_fails(
    state: dict[str, Any], problem: str
) -> None:
    goal = {"ticket": {"annotations": []}}
    detail = ExactSet("ticket.annotations")(state, goal)
    assert detail["passed"] is False and detail["problem"] == problem


def test_exact_set_indexes_lists_with_digits() -> None:
    state = {"cards": [{"labels": ["bug"]}, {"labels": ["chore"]}]}
    assert ExactSet("cards.1.labels")(state, {"cards": [{}, {"labels": ["chore"]}]})["passed"]
    assert not ExactSet("cards.0.labels")(state, {"cards": [{"labels": ["chore"]}]})["passed"]


# --------------------------------------------------------------------- present


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        pytest.param("a goal", True, id="text"),
        pytest.param(["in scope"], True, id="list"),
        pytest.param(0, True, id="zero-is-a-value"),
        pytest.param("", False, id="empty-text"),
        pytest.param("  \n", False, id="blank-text"),
        pytest.param([], False, id="empty-list"),
        pytest.param({}, False, id="empty-object"),
        pytest.param(None, False, id="null"),
    ],
)
def test_present(value: Any, passed: bool) -> None:
    detail = Present(("t.goal",))({"t": {"goal": value}}, {})
    assert detail["passed"] is passed
    assert detail["empty"] == ([] if passed else ["t.goal"])


def test_present_counts_a_missing_path_as_empty() -> None:
    assert Present(("t.goal", "t.scope"))({"t": {"goal": "g"}}, {})["empty"] == ["t.scope"]


# ---------------------------------------------------------------------- custom


def custom_suite(
    writer: SuiteWriter, source: str, ref: str = "rules.py:check", **params: Any
) -> Path:
    assert isinstance(writer.suite, dict)
    writer.suite["defaults"]["scorers"] = [{"custom": ref, "params": params}]
    writer.files["rules.py"] = source
    return writer.write()


def test_custom_scorer_from_a_file_beside_suite_yaml(writer: SuiteWriter) -> None:
    source = (
        "def check(final_state, goal, *, wanted):\n"
        "    n = len(final_state['ticket']['annotations'])\n"
        "    return {'passed': n == wanted, 'count': n}\n"
    )
    suite = load_suite(custom_suite(writer, source, wanted=0))
    scorers = build_scorers(suite)
    assert [type(s) for s in scorers] == [Custom]
    case = suite.cases[0]
    score = score_run(suite, case, make_environment(suite, case).final_state())
    assert score.passed is True
    assert score.details == [{"scorer": "rules.py:check", "passed": True, "count": 0}]


def test_custom_scorer_by_module_path(
    writer: SuiteWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "myscorers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "strict.py").write_text(
        "def never(final_state, goal):\n    return False\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    suite = load_suite(custom_suite(writer, "", ref="myscorers.strict:never"))
    case = suite.cases[0]
    score = score_run(suite, case, {})
    assert score.passed is False
    assert score.details == [{"scorer": "myscorers.strict:never", "passed": False}]


@pytest.mark.parametrize(
    ("source", "ref", "message"),
    [
        pytest.param(
            "check = 3\n",
            "rules.py:check",
            "rules.py:check: is a int, not a function",
            id="not-callable",
        ),
        pytest.param(
            "def check(final_state):\n    return True\n",
            "rules.py:check",
            "rules.py:check: cannot be called as check(final_state, goal): too many positional",
            id="wrong-signature",
        ),
        pytest.param(
            "async def check(final_state, goal):\n    return True\n",
            "rules.py:check",
            "rules.py:check: is async; a scorer is a plain function",
            id="async",
        ),
        pytest.param(
            "def chek(final_state, goal):\n    return True\n",
            "rules.py:check",
            "rules.py:check: rules.py has no 'check'; did you mean 'chek'?",
            id="missing-name",
        ),
        pytest.param("", "other.py:check", "other.py:check: no file", id="missing-file"),
        pytest.param(
            "raise RuntimeError('half written')\n",
            "rules.py:check",
            "rules.py:check: importing rules.py raised RuntimeError: half written",
            id="file-raises-on-import",
        ),
        pytest.param("", "no_such_pkg.mod:check", "cannot import no_such_pkg.mod", id="no-module"),
        pytest.param("", "rules.check", "'rules.check' is not an import path", id="no-colon"),
    ],
)
def test_custom_scorers_are_checked_on_load(
    writer: SuiteWriter, source: str, ref: str, message: str
) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(custom_suite(writer, source, ref=ref))
    (problem,) = caught.value.problems
    assert "suite.yaml: defaults.scorers[0].custom: " in problem
    assert message in problem, problem


def test_custom_params_must_fit_the_signature(writer: SuiteWriter) -> None:
    source = "def check(final_state, goal):\n    return True\n"
    with pytest.raises(SuiteError) as caught:
        load_suite(custom_suite(writer, source, limit=3))
    assert (
        "check(final_state, goal, limit=...): got an unexpected keyword" in caught.value.problems[0]
    )


def test_a_scorer_that_raises_makes_the_run_errored_with_its_message(writer: SuiteWriter) -> None:
    source = "def check(final_state, goal):\n    raise KeyError('cards')\n"
    suite = load_suite(custom_suite(writer, source))
    with pytest.raises(ScorerError) as caught:
        score_run(suite, suite.cases[0], {})
    assert str(caught.value) == "scorer rules.py:check raised KeyError: 'cards'"
    assert isinstance(caught.value.__cause__, KeyError)


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        pytest.param("'yes'", "returned 'yes'; return True/False", id="text"),
        pytest.param(
            "{'ok': True}", "return True/False or a dict with a boolean 'passed'", id="no-passed"
        ),
        pytest.param(
            "{'passed': True, 'at': object()}", "returned details that are not JSON", id="not-json"
        ),
    ],
)
def test_a_scorer_returning_nonsense_is_an_error(
    writer: SuiteWriter, returned: str, message: str
) -> None:
    suite = load_suite(
        custom_suite(writer, f"def check(final_state, goal):\n    return {returned}\n")
    )
    with pytest.raises(ScorerError) as caught:
        score_run(suite, suite.cases[0], {})
    assert str(caught.value).startswith("scorer rules.py:check ")
    assert message in str(caught.value)


def test_a_scorer_cannot_change_what_the_next_one_sees(writer: SuiteWriter) -> None:
    assert isinstance(writer.suite, dict)
    writer.suite["defaults"]["scorers"] = [
        {"custom": "rules.py:wipe"},
        {"exact_set": "ticket.annotations", "item": "AC{ac}:{label}"},
    ]
    writer.files["rules.py"] = (
        "def wipe(final_state, goal):\n    final_state.clear(); goal.clear()\n    return True\n"
    )
    suite = load_suite(writer.write())
    case = suite.cases[0]
    state = {"ticket": {"annotations": [{"ac": 2, "label": "unverifiable", "note": ""}]}}
    kept = copy.deepcopy(state)
    score = score_run(suite, case, state)
    assert score.passed is True and state == kept


def test_every_run_of_a_case_is_graded_against_its_goal_as_loaded(writer: SuiteWriter) -> None:
    """score_run keeps each case's goal and expected items for its later runs: a user's
    scorer that wipes the goal it is given wipes a copy, and a failing run after a
    passing one is told what it missed."""
    assert isinstance(writer.suite, dict)
    writer.suite["defaults"]["scorers"] = [
        {"custom": "rules.py:wipe"},
        {"exact_set": "ticket.annotations", "item": "AC{ac}:{label}"},
        {"equals": "ticket.annotations"},
    ]
    writer.files["rules.py"] = "def wipe(final_state, goal):\n    goal.clear()\n    return True\n"
    suite = load_suite(writer.write())
    case = suite.cases[0]
    right = {"ticket": {"annotations": [{"ac": 2, "label": "unverifiable", "note": "vague"}]}}
    assert score_run(suite, case, right).passed is True
    assert score_run(suite, case, copy.deepcopy(right)).details[2]["passed"] is True
    wrong = {"ticket": {"annotations": [{"ac": 3, "label": "unverifiable", "note": ""}]}}
    detail = score_run(suite, case, wrong).details[1]
    assert detail["passed"] is False
    assert (detail["missing"], detail["extra"]) == (["AC2:unverifiable"], ["AC3:unverifiable"])
    assert detail["expected"] == ["AC2:unverifiable"] and detail["actual"] == ["AC3:unverifiable"]
    assert case.goal["ticket"]["annotations"][0]["ac"] == 2


# ---------------------------------------------------------------------- trello

GOOD_CARD = {
    "id": "card-1",
    "list": "Doing",
    "title": "Fix saved-card payments timing out at checkout",
    "description": "## Why\nNobody can pay.\n## What\nFind the regression.\n## Done when\nPayments pass.",
    "checklist": ["Reproduce the timeout", "Roll back or fix", "Check payments in production"],
    "labels": ["bug", "customer-reported"],
}


def _card(**changes: Any) -> dict[str, Any]:
    return {"cards": [{**GOOD_CARD, **changes}]}


@pytest.mark.parametrize(
    ("state", "violation"),
    [
        pytest.param(_card(title="x" * 61), "title: 61 characters; at most 60", id="long-title"),
        pytest.param(
            _card(title="Fix the timeout."), "title: ends with a full stop", id="full-stop"
        ),
        pytest.param(
            _card(description="## Why\nx\n## Done when\ny"),
            "description: no '## What' section",
            id="missing-section",
        ),
        pytest.param(
            _card(description="## Why\n\n## What\nx\n## Done when\ny"),
            "description: the '## Why' section is empty",
            id="empty-section",
        ),
        pytest.param(
            _card(description="## What\nx\n## Why\ny\n## Done when\nz"),
            "description: sections out of order",
            id="sections-out-of-order",
        ),
        pytest.param(
            _card(checklist=["only one"]), "checklist: 1 items; write 2 to 6", id="short-checklist"
        ),
        pytest.param(
            _card(labels=["bug", "chore", "customer-reported"]),
            "labels: exactly one of bug, feature, chore (found 2)",
            id="two-type-labels",
        ),
        pytest.param(_card(list="Backlog"), "list: the card is in 'Backlog'", id="wrong-list"),
        pytest.param({"cards": []}, "expected exactly one card, found 0", id="no-card"),
    ],
)
def test_trello_rules_reject_cards_that_break_the_guide(
    state: dict[str, Any], violation: str
) -> None:
    suite = load_suite(EXAMPLES / "trello")
    score = score_run(suite, suite.case("checkout-card-timeout"), state)
    assert score.passed is False
    rules = score.details[0]
    assert rules["scorer"] == "rules.py:card_follows_guide" and rules["passed"] is False
    assert any(v.startswith(violation) for v in rules["violations"]), rules["violations"]


def test_trello_accepts_a_card_that_follows_the_guide_and_checks_labels_apart() -> None:
    suite = load_suite(EXAMPLES / "trello")
    case = suite.case("checkout-card-timeout")
    good = score_run(suite, case, _card())
    assert good.passed is True
    assert good.details[0] == {
        "scorer": "rules.py:card_follows_guide",
        "passed": True,
        "violations": [],
    }
    mislabeled = score_run(suite, case, _card(labels=["bug"]))
    assert mislabeled.passed is False
    assert mislabeled.details[0]["passed"] is True
    assert mislabeled.details[1]["missing"] == ["customer-reported"]


def test_trello_fails_a_card_carrying_a_label_twice() -> None:
    suite = load_suite(EXAMPLES / "trello")
    score = score_run(
        suite,
        suite.case("checkout-card-timeout"),
        _card(labels=["bug", "customer-reported", "bug"]),
    )
    assert score.passed is False
    labels = score.details[1]
    assert (labels["scorer"], labels["passed"]) == ("exact_set", False)
    assert (labels["missing"], labels["extra"]) == ([], ["bug"])
    assert labels["actual"] == ["bug", "bug", "customer-reported"]
