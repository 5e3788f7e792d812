"""The HTML report: one self-contained page per experiment.

The page shows what the terminal report shows (header, accounting, the three
numbers, item stability, tool use) and what a terminal cannot: a run × item
grid per case that makes "sometimes missed" and "always missed" visible at a
glance, curves of pass@j and pass^j, and every run's transcript one click away.

Nothing is computed differently from the terminal report: the accounting is
`experiment_accounting`, the figures and their j come from `Accounting.dataset`,
the items from `item_stability`, tool use from `tool_profile`, the curves from
`pass_at_curve` / `pass_hat_curve`, the intervals from `passhat.stats`. This
module only arranges them.

Safety: model output, tool results and case files are data. Jinja autoescapes
every value; JSON inside `<script>` has `<`, `>` and `&` escaped; transcripts,
and the cases of the pages the script draws, are drawn with `textContent` and
`setAttribute`, never as markup; and a Content-Security-Policy lets only the
page's own script (by its hash) run, and fetches nothing.

Size: runs repeat themselves (the system prompt and the ticket in every run,
the model's annotations in the transcript, the tool calls and the final state),
so the runs travel as JSON with a table of repeated strings, deflated and
base64-encoded, and are unpacked in the browser when a run is opened. A
200-case × 10-run experiment of 23 MB of run data makes a page of about 4.0 MB.
Past `PAGED_ABOVE` cases or `PAGED_ABOVE_RUNS` runs the page holds pages of
cases (at most `PAGE_CASES` cases and `PAGE_RUNS` runs each): the first as
markup, the others as columns of facts (`_cases_blob`: about 12 bytes a case at
k = 1, 34 at k = 10, 290 at k = 100, compressed) that the page's script draws
from when the reader turns to them; the run detail of the first pages, one blob
per page, within `RUNS_BUDGET`. Anchors are the case's number (`c3`,
`c3-run1`), not its id, and each run's entry under the grid (its link target:
status, duration, error) is drawn by the script from the run's grid column.
100,000 runs make a page of about 2 MB, as 1,000 × 100, 10,000 × 10 or
100,000 × 1 (benchmarks/bench_html.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import accumulate, pairwise
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from markupsafe import Markup

from passhat.accounting import Accounting, CaseAccount
from passhat.adaptive import record_lines
from passhat.analysis import ItemStability, ToolUse, item_stability, tool_profile
from passhat.errors import ConfigError, PasshatError
from passhat.limits import limit_runs
from passhat.metrics import (
    CASE_RATE_LABEL,
    RATE_LABEL,
    label_at,
    label_hat,
    pass_at_curve,
    pass_hat_curve,
)
from passhat.records import ExperimentRecord, RunJson, RunRecord, RunSummary
from passhat.report.experiment import (
    experiment_accounting,
    header_rows,
    money,
    replayed_runs,
)
from passhat.report.i18n import LABELS, check_lang, t, tn, verdict_key
from passhat.report.terminal import plan_met_line, plan_not_met_line
from passhat.stats import DatasetIntervals, Interval, case_intervals, dataset_intervals, forecast
from passhat.store import LazyItems
from passhat.usage import Prices, usage_row

if TYPE_CHECKING:
    import jinja2

    from passhat.report.why import Explainer
    from passhat.signatures import Why

__all__ = ["render_html", "script_json", "write_html"]

CONFIDENCE = 0.95
"""Coverage of the dataset intervals shown beside the figures."""
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
RUNS_BUDGET = 750_000
"""Bytes of compressed run detail a paged report embeds at most, page by page; a
run left out says which `passhat show` command prints it."""
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


@dataclass(frozen=True)
class _ToolRow:
    use: ToolUse
    calls: tuple[int | None, ...]
    """Calls in each requested run; None for a run with no record."""


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


@dataclass(frozen=True)
class _CaseFacts:
    """What the page shows of one case, before it is arranged as markup or columns.
    Its items and tool use are read from its runs a page at a time (`_analysed`):
    100,000 cases hold about 500,000 items."""

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
    return [
        _CaseFacts(account, number, by_case[account.case])
        for number, account in enumerate(accounting.cases, start=1)
    ]


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


def _run_data(run: RunRecord) -> dict[str, Any]:
    return {
        "case": run.case_id,
        "run": run.run_index,
        "status": run.status,
        "transcript": run.transcript,
        "tool_calls": run.tool_calls,
        "final_state": run.final_state,
        "score": run.score,
        "output": run.output,
        "retries": run.retries,
        "duration_s": run.duration_s,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "seed": run.seed,
    }


_RUN_JSON = (
    b'{"case":%b,"run":%d,"status":%b,"transcript":%b,"tool_calls":%b,"final_state":%b,'
    b'"score":%b,"output":%b,"retries":%b,"duration_s":%b,"input_tokens":%d,'
    b'"output_tokens":%d,"seed":%d}'
)
"""`_run_data` of a stored run, its JSON columns written in as they are."""


def _run_json(run: RunWhole) -> bytes:
    """A run's detail as the page's script reads it (`_run_data`), JSON in UTF-8: a
    stored run's columns written as the store keeps them, never decoded."""
    if isinstance(run, RunRecord):
        return _to_json(_run_data(run))
    return _RUN_JSON % (
        json.dumps(run.case_id, ensure_ascii=False).encode(),
        run.run_index,
        json.dumps(run.status).encode(),
        run.transcript,
        run.tool_calls,
        run.final_state,
        run.score,
        run.output,
        run.retries,
        _to_json(run.duration_s),
        run.input_tokens,
        run.output_tokens,
        run.seed,
    )


