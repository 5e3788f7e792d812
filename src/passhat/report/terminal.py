"""Rich tables for the terminal. Every user string enters as `Text`, never as markup."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from passhat.accounting import Accounting, CaseAccount

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


def metrics_table(accounting: Accounting, title: str | None = None) -> Table:
    """Per case requested / completed / counted and the three numbers; a dataset row."""
    d = accounting.dataset()
    m = d.metrics
    table = Table(
        title=Text(title) if title else None,
        title_justify="left",
        caption=f"n = each case's counted runs; the dataset row uses j = {m.j}, "
        "which every included case reaches",
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
    for c in accounting.cases:
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


def accounting_panel(accounting: Accounting, *, k_inferred: bool = False) -> Panel:
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
    lines.extend(Text("  " + line) for line in a.shortfalls())
    if d.excluded:
        lines.append(Text("left out (no counted run): " + ", ".join(d.excluded), style="yellow"))
    return Panel(Group(*lines), title="accounting", border_style="yellow", title_align="left")


def print_metrics(
    console: Console, accounting: Accounting, *, k_inferred: bool = False, title: str | None = None
) -> None:
    console.print(metrics_table(accounting, title))
    console.print(accounting_panel(accounting, k_inferred=k_inferred))
