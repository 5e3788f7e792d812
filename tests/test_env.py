"""Environments: fresh worlds, tool schemas, fixture replay, and the record of every call."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.env import Environment, ToolOutcome, make_environment
from passhat.envs.board import BoardEnvironment
from passhat.envs.ticket import TicketEnvironment
from passhat.errors import SuiteError
from passhat.suite import Suite, load_suite

if TYPE_CHECKING:
    from conftest import SuiteWriter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def clarify() -> Suite:
    return load_suite(EXAMPLES / "clarify")


@pytest.fixture(scope="module")
def trello() -> Suite:
    return load_suite(EXAMPLES / "trello")


def seed_env(clarify: Suite) -> Environment:
    return make_environment(clarify, clarify.case("ac-conflict-001"))


def update_args(**changes: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "key": "SHOP-1042",
        "goal": "讓顧客在結帳時使用優惠碼。",
        "scope_in": ["結帳頁優惠碼欄位"],
        "scope_out": ["會員折扣計算"],
        "annotations": [{"ac": 3, "label": "conflict", "note": "與 AC 5 矛盾"}],
    }
    return {**args, **changes}


# ------------------------------------------------------------------------ tools


def test_ticket_environment_offers_three_tools_with_schemas(clarify: Suite) -> None:
    env = seed_env(clarify)
    assert isinstance(env, TicketEnvironment)
    specs = {t.name: t for t in env.tools}
    assert list(specs) == ["get_ticket", "query_background", "update_ticket"]
    update = specs["update_ticket"].parameters
    assert update["required"] == ["key", "goal", "scope_in", "scope_out", "annotations"]
    assert update["additionalProperties"] is False
    label = update["properties"]["annotations"]["items"]["properties"]["label"]
    assert label["enum"] == list(clarify.labels)
    assert specs["query_background"].parameters["required"] == ["query"]
    assert all(json.dumps(t.parameters) and t.description for t in env.tools)


async def test_get_ticket_returns_the_ticket_with_nothing_written_yet(clarify: Suite) -> None:
    env = seed_env(clarify)
    outcome = await env.call("get_ticket", {"key": "SHOP-1042"})
    assert not outcome.is_error
    ticket = outcome.content
    assert ticket["title"] == "結帳頁支援優惠碼"
    assert len(ticket["acceptance_criteria"]) == 7
    assert (ticket["goal"], ticket["scope_in"], ticket["scope_out"], ticket["annotations"]) == (
        "",
        [],
        [],
        [],
    )
    assert "優惠碼" in outcome.text()  # non-ASCII kept readable for the model


async def test_get_ticket_of_an_unknown_key_is_an_error_the_agent_reads(clarify: Suite) -> None:
    env = seed_env(clarify)
    outcome = await env.call("get_ticket", {"key": "SHOP-9"})
    assert outcome.is_error
    assert outcome.text() == "no ticket 'SHOP-9'; the ticket here is SHOP-1042"
    assert env.calls[0].error == outcome.text() and env.calls[0].result is None


# --------------------------------------------------------------------- fixtures


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("優惠碼 會員折扣", "第 4 條", id="the-recorded-query"),
        pytest.param(
            "優惠碼可以和會員折扣一起用嗎？", "第 4 條", id="a-question-holding-the-terms"
        ),
        pytest.param("會員折扣、優惠碼", "第 4 條", id="terms-in-another-order"),
        pytest.param("每筆訂單可用幾組優惠碼", "第 3 條", id="the-other-fixture"),
        pytest.param("優惠碼\u3000每筆訂單", "第 3 條", id="ideographic-space-normalised"),
        pytest.param("優惠碼與會員折扣可以併用嗎", "第 4 條", id="no-spaces-no-punctuation"),
    ],
)
async def test_query_background_replays_a_matching_fixture(
    clarify: Suite, query: str, expected: str
) -> None:
    env = seed_env(clarify)
    outcome = await env.call("query_background", {"query": query})
    assert not outcome.is_error
    assert expected in outcome.content
    record = env.calls[0]
    assert (record.tool, record.arguments, record.fixture_miss) == (
        "query_background",
        {"query": query},
        False,
    )
    assert record.result == outcome.content and record.error is None


async def test_english_queries_match_case_and_punctuation_blind(clarify: Suite) -> None:
    env = make_environment(clarify, clarify.case("bg-return-window-en-005"))
    outcome = await env.call("query_background", {"query": "What is the ＲＥＴＵＲＮ window?"})
    assert (
        outcome.content
        == "Returns Policy v5, section 2: the return window is 14 days from delivery."
    )


async def test_english_fixture_terms_match_whole_words_only(clarify: Suite) -> None:
    # Guards against substring matching: "return policy" inside "nonreturnable ... policyholder".
    env = make_environment(clarify, clarify.case("bg-return-window-en-005"))
    outcome = await env.call("query_background", {"query": "nonreturnable items and policyholder"})
    assert outcome.is_error and env.calls[0].fixture_miss


@pytest.mark.parametrize(
    ("fixture", "query", "answered"),
    [
        pytest.param("fee", "Where is the feedback form?", False, id="word-inside-a-word"),
        pytest.param("fee", "Is there a FEE?", True, id="the-word-itself"),
        pytest.param("return policy", "policy on returns", False, id="no-stemming"),
        pytest.param("e-mail", "Send an e‐mail (E-Mail)", True, id="hyphenated-word"),
        pytest.param("優惠碼 會員折扣", "優惠碼與會員折扣可以併用嗎", True, id="chinese-in-a-run"),
        pytest.param("會員", "會 員", False, id="chinese-term-split-by-a-space"),
        pytest.param("sku", "SKU碼在哪裡查", True, id="latin-word-beside-chinese"),
        pytest.param("sk", "SKU碼在哪裡查", False, id="part-of-a-latin-word-beside-chinese"),
        pytest.param("クーポン 併用", "クーポンの併用について", True, id="japanese-in-a-run"),
        pytest.param("쿠폰", "쿠폰 정책", True, id="korean-whole-word"),
    ],
)
async def test_query_terms_match_as_words_or_inside_chinese_and_japanese_text(
    writer: SuiteWriter, fixture: str, query: str, answered: bool
) -> None:
    writer.case["fixtures"]["query_background"] = [{"args": {"query": fixture}, "response": "ok"}]
    suite = load_suite(writer.write())
    outcome = await make_environment(suite, suite.cases[0]).call(
        "query_background", {"query": query}
    )
    assert outcome.is_error is not answered, outcome.text()


_MIXED_TEXT = st.text(
    alphabet=st.sampled_from(
        list("ab Z9-_.,!?\t\n\u3000\u00a0")
        + list("優惠碼會員折扣クーポンの併用ㄅㄆ〇々\u2e80\u2fdf\uf900\U00020000\U0003ffff")
        + ["\u3004", "\u3008", "\U00040000", "é", "ß", "쿠", "폰"]
    ),
    max_size=40,
)


@given(_MIXED_TEXT)
@settings(max_examples=300, deadline=None)
def test_query_terms_split_as_the_one_regex_of_both_kinds_of_term_did(text: str) -> None:
    """e2e55: terms are found with one character class (runs of Chinese or Japanese
    characters split out of each word), not the three of `[U]+|[^U\\s]+` and `[U]` (3 ms
    of every run's imports to compile): the same terms, in the same order."""
    import re
    import unicodedata

    from passhat import fixtures

    unspaced = fixtures._UNSPACED
    oracle = re.compile(f"[{unspaced}]+|[^{unspaced}\\s]+")
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(
        " " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in folded
    )
    assert fixtures._query_terms(text) == tuple(oracle.findall(spaced))
    first = re.compile(f"[{unspaced}]")
    for term in fixtures._query_terms(text):
        assert bool(fixtures._UNSPACED_RUN.match(term)) == bool(first.match(term))


async def test_every_bundled_fixture_answers_its_own_query(clarify: Suite) -> None:
    for case in clarify.cases:
        for fixture in case.fixtures.get("query_background", []):
            env = make_environment(clarify, case)
            outcome = await env.call("query_background", fixture.args)
            assert outcome.content == fixture.response, (case.id, fixture.args)


async def test_the_fixture_with_most_matching_terms_wins(writer: SuiteWriter) -> None:
    writer.case["fixtures"]["query_background"] = [
        {"args": {"query": "coupon"}, "response": "general"},
        {"args": {"query": "coupon stacking"}, "response": "specific"},
    ]
    suite = load_suite(writer.write())
    env = make_environment(suite, suite.cases[0])
    assert (await env.call("query_background", {"query": "coupon stacking rules"})).content == (
        "specific"
    )
    assert (await env.call("query_background", {"query": "coupon length"})).content == "general"


async def test_a_query_without_a_recorded_answer_is_an_error_and_a_fixture_miss(
    clarify: Suite,
) -> None:
    env = seed_env(clarify)
    outcome = await env.call("query_background", {"query": "優惠碼 有效期限"})
    assert outcome.is_error
    assert outcome.text().startswith("query_background: no recorded answer for")
    record = env.calls[0]
    assert record.fixture_miss is True
    assert record.result is None and record.error == outcome.text()


async def test_a_case_without_fixtures_misses_every_query(clarify: Suite) -> None:
    env = make_environment(clarify, clarify.case("clean-order-tracking-002"))
    outcome = await env.call("query_background", {"query": "物流"})
    assert outcome.is_error and env.calls[0].fixture_miss


# ---------------------------------------------------------------- update_ticket


async def test_update_ticket_writes_the_ticket(clarify: Suite) -> None:
    env = seed_env(clarify)
    outcome = await env.call("update_ticket", update_args())
    assert outcome == ToolOutcome({"updated": "SHOP-1042", "annotations": 1})
    ticket = env.final_state()["ticket"]
    assert ticket["goal"] == "讓顧客在結帳時使用優惠碼。"
    assert ticket["annotations"] == [{"ac": 3, "label": "conflict", "note": "與 AC 5 矛盾"}]
    assert ticket["title"] == "結帳頁支援優惠碼"  # the rest of the ticket is kept


async def test_update_ticket_replaces_what_was_written_before(clarify: Suite) -> None:
    env = seed_env(clarify)
    await env.call("update_ticket", update_args())
    await env.call("update_ticket", update_args(annotations=[]))
    assert env.final_state()["ticket"]["annotations"] == []


async def test_update_ticket_with_a_bad_label_is_rejected_and_recorded(clarify: Suite) -> None:
    env = seed_env(clarify)
    bad = update_args(annotations=[{"ac": 7, "label": "unverfiable", "note": "太模糊"}])
    outcome = await env.call("update_ticket", bad)
    assert outcome.is_error
    assert outcome.text() == (
        "invalid arguments for update_ticket: annotations[0].label: 'unverfiable' is not one "
        "of conflict, inconsistent_with_description, unverifiable; did you mean 'unverifiable'?"
    )
    record = env.calls[0]
    assert (record.tool, record.arguments, record.error) == ("update_ticket", bad, outcome.text())
    assert record.result is None and record.fixture_miss is False
    assert env.final_state()["ticket"]["annotations"] == []  # nothing was written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {k: v for k, v in update_args().items() if k != "scope_out"},
            "scope_out: missing; add it",
            id="missing-argument",
        ),
        pytest.param(
            update_args(scope="x"),
            "scope: unknown key 'scope'; the keys allowed here are key, goal, scope_in, "
            "scope_out, annotations",
            id="unknown-argument",
        ),
        pytest.param(
            update_args(scope_in="結帳頁"),
            "scope_in: expected an array, got '結帳頁'",
            id="text-where-a-list-belongs",
        ),
        pytest.param(
            update_args(annotations=[{"ac": "3", "label": "conflict", "note": ""}]),
            "annotations[0].ac: expected an integer, got '3'",
            id="ac-as-text",
        ),
        pytest.param(
            update_args(annotations=[{"ac": 3, "label": "conflict"}]),
            "annotations[0].note: missing; add it",
            id="annotation-without-note",
        ),
        pytest.param(
            update_args(annotations=[{"ac": 8, "label": "conflict", "note": ""}]),
            "annotations[0].ac: the ticket has no AC 8; its ACs are 1, 2, 3, 4, 5, 6, 7",
            id="ac-the-ticket-lacks",
        ),
        pytest.param(
            update_args(
                annotations=[
                    {"ac": 3, "label": "conflict", "note": "a"},
                    {"ac": 3, "label": "conflict", "note": "b"},
                ]
            ),
            "annotations[1]: repeats annotations[0] (AC3:conflict)",
            id="same-annotation-twice",
        ),
        pytest.param(update_args(key="SHOP-1"), "no ticket 'SHOP-1'", id="unknown-ticket"),
    ],
)
async def test_invalid_update_ticket_calls_are_errors_that_change_nothing(
    clarify: Suite, args: dict[str, Any], message: str
) -> None:
    env = seed_env(clarify)
    before = env.final_state()
    outcome = await env.call("update_ticket", args)
    assert outcome.is_error and message in outcome.text(), outcome.text()
    assert env.calls[0].error == outcome.text()
    assert env.final_state() == before


