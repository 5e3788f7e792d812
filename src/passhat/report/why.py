"""Why a case's runs differ, for a report's case section: the divergence tree of its
runs' turns and the evidence behind each item (`passhat.divergence`), read from the
whole runs of the case and, for the evidence, the suite's set scorers and the case.

The suite is read from where the experiment says it was run (once per report); when
it cannot be read (moved, an imported log), the tree is still shown and the evidence
says why it is missing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.divergence import (
    Branch,
    ItemEvidence,
    SetSpec,
    divergence_tree,
    item_evidence,
    turns,
)
from passhat.errors import PasshatError
from passhat.records import ExperimentRecord, RunRecord

if TYPE_CHECKING:
    from passhat.suite import Case, CaseReader, Suite

LoadCase = Callable[[str], Sequence[RunRecord]]
"""The whole runs of one case (e.g. `Store.runs(id, cases=[case])`)."""

EXPLAINED_RUNS = 20_000
"""Experiments up to this many runs get the why section by default (`report --why`
asks for it past them): each listed case's whole runs are read again for it, which
made the terminal report of 100,000 runs 1.3-1.5x slower and its HTML page 1.2x."""


def explain_by_default(runs: int) -> bool:
    """Whether a report of `runs` runs shows why its runs differ unless told."""
    return runs <= EXPLAINED_RUNS


RUNS_LIMIT = 200
"""Runs of a case the divergence is read over, at most (the first by index)."""


@dataclass(frozen=True)
class CaseWhy:
    """What a case section shows of why its runs differ."""

    case: str
    tree: Branch | None
    """None when no run of the case holds a transcript."""
    no_transcript: tuple[int, ...]
    """Recorded runs that hold no transcript."""
    evidence: tuple[ItemEvidence, ...] = ()
    notes: tuple[Problem, ...] = field(default_factory=tuple)
    """Why the evidence is missing or may be off: a label key of `passhat.report.i18n`
    and its values."""


def set_specs(scorers: Sequence[Any]) -> list[SetSpec]:
    """The set scorers (exact_set, subset, superset) among a suite's scorer specs, as
    evidence reads them."""
    from passhat.scoring import item_string
    from passhat.suite import ExactSetSpec

    specs = []
    for spec in scorers:
        if isinstance(spec, ExactSetSpec):
            template = spec.item

            def name(value: Any, template: str | None = template) -> str:
                return item_string(value, template)

            label = f"{spec.kind} {spec.path}"
            specs.append(SetSpec(label, spec.path, name, texts=template is None))
    return specs


FULL_LOAD_CASES = 500
"""A case not in `cases/<id>.yaml` is looked for by loading the whole suite, when its
cases folder holds at most this many files (a whole load of 10,000 takes seconds)."""

Problem = tuple[str, dict[str, str]]
"""A label key of `passhat.report.i18n` and its values."""


class Explainer:
    """`CaseWhy` of any case of one experiment. For the evidence it reads suite.yaml's
    scorers and the case's own file (`load_case_and_scorers`), not the whole suite."""

    def __init__(self, experiment: ExperimentRecord, load: LoadCase) -> None:
        self.experiment = experiment
        self.load = load
        self._reader: CaseReader | Problem | None = None
        self._specs: list[SetSpec] = []
        self._whole: Suite | None = None
        self._tried_whole = False

    def _read(self) -> CaseReader | Problem:
        """suite.yaml's scorers, read once; or why they cannot be."""
        if self._reader is None:
            e = self.experiment
            if e.kind in ("imported", "audited"):
                self._reader = ("ev_not_run_here", {"ref": e.name or e.id, "kind": e.kind})
                return self._reader
            from passhat.suite import CaseReader

            try:
                self._reader = CaseReader(e.suite_path)
                self._specs = set_specs(self._reader.scorers)
            except (PasshatError, OSError) as error:
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                self._reader = ("ev_no_suite", {"path": e.suite_path, "reason": first[:200]})
        return self._reader

    def _case(self, case: str) -> tuple[list[SetSpec], Case | None, Problem | None]:
        """The set scorers and the case, or why not."""
        reader = self._read()
        if isinstance(reader, tuple):
            return [], None, reader
        found = reader.case(case) or self._from_whole(case)
        if found is None:
            return [], None, ("ev_no_case", {"path": self.experiment.suite_path, "case": case})
        return self._specs, found, None

    def _from_whole(self, case: str) -> Case | None:
        if not self._tried_whole:
            self._tried_whole = True
            from passhat.suite import CASES_DIR, load_suite

            folder = Path(self.experiment.suite_path) / CASES_DIR
            try:
                with os.scandir(folder) as entries:
                    small = sum(1 for _ in entries) <= FULL_LOAD_CASES
                self._whole = load_suite(self.experiment.suite_path) if small else None
            except (PasshatError, OSError):
                self._whole = None
        if self._whole is None:
            return None
        try:
            return self._whole.case(case)
        except PasshatError:
            return None

    def __call__(self, case: str) -> CaseWhy:
        runs = sorted(self.load(case), key=lambda r: r.run_index)[:RUNS_LIMIT]
        return self.explain(case, runs)

    def explain(self, case: str, runs: Sequence[RunRecord]) -> CaseWhy:
        keys = {r.run_index: [t.key for t in turns(r.transcript)] for r in runs if r.transcript}
        bare = tuple(r.run_index for r in runs if not r.transcript)
        tree = divergence_tree(keys) if keys else None
        if not any(r.graded_items for r in runs):
            return CaseWhy(case, tree, bare)
        specs, found, problem = self._case(case)
        if found is None:
            return CaseWhy(case, tree, bare, (), (problem,) if problem else ())
        notes: list[Problem] = []
        if any(r.case_hash != found.hash for r in runs):
            notes.append(("ev_case_changed", {"case": case}))
        evidence = item_evidence(case, runs, specs, goal=found.goal, case_input=found.input)
        return CaseWhy(case, tree, bare, tuple(evidence), tuple(notes))
