"""What goes with a miss, across runs and cases: failure signatures (`passhat why`).

Runs of one case start from the same state, so within a case a run that missed an
item and a run that found it differ in what the agent did, not in how hard the case
was. For each outcome (pass/fail, and each goal item found/missed) and each run
feature (a tool called or not, more calls of a tool than the case's median, a tool
error returned, an argument value, more turns or tokens than the case's median, the
tool taken at the case's first divergence, or a feature of the user's own), the runs
of each case are a 2 x 2 table (feature yes/no x missed/found) and the tables are
pooled **within case**:

- the effect is the Mantel-Haenszel odds ratio of a miss with the feature against
  without it, with the Robins-Breslow-Greenland interval (0.5 added to every cell
  when a zero would make it 0 or infinite);
- the p-value is the exact conditional test (the sum of the with-feature misses given
  every case's margins: a convolution of hypergeometric laws) up to `EXACT_CASES`
  informative cases, the Cochran-Mantel-Haenszel test past them;
- tests that could never reach the level whatever the data (every case's margins
  allow no p under `alpha`: too few runs) leave the family (Tarone), the rest are
  adjusted together (Benjamini-Hochberg by default, Holm on request);
- a signature that stands is checked by permuting the feature within each case.

A case tells nothing about a feature unless both the feature and the outcome vary
among its runs: only such cases (**informative**) enter. Pure functions over plain
run facts; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "EXACT_CASES",
    "Facts",
    "Signature",
    "Test",
    "Why",
    "explain",
    "feature_table",
    "signatures",
]

EXACT_CASES = 200
"""Informative cases up to which the exact conditional test is used (past them, CMH)."""
PERMUTATIONS = 2000
"""Within-case permutations of a standing signature's feature (fewer on large data)."""
PERMUTED_CELLS = 4_000_000
"""Runs x permutations at most per check: the count shrinks on large data."""
PERMUTATIONS_LEAST = 200
"""Fewer permutations than this are not run (the check is left out: `None`)."""
FIRST_STEP = "at the first divergence"
"""The feature naming what a run did where its case's runs first part."""
WHOLE_RUNS = 20_000
"""Experiments up to this many runs are read whole for the features only whole runs
hold (arguments, turns, the first divergence); past it the summaries' features only
(tools, calls, errors, tokens), so `why` stays near the cost of `report`."""
PASS = "pass"
"""The outcome pass/fail (a miss is a failed run)."""


@dataclass(frozen=True)
class Facts:
    """What a signature reads of one counted run."""

    case: str
    run: int
    outcomes: Mapping[str, bool]
    """Outcome -> missed: `pass` (failed), and each goal item (`scorer␟item`)."""
    features: Mapping[str, Any]
    """Feature -> value: bool (yes/no), a number (compared with the case's median), a
    text (one yes/no feature per value)."""


@dataclass(frozen=True)
class Test:
    """One outcome against one feature, pooled within case."""

    outcome: str
    feature: str
    """As it reads for the runs that have it (`did not call get_bookings`)."""
    missed_with: int
    runs_with: int
    missed_without: int
    runs_without: int
    cases: int
    """Informative cases."""
    odds_ratio: float
    low: float
    high: float
    p: float
    method: str
    floor: float
    """The smallest p these margins allow."""
    pairs: tuple[tuple[str, int, int], ...] = ()
    """(case, a missed run with the feature, a found run without it), a few."""
    runs: tuple[tuple[str, int], ...] = ()
    """The runs behind it: every missed run with the feature (case, run)."""


@dataclass(frozen=True)
class Signature:
    """A test that stands after adjustment, with its permutation check."""

    test: Test
    q: float
    p_permutation: float | None
    aliases: tuple[str, ...] = field(default_factory=tuple)
    """Other features with the very same runs (`called get_bookings` and its count)."""


# ------------------------------------------------------------------- features


def _median_flags(values: Sequence[float], cases: Sequence[str]) -> list[bool]:
    """Per run: above its case's median."""
    by_case: dict[str, list[float]] = {}
    for c, v in zip(cases, values, strict=True):
        by_case.setdefault(c, []).append(v)
    medians = {c: float(np.median(v)) for c, v in by_case.items()}
    return [v > medians[c] for c, v in zip(cases, values, strict=True)]