def _to_json(value: Any) -> bytes:
    """JSON (UTF-8) as the store writes its columns: what is not JSON as its str(), an
    infinite or NaN number as null (the page's JSON.parse knows neither), and what even
    that cannot write (a lone surrogate) made safe first."""
    from pydantic_core import to_json

    try:
        return to_json(value, fallback=str, inf_nan_mode="null")
    except (ValueError, RecursionError):  # PydanticSerializationError is a ValueError
        from passhat.store import json_safe

        return to_json(json_safe(value), inf_nan_mode="null")


_INTERN_MIN = 32
"""Shorter strings (bytes of JSON text) are cheaper inline than as a reference."""
_BACKSLASH, _QUOTE = b"\x01", b"\x02"
"""An escaped backslash and an escaped quote while `_packed` reads JSON text: bytes that
valid JSON never holds raw, so every quote left bounds a string."""
_LONG_VALUES = re.compile(
    rb'((?:[^"]*+"(?:[^"]{0,%d}+"|[^"]*+"(?=\s*:)))*+[^"]*+)("[^"]*+"|\Z)' % (_INTERN_MIN - 1)
)
"""What comes before a long string value (structure, short strings, keys), and that
value: every match starts outside a string, so no quote is ever read as its opposite.
`[^"]` (not `[^"\\]`): the regular expression engine's fastest loop."""
_ANY_STRING = re.compile(rb'"([^"]*+)"(\s*:)?')


def _packed(runs: bytes) -> bytes:
    """`{"strings": [...], "runs": runs}` with every long string value of the JSON
    object `runs` that occurs more than once replaced by a reference into the table,
    `"\\u0000<n>"`; a real value starting with U+0000 has it doubled. Keys are left
    as they are (the page's script reads values only).

    Equal strings have equal JSON text (one encoder wrote both), so the table is made
    from the text, at the speed of regular expressions over bytes, without decoding
    it: escaped backslashes and quotes are set aside first (`_BACKSLASH`, `_QUOTE`)."""
    escaped = b"\\" in runs  # often none at all: then nothing to set aside
    text = runs.replace(b"\\\\", _BACKSLASH).replace(b'\\"', _QUOTE) if escaped else runs
    if escaped and b'"\\u0000' in text:
        body, table = _packed_nul(text)
    else:
        found = _LONG_VALUES.findall(text)
        counts = Counter([value for _, value in found])
        table = [value for value, n in counts.items() if n > 1 and value]  # b"": the end
        refs = {value: b'"\\u0000%d"' % i for i, value in enumerate(table)}
        pieces: list[bytes] = []
        add = pieces.append
        for before, value in found:
            add(before)
            add(refs.get(value, value))
        body = b"".join(pieces)
    packed = b'{"strings":[' + b",".join(table) + b'],"runs":' + body + b"}"
    return packed.replace(_QUOTE, b'\\"').replace(_BACKSLASH, b"\\\\") if escaped else packed


