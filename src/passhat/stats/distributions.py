"""The distributions behind the intervals, on numpy alone: the normal and t quantiles,
lgamma, and the Beta (incomplete beta function, its quantiles and moments)."""

from __future__ import annotations

import functools
import math
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from passhat.stats._numpy import np

if TYPE_CHECKING:
    from passhat.stats._numpy import ArrayLike, Floats


_FEW_VALUES = 8
"""Up to this many values, lgamma and the continued fraction run on Python floats
(`_lgamma`, `_beta_cf_floats`): numpy's cost per call on such tiny arrays made the
forecast's quantiles, one posterior at a time, a fifth of a report."""

_FEW_ROW_VALUES = 64
"""Up to this many values, `_betainc_rows` runs the continued fraction row by row on
Python floats: a Newton loop's last rows (a tail bisecting for ~48 steps) cost less so
than numpy's per-call overhead (forecast_counts of 98 posteriors: 27 ms with 8, 24 ms
with 64; of 11: 11.4 ms with 8, 6.4 ms with 64)."""


_LGAMMA_DICT = 128
"""Up to this many values, `_lgamma` finds the distinct ones with a dict, not np.unique."""


def _z(q: float) -> float:
    return NormalDist().inv_cdf(q)


def _lgamma(x: Floats) -> Floats:
    # Per distinct value: a suite's cases share few (runs, passes) pairs, so 100,000
    # cases cost a few dozen lgamma calls, not 100,000 (up to _LGAMMA_DICT values: found
    # distinct with a dict, a quarter of np.unique's cost there).
    if x.size <= _LGAMMA_DICT:
        known: dict[float, float] = {}
        each: list[float] = x.ravel().tolist()
        found = [known[v] if v in known else known.setdefault(v, math.lgamma(v)) for v in each]
        return np.asarray(found, dtype=np.float64).reshape(x.shape)
    values, inverse = np.unique(x.ravel(), return_inverse=True)
    flat = np.asarray([math.lgamma(v) for v in values.tolist()], dtype=np.float64)
    return flat[inverse].reshape(x.shape)


def _lbeta(a: Floats, b: Floats) -> Floats:
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def _beta_cf(a: Floats, b: Floats, x: Floats) -> Floats:
    """Continued fraction of the incomplete beta function (modified Lentz), vectorised:
    one row of `_beta_cf_rows`, so every value stops when all have converged."""
    row = _beta_cf_rows(*(np.reshape(v, (1, -1)) for v in (a, b, x)))
    return row.reshape(np.shape(x))


def _beta_cf_floats(a: list[float], b: list[float], x: list[float]) -> list[float]:
    """`_beta_cf` on Python floats: the same operations in the same order, the same
    stopping rule over all the values (so the very same bits), at a tenth of the cost
    for a few values. IEEE arithmetic rounds each + - * / alike in numpy and Python."""
    tiny, eps = 1e-300, 1e-15
    qab = [ai + bi for ai, bi in zip(a, b, strict=True)]
    qap = [ai + 1.0 for ai in a]
    qam = [ai - 1.0 for ai in a]
    c = [1.0] * len(x)
    d = [1.0 - s * xi / p for s, xi, p in zip(qab, x, qap, strict=True)]
    d = [1.0 / (tiny if abs(di) < tiny else di) for di in d]
    h = d.copy()
    values = range(len(x))
    for m in range(1, 20_001):
        m2 = 2.0 * m
        done = True
        for i in values:
            ai, xi, di, ci = a[i], x[i], d[i], c[i]
            odd = m * (b[i] - m) * xi / ((qam[i] + m2) * (ai + m2))
            even = -(ai + m) * (qab[i] + m) * xi / ((ai + m2) * (qap[i] + m2))
            di = 1.0 + odd * di
            di = 1.0 / (tiny if -tiny < di < tiny else di)
            ci = 1.0 + odd / ci
            ci = tiny if -tiny < ci < tiny else ci
            hi = h[i] * (di * ci)
            di = 1.0 + even * di
            di = 1.0 / (tiny if -tiny < di < tiny else di)
            ci = 1.0 + even / ci
            ci = tiny if -tiny < ci < tiny else ci
            step = di * ci
            d[i], c[i], h[i] = di, ci, hi * step
            if done and not -eps < step - 1.0 < eps:
                done = False
        if done:
            break
    return h


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Floats:
    """The regularised incomplete beta function I_x(a, b): the Beta(a, b) CDF at x."""
    a_, b_, x_ = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(x, dtype=np.float64),
    )
    swap, p, q, y, front = _betainc_terms(a_, b_, x_)
    if y.size <= _FEW_VALUES:
        fraction = _beta_cf_floats(p.ravel().tolist(), q.ravel().tolist(), y.ravel().tolist())
        part = front * np.asarray(fraction, dtype=np.float64).reshape(y.shape)
    else:
        part = front * _beta_cf(p, q, y)
    return _betainc_value(swap, part, x_)


