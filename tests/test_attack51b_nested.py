"""A run that fills a `write:` folder lying inside a folder it reads had its later runs
errored as passhat's failure (round 13's second outside attack).

attack51 made a look stopped inside one of the run's `write:` folders the agent's
(`agent_left`, archives.TooMuchToLook.left_in). But a `write:` folder may lie inside a
folder the run reads (or inside its own program's folder: `agent/out` beside
`agent/agent.py`), and the look walks that outer folder depth first in listing order,
counting the `write:` folder's entries on its way: when the `write:` folder was listed
before a folder of the host's, the entries the agent left there used up the bound and
the look stopped at the host's folder, outside the `write:` folder: the later runs were
errored `isolation`, passhat's failure, not counted, as the agent chose (DESIGN: only
infrastructure failures are errored). Tried at unit level (the look a run makes,
CommandAgent.view, WALK_LIMIT made small); the whole runs of the same at `namespace`
and the control at `process` (no look: the later runs are counted) are attack51's
(tests/test_attack51_blame.py), whose `write:` folder is the walk's own.

Fixed: a look walks the folders inside a `write:` folder after all the others
(lookout.Lookout's `last`): the host's own part is counted first, whole, and a stop in
the agent's part is the agent's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passhat.agents import lookout
from passhat.agents.archives import TooMuchToLook

LIMIT = 40


def _outer(tmp_path: Path) -> tuple[Path, Path]:
    """A folder the agent reads holding its `write:` folder, listed before two folders of
    the host's (30 entries in all, within LIMIT): the read folder and the write folder."""
    read = tmp_path / "read"
    read.mkdir()
    for name in ("d0", "d1", "d2", "d3"):
        (read / name).mkdir()
    first, *others = [e.name for e in os.scandir(read)]  # the walk's order
    for index, name in enumerate(others[:2]):
        for n in range(12):
            (read / name / f"{index}-{n}.txt").write_text("host data\n")
    return read, read / first


def _agent(tmp_path: Path) -> object:
    from passhat.agents.command import CommandAgent, CommandSpec

    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    return CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)


def test_a_write_folder_inside_a_read_folder_filled_is_the_agents_doing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lookout, "WALK_LIMIT", LIMIT)
    read, write = _outer(tmp_path)
    agent = _agent(tmp_path)
    params = {"sandbox": {"read": [str(read)], "write": [str(write)]}}
    agent.view(params)  # type: ignore[attr-defined]  # the experiment's start: within the bound
    for n in range(LIMIT // 2):  # what run 1 left in its write: folder
        (write / f"left-{n}").write_text("")
    with pytest.raises(TooMuchToLook) as raised:
        agent.view(params)  # type: ignore[attr-defined]  # run 2's look
    assert raised.value.error_type == "agent_left", (str(raised.value), write)


def test_control_the_hosts_own_folder_past_the_bound_is_passhats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the host's folder beside the write: folder grows past the bound (not
    the agent's doing): still `isolation`."""
    monkeypatch.setattr(lookout, "WALK_LIMIT", LIMIT)
    read, write = _outer(tmp_path)
    agent = _agent(tmp_path)
    params = {"sandbox": {"read": [str(read)], "write": [str(write)]}}
    agent.view(params)  # type: ignore[attr-defined]
    (write / "left").write_text("")
    host = next(p for p in read.iterdir() if p != write and any(p.iterdir()))
    for n in range(LIMIT):
        (host / f"more-{n}").write_text("")
    with pytest.raises(TooMuchToLook) as raised:
        agent.view(params)  # type: ignore[attr-defined]
    assert raised.value.error_type == "isolation", str(raised.value)


def test_a_write_folder_named_through_a_link_filled_is_the_agents_doing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held: a `write:` folder named by a symlink is looked at, and blamed, by its real
    path (CommandAgent.extra_paths: real paths)."""
    monkeypatch.setattr(lookout, "WALK_LIMIT", LIMIT)
    real = tmp_path / "real-out"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    agent = _agent(tmp_path)
    params = {"sandbox": {"write": [str(tmp_path / "out")]}}
    agent.view(params)  # type: ignore[attr-defined]
    for n in range(LIMIT + 1):
        (real / f"left-{n}").write_text("")
    with pytest.raises(TooMuchToLook) as raised:
        agent.view(params)  # type: ignore[attr-defined]
    assert raised.value.error_type == "agent_left", str(raised.value)
