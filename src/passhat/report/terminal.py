"""Rich tables for the terminal. Every user string enters as `Text`, never as markup.

Every label comes from the catalog in `passhat.report.i18n`, in the `lang` each
function takes (English by default). `passhat.stats` describes its intervals,
notes and verdict in English words; `_phrase` recognises those it knows by the
English catalog entry and says them again in `lang` with the same values, and
leaves any other wording as it was written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from functools import cache

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from passhat.accounting import Accounting, CaseAccount, ErrorLedger, MissingRuns, format_ranges
from passhat.report.i18n import LABELS, t, tn
from passhat.report.loss import loss_line
from passhat.report.table import Fitted, Table
from passhat.stats import CASE_ALPHA, CASE_CORRECTION, Comparison, Difference, Uncertainty
from passhat.usage import TokenUsage

YES, NO = "✓", "✗"


_STATS_PHRASES = (
    "method_bootstrap_widened",  # before "method_bootstrap", whose B would take its tail
    "method_at_k_bounds",
    "method_loss_bounds",
    "share_fitted_one_p",  # before "share_fitted", whose B would take its tail
    "share_basis_fitted",
    "ci_one_case",
    "method_robust",
    "method_bootstrap",
    "method_exact",
    "next_all_pass",
    "share_fitted",
    "share_per_case",
    "share_few_cases",
    "share_one_case",
    "share_no_spread",
    "share_no_pairs",
    "method_floor",
    "method_score_floor",
    "method_score",
    "label_rate",
    "label_case_rate",
    "label_at_1",
    "label_hat_1",
    "prior_jeffreys",
    "prior_uniform",
    "prior_fitted",
    "plan_few_cases",
    "plan_no_repeat",
    "plan_no_spread",
    "plan_no_spread_hat",
    "plan_no_within",
    "note_no_suite_hash",
    "note_suites_differ",
    "cmp_method_flip",
    "cmp_method_case_rate",
    "cmp_method_floor",
    "cmp_method_disagree",
    "mde_no_test",
    "mde_over_100",
)
"""Catalog keys of the English phrases `passhat.stats` writes into its results."""


@cache
def _pattern(key: str) -> re.Pattern[str]:
    """The English label `key` as a regex; each `{placeholder}` captures its value."""
    parts = re.split(r"\{(\w+)\}", LABELS["en"][key])
    seen: set[str] = set()
    regex = re.escape(parts[0])
    for name, text in zip(parts[1::2], parts[2::2], strict=True):
        regex += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
        seen.add(name)
        regex += re.escape(text)
    return re.compile(regex, re.DOTALL)


def _phrase(text: str, lang: str) -> str:
    """A phrase `passhat.stats` wrote in English, said in `lang`; one it does not know
    stays as written (English is always the text itself)."""
    if lang == "en":
        return text
    for key in _STATS_PHRASES:
        match = _pattern(key).fullmatch(text)
        if match:
            values = {name: _phrase(value, lang) for name, value in match.groupdict().items()}
            return t(key, lang, **values)
    return text


def _list(items: list[str] | tuple[str, ...], lang: str) -> str:
    return t("list_sep", lang).join(items)


def shortfall_line(c: CaseAccount, lang: str = "en") -> str:
    """A case short of the plan, naming its runs: `Accounting.shortfalls` in `lang`."""
    parts = []
    if c.missing:
        if isinstance(c.missing, MissingRuns):
            runs = format_ranges(c.missing.ranges(), t("list_sep", lang))
        else:
            runs = _list([str(i) for i in c.missing], lang)
        parts.append(t("missing_run_list", lang, runs=runs))
    if c.errored:
        parts.append(t("errored_run_list", lang, runs=_list([str(i) for i in c.errored], lang)))
    detail = t("sep", lang).join(parts)
    key = "shortfall_case_one" if c.k_requested == 1 else "shortfall_case"
    return t(key, lang, case=c.case, counted=c.counted, k=c.k_requested, detail=detail)


def shortfall_lines(
    accounting: Accounting, lang: str = "en", limit: int | None = None
) -> list[str]:
    """The first `limit` (None: all) cases short of the plan, one line each."""
    lines: list[str] = []
    for c in accounting.cases:
        if limit is not None and len(lines) >= limit:
            break
        if not c.complete:
            lines.append(shortfall_line(c, lang))
    return lines


def _run_counts(a: Accounting, lang: str) -> str:
    return t(
        "run_counts",
        lang,
        requested=a.runs_requested,
        completed=a.runs_completed,
        counted=a.runs_counted,
        errored=a.runs_errored,
        missing=a.runs_missing,
    )


def _flag(value: bool, n: int | None = None) -> Text:
    """✓ or ✗; with `n` (a case short of the plan) the runs it stands on: `✗ n=2`."""
    flag = Text(YES, style="green") if value else Text(NO, style="red")
    return flag if n is None else flag.append(f" n={n}", style="bold yellow")


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _case_row(c: CaseAccount) -> list[Text | str]:
    m = c.metrics
    counted = Text(str(c.counted), style="" if c.complete else "bold yellow")
    if m is None:
        return [Text(c.case), str(c.k_requested), str(c.completed), counted, "–", "–", "–", "–"]
    return [
        Text(c.case),
        str(c.k_requested),
        str(c.completed),
        counted,
        f"{m.passes}/{m.k}",
        f"{m.pass_rate:.2f}",
        _flag(m.pass_at_k, None if c.complete else c.counted),
        _flag(m.pass_hat_k, None if c.complete else c.counted),
    ]


CASE_WIDTH = 40
"""A case id up to this long is never broken across lines in a table; a longer one
folds (it is never cut short)."""


def case_width(cases: Iterable[str]) -> int:
    """The case column's least width: the longest id shown, up to CASE_WIDTH."""
    return min(max((len(c) for c in cases), default=4), CASE_WIDTH)


