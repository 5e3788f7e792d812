"""Adaptive k: the planned looks, the decisions at each, the rounds through the CLI,
and simulations showing the error stays controlled under optional stopping."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from statistics import NormalDist

import pytest

from adaptive_sim import compare_after_until_decided, until_decided, until_width
from cli_helpers import CLARIFY, SEED, run_cli
from passhat.adaptive import (
    Look,
    Spending,
    case_mean_difference,
    decided_look,
    drive,
    halted,
    outcome_at,
    schedule,
    smallest_p,
    undecided,
    unreachable,
    width_look,
)
from passhat.errors import InputError, MetricsError
from passhat.stats import Difference, cluster_interval

# --------------------------------------------------------------------------- the plan


def test_schedule_plans_every_look_up_to_the_budget_and_splits_alpha() -> None:
    plan = schedule(3, 12, 3)
    assert plan.looks == (3, 6, 9, 12)
    assert plan.alphas == pytest.approx((0.0125,) * 4)
    assert plan.confidence_at(9) == pytest.approx(0.9875)
    assert "Bonferroni" in plan.rule() and "4 looks planned at k = 3, 6, 9, 12" in plan.rule()
    assert schedule(3, 10, 3).looks == (3, 6, 9, 10)  # the budget is always the last look
    assert schedule(5, 5, 2).looks == (5,)  # one look spends all of alpha
    assert schedule(5, 5, 2).alphas == pytest.approx((0.05,))


def test_obrien_fleming_spends_little_early_and_most_at_the_budget() -> None:
    plan = schedule(3, 12, 3, spending="obrien-fleming")
    a = plan.alphas
    assert sum(a) == pytest.approx(0.05)  # the union bound still gives 0.05 overall
    assert a[0] < 1e-4 < a[1] < a[2] < a[3]  # Lan-DeMets: 2 - 2 Phi(1.96 / sqrt(t))
    assert a[0] == pytest.approx(2 - 2 * NormalDist().cdf(1.959964 / 0.5), rel=1e-4)
    assert a[3] > 0.0125  # the last look keeps more than Bonferroni's share
    assert "O'Brien-Fleming" in plan.rule()


@pytest.mark.parametrize(
    ("start", "top", "step", "words"),
    [(3, 2, 1, "--max-k is 2"), (3, 6, 0, "--k-step is 0"), (0, 6, 1, "-k is 0")],
)
def test_schedule_refuses_a_plan_that_cannot_run(
    start: int, top: int, step: int, words: str
) -> None:
    with pytest.raises(InputError, match=words):
        schedule(start, top, step)


# --------------------------------------------------------------------------- the looks


def test_width_look_uses_the_per_look_level_and_stops_only_when_narrow() -> None:
    plan = schedule(4, 16, 4)
    runs = [4] * 30
    passes = [0, 1, 2, 3, 4, 2] * 5
    look = width_look(plan, 4, runs, passes, width=0.5)
    plain = cluster_interval(runs, passes, confidence=0.95)
    spent = cluster_interval(runs, passes, confidence=plan.confidence_at(4))
    assert (look.low, look.high) == (spent.low, spent.high)
    assert look.high - look.low > plain.high - plain.low  # wider than the 95 % one
    assert look.stop  # narrower than 0.5
    narrow = spent.high - spent.low
    assert not width_look(plan, 4, runs, passes, width=narrow).stop  # not strictly narrower
    assert width_look(plan, 16, runs, passes, width=0.01).stop  # the budget ends the rounds


def test_width_look_with_one_counted_case_waits_without_an_interval() -> None:
    plan = schedule(2, 4, 2)
    look = width_look(plan, 2, [2], [1], width=0.9)
    assert not look.stop and math.isnan(look.estimate) and "2 needed" in look.method
    assert width_look(plan, 4, [4], [1], width=0.9).stop


def _difference(d: float, p: float, confidence: float = 0.9875) -> Difference:
    return Difference(
        "pass@1", 0.5, 0.5 + d, d, d - 0.09, d + 0.09, confidence, p, False, 0.05, 0.14, 0.8
    )


def test_a_look_decides_only_below_its_share_of_alpha() -> None:
    plan = schedule(3, 12, 3)  # alpha / L = 0.0125
    assert outcome_at(_difference(0.1, 0.02), 0.05) == "better"  # one look would decide
    look = decided_look(plan, 3, _difference(0.1, 0.02), 90)
    assert look.outcome == "none" and not look.stop  # four planned looks do not
    assert decided_look(plan, 6, _difference(-0.1, 0.01), 180).outcome == "worse"
    assert decided_look(plan, 6, _difference(0.0, 0.001), 180).outcome == "none"
    assert decided_look(plan, 12, _difference(0.1, 0.5), 360).stop  # budget spent


def test_a_look_judges_with_the_interval_at_its_own_level() -> None:
    """The interval beside a look's verdict is at the look's level (1 - alpha / L) and
    agrees with it: a difference found at compare's 95 % is refused, and a p below the
    look's alpha with an interval still holding 0 (widened: no spread) decides nothing."""
    plan = schedule(3, 12, 3)
    look = decided_look(plan, 3, _difference(0.1, 0.001), 90)
    assert look.outcome == "better" and look.confidence == pytest.approx(0.9875)
    with pytest.raises(MetricsError, match=r"judges at 0\.9875"):
        decided_look(plan, 3, _difference(0.1, 0.001, confidence=0.95), 90)
    holds_zero = _difference(0.05, 0.001)  # interval [-0.04, 0.14]
    assert decided_look(plan, 3, holds_zero, 90).outcome == "none"


