"""`passhat compare`: paired differences, their calibration, the verdict and the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import run_cli
from passhat import stats
from passhat.accounting import account
from passhat.errors import InputError, MetricsError

Rows = list[tuple[str, int, str]]


def _write(tmp_path: Path, name: str, rows: Rows) -> str:
    path = tmp_path / name
    path.write_text(
        "".join(json.dumps({"case": c, "run": r, "status": s}) + "\n" for c, r, s in rows),
        encoding="utf-8",
    )
    return str(path)


def _suite(rates: dict[str, int], k: int = 3) -> Rows:
    """Each case passes its first `rates[case]` runs of k."""
    return [
        (case, r, "passed" if r <= passes else "failed")
        for case, passes in rates.items()
        for r in range(1, k + 1)
    ]


# --------------------------------------------------------------------------- calibration


def _simulate(
    rng: np.random.Generator, cases: int, k: int, shift: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cases from a U-shaped population; B moves each p a share `shift` of the way to 1."""
    p = rng.beta(0.5, 0.5, cases)
    p_b = p + shift * (1 - p)
    return np.full(cases, k), rng.binomial(k, p), rng.binomial(k, p_b)


def _run(
    seed: int, experiments: int, shift: float, metric: stats.Metric = "pass@1"
) -> tuple[np.ndarray, list[stats.Difference]]:
    """B = 200 inside the loop (default 2,000): a coarser p-value is still a valid one."""
    rng = np.random.default_rng(seed)
    outcomes, chosen = [], []
    for e in range(experiments):
        n, ca, cb = _simulate(rng, 100, 3, shift)
        diffs, verdict = stats.compare_counts(n, ca, n, cb, metric=metric, resamples=200, seed=e)
        outcomes.append(verdict.outcome)
        chosen.append(diffs[stats.METRICS.index(metric)])
    return np.array(outcomes), chosen


def _true_difference(shift: float, metric: stats.Metric) -> float:
    """B - A in the population: pass@1 = E[p], pass^3 = E[p^3], p ~ Beta(1/2, 1/2).

    With q = 1 - p ~ Beta(1/2, 1/2), B has 1 - p_b = (1 - shift) q, and
    E[(1 - r q)^j] = sum_i C(j, i) (-r)^i E[q^i].
    """
    j = 1 if metric == "pass@1" else 3
    moments = stats.beta_moment(0.5, 0.5, np.arange(j + 1))
    r = 1.0 - shift
    b = sum(math.comb(j, i) * (-r) ** i * float(moments[i]) for i in range(j + 1))
    return b - float(moments[j])


def _shift_for(difference: float, metric: stats.Metric) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _true_difference(mid, metric) < difference else (lo, mid)
    return lo


@pytest.fixture(scope="module", params=["pass@1", "pass^k"])
def aa_runs(
    request: pytest.FixtureRequest,
) -> tuple[stats.Metric, np.ndarray, list[stats.Difference]]:
    metric: stats.Metric = request.param
    return (metric, *_run(seed=1, experiments=1000, shift=0.0, metric=metric))


def test_identical_configurations_rarely_differ(
    aa_runs: tuple[stats.Metric, np.ndarray, list[stats.Difference]],
) -> None:
    """1,000 A/A comparisons (100 cases, k = 3): a difference at most 5 % + 2 % of the time."""
    _, outcomes, diffs = aa_runs
    assert (outcomes != "none").mean() <= 0.07
    # ...and the paired interval holds the true difference, zero, about 95 % of the time.
    cover = np.mean([d.low <= 0 <= d.high for d in diffs])
    assert abs(cover - 0.95) <= 0.025


def test_a_real_difference_of_twice_the_mde_is_found(
    aa_runs: tuple[stats.Metric, np.ndarray, list[stats.Difference]],
) -> None:
    metric, _, diffs = aa_runs
    mde = float(np.median([d.mde for d in diffs]))
    assert 0.04 < mde < 0.15  # 100 cases x 3 runs: a few points cannot be seen
    shift = _shift_for(2 * mde, metric)
    assert _true_difference(shift, metric) == pytest.approx(2 * mde)
    outcomes, found = _run(seed=2, experiments=1000, shift=shift, metric=metric)
    assert (outcomes == "better").mean() >= 0.80
    assert found[0].label == ("pass rate (over runs)" if metric == "pass@1" else "pass^3")
    cover = np.mean([d.low <= 2 * mde <= d.high for d in found])
    assert abs(cover - 0.95) <= 0.03
    # At the MDE itself power is near, and below, the nominal 80 %: the SE grows
    # under the alternative and the permutation test is conservative with ties.
    outcomes, _ = _run(seed=3, experiments=400, shift=_shift_for(mde, metric), metric=metric)
    assert 0.5 <= (outcomes == "better").mean() <= 0.9


