"""CI outputs of run, resume, report and compare: --junit-xml (a test case per case,
what fell short in its failure or error, the figures as the suite's properties, valid
under Ant's and Jenkins's schemas; errored runs are errors, never failures) and
--summary (Markdown appended to a file such as $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from junit_schema import schema_problems
from passhat.report.ci import md
from passhat.store import Store

OTHER = "clean-order-tracking-002"
CRASHES = str(Path(__file__).parent / "agents_for_tests.py") + ":crashes_on_run_2"


def _cases(path: Path) -> dict[str, ET.Element]:
    text = path.read_text(encoding="utf-8")
    assert schema_problems(text) == []
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    return {c.get("name", ""): c for c in root.iter("testcase")}


def _suite(path: Path) -> ET.Element:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    return suite


def _props(element: ET.Element) -> dict[str, str]:
    props = element.find("properties")
    assert props is not None
    return {p.get("name", ""): p.get("value", "") for p in props}


def test_the_seed_as_junit_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit, summary = tmp_path / "j.xml", tmp_path / "s.md"
    db = str(tmp_path / "p.db")
    r = run_seed(capsys, "--db", db, "-q", "--junit-xml", str(junit), "--summary", str(summary))
    assert r.code == 0, r.err
    (case,) = _cases(junit).values()
    assert case.get("name") == SEED
    suite = _suite(junit)
    props = _props(suite)
    assert (props["runs_requested"], props["runs_counted"], props["pass^3"]) == ("3", "3", "0")
    assert float(suite.get("time", "")) == float(case.get("time", "")) > 0
    with Store(Path(db), create=False) as store:
        created = store.experiment("latest").created_at  # 2026-12-06T01:25:32.123456Z
    assert suite.get("timestamp") == created[:19]
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "0/3 counted runs passed: failed runs 1, 2, 3"
    # the seed's table: AC3 inconsistent missed every time, AC7 in run 2, an extra in run 3
    assert (failure.text or "").splitlines()[1:] == [
        "failed runs: 1, 2, 3",
        "missed AC3:inconsistent_with_description: runs 1, 2, 3",
        "missed AC7:unverifiable: runs 2",
        "extra AC5:conflict: runs 3",
    ]
    text = summary.read_text(encoding="utf-8")
    assert "| 3 | 3 | 3 | 0 | 0 |" in text  # requested, completed, counted, errored, missing
    assert "| 1 | 0/3 (0%) | 0% | 0% |" in text
    # `report` writes the same file from the store
    again = tmp_path / "again.xml"
    assert run_cli(capsys, "report", "latest", "--db", db, "--junit-xml", str(again)).code == 0
    assert again.read_text(encoding="utf-8") == junit.read_text(encoding="utf-8")


def test_errored_runs_are_errors_never_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run 2 of each case crashes: the case whose counted runs all passed is an
    <error> (no verdict for run 2), not a pass and not a failure."""
    junit = tmp_path / "j.xml"
    r = run_cli(
        capsys,
        "run", str(CLARIFY), "--agent", CRASHES, "--case", SEED, "--case", OTHER,
        "--db", str(tmp_path / "p.db"), "-q", "--no-report", "--junit-xml", str(junit),
    )  # fmt: skip
    assert r.code == 0, r.err
    cases = _cases(junit)
    seed, other = cases[SEED], cases[OTHER]
    assert seed.find("failure") is None
    error = seed.find("error")
    assert error is not None
    assert error.get("message") == (
        "errored runs 2 of 3 requested: no verdict (2/2 counted runs passed); run 2: "
        "agent_error: RuntimeError: the agent fell over in run 2"
    )
    assert error.get("type") == "agent_error"
    assert "requested 3, completed 3, counted 2, passes 2, errored 1" in (error.text or "")
    failure = other.find("failure")
    assert failure is not None and "errored runs 2: not counted" in failure.get("message", "")
    suite = _suite(junit)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")
    assert _props(suite)["runs_errored"] == "2"


def test_summaries_append_and_compare_writes_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    summary = tmp_path / "s.md"
    for name, agent in (("a", CRASHES), ("b", "agents_for_tests:odd_runs_pass")):
        r = run_cli(
            capsys,
            "run", str(CLARIFY), "--agent", agent, "--case", SEED, "--case", OTHER,
            "--name", name, "--db", db, "-q", "--no-report", "--summary", str(summary),
        )  # fmt: skip
        assert r.code == 0, r.err
    text = summary.read_text(encoding="utf-8")
    assert text.count("### passhat · clarify · experiment") == 2  # appended, not replaced
    junit = tmp_path / "c.xml"
    r = run_cli(
        capsys,
        "compare",
        "a",
        "b",
        "--db",
        db,
        "--junit-xml",
        str(junit),
        "--summary",
        str(summary),
    )
    assert r.code == 0, r.err
    cases = _cases(junit)
    assert set(cases) == {SEED, OTHER, "verdict"}
    assert _props(_suite(junit))[f"case {SEED}"] == "A 2/2, B 2/3, p 1, q 1"
    compared = summary.read_text(encoding="utf-8").split("### passhat compare", 1)[1]
    assert "| pass^2 | 50% | 17% | -33.3 pts |" in compared and "2 paired cases." in compared


def test_a_file_that_cannot_be_written_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run_seed(capsys, "--db", str(tmp_path / "p.db"), "-q", "--junit-xml", str(tmp_path))
    assert r.code == 2
    assert f"--junit-xml {tmp_path}: cannot write" in r.err


def test_markdown_cells_are_escaped() -> None:
    """Model output is data: no table broken, no HTML let through."""
    assert md("a|b <script>x</script> *c*") == r"a\|b &lt;script&gt;x&lt;/script&gt; \*c\*"
    assert md("two\nlines") == "two lines"


def test_the_schema_check_refuses_what_the_schemas_refuse() -> None:
    """The JUnit passhat wrote before: properties in a test case, no time or timestamp."""
    old = (
        '<testsuites name="passhat" tests="1" failures="0" errors="0">'
        '<testsuite name="s" tests="1" failures="0" errors="0"><properties />'
        '<testcase classname="s" name="c"><properties /></testcase></testsuite></testsuites>'
    )
    problems = schema_problems(old)
    assert "Ant: testsuites: undeclared attribute name" in problems
    assert "Ant: testsuite 0: no timestamp" in problems
    assert "Ant: testsuite 0 testcase 'c': no time" in problems
    assert "Ant: testsuite 0 testcase 'c': holds <properties>" in problems
    assert "Jenkins: testsuite 's' testcase 'c': holds <properties>" in problems
    assert (
        schema_problems(old.replace(' name="passhat" tests="1" failures="0" errors="0"', "")) != []
    )
