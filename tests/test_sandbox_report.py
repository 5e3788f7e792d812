"""Reports say how sealed an experiment's runs were (issue 32): an in-process agent is
trusted code ("agent ran in-process: not sealed"), a command agent's level is named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agent_python import AGENT_SCRIPT, PYTHON
from cli_helpers import CLARIFY, run_cli, run_seed
from conftest import SuiteWriter
from passhat.agents import isolation


def _report(capsys: pytest.CaptureFixture[str], db: Path) -> tuple[str, dict]:
    plain = run_cli(capsys, "report", "latest", "--db", str(db))
    data = run_cli(capsys, "report", "latest", "--json", "--db", str(db))
    assert plain.code == 0 and data.code == 0, plain.err + data.err
    return plain.out, json.loads(data.out)["experiment"]


def test_an_in_process_agent_is_reported_not_sealed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    assert run_seed(capsys, "--db", str(db), "-q", "--no-report").code == 0
    out, experiment = _report(capsys, db)
    assert "agent ran in-process: not sealed" in " ".join(out.split())
    assert experiment["isolation"] == {"level": "in-process", "sealed": False}


@pytest.mark.parametrize("level", ["namespace", "process"])
def test_a_command_agent_is_reported_at_its_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str
) -> None:
    db = tmp_path / "p.db"
    agent = f"{PYTHON or sys.executable} {AGENT_SCRIPT} ok"
    args = ["--agent-cmd", agent, "--isolation", level, "--db", str(db), "-q", "--no-report"]
    result = run_seed(capsys, "-k", "1", "--model", "", *args)
    assert result.code in (0, 1), result.err
    out, experiment = _report(capsys, db)
    assert experiment["isolation"] == {"level": level, "sealed": level == "namespace"}
    assert ("not sealed" in out) is (level == "process")


@pytest.mark.skipif(
    isolation.unavailable("namespace") is not None,
    reason=f"no sandbox for agents here: {isolation.unavailable('namespace')}",
)
def test_check_says_what_a_run_would_see_and_reach(
    writer: SuiteWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = writer.root.parent / "agent"
    agent.mkdir()
    (agent / "main.py").write_text("print('{}')\n")
    (agent / ".env").write_text("TOKEN=x\n")
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [PYTHON or sys.executable, str(agent / "main.py")],
        "hosts": ["api.example.com:443"],
    }
    suite = writer.write()
    # the level asked for: a checkout closed to other users sets PASSHAT_ISOLATION=process
    out = " ".join(run_cli(capsys, "check", str(suite), "--isolation", "namespace").out.split())
    assert "isolation: namespace (bubblewrap)" in out
    assert f"{agent}" in out and f"covered in view: {agent / '.env'}" in out
    assert "through its proxy: api.example.com:443" in out
    control = " ".join(run_cli(capsys, "check", str(suite), "--isolation", "process").out.split())
    assert "process: not sealed" in control
    bad = run_cli(capsys, "check", str(suite), "--isolation", "jail")
    assert bad.code == 2 and "use namespace or process" in bad.err


def test_check_says_an_in_process_agent_is_not_sealed(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_cli(capsys, "check", str(CLARIFY)).out
    assert "the agent runs in-process: trusted code, not sealed" in " ".join(out.split())
