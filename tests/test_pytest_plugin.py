"""The pytest plugin: a marker and a fixture over `passhat.evaluate()`, errored runs
never counted as failures, --passhat-k and --passhat-db, the accounting in the summary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, ROOT, SEED, run_cli

pytest_plugins = ["pytester"]

INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""


def _tests(pytester: pytest.Pytester, body: str) -> None:
    pytester.makeini(INI)
    head = (
        "import pytest\n"
        "from agents_for_tests import crashes_on_run_2, odd_runs_pass\n"
        f"SUITE = {str(CLARIFY)!r}\n"
        f"CARD = {SEED!r}\n"
    )
    pytester.makepyfile(test_cases=head + body)


def test_examples_pytest_reproduces_the_seed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pytest examples/pytest`, as a user runs it; then `passhat report` reads the runs."""
    db = tmp_path / "p.db"
    db_option = ("--passhat-db", str(db))
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "examples/pytest", "-p", "no:cacheprovider", *db_option],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
    summary = out.stdout.split("passhat ===", 1)[1]
    line = "runs requested 3, counted 3, errored 0, missing 0; pass rate 0/3 (0%), pass@3 0%, pass^3 0%"
    assert summary.count(line) == 2
    r = run_cli(capsys, "report", "latest", "--json", "--db", str(db))
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["accounting"]["runs_counted"] == 3
    assert [c["passes"] for c in data["cases"]] == [0]


def test_an_errored_run_errors_the_test_and_is_named(pytester: pytest.Pytester) -> None:
    """Was the seed's trap: a run with no verdict quietly counted as a failure."""
    _tests(
        pytester,
        "@pytest.mark.passhat(SUITE, case=CARD, k=3, agent=crashes_on_run_2)\n"
        "def test_marked(passhat_result):\n"
        "    pass\n"
        "def test_called(passhat_eval):\n"
        "    passhat_eval(SUITE, case=CARD, k=3, agent=crashes_on_run_2)\n",
    )
    result = pytester.runpytest("--passhat-db", str(pytester.path / "p.db"))
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*RunsNotCounted: 1 of 3 runs errored (ac-conflict-001 run 2: agent_error: "
            "RuntimeError: the agent fell over in run 2)*",
            "*runs requested 3, counted 2, errored 1, missing 0; pass rate 2/2 (100%), "
            "pass@2 100%, pass^2 100%",
        ]
    )


def test_allow_errored_judges_the_counted_runs_under_their_own_label(
    pytester: pytest.Pytester,
) -> None:
    _tests(
        pytester,
        "@pytest.mark.passhat(SUITE, case=CARD, k=3, agent=crashes_on_run_2, allow_errored=True)\n"
        "def test_marked(passhat_result):\n"
        "    assert (passhat_result.counted, passhat_result.errored) == (2, 1)\n"
        "    assert passhat_result.errored_runs == ((CARD, 2),)\n"
        "    assert passhat_result.k == 2 and passhat_result.pass_hat_k == 1.0\n",
    )
    pytester.runpytest("--passhat-db", str(pytester.path / "p.db")).assert_outcomes(passed=1)


def test_a_threshold_on_pass_hat_k_fails_the_test(pytester: pytest.Pytester) -> None:
    _tests(
        pytester,
        "@pytest.mark.passhat(SUITE, case=CARD, k=2, agent=odd_runs_pass)\n"
        "def test_reliable(passhat_result):\n"
        "    assert passhat_result.pass_at_k == 1.0  # run 1 passed\n"
        "    assert passhat_result.pass_hat_k >= 0.8\n",
    )
    result = pytester.runpytest("--passhat-db", str(pytester.path / "p.db"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*where 0.0 = <PasshatResult of *: runs requested 2, counted 2, errored 0, missing 0; "
            "pass rate 1/2 (50%), pass@2 100%, pass^2 0%>.pass_hat_k",
            "*- passhat: cases short of a pass -*",
            "experiment *: runs requested 2, counted 2, errored 0, missing 0; *",
            "  ac-conflict-001: 1/2 passed, failed runs 2, missed "
            "AC3:inconsistent_with_description (runs 2); AC4:unverifiable (runs 2); "
            "AC7:unverifiable (runs 2)",
        ]
    )


def test_require_fails_the_test_naming_the_cases_and_items_and_records_the_figures(
    pytester: pytest.Pytester,
) -> None:
    """The same rule as `passhat run --require`; a shortfall is a failure, not an error,
    whether the marker or the fixture ran it; the figures land in pytest's JUnit."""
    _tests(
        pytester,
        "@pytest.mark.passhat(SUITE, case=CARD, k=2, agent=odd_runs_pass, require='pass^k>=0.8')\n"
        "def test_marked(passhat_result):\n"
        "    pass\n"
        "def test_called(passhat_eval):\n"
        "    passhat_eval(SUITE, case=CARD, k=2, agent=odd_runs_pass, require=['rate>=0.9'])\n"
        "@pytest.mark.passhat(SUITE, case=CARD, k=2, agent=odd_runs_pass, require='pass@k>=1')\n"
        "def test_met(passhat_result):\n"
        "    pass\n",
    )
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest(
        "--passhat-db",
        str(pytester.path / "p.db"),
        f"--junitxml={junit}",
        "-o",
        "junit_family=xunit1",
    )
    result.assert_outcomes(failed=2, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*passhat: pass^k>=0.8 not met: pass^2 0.0%",
            "*ac-conflict-001: 1/2 passed, failed runs 2, missed AC3:inconsistent_with_description "
            "(runs 2); AC4:unverifiable (runs 2); AC7:unverifiable (runs 2)",
            "*passhat: rate>=0.9 not met: pass rate 50.0%*",
        ]
    )
    import xml.etree.ElementTree as ET

    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_met"].iter("property")}
    assert props["passhat.runs_counted"] == "2" and props["passhat.pass^2"] == "0"
    assert props["passhat.pass_rate"] == "0.5"


def test_passhat_k_overrides_the_tests_k(pytester: pytest.Pytester) -> None:
    _tests(
        pytester,
        "@pytest.mark.passhat(SUITE, case=CARD, k=3, agent=odd_runs_pass)\n"
        "def test_marked(passhat_result):\n"
        "    assert passhat_result.requested == 5 and passhat_result.passes == 3\n",
    )
    result = pytester.runpytest("--passhat-db", str(pytester.path / "p.db"), "--passhat-k", "5")
    result.assert_outcomes(passed=1)


def test_the_result_fixture_without_a_marker_says_what_to_add(pytester: pytest.Pytester) -> None:
    _tests(pytester, "def test_unmarked(passhat_result):\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*has no marker; add @pytest.mark.passhat(*"])
