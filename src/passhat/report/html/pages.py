"""Pages of cases past `PAGED_ABOVE`: how cases are cut into pages, and the pages past the
first as compressed columns of facts (`_cases_blob`: front-coded ids, tenths of seconds,
item letters, usage) that the page's script draws from.
"""

from __future__ import annotations

import base64
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, chain, compress, pairwise, repeat
from operator import attrgetter, contains, methodcaller
from typing import Any, NamedTuple, cast

from passhat.accounting import CaseAccount
from passhat.analysis import ItemStability, item_stability
from passhat.records import RunRecord, RunSummary
from passhat.report.html.facts import _CaseFacts, _pct
from passhat.report.html.runs import _to_json
from passhat.report.parts import money
from passhat.store import LazyItems
from passhat.usage import Prices, usage_row

PAGED_ABOVE = 200
"""Up to this many cases (and `PAGED_ABOVE_RUNS` requested runs) the page holds every
case as markup."""
PAGED_ABOVE_RUNS = 2_000
"""Up to this many requested runs (and `PAGED_ABOVE` cases) the page holds every case
as markup: each run is a grid column."""
PAGE_CASES = 100
"""Cases drawn per page past `PAGED_ABOVE`, at most: the first page is markup, the
others travel as compressed columns of facts (`_cases_blob`) and are drawn by the
page's script when the reader turns to them."""
PAGE_RUNS = 1_000
"""Requested runs (grid columns) per page, at most: a page of cases with many runs
each holds fewer cases (at least one)."""


def _pair_cases(cases: Sequence[_CaseFacts]) -> dict[tuple[int, int], str]:
    """One case per (counted, passes) pair: a case's interval and forecast follow from
    its pair, so the pages past the first carry them once per pair."""
    pairs: dict[tuple[int, int], str] = {}
    for c in cases:
        if c.account.counted:
            pairs.setdefault((c.account.counted, c.account.passes), c.account.case)
    return pairs


def _pages(cases: list[_CaseFacts]) -> list[list[_CaseFacts]]:
    """One page up to `PAGED_ABOVE` cases and `PAGED_ABOVE_RUNS` runs; past that, pages
    of at most `PAGE_CASES` cases and `PAGE_RUNS` requested runs (one case at least)."""
    if len(cases) <= PAGED_ABOVE and sum(c.account.k_requested for c in cases) <= PAGED_ABOVE_RUNS:
        return [cases]
    pages: list[list[_CaseFacts]] = []
    page: list[_CaseFacts] = []
    runs = 0
    for case in cases:
        k = case.account.k_requested
        if page and (len(page) == PAGE_CASES or runs + k > PAGE_RUNS):
            pages.append(page)
            page, runs = [], 0
        page.append(case)
        runs += k
    pages.append(page)
    return pages


_STATUS_CODE = {"passed": "p", "failed": "f", "errored": "e", "missing": "m"}


