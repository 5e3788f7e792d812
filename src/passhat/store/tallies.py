"""Per-case totals of an experiment's runs counted in SQL (`Store.tallies`): what the
terminal report of a large experiment reads instead of every run's row.

The totals come from the covering index `run_summaries_cases` (a report's columns of
every run, without the per-item results that are most of a row), the cases with
graded items from `run_summaries_ungraded` (the runs without), the errored runs from
`run_summaries_errored`. The store still computes nothing a report shows: it counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, NamedTuple

from passhat.errors import StoreError
from passhat.records import RunSummary
from passhat.store.columns import decode as _decode
from passhat.store.reads import _Reads, _summaries_of


class CaseTally(NamedTuple):
    """The runs of one case, counted."""

    case_id: str
    runs: int
    passed: int
    failed: int
    first: int
    """The smallest run index recorded."""
    last: int
    """The largest."""
    input_tokens: int
    output_tokens: int
    replayed: int
    """Runs whose model answers came from a cassette."""
    retried: bool
    """Some run is not a first attempt."""
    model_calls: bool
    """Some run got a model answer (it has a model source or used tokens)."""
    limited: int
    """Counted runs a limit stopped."""

    @property
    def gapless(self) -> bool:
        """The case's runs are 1 to `runs`, none missing between."""
        return self.first == 1 and self.last == self.runs


@dataclass(frozen=True)
class Tallies:
    """What `Store.tallies` counts of an experiment's runs."""

    cases: list[CaseTally]
    """Each case with a run, by case id."""
    indices: dict[str, list[int]]
    """The run indices of the cases that are not `gapless`, ascending."""
    graded: list[str]
    """Cases with a counted run that has per-item results, by case id."""
    errored: list[RunSummary]
    """The errored runs, by case and index (their per-item results unread); none read
    with `tallies(errored_runs=False)`."""
    errored_at: dict[str, list[int]]
    """Per case with an errored run, their run indices, ascending."""
    tool_counts: list[tuple[dict[str, tuple[int, int]], int]]
    """Each distinct tool-count value and how many runs have it, in the order of the run
    that first has it."""
    limited: dict[str, list[int]]
    """Per case, the counted runs a limit stopped (cases in order)."""
    retried: tuple[tuple[int, int, int, int], tuple[int, int, int]] | None
    """When some run is not a first attempt: (runs, earlier attempts, counted, passed) of
    the runs that are not, and (runs, counted, passed) of the first attempts."""


_CASES = """
    SELECT case_id, count(*), count(*) FILTER (WHERE status = 'passed'),
        count(*) FILTER (WHERE status = 'failed'), min(run_index), max(run_index),
        total(input_tokens), total(output_tokens),
        count(*) FILTER (WHERE model_source = 'replayed'),
        count(*) FILTER (WHERE attempt != 1) > 0,
        count(*) FILTER (WHERE model_source IS NOT NULL OR input_tokens != 0) > 0,
        count(*) FILTER (WHERE error_type = 'limit' AND status != 'errored')
    FROM run_summaries INDEXED BY run_summaries_cases WHERE experiment_id = ?
    GROUP BY case_id ORDER BY {case_order}
"""
"""Per case with a run: its totals (`CaseTally`), by case id. Token counts are summed as
`total` (a float) and turned back into integers: `sum` of integers that overflow
raises; `total` is exact below 2**53. `case_order`: `case_id`, or `+case_id` (sorted in
a temporary b-tree, not in the index's order: SQLite counts every case in its first
step, before it hands over a row; `_Tallies.tallies`)."""

_UNGRADED = """
    SELECT case_id, count(*) FROM run_summaries INDEXED BY run_summaries_ungraded
    WHERE experiment_id = ? AND (status = 'errored' OR items = '[]')
    GROUP BY case_id ORDER BY {case_order}
"""
"""Per case, its runs errored or without per-item results (ordered as `_CASES` is)."""

_ERRORED_AT = """
    SELECT case_id, run_index FROM run_summaries INDEXED BY run_summaries_errored
    WHERE experiment_id = ? AND status = 'errored' ORDER BY case_id, run_index
"""
"""The case and index of each errored run (`tallies(errored_runs=False)`)."""

