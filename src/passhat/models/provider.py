"""What the HTTP providers share: checking their configuration, the key from the
environment (never shown), the record of themselves, and one SDK client made on
first use inside the event loop that drives it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Mapping
from types import ModuleType
from typing import Any, ClassVar, Generic, Self, TypeVar

from passhat.errors import ConfigError, ModelError, TransientModelError
from passhat.models.retry import error_for_status, redact

NO_KEY = "passhat-no-key"
"""Sent to a local endpoint when no key is set; servers that check nothing accept it."""

ClientT = TypeVar("ClientT")

DEFAULT_CALL_TIMEOUT = 120.0
"""Seconds one model call may take (--call-timeout)."""


def malformed(source: str, secret: str, what: str) -> TransientModelError:
    """A 2xx body that is not what the API promises: worth asking again."""
    return TransientModelError(redact(f"{source}: malformed response: {what}", secret))


def json_body(text: str, *, source: str, secret: str) -> dict[str, Any]:
    """The response body as a JSON object, or a `malformed` error."""
    try:
        data = json.loads(text)
    except ValueError:
        raise malformed(source, secret, f"body is not JSON: {text.strip()[:80]!r}") from None
    if not isinstance(data, dict):
        raise malformed(source, secret, "body is not a JSON object")
    return data


class ProviderModel(Generic[ClientT]):
    """Base of the OpenAI-compatible and Anthropic models."""

    provider: ClassVar[str]
    """`openai` or `anthropic`: the prefix of `name`."""
    default_base_url: ClassVar[str]
    key_env: ClassVar[str]
    """The environment variable the key is read from, unless `api_key_env` says another."""
    example: ClassVar[str]
    """A model spec to show in messages."""
    reserved: ClassVar[frozenset[str]]
    """Request fields passhat sets itself (or cannot parse): refused in params."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        params: Mapping[str, Any] | None = None,
        api_key_env: str | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        """Check the configuration; nothing is sent until the first `generate`.

        `model_name` is the endpoint's model id; `base_url` the API root; `params`
        extra request fields; `api_key_env` the variable holding the key; `timeout`
        seconds per call.
        """
        p = self.provider
        if not model_name:
            raise ConfigError(f"{p} model name is empty; write {p}:MODEL, e.g. {self.example}")
        if not timeout > 0:
            raise ConfigError(f"{p} timeout must be positive seconds, got {timeout!r}")
        self.model_name = model_name
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.params = self._check_params(params)
        self.api_key_env = api_key_env or self.key_env
        self.timeout = float(timeout)
        key = os.environ.get(self.api_key_env, "")
        if not key and base_url is None:
            raise ConfigError(
                f"{p}:{model_name} needs an API key: set {self.api_key_env}, "
                "or give --base-url for a local endpoint that needs none"
            )
        self._key = key
        self._client: ClientT | None = None

    def _check_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        checked = dict(params or {})
        reserved = sorted(self.reserved & checked.keys())
        if reserved:
            raise ConfigError(
                f"{self.provider} params {', '.join(reserved)} are set by passhat; remove them"
            )
        try:
            json.dumps(checked)
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{self.provider} params must be JSON values: {error}") from None
        return checked

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model_name}"

    def describe(self) -> dict[str, Any]:
        """Provider, model, endpoint, parameters and timeout, for the experiment record."""
        return {
            "provider": self.provider,
            "model": self.model_name,
            "base_url": self.base_url,
            "params": dict(self.params),
            "timeout": self.timeout,
        }

    def secrets(self) -> tuple[str, ...]:
        """The key, for the store to blank wherever a server echoed it."""
        return (self._key,) if self._key and self._key != NO_KEY else ()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model_name={self.model_name!r}, base_url={self.base_url!r}, "
            f"params={self.params!r}, timeout={self.timeout!r})"
        )

    async def _raw_text(self, call: Awaitable[Any], sdk: ModuleType) -> str:
        """The body of an SDK call made `with_raw_response`; the SDK's failure as ours.

        Ours is raised outside the handler, so the SDK's error (its request carries
        the key) is neither the cause nor the context of ours."""
        try:
            raw = await call
        except (
            sdk.APIStatusError,
            sdk.APIConnectionError,
            sdk.APIResponseValidationError,
        ) as error:
            failure = self._failure(error, sdk)
        else:
            text: str = raw.http_response.text
            return text
        raise failure

    def _failure(self, error: Exception, sdk: ModuleType) -> ModelError:
        """Our error for one of the SDK's (both SDKs name their exceptions alike)."""
        if isinstance(error, sdk.APIStatusError):
            return error_for_status(
                self.name,
                error.status_code,
                error.response.text,
                error.response.headers,
                secret=self._key,
            )
        if isinstance(error, sdk.APITimeoutError):
            return TransientModelError(
                f"{self.name}: no response within {self.timeout:g}s", abandoned=True
            )
        if isinstance(error, sdk.APIConnectionError):
            cause = error.__cause__ or error
            detail = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
            return TransientModelError(
                redact(f"{self.name}: connection failed: {detail}", self._key), unreachable=True
            )
        message = getattr(error, "message", str(error))
        return TransientModelError(redact(f"{self.name}: malformed response: {message}", self._key))

    def _new_client(self) -> ClientT:
        raise NotImplementedError

    def _client_options(self) -> dict[str, Any]:
        """How either SDK's client is made: this endpoint, key and timeout, and none of
        the SDK's own retries (passhat retries a call: models/retry.py)."""
        return {
            "api_key": self._key or NO_KEY,
            "base_url": self.base_url,
            "timeout": self.timeout,
            "max_retries": 0,
        }

    def _sdk(self) -> ClientT:
        # Made on first use, inside the event loop that will drive it.
        if self._client is None:
            self._client = self._new_client()
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client; the model can still be used (a new one is made)."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()  # type: ignore[attr-defined]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
