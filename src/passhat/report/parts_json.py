"""The largest parts of `report --json` as compact JSON text, made in pieces.

`item_dicts` and `usage_dict` of 100,000 runs are ~50,000 item dicts and 100,000
per-run dicts, each with its lists: building them, then encoding them, was half of
`report --json`, and holding them doubled its peak memory at a million runs. Here
the same JSON is written straight from the columns: what repeats (a case's id, the
runs / hits / misses of a column of found items, which cases with the same run
indices share) is encoded once and copied as text, and the text is handed over a
few thousand entries at a time.

The parsed text equals the dicts; the bytes equal `pydantic_core.to_json` of them
(strings by `json.encoder.encode_basestring`, which escapes as pydantic-core does;
every number that is not an int goes through `to_json` itself: its floats are not
Python's repr). tests/test_report_json_parts.py compares both on odd inputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, islice, repeat
from json.encoder import encode_basestring
from operator import attrgetter, itemgetter, not_
from typing import Any, NamedTuple

from pydantic_core import to_json

from passhat.analysis import (
    _GRADED_ITEMS,
    _TOOL_COUNTS,
    RunColumns,
    _case_items,
    item_dict,
    item_dicts,
    tool_dicts,
    tool_rows,
    tool_value_rows,
)
from passhat.usage import usage_row

CHUNK = 4096
"""Entries (items, runs) per piece of text."""


def _dumps(value: Any) -> str:
    return to_json(value, inf_nan_mode="null").decode("utf-8")


def _list(values: Sequence[Any]) -> str:
    return _dumps(list(values))


def _strings(columns: RunColumns) -> bool:
    """Every case id a str (as a store gives them): `encode_basestring` takes no other."""
    return set(map(type, columns.sizes)) <= {str}


class _Tails(dict[tuple[bool, ...], str]):
    """For one tuple of run indices: the text after an item's name, per column of
    found / not found (`analysis._Columns` as text), made the first time it is asked
    for. Expected items and extras have their own tables."""

    def __init__(self, runs: list[int], expected: bool) -> None:
        super().__init__()
        self.runs = runs
        self.head = (',"expected":true' if expected else ',"expected":false') + (
            ',"runs":' + _list(runs)
        )
        self.expected = expected

    def __missing__(self, column: tuple[bool, ...]) -> str:
        runs = self.runs
        hits = list(compress(runs, column))
        misses = [run for run, found in zip(runs, column, strict=True) if not found]
        if self.expected:
            verdict = (
                "always found" if not misses else ("sometimes missed" if hits else "always missed")
            )
        else:
            verdict = "extra, every run" if len(hits) == len(runs) else "extra, sometimes"
        made = self[column] = (
            f'{self.head},"hits":{_list(hits)},"misses":{_list(misses)},"verdict":"{verdict}"}}'
        )
        return made


def item_json(
    runs: Sequence[Any], columns: RunColumns, kept: Mapping[str, str] | None = None
) -> Iterator[str]:
    """The compact JSON of `item_dicts(runs, columns)`, in pieces, case by case: each
    distinct per-item value of a case is read when the case is (a `LazyItems` decoded
    then and let go), so the decoded items of every run are never held at once. A
    case's text in `kept` (`Store.kept_items`) is taken as it is."""
    if not columns.ordered or not _strings(columns):
        yield _dumps(item_dicts(runs, columns))
        return
    keep = list(map("errored".__ne__, columns.statuses))
    counted = list(compress(runs, keep))
    indices = list(compress(columns.indices, keep))
    values = list(map(_GRADED_ITEMS, counted))
    sizes = columns.sizes if len(counted) == len(runs) else Counter(compress(columns.cases, keep))
    cases: Iterable[CaseValues | str] = _by_case(sizes, indices, values)
    if kept:
        cases = (kept.get(case[0], case) for case in cases)
    yield from case_item_json(cases)


def _by_case(
    sizes: Mapping[str, int], indices: list[int], values: list[Any]
) -> Iterator[tuple[str, list[int], list[Any]]]:
    start = 0
    for case, size in sizes.items():  # by case: each case's runs in one stretch
        end = start + size
        yield case, indices[start:end], values[start:end]
        start = end


class _Graded(NamedTuple):
    """What `analysis._case_items` reads of a run."""

    run_index: int
    graded_items: Any


CaseValues = tuple[str, list[int], list[Any]]
"""A case id (a str), the indices of its counted runs, rising, and each one's per-item
results (runs with equal results share one object: `Store.summaries` gives them one)."""


