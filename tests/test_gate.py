"""The gate: `--require` on run, resume and report, `require=` of `passhat.evaluate()`
and the pytest plugin, one `passhat.Requirement` behind all of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import passhat
from agents_for_tests import GOAL_ANNOTATIONS
from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.gate import Requirement, requirements

ODD = "agents_for_tests:odd_runs_pass"  # runs 1 and 3 pass, 2 and 4 write one annotation


def _suite(writer: SuiteWriter) -> Path:
    writer.suite["defaults"].pop("model", None)  # type: ignore[union-attr]  # it asks none
    writer.case["goal"] = {"ticket": {"annotations": GOAL_ANNOTATIONS}}
    criteria = [{"ac": n, "text": f"criterion {n}"} for n in range(1, 8)]
    writer.case["input"]["ticket"]["acceptance_criteria"] = criteria
    return writer.write()


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("pass^k>=0.4", Requirement("pass^k", 0.4)),
        ("rate >= 80%", Requirement("rate", 0.8)),
        ("pass_rate>0.5", Requirement("rate", 0.5, above=True)),
        ("pass@k.low>=.25", Requirement("pass@k", 0.25, low=True)),
        ("PASS_HAT_K>=1", Requirement("pass^k", 1.0)),
    ],
)
def test_requirements_read_as_people_write_them(text: str, rule: Requirement) -> None:
    assert Requirement.parse(text) == rule
    assert Requirement.parse(str(rule)) == rule  # its text reads back as itself


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("pas^k>=0.4", "no figure 'pas^k'; did you mean 'pass^k'?"),
        ("pass^k=0.4", "is not FIGURE>=VALUE or FIGURE.low>=VALUE"),
        ("rate>=1.5", "1.5 is not a share; give 0 to 1 (0.8) or a percentage (80%)"),
        ("rate<=0.5", "is not FIGURE>=VALUE"),
    ],
)
def test_a_bad_requirement_says_the_fix(text: str, said: str) -> None:
    with pytest.raises(passhat.InputError, match="requirement") as caught:
        requirements([text])
    assert said in str(caught.value)


def test_run_exits_1_naming_the_figure_its_interval_and_the_cases_behind_it(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    suite = str(_suite(writer))
    args = ["--agent", ODD, "-k", "4", "--db", db, "-q", "--no-report"]
    met = run_cli(capsys, "run", suite, *args, "--require", "rate>=0.5")
    assert met.code == 0, met.err
    assert "requirements met: rate>=0.5" in met.err
    short = run_cli(
        capsys, "run", suite, *args, "--require", "rate>=0.5", "--require", "pass^k>=0.5"
    )
    assert short.code == 1
    err = " ".join(short.err.split())
    assert "pass^k>=0.5 not met: pass^4 0.0%" in err
    assert "rate>=0.5 not met" not in err
    assert (
        "tiny-001: 2/4 passed, failed runs 2, 4, missed AC3:inconsistent_with_description "
        "(runs 2, 4); AC4:unverifiable (runs 2, 4); AC7:unverifiable (runs 2, 4)"
    ) in err
    # report and resume judge the stored experiment by the same rule
    report = run_cli(capsys, "report", "latest", "--db", db, "--require", "pass^k>=0.5")
    assert report.code == 1 and "pass^k>=0.5 not met: pass^4 0.0%" in report.err
    resumed = run_cli(capsys, "resume", "latest", "--db", db, "-q", "--require", "rate>0.5")
    assert resumed.code == 1 and "rate>0.5 not met: pass rate 50.0%" in " ".join(
        resumed.err.split()
    )


def test_a_bad_requirement_is_refused_before_anything_is_written(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_cli(
        capsys, "run", str(_suite(writer)), "--agent", ODD, "--db", str(db), "--require", "pas^k>=1"
    )
    assert r.code == 2 and "did you mean 'pass^k'?" in r.err
    assert not db.exists()


def test_the_lower_end_of_an_interval_can_be_required(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One case: the pass rate's interval is the case's Wilson interval (2/4: 15%–85%)."""
    db = str(tmp_path / "p.db")
    args = ["--agent", ODD, "-k", "4", "--db", db, "-q", "--no-report"]
    r = run_cli(capsys, "run", str(_suite(writer)), *args, "--require", "rate.low>=0.3")
    assert r.code == 1
    err = " ".join(r.err.split())
    assert "rate.low>=0.3 not met: pass rate 50.0% [" in err and ", lower end 15." in err
    # pass^k of one case has no interval: a requirement on its lower end cannot be met
    r = run_cli(capsys, "report", "latest", "--db", db, "--require", "pass^k.low>=0")
    assert r.code == 1 and "has no interval (fewer than 2 cases with a counted run)" in r.err


def test_evaluate_takes_the_same_rules(writer: SuiteWriter, tmp_path: Path) -> None:
    e = passhat.evaluate(
        _suite(writer),
        agent=ODD,
        k=2,
        db=tmp_path / "p.db",
        require=[passhat.Requirement("pass@k", 1.0), "pass^k>=0.5"],
    )
    gate = e.gate()
    assert not gate.passed and e.exit_code() == 1
    ((shortfall),) = gate.shortfalls
    assert str(shortfall.requirement) == "pass^k>=0.5"
    assert [(c.case, c.failed_runs) for c in shortfall.cases] == [("tiny-001", (2,))]
    assert e.gate("rate>=0.5").passed and e.exit_code(require=["rate>=0.5"]) == 0
    with pytest.raises(passhat.InputError, match="did you mean 'pass@k'"):
        passhat.evaluate(_suite(writer), agent=ODD, db=tmp_path / "p.db", require="pass@j>=1")


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (
            lambda: passhat.evaluate("examples/clarify", case=["x"]),
            "evaluate() has no keyword 'case'; did you mean 'cases'?",
        ),
        (
            lambda: passhat.evaluate("examples/clarify", k="5"),
            "evaluate(k='5'): k is str; give a whole number, e.g. 5",
        ),
        (
            lambda: passhat.evaluate("examples/clarify", timeout="fast"),
            "evaluate(timeout='fast'): timeout is str; give a number of seconds, e.g. 120",
        ),
        (
            lambda: passhat.evaluate("examples/clarify", concurrency=True),
            "evaluate(concurrency=True): concurrency is bool; give a whole number",
        ),
        (
            lambda: passhat.resume("latest", erored=True),
            "resume() has no keyword 'erored'; did you mean 'errored'?",
        ),
        (lambda: passhat.evaluate(), "evaluate(): missing a required argument: 'suite'"),
    ],
    ids=["case", "k-text", "timeout-text", "bool-for-int", "resume-typo", "no-suite"],
)
def test_python_api_input_errors_name_the_keyword_and_the_fix(call: Any, said: str) -> None:
    with pytest.raises(passhat.InputError) as caught:
        call()
    assert said in str(caught.value)
