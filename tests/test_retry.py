"""The retry policy: backoff, Retry-After, and how each provider's failures are classed.

The first half drives `generate_with_retry` with an in-process model; the second
runs both real SDKs against the scripted server for every failure mode.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakeserver import FakeServer, refused_url
from passhat.errors import ModelError, PermanentModelError, TransientModelError
from passhat.models.anthropic_api import AnthropicModel
from passhat.models.base import CallContext, Message, ModelResponse, ToolSpec
from passhat.models.openai_compat import OpenAIModel
from passhat.models.retry import (
    error_for_status,
    generate_with_retry,
    parse_retry_after,
    provider_message,
)

pytest_plugins = ["fakeserver"]

CTX = CallContext(case_id="c", run_index=1, turn=0)
HELLO = [Message("user", "hi")]
ANSWER = ModelResponse(message=Message("assistant", "ok"))


class Scripted:
    """A model that raises or answers from a list, counting calls."""

    name = "scripted:test"

    def __init__(self, *outcomes: ModelError | ModelResponse) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> ModelResponse:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, ModelError):
            raise outcome
        return outcome


class Sleeps:
    """Records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


# -- the loop ---------------------------------------------------------------------


async def test_success_at_once_makes_no_retry() -> None:
    sleep = Sleeps()

    answer, retries = await generate_with_retry(Scripted(ANSWER), HELLO, [], CTX, sleep=sleep)

    assert (answer, retries, sleep.waits) == (ANSWER, [], [])


async def test_backoff_doubles_with_full_jitter_up_to_max_delay() -> None:
    model = Scripted(*[TransientModelError("busy")] * 5, ANSWER)
    sleep = Sleeps()

    answer, retries = await generate_with_retry(
        model,
        HELLO,
        [],
        CTX,
        max_retries=5,
        base_delay=0.5,
        max_delay=3.0,
        sleep=sleep,
        rng=lambda: 1.0,
    )

    assert answer == ANSWER
    assert sleep.waits == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert [r["waited"] for r in retries] == sleep.waits
    assert [r["attempt"] for r in retries] == [1, 2, 3, 4, 5]


async def test_jitter_scales_the_wait() -> None:
    sleep = Sleeps()

    await generate_with_retry(
        Scripted(TransientModelError("busy"), ANSWER),
        HELLO,
        [],
        CTX,
        base_delay=2.0,
        sleep=sleep,
        rng=lambda: 0.25,
    )

    assert sleep.waits == [0.5]


async def test_retry_after_is_a_floor_on_the_wait() -> None:
    model = Scripted(TransientModelError("slow down", retry_after=7.0), ANSWER)
    sleep = Sleeps()

    _, retries = await generate_with_retry(model, HELLO, [], CTX, sleep=sleep, rng=lambda: 0.0)

    assert sleep.waits == [7.0]
    assert retries == [
        {
            "attempt": 1,
            "error": "TransientModelError",
            "message": "slow down",
            "retry_after": 7.0,
            "waited": 7.0,
        }
    ]


async def test_retries_run_out_and_the_last_error_is_raised_with_retries_recorded() -> None:
    errors = [TransientModelError(f"busy {n}") for n in range(3)]
    model = Scripted(*errors)
    sleep = Sleeps()
    record: list[dict[str, object]] = []

    with pytest.raises(TransientModelError) as caught:
        await generate_with_retry(model, HELLO, [], CTX, max_retries=2, sleep=sleep, record=record)

    assert caught.value is errors[-1]
    assert model.calls == 3
    assert len(sleep.waits) == 2
    assert [r["message"] for r in record] == ["busy 0", "busy 1"]


async def test_permanent_error_is_raised_at_once() -> None:
    model = Scripted(PermanentModelError("bad key"), ANSWER)
    sleep = Sleeps()

    with pytest.raises(PermanentModelError, match="bad key"):
        await generate_with_retry(model, HELLO, [], CTX, sleep=sleep)

    assert (model.calls, sleep.waits) == (1, [])


