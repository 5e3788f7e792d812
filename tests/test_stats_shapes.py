"""Statistics that hold under every shape of data (issue 13): names, zero-width
intervals, the denominator ledger, figures at the requested k, and compare with
unequal k and per-case verdicts. Each test names the failure it guards against."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from passhat import stats
from passhat.accounting import Accounting, account, error_ledger
from passhat.metrics import RATE_LABEL
from passhat.report.loss import loss_line


def _write(path: Path, rows: list[tuple[str, int, str]]) -> str:
    path.write_text(
        "".join(json.dumps({"case": c, "run": r, "status": s}) + "\n" for c, r, s in rows),
        encoding="utf-8",
    )
    return str(path)


# --------------------------------------------------------------------------- names


def test_the_two_numbers_once_both_called_pass_at_1_have_different_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run-weighted 9.5 % and case-mean 24.0 % were both labelled pass@1 in one output.
    Since issue 24 the headline (`pass_at_1`) is the mean of per-case rates whenever cases
    counted different runs, named so, with the pass rate over runs beside it."""
    rows = [("short", 1, "passed"), ("short", 2, "errored")]
    rows += [("long", i, "passed" if i == 1 else "failed") for i in range(1, 11)]
    file = _write(tmp_path / "v.jsonl", rows)
    r = run_cli(capsys, "metrics", file, "--json")
    d = json.loads(r.out)["dataset"]
    assert d["pass_rate_over_runs"] == d["pass_at_1"] == pytest.approx(2 / 11)
    assert d["pass_rate"] == d["mean_case_rate"] == pytest.approx(0.55)
    assert d["pass_rate_weighs"] == "cases"
    assert d["label_rate"] == "pass rate (over runs)"
    assert d["label_pass_rate"] == "pass rate (mean of per-case rates)"
    assert d["label_at"] == "pass@1 (mean of per-case rates)"
    ints = d["intervals"]
    assert ints["pass_at_1"]["label"] == "pass rate (mean of per-case rates)"
    assert ints["pass_at_1"]["estimate"] == pytest.approx(0.55)
    assert ints["pass_rate_over_runs"]["label"] == "pass rate (over runs)"
    assert ints["pass_rate_over_runs"]["estimate"] == pytest.approx(2 / 11)
    assert ints["pass_at_k"]["label"] == "pass@1 (mean of per-case rates)"
    out = run_cli(capsys, "metrics", file).out
    # both named in the intervals table (an 80-column terminal wraps the labels)
    assert "pass rate (over" in out and "pass rate (mean of" in out
    assert "18.2%" in out and "55.0%" in out
    assert "2/11 0.55" in out  # the accounting table's dataset row holds the headline
    assert "the mean of per-case rates, each case once" in " ".join(out.split())


def test_equal_counted_runs_keep_the_seed_rule_exactly() -> None:
    """Every case with the same counted runs: the headline is passes / runs to the bit,
    labelled the pass rate over runs, with no second pass-rate figure."""
    a = account(
        [(c, i, "passed" if (i + ord(c)) % 3 else "failed") for c in "xyzw" for i in (1, 2, 3)], 3
    )
    m = a.dataset().metrics
    assert not m.weighs_cases
    assert m.pass_rate == m.pass_at_1 == m.passes / m.runs
    assert m.label_rate == "pass rate (over runs)"
    d = stats.dataset_intervals(a)
    assert d.over_runs is None and not d.weighs_cases
    # the score interval at the runs' binomial floor, as when runs differ
    rates = np.array(_passes(a)) / 3
    score = stats.score_interval("pass rate (over runs)", rates, 12.0)
    assert (d.pass_at_1.low, d.pass_at_1.high) == (score.low, score.high)
    assert d.pass_at_1.estimate == m.passes / m.runs
    assert d.pass_at_1.method.startswith("Wilson score (continuity-corrected)")


def _passes(a: Accounting) -> list[int]:
    return [c.passes for c in a.cases]


