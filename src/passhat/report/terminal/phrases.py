"""What every terminal table shares: the statistics' English phrases said again in `lang`,
shortfall lines, the ✓/✗ cells of a case row, the case column's width and which cases a
bounded table lists.

`passhat.stats` describes its intervals, notes and verdict in English words; `_phrase`
recognises those it knows by the English catalog entry and says them again in `lang` with
the same values, and leaves any other wording as it was written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from rich.text import Text

from passhat.accounting import Accounting, CaseAccount, MissingRuns, format_ranges
from passhat.report import ROWS_SHOWN as ROWS_SHOWN  # re-exported: the tables read it here
from passhat.report.i18n import LABELS, t, tn

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
