"""A run's limits: model turns (--max-turns) and tokens (--token-budget).

They are held at the model boundary, `RunContext.generate`, which every agent's model
call goes through: an in-process agent's (the built-in loop's and a user's) and a
command agent's, whose proxy answers through it. A call past a limit never reaches
the provider; it raises `RunLimitError` (the proxy answers it with HTTP 403).

Running out of turns or tokens is the agent's behaviour, not the infrastructure's:
the run ends there and is graded on the state it reached, marked `limit` (its
`error_type`, beside a `passed` or `failed` status). Only what the agent cannot
help (a crash of the environment, the model failing after retries, the wall-clock
`--timeout`) leaves a run errored, without a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.records import ReportRun

LIMIT = "limit"
"""The `error_type` of a counted run that a limit stopped (its status is passed or failed)."""


class RunLimitError(Exception):
    """The run asked for a model call past one of the experiment's limits."""

    error_type = LIMIT


def past_limit(turns: int, spent: int, max_turns: int, budget: int | None) -> str | None:
    """Why one more model call would pass the run's limits (None when it may go).
    A budget is checked before each call, so the call that crosses it is the last one."""
    if turns >= max_turns:
        return (
            f"the agent asked for model turn {turns + 1}, past the run's limit of "
            f"{max_turns} (--max-turns {max_turns}); the call did not reach the model"
        )
    if budget is not None and spent >= budget:
        return (
            f"the run spent {spent:,} tokens, its budget is {budget:,} (--token-budget "
            f"{budget}); call {turns + 1} did not reach the model"
        )
    return None


def hit_limit(status: str, error_type: str | None) -> bool:
    """A counted run that a limit stopped."""
    return status != "errored" and error_type == LIMIT


def limit_runs(runs: Iterable[ReportRun]) -> dict[str, list[int]]:
    """Per case (in the order runs come), the counted runs a limit stopped."""
    out: dict[str, list[int]] = {}
    for r in runs:
        if r.error_type == LIMIT and r.status != "errored":
            out.setdefault(r.case_id, []).append(r.run_index)
    return out


def limit_dicts(runs: Iterable[ReportRun]) -> list[dict[str, Any]]:
    """`report --json`'s `limit`: each case with runs a limit stopped, how many and which."""
    return limited_dicts(limit_runs(runs))


def limited_dicts(limited: Mapping[str, list[int]]) -> list[dict[str, Any]]:
    """`limit_dicts` of the runs a limit stopped, per case (`limit_runs`)."""
    return [
        {"case": case, "runs": len(indices), "indices": indices}
        for case, indices in limited.items()
    ]
