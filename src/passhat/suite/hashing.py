"""What a suite's and a case's hashes cover: SHA-256 over canonical JSON (sorted keys, no
whitespace) of the content as suite.yaml and the case file would write it, so key
order, YAML formatting and comments never change them; any change of content does.
A scorer file beside suite.yaml is covered by the hash of its bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from passhat.plain import named, sha256_json
from passhat.suite.model import Case, ScorerSpec, SuiteDefaults


def case_hash(input: Any, fixtures: dict[str, list[dict[str, Any]]], goal: Any) -> str:
    """A case's hash: its input, fixtures and goal."""
    return sha256_json({"input": input, "fixtures": fixtures, "goal": goal})


def suite_hash(
    head: Any,
    defaults: SuiteDefaults,
    cases: Sequence[Case],
    scorer_files: dict[str, str],
    environment_config: dict[str, Any] | None,
) -> str:
    """A suite's hash (`head`: suite.yaml as its schema parsed it): suite.yaml's content (defaults filled in, the `tools`
    environment's declaration included), every case id with its hash, and the hashes of
    the scorer files."""
    content = {
        "suite": {
            "name": head.name,
            "description": head.description,
            "environment": head.environment,
            "labels": list(head.labels),
            "defaults": _defaults_dict(defaults),
        },
        "cases": {c.id: c.hash for c in cases},
        "scorer_files": scorer_files,
    }
    if environment_config:
        content["environment_config"] = environment_config
    return sha256_json(content)


def scorer_file_hash(ref: str, root: Path) -> str | None:
    """The SHA-256 of a custom scorer's file beside suite.yaml (None: a module's scorer)."""
    module = ref.partition(":")[0]
    source = (root / module) if module.endswith(".py") else None
    return None if source is None else hashlib.sha256(source.read_bytes()).hexdigest()


def _defaults_dict(defaults: SuiteDefaults) -> dict[str, Any]:
    return {
        **named(defaults, ("agent", "model", "k", "params", "max_turns")),
        "scorers": [spec_dict(s) for s in defaults.scorers],
    }


def spec_dict(spec: ScorerSpec) -> dict[str, Any]:
    """A scorer spec as suite.yaml writes it (for hashing and display): its kind keyed
    to its first field, its other fields beside (tuples as lists)."""
    fields = dataclasses.fields(spec)
    names = [spec.kind, *(f.name for f in fields[1:])]
    values = [getattr(spec, f.name) for f in fields]
    return {n: list(v) if isinstance(v, tuple) else v for n, v in zip(names, values, strict=True)}
