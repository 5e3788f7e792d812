"""The declared run count: the manifest a result folder keeps (`benchmark.json`,
`metadata.json`, ...), its run-count key (`runs_per_configuration`, `k`, `epochs`, ...,
top level or one level down) and the configurations it plans; a count above MAX_CLAIM
refused in one line, a manifest that is a FIFO, a device or a folder named as such, a key
written twice in it refused (a JSON reader keeps the last).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.errors import InputError
from passhat.sources import file_sha256
from passhat.sources._files import MAX_SMALL_BYTES, parse_json, read_bytes, regular_size
from passhat.sources.claims import MAX_CLAIM

MANIFESTS = ("benchmark.json", "metadata.json", "manifest.json", "experiment.json")
"""Files read for the declared run count, first found wins."""
K_KEYS = (
    "runs_per_configuration",
    "runs_per_config",
    "runs_per_case",
    "k",
    "epochs",
    "num_trials",
    "n_trials",
    "trials",
    "n_attempts",
    "num_attempts",
    "n_runs",
    "num_runs",
    "repeats",
)
"""Manifest keys that declare runs per configuration (top level or one level down)."""
CONFIG_KEYS = ("configurations", "groups", "cases", "tasks")
"""Manifest keys listing the configurations that were planned."""


@dataclass(frozen=True)
class Declared:
    """The run count a manifest declares."""

    k: int
    source: str
    """Where it was read, e.g. `benchmark.json: runs_per_configuration`."""


@dataclass(frozen=True)
class Manifest:
    """What the manifest says: declared k and the planned configurations."""

    path: Path | None
    declared: Declared | None
    configurations: tuple[str, ...] = ()
    model: str | None = None
    sha256: str | None = None


def read_manifest(root: Path, name: str | None = None) -> Manifest:
    """The first manifest found in `root` (or the one named); none is not an error."""
    candidates = [name] if name else list(MANIFESTS)
    for candidate in candidates:
        path = root / candidate
        if not path.is_file():
            if name and not path.exists():
                raise InputError(f"{path}: no such manifest; give --manifest a file in {root}")
            if path.exists() or path.is_symlink():
                regular_size(path, "manifest")  # a FIFO, a device or a folder: named, not skipped
            continue
        return parse_manifest(path, _read_json(path, "manifest"))
    return Manifest(path=None, declared=None)


def _read_json(path: Path, what: str) -> Any:
    fix = "fix it or give --declared-k"
    raw = read_bytes(path, what, MAX_SMALL_BYTES)
    value = parse_json(raw, path, what, fix)
    twice = _key_twice(raw)
    if twice is not None:  # JSON readers keep the last: the audit declared what the eye skips
        raise InputError(f"{path}: the {what} writes the key {twice!r} twice in one object; {fix}")
    return value


def _key_twice(raw: bytes) -> str | None:
    """The first key written twice in one object of `raw` (JSON already read), or None."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        if not found and len(set(keys)) < len(keys):
            found.append(next(k for i, k in enumerate(keys) if k in keys[:i]))
        return dict(items)

    json.loads(raw, object_pairs_hook=pairs)
    return found[0] if found else None


def _big(value: int) -> str:
    """An integer for a message: a number of 30 digits or more by its length only."""
    if value.bit_length() > 96:
        return f"a number of about {int(value.bit_length() * 0.30103):,} digits"
    return f"{value:,}"


def parse_manifest(path: Path, data: Any) -> Manifest:
    """Declared k, planned configurations and model from a manifest's JSON."""
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: the manifest is not a JSON object; write e.g. "
            '{"runs_per_configuration": 3} or give --declared-k'
        )
    declared = None
    for where, mapping in [("", data)] + [
        (f"{key}.", value) for key, value in data.items() if isinstance(value, dict)
    ]:
        for key in K_KEYS:
            if key in mapping:
                value = mapping[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise InputError(
                        f"{path}: field {where}{key} is {json.dumps(value)[:60]}; "
                        "a run count must be a whole number >= 1 (or give --declared-k)"
                    )
                if value > MAX_CLAIM:
                    raise InputError(
                        f"{path}: field {where}{key} is {_big(value)}, more than {MAX_CLAIM:,} "
                        "runs per configuration; correct it, or give --declared-k"
                    )
                declared = Declared(value, f"{path.name}: {where}{key}")
                break
        if declared:
            break
    configurations: list[str] = []
    for key in CONFIG_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    configurations.append(item)
                elif isinstance(item, dict):
                    name = item.get("name") or item.get("id")
                    if isinstance(name, str):
                        configurations.append(name)
            break
    model = data.get("model")
    return Manifest(
        path=path,
        declared=declared,
        configurations=tuple(dict.fromkeys(configurations)),
        model=model if isinstance(model, str) else None,
        sha256=file_sha256(path),
    )
