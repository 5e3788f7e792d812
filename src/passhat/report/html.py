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
every value; JSON inside `<script>` has `<`, `>` and `&` escaped; transcripts
are drawn with `textContent`, never as markup; and a Content-Security-Policy
lets only the page's own script (by its hash) run, and fetches nothing.

Size: runs repeat themselves (the system prompt and the ticket in every run,
the model's annotations in the transcript, the tool calls and the final state),
so the runs travel as one JSON blob with a table of repeated strings, deflated
and base64-encoded, and are unpacked in the browser when a run is opened. A
200-case × 10-run experiment of 23 MB of run data makes a page of about 4.0 MB.
Past `PAGED_ABOVE` cases the page holds pages of cases, the first as markup, the
others compressed; what repeats per case is kept short: anchors are the case's
number (`c3`, `c3-run1`), not its id, and each run's entry under the grid (its
link target: status, duration, error) is drawn by the page's script from the
run's grid column instead of being written a second time. 100,000 runs (10,000
cases) make a page of about 3.7 MB.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from passhat.accounting import Accounting, CaseAccount
from passhat.adaptive import record_lines
from passhat.analysis import ItemStability, ToolUse, item_stability, tool_profile
from passhat.errors import ConfigError, PasshatError
from passhat.metrics import RATE_LABEL, label_at, label_hat, pass_at_curve, pass_hat_curve
from passhat.records import ExperimentRecord, RunRecord, RunSummary
from passhat.report.experiment import (
    experiment_accounting,
    header_rows,
    money,
    replayed_runs,
    usage_dict,
)
from passhat.report.i18n import LABELS, check_lang, t, tn, verdict_key
from passhat.report.terminal import plan_met_line, plan_not_met_line
from passhat.stats import DatasetIntervals, Interval, case_intervals, dataset_intervals, forecast
from passhat.usage import Prices

if TYPE_CHECKING:
    import jinja2

__all__ = ["render_html", "script_json", "write_html"]

CONFIDENCE = 0.95
"""Coverage of the dataset intervals shown beside the figures."""
PAGED_ABOVE = 200
"""Up to this many cases the page holds every case as markup."""
PAGE_CASES = 100
"""Cases drawn per page past `PAGED_ABOVE`: the first page is markup, the others
travel gzip-compressed and are drawn when the reader turns to them."""
RUNS_BUDGET = 750_000
"""Bytes of compressed run detail a paged report embeds at most, page by page; a
run left out says which `passhat show` command prints it."""
LIST_LIMIT = 200
"""Missing and errored runs listed in the banner at most (the rest are counted)."""

LoadRuns = Callable[[Sequence[str]], Sequence[RunRecord]]
"""Whole runs of the given cases (e.g. `Store.runs(id, cases=...)`)."""

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


def _anchors(case_ids: Sequence[str]) -> dict[str, str]:
    """A short, safe, unique fragment id per case: `c3` for the third case; its runs
    are `c3-run1`, `c3-run2`, ...

    The case id is not part of it: at 100,000 runs a case's id in each of its run
    anchors was a tenth of the page. (Older pages used `c3-<case id as a slug>`;
    the page's script still follows such links.)
    """
    return {case: f"c{i}" for i, case in enumerate(case_ids, start=1)}


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


def _case_views(
    experiment: ExperimentRecord, runs: Sequence[RunRecord | RunSummary], accounting: Accounting
) -> list[_CaseView]:
    anchors = _anchors([c.case for c in accounting.cases])
    by_case: dict[str, dict[int, RunRecord | RunSummary]] = defaultdict(dict)
    for run in runs:
        by_case[run.case_id][run.run_index] = run
    items: dict[str, list[ItemStability]] = defaultdict(list)
    for s in item_stability(runs):
        items[s.case].append(s)
    uses: dict[str | None, list[ToolUse]] = defaultdict(list)
    for u in tool_profile(runs, experiment.tools):
        uses[u.case].append(u)
    views = []
    for account in accounting.cases:
        anchor = anchors[account.case]
        columns = _columns(account, anchor, by_case[account.case])
        view = _CaseView(account, anchor, columns)
        view.groups = _rows(items[account.case], columns)
        view.tools = _tool_rows(uses[account.case], columns)
        views.append(view)
    return views


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
        (RATE_LABEL, t("estimates_pass_at_1", lang), m.pass_at_1, "ci_method_robust"),
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
    keys = {RATE_LABEL: "label_rate", label_at(1): "label_at_1", label_hat(1): "label_hat_1"}
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