# -------------------------------------------------------------- agent mistakes


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        pytest.param(
            "update_tickets",
            {},
            "unknown tool 'update_tickets'; the tools are get_ticket, query_background, "
            "update_ticket; did you mean 'update_ticket'?",
            id="unknown-tool",
        ),
        pytest.param(
            "get_ticket",
            ["SHOP-1042"],
            'invalid arguments for get_ticket: expected an object, got ["SHOP-1042"]',
            id="arguments-not-an-object",
        ),
    ],
)
async def test_agent_mistakes_never_raise(
    clarify: Suite, name: str, arguments: Any, message: str
) -> None:
    env = seed_env(clarify)
    outcome = await env.call(name, arguments)
    assert outcome == ToolOutcome(message, is_error=True)
    assert env.calls[0].tool == name and env.calls[0].error == message


async def test_every_call_is_recorded_in_order_with_its_time(clarify: Suite) -> None:
    env = seed_env(clarify)
    before = time.time()
    await env.call("get_ticket", {"key": "SHOP-1042"})
    await env.call("query_background", {"query": "nothing recorded"})
    await env.call("update_ticket", update_args())
    after = time.time()
    assert [c.tool for c in env.calls] == ["get_ticket", "query_background", "update_ticket"]
    assert [c.fixture_miss for c in env.calls] == [False, True, False]
    assert all(before <= c.started_at <= after and c.duration_s >= 0 for c in env.calls)
    assert [c.started_at for c in env.calls] == sorted(c.started_at for c in env.calls)
    row = json.loads(json.dumps(env.calls[2].to_dict()))
    assert row["arguments"] == update_args()
    assert row["result"] == {"updated": "SHOP-1042", "annotations": 1}
    assert set(row) == {
        "tool",
        "arguments",
        "result",
        "error",
        "fixture_miss",
        "started_at",
        "duration_s",
    }


