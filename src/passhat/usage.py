"""Tokens and cost: totals per run, per case and per experiment.

Every run records the tokens its model calls used. Cost is those tokens times the
prices the user gives, per million tokens (`--price in=0.15,out=0.60`, or a
prices file naming models); passhat knows no price list of its own, since
prices change and differ by contract. Pure functions over plain records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.errors import InputError

PRICE_EXAMPLE = "in=0.15,out=0.60"


@dataclass(frozen=True)
class Prices:
    """What a million tokens cost, in the user's currency."""

    input: float
    """Per million input (prompt) tokens."""
    output: float
    """Per million output (completion) tokens."""

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000

    def text(self) -> str:
        return f"in={self.input:g},out={self.output:g}"


def cost_at(prices: Prices | None, input_tokens: int, output_tokens: int) -> float | None:
    """What the tokens cost at `prices`; None without prices (never 0: unknown)."""
    return prices.cost(input_tokens, output_tokens) if prices is not None else None


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of a group of runs (one run, one case, an experiment) and their cost."""

    runs: int
    """Runs with a record (errored runs used tokens too)."""
    input_tokens: int
    output_tokens: int
    cost: float | None
    """input and output tokens at the given prices (`cost_at`); None without prices."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def per_run(self, value: float | None) -> float | None:
        return None if value is None or not self.runs else value / self.runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens_per_run": self.per_run(self.tokens),
            "cost": self.cost,
            "cost_per_run": self.per_run(self.cost),
        }


def usage_row(
    runs: int, input_tokens: int, output_tokens: int, prices: Prices | None = None
) -> dict[str, Any]:
    """`usage_of(...).to_dict()` of a group's totals, without the object (a report
    writes one per case: 10,000 of them)."""
    cost = cost_at(prices, input_tokens, output_tokens)
    return {
        "runs": runs,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "tokens_per_run": (input_tokens + output_tokens) / runs if runs else None,
        "cost": cost,
        "cost_per_run": cost / runs if cost is not None and runs else None,
    }


def usage_of(tokens: Iterable[tuple[int, int]], prices: Prices | None = None) -> TokenUsage:
    """Totals over (input tokens, output tokens) of each run."""
    runs = i = o = 0
    for input_tokens, output_tokens in tokens:
        runs += 1
        i += input_tokens
        o += output_tokens
    return TokenUsage(runs, i, o, cost_at(prices, i, o))


def usage_total(parts: Iterable[TokenUsage], prices: Prices | None = None) -> TokenUsage:
    """The total of several groups' usage (e.g. of every case): the same TokenUsage as
    `usage_of` over all their runs (whole-number sums; cost from the summed tokens)."""
    runs = i = o = 0
    for part in parts:
        runs += part.runs
        i += part.input_tokens
        o += part.output_tokens
    return TokenUsage(runs, i, o, cost_at(prices, i, o))


def usage_by_case(
    runs: Iterable[tuple[str, int, int]], prices: Prices | None = None
) -> dict[str, TokenUsage]:
    """Per case, from (case, input tokens, output tokens) of each run; in first-seen order."""
    totals: dict[str, list[int]] = {}  # case: [runs, input tokens, output tokens]
    for case, input_tokens, output_tokens in runs:
        total = totals.get(case)
        if total is None:
            totals[case] = [1, input_tokens, output_tokens]
        else:
            total[0] += 1
            total[1] += input_tokens
            total[2] += output_tokens
    return {case: TokenUsage(n, i, o, cost_at(prices, i, o)) for case, (n, i, o) in totals.items()}


def parse_price(text: str, where: str = "--price") -> Prices:
    """`in=0.15,out=0.60`: prices per million input and output tokens."""
    values: dict[str, float] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in ("in", "out") or key in values:
            raise InputError(
                f"{where} {text!r}: write in=PRICE,out=PRICE per million tokens, "
                f"e.g. {PRICE_EXAMPLE}"
            )
        values[key] = _price(value, f"{where} {key}")
    if set(values) != {"in", "out"}:
        raise InputError(f"{where} {text!r}: give both in= and out=, e.g. {PRICE_EXAMPLE}")
    return Prices(values["in"], values["out"])


