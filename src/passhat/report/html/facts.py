"""What a page shows, as view models built from the accounting: columns, rows, the figures
with their intervals, the curves, a case's facts (its runs, items, tool use), the header.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import count, repeat
from operator import attrgetter
from typing import Any, NamedTuple

from markupsafe import Markup, escape

from passhat.accounting import Accounting, CaseAccount
from passhat.analysis import ItemStability, ToolUse, item_stability, tool_profile
from passhat.errors import PasshatError
from passhat.metrics import (
    CASE_RATE_LABEL,
    RATE_LABEL,
    label_at,
    label_hat,
    pass_at_curve,
    pass_hat_curve,
)
from passhat.records import ExperimentRecord, RunJson, RunRecord, RunSummary
from passhat.report.i18n import t, verdict_key
from passhat.report.parts import header_rows
from passhat.stats import DatasetIntervals, Interval, dataset_intervals

CONFIDENCE = 0.95
"""Coverage of the dataset intervals shown beside the figures."""


LIST_LIMIT = 200
"""Missing and errored runs listed in the banner at most (the rest are counted)."""

RunWhole = RunRecord | RunJson
"""A run whose detail a page embeds: a record, or its JSON columns as stored."""
LoadRuns = Callable[[Sequence[str]], Sequence[RunWhole]]
"""Whole runs of the given cases (`Store.runs_json(id, cases)`, or `Store.runs(id,
cases=...)`)."""

_SYMBOL = {"found": "✓", "missed": "✗", "extra": "+", "none": "·"}
_RUN_SYMBOL = {"passed": "✓", "failed": "✗", "errored": "⚠", "missing": "∅"}


# --------------------------------------------------------------------------- view models


@dataclass(frozen=True)
class _Column:
    """One requested run of a case: a grid column and a transcript anchor."""

    index: int
    status: str
    """passed / failed / errored / missing."""
    anchor: str
    run: RunRecord | RunSummary | None

    @property
    def symbol(self) -> str:
        return _RUN_SYMBOL[self.status]


@dataclass(frozen=True)
class _Cell:
    run: int
    state: str
    """found / missed / extra / none (not produced, or no verdict)."""
    run_status: str

    @property
    def counted(self) -> bool:
        return self.run_status in ("passed", "failed")

    @property
    def symbol(self) -> str:
        return _SYMBOL[self.state] if self.counted else "–"


@dataclass(frozen=True)
class _Row:
    stability: ItemStability
    cells: tuple[_Cell, ...]

    @property
    def verdict_key(self) -> str:
        return verdict_key(self.stability.verdict)

    @property
    def cells_html(self) -> Markup:
        """The row's grid cells as the template wrote them cell by cell (`<td data-run=..
        data-cell=..>`): made here, a row at a time (the first page's 100 cases x 10
        runs' cells took a third of the template's CPU at 10,000 x 10)."""
        return Markup(
            "".join([_CELL_HTML[c.state, c.counted, c.run_status] % c.run for c in self.cells])
        )


_CELL_HTML = {
    (state, counted, status): (
        f'<td data-run="%d" data-cell="{state}"'
        + ("" if counted else f' data-status="{status}"')
        + f">{_SYMBOL[state] if counted else '–'}</td>"
    )
    for state in _SYMBOL
    for status, counted in (
        ("passed", True),
        ("failed", True),
        ("errored", False),
        ("missing", False),
    )
}
"""A grid cell's markup by (state, counted, run status), but for its run index (`%d`)."""


@dataclass(frozen=True)
class _ToolRow:
    use: ToolUse
    calls: tuple[int | None, ...]
    """Calls in each requested run; None for a run with no record."""

    @property
    def cells_html(self) -> Markup:
        """The row's cells, one per requested run, as the template wrote them cell by
        cell: the calls (`class="zero"` for none), `–` for a run with no record."""
        return Markup(
            "".join(
                [
                    f'<td data-run="{index}">–</td>'
                    if n is None
                    else f'<td data-run="{index}"{_ZERO if n == 0 else ""}>{escape(n)}</td>'
                    for index, n in enumerate(self.calls, start=1)
                ]
            )
        )


_ZERO = ' class="zero"'


@dataclass
class _CaseView:
    account: CaseAccount
    anchor: str
    columns: list[_Column]
    groups: dict[str, list[_Row]] = field(default_factory=dict)
    """Scorer label -> rows: the expected items, then the extras."""
    tools: list[_ToolRow] = field(default_factory=list)
    why: dict[str, Any] | None = None
    """The divergence tree, item evidence and run pairs (`_why`); first page only."""

    @property
    def verdict_counts(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for rows in self.groups.values():
            for row in rows:
                counts[row.verdict_key] += 1
        return dict(counts)


@dataclass(frozen=True)
class _Figure:
    label: str
    """`pass rate (over runs)`, pass@j or pass^j: what was counted, never the plan's k
    (English: the page's data-metric key)."""
    caption: str
    value: float
    interval: Interval | None
    method: str
    shown: str = ""
    """The label in the page's language."""


@dataclass(frozen=True)
class _Curves:
    n: int
    cases: int
    at: tuple[float, ...]
    hat: tuple[float, ...]
    width: int = 640
    height: int = 260
    left: int = 52
    right: int = 150
    """Room for the legend, right of the plot."""
    top: int = 16
    bottom: int = 44

    def x(self, j: int) -> float:
        span = self.width - self.left - self.right
        return self.left + (span / 2 if self.n == 1 else (j - 1) * span / (self.n - 1))

    def y(self, value: float) -> float:
        return self.top + (1.0 - value) * (self.height - self.top - self.bottom)

    def points(self, values: Sequence[float]) -> str:
        return " ".join(f"{self.x(j):.1f},{self.y(v):.1f}" for j, v in enumerate(values, start=1))

    @property
    def ticks(self) -> list[int]:
        step = max(1, -(-self.n // 10))
        return [j for j in range(1, self.n + 1) if (j - 1) % step == 0 or j == self.n]


# --------------------------------------------------------------------------- building


def _columns(
    account: CaseAccount, anchor: str, runs: dict[int, RunRecord | RunSummary]
) -> list[_Column]:
    columns = []
    for index in range(1, account.k_requested + 1):
        run = runs.get(index)
        status = run.status if run else "missing"
        columns.append(_Column(index, status, f"{anchor}-run{index}", run))
    return columns


def _rows(items: Sequence[ItemStability], columns: Sequence[_Column]) -> dict[str, list[_Row]]:
    groups: dict[str, list[_Row]] = defaultdict(list)
    for s in items:
        cells = []
        for col in columns:
            if col.index not in s.runs:
                state = "none"
            elif col.index in s.hits:
                state = "found" if s.expected else "extra"
            else:
                state = "missed" if s.expected else "none"
            cells.append(_Cell(col.index, state, col.status))
        groups[s.scorer].append(_Row(s, tuple(cells)))
    return dict(groups)


def _tool_rows(uses: Sequence[ToolUse], columns: Sequence[_Column]) -> list[_ToolRow]:
    completed = [c.index for c in columns if c.run is not None]
    rows = []
    for use in uses:
        per_run = dict(zip(completed, use.calls_per_run, strict=True))
        rows.append(_ToolRow(use, tuple(per_run.get(c.index) for c in columns)))
    return rows


class _CaseFacts(NamedTuple):
    """What the page shows of one case, before it is arranged as markup or columns.
    Its items and tool use are read from its runs a page at a time (`_analysed`):
    100,000 cases hold about 500,000 items. A named tuple: made once per case, at a
    fraction of a frozen dataclass's cost (which sets its fields one by one)."""

    account: CaseAccount
    number: int
    """Its position in the experiment, from 1: its anchor is `c<number>`."""
    runs: dict[int, RunRecord | RunSummary]
    """Its recorded runs by index."""

    @property
    def anchor(self) -> str:
        return f"c{self.number}"


_Analysed = tuple[_CaseFacts, list[ItemStability], list[ToolUse]]


def _analysed(page: Sequence[_CaseFacts], tools: Sequence[str]) -> list[_Analysed]:
    """Each case of `page` with its items and its use of `tools` (every known tool, in
    the dataset table's order), read from the page's runs in one pass."""
    runs = [run for case in page for run in case.runs.values()]
    items: dict[str, list[ItemStability]] = defaultdict(list)
    for s in item_stability(runs):
        items[s.case].append(s)
    uses: dict[str | None, list[ToolUse]] = defaultdict(list)
    for u in tool_profile(runs, tools) if runs else ():
        uses[u.case].append(u)
    return [(c, items[c.account.case], uses[c.account.case]) for c in page]


def _case_facts(runs: Sequence[RunRecord | RunSummary], accounting: Accounting) -> list[_CaseFacts]:
    by_case: dict[str, dict[int, RunRecord | RunSummary]] = defaultdict(dict)
    for run in runs:
        by_case[run.case_id][run.run_index] = run
    accounts = accounting.cases
    runs_of = map(by_case.__getitem__, map(_CASE, accounts))  # {} for a case with no run
    # tuple.__new__ in C: no Python frame per case (100,000 cases)
    return list(map(tuple.__new__, repeat(_CaseFacts), zip(accounts, count(1), runs_of)))


_CASE = attrgetter("case")


def _case_view(facts: _CaseFacts, items: list[ItemStability], uses: list[ToolUse]) -> _CaseView:
    """A case arranged for the template (its grid cells, its tool rows)."""
    columns = _columns(facts.account, facts.anchor, facts.runs)
    view = _CaseView(facts.account, facts.anchor, columns)
    view.groups = _rows(items, columns)
    view.tools = _tool_rows(uses, columns)
    return view


def _method(interval: Interval, key: str, cases: int, lang: str) -> str:
    if interval.method.startswith("exact"):
        return t("ci_method_exact", lang)
    if interval.method.startswith("Wilson on all"):
        return t("ci_method_floor", lang)
    return t(key, lang, cases=cases)


def _intervals(accounting: Accounting) -> DatasetIntervals | str:
    """The cluster intervals, or the label key saying why there are none."""
    if sum(1 for c in accounting.cases if c.counted) < 2:
        return "ci_needs_cases"
    try:
        return dataset_intervals(accounting, confidence=CONFIDENCE)
    except PasshatError:
        return "ci_pending"


def _figures(accounting: Accounting, lang: str) -> tuple[list[_Figure], str | None]:
    """pass@1, pass@j, pass^j with j from `Accounting.dataset()`, and their intervals."""
    d = accounting.dataset()
    m = d.metrics
    ci = _intervals(accounting)
    intervals: tuple[Interval | None, ...] = (
        (None, None, None) if isinstance(ci, str) else (ci.pass_at_1, ci.pass_at_j, ci.pass_hat_j)
    )
    rows = [
        (
            m.label_rate,
            t("estimates_pass_at_1", lang),
            m.pass_rate,
            "ci_method_score" if m.weighs_cases else "ci_method_robust",
        ),
        (d.label_at, t("at_least_once", lang, j=m.j), m.pass_at_j, "ci_method_score"),
        (d.label_hat, t("every_time", lang, j=m.j), m.pass_hat_j, "ci_method_score"),
    ]
    figures = []
    for (label, caption, value, method_key), interval in zip(rows, intervals, strict=True):
        method = _method(interval, method_key, m.cases, lang) if interval else ""
        figures.append(_Figure(label, caption, value, interval, method, _shown(label, lang)))
    return figures, ci if isinstance(ci, str) else None


def _shown(label: str, lang: str) -> str:
    """A dataset label in `lang`: the pass rate over runs and the j = 1 case means are
    words; other metric names are names."""
    keys = {
        RATE_LABEL: "label_rate",
        CASE_RATE_LABEL: "label_case_rate",
        label_at(1): "label_at_1",
        label_hat(1): "label_hat_1",
    }
    return t(keys[label], lang) if label in keys else label


def _curves(accounting: Accounting) -> _Curves:
    """Mean over the included cases of pass@j and pass^j, j = 1..(fewest counted runs)."""
    counts = Counter((c.counted, c.passes) for c in accounting.cases if c.counted)
    cases = sum(counts.values())
    n = min(counted for counted, _ in counts)
    at = [0.0] * n
    hat = [0.0] * n
    for (counted, passes), weight in counts.items():  # one curve per distinct (n, c)
        for j, value in enumerate(pass_at_curve(counted, passes)[:n]):
            at[j] += value * weight / cases
        for j, value in enumerate(pass_hat_curve(counted, passes)[:n]):
            hat[j] += value * weight / cases
    return _Curves(n, cases, tuple(at), tuple(hat))


def _calls_range(calls: Sequence[int]) -> tuple[int, int]:
    """Fewest and most calls of a tool in a run (0, 0 with no run): the dataset's tool
    table shows them (min and max here, not the template's filters: 100,000 runs)."""
    return (min(calls), max(calls)) if calls else (0, 0)


def _item_totals(verdicts: Counter[str]) -> dict[str, int]:
    """How many items of each verdict over all cases (`verdicts`: by verdict), worst first."""
    totals: dict[str, int] = defaultdict(int)
    for verdict, n in verdicts.items():
        totals[verdict_key(verdict)] += n
    order = (
        "always_missed",
        "sometimes_missed",
        "always_found",
        "extra_every_run",
        "extra_sometimes",
    )
    known = {key: totals[key] for key in order if totals.get(key)}
    return known | {key: n for key, n in totals.items() if key not in known}


def _header(
    e: ExperimentRecord, runs: Sequence[RunRecord | RunSummary], lang: str
) -> list[tuple[str, str]]:
    """The terminal's header rows, with the suite hash and harness version on rows of
    their own (a page has room for them)."""
    rows = []
    for key, value in header_rows(e, runs, lang=lang):
        if key == "suite":
            rows += [("suite", e.suite_name), ("suite_hash", e.suite_hash[:12])]
        elif key == "cassette":
            rows += [("harness_version", e.harness_version), (key, value)]
        else:
            rows.append((key, value))
    if not any(key == "harness_version" for key, _ in rows):
        rows.append(("harness_version", e.harness_version))
    return rows


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"