def case_item_json(cases: Iterable[CaseValues | str]) -> Iterator[str]:
    """`item_json`'s pieces from the counted runs of each case (`CaseValues`), or from a
    case's text as `ItemText.text` made it (kept in the store: `Store.kept_items`), cases
    in order; the JSON list of every case's items."""
    maker = ItemText()
    out: list[str] = []
    opening = "["
    for case in cases:
        if type(case) is str:
            if case:  # a case with no item: no text
                out.append(case)
        else:
            maker.entries(out, *case)
        if len(out) >= CHUNK:
            yield opening + ",".join(out)
            opening = ","
            out.clear()
    yield (opening + ",".join(out) + "]") if out or opening == "[" else "]"


class ItemText:
    """The items of a case as compact JSON text, case after case: what repeats between
    cases (the tails of a tuple of run indices, a scorer's label) made once."""

    __slots__ = ("labels", "tables")

    def __init__(self) -> None:
        self.tables: dict[tuple[int, ...], tuple[_Tails, _Tails]] = {}
        self.labels: dict[str, str] = {}

    def text(self, case: str, case_runs: list[int], case_values: list[Any]) -> str:
        """A case's entries of the items list, comma-separated, without the list's
        brackets ('' for a case with no counted run or no item): the text
        `Store.fill_case_items` keeps."""
        out: list[str] = []
        if case_runs:
            self.entries(out, case, case_runs, case_values)
        return ",".join(out)

    def entries(
        self, out: list[str], case: str, case_runs: list[int], case_values: list[Any]
    ) -> None:
        """Each item of a case (`CaseValues`) as JSON text, added to `out`."""
        case_ids = list(map(id, case_values))  # `case_values` keeps every id's object alive
        distinct = dict(zip(case_ids, case_values, strict=True))  # runs share values
        plans = dict(zip(distinct, map(_plan, distinct.values()), strict=True))
        plain, skeleton, _, _ = plans[case_ids[0]]
        if not plain or (
            len(plans) > 1 and not all(p and s == skeleton for p, s, _, _ in plans.values())
        ):
            graded: list[Any] = list(map(_Graded, case_runs, case_values))  # all it reads
            items = _case_items(case, graded, {})
            out.extend(map(_dumps, map(item_dict, items)))
        elif skeleton:
            runs_key = tuple(case_runs)
            pair = self.tables.get(runs_key)
            if pair is None:
                pair = self.tables[runs_key] = (_Tails(case_runs, True), _Tails(case_runs, False))
            found_tails, extra_tails = pair
            found = map(
                found_tails.__getitem__,
                zip(*map(_FOUND, map(plans.__getitem__, case_ids)), strict=True),
            )
            extras = [(key, plan[3]) for key, plan in plans.items() if plan[3]] or None
            head = '{"case":' + encode_basestring(case) + ',"scorer":'
            labels = self.labels
            for label, items_of in skeleton:
                scorer = labels.get(label)
                if scorer is None:
                    scorer = labels[label] = encode_basestring(label) + ',"item":'
                named = head + scorer
                out.extend(
                    [
                        named + encode_basestring(item) + tail
                        for item, tail in zip(items_of, found, strict=False)
                    ]
                )
                if extras is not None:
                    sources = [(k, by_label[label]) for k, by_label in extras if label in by_label]
                    if sources:
                        _extras(out, named, case_ids, sources, extra_tails)


_FOUND = itemgetter(2)
"""A plan's found per expected item."""

_Plan = tuple[bool, tuple[tuple[str, tuple[str, ...]], ...], tuple[bool, ...], dict[str, Any]]


def _plan(graded: Sequence[Mapping[str, Any]]) -> _Plan:
    """`analysis._graded(analysis._read_details(graded))` in one pass: whether the value is
    plain, its skeleton, found per expected item, the extras per label."""
    decoded = getattr(graded, "decoded", None)  # `store.LazyItems`: decoded, not kept
    if decoded is not None:
        graded = decoded()
    skeleton = []
    found: list[bool] = []
    extras: dict[str, frozenset[str]] = {}
    labels: set[str] = set()
    plain = True
    for detail in graded:
        path = detail.get("path")
        label = f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))
        items = tuple(map(str, detail["expected"]))
        missing = detail["missing"]
        if missing == []:  # found them all (the usual): nothing to look up
            found.extend([True] * len(items))
        else:
            found.extend(map(not_, map(frozenset(map(str, missing)).__contains__, items)))
        extra = detail.get("extra")
        if extra:  # each distinct one once, as text; two that read the same: not plain
            listed = list(map(str, dict.fromkeys(extra)))
            distinct = extras[label] = frozenset(listed)
            plain = plain and len(distinct) == len(listed)
        if plain and (label in labels or (len(items) > 1 and len(frozenset(items)) != len(items))):
            plain = False
        labels.add(label)
        skeleton.append((label, items))
    return plain, tuple(skeleton), tuple(found), extras


