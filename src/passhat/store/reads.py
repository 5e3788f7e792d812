"""Reading the store: experiments by id, name or `latest`, runs whole or light, the
summaries a report reads (items and tool counts computed in SQL), single columns, and
LazyItems (a run's items decoded only when asked). A damaged column is named, not
skipped.
"""

from __future__ import annotations

import functools
import sqlite3
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, NamedTuple, NoReturn, overload

from passhat._gc import without_gc
from passhat.errors import StoreError
from passhat.records import ExperimentRecord, RunJson, RunRecord, RunSummary, is_set_detail
from passhat.store import columns as _columns
from passhat.store.columns import _EXPERIMENT_JSON, _RUN_COLUMNS, _RUN_JSON, _encode
from passhat.store.columns import decode as _decode
from passhat.store.connection import _Connection

_SUMMARY = (
    "case_id, run_index, status, error_type, error_message, duration_s, input_tokens, "
    "output_tokens, model_source, attempt, traceback, items, tool_counts"
)
"""The columns a report reads (`Store.summaries`): no transcript, score or tool call."""

_SUMMARY_ITEMS_UNREAD = _SUMMARY.replace(
    " items,",
    " CASE WHEN items = '[]' THEN 1 WHEN substr(items, 1, 1) = '[' THEN 0 ELSE items END,",
)
"""`_SUMMARY` with the items' text left unread: 1 when a run has none, 0 when it has
some, and the text itself when it is not a list (damaged: said as it is read)."""


_RUN_LIGHT = (
    "experiment_id, case_id, run_index, case_hash, status, error_type, error_message, "
    "score, tool_calls, started_at, duration_s, input_tokens, output_tokens, seed, retries, "
    "model_source, attempt, traceback"
)


_GRADED_ON = (
    "experiment_id, case_id, run_index, case_hash, status, error_type, error_message, "
    "final_state, score, seed"
)
"""What a regrade reads of a run (`Store.graded`): no transcript, output or tool call."""


_RUN_FIELDS = frozenset(_RUN_COLUMNS)
"""The columns of `runs` (`Store.columns` reads no other name)."""


_ABANDONED_RETRIES = (
    "SELECT COUNT(*) FROM runs, json_each(runs.retries) WHERE runs.experiment_id = ? "
    "AND runs.retries != '[]' AND json_extract(json_each.value, '$.abandoned')"
)
"""Model calls retried after --call-timeout gave them up, in an experiment's runs: read
from the runs with retries alone (the partial index runs_retried), not every run's row."""


_GAVE_UP_TEXT = ": no response within "
"""What the message of a model call given up at --call-timeout holds."""
_GAVE_UP = (
    "SELECT COUNT(*) FROM {source} WHERE experiment_id = ? AND status = 'errored' "
    f"AND error_type = 'model_error' AND error_message LIKE '%{_GAVE_UP_TEXT}%'"
)
"""Runs (or earlier attempts) that errored on a model call given up at --call-timeout."""

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
"""SQLite's LIKE folds the case of ASCII letters alone."""


def gave_up(runs: Iterable[RunRecord | RunSummary]) -> int:
    """How many of `runs` `_GAVE_UP` counts: errored on a model call given up."""
    return sum(
        1
        for run in runs
        if run.status == "errored"
        and run.error_type == "model_error"
        and run.error_message is not None
        and _GAVE_UP_TEXT in run.error_message.translate(_ASCII_LOWER)
    )


NUMBERS_CHUNK = 8192
"""Rows `Store.run_numbers` reads at a time."""

_UNSET = object()
"""Equal to no column value (a row's NULL is None)."""


@functools.cache
def _from_json() -> Callable[[str], Any]:
    """pydantic-core's JSON reader, imported when first wanted (not at start-up: a
    report that fails early loads no pydantic), once (an import statement in a method
    called once per run cost 2 % of `report --json`)."""
    from pydantic_core import from_json

    return from_json