def test_few_cases_enumerate_every_sign_flip() -> None:
    """Four cases: 16 sign patterns, so p >= 2/16 and nothing can be declared."""
    n = np.full(4, 5)
    diffs, verdict = stats.compare_counts(n, np.zeros(4), n, n, resamples=100)
    assert diffs[0].exact and diffs[0].p_value == pytest.approx(2 / 16)
    assert verdict.outcome == "none"
    assert verdict.text.startswith(
        "No difference detectable with 4 paired cases (the sign-flip test cannot reach "
        "p < 0.05 with so few): "
    )
    # ...and no number of runs on these 4 cases could change that
    assert verdict.runs_needed is None and "runs per case" not in verdict.text


def test_worse_b_is_reported_worse() -> None:
    rng = np.random.default_rng(7)
    p = rng.beta(2, 1, 80)
    n = np.full(80, 5)
    _, verdict = stats.compare_counts(n, rng.binomial(5, p), n, rng.binomial(5, p * 0.6))
    assert verdict.outcome == "worse" and verdict.text.startswith(
        "B is worse: pass rate (over runs) -"
    )


def test_no_difference_says_how_many_more_would_settle_it() -> None:
    rng = np.random.default_rng(0)
    p = rng.beta(1, 1, 30)
    n = np.full(30, 3)
    ca = rng.binomial(3, p)
    cb = rng.binomial(3, np.minimum(p + 0.05, 1))
    diffs, verdict = stats.compare_counts(n, ca, n, cb)
    assert verdict.outcome == "none" and diffs[0].difference != 0
    assert verdict.cases_needed is not None
    expected = np.ceil(30 * (diffs[0].mde / diffs[0].difference) ** 2)
    assert verdict.cases_needed == expected
    assert f"about {verdict.cases_needed} cases" in verdict.text


# --------------------------------------------------------------------------- pairing and accounting


def test_unmatched_cases_are_listed_and_left_out() -> None:
    a = account(_suite({"x": 1, "y": 2, "z": 3, "only-a": 3}), k=3)
    b = account(_suite({"x": 2, "y": 2, "z": 3, "only-b": 0}), k=3)
    c = stats.compare(a, b, resamples=100)
    assert [x.case for x in c.cases] == ["x", "y", "z"]
    assert c.only_a == ("only-a",) and c.only_b == ("only-b",)
    assert c.pass_at_1.a == pytest.approx(6 / 9) and c.pass_at_1.b == pytest.approx(7 / 9)


def test_different_k_and_missing_runs_label_what_was_counted() -> None:
    rows_a = _suite({"x": 1, "y": 2, "z": 3}, k=3)
    rows_b = [r for r in _suite({"x": 4, "y": 2, "z": 5}, k=5) if r != ("y", 4, "failed")]
    rows_b = [(c, i, "errored" if (c, i) == ("x", 5) else s) for c, i, s in rows_b]
    a = account(rows_a, k=3)
    b = account(rows_b, k=5)
    c = stats.compare(a, b, resamples=100)
    assert c.j == 3  # A has 3 runs, B's x has 4 counted: never pass@5
    assert c.pass_at_j.label == "pass@3" and c.pass_hat_j.label == "pass^3"
    y = next(x for x in c.cases if x.case == "y")
    x = next(x for x in c.cases if x.case == "x")
    assert (y.runs_b, y.passes_b, x.runs_b, x.passes_b) == (4, 2, 4, 4)
    assert b.shortfalls() == [
        "x: 4 of 5 requested runs counted (errored run 5)",
        "y: 4 of 5 requested runs counted (missing run 4)",
    ]


