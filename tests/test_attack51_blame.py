"""A run that leaves its `write:` folder past the look's bound has the later runs errored
as passhat's failure (round 13's outside attack).

Before each run passhat looks for answers in the folders in view, and refuses a folder
holding more than 20,000 files and folders (sandbox.WALK_LIMIT): that run is errored
`isolation`, an infrastructure failure, not counted. A run may write its `write:`
folder. Tried for real at `namespace`, as root and as an unprivileged user, with
`-k 3 --concurrency 1`: run 1 left 20,001 empty files there, and runs 2 and 3 were
errored `isolation` ("the agent's view holds more than 20,000 files and folders here"):
what the agent did is recorded as passhat's failure, and the agent chose which of its
runs are counted (DESIGN: only infrastructure failures are errored). At `process` (the
control) there is no look and the later runs are counted.

Fixed: a refusal whose stop lies in one of the run's `write:` folders (all within the
bound at the experiment's start, or it was refused then) is the agent's, `agent_left`
(archives.TooMuchToLook.left_in): the later runs are errored as left unrun by the agent,
never `isolation`, and the report's loss line and worst-case bounds show them as the
agent's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_in, passhat_as


def _statuses(user: str, open_tmp: Path, level: str) -> list[tuple[str, str | None]]:
    suite, out = attack_in(open_tmp, "ATTACK_MANY", "20001")
    db = open_tmp / "p.db"
    args = ["-k", "3", "--concurrency", "1", "--timeout", "120", "--isolation", level]
    args += ["--db", str(db), "-q", "--no-report", "--agent-write", str(out)]
    done = passhat_as(user, open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    assert runs[0].output == {"many": 20001}, runs[0].output
    return [(r.status, r.error_type) for r in runs]


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_run_that_fills_its_write_folder_is_not_passhats_failure(
    user: str, open_tmp: Path
) -> None:
    statuses = _statuses(user, open_tmp, "namespace")
    assert statuses[1:] == [("errored", "agent_left")] * 2, statuses


@ATTACK_MARKS[1]
def test_control_at_process_level_the_later_runs_are_counted(user: str, open_tmp: Path) -> None:
    assert _statuses(user, open_tmp, "process") == [("failed", None)] * 3


def test_a_workers_first_look_is_a_later_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Dask each worker looks once when the shipment arrives (shipment.prepare): after the
    driver's start look, so a write: folder the agent's runs filled is left to each run to
    record as `agent_left`, not refused by the worker as passhat's (review51b). The start's
    look (evaluate, resume) still refuses it in one line."""
    from passhat.agents import lookout
    from passhat.agents.archives import TooMuchToLook
    from passhat.agents.command import CommandAgent, CommandSpec

    monkeypatch.setattr(lookout, "WALK_LIMIT", 50)
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    for index in range(51):
        (out / str(index)).write_text("")
    params = {"sandbox": {"write": [str(out)]}}

    def agent() -> CommandAgent:
        return CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)

    with pytest.raises(TooMuchToLook) as start:
        agent().check_view(params)
    assert start.value.error_type == "isolation"  # the start's: one line, nothing runs
    worker = agent()
    worker.check_view(params, later=True)  # not the worker's refusal
    with pytest.raises(TooMuchToLook) as run:
        worker.view(params)  # each run's look
    assert run.value.error_type == "agent_left", str(run.value)