class _FirstRun:
    """What a `LazyItems` of `Store.counted_items` is named should its text be damaged: the
    first run of the stretch read that has the text ("items of run 3 of 'c'", as
    `_items` names it), found then."""

    __slots__ = ("indices", "sizes", "texts")

    def __init__(self, indices: list[int], texts: list[str], sizes: dict[str, int]) -> None:
        self.indices = indices
        self.texts = texts
        self.sizes = sizes

    def __call__(self, text: str) -> str:
        at = self.texts.index(text)
        case = list(self.sizes)[bisect_right(list(accumulate(self.sizes.values())), at)]
        return f"items of run {self.indices[at]} of {case!r}"


def _named(what: str | _FirstRun, text: str) -> str:
    return what if isinstance(what, str) else what(text)


class LazyItems(Sequence[dict[str, Any]]):
    """A run's per-item results as the store keeps them (JSON text), decoded the first
    time they are read (`Store.summaries(decode_items=False)`). Empty exactly when the
    text is `[]`, which is what the store writes for a run without graded items: telling
    whether a run has items decodes nothing."""

    __slots__ = ("_items", "_text", "_what")

    def __init__(self, text: str, what: str | _FirstRun) -> None:
        self._text = text
        self._what = what
        self._items: list[dict[str, Any]] | None = None

    def _read(self) -> list[dict[str, Any]]:
        if self._items is None:
            what = _named(self._what, self._text)
            self._items = _columns.set_details(_decode(self._text, what), what)
        return self._items

    def decoded(self) -> list[dict[str, Any]]:
        """The items, decoded now unless already read, and not kept: a reader that reads
        each value once (`report --json`) holds no decoded copy of every run's items.
        Parsed by pydantic-core (a quarter of `json.loads`'s time on these); text it
        refuses (an escaped lone surrogate) goes to `json.loads`, and so does text that
        is not JSON, for the damaged store's message."""
        if self._items is not None:
            return self._items
        try:
            decoded: list[dict[str, Any]] = _from_json()(self._text)
        except ValueError:
            decoded = _decode(self._text, _named(self._what, self._text))
        if type(decoded) is list and all(map(is_set_detail, decoded)):  # the usual: as it is
            return decoded
        return _columns.set_details(decoded, functools.partial(_named, self._what, self._text))

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._read()[index]

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._read())

    def __bool__(self) -> bool:
        return self._text != "[]"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyItems):
            other = other._read()
        return isinstance(other, list) and self._read() == other

    __hash__ = None  # type: ignore[assignment]  # equal to a list, which has no hash

    def __repr__(self) -> str:
        return repr(self._read())


class _UnreadItems(Sequence[dict[str, Any]]):
    """A run's per-item results when `Store.summaries(read_items=False)` left them
    unread and the run has some: true, and nothing else; reading them is a mistake of
    the caller's, said at once (read the run again with `summaries(cases=...)`)."""

    __slots__ = ()

    def _unread(self) -> NoReturn:
        raise TypeError("per-item results not read: Store.summaries(read_items=False)")

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        self._unread()

    def __len__(self) -> int:
        self._unread()

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "UNREAD"


UNREAD = _UnreadItems()
"""The per-item results of a run that has some, not read (`Store.summaries`)."""


def _run_json_checked(row: Sequence[Any]) -> RunJson:
    """A `Store.runs_json` row with a column SQLite found not valid JSON: decoded as
    `_run` decodes it (a damaged column is a StoreError) and written again."""
    where = f"run {row[1]} of case {row[0]!r}"
    columns = [
        _encode(_decode(text.decode("utf-8", "replace"), f"{key} of {where}")).encode("utf-8")
        for key, text in zip(_RUN_JSON, row[7:-1], strict=True)
    ]
    return RunJson(*row[:7], *columns)


def tool_counts_of(text: str | None, index: int, case_id: str) -> dict[str, tuple[int, int]]:
    """A run's tool counts from their stored text: {tool: (calls, errors)}."""
    raw = _decode(text or "{}", f"tool counts of run {index} of {case_id!r}")
    return {name: (n, e) for name, (n, e) in raw.items()}