def _utf16_len(text: str) -> int:
    """Length as the page's script counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def _front_coded(strings: Iterable[str]) -> tuple[list[int], list[str]]:
    """Front coding: each string as the length of the prefix it shares with the one
    before (in UTF-16 code units, whole characters) and the rest. Case ids and item
    names of one experiment often share their start (`ticket-0041`, `ticket-0042`).
    ASCII strings are compared all at once (`_shared_ascii`: 400,000 item names in a
    third of the time), others one pair at a time."""
    texts = list(strings)
    if texts and "".join(texts).isascii():
        width = max(map(len, texts))
        if len(texts) * width <= _COMPARED_AT_ONCE:
            lengths = _shared_ascii(texts)
            return lengths, [text[n:] for text, n in zip(texts, lengths, strict=True)]
    return _front_coded_loop(texts)


_COMPARED_AT_ONCE = 64_000_000
"""Bytes of the table `_shared_ascii` compares at most (strings × the longest)."""


def _shared_ascii(texts: list[str]) -> list[int]:
    """The length of the start each of `texts` (ASCII) shares with the one before (0 for
    the first): the strings as rows of a byte table, each compared with the row above,
    `_ASCII_STEP` strings at a time (each step's first compared with the step before's
    last): the table of 10,000 x 10's 100,000 item names at once, with its comparison
    and the bytes of each name, added 6 MB to the peak RSS of `report --html`."""
    import numpy as np

    shared = [0]
    for at in range(0, len(texts), _ASCII_STEP):
        part = texts[max(at - 1, 0) : at + _ASCII_STEP]
        wide = max(max(map(len, part)), 1) if len(part) > 1 else 1
        lengths = np.fromiter(map(len, part), dtype=np.int64, count=len(part))
        table = np.array([t.encode() for t in part], dtype=f"S{wide}")
        rows = table.view(np.uint8).reshape(len(part), wide)
        differ = rows[1:] != rows[:-1]
        first = np.where(differ.any(axis=1), differ.argmax(axis=1), wide)
        # a row's padding is NUL, as a string's own NUL may be: never past the shorter one
        shared += np.minimum(first, np.minimum(lengths[1:], lengths[:-1])).tolist()
    return shared


_ASCII_STEP = 8_192
"""Strings `_shared_ascii` compares at a time."""


def _front_coded_loop(texts: Iterable[str]) -> tuple[list[int], list[str]]:
    """`_front_coded`, one string at a time: any text."""
    lengths: list[int] = []
    rests: list[str] = []
    before = ""
    low = 0
    for text in texts:
        high = min(len(before), len(text))
        if not (  # often as long as the one before's
            low <= high
            and text.startswith(before[:low])
            and (low == high or text[low] != before[low])
        ):
            low = 0
            while low < high:  # the longest shared start, by halves
                middle = (low + high + 1) // 2
                if text.startswith(before[:middle]):
                    low = middle
                else:
                    high = middle - 1
        shared = text[:low]
        lengths.append(low if shared.isascii() else _utf16_len(shared))
        rests.append(text[low:])
        before = text
    return lengths, rests


def _tenths(seconds: float) -> int:
    """A duration as the template shows it (`%.1f`), in tenths: 4.25 -> "4.2" -> 42."""
    return int(f"{seconds:.1f}".replace(".", ""))


def _all_tenths(seconds: list[float]) -> list[int]:
    """`_tenths` of each of `seconds`, at once: ten times each, rounded to the nearest
    whole number, is its tenths unless within a hair of a half (where the float's own
    error, under 2**-33 below 2**20, might tip it) or past 2**20 tenths or not finite:
    those are written one by one, as `_tenths` writes them (`%.1f` rounds the float's
    exact value). 1,000,000 durations: 0.02 s, not 0.7."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        tens = np.asarray(seconds, dtype=np.float64) * 10
        whole = np.rint(tens)
        sure = (np.abs(np.abs(tens - whole) - 0.5) > 1e-6) & (np.abs(tens) < 2.0**20)
    out: list[int] = np.where(sure, whole, 0).astype(np.int64).tolist()
    for n in np.flatnonzero(~sure).tolist():
        out[n] = _tenths(seconds[n])
    return out


def _error_text(run: RunRecord | RunSummary) -> str | None:
    if not (run.error_type or run.error_message):
        return None
    return (run.error_type or "") + (f": {run.error_message}" if run.error_message else "")


def _uncertainty_texts(u: dict[str, Any], pass_rate: float) -> list[str]:
    """A case row's figures that follow from (counted, passes), as the template writes them."""
    rate, nxt = u["rate"], u["next"]
    return [
        str(pass_rate),
        f"{pass_rate:.2f}",
        str(rate.low),
        str(rate.high),
        _pct(rate.low),
        _pct(rate.high),
        str(nxt.expected),
        _pct(nxt.expected),
        _pct(nxt.low),
        _pct(nxt.high),
    ]


def _case_usage(case: _CaseFacts, prices: Prices | None) -> dict[str, Any]:
    """A case's row of the tokens table (`usage_row` of its recorded runs)."""
    runs = case.runs.values()
    tokens_in, tokens_out = sum(map(_INPUT, runs)), sum(map(_OUTPUT, runs))
    return {"case": case.account.case, **usage_row(len(runs), tokens_in, tokens_out, prices)}


def _usage(
    cases: Sequence[_CaseFacts], runs: Sequence[RunRecord | RunSummary], prices: Prices | None
) -> dict[str, Any]:
    """The tokens table: the experiment's totals and the rows of the cases given (those
    with a recorded run), in case order."""
    tokens_in, tokens_out = sum(map(_INPUT, runs)), sum(map(_OUTPUT, runs))  # in C
    return {
        "experiment": usage_row(len(runs), tokens_in, tokens_out, prices),
        "cases": [_case_usage(c, prices) for c in cases if c.runs],
    }


