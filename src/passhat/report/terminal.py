"""Rich tables for the terminal. Every user string enters as `Text`, never as markup."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from passhat.accounting import Accounting, CaseAccount
from passhat.stats import Comparison, Uncertainty

YES, NO = "✓", "✗"


def _flag(value: bool) -> Text:
    return Text(YES, style="green") if value else Text(NO, style="red")


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
        _flag(m.pass_at_k),
        _flag(m.pass_hat_k),
    ]


ROWS_SHOWN = 30
"""Cases listed in a terminal table unless --all is given: a table of 100,000 rows
helps nobody, and rendering it would cost more than computing every figure."""


def shown_cases(accounting: Accounting, limit: int | None) -> list[CaseAccount]:
    """The cases a table lists: those short of the plan first, then the rest, in order."""
    if limit is None or len(accounting.cases) <= limit:
        return list(accounting.cases)
    short = [c for c in accounting.cases if not c.complete]
    rest = [c for c in accounting.cases if c.complete]
    chosen = {id(c) for c in (short + rest)[:limit]}
    return [c for c in accounting.cases if id(c) in chosen]


def _hidden_note(total: int, shown: int) -> str:
    if shown >= total:
        return ""
    return f"; {total - shown:,} more cases not listed (--all lists every case, --json has all)"


def metrics_table(
    accounting: Accounting, title: str | None = None, *, limit: int | None = ROWS_SHOWN
) -> Table:
    """Per case requested / completed / counted and the three numbers; a dataset row."""
    d = accounting.dataset()
    m = d.metrics
    cases = shown_cases(accounting, limit)
    table = Table(
        title=Text(title) if title else None,
        title_justify="left",
        caption=f"n = each case's counted runs; the dataset row uses j = {m.j}, "
        "which every included case reaches" + _hidden_note(len(accounting.cases), len(cases)),
        caption_justify="left",
    )
    for name, justify in [
        ("case", "left"),
        ("requested", "right"),
        ("completed", "right"),
        ("counted", "right"),
        ("passes", "right"),
        ("rate", "right"),
        ("pass@n", "center"),
        ("pass^n", "center"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for c in cases:
        table.add_row(*_case_row(c))
    table.add_section()
    table.add_row(
        Text(f"dataset ({m.cases} cases)", style="bold"),
        str(accounting.runs_requested),
        str(accounting.runs_completed),
        str(accounting.runs_counted),
        f"{m.passes}/{m.runs}",
        Text(f"{m.pass_at_1:.2f}", style="bold"),
        Text(f"{d.label_at} {_pct(m.pass_at_j)}", style="bold"),
        Text(f"{d.label_hat} {_pct(m.pass_hat_j)}", style="bold"),
    )
    return table


def accounting_panel(
    accounting: Accounting, *, k_inferred: bool = False, limit: int | None = ROWS_SHOWN
) -> Panel:
    """Requested / completed / counted / errored / missing, and a warning on shortfall."""
    a = accounting
    d = a.dataset()
    head = Text.assemble(
        f"requested k = {a.k_requested}",
        " (inferred from the largest run index; pass --k to state it)" if k_inferred else "",
        f"  ·  runs requested {a.runs_requested}, completed {a.runs_completed}, "
        f"counted {a.runs_counted}, errored {a.runs_errored}, missing {a.runs_missing}",
    )
    if d.complete:
        body = Group(head, Text(f"Plan met: every case has {a.k_requested} counted runs.", "green"))
        return Panel(body, title="accounting", border_style="green", title_align="left")
    lines: list[Text] = [head]
    lines.append(
        Text(
            f"Plan NOT met: dataset figures are {d.label_at} / {d.label_hat}, "
            f"not pass@{a.k_requested} / pass^{a.k_requested}.",
            style="bold yellow",
        )
    )
    shortfalls = a.shortfalls()
    listed = shortfalls if limit is None else shortfalls[:limit]
    lines.extend(Text("  " + line) for line in listed)
    if len(listed) < len(shortfalls):
        lines.append(
            Text(f"  ... and {len(shortfalls) - len(listed):,} more cases short of the plan")
        )
    if d.excluded:
        excluded = d.excluded if limit is None else d.excluded[:limit]
        more = (
            f" and {len(d.excluded) - len(excluded):,} more"
            if len(excluded) < len(d.excluded)
            else ""
        )
        lines.append(
            Text("left out (no counted run): " + ", ".join(excluded) + more, style="yellow")
        )
    return Panel(Group(*lines), title="accounting", border_style="yellow", title_align="left")


def print_metrics(
    console: Console,
    accounting: Accounting,
    *,
    k_inferred: bool = False,
    title: str | None = None,
    uncertainty: Uncertainty | None = None,
    limit: int | None = ROWS_SHOWN,
) -> None:
    """The figures, then (when given) their intervals and forecasts, then the accounting.

    At most `limit` cases are listed (None: all); the dataset figures cover every case."""
    console.print(metrics_table(accounting, title, limit=limit))
    if uncertainty is not None:
        shown = {c.case for c in shown_cases(accounting, limit)}
        print_uncertainty(console, uncertainty, shown=shown)
    console.print(accounting_panel(accounting, k_inferred=k_inferred, limit=limit))


def _span(low: float, high: float) -> str:
    return f"{low * 100:.1f}–{high * 100:.1f}%"


def _small(value: float) -> str:
    """A probability that may be tiny: percent with one decimal, or '<0.1%'."""
    return "<0.1%" if 0 < value < 0.0005 else _pct(value)


def dataset_intervals_table(u: Uncertainty) -> Table | Text:
    """The dataset figures with their intervals, and the forecast share."""
    conf = f"{u.confidence:.0%}"
    if u.dataset is None:
        return Text(f"intervals: {u.dataset_note}", style="yellow")
    d = u.dataset
    table = Table(
        title=f"How sure? {conf} intervals over {d.cases} cases",
        title_justify="left",
        caption=Text(
            "Intervals describe a new draw of cases like these, each run as often; "
            "the runs of one case stay together."
            + (" With under 10 cases they are rough." if d.cases < 10 else "")
        ),
        caption_justify="left",
    )
    table.add_column("figure")
    table.add_column("estimate", justify="right")
    table.add_column(f"{conf} interval", justify="right")
    table.add_column("method")
    for i in (d.pass_at_1, d.pass_at_1_bootstrap, d.pass_at_j, d.pass_hat_j):
        table.add_row(i.label, _pct(i.estimate), _span(i.low, i.high), i.method)
    s = u.forecast.share
    table.add_section()
    table.add_row(
        f"share: {s.label}", _pct(s.estimate), _span(s.low, s.high), f"credible; {s.method}"
    )
    return table


def case_forecast_table(u: Uncertainty, shown: set[str] | None = None) -> Table:
    """Per case: the Wilson interval of the rate and the chance the next m runs all pass.

    `shown` limits the rows to those cases (the expected share still covers all)."""
    f = u.forecast
    conf = f"{u.confidence:.0%}"
    table = Table(
        title=f"Per case: rate interval and forecast of the next {f.m} runs",
        title_justify="left",
        caption=Text(
            f"P(next {f.m} all pass) = E[p^{f.m}] under a {f.prior_name} prior. "
            f"n of n passed: the failure rate is below 1 - {1 - u.confidence:.2g}^(1/n), "
            "one-sided (the rule of three: about 3/n at 95 %)."
        ),
        caption_justify="left",
    )
    table.add_column("case")
    table.add_column("passes", justify="right")
    table.add_column(f"rate {conf} (Wilson)", justify="right")
    table.add_column(f"P(next {f.m} pass)", justify="right")
    table.add_column(f"{conf} credible", justify="right")
    table.add_column("n/n bound", no_wrap=True)
    forecasts = {c.case: c for c in f.cases}
    for c in u.cases:
        if shown is not None and c.case not in shown:
            continue
        fc = forecasts[c.case]
        bound = ""
        if c.bound is not None:
            what = "fail" if c.passes == c.runs else "pass"
            bound = f"{what} < {_pct(c.bound)}"
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
        Text("expected share", style="bold"),
        "",
        "",
        Text(_pct(s.estimate), style="bold"),
        _span(s.low, s.high),
        "",
    )
    return table


def plans_panel(u: Uncertainty) -> Panel | None:
    """How many runs per case, or cases, reach the target half-width."""
    if not (u.plans or u.plan_notes):
        return None
    lines: list[Text] = []
    for p in u.plans:
        lines.append(
            Text(
                f"{p.label}: about ±{p.half_width * 100:.1f} pts now ({p.cases} cases, "
                f"{p.runs_per_case:.3g} runs each); for ±{p.target * 100:.1f} pts "
                f"at {p.confidence:.0%}:",
                style="bold",
            )
        )
        if p.runs_needed is not None:
            lines.append(Text(f"  {p.runs_needed} runs per case on these {p.cases} cases, or"))
        else:
            lines.append(Text(f"  no number of runs on these {p.cases} cases gets there;"))
        lines.append(
            Text(
                f"  {p.cases_needed} cases at the current runs "
                f"(at least {p.cases_floor} cases, however many runs)"
            )
        )
    lines.extend(Text(note, style="yellow") for note in u.plan_notes)
    return Panel(Group(*lines), title="plan", title_align="left")


def print_uncertainty(console: Console, u: Uncertainty, shown: set[str] | None = None) -> None:
    """Dataset intervals, per-case forecast (of the `shown` cases) and plans."""
    console.print(dataset_intervals_table(u))
    console.print(case_forecast_table(u, shown))
    panel = plans_panel(u)
    if panel is not None:
        console.print(panel)


def _side_line(name: str, source: str, a: Accounting, k_inferred: bool) -> list[Text]:
    head = Text.assemble(
        (f"{name} ", "bold"),
        Text(source),
        f": requested k = {a.k_requested}",
        " (inferred from the largest run index)" if k_inferred else "",
        f"; runs requested {a.runs_requested}, completed {a.runs_completed}, "
        f"counted {a.runs_counted}, errored {a.runs_errored}, missing {a.runs_missing}",
    )
    lines = [head]
    lines.extend(Text("    " + line, style="yellow") for line in a.shortfalls())
    return lines


def comparison_panel(
    c: Comparison,
    *,
    source_a: str = "",
    source_b: str = "",
    k_inferred_a: bool = False,
    k_inferred_b: bool = False,
) -> Panel:
    """Both sides' accounting and how the cases were paired."""
    lines = _side_line("A", source_a, c.a, k_inferred_a) + _side_line(
        "B", source_b, c.b, k_inferred_b
    )
    lines.append(Text(f"paired: {len(c.cases)} cases with counted runs on both sides"))
    for label, names in [
        ("only in A (left out)", c.only_a),
        ("only in B (left out)", c.only_b),
        ("no counted run on one side (left out)", c.left_out),
    ]:
        if names:
            lines.append(Text(f"{label}: {len(names)}: " + ", ".join(names), style="yellow"))
    lines.extend(Text(note, style="yellow") for note in c.notes)
    shortfall = not (c.a.complete and c.b.complete) or c.only_a or c.only_b or c.left_out
    style = "yellow" if shortfall else "green"
    return Panel(Group(*lines), title="accounting", border_style=style, title_align="left")


