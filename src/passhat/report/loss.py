"""The line a reader takes away when runs were not counted: the headline's interval if
the loss is unrelated to the outcome, and its bounds whatever the loss hides (the
terminal report and the CI summary say the same sentence)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from passhat.report.i18n import t, tn

if TYPE_CHECKING:
    from passhat.stats import Uncertainty


def _same(text: str, lang: str) -> str:
    return text


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def loss_line(
    u: Uncertainty, lang: str = "en", phrase: Callable[[str, str], str] = _same
) -> str | None:
    """`pass rate 57.6% [44.9%–69.3%] if the 21 runs not counted are unrelated to the
    outcome; 38.5%–73.9% whatever they hide.` None when every asked run was counted.
    `phrase` says a label `passhat.stats` wrote in `lang`."""
    d = u.dataset
    if d is None or d.bounds is None:
        return None
    figure, bound = d.pass_at_1, d.bounds[0]
    ledger = u.ledger  # every run not counted, of the cases with none counted too
    lost = d.lost if ledger is None else ledger.errored + ledger.missing
    unseen = t("loss_unseen", lang, cases=tn("n_case", lang, d.unseen)) if d.unseen else ""
    return t(
        "loss_line",
        lang,
        label=phrase(figure.label, lang),
        estimate=_pct(figure.estimate),
        low=_pct(figure.low),
        high=_pct(figure.high),
        lost=tn("n_lost_run", lang, lost),
        bound_low=_pct(bound.low),
        bound_high=_pct(bound.high),
        unseen=unseen,
    )