def _packed_nul(text: bytes) -> tuple[bytes, list[bytes]]:
    """`_packed`'s body and table for text in which a string starts with U+0000 (rare):
    every string read, so that each such value is doubled."""
    values = [m[0] for m in _ANY_STRING.finditer(text) if not m[2]]
    counts = Counter(v for v in values if len(v) >= _INTERN_MIN + 2)
    table = [value for value, n in counts.items() if n > 1]
    refs = {value: b'"\\u0000%d"' % i for i, value in enumerate(table)}

    def value(match: re.Match[bytes]) -> bytes:
        string = match[0]
        if match[2]:
            return string
        if string in refs:
            return refs[string]
        return b'"\\u0000' + string[1:] if string.startswith(b'"\\u0000') else string

    return _ANY_STRING.sub(value, text), table


def _runs_blob(cases: Sequence[_CaseFacts], whole: dict[tuple[str, int], RunWhole]) -> str:
    """Every recorded run's heavy fields, keyed by anchor, for the page's script.

    Runs repeat themselves (the system prompt and the ticket in every run, the
    model's annotations in the transcript, the tool calls and the final state),
    so long repeated strings go into one table (`_packed`), and the JSON is deflated
    and base64-encoded: about a tenth of the raw size.
    """
    runs = b",".join(
        b'"%b-run%d":%b' % (c.anchor.encode(), index, _run_json(whole[(c.account.case, index)]))
        for c in cases
        for index in range(1, c.account.k_requested + 1)
        if (c.account.case, index) in whole
    )
    raw = _packed(b"{" + runs + b"}")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def script_json(value: Any) -> Markup:
    """JSON safe inside `<script type="application/json">`: no `</script>`, no `<!--`."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


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


# --------------------------------------------------------------------------- rendering


@cache
def _environment() -> jinja2.Environment:
    try:
        import jinja2
    except ImportError:  # pragma: no cover - jinja2 is the `html` extra
        raise ConfigError(
            'the HTML report needs jinja2: install it with pip install "passhat[html]"'
        ) from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("passhat.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = _pct
    env.filters["money"] = money
    return env


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


@cache
def _script() -> tuple[Markup, str]:
    """The page's one script and its CSP hash (so no other script can run)."""
    text = _environment().get_template("_script.html.j2").render()
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return Markup(text), f"'sha256-{digest}'"


def _translator(lang: str) -> Callable[..., str]:
    def translate(key: str, **values: object) -> str:
        return t(key, lang, **values)

    return translate


def _verdict_labeler(lang: str) -> Callable[[str], str]:
    """Label of a verdict key; one the catalog does not know is shown in words."""

    def label(key: str) -> str:
        return LABELS[lang].get(key, key.replace("_", " "))

    return label


def _per_case_uncertainty(
    accounting: Accounting, m: int, only: set[str]
) -> dict[str, dict[str, Any]]:
    """Per case of `only`, as the terminal shows it: the Wilson interval of the rate, and
    the chance the next m runs all pass with its credible interval."""
    intervals = {c.case: c for c in case_intervals(accounting, CONFIDENCE, only=only)}
    forecasts = {f.case: f for f in forecast(accounting, m, confidence=CONFIDENCE, only=only).cases}
    return {case: {"rate": i, "next": forecasts[case]} for case, i in intervals.items()}


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


def _whole(page: Sequence[_CaseFacts], load: LoadRuns | None) -> dict[tuple[str, int], RunWhole]:
    """The whole runs of the cases of `page`: their own records when they are whole, else
    what `load` reads of them."""
    given: list[RunWhole] = [r for c in page for r in c.runs.values() if isinstance(r, RunRecord)]
    cases = [c.account.case for c in page]
    if not given and load is not None and cases:
        given = list(load(cases))
    return {(r.case_id, r.run_index): r for r in given}


def _embedded_runs(pages: list[list[_CaseFacts]], load: LoadRuns | None) -> list[tuple[int, str]]:
    """The runs blobs, each with the number of its first case: every run on one page; on
    a paged report one blob per page while their compressed detail stays within
    `RUNS_BUDGET` (the first page's always), so no more than one page's whole runs
    are held at a time and the page's script inflates only the blob of the run opened."""
    chunks: list[tuple[int, str]] = []
    size = 0
    for page in pages:
        blob = _runs_blob(page, _whole(page, load))
        size += len(blob)
        if chunks and size > RUNS_BUDGET:
            break
        chunks.append((page[0].number, blob))
    return chunks


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
            lengths = _shared_ascii(texts, width)
            return lengths, [text[n:] for text, n in zip(texts, lengths, strict=True)]
    return _front_coded_loop(texts)