ROWS_SHOWN = 30
"""Cases listed in a terminal table unless --all is given: a table of 100,000 rows
helps nobody, and rendering it would cost more than computing every figure."""


def panel_title(text: str) -> Text | str:
    """A panel's title as rich reads a str title (markup, emoji codes), given as the
    `Text` rich would make when there is neither: rich's table of emoji codes (4 ms)
    is then not loaded to find none."""
    return text if "[" in text or _EMOJI_CODE.search(text) else Text(text)


_EMOJI_CODE = re.compile(r":\S*?:")
"""What may be an emoji code (rich's `_emoji_replace` matches within these)."""


def shown_cases(accounting: Accounting, limit: int | None) -> list[CaseAccount]:
    """The cases a table lists: those short of the plan first, then the rest, in order.

    Found by scanning only as far as needed (a report asks three times, of 100,000
    cases): the first `limit` short cases, else every short one and the first
    complete ones to fill up."""
    cases = accounting.cases
    if limit is None or len(cases) <= limit:
        return list(cases)
    if limit < 1:
        return []
    short: list[int] = []
    for index, c in enumerate(cases):
        if c.counted != c.k_requested:  # not c.complete, without a property call
            short.append(index)
            if len(short) == limit:
                return [cases[i] for i in short]
    chosen = set(short)
    need = limit - len(short)
    for index in range(len(cases)):
        if need == 0:
            break
        if index not in chosen:
            chosen.add(index)
            need -= 1
    return [cases[i] for i in sorted(chosen)]


def _hidden_note(total: int, shown: int, lang: str) -> str:
    if shown >= total:
        return ""
    return t("more_cases_hidden", lang, more=tn("n_more_case", lang, total - shown))