def test_errors_on_hard_cases_cannot_move_the_case_weighted_headline() -> None:
    """The review's design: errors that fall on hard cases. Two cases at p = 0 and 1 with
    10 runs asked; the hard one loses 8 runs to errors. Over runs: 10/12 = 83 %; the
    headline weighs each case once: 50 %, the truth of these two cases."""
    runs = [("easy", i, "passed") for i in range(1, 11)]
    runs += [("hard", i, "failed" if i <= 2 else "errored") for i in range(1, 11)]
    a = account(runs, 10)
    m = a.dataset().metrics
    assert m.pass_at_1 == pytest.approx(10 / 12)
    assert m.weighs_cases and m.pass_rate == pytest.approx(0.5)
    d = stats.dataset_intervals(a)
    assert d.pass_at_1.estimate == pytest.approx(0.5) and d.pass_at_1.low < 0.5 < d.pass_at_1.high
    assert d.over_runs is not None and d.over_runs.estimate == pytest.approx(10 / 12)


def test_a_case_with_no_counted_run_has_no_pass_at_0_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _write(tmp_path / "v.jsonl", [("a", 1, "passed"), ("b", 1, "errored")])
    cases = {
        c["case"]: c for c in json.loads(run_cli(capsys, "metrics", file, "--json").out)["cases"]
    }
    assert cases["b"]["label_at"] is None and cases["b"]["label_hat"] is None
    assert cases["a"]["label_at"] == "pass@1"


# --------------------------------------------------------------------------- zero-width intervals


def test_three_cases_each_at_one_half_get_a_real_interval() -> None:
    """Was 'pass@1 50.0 % [50.0, 50.0]' from both methods: a cluster SE of 0 proves nothing."""
    a = account([(c, i, "passed" if i == 1 else "failed") for c in "xyz" for i in (1, 2)], 2)
    d = stats.dataset_intervals(a)
    for interval in (d.pass_at_1, d.pass_at_1_bootstrap):
        assert interval.low < 0.5 < interval.high
        assert "Wilson" in interval.method and "floor" in interval.method
    # the same runs as 6 independent coin flips: the Wilson interval, with t(2) (the
    # bootstrap's floor); the headline's is the same continuity-corrected, so wider
    z = stats._t_quantile(2, 0.05)
    centre = (3 + z * z / 2) / (6 + z * z)
    wilson = centre - z / (6 + z * z) * math.sqrt(1.5 + z * z / 4)
    assert d.pass_at_1_bootstrap.low == pytest.approx(wilson)
    assert d.pass_at_1.low < wilson


def test_equal_case_figures_strictly_inside_zero_and_one_get_a_floor() -> None:
    """Every case 2 of 4: pass@2 = 5/6 in every case, no spread; the floor still gives width."""
    n, c = np.full(5, 4), np.full(5, 2)
    at, hat = stats.case_mean_intervals(n, c, 2)
    for interval, value in ((at, 5 / 6), (hat, 1 / 6)):
        assert interval.estimate == pytest.approx(value)
        assert interval.low < value < interval.high
        assert "binomial floor" in interval.method


def test_compare_never_claims_an_mde_of_zero() -> None:
    """Every paired case moved by the same amount: the paired SE is 0, the MDE was 0.0."""
    n = np.full(12, 4)
    diffs, verdict = stats.compare_counts(n, np.full(12, 1), n, np.full(12, 2), resamples=200)
    for d in diffs:
        assert d.mde > 0 and d.se > 0
    assert diffs[0].low < diffs[0].difference < diffs[0].high
    assert "MDE = 0.0" not in verdict.text


def test_intervals_always_contain_their_estimate() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        cases = int(rng.integers(2, 40))
        n = rng.integers(1, 8, cases)
        c = rng.binomial(n, rng.beta(0.5, 0.5, cases))
        at, hat = stats.case_mean_intervals(n, c, int(n.min()))
        rate = stats.cluster_interval(n, c)
        for i in (at, hat, rate):
            assert i.low <= i.estimate <= i.high


# --------------------------------------------------------------------------- ledger