def _usage_columns(cases: Sequence[_CaseFacts], prices: Prices | None) -> dict[str, list[Any]]:
    """The tokens table's rows of `cases` (with a recorded run) as columns: tokens in and
    out; with prices, the cost as the template writes it (money, its data-cost, per run).
    Each case's sums taken in C, and no row made without prices (10,000 cases)."""
    rows = [c.runs.values() for c in cases if c.runs]
    tokens_in = [sum(map(_INPUT, runs)) for runs in rows]
    tokens_out = [sum(map(_OUTPUT, runs)) for runs in rows]
    columns: dict[str, list[Any]] = {"tokensIn": tokens_in, "tokensOut": tokens_out}
    if prices is not None:
        usage = [
            usage_row(len(runs), i, o, prices)
            for runs, i, o in zip(rows, tokens_in, tokens_out, strict=True)
        ]
        columns["cost"] = [money(u["cost"]) for u in usage]
        columns["costData"] = [str(u["cost"]) for u in usage]
        columns["costPerRun"] = [money(u["cost_per_run"]) for u in usage]
    return columns


_INPUT = attrgetter("input_tokens")
_GRADED = attrgetter("graded_items")
_RUNS = attrgetter("runs")
_NONE = repeat(None)
"""None, endlessly: a slice's stop, for `map(slice, ...)`."""
_SEVERAL = (1).__lt__
"""Whether a length is more than one (in C: `map(_SEVERAL, map(len, lists))`)."""
_SHAPE = attrgetter("shape")
_FOUND = attrgetter("found")
_EXTRAS = attrgetter("extras")
_LETTER = ("0", "1")
"""A hit letter by whether the item was found (`False`, `True`)."""
_OUTPUT = attrgetter("output_tokens")
_VERDICT = attrgetter("verdict")
_SCORER = attrgetter("scorer")
_ITEM = attrgetter("item")
_EXPECTED = attrgetter("expected")
_DURATION = attrgetter("duration_s")
_CASE_OF = attrgetter("case")


def _run_facts(cases: Sequence[_CaseFacts]) -> tuple[str, list[int], list[int], list[str]]:
    """The runs of `cases` as `_cases_blob` writes them: one status letter per requested
    run; per recorded run its duration in tenths (`_tenths`); its error, if any, as the
    number of recorded runs since the one before with an error, and the error's text."""
    requested = [c.runs.get(i) for c in cases for i in range(1, c.account.k_requested + 1)]
    statuses = "".join([_STATUS_CODE[r.status] if r is not None else "m" for r in requested])
    recorded = [r for r in requested if r is not None]
    tenths = _all_tenths(list(map(_DURATION, recorded)))
    error_at: list[int] = []
    error_text: list[str] = []
    last = 0
    for n in [n for n, r in enumerate(recorded) if r.error_type or r.error_message]:
        error_at.append(n - last)
        error_text.append(_error_text(recorded[n]) or "")
        last = n
    return statuses, tenths, error_at, error_text


def _tool_facts(
    cases: Sequence[_CaseFacts], tools: Sequence[str]
) -> tuple[list[list[int]], list[list[int]]]:
    """Per tool of `tools`: its calls in each recorded run of `cases` (by case, then run
    index), and its errors in each case with a recorded run (`tool_profile`'s
    calls_per_run and errors of each case, in one pass over the runs)."""
    counts: list[Mapping[str, tuple[int, int]]] = []
    bounds = [0]
    for c in cases:
        if c.runs:
            counts.extend([c.runs[i].tool_counts for i in sorted(c.runs)])
            bounds.append(len(counts))
    # runs with equal counts share one value (`Store.summaries`): each read once per tool,
    # the runs' columns then looked up in C
    ids = list(map(id, counts))
    distinct = dict(zip(ids, counts, strict=True))
    calls: list[list[int]] = []
    errors: list[list[int]] = []
    zero = (0, 0)
    for tool in tools:
        per_value = {key: value.get(tool, zero) for key, value in distinct.items()}
        calls.append(list(map({key: n for key, (n, _) in per_value.items()}.__getitem__, ids)))
        if all(type(e) is int and e == 0 for _, e in per_value.values()):  # each case's: 0
            errors.append([0] * (len(bounds) - 1))
            continue
        errors_of = {key: e for key, (_, e) in per_value.items()}
        total = list(accumulate(map(errors_of.__getitem__, ids), initial=0))
        errors.append([total[b] - total[a] for a, b in pairwise(bounds)])
    return calls, errors