def metrics_table(
    accounting: Accounting,
    title: str | None = None,
    *,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
) -> Table:
    """Per case requested / completed / counted and the three numbers; a dataset row."""
    d = accounting.dataset()
    m = d.metrics
    cases = shown_cases(accounting, limit)
    # no vertical rules and no edges: the eight columns fit an 80-column terminal
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 0, 0, 0),
        pad_edge=False,
        show_edge=False,
        title=Text(title) if title else None,
        title_justify="left",
        caption=(
            t("table_caption_cases", lang, j=m.j, over=f"{m.pass_at_1:.2f}")
            if m.weighs_cases
            else t("table_caption", lang, j=m.j)
        )
        + _hidden_note(len(accounting.cases), len(cases), lang),
        caption_justify="left",
    )
    for name, justify in [
        (t("case", lang), "left"),
        (t("requested", lang), "right"),
        (t("completed", lang), "right"),
        (t("counted", lang), "right"),
        (t("passes", lang), "right"),
        (t("rate", lang), "right"),
        ("pass@n", "center"),
        ("pass^n", "center"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.columns[0].overflow = "fold"  # a case id is never cut short
    table.columns[0].min_width = case_width(c.case for c in cases)  # nor broken mid-word
    for flags in table.columns[-2:]:
        # `✗ n=2` stays whole; a long dataset label ("pass@1 (mean of per-case rates)")
        # wraps at its spaces instead of pushing the table past the terminal
        flags.min_width = 7
    for c in cases:
        table.add_row(*_case_row(c))
    table.add_section()
    table.add_row(
        Text(t("dataset_row", lang, cases=tn("n_case", lang, m.cases)), style="bold"),
        str(accounting.runs_requested),
        str(accounting.runs_completed),
        str(accounting.runs_counted),
        f"{m.passes}/{m.runs}",
        Text(f"{m.pass_rate:.2f}", style="bold"),
        Text(f"{_phrase(d.label_at, lang)}\n{_pct(m.pass_at_j)}", style="bold"),
        Text(f"{_phrase(d.label_hat, lang)}\n{_pct(m.pass_hat_j)}", style="bold"),
    )
    return table


def plan_not_met_line(
    accounting: Accounting, lang: str = "en", name: Callable[[str], str] | None = None
) -> str:
    """Why the dataset figures are not the planned pass@k / pass^k, in one sentence.

    With j < k the labels differ from the plan's; with j = k the plan fell short only
    because some cases have no counted run at all, and the sentence names that instead
    of contrasting a label with itself."""
    d = accounting.dataset()
    shown = name or (lambda label: _phrase(label, lang))
    if d.j < accounting.k_least:
        at, hat = shown(d.label_at), shown(d.label_hat)
        return t("plan_not_met_line", lang, at=at, hat=hat, k=d.k_requested)
    cases = len(accounting.cases)
    left = len(d.excluded)
    key = "plan_not_met_left_out_one" if left == 1 else "plan_not_met_left_out"
    return t(key, lang, left=left, cases=cases, included=cases - left)


def plan_met_line(accounting: Accounting, lang: str = "en") -> str:
    """Every case counted the runs asked of it: one k, or the k of each group of cases
    when an adaptive rule asked them different k."""
    if not accounting.k_varies:
        return t("plan_met_line", lang, runs=tn("n_counted_run", lang, accounting.k_requested))
    held = [
        t("held_k", lang, k=k, cases=tn("n_case", lang, n)) for k, n in accounting.held().items()
    ]
    return t("plan_met_varied", lang, held=_list(held, lang))


def accounting_panel(
    accounting: Accounting,
    *,
    k_inferred: bool = False,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
    replayed: int = 0,
) -> Panel:
    """Requested / completed / counted / errored / missing, and a warning on shortfall.

    `replayed` runs took their model answers from a cassette: the banner says so, since
    they say nothing about the model's variance."""
    a = accounting
    d = a.dataset()
    title = t("accounting", lang)
    asked = (
        t("requested_k_varied", lang, least=a.k_least, most=a.k_requested)
        if a.k_varies
        else t("requested_k_is", lang, k=a.k_requested)
    )
    head = Text.assemble(
        asked,
        t("k_inferred_hint", lang) if k_inferred else "",
        "  ·  " + _run_counts(a, lang),
    )
    replayed_line = t("replayed_line", lang, runs=tn("n_run", lang, replayed))
    replay = [Text(replayed_line, "yellow")] if replayed else []
    varied = [Text(t("k_varies_note", lang), "yellow")] if a.k_varies else []
    if d.complete:
        met = Text(plan_met_line(a, lang), "green")
        return Panel(
            Group(head, met, *varied, *replay),
            title=panel_title(title),
            border_style="green",
            title_align="left",
        )
    lines: list[Text] = [head, *varied, *replay]
    lines.append(
        Text(
            plan_not_met_line(a, lang),
            style="bold yellow",
        )
    )
    listed = shortfall_lines(a, lang, limit)
    lines.extend(Text("  " + line) for line in listed)
    short = sum(1 for c in a.cases if not c.complete)
    if len(listed) < short:
        more = tn("n_more_case", lang, short - len(listed))
        lines.append(Text("  " + t("more_short", lang, more=more)))
    if d.excluded:
        excluded = d.excluded if limit is None else d.excluded[:limit]
        more = (
            t("and_more", lang, n=f"{len(d.excluded) - len(excluded):,}")
            if len(excluded) < len(d.excluded)
            else ""
        )
        left_out = t("left_out", lang) + t("colon", lang) + _list(excluded, lang) + more
        lines.append(Text(left_out, style="yellow"))
    return Panel(Group(*lines), title=panel_title(title), border_style="yellow", title_align="left")


def print_metrics(
    console: Console,
    accounting: Accounting,
    *,
    k_inferred: bool = False,
    title: str | None = None,
    uncertainty: Uncertainty | None = None,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
    replayed: int = 0,
) -> None:
    """The figures, then (when given) their intervals and forecasts, then the accounting.

    At most `limit` cases are listed (None: all); the dataset figures cover every case."""
    if title:  # printed whole above the table: a long path must not wrap inside it
        console.print(Text(title, style="bold"), soft_wrap=True)
    console.print(Fitted(metrics_table(accounting, limit=limit, lang=lang)))
    if uncertainty is not None:
        shown = {c.case for c in shown_cases(accounting, limit)}
        print_uncertainty(console, uncertainty, shown=shown, lang=lang)
    console.print(
        accounting_panel(
            accounting, k_inferred=k_inferred, limit=limit, lang=lang, replayed=replayed
        )
    )


def _span(low: float | None, high: float | None, lang: str = "en") -> str:
    if low is None or high is None:
        return t("no_interval", lang)
    return f"{low * 100:.1f}–{high * 100:.1f}%"


def _small(value: float) -> str:
    """A probability that may be tiny: percent with one decimal, or '<0.1%'."""
    return "<0.1%" if 0 < value < 0.0005 else _pct(value)


def dataset_intervals_table(u: Uncertainty, *, lang: str = "en") -> Table | Text:
    """The dataset figures with their intervals, and the forecast share."""
    conf = f"{u.confidence:.0%}"
    if u.dataset is None:
        note = _phrase(u.dataset_note or "", lang)
        return Text(t("intervals_note", lang, note=note), style="yellow")
    d = u.dataset
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=t("intervals_title", lang, conf=conf, cases=d.cases),
        title_justify="left",
        caption=Text(
            t("intervals_caption", lang) + (t("intervals_rough", lang) if d.cases < 10 else "")
        ),
        caption_justify="left",
    )
    table.add_column(t("figure", lang))
    table.add_column(t("estimate", lang), justify="right")
    table.add_column(t("interval", lang, conf=conf), justify="right")
    table.add_column(t("method", lang))
    boot = d.pass_at_1_bootstrap
    same = (boot.low, boot.high, boot.method) == (
        d.pass_at_1.low,
        d.pass_at_1.high,
        d.pass_at_1.method,
    )
    # the headline pass rate (its two methods), then the pass rate over runs when cases
    # counted different runs (the headline is then the mean of per-case rates)
    rows = (
        (d.pass_at_1,)
        + (() if same else (boot,))
        + (() if d.over_runs is None else (d.over_runs,))
        + (d.pass_at_j, d.pass_hat_j)
    )
    for i in rows:  # both pass-rate methods fell back to one floor: one row, not two alike
        table.add_row(
            _phrase(i.label, lang),
            _pct(i.estimate),
            _span(i.low, i.high),
            _phrase(i.method, lang),
        )
    if d.bounds is not None:
        for i in d.bounds[: 1 if d.j == 1 else 3]:  # at j = 1 the three are one mean
            label = t("loss_row", lang, label=_phrase(i.label, lang))
            table.add_row(label, _pct(i.estimate), _span(i.low, i.high), _phrase(i.method, lang))
    if d.at_requested is not None:
        for i in d.at_requested:
            label = t(
                "at_requested_every",
                lang,
                label=i.label,
                cases=tn("n_case", lang, d.requested_cases),
                k=i.label[len("pass@") :],
                left=d.requested_left_out,
            )
            table.add_row(label, _pct(i.estimate), _span(i.low, i.high), _phrase(i.method, lang))
    s = u.forecast.share
    table.add_section()
    table.add_row(
        t("share_of", lang, label=_phrase(s.label, lang)),
        _pct(s.estimate),
        _span(s.low, s.high, lang),
        _phrase(s.note, lang) if s.note else _phrase(s.method, lang),
    )
    return table


def ledger_panel(ledger: ErrorLedger, *, lang: str = "en") -> Panel:
    """The denominator ledger: each headline figure with the runs not counted (errored or
    missing) left out, as failures and as passes; a warning when they sit in low-pass cases."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False)
    table.add_column(t("figure", lang))
    for key in ("ledger_excluded", "ledger_failures", "ledger_passes"):
        table.add_column(t(key, lang), justify="right")
    for r in ledger.rows:
        table.add_row(
            _phrase(r.label, lang), _pct(r.excluded), _pct(r.as_failures), _pct(r.as_passes)
        )
    errored = tn("n_errored_run", lang, ledger.errored)
    if ledger.missing:
        missing = tn("n_missing_run", lang, ledger.missing)
        both = t("ledger_and_missing", lang, errored=errored, missing=missing)
        errored = both if ledger.errored else missing
    head = Text(t("ledger_head", lang, errored=errored, cases=tn("n_case", lang, ledger.cases)))
    parts: list[Text | Table] = [head, table]
    style = "yellow"
    if ledger.concentrated and ledger.rate_where_errored is not None and ledger.z is not None:
        warning = t(
            "ledger_warning",
            lang,
            where=_pct(ledger.rate_where_errored),
            overall=_pct(ledger.rate_where_completed),
            z=f"{ledger.z:.1f}",
            figures=_list([_phrase(r.label, lang) for r in ledger.rows if r.weighs_runs], lang),
        )
        parts.append(Text(warning, style="bold red"))
        style = "red"
    return Panel(
        Group(*parts),
        title=panel_title(t("ledger_title", lang)),
        border_style=style,
        title_align="left",
    )


def case_forecast_table(
    u: Uncertainty, shown: set[str] | None = None, *, lang: str = "en"
) -> Table:
    """Per case: the Wilson interval of the rate and the chance the next m runs all pass.

    `shown` limits the rows to those cases (the expected share still covers all)."""
    f = u.forecast
    conf = f"{u.confidence:.0%}"
    caption = t(
        "forecast_caption",
        lang,
        m=f.m,
        prior=_phrase(f.prior_name, lang),
        alpha=f"{1 - u.confidence:.2g}",
    )
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=t("forecast_title_one" if f.m == 1 else "forecast_title", lang, m=f.m),
        title_justify="left",
        caption=Text(caption),
        caption_justify="left",
    )
    shown_ids = [c.case for c in u.cases if shown is None or c.case in shown]
    table.add_column(t("case", lang), overflow="fold", min_width=case_width(shown_ids))
    table.add_column(t("passes", lang), justify="right")
    # the headers wrap to the width of the values (`0.0–56.1%`), so the row fits 80 columns
    for header, width in [
        (t("rate_wilson", lang, conf=conf), 12),
        (t("p_next_pass", lang, m=f.m), 11),
        (t("credible", lang, conf=conf), 12),
    ]:
        table.add_column(header, justify="right", max_width=width, overflow="fold")
    table.add_column(t("nn_bound", lang), overflow="fold")
    forecasts = {c.case: c for c in f.cases}
    for c in u.cases:
        if shown is not None and c.case not in shown:
            continue
        fc = forecasts[c.case]
        bound = ""
        if c.bound is not None:
            what = "bound_fail" if c.passes == c.runs else "bound_pass"
            bound = t(what, lang, pct=_pct(c.bound))
        table.add_row(
            Text(c.case),
            f"{c.passes}/{c.runs}",
            _span(c.low, c.high),
            _small(fc.expected),
            f"{_small(fc.low)}–{_small(fc.high)}",
            bound,
        )
    table.add_section()
    s = f.share
    table.add_row(
        Text(t("expected_share", lang), style="bold"),
        "",
        "",
        Text(_pct(s.estimate), style="bold"),
        _span(s.low, s.high, lang),
        _phrase(s.basis, lang),  # its prior, which need not be the column's
    )
    return table


def _pts(value: float, lang: str, spec: str = "+.1f") -> str:
    """Percentage points: `+3.5 pts`."""
    return t("pts", lang, value=format(value * 100, spec))


def plans_panel(u: Uncertainty, *, lang: str = "en") -> Panel | None:
    """How many runs per case, or cases, reach the target half-width."""
    if not (u.plans or u.plan_notes):
        return None
    lines: list[Text] = []
    for p in u.plans:
        head = t(
            "plan_head",
            lang,
            label=p.label,
            now=f"{p.half_width * 100:.1f}",
            cases=p.cases,
            runs=f"{p.runs_per_case:.3g}",
            target=f"{p.target * 100:.1f}",
            conf=f"{p.confidence:.0%}",
        )
        lines.append(Text(head, style="bold"))
        if p.runs_needed is not None:
            key = "plan_runs_one" if p.runs_needed == 1 else "plan_runs"
            lines.append(Text("  " + t(key, lang, runs=p.runs_needed, cases=p.cases)))
        else:
            lines.append(Text("  " + t("plan_no_runs", lang, cases=p.cases)))
        lines.append(Text("  " + t("plan_cases", lang, needed=p.cases_needed, floor=p.cases_floor)))
    lines.extend(Text(_plan_note(note, lang), style="yellow") for note in u.plan_notes)
    return Panel(Group(*lines), title=panel_title(t("plan_title", lang)), title_align="left")


def _plan_note(note: str, lang: str) -> str:
    """`pass@1: <why no plan>`: the figure stays, the reason is said in `lang`."""
    label, colon, reason = note.partition(": ")
    if not colon:
        return _phrase(note, lang)
    return label + t("colon", lang) + _phrase(reason, lang)


def print_uncertainty(
    console: Console, u: Uncertainty, shown: set[str] | None = None, *, lang: str = "en"
) -> None:
    """Dataset intervals, per-case forecast (of the `shown` cases) and plans."""
    console.print(Fitted(dataset_intervals_table(u, lang=lang)))
    line = loss_line(u, lang, _phrase)
    if line is not None:
        console.print(Text(line, style="bold yellow"))
    console.print(Fitted(case_forecast_table(u, shown, lang=lang)))
    if u.ledger is not None:
        console.print(ledger_panel(u.ledger, lang=lang))
    panel = plans_panel(u, lang=lang)
    if panel is not None:
        console.print(panel)


def _side_line(
    name: str, source: str, a: Accounting, k_inferred: bool, lang: str, limit: int | None = None
) -> list[Text]:
    """A side's counts, then its first `limit` (None: all) cases short of the plan."""
    head = Text.assemble(
        (f"{name} ", "bold"),
        Text(source),
        t("colon", lang) + t("requested_k_is", lang, k=a.k_requested),
        t("k_inferred", lang) if k_inferred else "",
        t("sep", lang) + _run_counts(a, lang),
    )
    lines = [head]
    listed = shortfall_lines(a, lang, limit)
    lines.extend(Text("    " + line, style="yellow") for line in listed)
    if limit is not None and len(listed) == limit:
        short = sum(1 for c in a.cases if not c.complete)
        if short > limit:
            more = tn("n_more_case", lang, short - limit)
            lines.append(Text("    " + t("more_short_all", lang, more=more), style="yellow"))
    return lines


def _names_line(names: tuple[str, ...], lang: str, limit: int | None) -> str:
    """`names` joined, the first `limit` (None: all) of them and how many more."""
    shown = names if limit is None else names[:limit]
    more = len(names) - len(shown)
    return _list(shown, lang) + (t("and_more", lang, n=f"{more:,}") if more else "")


def comparison_panel(
    c: Comparison,
    *,
    source_a: str = "",
    source_b: str = "",
    k_inferred_a: bool = False,
    k_inferred_b: bool = False,
    lang: str = "en",
    limit: int | None = None,
) -> Panel:
    """Both sides' accounting and how the cases were paired; each list of cases (short
    of the plan, on one side only) names its first `limit` (None: all)."""
    lines = _side_line("A", source_a, c.a, k_inferred_a, lang, limit) + _side_line(
        "B", source_b, c.b, k_inferred_b, lang, limit
    )
    lines.append(Text(t("paired", lang, n=len(c.cases))))
    colon = t("colon", lang)
    for key, names in [
        ("only_in_a", c.only_a),
        ("only_in_b", c.only_b),
        ("one_side_uncounted", c.left_out),
    ]:
        if names:
            line = t(key, lang) + colon + str(len(names)) + colon + _names_line(names, lang, limit)
            lines.append(Text(line, style="yellow"))
    lines.extend(Text(_phrase(note, lang), style="yellow") for note in c.notes)
    shortfall = not (c.a.complete and c.b.complete) or c.only_a or c.only_b or c.left_out
    style = "yellow" if shortfall else "green"
    return Panel(
        Group(*lines),
        title=panel_title(t("accounting", lang)),
        border_style=style,
        title_align="left",
    )


def differences_table(c: Comparison, *, lang: str = "en") -> Table:
    """B - A on the dataset figures, each with interval, p-value and MDE."""
    d0 = c.pass_at_1
    conf = f"{d0.confidence:.0%}"
    rows = (c.pass_at_1, c.pass_at_j, c.pass_hat_j)
    caption = t(
        "diff_caption",
        lang,
        j=c.j,
        ka=c.a.k_requested,
        kb=c.b.k_requested,
        resamples=f"{2 ** len(c.cases):,}" if d0.exact else c.resamples,
        flips=t("every_flip", lang) if d0.exact else "",
        method=interval_methods(rows, lang),
    )
    if any(d.mde_note is not None for d in rows):
        caption += t("mde_none", lang)
    caption += t("mde_at_power", lang, power=f"{d0.power:.0%}")
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=t("diff_title", lang, cases=len(c.cases)),
        title_justify="left",
        caption=Text(caption),
        caption_justify="left",
    )
    names = [t("figure", lang), "A", "B", "B − A", t("interval", lang, conf=conf), "p", "MDE"]
    for i, name in enumerate(names):
        table.add_column(name, justify="left" if i == 0 else "right")
    for d in (c.pass_at_1, c.pass_at_j, c.pass_hat_j):
        mark = "bold" if d.label == c.verdict.metric else ""
        table.add_row(
            Text(_phrase(d.label, lang), style=mark),
            _pct(d.a),
            _pct(d.b),
            Text(_pts(d.difference, lang), style=mark),
            t("range", lang, low=f"{d.low * 100:+.1f}", high=f"{d.high * 100:+.1f}"),
            f"{d.p_value:.3g}",
            "–" if d.mde_note is not None else _pts(d.mde, lang, ".1f"),
        )
    return table