def _betainc_terms(a: Floats, b: Floats, x: Floats) -> tuple[Any, Floats, Floats, Floats, Floats]:
    """(swap, p, q, y, front) of I_x(a, b): the fraction converges fast below the mean;
    above it (swap), I_x(a, b) = 1 - I_{1-x}(b, a) is used."""
    inside = np.clip(x, 1e-300, 1.0 - 1e-16)
    swap = inside > (a + 1.0) / (a + b + 2.0)
    p = np.where(swap, b, a)
    q = np.where(swap, a, b)
    y = np.where(swap, 1.0 - inside, inside)
    front = np.exp(p * np.log(y) + q * np.log1p(-y) - _lbeta(p, q)) / p
    return swap, p, q, y, front


def _betainc_value(swap: Any, part: Floats, x: Floats) -> Floats:
    """I_x(a, b) from the fraction's part (`_betainc_terms`), 0 and 1 at the ends."""
    value = np.where(swap, 1.0 - part, part)
    value = np.where(x <= 0.0, 0.0, np.where(x >= 1.0, 1.0, value))
    return np.asarray(np.clip(value, 0.0, 1.0), dtype=np.float64)


def _newton(
    a: Floats, b: Floats, x: Floats, f: Floats, lo: Floats, hi: Floats, lbeta: Floats
) -> tuple[Floats, Floats, Floats]:
    """One step of the quantile's search from x, where betainc - q is f: the bracket
    (lo, hi) narrowed by f's sign, and Newton's step, or the bracket's middle where
    Newton leaves it (or is not finite)."""
    below = f < 0
    lo = np.where(below, x, lo)
    hi = np.where(below, hi, x)
    density = np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - lbeta)
    newton = x - f / density
    inside = np.isfinite(newton) & (newton > lo) & (newton < hi)
    return lo, hi, np.where(inside, newton, 0.5 * (lo + hi))


def beta_quantile(a: ArrayLike, b: ArrayLike, q: ArrayLike) -> Floats:
    """The q-quantile of Beta(a, b): Newton steps on `betainc`, kept inside a shrinking bracket.

    A Newton step that would leave the bracket is replaced by bisection, so the
    iteration cannot diverge in the tails; it stops at about 1e-14.
    """
    a_, b_, q_ = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(q, dtype=np.float64),
    )
    lo = np.zeros(a_.shape)
    hi = np.ones(a_.shape)
    x = np.clip(a_ / (a_ + b_), 1e-6, 1 - 1e-6)
    lbeta = _lbeta(a_, b_)
    for _ in range(200):
        # x may reach 0 or 1 (log of 0: an infinite density): the step bisects instead
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lo, hi, step = _newton(a_, b_, x, betainc(a_, b_, x) - q_, lo, hi, lbeta)
        done = np.abs(step - x) <= 1e-14 * np.maximum(x, 1e-300)
        x = step
        if np.all(done | (hi - lo <= 1e-15 * np.maximum(hi, 1e-300))):
            break
    x = np.where(q_ <= 0.0, 0.0, np.where(q_ >= 1.0, 1.0, x))
    return np.asarray(x, dtype=np.float64)