@dataclass
class _ItemColumns:
    """The items of the cases of pages past the first, as `_cases_blob` writes them:
    how many each case has, and per item its scorer (a number), name, whether expected
    and its hit letters. Added a page at a time, so that no more than one page's
    `ItemStability` values are held (100,000 cases have about 500,000 items)."""

    verdicts: Counter[str]
    """Counts the verdicts of the items added."""
    scorers: dict[str, int] = field(default_factory=dict)
    """Scorer labels, numbered in order of first use."""
    counts: list[int] = field(default_factory=list)
    scorer: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    hits: list[str] = field(default_factory=list)
    shared: list[int] = field(default_factory=list)
    """The names `compact` let go, front-coded (`_front_coded`): the start each shares
    with the one before, and the rest of it."""
    rest: list[str] = field(default_factory=list)
    last: str | None = None
    """The last name `compact` let go (the next one's front coding starts from it)."""
    joined: int = 0
    """Entries of `expected` and `hits` that `compact` joined: each a page's letters."""
    shapes: dict[object, Any] = field(default_factory=dict)
    """Each distinct `_Plan.shape` of the page being added, once (`_plan`): runs of one
    shape share it."""

    def compact(self) -> None:
        """The names added since the last call front-coded onto `shared` and `rest` and
        let go, and their letters joined into one string per call: what `_cases_blob`
        writes, without each of 10,000 x 10's ~100,000 items held as strings of its own
        to the end (they made 7 MB of the peak RSS of `report --html`). Called once
        `_ASCII_STEP` names are held, not after each page: at 10,000 x 10 a call per page
        (99 of ~460 names each) spent 0.03 s of CPU on numpy's setting up alone."""
        names = self.names
        if names:
            last = [] if self.last is None else [self.last]
            lengths, rests = _front_coded([*last, *names])
            self.shared += lengths[len(last) :]
            self.rest += rests[len(last) :]
            self.last = names[-1]
            names.clear()
        at = self.joined
        self.expected[at:] = ["".join(self.expected[at:])]
        self.hits[at:] = ["".join(self.hits[at:])]
        self.joined = at + 1

    def add(self, page: Sequence[_CaseFacts]) -> None:
        """The items of `page`'s cases, as `item_stability` of their runs has them (in
        case order, each scorer's together), written straight into the columns when a
        case's counted runs share one plain shape (`_Plan`; the usual case), else from
        it (no row of five per item made and then turned into columns: at 100,000 cases
        x 1 a quarter of the page's CPU)."""
        self.shapes.clear()  # held a page at a time, as the plans are
        verdicts: list[str] = []
        names = self.names
        # each case's counted runs by index (`run.counted` without a property call per
        # run), and their per-item values, each read once (a record makes its anew)
        counted_of = [
            [run for run in runs.values() if run.status != "errored"]
            if len(runs) == 1  # k = 1: nothing to sort
            else [run for run in map(runs.__getitem__, sorted(runs)) if run.status != "errored"]
            for runs in map(_RUNS, page)
        ]
        values_of = [list(map(_GRADED, counted)) for counted in counted_of]
        plans = self._plans(values_of)
        for c, values in zip(page, values_of, strict=True):
            before = len(names)
            if values and not self._plain(values, plans, verdicts):
                # as given: the first run's scorers come first
                for s in item_stability([run for run in c.runs.values() if run.counted]):
                    self._item(s.scorer, s.item, "1" if s.expected else "0", _hit_letters(s))
                    verdicts.append(s.verdict)
            self.counts.append(len(names) - before)
        self.verdicts.update(verdicts)

    def _plans(self, values_of: list[list[Any]]) -> dict[int, _Plan | None]:
        """The plan (`_plan`) of each distinct per-item value of the cases of several
        counted runs, by id (the values are held by `add` while the plans are read, so
        ids stay unique): each value read once, all before the cases are written (a step
        per run of each case to find the values not read yet was a fifth of the items'
        CPU at 10,000 x 10)."""
        several = compress(values_of, map(_SEVERAL, map(len, values_of)))
        values = {id(v): v for v in chain.from_iterable(several)}
        shapes = self.shapes
        return {
            key: _plan(value.decoded() if isinstance(value, LazyItems) else value, shapes)
            for key, value in values.items()
        }

    def _item(self, label: str, name: str, expected: str, hits: str) -> None:
        scorers = self.scorers
        self.scorer.append(scorers.setdefault(label, len(scorers)))
        self.names.append(name)
        self.expected.append(expected)
        self.hits.append(hits)

    def _expected(
        self, label: str, items: Sequence[str], hits: Sequence[str], verdicts: list[str]
    ) -> None:
        """A scorer's expected items, with their hit letters (one string per item)."""
        n = len(items)
        if not n:  # a label with no item is not numbered: it is not used
            return
        scorers = self.scorers
        self.scorer.extend(repeat(scorers.setdefault(label, len(scorers)), n))
        self.names.extend(items)
        self.expected.extend(repeat("1", n))
        self.hits.extend(hits)
        verdicts.extend(map(_found_verdict, hits))

    def _plain(
        self,
        values: list[Any],
        plans: dict[int, _Plan | None],
        verdicts: list[str],
    ) -> bool:
        """A case's items from the per-item values of its counted runs (by index) when
        they all share one plain shape; False, with nothing written, otherwise. `plans`
        holds the plan of each value read, by id (`_plans`; `add` holds the values)."""
        if len(values) == 1:  # one run (k = 1): its one scorer's items read straight
            value = values[0]
            if id(value) not in plans:
                read = value.decoded() if isinstance(value, LazyItems) else value
                if len(read) == 1:
                    return self._lone(read[0], verdicts)
                plans[id(value)] = _plan(read, self.shapes)  # decoded once
        # each run's plan looked up in C (a Python step per run was half the items' CPU
        # at 10,000 x 10)
        read_plans: list[_Plan | None] = list(map(plans.__getitem__, map(id, values)))
        # one shape: the same object (`_plan` keeps one of each), counted in C
        if None in read_plans:
            return False
        case_plans = cast(list[_Plan], read_plans)
        first = case_plans[0]
        shape = first.shape
        if len(case_plans) == 1:  # one run: its letters are the columns
            columns: Sequence[str] = first.found
            with_extras = bool(first.extras)
        else:
            if list(map(_SHAPE, case_plans)).count(shape) != len(case_plans):
                return False
            # the runs' letters one after another; an item's, every `width`th from its own
            letters, width = "".join(map(_FOUND, case_plans)), len(first.found)
            columns = list(map(letters.__getitem__, map(slice, range(width), _NONE, repeat(width))))
            with_extras = any(map(_EXTRAS, case_plans))
        at = 0
        for label, items in shape:
            self._expected(label, items, columns[at : at + len(items)], verdicts)
            at += len(items)
            if not with_extras:
                continue
            having = list(map(methodcaller("get", label, _NO_EXTRAS), map(_EXTRAS, case_plans)))
            for item in sorted(_NO_EXTRAS.union(*having)):
                hits = "".join(map(_LETTER.__getitem__, map(contains, having, repeat(item))))
                self._item(label, item, "0", hits)
                verdicts.append("extra, every run" if "0" not in hits else "extra, sometimes")
        return True

    def _lone(self, detail: Mapping[str, Any], verdicts: list[str]) -> bool:
        """`_plain` of a case of one counted run with one scorer (`_plan` and the columns
        in one step; at 100,000 cases x 1, every case); False when not plain."""
        path = detail.get("path")
        label = f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))
        items = tuple(map(str, detail["expected"]))
        n = len(items)
        if n > 1 and len(set(items)) != n:
            return False
        missing = detail["missing"]
        if missing == []:
            letters: Sequence[str] = "1" * n  # one letter per item
        else:
            absent = set(map(str, missing))
            letters = ["0" if item in absent else "1" for item in items]
        raw = detail.get("extra")
        extra: frozenset[str] = _NO_EXTRAS
        if raw:
            keys = dict.fromkeys(raw)
            extra = frozenset(map(str, keys))
            if len(extra) != len(keys):
                return False
        self._expected(label, items, letters, verdicts)
        for item in sorted(extra):
            self._item(label, item, "0", "1")
            verdicts.append("extra, every run")
        return True


