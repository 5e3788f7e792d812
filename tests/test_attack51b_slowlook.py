"""A run that leaves slow archives in its `write:` folder had the later runs errored as
passhat's failure (round 13's second outside attack).

The look for answers before each run is made inside the run's --timeout, and a deadline
that comes during it errors the run `isolation`, naming the look (lookout.in_time, fix51):
passhat's failure, not counted. attack51 made a look *stopped at its bound* inside the
run's `write:` folder the agent's (`agent_left`), but not a look *outlasting the run's
--timeout* there: run 1 left archives in its `write:` folder that cost the look more
than the run's --timeout and less than the look's own bound (archives.LOOK_S, 10 s;
attack50's gzipped tars cost ~0.45 s each, so 10-20 of them), and every later run was
errored `isolation`: the agent chose which of its runs are counted. Tried in-process
at `namespace` as root (each archive's look made a 0.5 s sleep, so the time is sure
under any load), `-k 2 --concurrency 1 --timeout 4`; at `process` (the control) there
is no look and run 2 is counted.

Fixed: a look notes the folder it is in (lookout.in_time); a deadline that comes while
it is inside one of the run's `write:` folders (walked last, lookout.Lookout.last: the
rest was looked at within the deadline) is the agent's, `agent_left`
(LookOutOfTime.left_in), as a stop at the bound there is. What the look reads again
there is only what changed since the last look (or the experiment's start): the
agent's.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent_python import PYTHON
from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.agents import isolation, lookout
from passhat.store import Store

AGENT = """
import os, sys
if os.environ["PASSHAT_RUN_INDEX"] == "1":
    for n in range(12):
        with open(os.path.join(sys.argv[1], f"{n}.tgz"), "wb") as f:
            f.write(b"\\x1f\\x8b" + bytes(100))
print("{}")
"""


def _statuses(
    open_tmp: Path, level: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> list[tuple[str, str | None]]:
    def slow(path: str) -> bool:
        time.sleep(0.5)
        return False

    monkeypatch.setattr(lookout, "holds_answers", slow)
    out = open_tmp / "out"
    out.mkdir()
    out.chmod(0o777)  # a root passhat's runs have uids of their own
    agent = open_tmp / "agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT, encoding="utf-8")
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(agent / "agent.py"), str(out)]
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    for item in open_tmp.rglob("*"):
        item.chmod(item.stat().st_mode | 0o755)
    db = open_tmp / "p.db"
    r = run_cli(
        capsys, "run", str(writer.write()), "-k", "2", "--concurrency", "1", "--timeout", "4",
        "--isolation", level, "--agent-write", str(out), "--db", str(db), "-q", "--no-report",
    )  # fmt: skip
    assert r.code in (0, 1), r.err
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    assert len(os.listdir(out)) == 12, [(r.status, r.error_message) for r in runs]
    return [(r.status, r.error_type) for r in runs]


needs_python = pytest.mark.skipif(PYTHON is None, reason="no Python that other users may run")
needs_sandbox = pytest.mark.skipif(
    isolation.unavailable("namespace") is not None, reason="no sandbox for agents here"
)


@needs_sandbox
@needs_python
def test_archives_that_outlast_the_next_runs_timeout_are_the_agents_doing(
    open_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    statuses = _statuses(open_tmp, "namespace", capsys, monkeypatch)
    assert statuses == [("failed", None), ("errored", "agent_left")], statuses


@needs_python
def test_control_at_process_level_run_2_is_counted(
    open_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _statuses(open_tmp, "process", capsys, monkeypatch) == [("failed", None)] * 2


def test_a_look_waiting_for_another_runs_look_of_the_write_folder_is_the_agents(
    tmp_path: Path,
) -> None:
    """Runs at --concurrency > 1 share each folder's look, one at a time: a run whose
    deadline comes while it waits for another run's look of the `write:` folder (slow
    with what the agent left there) waits on the agent's doing, not passhat's."""
    import asyncio

    from passhat.agents.command import CommandAgent, CommandSpec

    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    params = {"sandbox": {"write": [str(out)]}}
    agent.view(params)
    (looks,) = {plan[-1] for plan in agent._plans.values()}
    held = looks._lookouts[str(out.resolve())]._lock  # another run's look of it, under way
    held.acquire()

    async def late() -> object:
        look = lookout.in_time(agent.view, params, folders=lambda: agent.extra_paths(params))
        try:
            return await asyncio.wait_for(look, 0.3)
        finally:
            held.release()  # the look's thread then ends, and asyncio.run with it

    with pytest.raises(lookout.LookOutOfTime) as raised:
        asyncio.run(late())
    assert raised.value.error_type == "agent_left", str(raised.value)
