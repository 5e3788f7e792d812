"""OpenAIModel against the scripted server, through the real openai SDK over HTTP.

Failure modes (429, 5xx, 4xx, malformed, timeout, reset) are in test_retry.py,
for both providers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator

import pytest

from fakeserver import FakeServer, call
from passhat.errors import ConfigError, PermanentModelError, TransientModelError
from passhat.models.base import CallContext, Message, Model, ToolCall, ToolSpec, Usage
from passhat.models.openai_compat import OpenAIModel

pytest_plugins = ["fakeserver"]

KEY = "sk-passhat-TEST-7f3c9a1e5b"
CTX = CallContext(case_id="coupon-001", run_index=1, turn=0)
GET_TICKET = ToolSpec(
    name="get_ticket",
    description="Read a ticket by key.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)


@pytest.fixture
async def model(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[OpenAIModel]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    async with OpenAIModel(
        "gpt-test", base_url=fake_server.openai_url, params={"temperature": 0.2}, timeout=5
    ) as built:
        yield built


async def test_tool_call_round_trip(model: OpenAIModel, fake_server: FakeServer) -> None:
    fake_server.reply(tool_calls=[call("get_ticket", {"key": "T-1"}, id="call_1")], usage=(42, 7))
    fake_server.reply("AC 3 is inconsistent.", usage=(60, 9))
    conversation = [Message("system", "You annotate tickets."), Message("user", "Check T-1.")]

    first = await model.generate(conversation, [GET_TICKET], CTX)

    assert first.message == Message(
        "assistant", "", tool_calls=(ToolCall("call_1", "get_ticket", {"key": "T-1"}),)
    )
    assert first.usage == Usage(42, 7)
    assert first.stop_reason == "tool_calls"
    sent = fake_server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.body["model"] == "gpt-test"
    assert sent.body["temperature"] == 0.2
    assert sent.body["messages"] == [
        {"role": "system", "content": "You annotate tickets."},
        {"role": "user", "content": "Check T-1."},
    ]
    assert sent.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_ticket",
                "description": "Read a ticket by key.",
                "parameters": GET_TICKET.parameters,
            },
        }
    ]

    conversation += [
        first.message,
        Message("tool", '{"title": "Coupons"}', tool_call_id="call_1", name="get_ticket"),
    ]
    second = await model.generate(conversation, [GET_TICKET], CTX)

    assert second.message == Message("assistant", "AC 3 is inconsistent.")
    assert second.usage == Usage(60, 9)
    assert second.stop_reason == "stop"
    assistant, tool = fake_server.requests[1].body["messages"][2:]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == ""  # llama.cpp-style servers reject null
    [wire_call] = assistant["tool_calls"]
    assert (wire_call["id"], wire_call["type"]) == ("call_1", "function")
    assert wire_call["function"]["name"] == "get_ticket"
    assert json.loads(wire_call["function"]["arguments"]) == {"key": "T-1"}
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": '{"title": "Coupons"}'}


async def test_unparsable_arguments_are_kept_raw_and_sent_back_verbatim(
    model: OpenAIModel, fake_server: FakeServer
) -> None:
    fake_server.reply(tool_calls=[call("get_ticket", '{"key": "T-1"', id="c1")])
    fake_server.reply(tool_calls=[call("get_ticket", "[1, 2]", id="c2")])
    fake_server.reply("ok")

    broken = await model.generate([Message("user", "go")], [GET_TICKET], CTX)
    not_an_object = await model.generate([Message("user", "go")], [GET_TICKET], CTX)
    await model.generate([Message("user", "go"), broken.message], [GET_TICKET], CTX)

    assert broken.message.tool_calls[0].arguments == {"_raw": '{"key": "T-1"'}
    assert not_an_object.message.tool_calls[0].arguments == {"_raw": "[1, 2]"}
    sent_back = fake_server.requests[2].body["messages"][1]["tool_calls"][0]
    assert sent_back["function"]["arguments"] == '{"key": "T-1"'


async def test_arguments_sent_as_an_object_and_missing_ids_are_accepted(
    model: OpenAIModel, fake_server: FakeServer
) -> None:
    # Some local servers send arguments as an object and omit the call id.
    fake_server.reply_json(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"function": {"name": "get_ticket", "arguments": {"key": 1}}}
                        ],
                    }
                }
            ]
        }
    )

    answer = await model.generate(
        [Message("user", "go")], [GET_TICKET], CallContext("c", 2, turn=3)
    )

    assert answer.message.tool_calls == (ToolCall("call_3_0", "get_ticket", {"key": 1}),)
    assert answer.usage == Usage(0, 0)
    assert answer.stop_reason == "tool_calls"


async def test_context_seed_is_sent_unless_params_set_one(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    seeded = CallContext("c", 1, 0, seed=1234)
    fake_server.reply("a", times=2)
    async with OpenAIModel("m", base_url=fake_server.openai_url) as free:
        await free.generate([Message("user", "hi")], [], seeded)
    async with OpenAIModel("m", base_url=fake_server.openai_url, params={"seed": 7}) as fixed:
        await fixed.generate([Message("user", "hi")], [], seeded)

    assert [r.body["seed"] for r in fake_server.requests] == [1234, 7]


async def test_no_tools_sends_no_tools_field(model: OpenAIModel, fake_server: FakeServer) -> None:
    fake_server.reply("hello")

    await model.generate([Message("user", "hi")], [], CTX)

    assert "tools" not in fake_server.requests[0].body
    assert "seed" not in fake_server.requests[0].body


async def test_key_is_sent_but_never_shown(model: OpenAIModel, fake_server: FakeServer) -> None:
    fake_server.fail(401, message=f"Incorrect API key provided: {KEY}")

    with pytest.raises(PermanentModelError) as caught:
        await model.generate([Message("user", "hi")], [], CTX)

    assert fake_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    error = caught.value
    assert "HTTP 401" in str(error)
    assert "Incorrect API key provided: ***" in str(error)
    assert error.__cause__ is None
    assert error.__context__ is None
    for shown in (str(error), repr(error), repr(model), model.name, json.dumps(model.describe())):
        assert KEY not in shown


async def test_key_echoed_in_a_malformed_body_is_blanked(
    model: OpenAIModel, fake_server: FakeServer
) -> None:
    fake_server.reply_json({"error": f"proxy refused key {KEY}"})

    with pytest.raises(TransientModelError, match="malformed response") as caught:
        await model.generate([Message("user", "hi")], [], CTX)

    assert "proxy refused key ***" in str(caught.value)
    assert KEY not in str(caught.value)


async def test_local_endpoint_without_a_key_gets_a_placeholder(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_server.reply("hi")

    async with OpenAIModel("llama3", base_url=fake_server.openai_url) as local:
        answer = await local.generate([Message("user", "hi")], [], CTX)

    assert answer.message.content == "hi"
    assert fake_server.requests[0].headers["authorization"] == "Bearer passhat-no-key"


def test_no_key_and_no_base_url_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(ConfigError, match=r"set OPENAI_API_KEY, or give --base-url"):
        OpenAIModel("gpt-4o")


async def test_key_comes_from_the_named_variable(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("GROQ_KEY", KEY)
    fake_server.reply("hi")

    async with OpenAIModel("m", base_url=fake_server.openai_url, api_key_env="GROQ_KEY") as m:
        await m.generate([Message("user", "hi")], [], CTX)

    assert fake_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    with pytest.raises(ConfigError, match="set OTHER_KEY"):
        OpenAIModel("m", api_key_env="OTHER_KEY")


@pytest.mark.parametrize("param", ["model", "messages", "tools", "stream", "n"])
def test_params_passhat_sets_are_refused(param: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    with pytest.raises(ConfigError, match=f"params {param} are set by passhat"):
        OpenAIModel("m", params={param: True})


def test_describe_name_and_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    model = OpenAIModel("gpt-4o", params={"temperature": 0, "max_tokens": 512}, timeout=30)

    assert isinstance(model, Model)
    assert model.name == "openai:gpt-4o"
    assert model.describe() == {
        "provider": "openai",
        "model": "gpt-4o",
        "base_url": "https://api.openai.com/v1",
        "params": {"temperature": 0, "max_tokens": 512},
        "timeout": 30.0,
    }


async def test_fake_server_reports_requests_nothing_was_scripted_for(
    model: OpenAIModel, fake_server: FakeServer
) -> None:
    with pytest.raises(TransientModelError, match="nothing scripted for request 1"):
        await model.generate([Message("user", "hi")], [], CTX)

    assert [str(e) for e in fake_server.errors] == ["fake server: nothing scripted for request 1"]
    fake_server.errors.clear()  # expected here; the fixture would fail the test otherwise


async def test_a_lone_surrogate_in_arguments_goes_out_as_its_json_escape(
    model: OpenAIModel, fake_server: FakeServer
) -> None:
    fake_server.reply(tool_calls=[call("get_ticket", '{"key": "T-\\ud83d"}', id="c1")])
    fake_server.reply("ok")

    first = await model.generate([Message("user", "go")], [GET_TICKET], CTX)
    assert first.message.tool_calls[0].arguments == {"key": "T-\ud83d"}
    await model.generate([Message("user", "go"), first.message], [GET_TICKET], CTX)

    sent = fake_server.requests[1].body["messages"][1]["tool_calls"][0]["function"]
    assert json.loads(sent["arguments"]) == {"key": "T-\ud83d"}


@pytest.mark.parametrize(
    ("provider", "module"),
    [("openai", "openai_compat"), ("anthropic", "anthropic_api")],
    ids=["openai", "anthropic"],
)
def test_a_provider_whose_sdk_is_missing_says_which_extra_to_install(
    provider: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """resolve_model names the provider's extra and make target when its SDK module
    cannot be imported (one table of the SDK providers serves both)."""
    from passhat.models import resolve_model

    monkeypatch.setitem(sys.modules, f"passhat.models.{module}", None)  # import fails
    with pytest.raises(ConfigError) as refused:
        resolve_model(f"{provider}:some-model", base_url="http://127.0.0.1:9/v1")
    message = str(refused.value)
    assert f"model '{provider}:some-model' needs the {provider} SDK" in message
    assert f"pip install 'passhat[{provider}]'" in message
    assert f"make install-{provider} in a checkout" in message
