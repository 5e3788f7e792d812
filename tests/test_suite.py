"""Suites: loading the bundled suites, every validation message, content hashes."""

from __future__ import annotations

import copy
import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from passhat.errors import ConfigError, SuiteError
from passhat.suite import CustomSpec, ExactSetSpec, PresentSpec, Suite, load_suite

if TYPE_CHECKING:
    from conftest import SuiteWriter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SEED_GOAL = {
    (3, "conflict"),
    (3, "inconsistent_with_description"),
    (4, "unverifiable"),
    (7, "unverifiable"),
}


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return caught.value.problems


def annotations(case_goal: dict[str, Any]) -> set[tuple[int, str]]:
    return {(a["ac"], a["label"]) for a in case_goal["ticket"]["annotations"]}


# ------------------------------------------------------------------ bundled


def test_clarify_suite_loads_with_the_seed_defaults() -> None:
    suite = load_suite(EXAMPLES / "clarify")
    assert suite.name == "clarify"
    assert suite.environment == "ticket"
    assert suite.path == (EXAMPLES / "clarify").resolve()
    assert suite.labels == ("conflict", "inconsistent_with_description", "unverifiable")
    d = suite.defaults
    assert (d.agent, d.model, d.k) == ("clarifier", "replay:cassettes/seed.jsonl", 3)
    assert d.scorers == (
        ExactSetSpec("ticket.annotations", "AC{ac}:{label}"),
        PresentSpec(("ticket.goal", "ticket.scope_in")),
    )
    ids = [c.id for c in suite.cases]
    assert ids == sorted(ids) and len(ids) >= 8
    assert len(suite.hash) == 64 and all(len(c.hash) == 64 for c in suite.cases)


def test_clarify_suite_has_the_required_variety() -> None:
    cases = load_suite(EXAMPLES / "clarify").cases
    clean = [c.id for c in cases if not c.goal["ticket"]["annotations"]]
    needs_lookup = [c.id for c in cases if "background" in c.tags]
    english = [c.id for c in cases if "en" in c.tags]
    assert len(clean) >= 2 and len(english) >= 1
    assert len(needs_lookup) >= 2
    assert all(c.fixtures.get("query_background") for c in cases if c.id in needs_lookup)


def test_seed_case_is_the_coupon_card_with_its_goal_state() -> None:
    case = load_suite(EXAMPLES / "clarify").case("ac-conflict-001")
    ticket = case.input["ticket"]
    assert [c["ac"] for c in ticket["acceptance_criteria"]] == [1, 2, 3, 4, 5, 6, 7]
    assert "優惠碼" in ticket["title"] and "zh-Hant" in case.tags
    assert annotations(case.goal) == SEED_GOAL
    assert len(case.goal["ticket"]["annotations"]) == 4


def test_trello_suite_loads_with_its_own_environment_and_scorers() -> None:
    suite = load_suite(EXAMPLES / "trello")
    assert suite.environment == "board"
    assert [type(s) for s in suite.defaults.scorers] == [CustomSpec, ExactSetSpec]
    custom = suite.defaults.scorers[0]
    assert isinstance(custom, CustomSpec) and custom.ref == "rules.py:card_follows_guide"
    assert custom.params["max_title"] == 60
    assert [c.id for c in suite.cases] == [
        "checkout-card-timeout",
        "export-orders-csv",
        "rotate-payment-keys",
    ]
    assert all(c.fixtures["get_guide"] for c in suite.cases)


def test_load_accepts_the_suite_yaml_path_itself() -> None:
    assert (
        load_suite(EXAMPLES / "clarify" / "suite.yaml").hash
        == load_suite(EXAMPLES / "clarify").hash
    )


def test_suite_is_immutable() -> None:
    suite = load_suite(EXAMPLES / "clarify")
    with pytest.raises(dataclasses.FrozenInstanceError):
        suite.name = "other"  # type: ignore[misc]


def test_unknown_case_id_names_the_known_ones() -> None:
    suite = load_suite(EXAMPLES / "clarify")
    with pytest.raises(ConfigError) as caught:
        suite.case("ac-conflict-01")
    message = str(caught.value)
    assert "no case 'ac-conflict-01'" in message
    assert "did you mean 'ac-conflict-001'?" in message
    assert "clean-order-tracking-002" in message


# ----------------------------------------------------------------- validation