class _Plan(NamedTuple):
    """One run's per-item results when plain: each scorer label once, each expected
    item once per label, each extra once (as text)."""

    shape: tuple[tuple[str, tuple[str, ...]], ...]
    """(label, expected items) of each scorer."""
    found: str
    """1 or 0 per expected item of `shape`, in order: found (not missing)."""
    extras: dict[str, frozenset[str]]
    """Per label with extras, the extra items (as text)."""


def _plan(graded: Sequence[Mapping[str, Any]], shapes: dict[object, Any]) -> _Plan | None:
    """`graded` read as `analysis.item_stability` reads it, or None when it is not plain
    (a label twice, an item twice): then the case takes `item_stability` itself. Its
    shape is the one `shapes` holds when an equal one was read before (kept there when
    not): runs of the same shape then share one object, told apart by identity. One
    detail (the usual) is read by `_detail_plan` alone, with no list of parts made and
    joined (a quarter of this function's CPU at 10,000 x 10)."""
    if len(graded) == 1:
        return _detail_plan(graded[0], shapes)
    parts = [_detail_plan(detail, None) for detail in graded]
    if None in parts:
        return None
    plans = cast(list[_Plan], parts)
    kept = tuple([plan.shape[0] for plan in plans])
    if len({label for label, _ in kept}) != len(kept):
        return None
    extras = {label: extra for plan in plans for label, extra in plan.extras.items()}
    return _Plan(shapes.setdefault(kept, kept), "".join(map(_FOUND, plans)), extras)


