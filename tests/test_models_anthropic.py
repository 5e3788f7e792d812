"""AnthropicModel against the scripted server, through the real anthropic SDK over HTTP.

Failure modes (429, 5xx, 4xx, malformed, timeout, reset) are in test_retry.py,
for both providers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from fakeserver import FakeServer, RecordedRequest, call
from passhat.errors import ConfigError, PermanentModelError, TransientModelError
from passhat.models.anthropic_api import AnthropicModel
from passhat.models.base import CallContext, Message, Model, ToolCall, ToolSpec, Usage

pytest_plugins = ["fakeserver"]

KEY = "sk-ant-passhat-TEST-2d8e6b0f4a"
CTX = CallContext(case_id="coupon-001", run_index=1, turn=0, seed=99)
GET_TICKET = ToolSpec(
    name="get_ticket",
    description="Read a ticket by key.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
UPDATE_TICKET = ToolSpec(
    name="update_ticket",
    description="Write annotations.",
    parameters={"type": "object", "properties": {"notes": {"type": "array"}}},
)


@pytest.fixture
async def model(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[AnthropicModel]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    async with AnthropicModel(
        "claude-test", base_url=fake_server.anthropic_url, params={"temperature": 0}, timeout=5
    ) as built:
        yield built


def sent_key(request: RecordedRequest) -> str | None:
    """The key a request carried: x-api-key, or a bearer token (newer SDKs send that)."""
    if "x-api-key" in request.headers:
        return request.headers["x-api-key"]
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token if scheme == "Bearer" else None


async def test_tool_call_round_trip(model: AnthropicModel, fake_server: FakeServer) -> None:
    fake_server.reply(
        "Reading both.",
        tool_calls=[
            call("get_ticket", {"key": "T-1"}, id="toolu_1"),
            call("update_ticket", {"notes": ["AC 7: unverifiable"]}, id="toolu_2"),
        ],
        usage=(120, 30),
    )
    fake_server.reply("Done.", usage=(200, 5))
    conversation = [
        Message("system", "You annotate tickets."),
        Message("system", "Be exact."),
        Message("user", "Check T-1."),
    ]

    first = await model.generate(conversation, [GET_TICKET, UPDATE_TICKET], CTX)

    assert first.message == Message(
        "assistant",
        "Reading both.",
        tool_calls=(
            ToolCall("toolu_1", "get_ticket", {"key": "T-1"}),
            ToolCall("toolu_2", "update_ticket", {"notes": ["AC 7: unverifiable"]}),
        ),
    )
    assert first.usage == Usage(120, 30)
    assert first.stop_reason == "tool_calls"
    sent = fake_server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.body["model"] == "claude-test"
    assert sent.body["max_tokens"] == 4096
    assert sent.body["temperature"] == 0
    assert sent.body["system"] == "You annotate tickets.\n\nBe exact."
    assert sent.body["messages"] == [{"role": "user", "content": "Check T-1."}]
    assert sent.body["tools"] == [
        {
            "name": "get_ticket",
            "description": "Read a ticket by key.",
            "input_schema": GET_TICKET.parameters,
        },
        {
            "name": "update_ticket",
            "description": "Write annotations.",
            "input_schema": UPDATE_TICKET.parameters,
        },
    ]

    conversation += [
        first.message,
        Message("tool", '{"title": "Coupons"}', tool_call_id="toolu_1", name="get_ticket"),
        Message("tool", "no such field", tool_call_id="toolu_2", is_error=True),
    ]
    second = await model.generate(conversation, [GET_TICKET, UPDATE_TICKET], CTX)

    assert second.message == Message("assistant", "Done.")
    assert second.usage == Usage(200, 5)
    assert second.stop_reason == "stop"
    assert fake_server.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading both."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_ticket",
                    "input": {"key": "T-1"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "update_ticket",
                    "input": {"notes": ["AC 7: unverifiable"]},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"title": "Coupons"}',
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "no such field",
                    "is_error": True,
                },
            ],
        },
    ]


async def test_assistant_message_with_only_tool_calls_has_no_text_block(
    model: AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.reply("ok")
    asked = Message("assistant", "", tool_calls=(ToolCall("t1", "get_ticket", {"key": "A"}),))

    await model.generate(
        [
            Message("user", "go"),
            asked,
            Message("tool", "{}", tool_call_id="t1"),
            Message("user", "and?"),
        ],
        [GET_TICKET],
        CTX,
    )

    assert fake_server.requests[0].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "get_ticket", "input": {"key": "A"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "{}"},
                {"type": "text", "text": "and?"},
            ],
        },
    ]
    assert "system" not in fake_server.requests[0].body


@pytest.mark.parametrize(
    ("wire", "neutral"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "refusal"),
    ],
)
async def test_stop_reasons_are_normalized(
    model: AnthropicModel, fake_server: FakeServer, wire: str, neutral: str
) -> None:
    fake_server.reply("x", stop_reason=wire)

    answer = await model.generate([Message("user", "hi")], [], CTX)

    assert answer.stop_reason == neutral


async def test_thinking_blocks_are_skipped_and_cache_tokens_count_as_input(
    model: AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.reply_json(
        {
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "text", "text": "Answer."},
            ],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 1000,
                "output_tokens": 3,
            },
        }
    )

    answer = await model.generate([Message("user", "hi")], [], CTX)

    assert answer.message == Message("assistant", "Answer.")
    assert answer.usage == Usage(1110, 3)


async def test_tool_use_input_that_is_not_an_object_is_malformed(
    model: AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.reply(tool_calls=[call("get_ticket", '{"key": "T-1"')])

    with pytest.raises(TransientModelError, match="tool_use input is not an object"):
        await model.generate([Message("user", "hi")], [GET_TICKET], CTX)


async def test_key_is_sent_but_never_shown(model: AnthropicModel, fake_server: FakeServer) -> None:
    fake_server.fail(401, message=f"invalid x-api-key {KEY}")

    with pytest.raises(PermanentModelError) as caught:
        await model.generate([Message("user", "hi")], [], CTX)

    assert sent_key(fake_server.requests[0]) == KEY
    error = caught.value
    assert "HTTP 401" in str(error)
    assert "invalid x-api-key ***" in str(error)
    assert error.__cause__ is None
    assert error.__context__ is None
    for shown in (str(error), repr(error), repr(model), model.name, json.dumps(model.describe())):
        assert KEY not in shown


async def test_local_endpoint_without_a_key_gets_a_placeholder(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_server.reply("hi")

    async with AnthropicModel("local", base_url=fake_server.anthropic_url) as local:
        answer = await local.generate([Message("user", "hi")], [], CTX)

    assert answer.message.content == "hi"
    assert sent_key(fake_server.requests[0]) == "passhat-no-key"


def test_no_key_and_no_base_url_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    with pytest.raises(ConfigError, match=r"set ANTHROPIC_API_KEY, or give --base-url"):
        AnthropicModel("claude-sonnet-4-5")


@pytest.mark.parametrize("param", ["model", "messages", "system", "tools", "stream"])
def test_params_passhat_sets_are_refused(param: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    with pytest.raises(ConfigError, match=f"params {param} are set by passhat"):
        AnthropicModel("m", params={param: True})


@pytest.mark.parametrize("bad", [0, -5, "many", 2.5, True])
def test_max_tokens_must_be_a_positive_integer(
    bad: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    with pytest.raises(ConfigError, match="max_tokens must be a positive integer"):
        AnthropicModel("m", params={"max_tokens": bad})


def test_describe_name_and_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    model = AnthropicModel("claude-sonnet-4-5", params={"temperature": 0.5})
    custom = AnthropicModel("claude-sonnet-4-5", params={"max_tokens": 1024})

    assert isinstance(model, Model)
    assert model.name == "anthropic:claude-sonnet-4-5"
    assert model.describe() == {
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "base_url": "https://api.anthropic.com",
        "params": {"max_tokens": 4096, "temperature": 0.5},
        "timeout": 120.0,
    }
    assert custom.describe()["params"] == {"max_tokens": 1024}