def interval_methods(rows: Iterable[Difference], lang: str = "en") -> str:
    """How the rows' intervals were found: one method named once, or each with its rows,
    so the caption names exactly the methods the JSON's `method` fields give."""
    by_method: dict[str, list[str]] = {}
    for d in rows:
        by_method.setdefault(d.method, []).append(_phrase(d.label, lang))
    if len(by_method) == 1:
        return _phrase(next(iter(by_method)), lang)
    return t("sep", lang).join(
        t("method_for", lang, labels=t("list_sep", lang).join(labels), method=_phrase(m, lang))
        for m, labels in by_method.items()
    )


CASES_SHOWN = 20


def case_differences_table(
    c: Comparison, limit: int = CASES_SHOWN, *, lang: str = "en"
) -> Table | Text:
    """The paired cases whose pass rate moved, largest drops first."""
    moved = sorted((x for x in c.cases if x.difference != 0), key=lambda x: x.difference)
    if not moved:
        return Text(t("no_case_moved", lang))
    shown = moved if len(moved) <= limit else moved[: limit // 2] + moved[-(limit - limit // 2) :]
    hidden = len(moved) - len(shown)
    caption = t("passes_over_counted", lang)
    if hidden:
        caption += t("more_in_json", lang, n=hidden)
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=t("moved_title", lang, moved=len(moved), cases=len(c.cases)),
        title_justify="left",
        caption=Text(caption),
        caption_justify="left",
    )
    names = [t("case", lang), "A", "B", t("delta_rate", lang), t("case_q", lang)]
    for i, name in enumerate(names):
        table.add_column(name, justify="left" if i == 0 else "right")
    for x in shown:
        style = "red" if x.difference < 0 else "green"
        marked = "bold " + style if x.outcome != "none" else ""
        table.add_row(
            Text(x.case),
            f"{x.passes_a}/{x.runs_a}",
            f"{x.passes_b}/{x.runs_b}",
            Text(_pts(x.difference, lang, "+.0f"), style=style),
            Text(f"{x.q_value:.3g}" + (" *" if x.outcome != "none" else ""), style=marked),
        )
    return table


