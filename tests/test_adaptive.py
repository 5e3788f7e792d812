"""Adaptive k: the planned looks, the decisions at each, the rounds through the CLI,
and simulations showing the error stays controlled under optional stopping."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from statistics import NormalDist

import pytest

from adaptive_sim import until_decided, until_width
from cli_helpers import CLARIFY, SEED, run_cli
from passhat.adaptive import (
    Look,
    Spending,
    decided_look,
    drive,
    outcome_at,
    schedule,
    smallest_p,
    unreachable,
    width_look,
)
from passhat.errors import InputError
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


def _difference(d: float, p: float) -> Difference:
    return Difference("pass@1", 0.5, 0.5 + d, d, d - 0.1, d + 0.1, 0.95, p, False, 0.05, 0.14, 0.8)


def test_a_look_decides_only_below_its_share_of_alpha() -> None:
    plan = schedule(3, 12, 3)  # alpha / L = 0.0125
    assert outcome_at(_difference(0.1, 0.02), 0.05) == "better"  # one look would decide
    look = decided_look(plan, 3, _difference(0.1, 0.02), 90)
    assert look.outcome == "none" and not look.stop  # four planned looks do not
    assert decided_look(plan, 6, _difference(-0.1, 0.01), 180).outcome == "worse"
    assert decided_look(plan, 6, _difference(0.0, 0.001), 180).outcome == "none"
    assert decided_look(plan, 12, _difference(0.1, 0.5), 360).stop  # budget spent


def test_too_few_cases_to_ever_decide_is_named() -> None:
    plan = schedule(3, 12, 3)  # alpha / L = 0.0125
    assert smallest_p(6) == pytest.approx(2 / 64) and smallest_p(20) == pytest.approx(2 / 2001)
    assert "smallest p-value is 0.0312" in str(unreachable(plan, 6))
    assert unreachable(plan, 8) is None  # 2 / 256 = 0.0078 can decide
    assert unreachable(schedule(3, 3, 3), 6) is None  # one look: 0.031 < 0.05


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


def test_until_decided_stops_at_the_look_that_decides(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "2", "--name", "base")
    assert r.code == 0, r.err
    out = tmp_path / "adaptive.json"
    # B passes odd runs only: at k = 1 it ties the baseline, at k = 2 every case is
    # half a run worse (sign flip p = 2 / 2^8 = 0.0078 < 0.05 / 4).
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:odd_runs_pass", "-k", "1",
        "--k-step", "1", "--max-k", "4", "--until-decided", "--baseline", "latest",
        "--name", "cand", "--adaptive-json", str(out),
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


def test_rounds_where_every_run_errored_say_so_and_spend_the_budget(
    cards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = _run(capsys, cards, db, "--agent", "agents_for_tests:perfect", "-k", "1", "--name", "a")
    assert r.code == 0, r.err
    out = tmp_path / "e.json"
    r = _run(
        capsys, cards, db, "--agent", "agents_for_tests:crashes", "-k", "1", "--max-k", "2",
        "--until-decided", "--baseline", "a", "--adaptive-json", str(out),
    )  # fmt: skip
    assert r.code == 1, r.err  # nothing counted: exit 1
    data = json.loads(out.read_text(encoding="utf-8"))  # valid JSON: no NaN
    assert data["looks_taken"] == 2 and data["runs_spent"] == 16
    assert [x["estimate"] for x in data["looks"]] == [None, None]
    assert "B has no counted run" in data["looks"][0]["method"]
    assert "no figure: B has no counted run" in r.out


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