_COMPARED_AT_ONCE = 64_000_000
"""Bytes of the table `_shared_ascii` compares at most (strings × the longest)."""


def _shared_ascii(texts: list[str], width: int) -> list[int]:
    """The length of the start each of `texts` (ASCII) shares with the one before (0 for
    the first): the strings as rows of a byte table, each compared with the row above."""
    import numpy as np

    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    table = np.array([t.encode() for t in texts], dtype=f"S{max(width, 1)}")
    rows = table.view(np.uint8).reshape(len(texts), max(width, 1))
    differ = rows[1:] != rows[:-1]
    first = np.where(differ.any(axis=1), differ.argmax(axis=1), width)
    # a row's padding is NUL, as a string's own NUL may be: never past the shorter one
    shared = np.minimum(first, np.minimum(lengths[1:], lengths[:-1]))
    return [0, *shared.tolist()]


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
    tokens_in = sum(r.input_tokens for r in runs)
    tokens_out = sum(r.output_tokens for r in runs)
    return {"case": case.account.case, **usage_row(len(runs), tokens_in, tokens_out, prices)}


def _usage(
    cases: Sequence[_CaseFacts], runs: Sequence[RunRecord | RunSummary], prices: Prices | None
) -> dict[str, Any]:
    """The tokens table: the experiment's totals and the rows of the cases given (those
    with a recorded run), in case order."""
    tokens_in = sum(r.input_tokens for r in runs)
    tokens_out = sum(r.output_tokens for r in runs)
    return {
        "experiment": usage_row(len(runs), tokens_in, tokens_out, prices),
        "cases": [_case_usage(c, prices) for c in cases if c.runs],
    }


def _usage_columns(cases: Sequence[_CaseFacts], prices: Prices | None) -> dict[str, list[Any]]:
    """The tokens table's rows of `cases` (with a recorded run) as columns: tokens in and
    out; with prices, the cost as the template writes it (money, its data-cost, per run)."""
    rows = [_case_usage(c, prices) for c in cases if c.runs]
    columns: dict[str, list[Any]] = {
        "tokensIn": [u["input_tokens"] for u in rows],
        "tokensOut": [u["output_tokens"] for u in rows],
    }
    if prices is not None:
        columns["cost"] = [money(u["cost"]) for u in rows]
        columns["costData"] = [str(u["cost"]) for u in rows]
        columns["costPerRun"] = [money(u["cost_per_run"]) for u in rows]
    return columns


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
    calls: list[list[int]] = []
    errors: list[list[int]] = []
    zero = (0, 0)
    for tool in tools:
        per_run = [n.get(tool, zero) for n in counts]
        calls.append([n for n, _ in per_run])
        total = list(accumulate([e for _, e in per_run], initial=0))
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
    counts: list[int] = field(default_factory=list)
    scorer: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    hits: list[str] = field(default_factory=list)

    def add(self, page: Sequence[_CaseFacts]) -> None:
        """The items of `page`'s cases, as `item_stability` of their runs has them (in
        case order, each scorer's together), read straight into columns when a case's
        counted runs share one plain shape (`_Plan`; the usual case), else from it."""
        rows: list[tuple[str, str, str, str, str]] = []
        plans: dict[int, tuple[object, _Plan | None]] = {}  # by id: each value read once
        for c in page:
            counted = [run for _, run in sorted(c.runs.items()) if run.counted]
            found = _plain_rows(counted, plans) if counted else []
            if found is None:  # as given: the first run's scorers come first
                found = [
                    (s.scorer, s.item, "1" if s.expected else "0", _hit_letters(s), s.verdict)
                    for s in item_stability([run for run in c.runs.values() if run.counted])
                ]
            self.counts.append(len(found))
            rows.extend(found)
        if not rows:
            return
        labels, names, expected, hits, verdicts = zip(*rows, strict=True)
        scorers = self.scorers
        self.scorer.extend([scorers.setdefault(label, len(scorers)) for label in labels])
        self.names.extend(names)
        self.expected.extend(expected)
        self.hits.extend(hits)
        self.verdicts.update(verdicts)


class _Plan(NamedTuple):
    """One run's per-item results when plain: each scorer label once, each expected
    item once per label, each extra once (as text)."""

    shape: tuple[tuple[str, tuple[str, ...]], ...]
    """(label, expected items) of each scorer."""
    found: tuple[str, ...]
    """1 or 0 per expected item of `shape`, in order: found (not missing)."""
    extras: dict[str, frozenset[str]]
    """Per label with extras, the extra items (as text)."""