def differences_table(c: Comparison) -> Table:
    """B - A on the dataset figures, each with interval, p-value and MDE."""
    d0 = c.pass_at_1
    conf = f"{d0.confidence:.0%}"
    caption = (
        f"pass@{c.j} / pass^{c.j}: the largest j every paired case reaches on both sides "
        f"(A requested {c.a.k_requested}, B requested {c.b.k_requested}). Interval: paired "
        f"cluster bootstrap, B = {c.resamples}; p: sign-flip permutation"
        + (" (every flip enumerated)" if d0.exact else "")
        + f"; MDE at {d0.power:.0%} power."
    )
    table = Table(
        title=f"B − A over {len(c.cases)} paired cases",
        title_justify="left",
        caption=Text(caption),
        caption_justify="left",
    )
    for name in ["figure", "A", "B", "B − A", f"{conf} interval", "p", "MDE"]:
        table.add_column(name, justify="left" if name == "figure" else "right")
    for d in (c.pass_at_1, c.pass_at_j, c.pass_hat_j):
        mark = "bold" if d.label == c.verdict.metric else ""
        table.add_row(
            Text(d.label, style=mark),
            _pct(d.a),
            _pct(d.b),
            Text(f"{d.difference * 100:+.1f} pts", style=mark),
            f"{d.low * 100:+.1f} to {d.high * 100:+.1f}",
            f"{d.p_value:.3g}",
            f"{d.mde * 100:.1f} pts" if d.se > 0 else "–",
        )
    return table


