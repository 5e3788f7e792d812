"""Model providers behind one small interface; `resolve_model` picks one by spec.

replay:PATH        recorded answers (the demo, tests, regrading without a call)
openai:MODEL       any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp)
anthropic:MODEL    Anthropic's messages API
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from passhat.errors import ConfigError
from passhat.models.base import Model

PROVIDERS = ("replay", "openai", "anthropic")


def resolve_model(
    spec: str,
    *,
    base_url: str | None = None,
    params: dict[str, Any] | None = None,
    suite_dir: Path | None = None,
) -> Model:
    """Build the model a spec names; a bad spec is one ConfigError saying what to write."""
    provider, colon, name = spec.partition(":")
    if colon and provider not in PROVIDERS:
        raise ConfigError(
            f"model {spec!r}: unknown provider {provider!r}; known: {', '.join(PROVIDERS)} "
            "(an OpenAI-compatible server is openai:MODEL with --base-url URL)"
        )
    if not name or provider not in PROVIDERS:
        raise ConfigError(
            f"model {spec!r} is not provider:name; use one of replay:CASSETTE.jsonl, "
            "openai:MODEL or anthropic:MODEL"
        )
    params = dict(params or {})
    if provider == "replay":
        from passhat.models.replay import ReplayModel

        # a relative cassette belongs to the suite: beside suite.yaml first, then here
        path = Path(name)
        if not path.is_absolute() and suite_dir is not None and (suite_dir / path).is_file():
            path = suite_dir / path
        return ReplayModel(path)
    if provider == "openai":
        try:
            from passhat.models.openai_compat import OpenAIModel
        except ImportError as error:
            raise ConfigError(
                f"model {spec!r} needs the openai SDK: pip install 'passhat[openai]', or "
                f"make install-openai in a checkout ({error})"
            ) from None
        return OpenAIModel(name, base_url=base_url, params=params)
    try:
        from passhat.models.anthropic_api import AnthropicModel
    except ImportError as error:
        raise ConfigError(
            f"model {spec!r} needs the anthropic SDK: pip install 'passhat[anthropic]', or "
            f"make install-anthropic in a checkout ({error})"
        ) from None
    return AnthropicModel(name, base_url=base_url, params=params)


def describe_model(model: Model) -> dict[str, Any]:
    """What a provider says about itself, for the experiment record (never a key)."""
    describe = getattr(model, "describe", None)
    return dict(describe()) if callable(describe) else {"name": model.name}
