"""The intervals of one experiment on the terminal: the dataset figures, the per-case
forecast, the error ledger and the plans panel (`print_uncertainty`).
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from passhat.accounting import ErrorLedger
from passhat.report.i18n import t, tn
from passhat.report.loss import loss_line
from passhat.report.table import Fitted, Table, titled_table
from passhat.report.terminal.phrases import _list, _pct, _phrase, case_width, panel_title
from passhat.stats import Uncertainty


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
    table = titled_table(
        t("intervals_title", lang, conf=conf, cases=d.cases),
        Text(t("intervals_caption", lang) + (t("intervals_rough", lang) if d.cases < 10 else "")),
        padding=(0, 1, 0, 0),
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
    table = titled_table(
        t("forecast_title_one" if f.m == 1 else "forecast_title", lang, m=f.m),
        Text(caption),
        padding=(0, 1, 0, 0),
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