def case_tests_note(lang: str = "en", correction: str = CASE_CORRECTION) -> str:
    """How the per-case q column was found: the test and the multiple-testing correction."""
    return t("case_tests_caption", lang, correction=correction, alpha=f"{CASE_ALPHA:g}")


def _verdict_words(c: Comparison, chosen: Difference, lang: str) -> str:
    """The verdict `passhat.stats` words, from its numbers, in `lang`."""
    v = c.verdict
    cases = len(c.cases)
    evidence = t(
        "verdict_evidence",
        lang,
        label=_phrase(chosen.label, lang),
        diff=_pts(chosen.difference, lang),
        conf=f"{chosen.confidence:.0%}",
        low=_pts(chosen.low, lang),
        high=_pts(chosen.high, lang),
        p=f"{chosen.p_value:.3g}",
        cases=cases,
    )
    if v.outcome != "none":
        return t(f"verdict_{v.outcome}", lang, evidence=evidence)
    power = f"{chosen.power:.0%}"
    if chosen.mde_note is not None:
        why = _phrase(chosen.mde_note, lang)
        text = t("verdict_undetectable", lang, cases=cases, why=why, evidence=evidence)
    else:
        mde = _pts(abs(chosen.mde), lang, ".1f")
        text = t("verdict_none", lang, mde=mde, power=power, evidence=evidence)
    if v.cases_needed is None:
        return text
    runs = [x.runs_a for x in c.cases] + [x.runs_b for x in c.cases]
    each = math.ceil(sum(runs) / len(runs))  # a plan is in whole runs
    text += t(
        "verdict_to_detect",
        lang,
        diff=_pts(chosen.difference, lang),
        power=power,
        needed=v.cases_needed,
        runs_n=tn("n_run", lang, each),
    )
    if v.runs_needed is not None:
        runs_n = tn("n_run", lang, v.runs_needed)
        text += t("verdict_or_runs", lang, runs_n=runs_n, cases=cases)
    elif chosen.label == "pass rate (over runs)":
        text += t("verdict_runs_cannot", lang)
    return text + t("period", lang)


