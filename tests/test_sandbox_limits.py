"""A sandboxed run takes no more of the machine than its limits (issue 32: whatever an agent
does ends as one run that touched nothing but itself): a fork bomb stops at the run's
process cap, its work folder, /tmp and /dev/shm are tmpfs of a fixed size, the kernel's OOM killer
takes the agent first, a flood of connections to its endpoint holds at most
CONNECTIONS of passhat's descriptors, and no command line it can read names a host path. As root and as nobody, each with the --isolation
process control that shows the grab works without the sandbox (so the test can fail)."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.agents import isolation, sandbox
from passhat.serve.endpoints import CONNECTIONS, connections_for
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, one_run, passhat_as

pytestmark = ATTACK_MARKS

FORKS = isolation.PROCESSES + 100
SHM = sandbox.SHM_BYTES + (1 << 20)
CAP = connections_for(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 8)
"""A run's connections at the default --concurrency 8 under passhat's descriptor limit
(raised to the hard one as it starts): CONNECTIONS where that limit is large (20,000 here),
fewer on a machine whose hard limit is near 1,024 (fd50: serve/endpoints.share)."""
FLOOD = CAP + 200


def _grab(user: str, folder: Path, level: str) -> dict:
    agent = folder / f"agent-{level}"
    agent.mkdir()
    (agent / "limits.py").write_text((TESTS / "limits_agent.py").read_text())
    writer = SuiteWriter(folder / f"suite-{level}")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(agent / "limits.py")],
        "env": {
            "LIMITS_FORKS": str(FORKS),
            "LIMITS_SHM_BYTES": str(SHM),
            "LIMITS_CONNECTIONS": str(FLOOD),
            "LIMITS_BURST": str(CAP),
        },
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    run = one_run(user, folder, suite, folder / f"{level}.db", level)
    assert run.output is not None, run.error_message
    return {**run.output, "suite": str(suite)}  # type: ignore[dict-item]


def test_a_run_takes_no_more_than_its_limits(user: str, open_tmp: Path) -> None:
    seen = _grab(user, open_tmp, "namespace")
    assert seen["forks"] < isolation.PROCESSES, "the fork bomb went past the run's process cap"
    assert seen["fork_error"] == "EAGAIN"
    assert seen["tmp_bytes"] == sandbox.TMP_BYTES
    # its work folder is a tmpfs of its own, input.json in it: nothing it writes there
    # reaches the host's disk (without the sandbox it is the host's folder)
    assert seen["work_bytes"] == sandbox.WORK_BYTES and seen["input_read"]
    assert seen["shm_bytes"] == sandbox.SHM_BYTES
    assert seen["shm_fill"] == "ENOSPC", "the run wrote past its /dev/shm into the host's memory"
    assert seen["oom_score_adj"] == sandbox.OOM_SCORE_ADJ
    # bwrap's tmpfs for /dev and over /etc/ssh have no size: writable, they took the host's
    # memory past the caps of /tmp and /dev/shm
    assert seen["unsized"] == [], "a tmpfs without a size took the agent's files"
    # a burst of as many connections as a run may hold is taken at once (the relay's
    # backlog has room: with socat's own 5 a connect past it waited a 1 s SYN retransmit),
    # and of the whole flood passhat holds at most its cap
    assert seen["at_once"] == CAP, "connections opened at once waited on the relay"
    assert 0 < seen["held"] <= CAP, "passhat held every connection of the flood"
    # bwrap reads its options from a memfd: its command line (the sandbox's first process)
    # shows none of them (the folders bound and covered, the gate's descriptors)
    lines = seen["command_lines"]
    assert any(line.startswith("bwrap --args") for line in lines), lines
    assert not [line for line in lines if "--ro-bind" in line or "--unshare" in line], lines

    # the control: without the sandbox every grab goes through
    control = _grab(user, open_tmp, "process")
    assert control["forks"] == FORKS and control["fork_error"] is None
    assert control["shm_fill"] == "written"
    assert control["work_bytes"] != sandbox.WORK_BYTES and control["input_read"]
    assert control["oom_score_adj"] != sandbox.OOM_SCORE_ADJ
    assert control["held"] == FLOOD
    assert any(control["suite"] in line for line in control["command_lines"])


def test_a_run_held_at_its_process_cap_leaves_the_others_theirs(user: str, open_tmp: Path) -> None:
    """Where passhat is not root every run has its uid, and the kernel counts a sandbox's
    processes for that uid too, against the limit bwrap was started with: a cap set there
    was one for all runs together, and a run holding 1,024 processes left its neighbour
    none (EAGAIN for each fork, and for making a sandbox at all)."""
    shared = open_tmp / "shared"
    shared.mkdir()
    agent = open_tmp / "agent"
    agent.mkdir()
    (agent / "limits.py").write_text((TESTS / "limits_agent.py").read_text())
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(agent / "limits.py")],
        "env": {"LIMITS_NEIGHBOUR": str(shared)},
        "write": [str(shared)],
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "neighbours.db"
    args = ["-k", "2", "--concurrency", "2", "--timeout", "120", "--db", str(db), "-q"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {r.run_index: r for r in store.runs(store.experiment("latest").id)}
    assert runs[1].output is not None, runs[1].error_message
    assert runs[2].output is not None, runs[2].error_message
    assert 0 < runs[1].output["held"] < isolation.PROCESSES  # type: ignore[index]
    assert runs[2].output == {"forks": 20, "fork_error": None}, "a neighbour took its processes"


def test_check_says_the_level_and_the_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if (why := isolation.unavailable("namespace")) is not None:
        pytest.skip(f"check says the namespace level where it can be had: {why}")
    monkeypatch.delenv("PASSHAT_ISOLATION", raising=False)  # a closed checkout's (conftest)
    writer = SuiteWriter(tmp_path / "suite")
    writer.suite["defaults"]["agent"] = {"command": ["true"]}  # type: ignore[index]
    result = run_cli(capsys, "check", str(writer.write()))
    assert "isolation: namespace (bubblewrap)" in result.out
    held = f"holds at most: {isolation.PROCESSES} processes and threads, a work folder of 1024 MiB"
    assert held in result.out
    assert f"{CONNECTIONS} connections to its endpoints at once" in result.out
    # the run's budgets, as docs/command-agents.md's `holds` row says `check` prints them
    out = " ".join(result.out.split())
    assert "10,000 tool calls (4 MiB of names and arguments, 32 MiB of answers)" in out
    assert "32 MiB of new messages in its model requests and 4 GiB of requests in all" in out
    assert "(10,000 messages and 500,000 JSON values in one)" in out
    assert "no Linux AIO (a pool the whole machine shares)" in out