def _plan(graded: Sequence[Mapping[str, Any]]) -> _Plan | None:
    """`graded` read as `analysis.item_stability` reads it, or None when it is not plain
    (a label twice, an item twice): then the case takes `item_stability` itself."""
    shape = []
    found: list[str] = []
    extras: dict[str, frozenset[str]] = {}
    for detail in graded:
        path = detail.get("path")
        label = f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))
        items = tuple(map(str, detail["expected"]))
        missing = set(map(str, detail["missing"]))
        if len(set(items)) != len(items):
            return None
        shape.append((label, items))
        found.extend(["0" if item in missing else "1" for item in items])
        raw = detail.get("extra")
        if raw:
            extra = frozenset(map(str, dict.fromkeys(raw)))
            if len(extra) != len(dict.fromkeys(raw)):
                return None
            extras[label] = extra
    if len({label for label, _ in shape}) != len(shape):
        return None
    return _Plan(tuple(shape), tuple(found), extras)


def _plain_rows(
    counted: Sequence[RunRecord | RunSummary], plans: dict[int, tuple[object, _Plan | None]]
) -> list[tuple[str, str, str, str, str]] | None:
    """A case's items as `_ItemColumns` rows (scorer, item, expected, hit letters,
    verdict) from its counted runs (by index), when they all share one plain shape;
    None otherwise. `plans` holds each value read (kept alive, so ids stay unique)."""
    case_plans: list[_Plan] = []
    for run in counted:
        value = run.graded_items
        held = plans.get(id(value))
        if held is None:  # read by pydantic-core, and not kept, when not read yet
            read = value.decoded() if isinstance(value, LazyItems) else value
            held = plans[id(value)] = (value, _plan(read))
        plan = held[1]
        if plan is None or (case_plans and plan.shape != case_plans[0].shape):
            return None
        case_plans.append(plan)
    columns = ["".join(column) for column in zip(*[p.found for p in case_plans], strict=True)]
    with_extras = any(p.extras for p in case_plans)
    rows = []
    at = 0
    for label, items in case_plans[0].shape:
        for item in items:
            hits = columns[at]
            at += 1
            rows.append((label, item, "1", hits, _found_verdict(hits)))
        if not with_extras:
            continue
        having = [p.extras.get(label, _NO_EXTRAS) for p in case_plans]
        for item in sorted(_NO_EXTRAS.union(*having)):
            hits = "".join(["1" if item in extra else "0" for extra in having])
            verdict = "extra, every run" if "0" not in hits else "extra, sometimes"
            rows.append((label, item, "0", hits, verdict))
    return rows


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
    statuses, durations, error_at, error_text = _run_facts(cases)
    calls, errors = _tool_facts(cases, tools)
    items = _ItemColumns(verdicts)
    for page in pages[1:]:
        items.add(page)
    figures: dict[str, list[str]] = {}
    for c in cases:
        a = c.account
        if a.metrics is not None:
            key = f"{a.counted},{a.passes}"
            if key not in figures:
                figures[key] = _uncertainty_texts(
                    per_pair[(a.counted, a.passes)], a.metrics.pass_rate
                )
    id_shared, id_rest = _front_coded(c.account.case for c in cases)
    name_shared, name_rest = _front_coded(items.names)
    data = {
        "first": cases[0].number,
        "starts": [page[0].number for page in pages[1:]],
        "idShared": id_shared,
        "idRest": id_rest,
        "k": [c.account.k_requested for c in cases],
        "status": "".join(statuses),
        "tenths": durations,
        "errorAt": error_at,
        "errorText": error_text,
        "items": items.counts,
        "scorers": list(items.scorers),
        "itemScorer": items.scorer,
        "nameShared": name_shared,
        "nameRest": name_rest,
        "expected": "".join(items.expected),
        "hits": "".join(items.hits),
        "tools": list(tools),
        "calls": calls,
        "toolErrors": errors,
        "figures": figures,
        "conf": f"{ci_level}%",
        "usage": usage,
    }
    return base64.b64encode(_gzip(_to_json(data))).decode("ascii")


