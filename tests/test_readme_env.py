"""The README's "Your own environment" is enough: a project written only from its text runs.

The files are the README's code blocks (each starts with a `# shop/...` line
naming where it goes), written outside src/; the commands are its command block.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cli_helpers import ROOT, run_cli
from passhat.store import Store

SECTION = "### Your own environment"
_BLOCK = re.compile(r"^```[a-z]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n### ", start + len(SECTION))
    return text[start:end]


def test_a_project_written_from_the_readme_alone_runs_with_k_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files: dict[str, str] = {}
    commands: list[list[str]] = []
    for block in _BLOCK.findall(readme_section()):
        first = block.splitlines()[0]
        named = re.fullmatch(r"# (shop/\S+)", first)
        if named:
            files[named.group(1)] = block
        else:
            commands += [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert sorted(files) == [
        "shop/agent.py",
        "shop/cases/late-order.yaml",
        "shop/refund_env.py",
        "shop/suite.yaml",
    ]
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    assert commands == [["passhat", "check", "shop"], ["passhat", "run", "shop", "-k", "5"]]

    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "passhat.db")
    for command in commands:
        r = run_cli(capsys, *command[1:], "--db", db) if command[1] == "run" else None
        r = r or run_cli(capsys, *command[1:])
        assert r.code == 0, r.err

    with Store(tmp_path / "passhat.db") as store:
        experiment = store.experiment("latest")
        runs = store.runs(experiment.id)
    assert experiment.k_requested == 5 and experiment.environment_hash is not None
    assert [(x.run_index, x.status) for x in runs] == [(i, "passed") for i in range(1, 6)]
    calls = [c["tool"] for c in runs[0].tool_calls]
    assert calls == ["refund_policy", "get_order", "refund", "get_order"]
    assert runs[0].final_state == {"refunds": [{"order_id": "A-1", "amount": 4200}]}