def test_too_few_cases_to_ever_decide_is_named() -> None:
    plan = schedule(3, 12, 3)  # alpha / L = 0.0125
    assert smallest_p(6) == pytest.approx(2 / 64) and smallest_p(20) == pytest.approx(2 / 2001)
    assert "smallest p-value is 0.0312" in str(unreachable(plan, 6))
    assert unreachable(plan, 8) is None  # 2 / 256 = 0.0078 can decide
    assert unreachable(schedule(3, 3, 3), 6) is None  # one look: 0.031 < 0.05
    # what would work, said: 8 cases for this plan, or one look with these 6
    assert "this plan needs 8 cases, or plan one look" in str(unreachable(plan, 6))
    # 4 cases: 2/16 = 0.125, not even one look at 0.05 can decide
    few = str(unreachable(plan, 4))
    assert (
        "no plan of looks can: even one look at alpha 0.05 needs 6 cases (8 for this plan)" in few
    )


def test_drive_stops_at_the_first_stop_and_never_looks_past_the_plan() -> None:
    plan = schedule(2, 8, 2)
    asked: list[int] = []

    def look_at(k: int, stop_at: int) -> Look:
        asked.append(k)
        return Look(k, k, 0.5, 0.4, 0.6, None, None, k >= stop_at, "test")

    assert [x.k for x in drive(plan, lambda k: look_at(k, 4))] == [2, 4]
    assert asked == [2, 4]
    asked.clear()
    assert [x.k for x in drive(plan, lambda k: look_at(k, 99))] == [2, 4, 6, 8]
    assert asked == [2, 4, 6, 8]


# --------------------------------------------------------------------------- simulations


@pytest.mark.parametrize("spending", ["bonferroni", "obrien-fleming"])
def test_until_decided_a_a_false_positives_stay_at_most_6_percent(spending: Spending) -> None:
    result = until_decided(schedule(3, 12, 3, spending=spending), replications=160)
    assert result.declared / result.replications <= 0.06, result


def test_compare_after_until_decided_keeps_a_a_false_positives_at_5_percent() -> None:
    """Issue 24: after an A/A `--until-decided` (the undecided cases run further), compare
    judged the pass rate over runs, which weighs those cases by the runs the rule gave
    them, and declared "B is better" 14 % of the time. It now judges the mean of per-case
    rates (the design's statistic), through the very functions `passhat compare` calls:
    200 experiments of 60 mostly-easy cases (Beta(4, 1)); at most 6 % declared (noise at
    5 % over 200 is +-1.5 points; bench_compare_after_adaptive.py runs R = 1,000: 3.8 -
    4.7 %)."""
    rate = compare_after_until_decided(schedule(3, 12, 3), replications=200, resamples=200)
    assert rate <= 0.06, rate