def _gzip(data: bytes) -> bytes:
    """gzip of the pages blob: level 6, filtered (mostly numbers and letters, little to
    match): at 1,000,000 runs as small as level 9 within 1-4 %, in a third to a half of
    its time (level 9 took 1.8 s of 10,000 x 100's 18 MB)."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31, 9, zlib.Z_FILTERED)  # 31: gzip
    return packer.compress(data) + packer.flush()


WHY_CASES = 30
"""Cases of the first page that get their divergence tree, evidence and pairs (as the
terminal report explains the 30 cases it lists): each reads its whole runs again."""
PAIRS_PER_PAGE = 900
"""Pairs of runs whose diffs a page carries at most (about a millisecond each to make):
20 cases of 10 runs, or 300 of 3; the cases past them name the `passhat diff` command."""


def _why(
    explainer: Explainer,
    view: _CaseView,
    experiment: ExperimentRecord,
    lang: str,
    budget: list[int],
) -> dict[str, Any] | None:
    """A case's divergence tree, item evidence and the diffs of its pairs of runs (up to
    `PAIR_RUNS` runs, while the page's `budget` of pairs lasts; past that the picker
    names the `passhat diff` command)."""
    from passhat.divergence import diff_runs
    from passhat.report.diff import PAIR_RUNS, pair_dict, why_view

    case = view.account.case
    runs = sorted(explainer.load(case), key=lambda r: r.run_index)
    if not runs:
        return None
    data = why_view(explainer.explain(case, runs), lang)
    indices = [r.run_index for r in runs]
    data["runs"] = indices
    data["pairs"] = None
    data["too_many"] = None
    n_pairs = len(runs) * (len(runs) - 1) // 2
    if len(runs) > PAIR_RUNS or n_pairs > budget[0]:
        ref = experiment.name or experiment.id
        data["too_many"] = t("pair_too_many", lang, n=len(runs), ref=ref, case=case)
    elif len(runs) > 1:
        budget[0] -= n_pairs
        cache: dict[int, Any] = {}  # each run cut into turns and calls once
        pairs = [
            pair_dict(diff_runs(a, b, cache)) for i, a in enumerate(runs) for b in runs[i + 1 :]
        ]
        data["pairs"] = script_json(pairs)
    return data


def _signatures(
    why: Why, experiment: ExperimentRecord, cases: Sequence[Any]
) -> list[dict[str, Any]]:
    """The page's failure signatures (capped as the terminal's), each with an example
    pair: a link that opens the case's compare on it, and the `passhat diff` command."""
    from passhat.report.why import SIGNATURES_SHOWN, diff_command, signature_sentence

    if why.too_few:
        return []
    anchors = {c.account.case: c.anchor for c in cases}
    ref = experiment.name or experiment.id
    out = []
    for s in why.signatures[:SIGNATURES_SHOWN]:
        pair = s.test.pairs[0] if s.test.pairs else None
        out.append(
            {
                "sentence": signature_sentence(s, why.adjust),
                "case": pair[0] if pair else None,
                "anchor": anchors.get(pair[0]) if pair else None,
                "missed": pair[1] if pair else None,
                "found": pair[2] if pair else None,
                "command": diff_command(ref, pair) if pair else None,
            }
        )
    return out


