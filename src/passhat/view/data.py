"""What the view's pages show, read from an open store.

Nothing here is computed differently from the commands: an experiment's accounting is
`account` over its stored statuses (as `passhat compare` reads a side), its figures and
intervals are the HTML report's (`report.html.facts._figures`), a comparison is `stats.compare`
with compare's defaults and notes, and a trend point is flagged by compare's own verdict
against the point before it. This module arranges; it knows nothing of HTTP.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from passhat.accounting import Accounting, account
from passhat.analysis import ItemStability
from passhat.errors import PasshatError
from passhat.records import ExperimentRecord, agent_label
from passhat.stats import Comparison, Interval
from passhat.store import Store
from passhat.usage import Prices, TokenUsage, usage_of

LIVE_AFTER_S = 60.0
"""A lease renewed within this many seconds marks its experiment as being run."""
COMPARISONS_KEPT = 4
"""Whole comparisons the view keeps (the trend keeps only each point's verdict)."""
CASES_PER_PAGE = 100
"""Cases an experiment's page lists at a time (`?page=N` turns to the others)."""


@dataclass(frozen=True)
class Figure:
    """One of the three figures with its interval (None when there is none yet)."""

    label: str
    value: float
    interval: Interval | None


@dataclass(frozen=True)
class Summary:
    """One experiment as the experiments page and the live panel show it."""

    experiment: ExperimentRecord
    accounting: Accounting
    figures: tuple[Figure, ...]
    """pass rate, pass@j, pass^j (empty while no run is counted)."""
    usage: TokenUsage
    live: bool

    @property
    def agent(self) -> str:
        return agent_label(self.experiment.agent)

    @property
    def rate(self) -> Figure | None:
        return self.figures[0] if self.figures else None

    @property
    def hat(self) -> Figure | None:
        return self.figures[2] if self.figures else None


def accounting_of(store: Store, experiment: ExperimentRecord) -> Accounting:
    """The experiment's accounting from its stored statuses, streamed (compare's way)."""
    return account(
        store.statuses(experiment.id),
        experiment.k_requested,
        experiment.case_ids,
        experiment.case_k,
    )


def figures_of(accounting: Accounting) -> tuple[Figure, ...]:
    """The report's three figures and intervals; none while nothing is counted."""
    if accounting.runs_counted == 0:
        return ()
    from passhat.report.html.facts import _figures

    shown, _ = _figures(accounting, "en")
    return tuple(Figure(f.label, f.value, f.interval) for f in shown)


def is_live(store: Store, experiment_id: str, now: float | None = None) -> bool:
    """Whether a process holds the experiment's lease and renewed it lately."""
    holder = store.lease_holder(experiment_id)
    if holder is None or holder.get("heartbeat_at") is None:
        return holder is not None
    return (now or time.time()) - float(holder["heartbeat_at"]) <= LIVE_AFTER_S


def summary_of(store: Store, experiment: ExperimentRecord, prices: Prices | None = None) -> Summary:
    """The experiment's accounting, figures, tokens (and cost, given `prices`), and
    whether it is being run."""
    accounting = accounting_of(store, experiment)
    return Summary(
        experiment,
        accounting,
        figures_of(accounting),
        usage_of(store.tokens(experiment.id), prices),
        is_live(store, experiment.id),
    )


def eta_seconds(samples: Sequence[tuple[float, int]], remaining: int) -> float | None:
    """Seconds left at the pace seen over `samples` ((time, runs recorded), oldest
    first); None until runs were seen to arrive."""
    if remaining <= 0:
        return 0.0
    if len(samples) < 2:
        return None
    (t0, n0), (t1, n1) = samples[0], samples[-1]
    if n1 <= n0 or t1 <= t0:
        return None
    return remaining * (t1 - t0) / (n1 - n0)


class Snapshot:
    """The store as last seen, read again only when another connection wrote it.

    One read-only connection (`mode=ro`) behind a lock; `PRAGMA data_version` tells a
    commit by another process, so an unchanged store answers from memory, and a
    changed one re-reads only the experiments whose run counts moved."""

    def __init__(self, store: Store, prices: Prices | None = None) -> None:
        self.store = store
        self.prices = prices
        """Prices of every experiment's tokens (`view --price`), or None: no cost."""
        self.lock = threading.Lock()
        self._version: int | None = None
        self._counts: dict[str, dict[str, int]] = {}
        self._experiments: list[ExperimentRecord] = []
        self._summaries: dict[str, tuple[Any, Summary]] = {}
        self._paces: dict[str, deque[tuple[float, int]]] = {}
        self._compared: dict[tuple[Any, ...], Compared] = {}
        self._verdicts: dict[tuple[Any, ...], tuple[str, float]] = {}

    def _refresh(self) -> bool:
        """Read what changed since the last look; True when something did."""
        version = self.store.data_version()
        if version == self._version:
            return False
        self._version = version
        self._experiments = self.store.experiments()
        self._counts = self.store.status_counts()
        now = time.monotonic()
        for e in self._experiments:
            pace = self._paces.setdefault(e.id, deque(maxlen=20))
            done = sum(self._counts.get(e.id, {}).values())
            if not pace or pace[-1][1] != done:
                pace.append((now, done))
        return True

    def experiments(self) -> list[ExperimentRecord]:
        """Every experiment, oldest first."""
        with self.lock:
            self._refresh()
            return list(self._experiments)

    def find(self, ref: str) -> ExperimentRecord:
        """An experiment by id, unique name or `latest` (a StoreError names the others)."""
        with self.lock:
            return self.store.experiment(ref)

    def summaries(self) -> list[Summary]:
        """Every experiment, newest first."""
        with self.lock:
            self._refresh()
            return [self._summary(e) for e in reversed(self._experiments)]

    def summary(self, experiment: ExperimentRecord) -> Summary:
        with self.lock:
            self._refresh()
            return self._summary(experiment)

    def _summary(self, e: ExperimentRecord) -> Summary:
        key = (tuple(sorted(self._counts.get(e.id, {}).items())), e.runs_requested)
        cached = self._summaries.get(e.id)
        live = is_live(self.store, e.id)
        if cached is not None and cached[0] == key:
            summary = cached[1]
            return summary if summary.live == live else _with_live(summary, live)
        summary = summary_of(self.store, e, self.prices)
        self._summaries[e.id] = (key, summary)
        return summary

    def compared(
        self, a: ExperimentRecord, b: ExperimentRecord, *, allow_different: bool = False
    ) -> Compared:
        """`compare_summaries` of the two; the last few are kept while neither side's
        runs change (each holds every paired case: a few are enough for a reader going
        back and forth)."""
        with self.lock:
            self._refresh()
            sa, sb = self._summary(a), self._summary(b)
            key = (a.id, b.id, self._summaries[a.id][0], self._summaries[b.id][0], allow_different)
            cached = self._compared.get(key)
        if cached is None:
            cached = compare_summaries(sa, sb, allow_different=allow_different)
            with self.lock:
                self._compared[key] = cached
                while len(self._compared) > COMPARISONS_KEPT:
                    self._compared.pop(next(iter(self._compared)))
        return cached

    def verdict(self, a: ExperimentRecord, b: ExperimentRecord) -> tuple[str, float]:
        """compare's verdict on B against A and its pass-rate difference, kept (small)
        while neither side's runs change: a trend's points."""
        with self.lock:
            self._refresh()
            self._summary(a), self._summary(b)
            key = (a.id, b.id, self._summaries[a.id][0], self._summaries[b.id][0], False)
            kept = self._verdicts.get(key)
        if kept is None:
            c = self.compared(a, b)
            kept = (c.result.verdict.outcome, c.data["metrics"]["pass_at_1"]["difference"])
            with self.lock:
                self._verdicts[key] = kept
        return kept

    def eta(self, experiment_id: str, remaining: int) -> float | None:
        with self.lock:
            return eta_seconds(list(self._paces.get(experiment_id, ())), remaining)


def _with_live(summary: Summary, live: bool) -> Summary:
    from dataclasses import replace

    return replace(summary, live=live)


@dataclass(frozen=True)
class Compared:
    """Two stored experiments compared as `passhat compare A B` compares them."""

    a: ExperimentRecord
    b: ExperimentRecord
    result: Comparison
    data: dict[str, Any]
    """`passhat compare --json`'s document."""
    usage: tuple[TokenUsage, TokenUsage]


def compare_summaries(a: Summary, b: Summary, *, allow_different: bool = False) -> Compared:
    """`passhat compare A B` of two stored experiments: compare's defaults (pass@1, its
    resamples, seed 0, 95 %, BH), its suite check and notes, over the same accounting
    (each side's stored statuses) and tokens; `data` is the document `compare --json`
    prints."""
    from passhat.adaptive import varied_k_notes
    from passhat.report.summary import comparison_dict
    from passhat.stats import check_suites, compare
    from passhat.usage import usage_difference

    ea, eb = a.experiment, b.experiment
    notes = check_suites(ea.suite_hash, eb.suite_hash, allow_different=allow_different)
    notes += varied_k_notes((("A", a.accounting), ("B", b.accounting)))
    result = compare(a.accounting, b.accounting, notes=notes)
    data = comparison_dict(result, source_a=source_of(ea), source_b=source_of(eb))
    data["usage"] = usage_difference(a.usage, b.usage)
    return Compared(ea, eb, result, data, (a.usage, b.usage))


DRIVING_CASES = 50
"""Cases the compare page details (items gained and lost), those with the smallest
p-values first: the ones that drive the verdict."""


@dataclass(frozen=True)
class ItemShift:
    """One item of one case whose share of counted runs moved from A to B."""

    item: str
    expected: bool
    """In the goal state (found is good), or an extra the runs added (found is bad)."""
    share_a: float
    share_b: float

    @property
    def gained(self) -> bool:
        """B does better on it: a goal item found more often, an extra made less often."""
        return (self.share_b > self.share_a) == self.expected


def item_shifts(
    a: Sequence[ItemStability], b: Sequence[ItemStability]
) -> dict[str, list[ItemShift]]:
    """Per case, the items found (or, for extras, made) in a different share of counted
    runs by B than by A. A goal item is compared where both sides judged it; an extra
    one side never made counts as made in none of that side's runs."""
    sides = [{(x.case, x.scorer, x.item, x.expected): x for x in side} for side in (a, b)]
    judged = [{x.case for x in side} for side in (a, b)]
    shifts: dict[str, list[ItemShift]] = {}
    for key in sorted(sides[0].keys() | sides[1].keys()):
        case, _, item, expected = key
        if not (case in judged[0] and case in judged[1]):
            continue
        found = [side.get(key) for side in sides]
        if expected and (found[0] is None or found[1] is None):
            continue
        share = [len(x.hits) / len(x.runs) if x is not None and x.runs else 0.0 for x in found]
        if share[0] != share[1]:
            shifts.setdefault(case, []).append(ItemShift(item, expected, share[0], share[1]))
    return shifts


def driving_cases(c: Comparison, limit: int = DRIVING_CASES) -> list[str]:
    """The paired cases with the smallest p-values (the largest moves first on ties)."""
    ranked = sorted(c.cases, key=lambda x: (x.p_value, -abs(x.difference), x.case))
    return [x.case for x in ranked[:limit]]


def shifts_of(store: Store, compared: Compared) -> dict[str, list[ItemShift]]:
    """Items gained and lost in the driving cases, from both sides' graded runs."""
    from passhat.analysis import item_stability

    cases = driving_cases(compared.result)
    a = item_stability(store.graded(compared.a.id, cases))
    b = item_stability(store.graded(compared.b.id, cases))
    return item_shifts(a, b)


def source_of(e: ExperimentRecord) -> str:
    """A side's source as `compare --json` names a stored experiment."""
    from passhat.report.i18n import t

    return t(
        "experiment_source",
        "en",
        name=e.name or e.id,
        agent=agent_label(e.agent),
        model=e.model or "–",
    )


def previous_of(
    experiments: Sequence[ExperimentRecord], e: ExperimentRecord
) -> ExperimentRecord | None:
    """The experiment of the same suite created last before `e`."""
    before = [x for x in experiments if x.suite_name == e.suite_name and x.id != e.id]
    before = [x for x in before if x.created_at <= e.created_at]
    return before[-1] if before else None


@dataclass(frozen=True)
class TrendPoint:
    """One experiment of a suite's trend, and compare's verdict against the one before."""

    summary: Summary
    outcome: str | None
    """compare's verdict against the previous point: better, worse or none (not
    decided); None for the first point, or when the two cannot be compared."""
    difference: float | None
    note: str | None = None

    @property
    def regression(self) -> bool:
        return self.outcome == "worse"


def trend_of(snapshot: Snapshot, suite: str) -> list[TrendPoint]:
    """A suite's experiments oldest first, each compared with the point before it as
    `compare` would."""
    ours = [s for s in reversed(snapshot.summaries()) if s.experiment.suite_name == suite]
    points: list[TrendPoint] = []
    for before, now in zip([None, *ours], ours, strict=False):
        if before is None or not before.figures or not now.figures:
            points.append(TrendPoint(now, None, None))
            continue
        try:
            outcome, difference = snapshot.verdict(before.experiment, now.experiment)
        except PasshatError as error:
            points.append(TrendPoint(now, None, None, str(error)))
            continue
        points.append(TrendPoint(now, outcome, difference))
    return points


@dataclass
class Page:
    """A page of an experiment's cases."""

    number: int
    pages: int
    cases: list[Any] = field(default_factory=list)


def case_page(accounting: Accounting, number: int) -> Page:
    """Cases `CASES_PER_PAGE` at a time; a page past the end is the last."""
    pages = max(1, -(-len(accounting.cases) // CASES_PER_PAGE))
    number = min(max(1, number), pages)
    start = (number - 1) * CASES_PER_PAGE
    return Page(number, pages, list(accounting.cases[start : start + CASES_PER_PAGE]))


__all__ = [
    "CASES_PER_PAGE",
    "Compared",
    "Figure",
    "ItemShift",
    "Page",
    "Snapshot",
    "Summary",
    "TrendPoint",
    "accounting_of",
    "case_page",
    "compare_summaries",
    "driving_cases",
    "eta_seconds",
    "figures_of",
    "item_shifts",
    "previous_of",
    "shifts_of",
    "summary_of",
    "trend_of",
]