def beta_moment(a: ArrayLike, b: ArrayLike, m: ArrayLike) -> Floats:
    """E[p^m] for p ~ Beta(a, b): B(a + m, b) / B(a, b) = prod_{i<m} (a + i) / (a + b + i)."""
    a_, b_, m_ = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        np.asarray(m, dtype=np.float64),
    )
    log = _lgamma(a_ + m_) - _lgamma(a_) + _lgamma(a_ + b_) - _lgamma(a_ + b_ + m_)
    return np.asarray(np.exp(log), dtype=np.float64)


@functools.lru_cache(maxsize=4096)
def _t_quantile(df: int, alpha: float) -> float:
    """Two-sided t quantile: P(|T_df| > t) = alpha, from the Beta(df/2, 1/2) identity."""
    x = float(beta_quantile(df / 2.0, 0.5, alpha))
    return math.sqrt(df * (1.0 - x) / x)


def _beta_cf_rows(a: Floats, b: Floats, x: Floats) -> Floats:
    """`_beta_cf` on many rows at once, each row stopping on its own: a row gets the very
    bits `_beta_cf` (or `_beta_cf_floats`) gives when called on that row alone, since
    each value sees the same operations in the same order and its row's stopping rule."""
    tiny, eps = 1e-300, 1e-15
    out = np.empty_like(x)
    rows = np.arange(x.shape[0])
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 20_001):
        m2 = 2.0 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            step = d * c
            h = h * step
        done = np.all(np.abs(step - 1.0) < eps, axis=1)
        if done.any():
            out[rows[done]] = h[done]
            going = ~done
            if not going.any():
                return out
            rows, a, b, x, qab, qap, qam = (v[going] for v in (rows, a, b, x, qab, qap, qam))
            c, d, h = c[going], d[going], h[going]
    out[rows] = h
    return out


def _betainc_rows(a: Floats, b: Floats, x: Floats) -> Floats:
    """`betainc` on 2-d arrays whose rows each stop the continued fraction on their own
    (`_beta_cf_rows`, or `_beta_cf_floats` per row for a few values): row i is
    `betainc(a[i], b[i], x[i])`, to the bit."""
    swap, p, q, y, front = _betainc_terms(a, b, x)
    if y.size <= _FEW_ROW_VALUES:  # the last few rows (a tail's bisection): on floats, row by row
        rows = [_beta_cf_floats(*(v.tolist() for v in row)) for row in zip(p, q, y, strict=True)]
        part = front * np.asarray(rows, dtype=np.float64).reshape(y.shape)
    else:
        part = front * _beta_cf_rows(p, q, y)
    return _betainc_value(swap, part, x)


def _beta_quantile_rows(a: Floats, b: Floats, q: Floats) -> Floats:
    """`beta_quantile` of many calls at once: row i of the 2-d arrays is one call,
    `beta_quantile(a[i], b[i], q[i])`, with the same bits. Each row keeps its own stop
    (the Newton loop's and the continued fraction's, over that row's values alone), so
    no row takes a step more or less than it would alone (the forecast's posteriors:
    66 calls cost a tenth of a second of a report, one of these a few milliseconds)."""
    levels = q
    out = np.empty_like(q)
    rows = np.arange(q.shape[0])
    lo = np.zeros(q.shape)
    hi = np.ones(q.shape)
    x = np.clip(a / (a + b), 1e-6, 1 - 1e-6)
    lbeta = _lbeta(a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(200):
            lo, hi, step = _newton(a, b, x, _betainc_rows(a, b, x) - q, lo, hi, lbeta)
            done = np.abs(step - x) <= 1e-14 * np.maximum(x, 1e-300)
            x = step
            stop = np.all(done | (hi - lo <= 1e-15 * np.maximum(hi, 1e-300)), axis=1)
            if stop.any():
                out[rows[stop]] = x[stop]
                going = ~stop
                if not going.any():
                    break
                rows, a, b, q, lo, hi, x, lbeta = (
                    v[going] for v in (rows, a, b, q, lo, hi, x, lbeta)
                )
        else:
            out[rows] = x
    return np.asarray(np.where(levels <= 0.0, 0.0, np.where(levels >= 1.0, 1.0, out)))