def test_bad_label_message_names_file_field_labels_and_fix(writer: SuiteWriter) -> None:
    writer.case["goal"]["ticket"]["annotations"][0]["label"] = "unverfiable"
    root = writer.write()
    assert problems_of(root) == [
        f"{root / 'cases' / 'tiny.yaml'}: goal.ticket.annotations[0].label: 'unverfiable' is "
        "not one of the suite's labels (conflict, inconsistent_with_description, "
        "unverifiable); did you mean 'unverifiable'?"
    ]


def _set(path: str, value: Any) -> Callable[[SuiteWriter], None]:
    """An edit of the first case at a dotted path (digits index lists)."""

    def edit(w: SuiteWriter) -> None:
        target: Any = w.case
        parts = path.split(".")
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        last = parts[-1]
        if last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value

    return edit


def _suite(key: str, value: Any) -> Callable[[SuiteWriter], None]:
    def edit(w: SuiteWriter) -> None:
        assert isinstance(w.suite, dict)
        target = w.suite
        *parents, last = key.split(".")
        for part in parents:
            target = target[part]
        target[last] = value

    return edit


def _second_case_lacks_label(w: SuiteWriter) -> None:
    assert isinstance(w.suite, dict)
    w.suite["defaults"]["scorers"][0]["item"] = "AC{ac}:{note}"
    other = copy.deepcopy(w.case)
    other["id"] = "other-002"
    other["goal"]["ticket"]["annotations"] = [{"ac": 2, "label": "unverifiable"}]
    w.cases["other.yaml"] = other


def _drop(key: str) -> Callable[[SuiteWriter], None]:
    return lambda w: w.case.pop(key)


def _raw_case(text: str) -> Callable[[SuiteWriter], None]:
    def edit(w: SuiteWriter) -> None:
        w.cases["tiny.yaml"] = text

    return edit


def _add_annotation(ac: int, label: str) -> Callable[[SuiteWriter], None]:
    return lambda w: w.case["goal"]["ticket"]["annotations"].append(
        {"ac": ac, "label": label, "note": ""}
    )


MINIMAL_CASE_TEXT = """\
id: tiny-001
input:
  ticket: {key: T-1, title: t, description: d, acceptance_criteria: [{ac: 1, text: x}]}
goal:
  ticket: {annotations: []}
"""