# -------------------------------------------------------------------- isolation


async def test_two_environments_of_one_case_never_share_state(clarify: Suite) -> None:
    case = clarify.case("ac-conflict-001")
    first, second = make_environment(clarify, case), make_environment(clarify, case)
    await first.call("update_ticket", update_args())
    assert first.final_state()["ticket"]["annotations"]
    assert second.final_state()["ticket"]["annotations"] == []
    assert second.calls == [] and len(first.calls) == 1
    assert "goal" not in case.input["ticket"]  # the case itself is untouched


async def test_two_environments_of_one_case_never_share_fixtures(clarify: Suite) -> None:
    # Guards against fixtures kept by reference: what one run reaches, another run reads.
    case = clarify.case("ac-conflict-001")
    first, second = make_environment(clarify, case), make_environment(clarify, case)
    for fixture in first._fixtures["query_background"]:
        fixture.args["query"] = "changed"
    assert case.fixtures["query_background"][0].args == {"query": "優惠碼 會員折扣"}
    outcome = await second.call("query_background", {"query": "優惠碼 會員折扣"})
    assert "第 4 條" in outcome.content
    assert (await first.call("query_background", {"query": "優惠碼 會員折扣"})).is_error


async def test_nothing_handed_out_aliases_the_state(clarify: Suite) -> None:
    env = seed_env(clarify)
    args = update_args()
    await env.call("update_ticket", args)
    args["annotations"].append({"ac": 4, "label": "unverifiable", "note": ""})
    env.final_state()["ticket"]["annotations"].clear()
    read = await env.call("get_ticket", {"key": "SHOP-1042"})
    read.content["title"] = "changed"
    ticket = env.final_state()["ticket"]
    assert ticket["annotations"] == [{"ac": 3, "label": "conflict", "note": "與 AC 5 矛盾"}]
    assert ticket["title"] == "結帳頁支援優惠碼"
    assert env.calls[0].arguments == update_args()