def _detail_plan(detail: Mapping[str, Any], shapes: dict[object, Any] | None) -> _Plan | None:
    """`_plan` of one detail (kept in `shapes`, when given). A detail that missed nothing
    (the usual) and a lone expected item are told in one step, not through sets (at
    100,000 cases x 1 this ran once per case)."""
    path = detail.get("path")
    label = f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))
    items = tuple(map(str, detail["expected"]))
    if len(items) > 1 and len(set(items)) != len(items):
        return None
    missing = detail["missing"]
    if missing == []:
        found = "1" * len(items)
    else:
        absent = set(map(str, missing))
        found = "".join(["0" if item in absent else "1" for item in items])
    raw = detail.get("extra")
    extras: dict[str, frozenset[str]] = {}
    if raw:
        extra = frozenset(map(str, dict.fromkeys(raw)))
        if len(extra) != len(dict.fromkeys(raw)):
            return None
        extras[label] = extra
    kept = ((label, items),)
    return _Plan(kept if shapes is None else shapes.setdefault(kept, kept), found, extras)


@lru_cache(maxsize=65_536)  # a few patterns of hits repeat over thousands of items
def _found_verdict(hits: str) -> str:
    """An expected item's verdict (`ItemStability.verdict`) from its hit letters."""
    if "0" not in hits:
        return "always found"
    return "always missed" if "1" not in hits else "sometimes missed"


_NO_EXTRAS: frozenset[str] = frozenset()


def _hit_letters(item: ItemStability) -> str:
    """One letter per counted run of an item: 1 when it found (or produced) it, else 0."""
    runs, hits = item.runs, item.hits
    if len(hits) == len(runs):
        return "1" * len(runs)
    if not hits:
        return "0" * len(runs)
    found = set(hits)
    return "".join(["1" if i in found else "0" for i in runs])