def test_the_ledger_shows_errors_left_out_as_failures_and_as_passes() -> None:
    a = account(
        [
            ("a", 1, "passed"),
            ("a", 2, "errored"),
            ("a", 3, "passed"),
            ("b", 1, "failed"),
            ("b", 2, "failed"),
            ("b", 3, "passed"),
        ],
        3,
    )
    ledger = a.error_ledger()
    assert ledger is not None and (ledger.errored, ledger.cases) == (1, 1)
    rate = ledger.rows[0]
    assert rate.label == RATE_LABEL
    assert (rate.excluded, rate.as_failures, rate.as_passes) == pytest.approx((3 / 5, 3 / 6, 4 / 6))
    hat = ledger.rows[2]
    assert hat.label == "pass^2"
    # a: 2 of 2 counted -> 1; as a failure 2 of 3 -> 1/3; as a pass 3 of 3 -> 1
    assert (hat.as_failures, hat.as_passes) == pytest.approx(((1 / 3 + 0) / 2, (1 + 0) / 2))
    assert account([("a", 1, "passed")], 1).error_ledger() is None


def test_errors_concentrated_in_hard_cases_raise_the_warning() -> None:
    """Informative errors: 60.9 % reported where the truth was 50 %, and nothing said."""
    rng = np.random.default_rng(1)
    p = rng.beta(2, 2, 200)
    cases = []
    for rate in p:
        n = 10
        errored = int(rng.binomial(n, 0.5 if rate < 0.4 else 0.02))
        counted = n - errored
        cases.append((counted, int(rng.binomial(counted, rate)), errored))
    informative = error_ledger(cases)
    assert informative.concentrated
    assert informative.z is not None and informative.z < -2.326
    random_errors = []
    for rate in p:
        errored = int(rng.binomial(10, 0.2))
        random_errors.append((10 - errored, int(rng.binomial(10 - errored, rate)), errored))
    assert not error_ledger(random_errors).concentrated


def test_ledger_is_printed_with_its_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = []
    for i in range(30):  # 30 hard cases where half the runs error, 30 easy ones without
        hard = i < 15
        for r in range(1, 7):
            if hard and r <= 3:
                rows.append((f"c{i}", r, "errored"))
            else:
                passed = (r % 3 == 0) if hard else (r != 6)
                rows.append((f"c{i}", r, "passed" if passed else "failed"))
    file = _write(tmp_path / "v.jsonl", rows)
    out = run_cli(capsys, "metrics", file).out
    assert "as failures" in out and "as passes" in out
    assert "concentrate in low-pass cases" in out
    data = json.loads(run_cli(capsys, "metrics", file, "--json").out)["dataset"]["error_ledger"]
    assert data["concentrated_in_low_pass_cases"] is True
    assert [r["label"] for r in data["rows"]] == [
        "pass rate (over runs)",
        "pass@3",
        "pass^3",
        "pass rate (mean of per-case rates)",
    ]
    # the warning concerns the figure that weighs cases by their runs, and says so
    assert [r["weighs_runs"] for r in data["rows"]] == [True, False, False, False]
    assert "overstates pass rate (over runs), which weighs" in " ".join(
        out.replace("│", " ").split()
    )


# --------------------------------------------------------------------------- requested k


def test_figures_at_the_requested_k_over_the_cases_that_reached_it() -> None:
    """One short case dragged every case's j down to 1; the requested k is kept beside it."""
    rows = [(f"c{i}", r, "passed" if r <= i % 4 else "failed") for i in range(8) for r in (1, 2, 3)]
    rows[0] = ("c0", 1, "errored")
    rows[1] = ("c0", 2, "errored")
    a = account(rows, 3)
    assert a.dataset().j == 1
    r = a.at_requested()
    assert r is not None and r.k == 3 and r.left_out == ("c0",)
    assert r.metrics.cases == 7 and r.metrics.j == 3
    d = stats.dataset_intervals(a)
    assert d.at_requested is not None
    assert [i.label for i in d.at_requested] == ["pass@3", "pass^3"]
    assert (d.requested_cases, d.requested_left_out) == (7, 1)
    # the point figure uses every case, c0 too (its one counted run, under the population)
    counted = [(c.counted, c.passes) for c in a.cases]
    at, hat = _every_case(counted, 3)
    assert d.at_requested[0].estimate == pytest.approx(at)
    assert d.at_requested[1].estimate == pytest.approx(hat)
    assert d.at_requested[0].estimate != pytest.approx(r.metrics.pass_at_j)


