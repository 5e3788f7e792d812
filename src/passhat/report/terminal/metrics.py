"""The metrics of one experiment on the terminal: the per-case table, the plan met or not,
the accounting panel around them (`print_metrics`).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from passhat.accounting import Accounting
from passhat.report.i18n import t, tn
from passhat.report.table import Fitted, Table, titled_table
from passhat.report.terminal.phrases import (
    ROWS_SHOWN,
    _case_row,
    _hidden_note,
    _list,
    _pct,
    _phrase,
    _run_counts,
    case_width,
    panel_title,
    shortfall_lines,
    shown_cases,
)
from passhat.report.terminal.uncertainty import print_uncertainty
from passhat.stats import Uncertainty


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
    table = titled_table(
        Text(title) if title else None,
        (
            t("table_caption_cases", lang, j=m.j, over=f"{m.pass_at_1:.2f}")
            if m.weighs_cases
            else t("table_caption", lang, j=m.j)
        )
        + _hidden_note(len(accounting.cases), len(cases), lang),
        padding=(0, 0, 0, 0),
        show_edge=False,
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
