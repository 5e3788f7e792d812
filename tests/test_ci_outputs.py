"""CI outputs of run, resume, report and compare: --junit-xml (a test case per case,
counts as properties; errored runs are errors, never failures) and --summary
(Markdown appended to a file such as $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from passhat.report.ci import md

OTHER = "clean-order-tracking-002"
CRASHES = str(Path(__file__).parent / "agents_for_tests.py") + ":crashes_on_run_2"


def _cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return {c.get("name", ""): c for c in root.iter("testcase")}


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
    props = _props(case)
    assert (props["requested"], props["counted"], props["passes"]) == ("3", "3", "0")
    assert (props["pass@3"], props["pass^3"]) == ("false", "false")
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "0/3 counted runs passed"
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
        "errored runs 2 of 3 requested: no verdict (2/2 counted runs passed)"
    )
    assert _props(seed)["errored"] == "1" and _props(seed)["counted"] == "2"
    failure = other.find("failure")
    assert failure is not None and "errored runs 2: not counted" in failure.get("message", "")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")


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
    assert _props(cases[SEED])["a_counted"] == "2" and _props(cases[SEED])["b_counted"] == "3"
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
