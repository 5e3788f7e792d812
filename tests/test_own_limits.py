"""passhat's own limits looked at around each command run at `process` (agents/own_limits.py):
the runs in flight when one fell are charged, the limit set back or no run started. The
attack itself, an agent's prlimit(2) on passhat, is tests/test_attack55_blame.py."""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Iterator

import pytest

from passhat.agents import own_limits
from passhat.agents.streams import AgentProcessError
from passhat.errors import StopRuns

NOFILE = resource.RLIMIT_NOFILE


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """A state of its own (limits taken at this test's first run), this process's open-file
    limit put back after."""
    monkeypatch.setattr(own_limits, "_STATE", own_limits._State())
    taken = resource.getrlimit(NOFILE)
    yield taken
    resource.setrlimit(NOFILE, taken)


def _lower() -> None:
    soft, hard = resource.getrlimit(NOFILE)
    resource.setrlimit(NOFILE, (min(soft, 4096) - 1, hard))


def test_a_soft_limit_lowered_during_a_run_is_charged_to_it_and_set_back(
    fresh: tuple[int, int],
) -> None:
    with pytest.raises(AgentProcessError) as raised, own_limits.watched():
        _lower()
    assert raised.value.error_type == "agent_limits"
    assert "RLIMIT_NOFILE" in str(raised.value) and "while this run's agent ran" in str(
        raised.value
    )
    assert resource.getrlimit(NOFILE) == fresh
    with own_limits.watched():  # the next run is not charged
        pass


def test_every_run_in_flight_when_a_limit_fell_is_charged() -> None:
    a = pytest.raises(AgentProcessError)
    with a, own_limits.watched(), pytest.raises(AgentProcessError), own_limits.watched():
        _lower()  # in run B, run A in flight: both charged
    assert a.excinfo is not None and a.excinfo.value.error_type == "agent_limits"


def test_a_run_that_failed_otherwise_is_charged_all_the_same() -> None:
    with pytest.raises(AgentProcessError) as raised, own_limits.watched():
        _lower()
        raise OSError(24, "Too many open files")
    assert isinstance(raised.value.__context__, OSError)


def test_a_stop_goes_on_as_a_stop_not_a_charge(fresh: tuple[int, int]) -> None:
    with pytest.raises(asyncio.CancelledError), own_limits.watched():
        _lower()
        raise asyncio.CancelledError
    assert resource.getrlimit(NOFILE) == fresh


def test_a_limit_that_cannot_be_set_back_starts_no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AgentProcessError), own_limits.watched():
        monkeypatch.setattr(own_limits, "_set_back", lambda name, limits: False)
        _lower()
    stop = pytest.raises(StopRuns, match=r"RLIMIT_NOFILE\) fell from .*no more runs were started")
    with stop, own_limits.watched():
        pytest.fail("a run started")


def test_at_namespace_nothing_is_looked_at() -> None:
    with own_limits.watched(False):
        _lower()
    assert own_limits._STATE.taken is None


def test_an_experiments_end_lets_the_limits_go_so_a_callers_own_change_is_the_next_start(
    fresh: tuple[int, int],
) -> None:
    """A library caller lowering its own open-file limit between two experiments (say, to
    run the second with fewer descriptors) is not an agent's doing: the second takes the
    limit as it finds it (before, the first's was set back, its runs charged)."""
    with own_limits.watched():
        pass
    own_limits.forget()  # the experiment's end (evaluation/running.py)
    _lower()
    mine = resource.getrlimit(NOFILE)
    with own_limits.watched():
        pass
    assert resource.getrlimit(NOFILE) == mine