async def test_a_wait_cut_short_records_the_seconds_slept_not_the_seconds_planned() -> None:
    """A run given up (or cancelled) during the wait before a retry keeps that retry, with
    the time it really waited: a 30 s Retry-After refused at once is not 30 s waited."""

    async def given_up(seconds: float) -> None:
        raise PermanentModelError("the run was given up")

    model = Scripted(TransientModelError("slow down", retry_after=30.0), ANSWER)
    made: list[dict[str, object]] = []

    with pytest.raises(PermanentModelError):
        await generate_with_retry(model, HELLO, [], CTX, sleep=given_up, record=made)

    assert len(made) == 1 and made[0]["retry_after"] == 30.0
    assert isinstance(made[0]["waited"], float) and made[0]["waited"] < 1.0
    assert model.calls == 1


async def test_a_retry_after_beyond_max_retry_after_is_not_waited_for() -> None:
    model = Scripted(TransientModelError("quota spent", retry_after=86_400), ANSWER)
    sleep = Sleeps()

    with pytest.raises(TransientModelError, match="quota spent"):
        await generate_with_retry(model, HELLO, [], CTX, max_retry_after=300, sleep=sleep)

    assert (model.calls, sleep.waits) == (1, [])


async def test_zero_retries_means_one_call() -> None:
    model = Scripted(TransientModelError("busy"), ANSWER)

    with pytest.raises(TransientModelError):
        await generate_with_retry(model, HELLO, [], CTX, max_retries=0, sleep=Sleeps())

    assert model.calls == 1


async def test_negative_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="must be >= 0"):
        await generate_with_retry(Scripted(ANSWER), HELLO, [], CTX, max_retries=-1)


async def test_the_default_sleep_really_waits() -> None:
    model = Scripted(TransientModelError("busy", retry_after=0.05), ANSWER)
    loop = asyncio.get_running_loop()
    started = loop.time()

    await generate_with_retry(model, HELLO, [], CTX, rng=lambda: 0.0)

    assert loop.time() - started >= 0.05


@given(
    attempt_errors=st.integers(min_value=1, max_value=6),
    retry_after=st.none() | st.floats(min_value=0, max_value=60),
    jitter=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_every_wait_is_within_bounds(
    attempt_errors: int, retry_after: float | None, jitter: float
) -> None:
    model = Scripted(*[TransientModelError("x", retry_after=retry_after)] * attempt_errors, ANSWER)
    sleep = Sleeps()

    asyncio.run(
        generate_with_retry(
            model,
            HELLO,
            [],
            CTX,
            max_retries=6,
            base_delay=0.5,
            max_delay=10.0,
            sleep=sleep,
            rng=lambda: jitter,
        )
    )

    assert len(sleep.waits) == attempt_errors
    for wait in sleep.waits:
        assert (retry_after or 0.0) <= wait <= max(10.0, retry_after or 0.0)


# -- Retry-After and error bodies -------------------------------------------------

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after": " 1.5 "}, 1.5, id="fractional"),
        pytest.param({"retry-after": "-4"}, 0.0, id="negative-is-now"),
        pytest.param(
            {"retry-after": format_datetime(NOW + timedelta(seconds=30), usegmt=True)},
            30.0,
            id="http-date",
        ),
        pytest.param(
            {"retry-after": format_datetime(NOW - timedelta(hours=1), usegmt=True)},
            0.0,
            id="past-date",
        ),
        pytest.param({"retry-after": "soon"}, None, id="garbage"),
        pytest.param({"retry-after": "nan"}, None, id="nan"),
        pytest.param({"retry-after-ms": "250", "retry-after": "9"}, 0.25, id="ms-first"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=lambda: NOW) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            '{"error": {"message": "Incorrect API key", "type": "x"}}',
            "Incorrect API key",
            id="openai",
        ),
        pytest.param(
            '{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}',
            "invalid x-api-key",
            id="anthropic",
        ),
        pytest.param('{"error": "model not found"}', "model not found", id="ollama"),
        pytest.param(
            '{"detail": [{"msg": "field required"}]}', '[{"msg": "field required"}]', id="fastapi"
        ),
        pytest.param("upstream connect error", "upstream connect error", id="text"),
        pytest.param("", "(empty body)", id="empty"),
        pytest.param("x" * 2000, "x" * 497 + "...", id="long"),
    ],
)
def test_provider_message(body: str, expected: str) -> None:
    assert provider_message(body) == expected