CASES_SHOWN = 20


def case_differences_table(c: Comparison, limit: int = CASES_SHOWN) -> Table | Text:
    """The paired cases whose pass rate moved, largest drops first."""
    moved = sorted((x for x in c.cases if x.difference != 0), key=lambda x: x.difference)
    if not moved:
        return Text("No paired case changed its pass rate.")
    shown = moved if len(moved) <= limit else moved[: limit // 2] + moved[-(limit - limit // 2) :]
    hidden = len(moved) - len(shown)
    caption = "passes / counted runs"
    if hidden:
        caption += f"; {hidden} more in --json"
    table = Table(
        title=f"Moved: {len(moved)} of {len(c.cases)} cases",
        title_justify="left",
        caption=Text(caption),
        caption_justify="left",
    )
    for name in ["case", "A", "B", "Δ rate"]:
        table.add_column(name, justify="left" if name == "case" else "right")
    for x in shown:
        style = "red" if x.difference < 0 else "green"
        table.add_row(
            Text(x.case),
            f"{x.passes_a}/{x.runs_a}",
            f"{x.passes_b}/{x.runs_b}",
            Text(f"{x.difference * 100:+.0f} pts", style=style),
        )
    return table


def verdict_text(c: Comparison) -> Text:
    style = {"better": "bold green", "worse": "bold red", "none": "bold yellow"}
    return Text(c.verdict.text, style=style[c.verdict.outcome])


def print_comparison(
    console: Console,
    c: Comparison,
    *,
    source_a: str = "",
    source_b: str = "",
    k_inferred_a: bool = False,
    k_inferred_b: bool = False,
) -> None:
    """Accounting, figures, moved cases and the verdict: reusable for stored experiments."""
    console.print(
        comparison_panel(
            c,
            source_a=source_a,
            source_b=source_b,
            k_inferred_a=k_inferred_a,
            k_inferred_b=k_inferred_b,
        )
    )
    console.print(differences_table(c))
    console.print(case_differences_table(c))
    console.print(verdict_text(c))
