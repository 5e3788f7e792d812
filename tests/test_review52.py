"""review52: defects found reviewing round 13's changes, each shown by a test that failed
before its fix (or marked xfail, strict, with the reason)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_walk_stop_in_the_write_folder_after_the_hosts_part_grew_is_not_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `write:` folder inside a read: folder is walked last, so a stop at the bound
    there was taken for the agent's doing (`agent_left`): but the host's part may have
    grown since the start's look (files of the host's, not the agent's), and the agent's
    folder, unchanged, is where the count then crosses. That is no agent's doing."""
    from passhat.agents import lookout
    from passhat.agents.archives import TooMuchToLook
    from passhat.agents.command import CommandAgent, CommandSpec

    monkeypatch.setattr(lookout, "WALK_LIMIT", 50)
    work, data = tmp_path / "work", tmp_path / "data"
    out = data / "out"
    work.mkdir()
    out.mkdir(parents=True)
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    for index in range(40):
        (data / f"host{index}").write_text("")
    for index in range(5):
        (out / f"left{index}").write_text("")  # the agent's, the same all along
    params = {"sandbox": {"read": [str(data)], "write": [str(out)]}}
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    agent.check_view(params)  # the start's look: 46 entries, within the bound
    agent.view(params)  # a run's look, the same
    for index in range(40, 47):  # the host's folder grows; the agent's does not
        (data / f"host{index}").write_text("")
    with pytest.raises(TooMuchToLook) as run:
        agent.view(params)
    assert run.value.error_type == "isolation", str(run.value)
    # the control: the agent's folder grown, the host's as at the start
    for index in range(40, 47):
        (data / f"host{index}").unlink()
    for index in range(5, 12):
        (out / f"left{index}").write_text("")
    with pytest.raises(TooMuchToLook) as left:
        agent.view(params)
    assert left.value.error_type == "agent_left", str(left.value)
