"""A run read from another harness made into passhat's record: every reader decides
one `Outcome` per run (why it cannot be graded, or its scorer's detail) and
`imported_run` makes the status, error and score fields from it the same way."""

from __future__ import annotations

from typing import Any

from passhat.accounting import Status
from passhat.records import RunRecord

Outcome = tuple[str, str] | dict[str, Any]
"""What a reader made of one run: (error type, message) for a run it cannot grade, or
its scorer's detail, whose `passed` is the verdict."""


def imported_run(
    experiment_id: str,
    case_id: str,
    run_index: int,
    case_hash: str,
    outcome: Outcome,
    **fields: Any,
) -> RunRecord:
    """One run read from another harness: errored with its reason, or passed or failed
    with its scorer's detail; `fields` are the rest of the record (state, tokens...)."""
    if isinstance(outcome, tuple):
        return RunRecord(
            experiment_id,
            case_id,
            run_index,
            case_hash,
            "errored",
            error_type=outcome[0],
            error_message=outcome[1],
            **fields,
        )
    status: Status = "passed" if outcome["passed"] else "failed"
    return RunRecord(
        experiment_id, case_id, run_index, case_hash, status, score=[outcome], **fields
    )