INVALID = [
    pytest.param(
        _set("goal.ticket.annotations.0.ac", 9),
        "cases/tiny.yaml: goal.ticket.annotations[0].ac: the ticket has no AC 9; "
        "its ACs are 1, 2, 3",
        id="annotation-on-an-ac-the-ticket-lacks",
    ),
    pytest.param(
        _add_annotation(2, "unverifiable"),
        "goal.ticket.annotations[1]: repeats goal.ticket.annotations[0] (AC2:unverifiable)",
        id="annotation-written-twice",
    ),
    pytest.param(
        _set("tag", ["x"]),
        "cases/tiny.yaml: tag: unknown key 'tag'; the keys allowed here are id, input, "
        "fixtures, goal, tags; did you mean 'tags'?",
        id="unknown-key-in-a-case",
    ),
    pytest.param(
        _set("input.ticket.summary", "s"),
        "input.ticket.summary: unknown key 'summary'; the keys allowed here are key, title, "
        "description, acceptance_criteria",
        id="unknown-key-in-the-ticket",
    ),
    pytest.param(
        _set("goal.ticket.annotations.0.lable", "x"),
        "goal.ticket.annotations[0].lable: unknown key 'lable'",
        id="unknown-key-in-a-goal-annotation",
    ),
    pytest.param(
        _suite("label", ["x"]),
        "suite.yaml: label: unknown key 'label'; the keys allowed here are name, description, "
        "environment, labels, tools, state, input_schema, goal_schema, defaults; did you mean "
        "'labels'?",
        id="unknown-key-in-suite-yaml",
    ),
    pytest.param(
        _suite("defaults.kk", 3),
        "suite.yaml: defaults.kk: unknown key 'kk'",
        id="unknown-key-in-defaults",
    ),
    pytest.param(
        _drop("goal"),
        "cases/tiny.yaml: goal: missing; add it: the goal state the final state must match",
        id="missing-goal",
    ),
    pytest.param(
        _suite("defaults.k", 0),
        "suite.yaml: defaults.k: is 0; it must be at least 1",
        id="k-zero",
    ),
    pytest.param(
        _suite("defaults.k", 10**30),
        "suite.yaml: defaults.k: is 1000000000000000000000000000000; it must be at most 100,000",
        id="k-past-what-run-accepts",
    ),
    pytest.param(
        _suite("environment", "tickets"),
        "suite.yaml: environment: 'tickets' is not an environment; use one of board, ticket, "
        "tools or file.py:ClassName; did you mean 'ticket'?",
        id="unknown-environment",
    ),
    pytest.param(
        _suite("labels", []),
        "suite.yaml: labels: is empty; the ticket environment annotates ACs with these labels",
        id="ticket-suite-without-labels",
    ),
    pytest.param(
        _suite("labels", ["conflict", "conflict", "unverifiable"]),
        "suite.yaml: labels[1]: 'conflict' repeats labels[0]; list each label once",
        id="label-listed-twice",
    ),
    pytest.param(
        _set("id", 7),
        "cases/tiny.yaml: id: expected text, got 7; put it in quotes",
        id="id-not-text",
    ),
    pytest.param(
        _set("id", "tiny 001"),
        "cases/tiny.yaml: id: 'tiny 001' may hold only letters, digits, '.', '_' and '-'",
        id="id-with-a-space",
    ),
    pytest.param(
        _set("input.ticket.acceptance_criteria", "AC 1: something"),
        "input.ticket.acceptance_criteria: expected a list",
        id="acs-not-a-list",
    ),
    pytest.param(
        _set("input.ticket.acceptance_criteria.1.ac", 1),
        "input.ticket.acceptance_criteria[1].ac: AC 1 is numbered twice; number each AC once",
        id="ac-numbered-twice",
    ),
    pytest.param(
        _set("fixtures", {"get_ticket": [{"args": {"key": "T-1"}, "response": {}}]}),
        "cases/tiny.yaml: fixtures.get_ticket: 'get_ticket' does not replay recorded "
        "responses; the environment's fixture tools are: query_background",
        id="fixture-for-a-tool-that-does-not-replay",
    ),
    pytest.param(
        _set("fixtures.query_background.0.args", {"q": "coupon"}),
        "fixtures.query_background[0].args.q: unknown key 'q'; the keys allowed here are query",
        id="fixture-args-off-schema",
    ),
    pytest.param(
        _set("fixtures.query_background.0.args.query", "!!!"),
        "fixtures.query_background[0].args.query: has no words to match",
        id="fixture-query-without-words",
    ),
    pytest.param(
        _set(
            "fixtures.query_background",
            [
                {"args": {"query": "Coupon  policy"}, "response": 1},
                {"args": {"query": "coupon policy"}, "response": 2},
            ],
        ),
        "fixtures.query_background[1].args: matches the same calls as "
        "fixtures.query_background[0], so it would never be used",
        id="fixture-written-twice",
    ),
    pytest.param(
        _set(
            "fixtures.query_background",
            [
                {"args": {"query": "coupon policy"}, "response": 1},
                {"args": {"query": "policy, coupon!"}, "response": 2},
            ],
        ),
        "fixtures.query_background[1].args: matches the same calls as "
        "fixtures.query_background[0], so it would never be used",
        id="fixture-written-twice-in-other-order-and-punctuation",
    ),
    pytest.param(
        _set(
            "fixtures.query_background",
            [
                {"args": {"query": "優惠碼 會員折扣"}, "response": 1},
                {"args": {"query": "會員折扣、優惠碼、優惠碼"}, "response": 2},
            ],
        ),
        "fixtures.query_background[1].args: matches the same calls as "
        "fixtures.query_background[0], so it would never be used",
        id="fixture-written-twice-with-a-term-repeated",
    ),
    pytest.param(
        _drop("fixtures"),
        None,
        id="no-fixtures-is-fine",
    ),
    pytest.param(
        _raw_case(MINIMAL_CASE_TEXT + "tags: [a\n"),
        "cases/tiny.yaml: line 7, column 1: invalid YAML",
        id="yaml-syntax-error",
    ),
    pytest.param(
        _raw_case(MINIMAL_CASE_TEXT + "tags: !!python/object/apply:os.system ['echo pwned']\n"),
        "passhat reads plain YAML data only (no !tags)",
        id="unsafe-yaml-tag-is-refused",
    ),
    pytest.param(
        _raw_case(MINIMAL_CASE_TEXT + "id: tiny-002\n"),
        "the key 'id' is written twice (first on line 1); keep one",
        id="key-written-twice",
    ),
    pytest.param(
        _raw_case(MINIMAL_CASE_TEXT.replace("d,", "2024-01-31,")),
        "input.ticket.description: YAML read this as a date (2024-01-31); put it in quotes",
        id="date-is-not-text",
    ),
    pytest.param(
        _raw_case(""),
        "cases/tiny.yaml: is empty",
        id="empty-case-file",
    ),
    pytest.param(
        _suite("defaults.scorers", [{"exact_sett": "ticket.annotations"}]),
        "suite.yaml: defaults.scorers[0]: names none of the scorer kinds; give exactly one of "
        "exact_set, subset, superset, equals, matches, present, judge, custom; did you mean "
        "'exact_set'?",
        id="unknown-scorer-kind",
    ),
    pytest.param(
        _suite("defaults.scorers", []),
        "suite.yaml: defaults.scorers: is empty",
        id="no-scorer",
    ),
    pytest.param(
        _suite("defaults.scorers", [{"exact_set": "ticket annotations"}]),
        "defaults.scorers[0].exact_set: 'ticket annotations' is not a dotted path",
        id="scorer-path-with-a-space",
    ),
    pytest.param(
        _suite("defaults.scorers", [{"exact_set": "ticket.annotations", "item": "AC{ac"}]),
        "defaults.scorers[0].item: 'AC{ac' is not a valid item template",
        id="broken-item-template",
    ),
    pytest.param(
        _suite("defaults.scorers", [{"exact_set": "ticket.flags"}]),
        "cases/tiny.yaml: goal.ticket.flags: missing; the exact_set scorer in suite.yaml "
        "compares this path",
        id="goal-lacks-the-scored-path",
    ),
    pytest.param(
        _suite("defaults.scorers", [{"exact_set": "ticket.annotations", "item": "{ac}:{kind}"}]),
        "suite.yaml: defaults.scorers[0].item: '{ac}:{kind}' names kind, which no goal item of "
        "any case holds (they hold ac, label, note)",
        id="item-template-names-a-field-no-goal-holds",
    ),
    pytest.param(
        _second_case_lacks_label,
        "cases/other.yaml: goal.ticket.annotations[0]: lacks note, which the scorer's item "
        "'AC{ac}:{note}' names",
        id="one-goal-item-lacks-a-template-field",
    ),
]