def _item_totals(views: Sequence[_CaseView]) -> dict[str, int]:
    """How many items of each verdict over all cases, worst first."""
    totals: dict[str, int] = defaultdict(int)
    for view in views:
        for key, n in view.verdict_counts.items():
            totals[key] += n
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


_REF = "\x00"
"""Starts a reference into the string table; a real string starting with it is doubled."""
_INTERN_MIN = 32
"""Shorter strings are cheaper inline than as a reference."""


def _strings(value: Any, counts: Counter[str]) -> None:
    if isinstance(value, str):
        if len(value) >= _INTERN_MIN:
            counts[value] += 1
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, counts)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, counts)


def _intern(value: Any, counts: Counter[str], table: dict[str, int]) -> Any:
    """`value` with every long string that occurs more than once replaced by a reference."""
    if isinstance(value, dict):
        return {key: _intern(item, counts, table) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_intern(item, counts, table) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else str(value)
    if counts[text] > 1:
        return _REF + str(table.setdefault(text, len(table)))
    return _REF + text if text.startswith(_REF) else text


def _runs_blob(views: Sequence[_CaseView], whole: dict[tuple[str, int], RunRecord]) -> str:
    """Every recorded run's heavy fields, keyed by anchor, for the page's script.

    Runs repeat themselves (the system prompt and the ticket in every run, the
    model's annotations in the transcript, the tool calls and the final state),
    so long repeated strings go into one table, and the JSON is deflated and
    base64-encoded: about a tenth of the raw size.
    """
    runs = {
        col.anchor: _run_data(whole[(v.account.case, col.index)])
        for v in views
        for col in v.columns
        if (v.account.case, col.index) in whole
    }
    counts: Counter[str] = Counter()
    _strings(runs, counts)
    table: dict[str, int] = {}
    packed = _intern(runs, counts, table)
    data = {"strings": list(table), "runs": packed}
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return base64.b64encode(zlib.compress(raw.encode("utf-8"), 9)).decode("ascii")


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


def _per_case_uncertainty(accounting: Accounting, m: int) -> dict[str, dict[str, Any]]:
    """Per case, as the terminal shows it: the Wilson interval of the rate, and the chance
    the next m runs all pass with its credible interval."""
    intervals = {c.case: c for c in case_intervals(accounting, CONFIDENCE)}
    forecasts = {f.case: f for f in forecast(accounting, m, confidence=CONFIDENCE).cases}
    return {case: {"rate": i, "next": forecasts[case]} for case, i in intervals.items()}


def _pages(views: list[_CaseView]) -> list[list[_CaseView]]:
    if len(views) <= PAGED_ABOVE:
        return [views]
    return [views[i : i + PAGE_CASES] for i in range(0, len(views), PAGE_CASES)]


def _whole(
    runs: Sequence[RunRecord | RunSummary], cases: Sequence[str], load: LoadRuns | None
) -> dict[tuple[str, int], RunRecord]:
    """The whole records of the runs of `cases`: from `runs` when they are whole."""
    wanted = set(cases)
    given = [r for r in runs if isinstance(r, RunRecord) and r.case_id in wanted]
    if not given and load is not None and cases:
        given = list(load(cases))
    return {(r.case_id, r.run_index): r for r in given}


def _embedded_runs(
    pages: list[list[_CaseView]], runs: Sequence[RunRecord | RunSummary], load: LoadRuns | None
) -> str:
    """The runs blob: every run on one page; on a paged report, page by page while
    the compressed detail stays within `RUNS_BUDGET`."""
    if len(pages) == 1:
        views = pages[0]
        return _runs_blob(views, _whole(runs, [v.account.case for v in views], load))
    chosen: list[_CaseView] = []
    whole: dict[tuple[str, int], RunRecord] = {}
    size = 0
    for page in pages:
        records = _whole(runs, [v.account.case for v in page], load)
        size += len(_runs_blob(page, records))
        if chosen and size > RUNS_BUDGET:
            break
        chosen.extend(page)
        whole.update(records)
    return _runs_blob(chosen, whole)


def _pages_blob(pages: list[list[_CaseView]], context: dict[str, Any]) -> str:
    """Pages 2.. of a paged report: each page's table rows and case sections, as
    the same template renders them, in one gzip stream (base64), drawn on demand."""
    if len(pages) < 2:
        return ""
    macros = _environment().get_template("_cases.html.j2").make_module(context)
    row, section = macros.case_row, macros.case_section  # type: ignore[attr-defined]
    data = [
        {
            "rows": "".join(str(row(v)) for v in page),
            "sections": "".join(str(section(v)) for v in page),
        }
        for page in pages[1:]
    ]
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(gzip.compress(raw.encode("utf-8"), 9, mtime=0)).decode("ascii")


def _context(
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    lang: str,
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
) -> dict[str, Any]:
    accounting = experiment_accounting(experiment, runs)
    views = _case_views(experiment, runs, accounting)
    pages = _pages(views)
    counted = accounting.runs_counted > 0
    figures, ci_reason = _figures(accounting, lang) if counted else ([], None)
    script, script_hash = _script()
    errored = [r for r in runs if r.status == "errored"]
    missing = [v for v in views if v.account.missing]
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
        "views": views,
        "page_views": pages[0],
        "pages": len(pages),
        "page_cases": PAGE_CASES,
        "list_limit": LIST_LIMIT,
        "views_by_case": {v.account.case: v for v in views},
        "item_totals": _item_totals(views),
        "errored": errored[:LIST_LIMIT],
        "errored_more": max(0, len(errored) - LIST_LIMIT),
        "missing_views": missing[:LIST_LIMIT],
        "missing_more": max(0, len(missing) - LIST_LIMIT),
        "replayed": replayed_runs(runs),
        "per_case": _per_case_uncertainty(accounting, forecast_m) if counted else {},
        "forecast_m": forecast_m,
        "usage": usage_dict(runs, prices),
        "prices": prices,
        "dataset_tools": tool_profile(runs, experiment.tools, per_case=False),
        "labels": script_json(LABELS[lang]),
        "runs_blob": _embedded_runs(pages, runs, load),
        "script": script,
        "script_hash": script_hash,
    }
    context["pages_blob"] = _pages_blob(pages, context)
    return context


def render_html(
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    *,
    lang: str = "en",
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
) -> str:
    """The whole report as one self-contained HTML page.

    Pass whole runs (`store.runs(id)`) so the transcripts are included, or the
    summaries (`store.summaries(id)`) and `load`, which fetches the whole runs of
    the pages whose detail is embedded: a report of 100,000 runs then never holds
    them all. Light runs give the same page with the transcripts left out.
    """
    lang = check_lang(lang)
    template = _environment().get_template("report.html.j2")
    return template.render(_context(experiment, runs, lang, load, prices, forecast_m))


def write_html(
    path: str | Path,
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord | RunSummary],
    *,
    lang: str = "en",
    load: LoadRuns | None = None,
    prices: Prices | None = None,
    forecast_m: int = 10,
) -> Path:
    """Render the report and write it to `path` (UTF-8); return the path."""
    page = render_html(experiment, runs, lang=lang, load=load, prices=prices, forecast_m=forecast_m)
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target
