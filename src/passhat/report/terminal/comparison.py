"""Two experiments compared on the terminal: each side's counts, the differences and their
intervals, the per-case tests, the verdict sentence, tokens and cost (`print_comparison`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TypedDict, Unpack

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from passhat.accounting import Accounting
from passhat.report.i18n import t, tn
from passhat.report.table import Fitted, Table, titled_table
from passhat.report.terminal.phrases import (
    ROWS_SHOWN,
    _list,
    _pct,
    _phrase,
    _run_counts,
    panel_title,
    shortfall_lines,
)
from passhat.report.terminal.uncertainty import _pts
from passhat.stats import CASE_ALPHA, CASE_CORRECTION, Comparison, Difference
from passhat.usage import TokenUsage


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


class Sides(TypedDict, total=False):
    """Where each side of a comparison came from, as its accounting panel says it: the
    source's name (none by default), and whether its k was inferred (not given)."""

    source_a: str
    source_b: str
    k_inferred_a: bool
    k_inferred_b: bool


def comparison_panel(
    c: Comparison, *, lang: str = "en", limit: int | None = None, **sides: Unpack[Sides]
) -> Panel:
    """Both sides' accounting and how the cases were paired; each list of cases (short
    of the plan, on one side only) names its first `limit` (None: all)."""
    a, b = sides.get("source_a", ""), sides.get("source_b", "")
    lines = _side_line("A", a, c.a, sides.get("k_inferred_a", False), lang, limit)
    lines += _side_line("B", b, c.b, sides.get("k_inferred_b", False), lang, limit)
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
    table = titled_table(
        t("diff_title", lang, cases=len(c.cases)), Text(caption), padding=(0, 1, 0, 0)
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
    table = titled_table(
        t("moved_title", lang, moved=len(moved), cases=len(c.cases)),
        Text(caption),
        padding=(0, 1, 0, 0),
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
        return _per_run_line("cost_compare", cost_a, cost_b, ".4g", lang)
    tokens_a, tokens_b = a.per_run(a.tokens) or 0.0, b.per_run(b.tokens) or 0.0
    return _per_run_line("tokens_compare", tokens_a, tokens_b, ",.0f", lang)


def _per_run_line(key: str, a: float, b: float, spec: str, lang: str) -> str:
    """A per-run figure of each side and B - A (with its relative change when A is not
    zero), each written with the format `spec`."""
    change = f" ({(b - a) / a:+.0%})" if a else ""
    return t(
        key, lang, a=format(a, spec), b=format(b, spec), diff=format(b - a, "+" + spec) + change
    )


def print_comparison(
    console: Console,
    c: Comparison,
    *,
    lang: str = "en",
    usage: str | None = None,
    limit: int | None = ROWS_SHOWN,
    **sides: Unpack[Sides],
) -> None:
    """Accounting, figures (and the cost beside them), moved cases and the verdict. With
    a `limit` the lists of cases name that many (the moved cases, CASES_SHOWN); None
    (`compare --all`) lists every case."""
    console.print(comparison_panel(c, lang=lang, limit=limit, **sides))
    console.print(Fitted(differences_table(c, lang=lang)))
    if usage:
        console.print(Text(usage, style="bold"))
    moved = CASES_SHOWN if limit is not None else len(c.cases)
    console.print(Fitted(case_differences_table(c, moved, lang=lang)))
    console.print(Text(case_tests_note(lang, c.correction)))
    console.print(verdict_text(c, lang=lang))