def test_error_for_status_classes_and_redacts() -> None:
    limited = error_for_status(
        "openai:m", 429, '{"error": {"message": "slow"}}', {"retry-after": "2"}
    )
    refused = error_for_status(
        "openai:m", 401, '{"error": {"message": "bad sk-SECRET"}}', {}, secret="sk-SECRET"
    )

    assert isinstance(limited, TransientModelError)
    assert limited.retry_after == 2.0
    assert str(limited) == "openai:m: HTTP 429: slow"
    assert isinstance(refused, PermanentModelError)
    assert str(refused) == "openai:m: HTTP 401: bad ***"


# -- both providers over real HTTP --------------------------------------------------


@pytest.fixture(params=["openai", "anthropic"])
async def model(
    request: pytest.FixtureRequest, fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[OpenAIModel | AnthropicModel]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-retry-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-retry-test")
    built: OpenAIModel | AnthropicModel
    if request.param == "openai":
        built = OpenAIModel("m", base_url=fake_server.openai_url, timeout=0.5)
    else:
        built = AnthropicModel("m", base_url=fake_server.anthropic_url, timeout=0.5)
    async with built:
        yield built


async def test_rate_limited_twice_then_answered(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.fail(429, message="rate limited", retry_after=1, times=2)
    fake_server.reply("finally")
    sleep = Sleeps()

    answer, retries = await generate_with_retry(model, HELLO, [], CTX, sleep=sleep, rng=lambda: 0.0)

    assert answer.message.content == "finally"
    assert len(fake_server.requests) == 3
    assert len(retries) == 2
    assert all(wait >= 1.0 for wait in sleep.waits)
    assert [r["retry_after"] for r in retries] == [1.0, 1.0]
    assert all("HTTP 429: rate limited" in r["message"] for r in retries)


async def test_retry_after_as_an_http_date(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer
) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    fake_server.fail(429, retry_after=format_datetime(when, usegmt=True))

    with pytest.raises(TransientModelError) as caught:
        await model.generate(HELLO, [], CTX)

    assert caught.value.retry_after is not None
    assert 25.0 <= caught.value.retry_after <= 30.0


@pytest.mark.parametrize("status", [500, 502, 503, 529, 408])
async def test_server_errors_are_transient(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer, status: int
) -> None:
    fake_server.fail(status, message="overloaded")

    with pytest.raises(TransientModelError, match=f"HTTP {status}: overloaded") as caught:
        await model.generate(HELLO, [], CTX)

    assert caught.value.retry_after is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_permanent_and_not_retried(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer, status: int
) -> None:
    fake_server.fail(status, message="the provider's own words")
    fake_server.reply("never reached")
    sleep = Sleeps()

    with pytest.raises(PermanentModelError) as caught:
        await generate_with_retry(model, HELLO, [], CTX, sleep=sleep)

    assert str(caught.value) == f"{model.name}: HTTP {status}: the provider's own words"
    assert len(fake_server.requests) == 1
    assert sleep.waits == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"<html><body>502 Bad Gateway</body></html>", id="html"),
        pytest.param(b'{"id": "x", "object": "chat.completion"}', id="no-choices-or-content"),
        pytest.param(b"[1, 2, 3]", id="not-an-object"),
        pytest.param(
            b'{"choices": [{}], "content": [{"text": "no type"}]}', id="no-message-or-block"
        ),
        pytest.param(b'{"choices": [], "content": "text"', id="truncated"),
    ],
)
async def test_malformed_bodies_are_transient(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer, body: bytes
) -> None:
    fake_server.malformed(body, content_type="application/json")

    with pytest.raises(TransientModelError, match="malformed response"):
        await model.generate(HELLO, [], CTX)