def test_without_alpha_spending_the_same_looks_declare_more_often() -> None:
    """The reason for the rule: 0.05 at each of 4 looks rejects a true null more often
    than the planned looks do (a test that would fail if spending did nothing)."""
    plan = schedule(3, 12, 3)
    spent = until_decided(plan, replications=160)
    naive = until_decided(plan, replications=160, spend=False)
    assert naive.declared >= 2 * spent.declared + 4, (naive, spent)
    assert naive.declared / naive.replications > 0.05, naive


def test_width_stopping_keeps_the_final_interval_covering() -> None:
    """--until-width: stop at the first planned look whose interval is narrower than W;
    the interval where it stopped holds the true mean pass rate >= 93 % of the time."""
    result = until_width(schedule(3, 12, 3), 0.27, replications=400)
    assert result.covered / result.replications >= 0.93, result
    assert (
        0.2 * result.replications < result.stopped_early < result.replications
    )  # it stopped early


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def cards(tmp_path: Path) -> Path:
    """The clarify suite with 8 copies of the seed's card: the perfect test agent
    passes every case, odd_runs_pass passes the odd runs of each."""
    target = tmp_path / "cards"
    shutil.copytree(CLARIFY, target)
    text = (target / "cases" / f"{SEED}.yaml").read_text(encoding="utf-8")
    for f in (target / "cases").iterdir():
        f.unlink()
    for i in range(8):
        card = text.replace(f"id: {SEED}", f"id: card-{i}")
        (target / "cases" / f"card-{i}.yaml").write_text(card, encoding="utf-8")
    return target


def _run(capsys: pytest.CaptureFixture[str], suite: Path, db: Path, *args: str):  # type: ignore[no-untyped-def]
    return run_cli(capsys, "run", str(suite), "--db", str(db), "-q", *args)


def _report(capsys: pytest.CaptureFixture[str], db: Path, ref: str) -> dict:  # type: ignore[type-arg]
    r = run_cli(capsys, "report", ref, "--json", "--db", str(db))
    assert r.code == 0, r.err
    return json.loads(r.out)  # type: ignore[no-any-return]


def test_until_decided_all_cases_stops_at_the_look_that_decides(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "2", "--name", "base")
    assert r.code == 0, r.err
    out = tmp_path / "adaptive.json"
    # B passes odd runs only: at k = 1 it ties the baseline, at k = 2 every case is
    # half a run worse (sign flip p = 2 / 2^8 = 0.0078 < 0.05 / 4). --all-cases: the
    # baseline passed every run of every case, so no case is undecided by the default rule.
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:odd_runs_pass", "-k", "1",
        "--k-step", "1", "--max-k", "4", "--until-decided", "--baseline", "latest",
        "--name", "cand", "--adaptive-json", str(out), "--all-cases",
    )  # fmt: skip
    assert r.code == 0, r.err
    data = json.loads(out.read_text(encoding="utf-8"))
    # `latest` is the experiment before this run's, looked up before it was created
    assert data["baseline"] == "base" and "a decided verdict against baseline base" in r.out
    assert data["rule"] == "Bonferroni alpha spending over planned looks"
    assert data["planned_looks"] == [1, 2, 3, 4] and data["looks_taken"] == 2
    assert [x["outcome"] for x in data["looks"]] == ["none", "worse"]
    assert data["looks"][1]["p_value"] == pytest.approx(2 / 256)
    assert data["runs_spent"] == 16 and data["stopped"] == "decided at k = 2: B is worse"
    assert "decided at k = 2: B is worse" in r.out and "runs spent: 16" in r.out
    report = _report(capsys, db, "cand")
    assert report["dataset"]["k_requested"] == 2 and report["dataset"]["complete"]