def _extras(
    out: list[str],
    named: str,
    ids: list[int],
    sources: list[tuple[int, frozenset[str]]],
    tails: _Tails,
) -> None:
    """`analysis._extra_items` as text: every distinct extra item of a label, sorted."""
    present: tuple[bool, ...] = ()
    if len(sources) == 1:  # one value has extras: they all appear in its runs
        key, items = sources[0]
        present = tuple(map(key.__eq__, ids))
    else:
        items = frozenset().union(*[extras for _, extras in sources])
    for item in sorted(items):
        if len(sources) > 1:
            having = {key for key, extras in sources if item in extras}
            present = tuple(map(having.__contains__, ids))
        out.append(named + encode_basestring(item) + tails[present])


_INPUT_TOKENS = attrgetter("input_tokens")
_OUTPUT_TOKENS = attrgetter("output_tokens")


def usage_json(runs: Sequence[Any], columns: RunColumns) -> Iterator[str] | None:
    """The compact JSON of `experiment.usage_dict(runs, None, columns)` (no prices), in
    pieces; None when the runs are not by case or a token count or run index is not an
    int (then the dict is the way)."""
    tokens_in = list(map(_INPUT_TOKENS, runs))
    tokens_out = list(map(_OUTPUT_TOKENS, runs))
    ints = {int} >= set(map(type, tokens_in)) | set(map(type, tokens_out)) | set(
        map(type, columns.indices)
    )
    if not columns.ordered or not ints or not _strings(columns):
        return None
    return usage_pieces(columns.sizes, columns.indices, tokens_in, tokens_out)


_EXACT = 2**53
"""`totals` summed in SQL as floats (`Store.tallies`) are exact below this only."""


def usage_pieces(
    sizes: Mapping[str, int],
    indices: Sequence[int],
    tokens_in: Sequence[int],
    tokens_out: Sequence[int],
    totals: Mapping[str, tuple[int, int, int]] | None = None,
) -> Iterator[str]:
    """`usage_json`'s pieces from the runs by case (`sizes`: each case id, a str, and its
    count of runs, in order), their indices and token counts (ints). `totals`: each
    case's (runs, input tokens, output tokens) when already counted (in SQL: summed
    here they were 20,000 slices of the token columns at 10,000 cases; a total past
    `_EXACT` is summed here, as SQL's float sum may have rounded it)."""
    yield (
        '{"prices_per_million":null,"experiment":'
        + _dumps(usage_row(len(indices), sum(tokens_in), sum(tokens_out), None))
        + ',"cases":'
    )
    per_run: dict[float, str] = {}  # tokens per run as to_json writes it (a float)
    per_case: list[str] = []
    opening = "["
    start = 0
    for case, size in sizes.items():  # each case's runs in one stretch
        end = start + size
        if totals is None:
            used_in, used_out = sum(tokens_in[start:end]), sum(tokens_out[start:end])
        else:
            _, used_in, used_out = totals[case]
            if not (-_EXACT < used_in < _EXACT and -_EXACT < used_out < _EXACT):
                used_in, used_out = sum(tokens_in[start:end]), sum(tokens_out[start:end])
        mean = (used_in + used_out) / size  # `usage_row`'s, every case having a run
        said = per_run.get(mean)
        if said is None:
            said = per_run[mean] = _dumps(mean)
        per_case.append(
            f'{{"case":{encode_basestring(case)},"runs":{size},"input_tokens":{used_in},'
            f'"output_tokens":{used_out},"tokens_per_run":{said},"cost":null,'
            '"cost_per_run":null}'
        )
        start = end
        if len(per_case) == CHUNK:
            yield opening + ",".join(per_case)
            opening = ","
            per_case.clear()
    yield (opening + ",".join(per_case) + "]" if per_case or opening == "[" else "]") + (
        ',"runs":['
    )
    opening = ""
    # each case's id encoded again where its runs begin, not held for every case at once
    names = chain.from_iterable(map(repeat, map(encode_basestring, sizes), sizes.values()))
    for start in range(0, len(indices), CHUNK):
        end = start + CHUNK
        rows = zip(
            islice(names, CHUNK),
            indices[start:end],
            tokens_in[start:end],
            tokens_out[start:end],
            strict=True,
        )
        yield opening + ",".join(
            [  # an f-string: twice as fast as str.format (ints only, checked above)
                f'{{"case":{c},"run":{i},"input_tokens":{a},"output_tokens":{b},"cost":null}}'
                for c, i, a, b in rows
            ]
        )
        opening = ","
    yield "]}"


