"""Checks made before anything runs: values that would turn into stored results (k, retries,
options, a base URL), and `checked`, which refuses an unknown keyword or a value of the
wrong type as a command's options are refused.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

from passhat.errors import InputError
from passhat.plain import did_you_mean

# --- checks: refuse, before anything runs, values that would turn into stored results


def check_k(k: int) -> None:
    """The one limit on k, before anything runs: the one reports enforce."""
    from passhat.plain import MAX_K

    if k > MAX_K:
        raise InputError(
            f"-k is {k:,}, more than {MAX_K:,} runs per case (the most a report accounts); "
            "ask for fewer runs per case"
        )


def check_seed(seed: int | None) -> None:
    """An experiment's seed is stored as SQLite's 8-byte integer: a larger one was an
    OverflowError traceback after the suite was loaded, with nothing run."""
    if seed is not None and not -(2**63) <= seed < 2**63:
        raise InputError(f"--seed is {seed}; give a whole number of at most 18 digits, e.g. 0")


def check_retry(
    retries: int | None, retry_max_wait: float | None, call_timeout: float | None
) -> None:
    if retries is not None and retries < 0:
        raise InputError(f"--retries is {retries}; use 0 for no retries")
    if retry_max_wait is not None and not retry_max_wait >= 0:
        raise InputError(f"--retry-max-wait is {retry_max_wait:g}; give seconds, 0 or more")
    if call_timeout is not None and not call_timeout > 0:
        raise InputError(f"--call-timeout is {call_timeout:g}; give a call more than 0 seconds")


def check_model_params(temperature: float | None, max_tokens: int | None) -> None:
    """What no provider takes: it would answer 400 to every call, erroring every run
    (and a replay, which ignores them, would record them as the experiment's)."""
    if temperature is not None and not 0 <= temperature < math.inf:
        raise InputError(f"--temperature is {temperature:g}; give a number, 0 or more, e.g. 0.7")
    if max_tokens is not None and max_tokens < 1:
        raise InputError(f"--max-tokens is {max_tokens}; let a model call write at least 1 token")


def _check_options(
    k: int, concurrency: int, max_turns: int | None, timeout: float, retries: int
) -> None:
    if k < 1:
        raise InputError(f"-k is {k}; ask for at least 1 run per case")
    check_k(k)
    if concurrency < 1:
        raise InputError(f"--concurrency is {concurrency}; use at least 1")
    if max_turns is not None and max_turns < 1:
        raise InputError(f"--max-turns is {max_turns}; give the model at least 1 turn")
    if not timeout > 0:
        raise InputError(f"--timeout is {timeout:g}; give a run more than 0 seconds")
    if retries < 0:
        raise InputError(f"--retries is {retries}; use 0 for no retries")


def _check_base_url(base_url: str | None) -> None:
    if base_url is None:
        return
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"--base-url {base_url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1"
        )
    if parts.username or parts.password or parts.query or parts.fragment or ";" in parts.path:
        raise InputError(
            "--base-url carries credentials, a query, a #fragment or ;parameters; put the key in the provider's "
            "environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY): it is never stored"
        )


# --- the calls: their keywords checked as a command's options are


P = ParamSpec("P")
R = TypeVar("R")

_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    **{
        name: ((int,), "a whole number, e.g. 5")
        for name in (
            "k",
            "concurrency",
            "retries",
            "seed",
            "max_tokens",
            "model_seed",
            "max_turns",
            "token_budget",
        )
    },
    **{
        name: ((int, float), "a number of seconds, e.g. 120")
        for name in ("timeout", "retry_max_wait", "call_timeout")
    },
    "temperature": ((int, float), "a number, e.g. 0.7"),
    **{name: ((bool,), "True or False") for name in ("errored", "break_lease")},
    **{name: ((str,), "text") for name in ("name", "scheduler", "base_url", "isolation")},
}
"""The keywords of `evaluate` and `resume` with a plain type: what a value must be, and
an example of one (None is always allowed: the default)."""


def checked(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with its keywords checked first: an unknown one (`case=` for `cases=`) or a
    value of the wrong type (`k="5"`) raises `InputError` naming the keyword and the
    fix, as a command line would, instead of a TypeError from deep inside."""
    signature = inspect.signature(fn)
    known = [name for name in signature.parameters if name != "options"]

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        unknown = [key for key in kwargs if key not in signature.parameters]
        if unknown:
            key = unknown[0]
            raise InputError(
                f"{fn.__name__}() has no keyword {key!r}{did_you_mean(key, known)}; it takes "
                + ", ".join(known)
            )
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise InputError(f"{fn.__name__}(): {error}") from None
        for key, value in bound.arguments.items():
            _check_kind(fn.__name__, key, value)
        return fn(*args, **kwargs)

    return wrapper


def _check_kind(call: str, key: str, value: Any) -> None:
    kind = _KINDS.get(key)
    if value is None or kind is None:
        return
    types, example = kind
    wrong = not isinstance(value, types) or (bool not in types and isinstance(value, bool))
    if wrong:
        raise InputError(
            f"{call}({key}={value!r}): {key} is {type(value).__name__}; give {example}"
        )
