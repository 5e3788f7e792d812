"""A sandboxed run's look for answers: off the loop where its view holds a folder of the
host, made on the loop where it holds none (CommandAgent._view).

A thread's hop there and back cost each run of an agent that is a system program (no
files of its own, no read: or write:) more CPU than the look itself, which then has
nothing to look at (benchmarks/bench_spawn.py, issue 38).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from passhat.agents import command
from passhat.agents.command import CommandAgent, CommandSpec

PARAMS = {"isolation": "namespace"}


def _threads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The looks handed to a thread (in_time), recorded, each made as in_time would."""
    handed: list[Any] = []
    real = command.in_time

    async def in_time(look: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(look)
        return await real(look, *args, **kwargs)

    monkeypatch.setattr(command, "in_time", in_time)
    return handed


def test_a_system_program_with_nothing_in_view_is_looked_at_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed = _threads(monkeypatch)
    agent = CommandAgent(CommandSpec(("true",), cwd=str(tmp_path)), None)
    agent.check_view(PARAMS)  # the experiment's start: the view's folders found
    view = asyncio.run(agent._view(PARAMS, ((8000, "/run/a.sock"),)))
    assert handed == []
    assert view == agent.view(PARAMS, ((8000, "/run/a.sock"),))
    assert (view.read, view.write, view.relays) == ((), (), ((8000, "/run/a.sock"),))


def test_a_view_with_a_folder_of_the_host_is_looked_at_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed = _threads(monkeypatch)
    (tmp_path / "agent.sh").write_text("exit 0\n")
    (tmp_path / ".env").write_text("KEY=1\n")
    agent = CommandAgent(CommandSpec(("sh", "agent.sh"), cwd=str(tmp_path)), None)
    agent.check_view(PARAMS)
    view = asyncio.run(agent._view(PARAMS))
    assert len(handed) == 1
    assert str(tmp_path / ".env") in view.hide  # the look made, in its thread
    read = tmp_path / "data"
    read.mkdir()
    asyncio.run(agent._view({**PARAMS, "sandbox": {"read": [str(read)]}}))  # not yet found
    assert len(handed) == 2


def test_a_view_not_found_yet_is_looked_at_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed = _threads(monkeypatch)
    agent = CommandAgent(CommandSpec(("true",), cwd=str(tmp_path)), None)
    asyncio.run(agent._view(PARAMS))  # no start look made (a resume's first run)
    assert len(handed) == 1
    asyncio.run(agent._view(PARAMS))  # found by then: nothing in view
    assert len(handed) == 1
