"""fix51: defects left at round 12's stop, each shown by a test that failed before its fix."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import passhat
from conftest import SuiteWriter
from passhat.agents.lookout import in_time
from test_review49 import suite_without_model


def _statuses(suite: Path, agent: Any, db: Path) -> list[tuple[str, str | None, str | None]]:
    done = passhat.evaluate(suite, agent=agent, k=1, db=db, concurrency=1, model="", timeout=0.5)
    return [(r.status, r.error_type, r.error_message) for r in done.runs()]


def test_a_deadline_during_the_look_for_answers_is_the_looks_error(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """A look for answers (bounded at 10 s at --isolation namespace) counts against the
    run's --timeout; a run whose deadline came during it was errored `timeout`, which
    reads as the agent's. Now `isolation`, naming the look and the fix."""
    suite = suite_without_model(writer)

    async def looking(input: Any, env: Any, ctx: Any) -> str:
        await in_time(time.sleep, 2.0)  # the look, as CommandAgent makes it, a slow one
        return "started"

    ((status, kind, message),) = _statuses(suite, looking, tmp_path / "a.db")
    assert (status, kind) == ("errored", "isolation"), message
    assert message is not None and "--timeout ended during its look for answers" in message


def test_a_deadline_in_the_agents_own_time_is_still_a_timeout(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """The control: the look done, the agent itself too slow."""
    suite = suite_without_model(writer)

    async def slow(input: Any, env: Any, ctx: Any) -> str:
        await in_time(time.sleep, 0.01)
        await asyncio.sleep(2.0)
        return "late"

    ((status, kind, message),) = _statuses(suite, slow, tmp_path / "b.db")
    assert (status, kind) == ("errored", "timeout"), message
