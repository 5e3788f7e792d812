"""Records for report tests: an experiment whose ids, names and hashes say nothing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from passhat.records import ExperimentRecord


def experiment_record(case_ids: Iterable[str], k: int, **changes: Any) -> ExperimentRecord:
    """Experiment `e1` of `case_ids` × `k` runs; `changes` sets any other field."""
    fields: dict[str, Any] = {
        "id": "e1",
        "name": None,
        "created_at": "2026-01-01T00:00:00Z",
        "suite_name": "s",
        "suite_path": "/x",
        "suite_hash": "h",
        "agent": "a",
        "model": "m",
        "model_config": {},
        "params": {},
        "prompt_version": None,
        "k_requested": k,
        "seed": 1,
        "harness_version": "0",
        "fingerprint": "f",
        "case_ids": tuple(case_ids),
    }
    return ExperimentRecord(**(fields | changes))