@pytest.mark.parametrize(("edit", "expected"), INVALID)
def test_validation_message(
    writer: SuiteWriter, edit: Callable[[SuiteWriter], None], expected: str | None
) -> None:
    edit(writer)
    root = writer.write()
    if expected is None:
        assert load_suite(root).cases
        return
    found = problems_of(root)
    assert any(expected in p for p in found), "\n".join(found)
    assert all(p.startswith(str(root)) for p in found)


def test_fixtures_with_different_terms_are_not_duplicates(writer: SuiteWriter) -> None:
    writer.case["fixtures"]["query_background"] = [
        {"args": {"query": "coupon"}, "response": 1},
        {"args": {"query": "coupon policy"}, "response": 2},
        {"args": {"query": "coupons"}, "response": 3},
    ]
    assert len(load_suite(writer.write()).cases[0].fixtures["query_background"]) == 3


# Nine levels of aliases, nine times each: 9**9 (387 million) strings once expanded.
BILLION_LAUGHS = "lol: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)
ANCHOR_MESSAGE = "YAML anchors and aliases are not allowed in suites; write the value out"


@pytest.mark.parametrize(
    ("text", "where", "found"),
    [
        pytest.param(
            MINIMAL_CASE_TEXT + "a: &x [*x]\n", "line 6, column 4", "the anchor &x", id="self-alias"
        ),
        pytest.param(
            MINIMAL_CASE_TEXT + BILLION_LAUGHS, "line 6, column 6", "the anchor &a", id="laughs"
        ),
        pytest.param(
            MINIMAL_CASE_TEXT + "tags: [tag, *t]\n", "line 6, column 13", "the alias *t", id="alias"
        ),
        pytest.param(
            MINIMAL_CASE_TEXT.replace("goal:\n  ticket: {", "goal:\n  ticket: &g {"),
            "line 5, column 11",
            "the anchor &g",
            id="anchor-alone",
        ),
    ],
)
def test_yaml_anchors_and_aliases_are_refused_quickly(
    writer: SuiteWriter, text: str, where: str, found: str
) -> None:
    # Guards against a small file expanding into millions of nodes for the checks
    # and hashes to walk, and against a cycle crashing the load with RecursionError.
    writer.cases["tiny.yaml"] = text
    root = writer.write()
    started = time.perf_counter()
    assert problems_of(root) == [
        f"{root / 'cases' / 'tiny.yaml'}: {where}: {ANCHOR_MESSAGE} (found {found})"
    ]
    assert time.perf_counter() - started < 5


