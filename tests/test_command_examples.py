"""The command-agent examples (clarify-ts, command-agent) end to end, with no network.

A real `node` process per run, the official `openai` and MCP TypeScript SDKs,
passhat's MCP server and model proxy on 127.0.0.1, the seed's cassette behind
the proxy: the report must be the seed's coupon table, as `make demo` shows it
for the built-in clarifier. `make test` builds the agent (npm ci, tsc) first.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from agent_python import PYTHON, SEALED_ARGS
from cli_helpers import CLARIFY, ROOT, run_cli, run_seed
from passhat.models.replay import Cassette
from passhat.store import Store

AGENT = ROOT / "examples" / "clarify-ts" / "dist" / "agent.js"

SEED_SETS = {
    1: {"AC3:conflict", "AC4:unverifiable", "AC7:unverifiable"},
    2: {"AC3:conflict", "AC4:unverifiable"},
    3: {"AC3:conflict", "AC4:unverifiable", "AC7:unverifiable", "AC5:conflict"},
}
"""The seed: AC3 conflict and AC4 in every run, AC7 missed in run 2, an extra in run 3,
AC3 inconsistent-with-description in none."""


@pytest.fixture(scope="module")
def node_agent() -> str:
    node = shutil.which("node")
    assert node is not None, (
        "node is needed for the TypeScript example (Debian: apt-get install nodejs)"
    )
    assert AGENT.is_file(), f"{AGENT} is missing: run `make clarify-ts` (npm ci and tsc)"
    return f"{node} {AGENT}"


def _annotation_sets(db: Path, ref: str = "latest") -> dict[int, set[str]]:
    with Store(db, create=False) as store:
        experiment = store.experiment(ref)
        runs = store.runs(experiment.id)
    return {
        r.run_index: {f"AC{a['ac']}:{a['label']}" for a in r.final_state["ticket"]["annotations"]}
        for r in runs
    }


def test_the_typescript_clarifier_reproduces_the_seed_table(
    node_agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_seed(capsys, "--agent-cmd", node_agent, "--db", str(db), "--name", "ts", *SEALED_ARGS)
    assert r.code == 0, r.err
    assert _annotation_sets(db) == SEED_SETS
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("ts").id)
    assert [run.status for run in runs] == ["failed"] * 3
    assert {run.model_source for run in runs} == {"replayed"}
    for run in runs:
        # each run called update_ticket once over MCP and never queried background
        assert [c["tool"] for c in run.tool_calls] == ["update_ticket"]
        assert [m["role"] for m in run.transcript] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert run.output["stopped"] == "answered"
        assert (run.input_tokens, run.output_tokens) != (0, 0)
    out = " ".join(r.out.split())
    assert "AC3:inconsistent_with_description 0/3 1, 2, 3 always missed" in out
    assert "AC7:unverifiable 2/3 2 sometimes missed" in out
    assert "AC5:conflict +1/3 extra in 3" in out
    assert "3 runs replayed from a cassette: re-plays of one recording, not independent" in out
    report = run_cli(capsys, "report", "ts", "--json", "--db", str(db))
    assert json.loads(report.out)["accounting"]["runs_replayed"] == 3

    # the proxy's transcript makes a cassette with the seed's answers, turn by turn
    tape = tmp_path / "ts.jsonl"
    made = run_cli(capsys, "cassette", "ts", "-o", str(tape), "--db", str(db))
    assert made.code == 0, made.err
    seed = Cassette.load(CLARIFY / "cassettes" / "seed.jsonl").answers
    ours = Cassette.load(tape).answers
    assert set(ours) == set(seed)
    for key, answer in seed.items():
        assert ours[key].message == answer.message
        assert ours[key].usage == answer.usage

    # and that cassette replays through the proxy to the same annotation sets
    again = run_seed(
        capsys,
        "--agent-cmd",
        node_agent,
        "--model",
        f"replay:{tape}",
        "--db",
        str(db),
        "--name",
        "again",
        *SEALED_ARGS,
    )
    assert again.code == 0, again.err
    assert _annotation_sets(db, "again") == SEED_SETS


def test_the_minimal_python_command_agent_reproduces_the_seed_table_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = ROOT / "examples" / "command-agent" / "agent.py"
    db = tmp_path / "p.db"
    # a root passhat runs the agent as a uid of its own, which may not reach this Python
    sealed = [] if sys.executable == PYTHON else ["--isolation", "process"]
    cmd = f"{sys.executable} {agent}"
    r = run_seed(capsys, "--agent-cmd", cmd, "--db", str(db), "-q", *sealed)
    assert r.code == 0, r.err
    assert _annotation_sets(db) == SEED_SETS


# ------------------------------------------------ docs/command-agents.md's Python clients (#29)

DOC = (ROOT / "docs" / "command-agents.md").read_text(encoding="utf-8")


def _doc_block(heading: str, tmp_path: Path, name: str) -> Path:
    """The first ```python block under `heading`, as printed, in a file."""
    block = DOC.split(f"\n{heading}\n")[1].split("```python\n")[1].split("```")[0]
    path = tmp_path / name
    path.write_text(block, encoding="utf-8")
    return path


def test_the_no_sdk_agent_in_the_docs_reproduces_the_seed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plain JSON-RPC over HTTP with urllib (initialize, tools/list, tools/call) and
    the model proxy with the run's token, as docs/command-agents.md prints it."""
    agent = _doc_block("### With no SDK: JSON-RPC over HTTP", tmp_path, "plain_agent.py")
    assert "import urllib.request" in agent.read_text(encoding="utf-8")
    db = tmp_path / "p.db"
    # the snippet's protocol is under test, not the isolation (test_isolation.py): at
    # the process level a root passhat runs it with this pyenv's interpreter
    r = run_seed(
        capsys,
        "--agent-cmd",
        f"{sys.executable} {agent}",
        "--db",
        str(db),
        "-q",
        "--isolation",
        "process",
    )
    assert r.code == 0, r.err
    assert _annotation_sets(db) == SEED_SETS
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    for run in runs:
        assert run.status == "failed" and run.model_source == "replayed"
        assert [c["tool"] for c in run.tool_calls] == ["update_ticket"]
        assert [m["role"] for m in run.transcript] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert run.output == {"final": run.transcript[-1]["content"], "turns": 2}
        assert run.stderr is not None and "update_ticket: ok" in run.stderr


def test_the_mcp_sdk_agent_in_the_docs_runs_with_the_examples_helpers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The version-proof client (mcp 1.x or 2.x) as docs/command-agents.md prints it,
    run with the installed SDK; its helpers are examples/command-agent/agent.py's."""
    import ast

    agent = _doc_block("### In Python, with `mcp` 1.x or 2.x", tmp_path, "sdk_agent.py")
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--agent-cmd",
        f"{sys.executable} {agent}",
        "-k",
        "1",
        "--db",
        str(db),
        "--isolation",
        "process",
    )
    assert r.code == 0, r.err
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.status == "failed", run.error_message  # it writes nothing: counted, not errored
    assert run.output == {
        "tools": ["get_ticket", "query_background", "update_ticket"],
        "title": "結帳頁支援優惠碼",
    }
    assert [c["tool"] for c in run.tool_calls] == ["get_ticket"]

    def helpers(path: Path) -> dict[str, str]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return {
            node.name: ast.dump(node)
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name != "main"
        }

    example = helpers(ROOT / "examples" / "command-agent" / "agent.py")
    assert set(helpers(agent)) == {"mcp_transport", "tools_call"} <= set(example)
    assert all(example[name] == dumped for name, dumped in helpers(agent).items())
