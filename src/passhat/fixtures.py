"""Matching a look-up's arguments to a case's recorded fixtures: the rules of
`@tool(fixtures=...)` that passhat.env's docstring describes.

Arguments are normalised (Unicode NFKC, case folded, whitespace collapsed) before
they are compared: whole (`match_exact`, fixtures=True) or by the terms of each text
(`match_terms`, fixtures="terms"; Chinese and Japanese runs split where they start
and end). `fixture_key` is what two fixtures that answer the same calls share, so
`passhat check` can refuse the one that would never be used. Pure functions."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from typing import Any, Literal

__all__ = [
    "FixtureMode",
    "fixture_key",
    "match_exact",
    "match_terms",
    "normalise",
    "query_terms",
    "terms_found",
]

FixtureMode = Literal["exact", "terms"]
"""How a look-up tool matches recorded fixtures: equal arguments, or their terms."""


def normalise(value: Any) -> Any:
    """Unicode NFKC, case folded, whitespace collapsed, through lists and objects."""
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    return value


# Scripts written without spaces between words: Han (with its radicals, iteration
# marks and numerals), hiragana, katakana and bopomofo.
_UNSPACED = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303c\u3040-\u30ff"
    "\u3100-\u312f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003ffff"
)
_UNSPACED_RUN = re.compile(f"([{_UNSPACED}]+)")
"""A run of such characters, kept by `split`. One character class compiled, not three:
re builds each class's table a character at a time (some 29,000 of them), and the three
took 3 ms of every `passhat run`'s imports (this one 0.8 ms)."""


def query_terms(text: str) -> list[str]:
    """A text's terms, in order: normalised, punctuation read as spaces, split at spaces
    and where a run of Chinese or Japanese characters starts or ends."""
    return list(_query_terms(text))


@functools.lru_cache(maxsize=4096)
def _query_terms(text: str) -> tuple[str, ...]:
    """`query_terms`, once per text: every case's fixtures are checked at load and every
    look-up of a run matches the same recorded queries again."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(
        " " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in folded
    )
    # each word split where a run of Chinese or Japanese characters starts or ends
    return tuple(part for word in spaced.split() for part in _UNSPACED_RUN.split(word) if part)


def terms_found(wanted: set[str], asked: list[str]) -> bool:
    """Every wanted term is in the asked terms: a word as a whole word; a Chinese or
    Japanese term anywhere inside one of the asked runs of such characters."""
    words = set(asked)
    runs = [t for t in asked if _UNSPACED_RUN.match(t)]
    return all(
        any(term in run for run in runs) if _UNSPACED_RUN.match(term) else term in words
        for term in wanted
    )


def match_exact(recorded: dict[str, Any], called: dict[str, Any]) -> int | None:
    """0 when the normalised arguments are equal; None otherwise."""
    return 0 if normalise(recorded) == normalise(called) else None


def match_terms(recorded: dict[str, Any], called: dict[str, Any]) -> int | None:
    """How many terms of the fixture's texts the call holds (see passhat.env's docstring);
    None when an argument the fixture gives does not match."""
    score = 0
    for key, want in recorded.items():
        if key not in called:
            return None
        got = called[key]
        if isinstance(want, str) and isinstance(got, str):
            terms = set(query_terms(want))
            if not terms or not terms_found(terms, query_terms(got)):
                return None
            score += len(terms)
        elif normalise(want) != normalise(got):
            return None
    return score


def fixture_key(mode: FixtureMode, args: dict[str, Any]) -> str:
    """Equal for two fixtures that answer the same calls."""
    if mode == "terms":
        keyed = {
            k: sorted(set(query_terms(v))) if isinstance(v, str) else normalise(v)
            for k, v in args.items()
        }
        return json.dumps(keyed, sort_keys=True, ensure_ascii=False)
    return json.dumps(normalise(args), sort_keys=True, ensure_ascii=False)
