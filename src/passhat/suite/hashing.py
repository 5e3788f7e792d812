"""What a suite's hash covers, as suite.yaml would write it: the defaults and scorer specs
as plain dicts (the hash is SHA-256 over their canonical JSON, so key order, YAML
formatting and comments never change it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from passhat.suite.model import (
    EqualsSpec,
    ExactSetSpec,
    JudgeSpec,
    MatchesSpec,
    PresentSpec,
    ScorerSpec,
    SuiteDefaults,
)


def _scorer_file(ref: str, root: Path) -> Path | None:
    module = ref.partition(":")[0]
    return (root / module) if module.endswith(".py") else None


def _defaults_dict(defaults: SuiteDefaults) -> dict[str, Any]:
    return {
        "agent": defaults.agent,
        "model": defaults.model,
        "k": defaults.k,
        "params": defaults.params,
        "max_turns": defaults.max_turns,
        "scorers": [spec_dict(s) for s in defaults.scorers],
    }


def spec_dict(spec: ScorerSpec) -> dict[str, Any]:
    """A scorer spec as suite.yaml writes it (for hashing and display)."""
    if isinstance(spec, ExactSetSpec):
        return {spec.kind: spec.path, "item": spec.item}
    if isinstance(spec, EqualsSpec):
        return {"equals": spec.path}
    if isinstance(spec, MatchesSpec):
        return {"matches": spec.path, "pattern": spec.pattern}
    if isinstance(spec, PresentSpec):
        return {"present": list(spec.paths)}
    if isinstance(spec, JudgeSpec):
        return {
            "judge": spec.rubric,
            "model": spec.model,
            "paths": list(spec.paths),
            "params": spec.params,
            "base_url": spec.base_url,
        }
    return {"custom": spec.ref, "params": spec.params}