def tool_json(runs: Sequence[Any], tools: Sequence[str], columns: RunColumns) -> Iterator[str]:
    """The compact JSON of `tool_dicts(runs, tools, columns)`, in pieces: a case's rows
    are made as text from each distinct count value's row of calls and errors (as
    `tool_dicts` makes them), a few thousand rows at a time."""
    if not columns.ordered or not _strings(columns):
        yield _dumps(tool_dicts(runs, tools, columns))
        return
    yield from _tool_json(tool_rows(list(map(_TOOL_COUNTS, runs)), tools), columns.sizes)


def tool_json_of(
    keys: Sequence[int],
    distinct: Mapping[int, Mapping[str, tuple[int, int]]],
    tools: Sequence[str],
    sizes: Mapping[str, int],
) -> Iterator[str]:
    """`tool_json` of runs by case (`sizes`: each case's count of runs, in order, every
    case id a str) given by the key of each one's tool counts and each distinct value by
    key, in the order runs first have it. A case's rows are looked up when its runs are
    written, never held for every run (8 MB at 1,000,000 runs)."""
    names, rows_of, errors = tool_value_rows(distinct, tools)
    yield from _tool_json((names, keys, _RowsOf(keys, rows_of), errors), sizes)


class _RowsOf:
    """The runs' rows of calls and errors (`analysis.tool_rows`), made for a slice of runs
    when asked for, from each run's key and the row of each key."""

    __slots__ = ("keys", "rows_of")

    def __init__(self, keys: Sequence[int], rows_of: Mapping[int, tuple[int, ...]]) -> None:
        self.keys = keys
        self.rows_of = rows_of

    def __getitem__(self, runs: slice) -> list[tuple[int, ...]]:
        return list(map(self.rows_of.__getitem__, self.keys[runs]))


def _tool_json(
    made: tuple[dict[str, None], Sequence[int], list[tuple[int, ...]] | _RowsOf, bool],
    sizes: Mapping[str, int],
) -> Iterator[str]:
    names, ids, rows, errors = made
    if not names:
        yield "[]"
        return
    tool_heads = [',"tool":' + _dumps(tool) + ',"runs":' for tool in names]
    # a case's rows after its id follow from its runs' count values, in order: cases
    # whose runs have the same ones (most, where every run calls the same tools) share
    # them (the same objects: `Store.summaries` gives equal counts one; 1 and 1.0 differ)
    tails_of: dict[tuple[int, ...], list[str]] = {}
    out: list[str] = []
    opening = "["
    start = 0
    for case, size in sizes.items():
        end = start + size
        values = tuple(ids[start:end])
        tails = tails_of.get(values)
        if tails is None:
            tails = tails_of[values] = _tool_tails(rows[start:end], tool_heads, errors)
        head = '{"case":' + encode_basestring(case)
        out.extend([head + tail for tail in tails])
        start = end
        if len(out) >= CHUNK:
            yield opening + ",".join(out)
            opening = ","
            out.clear()
            tails_of.clear()  # what a few thousand rows share, not every case's
    yield (opening + ",".join(out) + "]") if out or opening == "[" else "]"


def _tool_tails(case_rows: list[tuple[Any, ...]], tool_heads: list[str], errors: bool) -> list[str]:
    """Each tool's row of a case, after the case's id, from its runs' rows of calls then
    errors per tool (`tool_dicts`' row of a case and tool)."""
    size = len(case_rows)
    width = len(tool_heads)
    per_tool = list(zip(*case_rows, strict=True))  # calls..., errors...
    runs_text = _number(size)
    tails = []
    for n, tool_head in enumerate(tool_heads):
        calls = per_tool[n]
        tails.append(
            f'{tool_head}{runs_text},"runs_calling":{size - calls.count(0)},'
            f'"calls_per_run":{_dumps(calls)},'
            f'"errors":{_number(sum(per_tool[width + n])) if errors else 0}}}'
        )
    return tails


def _number(value: Any) -> str:
    """An int as to_json writes it (its repr); any other value through to_json."""
    return repr(value) if type(value) is int else _dumps(value)