def verdict_sentence(c: Comparison, lang: str = "en") -> str:
    """The verdict in `lang`. The English words are rebuilt from the numbers and must equal
    the verdict's own text; a wording this module does not know is shown as written."""
    for d in (c.pass_at_1, c.pass_at_j, c.pass_hat_j):
        if d.label == c.verdict.metric and _verdict_words(c, d, "en") == c.verdict.text:
            return c.verdict.text if lang == "en" else _verdict_words(c, d, lang)
    return c.verdict.text


def verdict_text(c: Comparison, *, lang: str = "en") -> Text:
    style = {"better": "bold green", "worse": "bold red", "none": "bold yellow"}
    return Text(verdict_sentence(c, lang), style=style[c.verdict.outcome])


def usage_line(a: TokenUsage | None, b: TokenUsage | None, lang: str = "en") -> str | None:
    """Cost per run of each side and B - A, beside the quality difference; tokens per run
    when no price was given; None unless both sides are experiments that used tokens."""
    if a is None or b is None or not (a.tokens or b.tokens or a.cost is not None):
        return None
    cost_a, cost_b = a.per_run(a.cost), b.per_run(b.cost)
    if cost_a is not None and cost_b is not None:
        change = f" ({(cost_b - cost_a) / cost_a:+.0%})" if cost_a else ""
        return t(
            "cost_compare",
            lang,
            a=f"{cost_a:.4g}",
            b=f"{cost_b:.4g}",
            diff=f"{cost_b - cost_a:+.4g}{change}",
        )
    tokens_a, tokens_b = a.per_run(a.tokens) or 0.0, b.per_run(b.tokens) or 0.0
    change = f" ({(tokens_b - tokens_a) / tokens_a:+.0%})" if tokens_a else ""
    return t(
        "tokens_compare",
        lang,
        a=f"{tokens_a:,.0f}",
        b=f"{tokens_b:,.0f}",
        diff=f"{tokens_b - tokens_a:+,.0f}{change}",
    )


def print_comparison(
    console: Console,
    c: Comparison,
    *,
    source_a: str = "",
    source_b: str = "",
    k_inferred_a: bool = False,
    k_inferred_b: bool = False,
    lang: str = "en",
    usage: str | None = None,
    limit: int | None = ROWS_SHOWN,
) -> None:
    """Accounting, figures (and the cost beside them), moved cases and the verdict. With
    a `limit` the lists of cases name that many (the moved cases, CASES_SHOWN); None
    (`compare --all`) lists every case."""
    console.print(
        comparison_panel(
            c,
            source_a=source_a,
            source_b=source_b,
            k_inferred_a=k_inferred_a,
            k_inferred_b=k_inferred_b,
            lang=lang,
            limit=limit,
        )
    )
    console.print(Fitted(differences_table(c, lang=lang)))
    if usage:
        console.print(Text(usage, style="bold"))
    moved = CASES_SHOWN if limit is not None else len(c.cases)
    console.print(Fitted(case_differences_table(c, moved, lang=lang)))
    console.print(Text(case_tests_note(lang, c.correction)))
    console.print(verdict_text(c, lang=lang))