_TOOL_COUNTS = """
    SELECT g.tool_counts, g.n, g.c, (
        SELECT min(s.run_index) FROM run_summaries AS s INDEXED BY run_summaries_cases
        WHERE s.experiment_id = ?1 AND s.case_id = g.c AND s.tool_counts = g.tool_counts)
    FROM (
        SELECT tool_counts, count(*) AS n, min(case_id) AS c
        FROM run_summaries INDEXED BY run_summaries_cases WHERE experiment_id = ?1
        GROUP BY tool_counts
    ) AS g
"""
"""Each distinct tool-count text, its runs, and the (case, index) of the first run that
has it."""


class _Tallies(_Reads):
    """Per-case totals of an experiment's runs (`Store.tallies`)."""

    def tallies(
        self,
        experiment_id: str,
        *,
        parts: bool = True,
        meanwhile: AbstractContextManager[Callable[[], bool]] | None = None,
        errored_runs: bool = True,
    ) -> Tallies | None:
        """The runs of `experiment_id` counted per case in SQL, or None when some run's
        per-item results or tool counts are damaged (read the runs themselves:
        `Store.summaries` names the run). With `parts=False`, neither the tool-count
        values nor the cases with graded items are counted (`tool_counts` and `graded`
        are empty): what a reader of every run afterwards needs
        (`passhat.report.json_stream`, which reads the tool counts: `Store.run_numbers`).
        With `errored_runs=False`, the errored runs' case and index alone are read
        (`errored_at`, `errored` is empty): what an accounting needs (`passhat compare`;
        their rows as `RunSummary` took 25-45 ms of 5,000 errored runs).

        `meanwhile` (another thread's imports: `passhat._lazy.imported_meanwhile`, which
        gives a call saying whether that thread still works) is held while SQLite
        counts, and left before a row is taken into Python. While the thread works,
        each query groups and sorts all its rows in its first step, the GIL let go, so
        the two run side by side (rows taken meanwhile wait for the GIL one at a time:
        at 100,000 runs the 10,000 cases' rows took 87 ms, not 40); once it is done,
        they are read in the index's order, not sorted (at 1,000,000 runs the tool
        counts' grouping alone outlasts the imports, and sorting the cases and errored
        runs cost 56 ms more)."""
        db = self._db
        with meanwhile or nullcontext(_idle) as busy:
            damaged = db.execute(
                "SELECT 1 FROM run_summaries INDEXED BY run_summaries_damaged "
                "WHERE experiment_id = ? AND substr(items, 1, 1) != '[' LIMIT 1",
                (experiment_id,),
            ).fetchone()
            if damaged is not None:
                return None
            tool_rows = db.execute(_TOOL_COUNTS, (experiment_id,)) if parts else ()
            case_rows = db.execute(_CASES.format(case_order=_order(busy)), (experiment_id,))
            errored = (
                self._summary_rows(experiment_id, read_items=False, errored_only=True, sort=busy())
                if errored_runs
                else db.execute(_ERRORED_AT, (experiment_id,))
            )
            ungraded = (
                db.execute(_UNGRADED.format(case_order=_order(busy)), (experiment_id,))
                if parts
                else ()
            )
        tools = _tool_counts(tool_rows)
        if tools is None:
            return None
        cases = [
            CaseTally(c, n, p, f, lo, hi, int(i), int(o), r, bool(a), bool(m), lim)
            for c, n, p, f, lo, hi, i, o, r, a, m, lim in case_rows
        ]
        holed = [c.case_id for c in cases if not c.gapless]
        runs = _summaries_of(errored, decode_items=False, read_items=False) if errored_runs else []
        errored_at: dict[str, list[int]] = {}
        at = ((r.case_id, r.run_index) for r in runs) if errored_runs else errored
        for case, index in at:
            errored_at.setdefault(case, []).append(index)
        return Tallies(
            cases=cases,
            indices=self._indices(experiment_id, holed) if holed else {},
            graded=_graded(ungraded, cases) if parts else [],
            errored=runs,
            errored_at=errored_at,
            tool_counts=tools,
            limited=self._limited(experiment_id) if any(c.limited for c in cases) else {},
            retried=self._retried(experiment_id) if any(c.retried for c in cases) else None,
        )

    def whole_tokens(self, experiment_id: str) -> bool:
        """Every run's token counts are integers: what `tallies` sums exactly (a real
        number or text written by hand is read run by run, `Store.tokens` naming the run).
        Not a column of `tallies`' count per case: the report, which reads none of it,
        would pay it (20 ms at 100,000 runs)."""
        row = self._db.execute(
            "SELECT 1 FROM run_summaries INDEXED BY run_summaries_cases WHERE experiment_id = ? "
            "AND (typeof(input_tokens) != 'integer' OR typeof(output_tokens) != 'integer') LIMIT 1",
            (experiment_id,),
        ).fetchone()
        return row is None

    def _indices(self, experiment_id: str, cases: Sequence[str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {case: [] for case in cases}
        for start in range(0, len(cases), 500):  # SQLite's limit of bound values
            chunk = cases[start : start + 500]
            rows = self._db.execute(
                "SELECT case_id, run_index FROM run_summaries INDEXED BY run_summaries_cases "
                f"WHERE experiment_id = ? AND case_id IN ({', '.join('?' for _ in chunk)}) "
                "ORDER BY case_id, run_index",
                [experiment_id, *chunk],
            )
            for case, index in rows:
                out[case].append(index)
        return out

    def _limited(self, experiment_id: str) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        rows = self._db.execute(
            "SELECT case_id, run_index FROM run_summaries INDEXED BY run_summaries_cases "
            "WHERE experiment_id = ? AND error_type = 'limit' AND status != 'errored' "
            "ORDER BY case_id, run_index",
            (experiment_id,),
        )
        for case, index in rows:
            out.setdefault(case, []).append(index)
        return out

    def _retried(
        self, experiment_id: str
    ) -> tuple[tuple[int, int, int, int], tuple[int, int, int]]:
        again, earlier, again_counted, again_passed, first, counted, passed = self._db.execute(
            "SELECT count(*) FILTER (WHERE attempt > 1), "
            "total(attempt - 1) FILTER (WHERE attempt > 1), "
            "count(*) FILTER (WHERE attempt > 1 AND status != 'errored'), "
            "count(*) FILTER (WHERE attempt > 1 AND status = 'passed'), "
            "count(*) FILTER (WHERE attempt = 1), "
            "count(*) FILTER (WHERE attempt = 1 AND status != 'errored'), "
            "count(*) FILTER (WHERE attempt = 1 AND status = 'passed') "
            "FROM run_summaries INDEXED BY run_summaries_cases WHERE experiment_id = ?",
            (experiment_id,),
        ).fetchone()
        return (again, int(earlier), again_counted, again_passed), (first, counted, passed)


def _tool_counts(
    rows: Iterable[tuple[Any, ...]],
) -> list[tuple[dict[str, tuple[int, int]], int]] | None:
    """`Tallies.tool_counts` of `_TOOL_COUNTS`'s rows (None: a value is damaged)."""
    out = []
    for text, runs, _, _ in sorted(rows, key=lambda row: (row[2], row[3])):
        try:
            raw = _decode(text or "{}", "tool counts")
            out.append(({name: (n, e) for name, (n, e) in raw.items()}, runs))
        except (StoreError, TypeError, ValueError, AttributeError):  # damaged: said by
            # Store.summaries, which names the run
            return None
    return out


def _graded(ungraded: Iterable[tuple[Any, ...]], cases: Sequence[CaseTally]) -> list[str]:
    """The cases with a counted run that has per-item results: those with more runs than
    runs errored or without items (`_UNGRADED`'s rows: the index holds these alone,
    usually few)."""
    counts = dict(ungraded)
    return [c.case_id for c in cases if c.runs > counts.get(c.case_id, 0)]


def _idle() -> bool:
    return False


def _order(busy: Callable[[], bool]) -> str:
    """`case_id`, or `+case_id` (sorted: counted in the first step) while `busy()`."""
    return "+case_id" if busy() else "case_id"
