"""Per-case tests of a comparison (Fisher exact) and their adjustment for testing every
paired case: Benjamini-Hochberg (false discovery rate) or Holm (family-wise error)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, cast

from passhat.errors import InputError
from passhat.stats._base import _counts
from passhat.stats._numpy import np

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Floats, Ints


def _hypergeometric_pmf(total: int, good: int, draws: int) -> tuple[Ints, Floats]:
    """Support and probabilities of the passes among `draws` of `total` runs, `good` passing."""
    lo, hi = max(0, good - (total - draws)), min(draws, good)
    x = np.arange(lo, hi + 1, dtype=np.int64)
    log = np.array(
        [
            math.lgamma(good + 1)
            - math.lgamma(v + 1)
            - math.lgamma(good - v + 1)
            + math.lgamma(total - good + 1)
            - math.lgamma(draws - v + 1)
            - math.lgamma(total - good - draws + v + 1)
            - math.lgamma(total + 1)
            + math.lgamma(draws + 1)
            + math.lgamma(total - draws + 1)
            for v in x.tolist()
        ]
    )
    pmf = np.exp(log - log.max())
    return x, pmf / pmf.sum()


CASE_ALPHA = 0.05
"""False discovery rate of the per-case verdicts in `compare`."""


CASE_CORRECTION = "Benjamini-Hochberg"
"""How the per-case p-values are adjusted for testing every paired case, by default."""


Adjust = Literal["bh", "holm"]
"""`--adjust`: Benjamini-Hochberg (false discovery rate) or Holm (family-wise error)."""


CORRECTIONS: dict[str, str] = {"bh": CASE_CORRECTION, "holm": "Holm"}
"""The name of each adjustment, as reports print it."""


def fisher_exact(na: int, ca: int, nb: int, cb: int) -> float:
    """Two-sided Fisher exact p-value of ca/na against cb/nb (sum of the tables no
    more likely than the one seen)."""
    support, pmf = _hypergeometric_pmf(na + nb, ca + cb, na)
    seen = pmf[int(np.searchsorted(support, ca))]
    return float(min(1.0, pmf[pmf <= seen * (1.0 + 1e-7)].sum()))


def benjamini_hochberg(p_values: ArrayLike) -> Floats:
    """Benjamini-Hochberg adjusted p-values (q-values): reject where q < the FDR level."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size == 0:
        return p
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty_like(p)
    out[order] = np.minimum(q, 1.0)
    return out


def holm(p_values: ArrayLike) -> Floats:
    """Holm's step-down adjusted p-values: reject where they fall under the family-wise
    error rate (every case's verdict at once, not a share of them as BH controls)."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size == 0:
        return p
    order = np.argsort(p, kind="stable")
    ranked = p[order] * (p.size - np.arange(p.size))
    adjusted = np.maximum.accumulate(ranked)
    out = np.empty_like(p)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _check_adjust(adjust: str) -> Adjust:
    if adjust not in CORRECTIONS:
        raise InputError(f"--adjust is {adjust!r}; use holm or bh")
    return cast("Adjust", adjust)


def case_tests(
    runs_a: ArrayLike,
    passes_a: ArrayLike,
    runs_b: ArrayLike,
    passes_b: ArrayLike,
    adjust: Adjust = "bh",
) -> tuple[Floats, Floats]:
    """Per paired case: the Fisher exact p-value and its adjusted value over the cases
    (`adjust`: Benjamini-Hochberg q-value, or Holm's family-wise adjusted p-value)."""
    _check_adjust(adjust)
    na, ca = _counts(runs_a, passes_a)
    nb, cb = _counts(runs_b, passes_b)
    rows = np.column_stack([na, ca, nb, cb])
    records, inverse = np.unique(rows, axis=0, return_inverse=True)
    p_record = np.array([fisher_exact(*r) for r in records.tolist()])
    p = p_record[inverse.ravel()]
    return p, holm(p) if adjust == "holm" else benjamini_hochberg(p)
