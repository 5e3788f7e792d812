"""Model providers behind one small interface; `resolve_model` picks one by spec.

replay:PATH        recorded answers (the demo, tests, regrading without a call)
openai:MODEL       any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp)
anthropic:MODEL    Anthropic's messages API
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passhat.errors import ConfigError
from passhat.models.base import Model

PROVIDERS = ("replay", "openai", "anthropic")

RUN_KEYS = frozenset(
    {
        "max_turns",
        "prompt_file",
        "base_url",
        "timeout_s",
        "max_retries",
        "retry_max_wait_s",
        "call_timeout_s",
    }
)
"""Experiment parameters of the run itself; every other parameter goes to the provider."""

_SDK_MODELS = {
    "openai": ("passhat.models.openai_compat", "OpenAIModel"),
    "anthropic": ("passhat.models.anthropic_api", "AnthropicModel"),
}
"""The providers behind an SDK (an extra of its own): the module and class of each,
imported when a spec names it."""


def resolve_model(
    spec: str,
    *,
    base_url: str | None = None,
    params: dict[str, Any] | None = None,
    suite_dir: Path | None = None,
    timeout: float | None = None,
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

        return ReplayModel(cassette_path(name, suite_dir))
    module, class_name = _SDK_MODELS[provider]
    try:
        model_class: Callable[..., Model] = getattr(importlib.import_module(module), class_name)
    except ImportError as error:
        raise ConfigError(
            f"model {spec!r} needs the {provider} SDK: pip install 'passhat[{provider}]', or "
            f"make install-{provider} in a checkout ({error})"
        ) from None
    return model_class(name, base_url=base_url, params=params, timeout=_timeout(timeout))


def cassette_path(name: str, suite_dir: Path | None) -> Path:
    """Where `replay:NAME` reads its cassette: a relative path belongs to the suite,
    beside suite.yaml first, then the working directory."""
    path = Path(name)
    if not path.is_absolute() and suite_dir is not None and (suite_dir / path).exists():
        return suite_dir / path
    return path


def _timeout(timeout: float | None) -> float:
    """The per-call timeout asked for, or the providers' default."""
    from passhat.models.provider import DEFAULT_CALL_TIMEOUT

    return DEFAULT_CALL_TIMEOUT if timeout is None else float(timeout)


def secret_values(model: Model | None) -> tuple[str, ...]:
    """The key a provider holds, to be blanked from everything written (none: ())."""
    secrets = getattr(model, "secrets", None)
    return tuple(secrets()) if callable(secrets) else ()


def describe_model(model: Model) -> dict[str, Any]:
    """What a provider says about itself, for the experiment record (never a key)."""
    describe = getattr(model, "describe", None)
    return dict(describe()) if callable(describe) else {"name": model.name}


def model_from_params(spec: str, params: dict[str, Any], suite_dir: Path | None) -> Model:
    """The model an experiment's spec and parameters describe (run, resume, a Dask worker)."""
    return resolve_model(
        spec,
        base_url=params.get("base_url"),
        params={k: v for k, v in params.items() if k not in RUN_KEYS},
        suite_dir=suite_dir,
        timeout=params.get("call_timeout_s"),
    )