def test_each_look_shows_the_interval_at_its_own_level_beside_its_verdict(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """O'Brien-Fleming spends 0.0055 at k = 2, where the sign flip's p is 2 / 256 =
    0.0078: no decision. compare's 95 % interval there excludes 0, so shown beside
    "no difference yet" it contradicted the verdict; each look now shows (terminal,
    --adaptive-json, the stored record in `report`) its interval at 1 - its alpha."""
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "2", "--name", "base")
    assert r.code == 0, r.err
    out = tmp_path / "adaptive.json"
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:odd_runs_pass", "-k", "1",
        "--k-step", "1", "--max-k", "4", "--until-decided", "--baseline", "base",
        "--spending", "obrien-fleming", "--all-cases", "--name", "cand",
        "--adaptive-json", str(out),
    )  # fmt: skip
    assert r.code == 0, r.err
    looks = json.loads(out.read_text(encoding="utf-8"))["looks"]
    assert [x["outcome"] for x in looks] == ["none", "none", "worse"]
    assert looks[1]["p_value"] == pytest.approx(2 / 256) and looks[1]["alpha"] < 2 / 256
    for x in looks:
        assert x["confidence"] == pytest.approx(1.0 - x["alpha"])
        excludes_zero = x["low"] > 0.0 or x["high"] < 0.0
        assert excludes_zero == (x["outcome"] != "none"), x
    flat = " ".join(r.out.split())
    assert "look 2: k = 2, B - A -50.0 pts [-100.0, +100.0] pts (99.45% interval)" in flat
    assert "(98.19% interval), p = 0.016 against 0.01805: worse" in flat
    r = run_cli(capsys, "report", "cand", "--db", str(db))
    assert r.code == 0, r.err
    assert "(99.45% interval), p = 0.00781 against 0.005486: no difference yet" in r.out
    [record] = _report(capsys, db, "cand")["adaptive"]
    assert [x["confidence"] for x in record["looks"]] == [x["confidence"] for x in looks]


def test_until_decided_a_a_spends_the_budget_and_resume_does_too(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    for name in ("base", "same"):
        r = _run(
            capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "1", "--name", name
        )
        assert r.code == 0, r.err
    out = tmp_path / "a.json"
    r = run_cli(
        capsys, "resume", "same", "--db", str(db), "-q", "--until-decided", "--baseline",
        "base", "--max-k", "3", "--adaptive-json", str(out), "--spending", "obrien-fleming",
        "--all-cases",
    )  # fmt: skip
    assert r.code == 0, r.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["spending"] == "obrien-fleming" and sum(data["alpha_per_look"]) == pytest.approx(
        0.05
    )
    assert data["rule"] == "O'Brien-Fleming-like alpha spending over planned looks"
    assert data["planned_looks"] == [1, 2, 3] and data["looks_taken"] == 3
    assert data["runs_before"] == 8 and data["runs_spent"] == 16
    assert data["stopped"] == "budget spent: max-k = 3 reached, not decided"
    assert _report(capsys, db, "same")["dataset"]["k_requested"] == 3


def test_until_width_raises_k_until_narrow(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    out = tmp_path / "w.json"
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:odd_runs_pass", "-k", "2",
        "--until-width", "0.4", "--max-k", "16", "--name", "w", "--adaptive-json", str(out),
    )  # fmt: skip
    assert r.code == 0, r.err
    data = json.loads(out.read_text(encoding="utf-8"))
    looks = data["looks"]
    widths = [x["high"] - x["low"] for x in looks]
    assert data["planned_looks"] == [2, 4, 6, 8, 10, 12, 14, 16]
    assert all(w >= 0.4 for w in widths[:-1]) and widths[-1] < 0.4  # stopped when narrow
    assert 1 < len(looks) < 8
    last_k = looks[-1]["k"]
    assert data["runs_spent"] == 8 * last_k and looks[-1]["runs_counted"] == 8 * last_k
    assert f"interval narrower than 0.4 at k = {last_k}" in r.out
    assert _report(capsys, db, "w")["dataset"]["k_requested"] == last_k


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--baseline", "x"], "--baseline is for --until-decided"),
        (["--until-decided"], "--until-decided needs --baseline"),
        (["--until-width", "0"], "--until-width is 0"),
        (["--until-width", "0.1", "--until-decided", "--baseline", "x"], "not both"),
        (["--max-k", "5"], "--max-k is for --until-width or --until-decided"),
        (["--until-width", "0.1", "--spending", "pocock"], "--spending is 'pocock'"),
        (["--until-width", "0.1", "--max-k", "1", "-k", "2"], "--max-k is 1"),
        (["--until-width", "0.1", "--case", "card-0"], "at least 2 cases"),
        (
            ["--until-decided", "--baseline", "x", "--case", "card-0", "--case", "card-1"],
            "no look can decide",
        ),
    ],
)
def test_adaptive_options_refused_before_anything_runs(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", *args)
    assert r.code == 2 and words in r.err and "Traceback" not in r.err, r.err
    assert not db.exists()


def test_a_baseline_without_counted_runs_is_refused_before_anything_runs(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:crashes", "-k", "1", "--name", "bad")
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:perfect", "--until-decided",
        "--baseline", "bad", "--name", "never",
    )  # fmt: skip
    assert r.code == 2 and "--baseline bad has no counted run" in r.err, r.err
    r = run_cli(capsys, "list", "--db", str(db))
    assert "never" not in r.out


@pytest.mark.parametrize(
    "mode",
    [["--until-width", "0.1"], ["--until-decided", "--baseline", "a", "--all-cases"]],
    ids=["width", "decided"],
)
def test_a_round_whose_every_new_run_errored_stops_the_rounds(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    """Issue 13: --until-width used to spend round after round when every new run
    errored; a round that adds runs but no counted one now ends the rounds, says why in
    one line, and the stored record says so too."""
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "1", "--name", "a")
    assert r.code == 0, r.err
    out = tmp_path / "e.json"
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:crashes", "-k", "1", "--max-k", "4",
        "--name", "b", "--adaptive-json", str(out), *mode,
    )  # fmt: skip
    assert r.code == 1, r.err  # nothing counted: exit 1
    data = json.loads(out.read_text(encoding="utf-8"))  # valid JSON: no NaN
    assert data["looks_taken"] == 1 and data["runs_spent"] == 8  # not 4 rounds, 32 runs
    assert [x["estimate"] for x in data["looks"]] == [None]
    halt = "the round at k = 1 added 8 runs and none was counted (every one errored)"
    assert data["looks"][0]["halt"] == halt and data["stopped"] == f"stopped: {halt}"
    assert f"adaptive k ({data['target']}): stopped: {halt}" in r.out
    stored = _report(capsys, db, "b")["adaptive"]
    assert [x["stopped"] for x in stored] == [f"stopped: {halt}"]