async def test_a_calls_record_shares_nothing_with_what_the_agent_gets_back(
    clarify: Suite,
) -> None:
    """A call's arguments and result are pickled once each and read twice (plain.clones):
    the agent's answer, the handler's arguments, the record and a fixture replayed again
    are each objects of their own."""
    env = seed_env(clarify)
    read = await env.call("get_ticket", {"key": "SHOP-1042"})
    read.content["title"] = "changed"
    assert env.calls[0].result["title"] == "結帳頁支援優惠碼"
    query = {"query": "優惠碼 會員折扣"}
    first = await env.call("query_background", query)
    assert isinstance(first.content, str)
    again = await env.call("query_background", query)
    assert again.content == first.content == env.calls[1].result == env.calls[2].result
    annotations = env.final_state()["ticket"]["annotations"]
    await env.call("update_ticket", update_args())
    env.calls[-1].arguments["annotations"].clear()
    assert env.final_state()["ticket"]["annotations"] != annotations == []


async def test_replayed_responses_are_copies(trello: Suite) -> None:
    env = make_environment(trello, trello.cases[0])
    guide = await env.call("get_guide", {})
    assert isinstance(guide.content, str) and "Card writing guide" in guide.content
    assert trello.cases[0].fixtures["get_guide"][0].response == guide.content