def _moment(a: float, b: float, m: int) -> float:
    return math.exp(
        math.lgamma(a + m) - math.lgamma(a) + math.lgamma(a + b) - math.lgamma(a + b + m)
    )


def _every_case(cases: list[tuple[int, int]], k: int) -> tuple[float, float]:
    """pass@k and pass^k over every case, written out: a case with k runs or more its
    unbiased C(c, k) / C(n, k) forms, a case short of k (n = 0: no counted run) its
    posterior mean under the Beta population fitted to the counted cases."""
    counted = [(n, c) for n, c in cases if n]
    a, b = stats.fitted_prior([n for n, _ in counted], [c for _, c in counted])
    at = hat = 0.0
    for n, c in cases:
        if n >= k:
            at += 1 - math.comb(n - c, k) / math.comb(n, k)
            hat += math.comb(c, k) / math.comb(n, k)
        else:
            at += 1 - _moment(b + n - c, a + c, k)
            hat += _moment(a + c, b + n - c, k)
    return at / len(cases), hat / len(cases)


# --------------------------------------------------------------------------- compare


def test_unequal_k_no_longer_makes_the_sign_flip_blind() -> None:
    """A k = 3 against B k = 10, B clearly better: swapping (c, n) pairs made the null so
    wide that the test never rejected (power 89.5 % vs 97.5 % with equal k)."""
    rng = np.random.default_rng(5)
    found = 0
    for e in range(60):
        p = rng.beta(0.5, 0.5, 100)
        na, nb = np.full(100, 3), np.full(100, 10)
        p_b = p + 0.25 * (1 - p)
        _, verdict = stats.compare_counts(
            na, rng.binomial(na, p), nb, rng.binomial(nb, p_b), resamples=200, seed=e
        )
        found += verdict.outcome == "better"
    assert found / 60 >= 0.9


def test_unequal_k_a_over_a_rejects_near_the_nominal_rate() -> None:
    """A/A with k = 3 against k = 10: 0 of 300 rejections before (far below 5 %)."""
    rng = np.random.default_rng(8)
    rejected = 0
    runs = 300
    for e in range(runs):
        p = rng.beta(0.5, 0.5, 100)
        na, nb = np.full(100, 3), np.full(100, 10)
        _, verdict = stats.compare_counts(
            na, rng.binomial(na, p), nb, rng.binomial(nb, p), resamples=200, seed=e
        )
        rejected += verdict.outcome != "none"
    # binomial noise at 5 % over 300 runs is +-1.3 points; 1 % would mean still blind
    assert 0.015 <= rejected / runs <= 0.08


def test_per_case_verdicts_are_corrected_for_testing_every_case() -> None:
    p = np.array([0.001, 0.01, 0.02, 0.04, 0.5])
    q = stats.benjamini_hochberg(p)
    assert q == pytest.approx([0.005, 0.025, 0.1 / 3, 0.05, 0.5])
    # Fisher exact on one case: 0/10 against 10/10
    assert stats.fisher_exact(10, 0, 10, 10) == pytest.approx(2 / math.comb(20, 10))
    a = account([(f"c{i}", r, "failed") for i in range(20) for r in range(1, 11)], 10)
    b_rows = [
        (f"c{i}", r, "passed" if i == 0 else "failed") for i in range(20) for r in range(1, 11)
    ]
    c = stats.compare(a, account(b_rows, 10), resamples=200)
    moved = {x.case: x for x in c.cases}
    assert moved["c0"].outcome == "better" and moved["c0"].q_value < 0.05
    assert all(x.outcome == "none" for name, x in moved.items() if name != "c0")
    # 3 runs a side can never make one case significant after correction
    a3 = account([(f"c{i}", r, "failed") for i in range(20) for r in (1, 2, 3)], 3)
    b3 = account(
        [(f"c{i}", r, "passed" if i == 0 else "failed") for i in range(20) for r in (1, 2, 3)], 3
    )
    assert all(x.outcome == "none" for x in stats.compare(a3, b3, resamples=200).cases)