async def test_a_malformed_body_is_retried(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.malformed()
    fake_server.reply("fine")

    answer, retries = await generate_with_retry(model, HELLO, [], CTX, sleep=Sleeps())

    assert answer.message.content == "fine"
    assert "malformed response" in retries[0]["message"]


async def test_a_slow_answer_times_out_as_transient(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.reply("too late", delay=5.0)

    with pytest.raises(TransientModelError, match=r"no response within 0.5s"):
        await model.generate(HELLO, [], CTX)


async def test_a_reset_connection_is_transient(
    model: OpenAIModel | AnthropicModel, fake_server: FakeServer
) -> None:
    fake_server.reset()

    with pytest.raises(TransientModelError, match="connection failed"):
        await model.generate(HELLO, [], CTX)


async def test_a_refused_connection_is_transient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with refused_url() as url:
        async with OpenAIModel("m", base_url=f"{url}/v1", timeout=2) as model:
            with pytest.raises(TransientModelError, match="connection failed"):
                await model.generate(HELLO, [], CTX)


async def test_an_unreachable_server_gets_the_whole_wait_twice_over() -> None:
    """A model server restarting refuses connections for seconds: no jittered 5 ms retries."""
    refused = TransientModelError("connection failed: refused", unreachable=True)
    model = Scripted(*[refused] * 4, ANSWER)
    sleep = Sleeps()

    answer, _ = await generate_with_retry(
        model,
        HELLO,
        [],
        CTX,
        max_retries=4,
        base_delay=0.5,
        max_delay=3.0,
        sleep=sleep,
        rng=lambda: 0.01,
    )

    assert answer == ANSWER
    assert sleep.waits == [1.0, 2.0, 3.0, 3.0]


async def test_a_refused_connection_is_marked_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with refused_url() as url:
        async with OpenAIModel("m", base_url=f"{url}/v1", timeout=2) as model:
            with pytest.raises(TransientModelError) as raised:
                await model.generate(HELLO, [], CTX)
    assert raised.value.unreachable


@pytest.mark.parametrize(
    ("status", "message", "transient"),
    [
        pytest.param(
            500, "1 validation error: Input should be a valid string", False, id="500-validation"
        ),
        pytest.param(
            500, "This model's maximum context length is 4096 tokens", False, id="500-context"
        ),
        pytest.param(
            429, "You exceeded your current quota (insufficient_quota)", False, id="429-quota"
        ),
        pytest.param(400, "The server is overloaded, try again later", True, id="400-overloaded"),
        pytest.param(503, "model is loading", True, id="503-loading"),
        pytest.param(500, "internal error", True, id="500-plain"),
        pytest.param(404, "no route", False, id="404-plain"),
    ],
)
async def test_errors_are_classified_by_status_and_body(
    model: OpenAIModel | AnthropicModel,
    fake_server: FakeServer,
    status: int,
    message: str,
    transient: bool,
) -> None:
    fake_server.fail(status, message=message)
    fake_server.reply("asked again")
    sleep = Sleeps()

    if transient:
        answer, _ = await generate_with_retry(model, HELLO, [], CTX, sleep=sleep)
        assert answer.message.content == "asked again"
    else:
        with pytest.raises(PermanentModelError, match=f"HTTP {status}"):
            await generate_with_retry(model, HELLO, [], CTX, sleep=sleep)
        assert len(fake_server.requests) == 1  # not retried