def _price(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {value!r} is not a number; e.g. 0.15") from None
    if not number >= 0 or number == float("inf"):
        raise InputError(f"{where}: {value!r}; give a price of 0 or more")
    return number


def load_prices(path: str | Path) -> dict[str, Prices]:
    """A prices file: JSON or YAML mapping a model to its prices per million tokens,
    `{"openai:gpt-4o-mini": {"in": 0.15, "out": 0.60}}`."""
    import yaml  # JSON is YAML: one parser reads both

    from passhat.sources._files import MAX_SMALL_BYTES, read_bytes
    from passhat.suite.reading import _UniqueKeyLoader, _yaml_message

    file = Path(path)
    # a regular file of at most 16 MB: a FIFO blocked for ever, /dev/zero or a sparse
    # 2 GB file ran out of memory (tracebacks), as did text that is not UTF-8
    try:
        raw = read_bytes(file, "prices file", MAX_SMALL_BYTES)
    except InputError as error:
        raise InputError(f"--prices {error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--prices {file}: is not UTF-8 text; save it as UTF-8") from None
    try:
        # libyaml: nesting bounded, a key written twice refused, an alias shared (not
        # copied: `load_yaml` would copy aliases nested 9 deep into 9^9 items)
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as error:
        raise InputError(f"--prices {file}: not JSON or YAML ({_yaml_message(error)})") from None
    except (ValueError, RecursionError) as error:  # a number past 4,300 digits
        raise InputError(f"--prices {file}: not JSON or YAML ({error})") from None
    if not isinstance(data, Mapping) or not data:
        raise InputError(
            f"--prices {file}: write one model per key, e.g. "
            '{"openai:gpt-4o-mini": {"in": 0.15, "out": 0.60}}'
        )
    prices = {}
    for model, entry in data.items():
        if not isinstance(entry, Mapping) or set(entry) != {"in", "out"}:
            raise InputError(
                f"--prices {file}: {model}: give in and out per million tokens, "
                "e.g. {in: 0.15, out: 0.60}"
            )
        where = f"--prices {file}: {model}"
        prices[str(model)] = Prices(_price(entry["in"], where), _price(entry["out"], where))
    return prices


def prices_for(model: str, table: Mapping[str, Prices]) -> Prices | None:
    """The prices of a model spec (`openai:gpt-4o-mini`), by the whole spec or its name."""
    if model in table:
        return table[model]
    name = model.partition(":")[2]
    return table.get(name) if name else None


def choose_prices(price: str | None, prices_file: Path | None, model: str) -> Prices | None:
    """--price wins; else the prices file's entry for the model; else none. A model the
    file does not price is an error: a cost left out silently would read as free."""
    if price is not None:
        return parse_price(price)
    if prices_file is None or not model:
        return None
    found = prices_for(model, load_prices(prices_file))
    if found is None:
        raise InputError(
            f"--prices {prices_file}: no price for model {model!r}; add "
            f"'{model}: {{in: PRICE, out: PRICE}}' (per million tokens)"
        )
    return found


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def usage_difference(a: TokenUsage | None, b: TokenUsage | None) -> dict[str, Any] | None:
    """Both sides' tokens and cost per run, and B - A; None unless both are experiments."""
    if a is None or b is None:
        return None
    return {
        "a": a.to_dict(),
        "b": b.to_dict(),
        "tokens_per_run_difference": _difference(a.per_run(a.tokens), b.per_run(b.tokens)),
        "cost_per_run_difference": _difference(a.per_run(a.cost), b.per_run(b.cost)),
    }


@dataclass(frozen=True)
class Unseen:
    """Tokens billed that the counted runs leave out: earlier attempts of re-run runs
    (`resume --errored`), and calls given up at --call-timeout (billed, never seen)."""

    attempts: tuple[tuple[str, int, int, int, int], ...] = ()
    """(case, run, attempt, input tokens, output tokens) of each earlier attempt."""
    abandoned: int = 0
    """Model calls given up at --call-timeout: their tokens are billed and not seen."""

    def to_dict(self, counted_in: int, counted_out: int, prices: Prices | None) -> dict[str, Any]:
        """`report --json`'s `unseen`: the earlier attempts per attempt and in total, the
        total with the counted runs' tokens, and the abandoned calls."""
        tin = sum(a[3] for a in self.attempts)
        tout = sum(a[4] for a in self.attempts)
        return {
            "earlier_attempts": {
                "attempts": len(self.attempts),
                "input_tokens": tin,
                "output_tokens": tout,
                "cost": cost_at(prices, tin, tout),
                "per_attempt": [
                    {"case": c, "run": r, "attempt": n, "input_tokens": i, "output_tokens": o}
                    for c, r, n, i, o in self.attempts
                ],
            },
            "with_earlier_attempts": {
                "input_tokens": counted_in + tin,
                "output_tokens": counted_out + tout,
                "cost": cost_at(prices, counted_in + tin, counted_out + tout),
            },
            "abandoned_calls": self.abandoned,
        }

    def lines(self, counted_in: int, counted_out: int) -> list[str]:
        """What the terminal report says of them (nothing when there is nothing)."""
        out = []
        if self.attempts:
            tin = sum(a[3] for a in self.attempts)
            tout = sum(a[4] for a in self.attempts)
            out.append(
                f"earlier attempts (resume --errored): {len(self.attempts):,} attempts used "
                f"{tin:,} tokens in, {tout:,} out, beside the recorded runs' {counted_in:,} "
                f"in, {counted_out:,} out; in all {counted_in + tin:,} in, "
                f"{counted_out + tout:,} out"
            )
        if self.abandoned:
            out.append(
                f"abandoned: {self.abandoned:,} model calls given up at --call-timeout; "
                "their tokens are billed, not seen (not in any figure above)"
            )
        return out