def test_yaml_anchors_are_refused_in_suite_yaml_too(writer: SuiteWriter) -> None:
    writer.suite = REFORMATTED_SUITE.replace("labels: [", "labels: &labels [")
    root = writer.write()
    assert problems_of(root) == [
        f"{root / 'suite.yaml'}: line 11, column 9: {ANCHOR_MESSAGE} (found the anchor &labels)"
    ]


def test_asterisks_and_ampersands_in_text_are_not_aliases(writer: SuiteWriter) -> None:
    writer.cases["tiny.yaml"] = MINIMAL_CASE_TEXT.replace(
        "description: d", 'description: "**Why** & how: a * b"'
    ).replace("text: x", "text: R&D signs off * twice")
    ticket = load_suite(writer.write()).cases[0].input["ticket"]
    assert ticket["description"] == "**Why** & how: a * b"
    assert ticket["acceptance_criteria"][0]["text"] == "R&D signs off * twice"


def test_duplicate_case_ids_name_both_files(writer: SuiteWriter) -> None:
    writer.cases["again.yaml"] = dict(writer.case)
    root = writer.write()
    # Files are read in name order: again.yaml first, so tiny.yaml is the duplicate.
    assert problems_of(root) == [
        f"{root / 'cases' / 'tiny.yaml'}: id: 'tiny-001' is already the id of "
        f"{root / 'cases' / 'again.yaml'}; give each case its own id"
    ]


def test_every_problem_is_listed_at_once(writer: SuiteWriter) -> None:
    other = copy.deepcopy(writer.case)
    writer.case["goal"]["ticket"]["annotations"][0]["label"] = "unverfiable"
    writer.case["input"]["ticket"]["summary"] = "s"
    # A stray key does not hide the problems of the rest of the file.
    other.update(id="other-002", tag=["x"])
    other["goal"]["ticket"]["annotations"][0]["ac"] = 4
    writer.cases["other.yaml"] = other
    assert isinstance(writer.suite, dict)
    writer.suite["defaults"]["k"] = 0
    writer.suite["defaults"]["scorers"][0]["items"] = writer.suite["defaults"]["scorers"][0].pop(
        "item"
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(writer.write())
    problems = caught.value.problems
    # tiny.yaml's goal label waits until its input fits: the environment's rules are
    # checked against a world set up from the input (the goal's schema is not)
    assert len(problems) == 5, "\n".join(problems)
    assert "5 problems" in str(caught.value)
    assert sum("suite.yaml: defaults.k" in p for p in problems) == 1
    assert sum("suite.yaml: defaults.scorers[0].items: unknown key" in p for p in problems) == 1
    assert sum("other.yaml: tag: unknown key" in p for p in problems) == 1
    assert (
        sum(
            "other.yaml: goal.ticket.annotations[0].ac: the ticket has no AC 4" in p
            for p in problems
        )
        == 1
    )
    assert sum("tiny.yaml: input.ticket.summary" in p for p in problems) == 1


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        pytest.param("nothing", "no such folder", id="no-such-folder"),
        pytest.param("file", "is a file, not a suite folder", id="a-file"),
        pytest.param("no-suite-yaml", "suite.yaml: no such file", id="no-suite-yaml"),
        pytest.param("no-cases", "cases: no such folder", id="no-cases-folder"),
        pytest.param("empty-cases", "cases: holds no case files", id="empty-cases-folder"),
    ],
)
def test_suite_folder_layout_problems(writer: SuiteWriter, layout: str, expected: str) -> None:
    root = writer.write()
    if layout == "nothing":
        shutil.rmtree(root)
    elif layout == "file":
        shutil.rmtree(root)
        root.write_text("name: x\n", encoding="utf-8")
    elif layout == "no-suite-yaml":
        (root / "suite.yaml").unlink()
    elif layout == "no-cases":
        shutil.rmtree(root / "cases")
    else:
        (root / "cases" / "tiny.yaml").unlink()
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert any(expected in p for p in caught.value.problems), caught.value.problems


# ---------------------------------------------------------------------- hashes

REFORMATTED_CASE = """\
# The same case, written by hand: other key order, flow style, comments.
tags: [test]
goal: {ticket: {annotations: [{note: vague, label: unverifiable, ac: 2}]}}
fixtures:
  query_background:
  - response: One coupon per order.   # same text
    args: {query: coupon policy}
id: tiny-001
input:
  ticket:
    acceptance_criteria:
    - {text: The checkout page has a coupon field., ac: 1}
    - {text: Applying a coupon is quick., ac: 2}
    - {text: A second coupon is refused., ac: 3}
    description: "One coupon per order."
    title: 'Coupon field'
    key: T-1
"""