def test_compare_names_the_correction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fa = _write(tmp_path / "a.jsonl", [(f"c{i}", r, "failed") for i in range(5) for r in (1, 2, 3)])
    fb = _write(tmp_path / "b.jsonl", [(f"c{i}", r, "passed") for i in range(5) for r in (1, 2, 3)])
    out = run_cli(capsys, "compare", fa, fb).out
    assert "Benjamini-Hochberg" in out and "Fisher exact" in out
    data = json.loads(run_cli(capsys, "compare", fa, fb, "--json").out)
    assert data["case_tests"]["correction"] == "Benjamini-Hochberg"
    assert {"p_value", "q_value", "outcome"} <= set(data["cases"][0])


# --------------------------------------------------------------------------- issue 24


def test_at_k_interval_holds_what_full_runs_could_have_shown() -> None:
    """pass^3 over the cases that reached k = 3 is 1/2 (a 3/3, c 0/3); b passed its one
    counted run and errored twice, d has no counted run. Full runs could have given
    pass^3 from 1/4 (b and d fail) to 3/4 (b and d pass): the interval runs from the low
    bound's lower end to the high bound's upper end."""
    n, c = np.array([3, 1, 3]), np.array([3, 1, 0])
    d = stats.dataset_intervals_counts(n, c, 3, resamples=200, unseen=1)
    assert d.at_requested is not None
    at, hat = d.at_requested
    assert hat.method == stats.AT_K_METHOD
    assert (at.estimate, hat.estimate) == pytest.approx(
        _every_case([(3, 3), (1, 1), (3, 0), (0, 0)], 3)
    )
    low = stats.score_interval("pass^3", [1.0, 0.0, 0.0, 0.0], 4.0).low
    high = stats.score_interval("pass^3", [1.0, 1.0, 0.0, 1.0], 4.0).high
    assert (hat.low, hat.high) == (pytest.approx(low), pytest.approx(high))
    # pass@3: b passed once, so at least once in 3 whatever its errored runs were
    assert at.low == pytest.approx(stats.score_interval("pass@3", [1.0, 1.0, 0.0, 0.0], 4.0).low)
    # every case reached k: no at-k figure, the dataset's own pass^3 is it
    assert stats.dataset_intervals_counts([3, 3], [3, 0], 3, resamples=200).at_requested is None


def test_a_bootstrap_of_few_agreeing_cases_is_widened_to_the_binomial_floor() -> None:
    """Five cases at nearly one rate: resampling them sees less spread than 20 independent
    runs would (the bootstrap covered 92 % at a point mass with 5 cases)."""
    n, c = np.full(5, 4), np.array([2, 2, 2, 2, 3])
    boot = stats.dataset_intervals_counts(n, c, 4, resamples=400).pass_at_1_bootstrap
    floor = stats._binomial_floor(11 / 20, 20, 5, 0.95)
    assert boot.method.endswith("widened to the binomial floor")
    assert boot.low <= floor.low and boot.high >= floor.high
    # the same for the case-weighted headline (unequal runs)
    n2 = np.array([4, 4, 4, 4, 5])
    boot2 = stats.dataset_intervals_counts(n2, c, 4, resamples=400).pass_at_1_bootstrap
    assert boot2.label == "pass rate (mean of per-case rates)"
    assert boot2.method.endswith("widened to the binomial floor")


