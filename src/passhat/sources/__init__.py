"""Runs passhat did not make: other harnesses' logs and result folders.

Each reader turns what it reads into the records passhat keeps for its own runs
(`ExperimentRecord` + `RunRecord`s), so `report`, `compare`, `export` and
`metrics` give them the same accounting: requested k, completed, counted,
errored and missing runs by index. A reader never parses a format it can read
through its owner's library (Inspect logs go through `inspect_ai.log`), and
never drops a run it cannot grade: that run is errored, with its reason.

    inspect_log.py  Inspect AI eval logs (.eval / .json), one run per sample × epoch
    tau2.py         τ²-bench results (results.json), one run per simulation (trial)
    harbor.py       Harbor jobs, one run per trial folder
    audit/          a folder of run directories no harness owns, with its manifest
                    (manifest, walk, grade, plan, summary)
    claims/         the run counts a write-up claims, read the way people write them
    _files.py       foreign files read within bounds (size, depth, no FIFO)
    _stream.py      a large file read twice as a stream: runs, then transcripts as stored
    _runs.py        a run's outcome (why it cannot be graded, or its verdict) made a record
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord

__all__ = [
    "Figure",
    "Imported",
    "file_sha256",
    "import_digest",
    "new_id",
    "now",
    "prior_import",
    "short_hash",
    "source_figures_line",
    "source_line",
    "with_figures",
]


@dataclass(frozen=True)
class Figure:
    """A figure the source reported about itself, shown beside passhat's own."""

    label: str
    """What the source calls it, e.g. `Inspect accuracy (match)`."""
    value: float | None
    """The value as the source computed it (None when it has none)."""
    weighs: str
    """What it counts, in words: e.g. `samples, each the mean of its scored epochs`."""


@dataclass(frozen=True)
class Imported:
    """An experiment read from elsewhere, ready for the store."""

    experiment: ExperimentRecord
    """Kind `imported` or `audited`; `source` says where it came from."""
    runs: tuple[RunRecord, ...]
    """One per sample × epoch (or simulation, or run folder) that left a record."""
    figures: tuple[Figure, ...] = ()
    """The source's own figures, to print beside passhat's."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """What the reader had to decide (e.g. a missing trial number), one line each."""
    words: tuple[str, str, int] = ("case", "run", 0)
    """How the source names a case and a run, and its run number for run index 1 minus 1:
    ("sample", "epoch", 0) for Inspect, ("task", "trial", -1) for τ²-bench's 0-based trials."""
    stored: Callable[[], Iterable[RunRecord]] | None = None
    """For a source read as a stream: its runs read again, transcripts and all, as they
    are stored (`runs` then hold no transcript: a 300 MB file never sits in memory)."""

    def records(self) -> Iterable[RunRecord]:
        """The runs to store: `runs`, or `stored()` when the source was read as a stream."""
        return self.runs if self.stored is None else self.stored()

    def name_run(self, case: str, index: int) -> str:
        """A run as the source would name it, e.g. `sample s3, epoch 2`."""
        case_word, run_word, offset = self.words
        named = f"{case_word} {case}, {run_word} {index + offset}"
        return named if offset == 0 else f"{named} (run {index})"


def file_sha256(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes; an InputError naming the file if unreadable."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise InputError(f"{path}: cannot be read ({error.strerror})") from None
    return digest.hexdigest()


def short_hash(value: Any) -> str:
    """First 16 hex digits of the SHA-256 of a value's canonical JSON."""
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def new_id() -> str:
    """An experiment id of the store's shape (8 hex digits)."""
    return secrets.token_hex(4)


def now() -> str:
    """Creation time in the store's format."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def source_line(experiment: ExperimentRecord) -> str | None:
    """Where a run not made here came from, in one line for a report header; None for
    experiments passhat ran."""
    source = experiment.source
    if experiment.kind == "run" or not isinstance(source, dict):
        return None
    tool = source.get("tool", "?")
    if experiment.kind == "regrade":
        was = source.get("experiment_name") or source.get("experiment")
        return (
            f"regrade of experiment {was} (fingerprint {source.get('fingerprint')}; "
            f"scorers {source.get('scorer_hash')}); no agent ran"
        )
    parts = []
    for key, label in (
        ("task", "task"),
        ("inspect_version", "Inspect"),
        ("tau2_version", "tau2-bench commit"),
        ("declared", "declared k"),
        ("claimed", "claimed k"),
    ):
        if source.get(key) is not None:
            parts.append(f"{label} {source[key]}")
    if source.get("sha256"):
        parts.append(f"sha256 {str(source['sha256'])[:12]}")
    parts.append(f"from {source.get('path')}")
    return f"{experiment.kind} ({tool}): " + ", ".join(parts)


def import_digest(imported: Imported) -> str:
    """What an import holds, as a hash: the configuration (fingerprint), the source
    file's bytes, the plan and every run's case, index, attempt, status and error. The
    same input imported twice gives the same digest; a job that gained trials does not."""
    e = imported.experiment
    source = e.source or {}
    return short_hash(
        {
            "fingerprint": e.fingerprint,
            "sha256": source.get("sha256"),
            "k": e.k_requested,
            "cases": list(e.case_ids),
            "runs": sorted(
                (r.case_id, r.run_index, r.attempt, r.status, r.error_message or "")
                for r in imported.runs
            ),
        }
    )


def prior_import(imported: Imported, stored: list[ExperimentRecord]) -> ExperimentRecord | None:
    """The stored experiment this import was made from before: the same tool, source
    path and configuration (fingerprint); the latest when there are several."""
    e = imported.experiment
    source = e.source or {}
    for old in reversed(stored):
        was = old.source if isinstance(old.source, dict) else {}
        if (
            old.kind == e.kind
            and old.fingerprint == e.fingerprint
            and was.get("tool") == source.get("tool")
            and was.get("path") == source.get("path")
        ):
            return old
    return None


def with_figures(imported: Imported) -> Imported:
    """The import with the source's own figures kept in `experiment.source`, so every
    later report can show them beside passhat's."""
    if not imported.figures:
        return imported
    figures = [{"label": f.label, "value": f.value, "weighs": f.weighs} for f in imported.figures]
    source = {**(imported.experiment.source or {}), "figures": figures}
    return replace(imported, experiment=replace(imported.experiment, source=source))


def source_figures_line(experiment: ExperimentRecord) -> str | None:
    """The source's own figures, as it computed them, with what they weigh; None if none."""
    source = experiment.source
    figures = source.get("figures") if isinstance(source, dict) else None
    if not isinstance(figures, list) or not figures:
        return None
    shown = ", ".join(
        f"{f.get('label')} {f['value']:.3f}"
        if isinstance(f.get("value"), int | float)
        else str(f.get("label"))
        for f in figures
        if isinstance(f, dict)
    )
    weighs = "; ".join(dict.fromkeys(str(f.get("weighs")) for f in figures if isinstance(f, dict)))
    return f"{shown} (weighs {weighs}; passhat's pass rate weighs counted runs)"
