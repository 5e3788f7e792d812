"""docs/ci.md: its GitHub Actions workflow and GitLab CI job parse, and every passhat
command they name runs as the file says; the output it quotes is what passhat prints."""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import ROOT, run_cli
from junit_schema import schema_problems

DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    """The fenced blocks of docs/ci.md in `language` ("" for plain ones)."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", DOC, re.S | re.M)
    return [body for lang, body in blocks if lang == language]


def _workflow() -> dict[str, Any]:
    (text,) = [b for b in _blocks("yaml") if b.startswith("# .github/workflows/")]
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def _gitlab() -> dict[str, Any]:
    (text,) = [b for b in _blocks("yaml") if b.startswith("# .gitlab-ci.yml")]
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def _github_commands() -> list[str]:
    steps = _workflow()["jobs"]["evaluate"]["steps"]
    return [s["run"] for s in steps if "run" in s and s["run"].startswith("passhat ")]


def _gitlab_commands() -> list[str]:
    job = _gitlab()["passhat"]
    lines = [*job["script"], *job["after_script"]]
    return [line for line in lines if line.startswith("passhat ")]


def test_both_files_are_ci_files_that_publish_what_passhat_writes() -> None:
    workflow = _workflow()
    assert set(workflow[True]) == {"push", "pull_request"}  # YAML 1.1 reads `on` as True
    steps = workflow["jobs"]["evaluate"]["steps"]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses == [
        "actions/checkout",
        "actions/setup-python",
        "actions/upload-artifact",
        "mikepenz/action-junit-report",
    ]
    assert steps[-1]["with"]["report_paths"] == "passhat.xml"
    assert steps[-2]["with"]["path"].split() == ["passhat.html", "passhat.xml", "passhat.db"]
    assert all(s.get("if") == "always()" for s in steps[-3:])  # kept when the gate fails
    job = _gitlab()["passhat"]
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["junit"] == "passhat.xml"
    assert "passhat.html" in job["artifacts"]["paths"]


@pytest.mark.parametrize("commands", [_github_commands, _gitlab_commands], ids=["github", "gitlab"])
def test_the_commands_they_name_run_gate_and_write_their_files(
    commands: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run, report = commands()
    argv = shlex.split(run.replace('"$GITHUB_STEP_SUMMARY"', str(summary)))
    gated = run_cli(capsys, *argv[1:])
    assert gated.code == 1, gated.err  # the seed's card: the gate fails, as the doc says
    assert _gate_lines(gated.err) == _quoted_gate_lines()
    assert run_cli(capsys, *shlex.split(report)[1:]).code == 0
    assert (tmp_path / "passhat.html").stat().st_size > 0
    junit = (tmp_path / "passhat.xml").read_text(encoding="utf-8")
    assert schema_problems(junit) == []
    written = summary if "GITHUB" in run else tmp_path / "passhat-summary.md"
    assert "| ac-conflict-001 | 0/3 | – | – |" in written.read_text(encoding="utf-8")
    # the failure text docs/ci.md quotes is the one written
    failure = ET.fromstring(junit).find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None
    assert failure.text in DOC


def _gate_lines(err: str) -> list[str]:
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if " not met: " in line)
    return lines[start:]


def _quoted_gate_lines() -> list[str]:
    (block,) = [b for b in _blocks("") if b.startswith("pass^k>=0.4 not met")]
    return block.splitlines()


def test_the_pytest_message_quoted_is_the_plugins(pytester: pytest.Pytester) -> None:
    (test,) = [b for b in _blocks("python") if "require=" in b]
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_the_doc=f"import pytest\n{test.replace('examples/', str(ROOT) + '/examples/')}"
    )
    result = pytester.runpytest(
        "--passhat-db", str(pytester.path / "p.db"), "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    (quoted,) = [b for b in _blocks("") if b.startswith("passhat: pass^k>=0.8")]
    expected = [
        re.sub(r"passhat report \w+", "passhat report *", line) for line in quoted.splitlines()
    ]
    result.stdout.fnmatch_lines(expected)


pytest_plugins = ["pytester"]