def _items(text: str | None, index: int, case_id: str) -> Sequence[dict[str, Any]]:
    """A run's per-item results from their stored text, as `Store.summaries(decode_items=
    False)` reads them: `LazyItems`, but `[]` (none) decoded at once, and text that is not
    a list said at once (damaged)."""
    what = f"items of run {index} of {case_id!r}"
    if not text or text == "[]" or text[0] != "[":
        return _columns.set_details(_decode(text or "[]", what), what)
    return LazyItems(text, what)


def _experiment(
    row: sqlite3.Row,
    case_k: dict[str, int] | None = None,
    adaptive: Sequence[dict[str, Any]] | None = None,
) -> ExperimentRecord:
    data: dict[str, Any] = dict(row)
    data["case_k"] = case_k or {}
    data["adaptive"] = tuple(adaptive or ())
    for key in _EXPERIMENT_JSON:
        data[key] = _decode(data[key], f"experiment {data.get('id')} {key}")
    _columns.check_shapes(data, f"experiment {data.get('id')}", _columns._EXPERIMENT_SHAPES)
    data["case_ids"] = tuple(data["case_ids"])
    data["tools"] = tuple(data["tools"])
    return ExperimentRecord(**data)


def _run(row: sqlite3.Row, decoded: dict[str, dict[Any, Any]] | None = None) -> RunRecord:
    """A run from its row. With `decoded` (per column, stored text to its value), a JSON
    text met before is not decoded again: those runs share one value."""
    data: dict[str, Any] = dict(row)
    for key in _RUN_JSON:
        if key in data:
            text = data[key]
            seen = decoded.setdefault(key, {}) if decoded is not None else None
            if seen is not None and text in seen:
                data[key] = seen[text]
                continue
            where = f"run {data.get('run_index')} of case {data.get('case_id')!r}"
            data[key] = _decode(text, f"{key} of {where}")
            if seen is not None:
                seen[text] = data[key]
    _columns.check_numbers(data)
    where = f"run {data.get('run_index')} of case {data.get('case_id')!r}"
    _columns.check_shapes(data, where, _columns._RUN_SHAPES)
    if "transcript" in data:
        _columns.check_messages(data["transcript"], where)
    return RunRecord(**data)


class RunNumbers(NamedTuple):
    """What `Store.run_numbers` reads of every run, by case and index."""

    indices: array[int]
    tokens_in: array[int]
    tokens_out: array[int]
    keys: array[int]
    """The key of each run's tool counts in `counts`."""
    counts: dict[int, dict[str, tuple[int, int]]]
    """Each distinct tool-count value by key: {tool: (calls, errors)}."""


def _put(column: array[int], at: slice, values: Sequence[int]) -> array[int]:
    """`column` with `values` at `at`: the same array, or, when a value does not fit in its
    4 bytes (a count of 2**31 or more), a copy of it at 8 bytes a value."""
    try:
        column[at] = array(column.typecode, values)
    except OverflowError:
        column = array("q", column)
        column[at] = array("q", values)
    return column