def test_the_share_forecast_holds_one_p_for_all_when_cases_show_no_spread() -> None:
    """20 cases that all pass 3 of 5 (one p for all, as far as the runs can tell): the fit
    cannot go below no spread, so the share's interval also holds p^m at the ends of the
    pooled rate's floor interval; 10 cases at 0 and 10 at 5 of 5 differ: no such widening."""
    flat = stats.share_forecast(np.full(20, 5), np.array([3] * 19 + [2]), 10, resamples=200)
    assert "or one p for all cases (no spread beyond the runs' own)" in flat.method
    assert flat.check is not None and "not checked: 20 cases are too few" in flat.check
    assert "widened" not in flat.method  # too few cases to check: not widened for that
    rate = stats._binomial_floor(59 / 100, 100, 20, 0.95)
    assert flat.low is not None and flat.high is not None
    assert flat.low <= rate.low**10 and flat.high >= rate.high**10
    assert flat.basis.startswith("fitted Beta(")
    split = stats.share_forecast(np.full(20, 5), np.array([0, 5] * 10), 10, resamples=200)
    assert "one p for all" not in split.method


def test_the_share_row_names_its_own_prior(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The per-case column uses the Jeffreys prior; the expected-share row under it uses
    the Beta fitted across cases, and now says so in its own row."""
    rows = [
        (f"c{i}", r, "passed" if (r + i) % 3 else "failed") for i in range(12) for r in (1, 2, 3)
    ]
    file = _write(tmp_path / "v.jsonl", rows)
    out = run_cli(capsys, "metrics", file, "-B", "200").out
    flat = " ".join(out.split())
    share_row = flat.split("expected")[-1].split("P(next")[0]  # the row wraps in its cells
    assert "share" in share_row and "fitted" in share_row and "across cases" in share_row
    assert "under a Jeffreys Beta(1/2, 1/2) prior" in flat


def test_holm_adjusts_for_any_false_verdict() -> None:
    """Holm's step-down: sorted p times (m, m - 1, ...), running maximum, capped at 1."""
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert stats.holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    # never below BH: it controls every verdict at once, not a share of them
    rng = np.random.default_rng(3)
    many = rng.random(40) ** 3
    assert np.all(stats.holm(many) >= stats.benjamini_hochberg(many) - 1e-12)


def test_compare_adjust_holm_or_bh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows_a = [(f"c{i}", r, "failed") for i in range(12) for r in range(1, 9)]
    rows_b = [
        (f"c{i}", r, "passed" if i < 3 or r <= i % 4 else "failed")
        for i in range(12)
        for r in range(1, 9)
    ]
    fa, fb = _write(tmp_path / "a.jsonl", rows_a), _write(tmp_path / "b.jsonl", rows_b)
    bh = json.loads(run_cli(capsys, "compare", fa, fb, "--json", "-B", "200").out)
    holm = json.loads(
        run_cli(capsys, "compare", fa, fb, "--json", "-B", "200", "--adjust", "holm").out
    )
    assert bh["case_tests"]["correction"] == "Benjamini-Hochberg"
    assert bh["case_tests"]["false_discovery_rate"] == 0.05
    assert holm["case_tests"]["correction"] == "Holm" and holm["case_tests"]["adjust"] == "holm"
    assert holm["case_tests"]["family_wise_error_rate"] == 0.05
    assert holm["case_tests"]["false_discovery_rate"] is None
    p = [x["p_value"] for x in holm["cases"]]
    assert [x["q_value"] for x in holm["cases"]] == pytest.approx(stats.holm(p).tolist())
    assert [x["q_value"] for x in bh["cases"]] == pytest.approx(
        stats.benjamini_hochberg(p).tolist()
    )
    out = run_cli(capsys, "compare", fa, fb, "-B", "200", "--adjust", "holm").out
    assert "Holm adjusted" in out
    bad = run_cli(capsys, "compare", fa, fb, "--adjust", "bonferroni")
    assert bad.code == 2 and "--adjust is 'bonferroni'; use holm or bh" in bad.err


def test_compare_with_different_runs_per_case_judges_the_case_weighted_rate() -> None:
    """After an adaptive run B's cases counted 3 or 12 runs: compare judges the mean of
    per-case rates, each case once (the design's statistic), not the pass rate over runs."""
    na, ca = np.full(6, 3), np.array([3, 2, 1, 2, 0, 3])
    nb, cb = np.array([3, 12, 12, 12, 3, 3]), np.array([3, 6, 3, 9, 0, 3])
    (rate, _, _), _ = stats.compare_counts(na, ca, nb, cb, resamples=200)
    assert rate.label == "pass rate (mean of per-case rates)"
    assert rate.a == pytest.approx((ca / na).mean()) and rate.b == pytest.approx((cb / nb).mean())
    assert rate.difference == pytest.approx((cb / nb - ca / na).mean())
    assert rate.low <= rate.difference <= rate.high
    # the flips and the paired t test on the same differences must both reject
    assert rate.method == stats.CASE_RATE_METHOD
    t = stats._t_quantile(5, 0.05)
    assert rate.low <= rate.difference - t * rate.se + 1e-12
    assert rate.high >= rate.difference + t * rate.se - 1e-12
    # equal runs per case on each side: the pass rate over runs, as before
    (same, _, _), _ = stats.compare_counts(na, ca, np.full(6, 5), np.array([5, 2, 1, 4, 0, 5]))
    assert same.label == "pass rate (over runs)"


def test_runs_lost_join_the_ledger_and_every_case_stays_in_the_bounds() -> None:
    """Issue 33: a missing run moves the figures as an errored one does, so it joins the
    ledger; the bounds take every case at its asked runs (b's missing run and c's two
    errored ones as failures, then as passes) and keep d, which has no counted run at
    all, in the denominator at 0 and 1; the takeaway line says both readings."""
    rows = [("a", i, "passed") for i in (1, 2, 3)]
    rows += [("b", 1, "passed"), ("b", 2, "failed"), ("c", 1, "failed")]
    rows += [("c", 2, "errored"), ("c", 3, "errored")]
    a = account(rows, 3, cases=["a", "b", "c", "d"])
    ledger = a.error_ledger()
    assert ledger is not None
    assert (ledger.errored, ledger.missing, ledger.cases) == (2, 4, 3)
    d = stats.dataset_intervals(a, resamples=200)
    assert (d.lost, d.unseen) == (3, 1)
    assert d.bounds is not None
    rate = d.bounds[0]
    trials = 4**2 / (3 * (1 / 3) + 1)  # G^2 / sum(1 / asked), d as one run
    label = d.pass_at_1.label
    low = stats.score_interval(label, [1.0, 1 / 3, 0.0, 0.0], trials).low
    high = stats.score_interval(label, [1.0, 2 / 3, 2 / 3, 1.0], trials).high
    assert (rate.low, rate.high) == (pytest.approx(low), pytest.approx(high))
    assert rate.estimate == d.pass_at_1.estimate and rate.method == stats.LOSS_METHOD
    # d's 0 and 1 are in those means: dropping it would give other ends
    assert low != pytest.approx(stats.score_interval(label, [1.0, 1 / 3, 0.0], 9.0).low)
    line = loss_line(stats.uncertainty(a, resamples=200))
    assert line is not None
    assert "if the 6 runs not counted are unrelated to the outcome" in line
    assert f"{rate.low * 100:.1f}%–{rate.high * 100:.1f}% whatever they hide" in line
    assert "(counting 1 case with no counted run, at 0 and 1)" in line
    # every asked run counted: no bounds, no line
    full = account([(c, i, "passed") for c in "xy" for i in (1, 2)], 2)
    assert stats.dataset_intervals(full, resamples=200).bounds is None
    assert loss_line(stats.uncertainty(full, resamples=200)) is None


def _two_point(cases: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Half the cases at p = 0.3, half at 0.95 (issue 33's cell), k runs each; the truth
    of the share passing 10 in a row over these cases."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(cases) < 0.5, 0.95, 0.3)
    return np.full(cases, k), rng.binomial(k, p), float(np.mean(p**10))


def test_the_share_forecast_checks_its_beta_population() -> None:
    """Issue 33, item 5. With 5 runs a case the pass counts of a two-point population
    reject the fitted Beta; those of a Beta population do not. With 2 runs a case no
    count can: a beta-binomial has 2 parameters and 2 runs leave 2 free shares."""
    n, c, _ = _two_point(1000, 5, seed=1)
    a, b = stats.fitted_prior(n, c)
    found, why = stats.beta_check(n, c, a, b, 0.05)
    assert found == "rejected" and why.startswith("the runs reject the Beta population"), why
    rng = np.random.default_rng(2)
    c_beta = rng.binomial(5, rng.beta(2.0, 2.0, 1000))
    a, b = stats.fitted_prior(n, c_beta)
    assert stats.beta_check(n, c_beta, a, b, 0.05)[0] == "fits"
    n2, c2, _ = _two_point(1000, 2, seed=3)
    a, b = stats.fitted_prior(n2, c2)
    found, why = stats.beta_check(n2, c2, a, b, 0.05)
    assert found == "too few runs" and "cannot be checked with 2 runs a case" in why


def test_the_share_forecast_widens_where_the_beta_cannot_be_checked_or_is_rejected() -> None:
    """At 2 runs a case the Beta's share of a two-point population was 4 points low and
    its interval held the truth 62 % of the time; the interval now spans what any
    population with the cases' first 2 moments allows, and says why."""
    n, c, truth = _two_point(1000, 2, seed=4)
    share = stats.share_forecast(n, c, 10, resamples=400)
    assert share.low is not None and share.high is not None
    assert share.low <= truth <= share.high
    assert "widened to hold any population with these cases' first 2 moments" in share.method
    assert share.check is not None and share.method.endswith(share.check)
    beta_only = share.method.split("; widened")[0]
    assert "cannot be checked" not in beta_only
    # rejected at 5 runs: widened too, from the first 5 moments
    n5, c5, truth5 = _two_point(1000, 5, seed=5)
    share5 = stats.share_forecast(n5, c5, 10, resamples=400)
    assert "first 5 moments: the runs reject" in share5.method
    assert share5.low is not None and share5.high is not None
    assert share5.low <= truth5 <= share5.high
    # a Beta population the runs do not reject keeps the Beta interval alone
    rng = np.random.default_rng(2)
    fits = stats.share_forecast(n5, rng.binomial(5, rng.beta(2.0, 2.0, 1000)), 10, resamples=400)
    assert "widened" not in fits.method and fits.check is not None
    assert fits.check.startswith("Beta population checked")


def test_moment_bounds_hold_every_population_and_are_reached_at_2_moments() -> None:
    """Any population on [0, 1] (discrete, 1-5 points): its mean of p^m lies within the
    bounds its own moments give, at every top moment; at top = 2 the two extreme
    populations (mass at 0 and a point; at 1 and a point) reach them."""
    rng = np.random.default_rng(9)
    for _ in range(500):
        size = int(rng.integers(1, 6))
        x = rng.random(size) ** rng.choice([0.2, 1.0, 5.0])
        w = rng.dirichlet(np.ones(size))
        for top in (1, 2, 3, 5):
            mu = np.array([[float((w * x**j).sum()) for j in range(top + 1)]])
            for m in (top + 1, 10):
                low, high = stats.moment_bounds(mu, m, top)
                value = float((w * x**m).sum())
                assert low[0] - 1e-9 <= value <= high[0] + 1e-9, (x, w, top, m)
    # mass 0.25 at 0 and 0.75 at 0.8: the low end, exactly
    mu = np.array([[1.0, 0.6, 0.48]])
    low, high = stats.moment_bounds(mu, 10, 2)
    assert low[0] == pytest.approx(0.75 * 0.8**10)
    # mass w at 1 and 1 - w at y with the same two moments: y = 0.3, w = 3 / 7
    assert high[0] == pytest.approx(3 / 7 + 4 / 7 * 0.3**10)