def feature_table(facts: Sequence[Facts]) -> dict[str, np.ndarray]:
    """Every feature as a yes/no column over `facts`: booleans as they are, numbers as
    "more than the case's median", texts one column per value. A run without the
    feature has no value for it: a number counts as 0, a boolean as False, a text as
    none of its values."""
    names: dict[str, None] = {}
    for f in facts:
        names.update(dict.fromkeys(f.features))
    cases = [f.case for f in facts]
    out: dict[str, np.ndarray] = {}
    for name in names:
        values = [f.features.get(name) for f in facts]
        kinds = {type(v) for v in values if v is not None}
        if kinds <= {bool}:
            out[name] = np.array([bool(v) for v in values])
        elif kinds <= {int, float, bool}:
            numbers = [float(v or 0) for v in values]
            if set(numbers) <= {0.0, 1.0}:
                continue  # a count that is 0 or 1: its yes/no feature says it
            out[f"more {name} than the case's median"] = np.array(_median_flags(numbers, cases))
        else:
            for value in sorted({str(v) for v in values if v is not None}):
                out[f"{name} = {value}"] = np.array([str(v) == value for v in values])
    return out


# ----------------------------------------------------------------- statistics


def _log_comb(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    lg = np.vectorize(math.lgamma, otypes=[float])
    out: np.ndarray = lg(n + 1.0) - lg(k + 1.0) - lg(n - k + 1.0)
    return out


def _stratum_pmf(n: int, m: int, t: int) -> tuple[int, np.ndarray]:
    """The hypergeometric law of the with-feature misses of one case: lowest value, pmf."""
    lo, hi = max(0, m + t - n), min(m, t)
    a = np.arange(lo, hi + 1, dtype=float)
    log = _log_comb(np.full_like(a, m), a) + _log_comb(np.full_like(a, n - m), t - a)
    log -= float(_log_comb(np.array([float(n)]), np.array([float(t)]))[0])
    return lo, np.exp(log)


def _exact(n: np.ndarray, m: np.ndarray, t: np.ndarray, seen: int) -> tuple[float, float]:
    """Two-sided exact conditional p of `seen` with-feature misses, and the smallest p
    the margins allow."""
    lo, pmf = 0, np.ones(1)
    for ni, mi, ti in zip(n.tolist(), m.tolist(), t.tolist(), strict=True):
        low, law = _stratum_pmf(ni, mi, ti)
        lo += low
        pmf = np.convolve(pmf, law)
    pmf = pmf / pmf.sum()
    p_at = np.array([pmf[pmf <= x * (1 + 1e-7)].sum() for x in pmf])
    return float(min(1.0, p_at[seen - lo])), float(min(1.0, p_at.min()))


def _cmh(n: np.ndarray, m: np.ndarray, t: np.ndarray, seen: float) -> tuple[float, float]:
    """Cochran-Mantel-Haenszel p (continuity-corrected) and its smallest possible value."""
    expected = float((m * t / n).sum())
    variance = float((m * (n - m) * t * (n - t) / (n * n * (n - 1))).sum())
    if variance <= 0:
        return 1.0, 1.0

    def p_of(x: float) -> float:
        z = max(0.0, abs(x - expected) - 0.5) / math.sqrt(variance)
        return math.erfc(z / math.sqrt(2))

    lo = float(np.maximum(0, m + t - n).sum())
    hi = float(np.minimum(m, t).sum())
    return p_of(seen), min(p_of(lo), p_of(hi))


def _mantel_haenszel(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, confidence: float
) -> tuple[float, float, float]:
    """MH odds ratio (miss with the feature against without) and its RGB interval."""
    if not ((a * d).sum() > 0 and (b * c).sum() > 0):
        a, b, c, d = a + 0.5, b + 0.5, c + 0.5, d + 0.5
    n = a + b + c + d
    r, s = a * d / n, b * c / n
    big_r, big_s = r.sum(), s.sum()
    p, q = (a + d) / n, (b + c) / n
    variance = (
        (p * r).sum() / (2 * big_r**2)
        + (p * s + q * r).sum() / (2 * big_r * big_s)
        + (q * s).sum() / (2 * big_s**2)
    )
    z = _z(confidence)
    estimate = float(big_r / big_s)
    half = z * math.sqrt(float(variance))
    return estimate, estimate * math.exp(-half), estimate * math.exp(half)


def _z(confidence: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _test(
    outcome: str,
    feature: str,
    cases: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    confidence: float,
) -> Test | None:
    """The within-case test of one outcome (`y`: missed) against one feature (`x`)
    over the runs given (`cases`: each run's case code); None with no informative case."""
    size = int(cases.max()) + 1
    n = np.bincount(cases, minlength=size).astype(float)
    m = np.bincount(cases, weights=x, minlength=size)
    t = np.bincount(cases, weights=y, minlength=size)
    a = np.bincount(cases, weights=x & y, minlength=size)
    keep = (n >= 2) & (m > 0) & (m < n) & (t > 0) & (t < n)
    if not keep.any():
        return None
    n, m, t, a = n[keep], m[keep], t[keep], a[keep]
    b, c = m - a, t - a
    d = n - m - c
    if float((a * d / n).sum()) < float((b * c / n).sum()):
        return None  # the other side of the same feature carries it (see `_oriented`)
    seen = int(a.sum())
    if keep.sum() <= EXACT_CASES:
        p, floor = _exact(n.astype(int), m.astype(int), t.astype(int), seen)
        method = "exact conditional"
    else:
        p, floor = _cmh(n, m, t, seen)
        method = "Cochran-Mantel-Haenszel"
    ratio, low, high = _mantel_haenszel(a, b, c, d, confidence)
    return Test(
        outcome,
        feature,
        seen,
        int(m.sum()),
        int(c.sum()),
        int((n - m).sum()),
        int(keep.sum()),
        ratio,
        low,
        high,
        p,
        method,
        floor,
    )


def _negation(feature: str) -> str:
    if feature.startswith("called "):
        return "did not call " + feature.removeprefix("called ")
    if feature.startswith("more "):
        return "no " + feature
    if feature.endswith(" returned an error"):
        return feature.removesuffix(" returned an error") + " returned no error"
    return "not: " + feature


def _oriented(
    outcome: str, feature: str, cases: np.ndarray, x: np.ndarray, y: np.ndarray, confidence: float
) -> tuple[Test, np.ndarray] | None:
    """The test read so that the odds ratio is at least 1 (the feature, or its negation)."""
    test = _test(outcome, feature, cases, x, y, confidence)
    if test is not None:
        return test, x
    if " = " in feature:
        return None  # one value of a text: the other values carry it
    flipped = ~x
    test = _test(outcome, _negation(feature), cases, flipped, y, confidence)
    return (test, flipped) if test is not None else None


def _permutation_p(cases: np.ndarray, x: np.ndarray, y: np.ndarray, seed: int) -> float | None:
    """Two-sided p of the with-feature misses when the feature is shuffled within each
    case (the exact conditional test's law, sampled)."""
    rng = np.random.default_rng(seed)
    count = min(PERMUTATIONS, PERMUTED_CELLS // max(1, x.size))
    if count < PERMUTATIONS_LEAST:
        return None  # many runs: the CMH test's normal law is the check
    size = int(cases.max()) + 1
    n = np.bincount(cases, minlength=size)
    expected = float(
        (
            np.bincount(cases, weights=x, minlength=size)
            * np.bincount(cases, weights=y, minlength=size)
            / np.maximum(n, 1)
        ).sum()
    )
    seen = abs(float((x & y).sum()) - expected)
    order = np.argsort(cases, kind="stable")
    cs, xs, ys = cases[order], x[order], y[order]
    hits = 0
    for _ in range(count):
        shuffle = np.lexsort((rng.random(cs.size), cs))
        value = abs(float((xs[shuffle] & ys).sum()) - expected)
        hits += value >= seen - 1e-9
    return (hits + 1) / (count + 1)


def _adjusted(p: Sequence[float], adjust: str) -> np.ndarray:
    from passhat.stats import benjamini_hochberg, holm

    return holm(p) if adjust == "holm" else benjamini_hochberg(p)


def _pairs_and_runs(
    facts: Sequence[Facts], rows: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[tuple[tuple[str, int, int], ...], tuple[tuple[str, int], ...]]:
    by_case: dict[str, tuple[list[int], list[int]]] = {}
    runs = []
    for i, row in enumerate(rows.tolist()):
        f = facts[row]
        missed_with, found_without = by_case.setdefault(f.case, ([], []))
        if x[i] and y[i]:
            missed_with.append(f.run)
            runs.append((f.case, f.run))
        elif not x[i] and not y[i]:
            found_without.append(f.run)
    pairs = tuple((c, a[0], b[0]) for c, (a, b) in by_case.items() if a and b)
    return pairs[:5], tuple(runs)


OUTCOMES_TESTED = 200
"""Outcomes tested at most: pass/fail, then the items missed and found within the most
cases (items are mostly a case's own: 10,000 cases hold 40,000; `--item` tests any)."""


@dataclass(frozen=True)
class _Flat:
    """Every (outcome, run) of the facts as arrays, grouped by outcome."""

    names: list[str]
    outcome: np.ndarray
    row: np.ndarray
    missed: np.ndarray
    case: np.ndarray
    starts: np.ndarray
    """Where each outcome's entries begin in the arrays (sorted by outcome)."""

    @staticmethod
    def of(facts: Sequence[Facts], codes: np.ndarray) -> _Flat:
        ids: dict[str, int] = {}
        outcome: list[int] = []
        row: list[int] = []
        missed: list[bool] = []
        seen: dict[int, tuple[Mapping[str, bool], list[int], list[bool]]] = {}
        for i, f in enumerate(facts):
            known = seen.get(id(f.outcomes))  # runs alike share one outcomes mapping
            if known is None:
                names = [ids.setdefault(name, len(ids)) for name in f.outcomes]
                known = seen[id(f.outcomes)] = (f.outcomes, names, list(f.outcomes.values()))
            outcome.extend(known[1])
            row.extend([i] * len(known[1]))
            missed.extend(known[2])
        o = np.array(outcome, dtype=np.int64)
        order = np.argsort(o, kind="stable")
        r = np.array(row, dtype=np.int64)[order]
        starts = np.searchsorted(o[order], np.arange(len(ids) + 1))
        return _Flat(list(ids), o[order], r, np.array(missed, dtype=bool)[order], codes[r], starts)

    def of_outcome(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows of `facts` that have outcome `name`, and whether each missed it."""
        k = self.names.index(name)
        lo, hi = int(self.starts[k]), int(self.starts[k + 1])
        return self.row[lo:hi], self.missed[lo:hi]

    def varied(self) -> np.ndarray:
        """Per outcome: the cases where it was missed in some runs and found in others."""
        if not self.names:
            return np.zeros(0, dtype=np.int64)
        cases = int(self.case.max()) + 1
        key = self.outcome * cases + self.case
        unique, inverse = np.unique(key, return_inverse=True)
        runs = np.bincount(inverse)
        misses = np.bincount(inverse, weights=self.missed)
        mixed = (misses > 0) & (misses < runs)
        return np.bincount(unique // cases, weights=mixed, minlength=len(self.names))


OUTCOMES_TESTED = 200
"""Outcomes tested at most: pass/fail, then the items missed and found within the most
cases (items are mostly a case's own: 10,000 cases hold 40,000; `--item` tests any)."""


def chosen_outcomes(flat: _Flat, outcomes: Iterable[str] | None) -> list[str]:
    """The outcomes to test: those asked for, else pass/fail and the `OUTCOMES_TESTED`
    items that vary (missed in some runs, found in others) within the most cases. The
    choice reads only the outcomes, never a feature: it cannot favour a signature."""
    if outcomes is not None:
        return [o for o in outcomes if o in flat.names]
    varied = dict(zip(flat.names, flat.varied().tolist(), strict=True))
    ranked = sorted((n for n in varied if varied[n]), key=lambda n: (n != PASS, -varied[n], n))
    return ranked[:OUTCOMES_TESTED]


def signatures(
    facts: Sequence[Facts],
    *,
    adjust: str = "bh",
    alpha: float = 0.05,
    confidence: float = 0.95,
    outcomes: Iterable[str] | None = None,
    seed: int = 0,
) -> tuple[list[Signature], list[Test]]:
    """The signatures that stand at `alpha` after adjustment (ranked by effect: the
    interval's lower end, then the estimate), and every test of the family (by p).
    `outcomes`: only these (e.g. one item)."""
    table = feature_table(facts)
    case_code: dict[str, int] = {}
    codes = np.array([case_code.setdefault(f.case, len(case_code)) for f in facts], dtype=int)
    flat = _Flat.of(facts, codes)
    wanted = chosen_outcomes(flat, outcomes)
    tests: list[tuple[Test, np.ndarray, np.ndarray, np.ndarray, list[str]]] = []
    for outcome in wanted:
        rows, y = flat.of_outcome(outcome)
        if rows.size < 2:
            continue
        cases = np.unique(codes[rows], return_inverse=True)[1].ravel()
        seen: dict[bytes, int] = {}
        for feature, column in table.items():
            x = column[rows]
            if x.all() or not x.any():
                continue
            key = np.packbits(x).tobytes()
            if key in seen or np.packbits(~x).tobytes() in seen:
                tests[seen.get(key, seen.get(np.packbits(~x).tobytes(), 0))][4].append(feature)
                continue
            found = _oriented(outcome, feature, cases, x, y, confidence)
            if found is None:
                continue
            test, oriented = found
            seen[key] = len(tests)
            pairs, runs = _pairs_and_runs(facts, rows, oriented, y)
            test = Test(**{**test.__dict__, "pairs": pairs, "runs": runs})
            tests.append((test, cases, oriented, y, []))
    family = [entry for entry in tests if entry[0].floor <= alpha]
    q = _adjusted([e[0].p for e in family], adjust) if family else np.array([])
    standing = []
    for entry, q_value in zip(family, q.tolist(), strict=True):
        test, cases, x, y, aliases = entry
        if q_value <= alpha:
            perm = _permutation_p(cases, x, y, seed)
            standing.append(Signature(test, q_value, perm, tuple(aliases)))
    standing.sort(key=lambda s: (-s.test.low, -s.test.odds_ratio, s.q))
    return standing, sorted((e[0] for e in family), key=lambda t: t.p)


# ------------------------------------------------------------- run facts


def item_outcomes(graded: Sequence[Mapping[str, Any]]) -> dict[str, bool]:
    """Each goal item of a run's graded details -> missed."""
    out: dict[str, bool] = {}
    for detail in graded:
        missing = {str(i) for i in detail.get("missing") or []}
        for item in detail.get("expected") or []:
            out[str(item)] = str(item) in missing
    return out


def count_features(
    tool_counts: Mapping[str, tuple[int, int]], labels: Sequence[tuple[str, str, str, str]]
) -> dict[str, Any]:
    """Features every run summary carries: each tool called or not, its calls (a number:
    against the case's median), a tool error returned. `labels`: per tool, the three
    feature names and the tool (`tool_labels`)."""
    out: dict[str, Any] = {}
    for called, calls_of, errored, tool in labels:
        calls, errors = tool_counts.get(tool, (0, 0))
        out[called] = calls > 0
        out[calls_of] = calls
        out[errored] = errors > 0
    return out


UserFeature = Callable[[Any], Any]
"""A feature of the user's world: a function over a run (`RunRecord`) returning a bool,
a number or a text (None: the run does not have it)."""


def run_features(run: Any, cut: Any = None) -> dict[str, Any]:
    """Features only a whole run holds: turns, each scalar argument value of each tool."""
    from passhat.divergence import run_calls, turns

    cut = turns(run.transcript) if cut is None else cut
    out: dict[str, Any] = {}
    if run.transcript:
        out["turns"] = max(0, len(cut) - 1)
    for call in run_calls(run, cut):
        if isinstance(call.arguments, Mapping):
            for key, value in call.arguments.items():
                if isinstance(value, str | int | float | bool) and len(str(value)) <= 60:
                    out[f"called {call.tool} with {key}={value}"] = True
    return out


def first_step_features(runs: Sequence[Any]) -> dict[int, dict[str, Any]]:
    """Per run of one case: the tool it called at the case's first divergence (where its
    runs first part, on the basis `case_steps` picks), or that it made no call there."""
    from passhat.divergence import case_steps, divergence_tree, run_calls

    basis, keys = case_steps(runs)
    if basis == "outputs" or len(keys) < 2:
        return {}
    tree = divergence_tree(keys)
    if not tree.children and not tree.ended:
        return {}
    at = tree.last + 1
    out: dict[int, dict[str, Any]] = {}
    for run in runs:
        calls = run_calls(run)
        if basis == "tool calls":
            here = [c.tool for c in calls[at : at + 1]]
        else:
            here = [c.tool for c in calls if c.turn == at][:1]
        out[run.run_index] = {FIRST_STEP: f"called {here[0]}" if here else "made no call"}
    return out


@dataclass(frozen=True)
class Why:
    """What `passhat why` answers for one experiment."""

    experiment: str
    runs: int
    """Counted runs looked at."""
    cases: int
    signatures: tuple[Signature, ...]
    tests: tuple[Test, ...]
    """The family adjusted together (tests whose margins allow a p under `alpha`)."""
    adjust: str
    alpha: float
    whole_runs: bool
    """Whether whole-run features (arguments, turns, first divergence) were read."""
    pairs: tuple[Mapping[str, Any], ...] = ()
    """When the data are too few for any signature: per outcome, one found/missed pair
    of one case and where they part (`passhat diff`'s answer)."""

    @property
    def too_few(self) -> bool:
        """No test could reach the level: the runs are too few for a signature."""
        return not self.tests


def summary_facts(
    summaries: Iterable[Any],
    tools: Sequence[str],
    extra: Mapping[tuple[str, int], Mapping[str, Any]],
) -> list[Facts]:
    """Facts of every counted run from its summary (`RunSummary`), with `extra`
    features by (case, run) (whole-run and user features)."""
    out = []
    # summaries share equal item lists, and the runs of one list share its outcomes
    items: dict[int, tuple[Any, dict[str, bool], dict[str, bool]]] = {}
    labels = [(f"called {t}", f"calls of {t}", f"{t} returned an error", t) for t in tools]
    for s in summaries:
        if s.status == "errored":
            continue
        graded = s.graded_items
        known = items.get(id(graded))
        if known is None:
            failed = {PASS: True, **item_outcomes(graded)}
            known = items[id(graded)] = (graded, failed, {**failed, PASS: False})
        outcomes = known[1] if s.status == "failed" else known[2]
        features = count_features(s.tool_counts, labels)
        features["tokens"] = s.input_tokens + s.output_tokens
        features.update(extra.get((s.case_id, s.run_index), {}))
        out.append(Facts(s.case_id, s.run_index, outcomes, features))
    return out


def whole_features(
    runs: Sequence[Any], user: Mapping[str, UserFeature] | None = None
) -> dict[tuple[str, int], dict[str, Any]]:
    """Whole-run and user features of one case's runs, by (case, run)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    first = first_step_features(runs)
    for run in runs:
        features = run_features(run)
        features.update(first.get(run.run_index, {}))
        for name, function in (user or {}).items():
            features[name] = function(run)
        out[(run.case_id, run.run_index)] = features
    return out


def too_few_pairs(facts: Sequence[Facts], outcomes: Iterable[str] | None) -> list[dict[str, Any]]:
    """Per outcome: the first case with a found and a missed run, and the pair."""
    wanted = None if outcomes is None else set(outcomes)
    out: list[dict[str, Any]] = []
    done: set[str] = set()
    by_case: dict[str, list[Facts]] = {}
    for f in facts:
        by_case.setdefault(f.case, []).append(f)
    for case, runs in by_case.items():
        names = {o for f in runs for o in f.outcomes}
        for outcome in sorted(names - done):
            if wanted is not None and outcome not in wanted:
                continue
            missed = [f.run for f in runs if f.outcomes.get(outcome) is True]
            found = [f.run for f in runs if f.outcomes.get(outcome) is False]
            if missed and found:
                done.add(outcome)
                out.append(
                    {"outcome": outcome, "case": case, "found": found[0], "missed": missed[0]}
                )
                if len(out) >= PAIRS_SHOWN:
                    return out
    return out


PAIRS_SHOWN = 20
"""Outcomes given a pair when the runs are too few for a signature."""


CASES_PER_READ = 200
"""Cases whose whole runs are read at once for whole-run features."""


def explain(
    record: Any,
    summaries: Sequence[Any],
    load: Callable[[Sequence[str]], Sequence[Any]] | None,
    *,
    item: str | None = None,
    adjust: str = "bh",
    alpha: float = 0.05,
    features: Mapping[str, UserFeature] | None = None,
    seed: int = 0,
) -> Why:
    """`Experiment.why`: facts from the summaries (and whole runs when `load` reads
    them, a few cases at a time), then `signatures`."""
    from passhat.errors import InputError
    from passhat.stats.multiplicity import _check_adjust

    _check_adjust(adjust)
    extra: dict[tuple[str, int], dict[str, Any]] = {}
    counted = {(s.case_id, s.run_index) for s in summaries if s.status != "errored"}
    if load is not None:
        cases = list(dict.fromkeys(s.case_id for s in summaries))
        for start in range(0, len(cases), CASES_PER_READ):
            latest: dict[tuple[str, int], Any] = {}
            for run in load(cases[start : start + CASES_PER_READ]):
                key = (run.case_id, run.run_index)
                if key in counted and (key not in latest or run.attempt > latest[key].attempt):
                    latest[key] = run
            by_case: dict[str, list[Any]] = {}
            for run in latest.values():
                by_case.setdefault(run.case_id, []).append(run)
            for runs in by_case.values():
                extra.update(whole_features(runs, features))
    tools = list(record.tools) or sorted({t for s in summaries for t in s.tool_counts})
    facts = summary_facts(summaries, tools, extra)
    outcomes = None if item is None else [item]
    if item is not None and not any(item in f.outcomes for f in facts):
        known = sorted({o for f in facts for o in f.outcomes})
        shown = ", ".join(known[:8]) + (" ..." if len(known) > 8 else "")
        raise InputError(
            f"--item {item!r} is not a goal item of any counted run; use one of: {shown}"
        )
    standing, tests = signatures(facts, adjust=adjust, alpha=alpha, outcomes=outcomes, seed=seed)
    pairs = tuple(too_few_pairs(facts, outcomes)) if not tests else ()
    if pairs:
        pairs = tuple(pairwise(pairs, summaries, load))
    return Why(
        record.name or record.id,
        len(facts),
        len({f.case for f in facts}),
        tuple(standing),
        tuple(tests),
        adjust,
        alpha,
        load is not None,
        pairs,
    )


def pairwise(
    pairs: Sequence[Mapping[str, Any]],
    summaries: Sequence[Any],
    load: Callable[[Sequence[str]], Sequence[Any]] | None,
) -> list[dict[str, Any]]:
    """Each too-few pair with what tells its two runs apart: the tools called a
    different number of times (`tools`: tool -> [calls in the missed run, in the found
    one]) and, when whole runs are read, where they part (`basis`, `parted_at`)."""
    from passhat.divergence import diff_runs

    counts = {(s.case_id, s.run_index): s.tool_counts for s in summaries}
    out = []
    for p in pairs:
        missed = counts.get((p["case"], p["missed"]), {})
        found = counts.get((p["case"], p["found"]), {})
        tools = {
            t: [missed.get(t, (0, 0))[0], found.get(t, (0, 0))[0]]
            for t in dict.fromkeys([*missed, *found])
            if missed.get(t, (0, 0))[0] != found.get(t, (0, 0))[0]
        }
        row: dict[str, Any] = {**p, "tools": tools}
        if load is not None:
            runs = {r.run_index: r for r in load([p["case"]])}
            if p["missed"] in runs and p["found"] in runs:
                d = diff_runs(runs[p["missed"]], runs[p["found"]])
                row["basis"], row["parted_at"] = d.basis, d.parted_at
        out.append(row)
    return out