def test_shared_case_without_counted_run_is_left_out() -> None:
    a = account(_suite({"x": 1, "y": 2, "z": 0}), k=3)
    b = account([*_suite({"x": 1, "y": 2}), ("z", 1, "errored")], k=3)
    c = stats.compare(a, b, resamples=100)
    assert c.left_out == ("z",) and len(c.cases) == 2


@pytest.mark.parametrize(
    ("rows_a", "rows_b", "message"),
    [
        (_suite({"x": 1}), _suite({"y": 1}), "A and B share no case"),
        ([("x", 1, "errored")], _suite({"x": 1}), "A has no counted run"),
        (_suite({"x": 1, "y": 2}), _suite({"x": 1}), "share 1 case with counted runs"),
    ],
    ids=["no-shared-case", "nothing-counted", "one-shared-case"],
)
def test_unpairable_sides_are_input_errors(rows_a: Rows, rows_b: Rows, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        stats.compare(account(rows_a, k=3), account(rows_b, k=3))


def test_check_suites() -> None:
    assert stats.check_suites(None, None) == ()
    assert stats.check_suites("abc", "abc") == ()
    assert "B has no suite hash" in stats.check_suites("abc", None)[0]
    with pytest.raises(InputError, match="pass --allow-different-suites"):
        stats.check_suites("aaaa1111", "bbbb2222")
    (note,) = stats.check_suites("aaaa1111", "bbbb2222", allow_different=True)
    assert "A ran suite aaaa1111, B ran suite bbbb2222" in note


def test_unknown_metric_is_refused() -> None:
    with pytest.raises(MetricsError, match="use one of pass@1, pass@k, pass\\^k"):
        stats.compare_counts([3, 3], [1, 2], [3, 3], [1, 2], metric="pass@2")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the command


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    rng = np.random.default_rng(42)
    p = rng.beta(1, 1, 40)
    rows_a: Rows = []
    rows_b: Rows = []
    for i in range(40):
        for r in (1, 2, 3):
            rows_a.append((f"c{i}", r, "passed" if rng.random() < p[i] else "failed"))
            if (i, r) == (4, 3):
                continue  # a missing run in B
            status = "passed" if rng.random() < min(1.0, p[i] + 0.3) else "failed"
            rows_b.append((f"c{i}" if i != 7 else "renamed", r, status))
    return _write(tmp_path, "a.jsonl", rows_a), _write(tmp_path, "b.jsonl", rows_b)


def test_compare_terminal_shows_accounting_pairing_and_verdict(
    pair: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_cli(capsys, "compare", *pair)
    assert r.code == 0, r.err
    out = r.out
    assert "only in A (left out): 1: c7" in out and "only in B (left out): 1: renamed" in out
    assert "c4: 2 of 3 requested runs counted (missing run 3)" in out
    assert "pass@2" in out and "pass^2" in out and "pass@3" not in out
    # c4 counted 2 runs, the others 3: the case-weighted pass rate is judged (issue 24)
    assert "B is better: pass rate (mean of per-case rates) +" in out


def test_compare_json_and_gates(pair: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = pair
    r = run_cli(capsys, "compare", a, b, "--json", "--metric", "pass^k", "-B", "500")
    data = json.loads(r.out)
    assert data["paired_cases"] == 39 and data["k"] == 2
    assert data["b"]["runs_missing"] == 1 and data["a"]["k_inferred"] is True
    assert data["verdict"]["metric"] == "pass^2" and data["resamples"] == 500
    m = data["metrics"]["pass_at_1"]
    assert m["low"] < m["difference"] < m["high"] and 0 < m["p_value"] <= 1
    # docs/numbers.md's fields of a difference, in its order
    assert ", ".join(m) == (
        "label, a, b, difference, low, high, confidence, p_value, p_exact, se, mde, mde_note, "
        "power, method"
    )
    assert isinstance(m["p_exact"], bool)
    assert len(data["cases"]) == 39
    # B is better: the regression gate stays open; the other way round it closes.
    assert run_cli(capsys, "compare", a, b, "--fail-on-regression").code == 0
    r = run_cli(capsys, "compare", b, a, "--fail-on-regression")
    assert r.code == 1 and "B is worse" in r.out


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("empty-side", "is empty; write one verdict per line"),
        ("no-counted-run", "A has no counted run"),
        ("no-shared-case", "A and B share no case"),
        ("few-resamples", "--resamples is 50; use at least 100"),
        ("bad-metric", "--metric is 'pass@9'; use one of pass@1, pass@k, pass^k"),
        ("bad-k", "--k is 0; ask for at least 1 run per case"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str
) -> None:
    good = _write(tmp_path, "good.jsonl", _suite({"x": 1, "y": 2}))
    args = {
        "empty-side": [_write(tmp_path, "empty.jsonl", []), good],
        "no-counted-run": [_write(tmp_path, "err.jsonl", [("x", 1, "errored")]), good],
        "no-shared-case": [_write(tmp_path, "other.jsonl", _suite({"p": 1, "q": 1})), good],
        "few-resamples": [good, good, "-B", "50"],
        "bad-metric": [good, good, "--metric", "pass@9"],
        "bad-k": [good, good, "--k", "0"],
    }[case]
    r = run_cli(capsys, "compare", *args)
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("error: ") and message in r.err
    assert "Traceback" not in r.err


def test_compare_hands_resamples_level_and_seed_to_the_statistics(
    pair: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The three options reach `stats.compare` together (`cli.metrics.resampling`)."""
    a, b = pair
    args = ("--json", "-B", "300", "--confidence", "0.9", "--seed", "7")
    data = json.loads(run_cli(capsys, "compare", a, b, *args).out)
    assert (data["resamples"], data["seed"]) == (300, 7)
    assert data["metrics"]["pass_at_1"]["confidence"] == 0.9


def test_console_script_compare_exits_2_without_traceback(tmp_path: Path) -> None:
    good = _write(tmp_path, "good.jsonl", _suite({"x": 1, "y": 2}))
    other = _write(tmp_path, "other.jsonl", _suite({"p": 1}))
    proc = subprocess.run(
        [sys.executable, "-m", "passhat", "compare", good, other],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "A and B share no case" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------- stored experiments


def _experiment(
    capsys: pytest.CaptureFixture[str], suite: Path, agent: str, name: str, db: Path
) -> None:
    from cli_helpers import run_cli as run

    r = run(
        capsys,
        "run",
        str(suite),
        "--case",
        "ac-conflict-001",
        "--case",
        "conflict-points-007",
        "--agent",
        agent,
        "-k",
        "4",
        "--db",
        str(db),
        "-q",
        "--name",
        name,
    )
    assert r.code == 0, r.err


def test_compare_two_stored_experiments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    clarify = Path(__file__).resolve().parents[1] / "examples" / "clarify"
    db = tmp_path / "p.db"
    _experiment(capsys, clarify, "agents_for_tests:odd_runs_pass", "half", db)
    _experiment(capsys, clarify, "agents_for_tests:perfect", "all", db)
    r = run_cli(capsys, "compare", "half", "all", "--db", str(db), "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    text = json.dumps(data)
    assert "experiment half" in text and "experiment all" in text

    other = tmp_path / "other"
    shutil.copytree(clarify, other)
    case = other / "cases" / "ac-conflict-001.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("簡單直覺", "簡單"), encoding="utf-8")
    _experiment(capsys, other, "agents_for_tests:perfect", "edited", db)
    r = run_cli(capsys, "compare", "half", "edited", "--db", str(db))
    assert r.code == 2 and "ran different suites" in r.err
    r = run_cli(capsys, "compare", "half", "edited", "--db", str(db), "--allow-different-suites")
    assert r.code == 0 and "suites differ" in r.out
    r = run_cli(capsys, "compare", "half", "all", "--db", str(tmp_path / "none.db"))
    assert r.code == 2 and "no passhat store here" in r.err


# ------------------------------------------------------------------ long lists of cases


def _many_short(tmp_path: Path) -> tuple[str, str]:
    """A: 80 shared cases, each missing its run 3, and 45 cases of its own; B: the 80
    shared cases whole. Far more cases short of the plan, and on one side only, than
    one screen holds."""
    rows_a: Rows = [
        (f"c{i:03d}", r, "passed" if (i + r) % 3 else "failed") for i in range(80) for r in (1, 2)
    ]
    rows_a += [(f"only{i:03d}", r, "passed") for i in range(45) for r in (1, 2, 3)]
    rows_b: Rows = [
        (f"c{i:03d}", r, "passed" if i % 2 else "failed") for i in range(80) for r in (1, 2, 3)
    ]
    return _write(tmp_path, "a.jsonl", rows_a), _write(tmp_path, "b.jsonl", rows_b)


def test_compare_terminal_lists_at_most_a_screen_of_cases_unless_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 15): the accounting panel listed every case short of the plan
    and every one-sided case: 8,651 lines for two experiments of 10,000 cases."""
    from passhat.report.terminal import CASES_SHOWN, ROWS_SHOWN

    a, b = _many_short(tmp_path)
    r = run_cli(capsys, "compare", a, b, "--k", "3")
    assert r.code == 0, r.err
    short = [line for line in r.out.splitlines() if "of 3 requested runs counted" in line]
    assert len(short) == ROWS_SHOWN  # A's first 30 of 80; B is whole
    assert "c029: 2 of 3" in r.out and "c030: 2 of 3" not in r.out
    assert f"... and {80 - ROWS_SHOWN} more cases short of the plan (--all lists them" in r.out
    assert "only in A (left out): 45: only000, only001" in r.out
    assert f"only{ROWS_SHOWN - 1:03d} and {45 - ROWS_SHOWN} more" in r.out
    assert f"only{ROWS_SHOWN:03d}" not in r.out
    moved = [line for line in r.out.splitlines() if " pts " in line and line.startswith(" c")]
    assert len(moved) == CASES_SHOWN

    everything = run_cli(capsys, "compare", a, b, "--k", "3", "--all")
    assert everything.code == 0, everything.err
    lines = everything.out.splitlines()
    assert len([x for x in lines if "of 3 requested runs counted" in x]) == 80
    assert "more cases short of the plan" not in everything.out
    assert (
        "only044" in everything.out
        and " more" not in everything.out.split("paired:")[1].split("╰")[0]
    )
    assert len([x for x in lines if " pts " in x and x.startswith(" c")]) > CASES_SHOWN
    # the JSON is for machines: every case, as before
    data = json.loads(run_cli(capsys, "compare", a, b, "--k", "3", "--json").out)
    assert len(data["a"]["shortfalls"]) == 80 and len(data["only_a"]) == 45


def test_compare_of_stored_experiments_reads_only_statuses_and_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): compare read every run's per-item results (and decoded
    them) to use its status and tokens: 1.3 s of 2 at 100,000 runs a side. Each side is
    now counted per case in SQL as `report --json` counts it (`Store.tallies`): from the
    covering index of a report's columns, and `items` only where the partial index of
    damaged runs has a row (`run_summaries_damaged`: none in a sound store)."""
    import sqlite3

    from cli_helpers import columns_read
    from passhat.store import Store

    clarify = Path(__file__).resolve().parents[1] / "examples" / "clarify"
    db = tmp_path / "p.db"
    _experiment(capsys, clarify, "agents_for_tests:odd_runs_pass", "half", db)
    _experiment(capsys, clarify, "agents_for_tests:perfect", "all", db)
    before = run_cli(capsys, "compare", "half", "all", "--db", str(db), "--json")
    read = columns_read(monkeypatch)
    statements: list[str] = []
    opened = Store._open

    def traced(self: Store, target: str, *, uri: bool) -> sqlite3.Connection:
        db = opened(self, target, uri=uri)
        db.set_trace_callback(statements.append)
        return db

    monkeypatch.setattr(Store, "_open", traced)
    r = run_cli(capsys, "compare", "half", "all", "--db", str(db), "--json")
    assert r.code == 0, r.err
    assert r.out == before.out
    runs = {column for table, column in read if table in ("runs", "run_summaries")}
    assert runs and runs <= {
        "experiment_id",
        "case_id",
        "run_index",
        "status",
        "input_tokens",
        "output_tokens",
        "attempt",
        "error_type",
        "model_source",
        "items",
    }
    with_items = [s for s in statements if "items" in s and "run_summaries" in s]
    assert all("INDEXED BY run_summaries_damaged" in s for s in with_items)
    assert not any(" runs " in s or "FROM runs" in s for s in statements)
    assert json.loads(r.out)["usage"]["a"]["runs"] == 8