def _cases_blob(
    pages: list[list[_CaseFacts]],
    per_pair: dict[tuple[int, int], dict[str, Any]],
    ci_level: int,
    usage: dict[str, list[Any]] | None,
    tools: Sequence[str],
    verdicts: Counter[str],
) -> str:
    """Pages 2.. of a paged report as columns of facts, one list per fact over all their
    cases (gzip, base64), from which the page's script draws a page's table rows and
    case sections when the reader turns to it: the same elements, attributes and text
    as the template's `case_row` and `case_section` (tests/test_report_html_pages.py
    compares them).

    Per case: its id (front-coded), k, one status letter per requested run (p f e m),
    per recorded run its duration in tenths and its error, if any; per item its scorer,
    name (front-coded), whether expected, and one hit letter (1/0) per counted run; per
    tool the calls of each recorded run and the errors of the case; the case's tokens
    (and cost) when the page has a tokens table. What follows from
    these (counts, missing and errored runs, cells, verdicts, symbols) is not written;
    the figures that follow from (counted, passes) are written once per pair. Counts
    the verdicts of their items into `verdicts`."""
    if len(pages) < 2:
        return ""
    cases = [c for page in pages[1:] for c in page]
    # each column written as JSON once made, and let go (the columns of 100,000 runs
    # held as lists at once were ~20 MB, their JSON 3 MB): the keys in `_CASES_KEYS` order
    text: dict[str, bytes] = {
        "first": _to_json(cases[0].number),
        "starts": _to_json([page[0].number for page in pages[1:]]),
        "k": _to_json([c.account.k_requested for c in cases]),
    }
    statuses, durations, error_at, error_text = _run_facts(cases)
    text.update(
        status=_to_json("".join(statuses)),
        tenths=_to_json(durations),
        errorAt=_to_json(error_at),
        errorText=_to_json(error_text),
    )
    del statuses, durations, error_at, error_text
    calls, errors = _tool_facts(cases, tools)
    text.update(tools=_to_json(list(tools)), calls=_to_json(calls), toolErrors=_to_json(errors))
    del calls, errors
    items = _ItemColumns(verdicts)
    for page in pages[1:]:
        items.add(page)
        if len(items.names) >= _ASCII_STEP:  # front-coded a step at a time, not a page
            items.compact()
    items.compact()
    text.update(
        items=_to_json(items.counts),
        scorers=_to_json(list(items.scorers)),
        itemScorer=_to_json(items.scorer),
        nameShared=_to_json(items.shared),
        nameRest=_to_json(items.rest),
        expected=_to_json("".join(items.expected)),
        hits=_to_json("".join(items.hits)),
    )
    del items
    # each (counted, passes) pair's figures once, in order of first use (a case's
    # `metrics` are made anew each time they are read: 100,000 cases, once per pair)
    firsts: dict[tuple[int, int], CaseAccount] = {}
    for c in cases:
        a = c.account
        if a.counted:
            firsts.setdefault((a.counted, a.passes), a)
    figures: dict[str, list[str]] = {}
    for (counted, passes), a in firsts.items():
        if a.metrics is not None:
            figures[f"{counted},{passes}"] = _uncertainty_texts(
                per_pair[(counted, passes)], a.metrics.pass_rate
            )
    id_shared, id_rest = _front_coded(c.account.case for c in cases)
    text.update(
        idShared=_to_json(id_shared),
        idRest=_to_json(id_rest),
        figures=_to_json(figures),
        conf=_to_json(f"{ci_level}%"),
        usage=_to_json(usage),
    )
    # joined once, each column as it is (a column formatted with its key, then the
    # columns joined, then braces added were three more copies of the 3 MB of 10,000 x
    # 10, at the peak RSS of `report --html`)
    pieces: list[bytes] = [b"{"]
    for key in _CASES_KEYS:
        pieces += [b'"%b":' % key.encode(), text.pop(key), b","]
    pieces[-1] = b"}"
    data = b"".join(pieces)
    del pieces
    return base64.b64encode(_gzip(data)).decode("ascii")


_CASES_KEYS = (
    "first",
    "starts",
    "idShared",
    "idRest",
    "k",
    "status",
    "tenths",
    "errorAt",
    "errorText",
    "items",
    "scorers",
    "itemScorer",
    "nameShared",
    "nameRest",
    "expected",
    "hits",
    "tools",
    "calls",
    "toolErrors",
    "figures",
    "conf",
    "usage",
)
"""The pages blob's keys, in the order the page has always had them."""


def _gzip(data: bytes) -> bytes:
    """gzip of the pages blob, filtered (mostly numbers and letters, little to match): level
    3 up to `GZIP_FAST_UP_TO` bytes, else 6. At 10,000 x 10 its 3.06 MB deflate to 313 KB
    at level 3 in 0.017 s of CPU, to 261 KB at level 6 in 0.071 s (a tenth of what
    `report --html` may spend beyond `report`), 247 KB at 9 in 0.12 s. Past 1,000,000 runs
    the blob is most of the page, whose 5 MB needs level 6's size (at 1,000,000 runs as
    small as level 9 within 1-4 %, in a third to a half of its time)."""
    level = 3 if len(data) <= GZIP_FAST_UP_TO else 6
    packer = zlib.compressobj(level, zlib.DEFLATED, 31, 9, zlib.Z_FILTERED)  # 31: gzip
    return packer.compress(data) + packer.flush()


GZIP_FAST_UP_TO = 8_000_000
"""Bytes of pages blob up to which it is compressed fast (`_gzip`): 100,000 runs make
3 MB, 1,000,000 runs 18 to 30 MB."""