def test_resume_errored_with_rounds_runs_errored_runs_again_once(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from passhat.store import Store

    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:crashes_on_run_2", "-k", "2")
    assert r.code == 0, r.err
    r = run_cli(
        capsys, "resume", "latest", "--db", str(db), "-q", "--errored",
        "--until-width", "0.01", "--max-k", "6", "--k-step", "2",
    )  # fmt: skip
    assert r.code == 0, r.err
    with Store(db) as store:
        experiment = store.experiment("latest")
        runs = store.runs(experiment.id, full=False)
        attempts = store.attempts(experiment.id)
    assert experiment.k_requested == 6 and len(runs) == 48  # three rounds, every case
    # run 2 crashes every time: rerun once (attempt 2), not once per round
    assert {r.attempt for r in runs if r.run_index == 2} == {2}
    assert len(attempts) == 8


# --------------------------------------------------------------------------- undecided cases only


def test_undecided_cases_are_those_whose_baseline_runs_disagree() -> None:
    baseline = [("mixed", 3, 1), ("all-pass", 3, 3), ("all-fail", 3, 0), ("nothing", 0, 0)]
    assert undecided(baseline) == {"mixed"}


def test_case_mean_difference_weighs_every_case_the_same() -> None:
    """With cases at different k, the look judges the mean of per-case rate differences:
    a case with 12 runs weighs no more than one with 3."""
    a = [("x", 3, 3), ("y", 3, 0), ("z", 3, 3)]
    b = [("x", 3, 3), ("y", 12, 6), ("z", 3, 3)]
    d = case_mean_difference(a, b, resamples=200)
    assert d.difference == pytest.approx((0 + 0.5 + 0) / 3)  # run-weighted: 12/18 - 6/9
    assert d.label == "mean of per-case pass rates"
    with pytest.raises(InputError, match="at least 2 cases counted on both sides"):
        case_mean_difference(a, [("x", 3, 3), ("y", 0, 0)])


def test_a_round_that_counts_no_run_halts_and_one_with_nothing_to_run_goes_on() -> None:
    look = Look(4, 8, 0.5, 0.4, 0.6, None, None, False, "test")
    assert halted(look, 8, 0).stop and "added 8 runs and none was counted" in str(
        halted(look, 8, 0).halt
    )
    assert not halted(look, 8, 1).stop and halted(look, 8, 1).counted_added == 1
    assert not halted(look, 0, 0).stop  # nothing was missing: not a failed round


def test_per_case_rule_keeps_a_a_false_positives_at_most_6_percent_on_skewed_cases() -> None:
    """--until-decided adds runs to undecided cases only; on mostly-easy cases
    (Beta(4, 1)) its A/A rate stays <= 6 % and it spends fewer runs than the all-case
    rule."""
    plan = schedule(3, 12, 3)
    runs = {"replications": 160, "cases": 60, "prior": (4.0, 1.0)}
    result = until_decided(plan, runs_to="undecided", **runs)
    assert result.declared / result.replications <= 0.06, result
    everyone = until_decided(plan, runs_to="all", **runs)
    assert result.mean_runs < 0.8 * everyone.mean_runs, (result, everyone)


def test_stopping_a_case_once_a_and_b_agree_would_not_keep_the_error_rate() -> None:
    """Why 'undecided' is read from the baseline alone: letting B's own runs choose
    which cases get more of them (stop a case once A's and B's runs all agree) biases
    B's per-case rates, and on mostly-easy cases the A/A rate passes 10 %."""
    plan = schedule(3, 12, 3)
    runs = {"replications": 160, "cases": 100, "prior": (8.0, 1.0)}
    tempting = until_decided(plan, runs_to="agree", **runs)
    assert tempting.declared / tempting.replications > 0.10, tempting
    kept = until_decided(plan, runs_to="undecided", **runs)
    assert kept.declared / kept.replications <= 0.06, kept


def test_until_decided_adds_runs_to_undecided_cases_only(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The baseline's card-0..3 disagree (1 of 2 passed), card-4..7 passed every run:
    B's rounds go to card-0..3 only; the others keep k = 2 and are not short, resume
    does not fill them up, and report, JSON, HTML and export say so."""
    from passhat.store import Store

    db = tmp_path / "p.db"
    base = ["--agent", "agents_for_tests:half_cards_vary", "-k", "2"]
    r = _run(capsys, cards, db, *base, "--name", "base")
    assert r.code == 0, r.err
    r = _run(
        capsys, cards, db, *base, "--name", "cand", "--until-decided", "--baseline", "base",
        "--max-k", "6", "--k-step", "2",
    )  # fmt: skip
    assert r.code == 0, r.err
    with Store(db) as store:
        cand = store.experiment("cand")
        runs = store.runs(cand.id, full=False)
    assert cand.k_requested == 6
    assert dict(cand.case_k) == {f"card-{i}": 2 for i in range(4, 8)}
    per_case = {c: sum(1 for x in runs if x.case_id == c) for c in cand.case_ids}
    assert per_case == {f"card-{i}": 6 if i < 4 else 2 for i in range(8)}  # 32 runs, not 48
    assert "runs added to: undecided cases only (4 of 8" in r.out and "runs spent: 32" in r.out

    data = _report(capsys, db, "cand")
    acc = data["accounting"]
    assert acc["complete"] and acc["runs_requested"] == 32 and acc["runs_missing"] == 0
    assert acc["k_least"] == 2 and acc["k_per_case"] == {"2": 4, "6": 4}
    assert {c["case"]: c["k_requested"] for c in data["cases"]} == per_case
    assert data["dataset"]["short"] == [] and data["dataset"]["k"] == 2
    assert data["dataset"]["at_requested_k"] is None  # no figure over the cases run further
    [record] = data["adaptive"]
    assert record["undecided_cases"] == 4 and record["runs_spent"] == 32
    assert record["statistic"] == "mean of per-case pass rates (each case weighs the same)"
    assert [x["cases_run"] for x in record["looks"]] == [4, 4, 4]
    assert record["stopped"] == "budget spent: max-k = 6 reached, not decided"

    r = run_cli(capsys, "report", "cand", "--db", str(db))
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "Plan met: every case has the counted runs asked of it (k = 2 for 4 cases" in flat
    assert "requested k = 2 to 6, per case" in flat and "adaptive rounds" in flat
    assert "rule: Bonferroni alpha spending over planned looks: 3 looks planned" in flat
    assert "runs spent: 32" in flat and "Plan NOT met" not in flat

    html = tmp_path / "r.html"
    r = run_cli(capsys, "report", "cand", "--db", str(db), "--html", str(html))
    assert r.code == 0, r.err
    page = html.read_text(encoding="utf-8")
    assert 'data-plan="met"' in page and 'data-adaptive="1"' in page
    assert "runs spent: 32" in page and 'data-k-least="2"' in page

    r = run_cli(capsys, "resume", "cand", "--db", str(db))  # nothing to fill up
    assert r.code == 0, r.err
    assert "nothing to do, every requested run is recorded (32 runs" in r.err, r.err
    with Store(db) as store:
        assert len(store.runs(store.experiment("cand").id, full=False)) == 32
    r = run_cli(capsys, "show", "cand", "card-5", "3", "--db", str(db))
    assert r.code == 2 and "asks for runs 1 to 2 of case card-5" in r.err

    out = tmp_path / "cases.jsonl"
    r = run_cli(capsys, "export", "cand", "--db", str(db), "--per-case", "-o", str(out))
    assert r.code == 0, r.err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {x["case"]: (x["k_requested"], x["missing_runs"]) for x in rows} == {
        c: (k, "") for c, k in per_case.items()
    }

    r = run_cli(capsys, "compare", "base", "cand", "--db", str(db), "--json")
    assert r.code == 0, r.err
    [note] = [n for n in json.loads(r.out)["notes"] if "adaptive rule" in n]
    assert note.startswith("B's cases were asked different k by an adaptive rule (2 to 6)")

    r = run_cli(capsys, "regrade", "cand", "--db", str(db), "--name", "rg", "--json")
    assert r.code == 0, r.err  # a regrade keeps each case's own plan
    regraded = _report(capsys, db, "rg")["accounting"]
    assert regraded["complete"] and regraded["k_per_case"] == {"2": 4, "6": 4}

    r = run_cli(capsys, "resume", "cand", "--db", str(db), "-q", "-k", "7")
    assert r.code == 0, r.err  # resume -k asks every case for 7 again
    with Store(db) as store:
        cand = store.experiment("cand")
        assert dict(cand.case_k) == {} and len(store.runs(cand.id, full=False)) == 56


def test_no_undecided_case_stops_at_the_first_look_and_says_why(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The baseline passed every run: no case is undecided, so the first look ends the
    rounds. It said "the baseline's runs agree within every case", untrue of a case with
    no counted baseline run, and "(0 of 8: the baseline's runs disagree)"."""
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "2", "--name", "base")
    assert r.code == 0, r.err
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "2", "--name", "cand",
        "--until-decided", "--baseline", "base",
    )  # fmt: skip
    assert r.code == 0, r.err
    flat = " ".join(r.out.split())
    assert "(0 of 8: those whose baseline runs disagree); the others keep k = 2" in flat
    assert (
        "stopped: no case is undecided: in none do the baseline's counted runs disagree "
        "(some passed, some failed)" in flat
    )
    assert "looks taken: 1 of 4; runs spent: 16" in flat


def test_the_looks_read_each_runs_status_not_the_runs(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): every look of --until-decided (and the baseline's check)
    read both experiments' runs with their scores and tool calls (Store.runs): 1.2 GB
    and 6 s a look at 100,000 runs a side. The looks now count statuses only."""
    from passhat.store import Store

    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "2", "--name", "base")
    assert r.code == 0, r.err

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("an adaptive look read the runs whole")

    monkeypatch.setattr(Store, "runs", refused)
    out = tmp_path / "adaptive.json"
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:odd_runs_pass", "-k", "1",
        "--k-step", "1", "--max-k", "4", "--until-decided", "--baseline", "base",
        "--name", "cand", "--adaptive-json", str(out), "--all-cases",
    )  # fmt: skip
    assert r.code == 0, r.err
    looks = json.loads(out.read_text(encoding="utf-8"))["looks"]
    assert [x["outcome"] for x in looks] == ["none", "worse"]