class _Reads(_Connection):
    """Experiments and runs read back; the store computes nothing."""

    def adaptive(self, experiment_id: str) -> list[dict[str, Any]]:
        """The adaptive rounds' records of an experiment, oldest first."""
        rows = self._db.execute(
            "SELECT seq, record FROM adaptive_records WHERE experiment_id = ? ORDER BY seq",
            (experiment_id,),
        )
        return [
            _decode(r["record"], f"adaptive record {r['seq']} of {experiment_id}") for r in rows
        ]

    def experiments(self) -> list[ExperimentRecord]:
        """All experiments, oldest first."""
        rows = self._db.execute("SELECT * FROM experiments ORDER BY created_at, rowid")
        held: dict[str, dict[str, int]] = {}
        for r in self._db.execute("SELECT experiment_id, case_id, k_requested FROM case_k"):
            held.setdefault(r[0], {})[r[1]] = r[2]
        rounds: dict[str, list[dict[str, Any]]] = {}
        for r in self._db.execute("SELECT experiment_id FROM adaptive_records"):
            rounds.setdefault(r[0], [])
        for experiment_id in rounds:
            rounds[experiment_id] = self.adaptive(experiment_id)
        return [_experiment(row, held.get(row["id"]), rounds.get(row["id"])) for row in rows]

    def _loaded(self, row: sqlite3.Row) -> ExperimentRecord:
        """An experiment with the runs asked of each case and its adaptive records."""
        rows = self._db.execute(
            "SELECT case_id, k_requested FROM case_k WHERE experiment_id = ?", (row["id"],)
        )
        return _experiment(row, {r[0]: r[1] for r in rows}, self.adaptive(row["id"]))

    def experiment(self, ref: str) -> ExperimentRecord:
        """An experiment by id, unique name, or `latest`."""
        if ref == "latest":
            row = self._db.execute(
                "SELECT * FROM experiments ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: no experiment yet; start one with `passhat run`")
            return self._loaded(row)
        row = self._db.execute(  # a ref no UTF-8 holds (argv's \xff): escaped, as stored
            "SELECT * FROM experiments WHERE id = ? OR name = ?", (_columns._safe_text(ref),) * 2
        ).fetchone()
        if row is None:
            known = ", ".join(e.name or e.id for e in self.experiments()[-5:]) or "none"
            raise StoreError(
                f"{self.path}: no experiment {ref!r}; give an id, a name or 'latest' "
                f"(recent: {known}; `passhat list` shows all)"
            )
        return self._loaded(row)

    def runs(
        self, experiment_id: str, *, full: bool = True, cases: Sequence[str] | None = None
    ) -> list[RunRecord]:
        """The runs of an experiment by case and index; `full=False` skips the heavy columns;
        `cases` keeps the runs of those cases only (an HTML page's worth)."""
        return self._runs("*" if full else _RUN_LIGHT, experiment_id, cases)

    def graded(self, experiment_id: str, cases: Sequence[str]) -> list[RunRecord]:
        """The runs of `cases` by case and index with what a regrade reads of them: case,
        index, case hash, verdict, error, final state, score and seed (every other field
        left at its default; `add_experiment_with_copies` copies those as stored).

        Runs whose final state (or score) is stored as the same text share one decoded
        value (a case's runs often end alike: at 10,000 cases x 10 of copied runs a
        fifth of a regrade's Python time was decoding them): read it, never change it."""
        return self._runs(_GRADED_ON, experiment_id, cases, shared=True)

    def _runs(
        self,
        columns: str,
        experiment_id: str,
        cases: Sequence[str] | None,
        *,
        shared: bool = False,
    ) -> list[RunRecord]:
        where, args = "experiment_id = ?", [experiment_id]
        if cases is not None:
            where += f" AND case_id IN ({', '.join('?' for _ in cases)})"
            args.extend(cases)
        rows = self._db.execute(
            f"SELECT {columns} FROM runs WHERE {where} ORDER BY case_id, run_index", args
        )
        decoded: dict[str, dict[Any, Any]] | None = {} if shared else None
        return [_run(row, decoded) for row in rows]

    def runs_json(self, experiment_id: str, cases: Sequence[str]) -> list[RunJson]:
        """The runs of `cases` by case and index with their JSON columns as stored (UTF-8,
        not decoded; an HTML page's worth of run detail). A column SQLite does not find
        valid JSON is read as `runs` reads it: damaged, it is named the same way."""
        valid = " AND ".join(f"json_valid({c})" for c in _RUN_JSON)
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT case_id, run_index, status, duration_s, input_tokens, output_tokens, seed, "
            f"{', '.join(f'CAST({c} AS BLOB)' for c in _RUN_JSON)}, {valid} FROM runs "
            f"WHERE experiment_id = ? AND case_id IN ({', '.join('?' for _ in cases)}) "
            "ORDER BY case_id, run_index",
            [experiment_id, *cases],
        )
        return [RunJson(*row[:-1]) if row[-1] else _run_json_checked(row) for row in rows]

    def summaries(
        self,
        experiment_id: str,
        *,
        decode_items: bool = True,
        read_items: bool = True,
        cases: Sequence[str] | None = None,
        errored_only: bool = False,
    ) -> list[RunSummary]:
        """What a report needs of every run (of `cases` only, when given), by case and
        index: the small columns only.

        Runs with the same per-item results or tool counts share one decoded value
        (most runs of a case do), so 100,000 runs cost about one scan of the columns.
        With `decode_items=False` the per-item results are `LazyItems`, decoded when
        first read (at 100,000 runs of cases with their own items: 22,000 decodes,
        0.1 s). With `read_items=False` they are not even read: a run's are `[]` or
        `UNREAD` (it has some), and the terminal report reads those of the cases it
        lists with `cases` (at 100,000 runs the items are 23 MB of text of the 30 MB
        the summaries hold). Damaged items are said either way. With `errored_only`,
        the errored runs alone (from the index that holds them)."""
        rows = self._summary_rows(
            experiment_id, read_items=read_items, cases=cases, errored_only=errored_only
        )
        return _summaries_of(rows, decode_items=decode_items, read_items=read_items)

    def _summary_rows(
        self,
        experiment_id: str,
        *,
        read_items: bool = True,
        cases: Sequence[str] | None = None,
        errored_only: bool = False,
        sort: bool = False,
    ) -> Iterator[tuple[Any, ...]]:
        """The rows `summaries` reads, the query begun. With `errored_only` and `sort`,
        SQLite finds and sorts them all in its first step, before any row is handed
        over (`Store.tallies` begins it while another thread imports)."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        columns = _SUMMARY if read_items else _SUMMARY_ITEMS_UNREAD
        where, args = "experiment_id = ?", [experiment_id]
        if cases is not None:
            where += f" AND case_id IN ({', '.join('?' for _ in cases)})"
            args += list(cases)
        source, order = "run_summaries", "case_id, run_index"
        if errored_only:  # the index of errored runs (the planner would scan them all)
            source += " INDEXED BY run_summaries_errored"
            where += " AND status = 'errored'"
            if sort:  # in a temporary b-tree (`+`: not in the index's order, row by row)
                order = "+case_id, run_index"
        return cursor.execute(
            f"SELECT {columns} FROM {source} WHERE {where} ORDER BY {order}", args
        )

    def counted_items(
        self, experiment_id: str, counted: Sequence[tuple[str, int]]
    ) -> Iterator[tuple[str, list[int], list[Sequence[dict[str, Any]]]]]:
        """The counted (not errored) runs of the cases of `counted` (each case id, in the
        store's order, with its count of counted runs), case by case: (case id, their run
        indices, rising, and their per-item results as `summaries(decode_items=False)`
        gives them: runs with the same text share one value). Two columns of a run, read
        from the first case to the last, both included (one range of the table): no case
        id, each run's is known from the counts (should they not add up, the case ids are
        read). `report --json`'s items of a stretch of cases (`passhat.report.json_stream`)."""
        if not counted:
            return
        cursor = self._db.cursor()
        cursor.row_factory = None
        where = "experiment_id = ? AND case_id BETWEEN ? AND ? AND status != 'errored'"
        span = (experiment_id, counted[0][0], counted[-1][0])
        rows = cursor.execute(
            f"SELECT run_index, items FROM run_summaries WHERE {where} ORDER BY case_id, run_index",
            span,
        ).fetchall()
        sizes: dict[str, int] = dict(counted)
        if sum(sizes.values()) != len(rows) or len(sizes) != len(counted):
            cases_of = cursor.execute(
                f"SELECT case_id FROM run_summaries WHERE {where} ORDER BY case_id, run_index",
                span,
            ).fetchall()
            sizes = Counter([case for (case,) in cases_of])
        if not rows:
            return
        indices, texts = map(list, zip(*rows, strict=True))
        del rows
        # each distinct text read once (as `_items` reads it), named after the first run
        # that has it only should it be damaged: 22,400 names made at 100,000 runs of
        # 10,000 cases were 15 % of this read
        first_run = _FirstRun(indices, texts, sizes)
        shared: dict[str, Sequence[dict[str, Any]]] = {
            text: LazyItems(text, first_run)
            if text and text != "[]" and text[0] == "["
            else _columns.set_details(_decode(text or "[]", first_run(text)), first_run(text))
            for text in dict.fromkeys(texts)
        }
        values = list(map(shared.__getitem__, texts))
        start = 0
        for case, size in sizes.items():  # by case: one stretch each
            end = start + size
            yield case, indices[start:end], values[start:end]
            start = end

    def run_numbers(self, experiment_id: str, runs: Sequence[tuple[str, int]]) -> RunNumbers | None:
        """Every run's index, input and output tokens and the key of its tool counts, by
        case and index, from the covering index `run_summaries_cases` (no per-item
        results), as arrays of 4 bytes a run where the values fit (`_put`); each distinct
        tool-count value once, keys in the order runs first have them, decoded as
        `summaries` decodes them (damaged: said now, naming the first run that has it).
        `runs`: each case id in the store's order with its count of runs, as counted in
        the same snapshot (`Store.tallies`). `report --json`'s tools and tokens
        (`passhat.report.json_stream`).

        None when a case id is not text, a run index or token count not an integer, or
        tool counts not an object (as `passhat run` writes none of them; a hand-edited
        store may hold them): the caller then reads the runs' summaries, which take any."""
        if not all(type(case) is str for case, _ in runs):
            return None
        total = sum(n for _, n in runs)
        # made at their whole size at once: grown, each would be copied, twice held
        indices, tokens_in, tokens_out = (array("i", [0]) * total for _ in range(3))
        keys = array("I", [0]) * total
        counts: dict[int, dict[str, tuple[int, int]]] = {}  # each distinct value, by key
        key_of: dict[str, int] = {}  # the key of each stored text
        ends = list(accumulate(n for _, n in runs))  # where each case's runs end
        cursor = self._db.cursor()
        cursor.row_factory = None
        cursor.execute(
            "SELECT run_index, input_tokens, output_tokens, tool_counts "
            "FROM run_summaries INDEXED BY run_summaries_cases WHERE experiment_id = ? "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )
        start = 0
        while rows := cursor.fetchmany(NUMBERS_CHUNK):
            index, used_in, used_out, texts = zip(*rows, strict=True)
            if new := [text for text in dict.fromkeys(texts) if text not in key_of]:
                if not all(type(text) is str and text[:1] == "{" for text in new):
                    return None
                firsts = dict(zip(reversed(texts), range(len(texts) - 1, -1, -1), strict=True))
                for text in new:
                    first = firsts[text]
                    case = runs[bisect_right(ends, start + first)][0]
                    counts[len(key_of)] = tool_counts_of(text, index[first], case)
                    key_of[text] = len(key_of)
            at = slice(start, start + len(rows))
            start = at.stop
            try:
                indices = _put(indices, at, index)
                tokens_in = _put(tokens_in, at, used_in)
                tokens_out = _put(tokens_out, at, used_out)
            except TypeError:  # not an integer (a float, text, NULL)
                return None
            keys[at] = array("I", map(key_of.__getitem__, texts))
        for column in (indices, tokens_in, tokens_out, keys):  # as many as were read
            del column[start:]
        return RunNumbers(indices, tokens_in, tokens_out, keys, counts)

    def statuses(self, experiment_id: str) -> Iterator[tuple[str, int, str]]:
        """(case, run index, status) of every run, streamed: accounting in flat memory."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT case_id, run_index, status FROM run_summaries WHERE experiment_id = ? "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )
        names: dict[str, str] = {}  # one string per case and status, not one per row
        for case_id, index, status in rows:
            yield names.setdefault(case_id, case_id), index, names.setdefault(status, status)

    def columns(self, experiment_id: str, names: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """The `names` columns of every run as stored (a JSON column as its text), streamed
        by case and index: a reader of a few columns of 100,000 runs (an export) decodes
        only those, one row at a time, never a transcript it does not show."""
        unknown = [name for name in names if name not in _RUN_FIELDS]
        if unknown or not names:
            raise ValueError(f"runs have no column {unknown or names!r}")
        cursor = self._db.cursor()
        cursor.row_factory = None
        yield from cursor.execute(
            f"SELECT {', '.join(names)} FROM runs WHERE experiment_id = ? "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )

    def tokens(self, experiment_id: str) -> Iterator[tuple[int, int]]:
        """(input tokens, output tokens) of every run, streamed: `usage_of` in flat memory."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        if bad := cursor.execute(_columns.TEXT_TOKENS, (experiment_id,)).fetchone():
            raise StoreError(f"the store is damaged: {bad[2]} of run {bad[1]} of case {bad[0]!r}")
        yield from cursor.execute(
            "SELECT input_tokens, output_tokens FROM run_summaries WHERE experiment_id = ?",
            (experiment_id,),
        )

    def replayed(self, experiment_id: str) -> int:
        """How many runs' model answers were replayed from a cassette (not live)."""
        row = self._db.execute(
            "SELECT count(*) FROM run_summaries WHERE experiment_id = ? "
            "AND model_source = 'replayed'",
            (experiment_id,),
        ).fetchone()
        return int(row[0])

    def run(self, experiment_id: str, case_id: str, run_index: int) -> RunRecord:
        row = self._db.execute(
            "SELECT * FROM runs WHERE experiment_id = ? AND case_id = ? AND run_index = ?",
            (experiment_id, case_id, run_index),
        ).fetchone()
        if row is None:
            raise StoreError(
                f"experiment {experiment_id} has no run {run_index} of case {case_id!r}; "
                "`passhat report` lists the missing runs"
            )
        return _run(row)

    def errored(self, experiment_id: str) -> dict[tuple[str, int], int]:
        """(case, run index) of every errored run, with its attempt number."""
        rows = self._db.execute(
            "SELECT case_id, run_index, attempt FROM runs "
            "WHERE experiment_id = ? AND status = 'errored'",
            (experiment_id,),
        )
        return {(r[0], r[1]): r[2] for r in rows}

    def attempts(self, experiment_id: str) -> list[dict[str, Any]]:
        """The earlier (replaced) attempts of re-run runs: case, run, attempt, status, error."""
        rows = self._db.execute(
            "SELECT case_id, run_index, attempt, status, error_type, error_message, started_at, "
            "duration_s FROM run_attempts WHERE experiment_id = ? "
            "ORDER BY case_id, run_index, attempt",
            (experiment_id,),
        )
        return [dict(r) for r in rows]

    def attempt_tokens(self, experiment_id: str) -> list[tuple[str, int, int, int, int]]:
        """(case, run, attempt, input tokens, output tokens) of every earlier attempt of a
        re-run run (`resume --errored`): tokens billed that the counted runs leave out."""
        rows = self._db.execute(
            "SELECT case_id, run_index, attempt, "
            "COALESCE(json_extract(record, '$.input_tokens'), 0), "
            "COALESCE(json_extract(record, '$.output_tokens'), 0) "
            "FROM run_attempts WHERE experiment_id = ? ORDER BY case_id, run_index, attempt",
            (experiment_id,),
        )
        return [(str(a), int(b), int(c), int(d), int(e)) for a, b, c, d, e in rows]

    def abandoned_calls(
        self, experiment_id: str, runs: Iterable[RunRecord | RunSummary] | None = None
    ) -> int:
        """Model calls given up at --call-timeout (each retried one, and the last of a run
        that then errored): the server may have finished and billed them, unseen.

        `runs`: the experiment's runs as a report read them (every run, or its errored
        ones at least): the counted runs that errored on a call given up are then
        counted from them (`gave_up`), not read again (the errored rows sit apart in a
        large store: 18-22 ms of a report at 100,000 runs, 5,000 of them errored)."""
        retried = self._db.execute(_ABANDONED_RETRIES, (experiment_id,)).fetchone()[0]
        earlier = self._db.execute(  # an earlier attempt keeps its retries as JSON text
            "SELECT COUNT(*) FROM run_attempts, json_each(json_extract(record, '$.retries')) "
            "WHERE experiment_id = ? AND json_extract(json_each.value, '$.abandoned')",
            (experiment_id,),
        ).fetchone()[0]
        sources = ["run_attempts"]
        counted = 0 if runs is None else gave_up(runs)
        if runs is None:  # run_summaries: the errored runs alone (not a scan of them all)
            sources.append("run_summaries INDEXED BY run_summaries_errored")
        last = sum(
            self._db.execute(_GAVE_UP.format(source=source), (experiment_id,)).fetchone()[0]
            for source in sources
        )
        return int(retried) + int(earlier) + int(last) + counted

    def status_counts(self) -> dict[str, dict[str, int]]:
        """Per experiment id, how many recorded runs have each status."""
        # run_summaries, not runs: the same rows (kept by triggers) without the transcripts,
        # so counting a store of 1,000,000 runs does not read gigabytes (`passhat view`)
        rows = self._db.execute(
            "SELECT experiment_id, status, COUNT(*) FROM run_summaries "
            "GROUP BY experiment_id, status"
        )
        counts: dict[str, dict[str, int]] = {}
        for experiment_id, status, n in rows:
            counts.setdefault(experiment_id, {})[status] = n
        return counts

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version`: it changes when another connection commits, so
        a reader (`passhat view`) can tell the store moved without reading it again."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def recorded(
        self, experiment_id: str, cases: Sequence[str] | None = None
    ) -> set[tuple[str, int]]:
        """(case, run index) of every recorded run (of `cases` only, when given)."""
        where, args = "experiment_id = ?", [experiment_id]
        if cases is not None:
            where += f" AND case_id IN ({', '.join('?' for _ in cases)})"
            args.extend(cases)
        rows = self._db.execute(f"SELECT case_id, run_index FROM runs WHERE {where}", args)
        return {(r[0], r[1]) for r in rows}

    def recorded_counts(self, experiment_id: str) -> dict[str, tuple[int, int, int]]:
        """Per case with a recorded run: how many, the lowest and the highest run index
        (counted in SQL: a plan reads the indices of the cases that have gaps only)."""
        rows = self._db.execute(
            "SELECT case_id, count(*), min(run_index), max(run_index) FROM runs "
            "WHERE experiment_id = ? GROUP BY case_id",
            (experiment_id,),
        )
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def recorded_total(self, experiment_id: str) -> int:
        """How many runs of the experiment are recorded."""
        row = self._db.execute(
            "SELECT count(*) FROM runs WHERE experiment_id = ?", (experiment_id,)
        ).fetchone()
        return int(row[0])


@without_gc
def _summaries_of(
    rows: Iterable[tuple[Any, ...]], *, decode_items: bool, read_items: bool
) -> list[RunSummary]:
    """`Store.summaries` of its rows (`_Reads._summary_rows`)."""
    items: dict[str | int | None, Sequence[dict[str, Any]]] = (
        {} if read_items else {1: [], 0: UNREAD}
    )
    tools: dict[str | None, dict[str, tuple[int, int]]] = {}
    interned: dict[str, str] = {}
    sources: dict[str | None, str | None] = {}
    out: list[RunSummary] = []
    append = out.append
    new = tuple.__new__  # RunSummary's own __new__ without a Python frame per run
    # Runs in a row mostly share their case, per-item results and tool counts: a
    # value equal to the row before's is taken from it (comparing two strings costs
    # less than hashing a new one for the dict)
    case: str | None = None
    it_before: object = _UNSET
    tc_before: object = _UNSET
    graded: Sequence[dict[str, Any]] = []
    counts: dict[str, tuple[int, int]] = {}
    for row in rows:
        case_id, index, status, error_type, message, duration, tin, tout, src, n, tb, it, tc = row
        if case_id != case:
            case = interned.setdefault(case_id, case_id)
        if it != it_before:
            it_before = it
            shared = items.get(it)
            if shared is None:
                what = f"items of run {index} of {case_id!r}"
                shared = items[it] = (
                    _columns.set_details(_decode(it or "[]", what), what)
                    if decode_items
                    else _items(it, index, case_id)
                )
            graded = shared
        if tc != tc_before:
            tc_before = tc
            known = tools.get(tc)
            if known is None:
                known = tools[tc] = tool_counts_of(tc, index, case_id)
            counts = known
        append(
            new(
                RunSummary,
                (
                    case,
                    index,
                    interned.setdefault(status, status),  # one string per status
                    sources.setdefault(error_type, error_type),
                    message,
                    duration,
                    tin,
                    tout,
                    sources.setdefault(src, src),
                    n,
                    tb,
                    graded,
                    counts,
                ),
            )
        )
    return out