def _context(
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    lang: str,
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
    why: Explainer | None = None,
    accounting: Accounting | None = None,
) -> dict[str, Any]:
    if accounting is None:
        accounting = experiment_accounting(experiment, runs)
    cases = _case_facts(runs, accounting)
    pages = _pages(cases)
    counted = accounting.runs_counted > 0
    figures, ci_reason = _figures(accounting, lang) if counted else ([], None)
    script, script_hash = _script()
    errored = [r for r in runs if r.status == "errored"]
    limited = list(limit_runs(runs).items())
    missing = [c for c in cases if c.account.missing]
    rest = [c for page in pages[1:] for c in page]
    pairs = _pair_cases(rest)
    shown = {c.account.case for c in pages[0]} | set(pairs.values())
    per_case = _per_case_uncertainty(accounting, forecast_m, shown) if counted else {}
    usage = _usage(pages[0], runs, prices)
    tokens = usage["experiment"]
    has_usage = tokens["input_tokens"] + tokens["output_tokens"] > 0 or prices is not None
    dataset_tools = tool_profile(runs, experiment.tools, per_case=False)
    tools = [u.tool for u in dataset_tools]
    verdicts: Counter[str] = Counter()
    page_views = [_case_view(*case) for case in _analysed(pages[0], tools)]
    overview = why.overview(runs) if why is not None else None
    signatures = _signatures(overview, experiment, cases) if overview is not None else []
    if why is not None:
        budget = [PAIRS_PER_PAGE]
        for n, view in enumerate(page_views):
            if n < WHY_CASES:
                view.why = _why(why, view, experiment, lang, budget)
            else:
                view.why = {"skipped": t("why_skipped", lang, n=WHY_CASES)}
    for view in page_views:
        verdicts.update(row.stability.verdict for rows in view.groups.values() for row in rows)
    pages_blob = _cases_blob(  # counts the verdicts of the other pages' items
        pages,
        {pair: per_case[case] for pair, case in pairs.items()},
        round(CONFIDENCE * 100),
        _usage_columns(rest, prices) if has_usage else None,
        tools,
        verdicts,
    )
    listed = {r.case_id for r in errored[:LIST_LIMIT]}
    context = {
        "lang": lang,
        "t": _translator(lang),
        "tn": lambda key, n: tn(key, lang, n),
        "verdict_label": _verdict_labeler(lang),
        "shown_label": lambda label: _shown(label, lang),
        "e": experiment,
        "header": _header(experiment, runs, lang),
        "accounting": accounting,
        "summary": accounting.dataset() if counted else None,
        "ledger": accounting.error_ledger() if counted else None,
        "at_requested": accounting.at_requested() if counted else None,
        "plan_met": plan_met_line(accounting, lang),
        "adaptive": [record_lines(r) for r in experiment.adaptive],
        "plan_not_met": (
            plan_not_met_line(accounting, lang, name=lambda label: _shown(label, lang))
            if counted
            else None
        ),
        "figures": figures,
        "ci_reason": ci_reason,
        "ci_level": round(CONFIDENCE * 100),
        "curves": _curves(accounting) if counted else None,
        "page_views": page_views,
        "signatures": signatures,
        "signatures_more": (
            f"passhat why {experiment.name or experiment.id}" if signatures else None
        ),
        "pages": len(pages),
        "page_cases": PAGE_CASES,
        "list_limit": LIST_LIMIT,
        "anchor_of": {c.account.case: c.anchor for c in cases if c.account.case in listed},
        "item_totals": _item_totals(verdicts),
        "errored": errored[:LIST_LIMIT],
        "errored_more": max(0, len(errored) - LIST_LIMIT),
        "limited": limited[:LIST_LIMIT],
        "limited_more": max(0, len(limited) - LIST_LIMIT),
        "missing_cases": missing[:LIST_LIMIT],
        "missing_more": max(0, len(missing) - LIST_LIMIT),
        "replayed": replayed_runs(runs),
        "per_case": per_case,
        "forecast_m": forecast_m,
        "usage": usage,
        "prices": prices,
        "dataset_tools": dataset_tools,
        "calls_range": {u.tool: _calls_range(u.calls_per_run) for u in dataset_tools},
        "labels": script_json(LABELS[lang]),
        "runs_blobs": _embedded_runs(pages, load),
        "script": script,
        "script_hash": script_hash,
    }
    context["pages_blob"] = pages_blob
    return context


def render_html(
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    *,
    lang: str = "en",
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
    why: Explainer | None = None,
    accounting: Accounting | None = None,
) -> str:
    """The whole report as one self-contained HTML page.

    Pass whole runs (`store.runs(id)`) so the transcripts are included, or the
    summaries (`store.summaries(id)`) and `load`, which fetches the whole runs of
    the pages whose detail is embedded: a report of 100,000 runs then never holds
    them all. Light runs give the same page with the transcripts left out. With `why`
    (`passhat.report.why.Explainer`), each case of the first page shows its divergence
    tree and item evidence, and two of its runs can be picked and compared. Pass
    `accounting` when you have it (`experiment_accounting(experiment, runs)`) so it is
    not made twice.
    """
    lang = check_lang(lang)
    template = _environment().get_template("report.html.j2")
    context = _context(experiment, runs, lang, load, prices, forecast_m, why, accounting)
    return template.render(context)


def write_html(
    path: str | Path,
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    *,
    lang: str = "en",
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
    why: Explainer | None = None,
    accounting: Accounting | None = None,
) -> Path:
    """Render the report and write it to `path` (UTF-8); return the path."""
    page = render_html(
        experiment,
        runs,
        lang=lang,
        load=load,
        prices=prices,
        forecast_m=forecast_m,
        why=why,
        accounting=accounting,
    )
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target
