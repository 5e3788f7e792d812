"""`summary_with_uncertainty` as compact JSON text, written case by case.

A verdict file of 100,000 cases gives 100,000 case objects, but few distinct ones:
everything in a case's object but its id follows from its counts, its errored and
missing runs (its *shape*), and the interval and forecast follow from its counted
runs and passes. So each shape is built once with the same functions the plain
path uses (`case_dict`, `uncertainty_dict`), serialised once, and every case of
that shape is its id followed by that text. Per-case intervals and forecasts are
needed only for one case of each shape (`representatives`), not for every case.

The parsed result equals `summary_with_uncertainty(accounting, u)` with `u` over
every case (tests/test_summary_json.py compares the two on odd inputs); nothing
the size of the whole document is held in memory at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from json.encoder import encode_basestring  # the C encoder: the same bytes as pydantic-core
from typing import Any

from pydantic_core import to_json

from passhat.accounting import Accounting, CaseAccount
from passhat.report.summary import (
    add_dataset_uncertainty,
    case_dict,
    summary_dict,
    twin_figures,
    uncertainty_dict,
)
from passhat.stats import Uncertainty

CHUNK = 2048
"""Cases per piece of text handed to the writer."""


def _shape(c: CaseAccount) -> tuple[Any, ...]:
    # id(): cases recorded at the same indices share one MissingRuns (see Ledger.close)
    return (c.k_requested, c.completed, c.counted, c.passes, c.errored, id(c.missing))


def representatives(accounting: Accounting) -> set[str]:
    """One case id per distinct (counted runs, passes) with a counted run: the cases whose
    interval and forecast `summary_json_chunks` needs (pass them as `uncertainty(only=)`)."""
    seen: dict[tuple[int, int], str] = {}
    for c in accounting.cases:
        if c.counted:
            seen.setdefault((c.counted, c.passes), c.case)
    return set(seen.values())


def _dumps(value: Any) -> str:
    return to_json(value, inf_nan_mode="null").decode("utf-8")


def summary_json_chunks(
    accounting: Accounting, u: Uncertainty, *, k_inferred: bool = False
) -> Iterator[str]:
    """The compact JSON of `summary_with_uncertainty(accounting, u, k_inferred=...)` in
    pieces. `u` must hold the interval and forecast of at least the `representatives`."""
    extra = uncertainty_dict(u)
    dataset = summary_dict(accounting, k_inferred=k_inferred, with_cases=False)["dataset"]
    add_dataset_uncertainty(dataset, extra)
    yield '{"dataset":' + _dumps(dataset) + ',"cases":['
    figures = twin_figures(u, extra["cases"])
    tails: dict[tuple[Any, ...], str] = {}
    pieces: list[str] = []
    opening = '{"case":'
    for c in accounting.cases:
        key = _shape(c)
        tail = tails.get(key)
        if tail is None:
            tail = tails[key] = _tail(c, figures(c))
        pieces.append(opening + encode_basestring(c.case) + tail)
        opening = ',{"case":'
        if len(pieces) == CHUNK:
            yield "".join(pieces)
            pieces.clear()
    yield "".join(pieces) + "]"
    if "plans" in extra:
        yield ',"plans":' + _dumps(extra["plans"]) + ',"plan_notes":' + _dumps(extra["plan_notes"])
    yield "}"


def _tail(c: CaseAccount, figures: dict[str, Any] | None) -> str:
    """Everything of the case's object after its id: `case_dict` and the interval and
    forecast of its twin (`twin_figures`)."""
    d = case_dict(c)
    del d["case"]
    d["interval"] = None if figures is None else figures.get("interval")
    d["forecast"] = None if figures is None else figures.get("forecast")
    return "," + _dumps(d)[1:]