REFORMATTED_SUITE = """\
defaults:   # k and max_turns written out at their default values
  k: 3
  max_turns: 10
  agent: clarifier
  scorers:
  - {item: "AC{ac}:{label}", exact_set: ticket.annotations}
  - present:
    - ticket.goal
    - ticket.scope_in
  model: replay:cassettes/none.jsonl
labels: [conflict, inconsistent_with_description, unverifiable]
environment: ticket
description: A one-case ticket suite for tests.
name: tiny
"""


def _load(writer: SuiteWriter) -> Suite:
    return load_suite(writer.write())


def test_hashes_ignore_key_order_formatting_and_comments(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    before = _load(writer)
    writer.cases["tiny.yaml"] = REFORMATTED_CASE
    writer.suite = REFORMATTED_SUITE
    after = _load(writer)
    assert after.cases[0].hash == before.cases[0].hash
    assert after.hash == before.hash


def test_hashes_do_not_depend_on_where_the_suite_lives(writer: SuiteWriter, tmp_path: Path) -> None:
    here = _load(writer)
    there = load_suite(shutil.copytree(writer.root, tmp_path / "elsewhere"))
    assert (there.hash, there.cases[0].hash) == (here.hash, here.cases[0].hash)


CHANGES = [
    pytest.param(_set("input.ticket.description", "Two coupons per order."), True, id="input"),
    pytest.param(_set("fixtures.query_background.0.response", "Two."), True, id="fixture"),
    pytest.param(_set("fixtures.query_background.0.args.query", "coupon rule"), True, id="args"),
    pytest.param(_set("goal.ticket.annotations.0.label", "conflict"), True, id="goal-label"),
    pytest.param(_set("goal.ticket.annotations.0.note", "too vague"), True, id="goal-note"),
    pytest.param(_set("id", "tiny-002"), False, id="case-id"),
    pytest.param(_suite("defaults.k", 5), False, id="suite-k"),
    pytest.param(_suite("defaults.max_turns", 3), False, id="suite-max-turns"),
    pytest.param(_suite("description", "Other."), False, id="suite-description"),
    pytest.param(_suite("labels", ["conflict", "unverifiable"]), False, id="suite-labels"),
    pytest.param(
        _suite("defaults.scorers", [{"exact_set": "ticket.annotations"}]), False, id="scorers"
    ),
]


@pytest.mark.parametrize(("edit", "case_changes"), CHANGES)
def test_any_content_change_changes_the_hash(
    writer: SuiteWriter, edit: Callable[[SuiteWriter], None], case_changes: bool
) -> None:
    before = _load(writer)
    edit(writer)
    after = _load(writer)
    assert after.hash != before.hash
    assert (after.cases[0].hash != before.cases[0].hash) is case_changes


def test_a_new_case_changes_the_suite_hash_only(writer: SuiteWriter) -> None:
    before = _load(writer)
    writer.cases["more.yaml"] = dict(writer.case, id="tiny-002")
    after = _load(writer)
    assert after.hash != before.hash
    assert after.case("tiny-001").hash == before.case("tiny-001").hash


def test_editing_a_scorer_file_changes_the_suite_hash(writer: SuiteWriter) -> None:
    assert isinstance(writer.suite, dict)
    writer.suite["defaults"]["scorers"] = [{"custom": "rules.py:check"}]
    writer.files["rules.py"] = "def check(final_state, goal):\n    return True\n"
    before = _load(writer)
    writer.files["rules.py"] = "def check(final_state, goal):\n    return False\n"
    assert _load(writer).hash != before.hash


def test_the_fast_yaml_reader_gives_what_the_safe_loader_gives() -> None:
    """suite.load_yaml builds plain mappings, lists and strings itself (several times
    faster on 1,000 case files); values and errors must stay the safe loader's."""
    import yaml

    from passhat.suite import _UniqueKeyLoader, load_yaml

    def both(text: str) -> tuple[object, object]:
        out = []
        for read in (lambda: yaml.load(text, Loader=_UniqueKeyLoader), lambda: load_yaml(text)):
            try:
                out.append(read())
            except yaml.YAMLError as error:
                out.append(("error", str(error)))
        return out[0], out[1]

    texts = [
        (EXAMPLES / "clarify" / "cases" / "ac-conflict-001.yaml").read_text(encoding="utf-8"),
        "a: 1\nb: [1.5, yes, null, ~, '1', 2026-01-01]\nc: {d: e}\n",
        "a: 1\na: 2\n",  # a key written twice
        "1: x\n1: y\n",
        "? [1]\n: 2\n",  # an unhashable key
        "a: [1, 2\n",  # a parse error
        "a: !!python/object x\n",
        "",
    ]
    for text in texts:
        safe, fast = both(text)
        assert safe == fast, text
    assert "written twice" in str(both("a: 1\na: 2\n")[1])
    # _UniqueKeyLoader answers libyaml's tag questions itself and load_yaml reads plain
    # decimal integers itself: every scalar must still read as PyYAML's safe loader reads it
    scalars = " ".join(
        [
            "0 7 10 -3 +4 007 012 0x1F 0o17 0b101 1_000 190:20:30 99999999999999999999",
            "1.5 -1.5 .5 1e3 1.0e+3 .inf -.Inf .nan 1_0.5 6.8523015e+5",
            "yes No TRUE off y n ~ null Null 2026-01-01 2026-01-01T10:00:00Z",
            "text 'quoted' \"1\" '' <<x =x 優惠碼 -x +x .x 0a 1a ２",
        ]
    ).split(" ")
    for scalar in scalars:
        text = f"a: {scalar}\nb: [{scalar}]\n{scalar}: c\n"
        try:
            expected = yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            continue  # e.g. a merge key with a scalar: refused by both, compared above
        assert load_yaml(text) == expected, scalar
        assert yaml.load(text, Loader=_UniqueKeyLoader) == expected, scalar


@pytest.mark.parametrize(
    "text",
    [
        "a: [1, x, null, true, 1.5, -2, 0x1F]\nb: {c: ~}\n",
        "a: .nan\n",
        "a: [.inf]\n",
        "1: x\n",
        "a: {null: x}\n",
        "a: 2026-01-01\n",
        "a: !!binary aGk=\n",
        "a: !!set {1, 2}\n",
        "? [1]\n: 2\n",
        "b: &x {c: 1}\n",
        "<<: {a: 1}\n",
    ],
)
def test_the_yaml_readers_plain_finding_agrees_with_the_named_problems(text: str) -> None:
    """_load_yaml finds while it builds a value whether it holds only JSON's kinds of
    values, and the load skips the walk that names problems when it does: that
    finding must never hide one."""
    import yaml

    from passhat.suite import _json_problems, _load_yaml

    try:
        value, plain = _load_yaml(text)
    except yaml.YAMLError:
        return  # refused outright (an unhashable key): nothing to check
    problems = list(_json_problems(value))
    assert not (plain and problems), (text, problems)
    if text.startswith("a: [1, x"):
        assert plain and not problems


def test_a_case_hands_out_copies_and_cannot_be_changed(writer: SuiteWriter) -> None:
    """A loaded case keeps its input, fixtures and goal packed (10,000 cases stay in
    memory for a whole experiment) and each read is a fresh copy: what one run or
    scorer does to what it got never reaches the next run."""
    import pickle

    case = _load(writer).cases[0]
    ticket = case.input["ticket"]
    ticket["title"] = "changed by a run"
    case.goal["ticket"]["annotations"].clear()
    for items in case.fixtures.values():
        items.clear()
    assert case.input["ticket"]["title"] != "changed by a run"
    assert case.goal["ticket"]["annotations"]
    assert all(case.fixtures.values())
    with pytest.raises(AttributeError):
        case.id = "other"  # type: ignore[misc]
    shipped = pickle.loads(pickle.dumps(case))  # as the Dask executor ships it
    assert shipped == case and shipped.input == case.input and shipped.file == case.file


def test_a_loaded_suite_keeps_its_cases_content_in_an_unlinked_temporary_file() -> None:
    """10,000 cases stay loaded for a whole experiment: their input, fixtures and goal
    are written to one temporary file per suite (read back per use), not kept in memory."""
    suite = load_suite(EXAMPLES / "clarify")
    shelf = suite.cases[0]._shelf
    assert all(case._shelf is shelf for case in suite.cases)
    assert shelf._fd is not None and not shelf._buffer  # nothing left in memory
    blobs = [case._blob(part) for case in suite.cases for part in range(3)]
    status = os.fstat(shelf._fd)
    assert status.st_size == sum(len(blob) for blob in blobs)
    assert status.st_nlink == 0  # unlinked at once: nothing is left behind in TMPDIR
    seed = suite.case("ac-conflict-001")
    assert annotations(seed.goal) == SEED_GOAL
    assert "query_background" in seed.fixtures and seed.input["ticket"]["key"] == "SHOP-1042"


def test_without_a_temporary_directory_a_suite_keeps_its_content_in_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-dir"))
    suite = load_suite(EXAMPLES / "clarify")
    shelf = suite.cases[0]._shelf
    assert shelf._fd is None and shelf._buffer
    monkeypatch.undo()
    assert [(c.input, c.fixtures, c.goal) for c in suite.cases] == [
        (c.input, c.fixtures, c.goal) for c in load_suite(EXAMPLES / "clarify").cases
    ]
    seed = suite.case("ac-conflict-001")
    seed.goal["ticket"]["annotations"].clear()
    assert annotations(seed.goal) == SEED_GOAL  # still a fresh copy per read


_FULL_DISK = """
import json, resource, signal, sys
from passhat import suite as s
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
s._Shelf.FLUSH_BYTES = 1000  # several writes while the suite loads
resource.setrlimit(resource.RLIMIT_FSIZE, (4000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
loaded = s.load_suite(sys.argv[1])
shelf = loaded.cases[0]._shelf
content = [[c.id, c.input, c.fixtures, c.goal] for c in loaded.cases]
print(json.dumps([shelf._written, len(shelf._buffer), content], default=repr))
"""


@pytest.mark.skipif(not hasattr(os, "pwrite"), reason="POSIX file limits")
def test_a_temporary_file_that_fills_up_keeps_the_rest_of_the_suite_in_memory() -> None:
    """A full disk (here a file size limit) mid-load: what was written is read from the
    file, the rest stays in memory, and every case reads back whole."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(EXAMPLES / "clarify")],
        capture_output=True,
        text=True,
        check=True,
    )
    written, buffered, content = json.loads(done.stdout)
    assert 0 < written <= 4000 and buffered > 0
    expected = [[c.id, c.input, c.fixtures, c.goal] for c in load_suite(EXAMPLES / "clarify").cases]
    assert content == json.loads(json.dumps(expected, default=repr))


def test_loaded_suites_close_their_temporary_files() -> None:
    import gc

    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc to count open files")
    gc.collect()
    before = len(os.listdir(fds))
    for _ in range(20):
        assert load_suite(EXAMPLES / "clarify").cases[0].input
    gc.collect()
    assert len(os.listdir(fds)) <= before


def test_a_misspelt_item_template_is_one_line_not_one_per_case(writer: SuiteWriter) -> None:
    """#29: '{lable}' was blamed on every goal item of every case; the template is wrong."""
    assert isinstance(writer.suite, dict)
    writer.suite["defaults"]["scorers"][0]["item"] = "AC{ac}:{lable}"
    for n in range(5):
        writer.cases[f"c{n}.yaml"] = dict(copy.deepcopy(writer.case), id=f"c-{n}")
    with pytest.raises(SuiteError) as caught:
        load_suite(writer.write())
    assert len(caught.value.problems) == 1, caught.value.problems
    assert "defaults.scorers[0].item: 'AC{ac}:{lable}' names lable" in caught.value.problems[0]
    assert "did you mean 'label'?" in caught.value.problems[0]


def test_a_case_file_is_read_in_a_buffer_of_its_own_size(tmp_path: Path) -> None:
    """Each case file is read as large as it is, not into a buffer of the 64 MiB a suite
    file may hold: that buffer, made for every file, made reading 200 small ones 5-8 ms, not 2."""
    import tracemalloc

    suite = tmp_path / "clarify"
    shutil.copytree(EXAMPLES / "clarify", suite)
    load_suite(suite)  # imports and caches warmed outside the measure
    tracemalloc.start()
    try:
        load_suite(suite)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak


def test_a_case_file_that_grew_after_it_was_sized_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is sized (fstat) before it is read: one that grows in between is read on
    past the size fstat gave (up to the cap), never cut at it."""
    from passhat.suite import loading

    suite = tmp_path / "clarify"
    shutil.copytree(EXAMPLES / "clarify", suite)
    whole = load_suite(suite)
    real = os.fstat

    def smaller(fd: int) -> os.stat_result:
        info = list(real(fd))
        info[6] = min(info[6], 10)  # st_size: as if the file held 10 bytes then
        return os.stat_result(info)

    monkeypatch.setattr(loading.os, "fstat", smaller)
    assert load_suite(suite).hash == whole.hash
