"""Why a case's runs differ, for a report's case section: the divergence tree of its
runs' turns and the evidence behind each item (`passhat.divergence`), read from the
whole runs of the case and, for the evidence, the suite's set scorers and the case.

The suite is read from where the experiment says it was run (once per report); when
it cannot be read (moved, an imported log), the tree is still shown and the evidence
says why it is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
    from passhat.suite import Suite

LoadCase = Callable[[str], Sequence[RunRecord]]
"""The whole runs of one case (e.g. `Store.runs(id, cases=[case])`)."""

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
    notes: tuple[tuple[str, dict[str, str]], ...] = field(default_factory=tuple)
    """Why the evidence is missing or may be off: a label key of `passhat.report.i18n`
    and its values."""


def set_specs(suite: Suite) -> list[SetSpec]:
    """The suite's set scorers (exact_set, subset, superset) as evidence reads them."""
    from passhat.scoring import item_string
    from passhat.suite import ExactSetSpec

    specs = []
    for spec in suite.defaults.scorers:
        if isinstance(spec, ExactSetSpec):
            template = spec.item

            def name(value: Any, template: str | None = template) -> str:
                return item_string(value, template)

            specs.append(SetSpec(f"{spec.kind} {spec.path}", spec.path, name))
    return specs


class Explainer:
    """`CaseWhy` of any case of one experiment; the suite is read at the first case that
    has set-scorer items."""

    def __init__(self, experiment: ExperimentRecord, load: LoadCase) -> None:
        self.experiment = experiment
        self.load = load
        self._suite: Suite | None = None
        self._suite_problem: tuple[str, dict[str, str]] | None = None
        self._read = False

    def suite(self) -> Suite | None:
        if not self._read:
            self._read = True
            e = self.experiment
            if e.kind in ("imported", "audited"):
                self._suite_problem = ("ev_not_run_here", {"ref": e.name or e.id, "kind": e.kind})
                return None
            from passhat.suite import load_suite

            try:
                self._suite = load_suite(e.suite_path)
            except (PasshatError, OSError) as error:
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                self._suite_problem = ("ev_no_suite", {"path": e.suite_path, "reason": first[:200]})
        return self._suite

    def __call__(self, case: str) -> CaseWhy:
        runs = sorted(self.load(case), key=lambda r: r.run_index)[:RUNS_LIMIT]
        return self.explain(case, runs)

    def explain(self, case: str, runs: Sequence[RunRecord]) -> CaseWhy:
        keys = {r.run_index: [t.key for t in turns(r.transcript)] for r in runs if r.transcript}
        bare = tuple(r.run_index for r in runs if not r.transcript)
        tree = divergence_tree(keys) if keys else None
        if not any(r.graded_items for r in runs):
            return CaseWhy(case, tree, bare)
        suite = self.suite()
        if suite is None:
            problem = self._suite_problem
            return CaseWhy(case, tree, bare, (), (problem,) if problem else ())
        notes: list[tuple[str, dict[str, str]]] = []
        try:
            found = suite.case(case)
        except PasshatError:
            notes.append(("ev_no_case", {"path": str(suite.path), "case": case}))
            return CaseWhy(case, tree, bare, (), tuple(notes))
        if any(r.case_hash != found.hash for r in runs):
            notes.append(("ev_case_changed", {"case": case}))
        evidence = item_evidence(
            case, runs, set_specs(suite), goal=found.goal, case_input=found.input
        )
        return CaseWhy(case, tree, bare, tuple(evidence), tuple(notes))