def test_every_bundled_case_builds_an_environment_with_a_json_final_state(
    clarify: Suite, trello: Suite
) -> None:
    for suite in (clarify, trello):
        for case in suite.cases:
            state = make_environment(suite, case).final_state()
            assert json.loads(json.dumps(state)) == state


# ------------------------------------------------------------------------ board


async def test_board_environment_creates_cards(trello: Suite) -> None:
    env = make_environment(trello, trello.case("export-orders-csv"))
    assert isinstance(env, BoardEnvironment)
    assert [t.name for t in env.tools] == ["get_board", "get_guide", "create_card"]
    board = await env.call("get_board", {})
    assert board.content["lists"] == ["Backlog", "Doing", "Review", "Done"]
    assert board.content["labels"] == list(trello.labels)
    card = {
        "list": "Backlog",
        "title": "Export orders as CSV",
        "description": "## Why\nx\n## What\ny\n## Done when\nz",
        "checklist": ["a", "b"],
        "labels": ["feature"],
    }
    assert (await env.call("create_card", card)).content == {"created": "card-1"}
    assert env.final_state() == {"cards": [{"id": "card-1", **card}]}


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        pytest.param(
            "create_card",
            {"list": "Todo", "title": "t", "description": "", "checklist": [], "labels": []},
            "list: 'Todo' is not one of Backlog, Doing, Review, Done",
            id="list-not-on-the-board",
        ),
        pytest.param(
            "create_card",
            {"list": "Doing", "title": "t", "description": "", "checklist": [], "labels": ["bugs"]},
            "labels[0]: 'bugs' is not one of bug, feature, chore, customer-reported, security; "
            "did you mean 'bug'?",
            id="label-not-in-the-suite",
        ),
        pytest.param(
            "get_guide",
            {"section": "titles"},
            "section: unknown key 'section'; the keys allowed here are none",
            id="guide-takes-no-arguments",
        ),
    ],
)
async def test_board_rejects_bad_arguments(
    trello: Suite, tool: str, arguments: dict[str, Any], message: str
) -> None:
    env = make_environment(trello, trello.cases[0])
    outcome = await env.call(tool, arguments)
    assert outcome.is_error and message in outcome.text(), outcome.text()
    assert env.final_state() == {"cards": []}


def test_a_board_goal_gives_each_card_label_once(tmp_path: Path) -> None:
    # exact_set compares multisets: a goal label written twice would demand it twice.
    root = shutil.copytree(EXAMPLES / "trello", tmp_path / "trello")
    case = root / "cases" / "checkout-card-timeout.yaml"
    text = case.read_text(encoding="utf-8")
    case.write_text(
        text.replace("labels: [bug, customer-reported]", "labels: [bug, customer-reported, bug]"),
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert caught.value.problems == [
        f"{root / 'cases' / 'checkout-card-timeout.yaml'}: goal.cards[0].labels[2]: 'bug' "
        "repeats labels[0]; give each label once"
    ]


def test_tool_outcome_text() -> None:
    assert ToolOutcome("plain text").text() == "plain text"
    assert ToolOutcome({"a": "優惠碼"}).text() == '{"a": "優惠碼"}'
    assert ToolOutcome([1, None]).text() == "[1, null]"


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        pytest.param('{"key": "SHOP-1042"', "the arguments were not valid JSON: ", id="cut-off"),
        pytest.param("[1, 2]", "the arguments were not a JSON object but [1,2]", id="a-list"),
    ],
)
async def test_arguments_that_were_not_json_are_named_so(
    clarify: Suite, raw: str, said: str
) -> None:
    """Arguments cut off by max tokens reach the tool as {"_raw": text} (the provider);
    the model must hear that its JSON was broken, not "_raw: unknown key"."""
    env = seed_env(clarify)
    outcome = await env.call("get_ticket", {"_raw": raw})
    assert outcome.is_error
    assert outcome.text().startswith("invalid arguments for get_ticket: " + said)
    assert "_raw" not in outcome.text() and "unknown key" not in outcome.text()
