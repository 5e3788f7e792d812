"""Why a case's runs differ, for a report's case section: the divergence tree of its
runs' turns and the evidence behind each item (`passhat.divergence`), read from the
whole runs of the case and, for the evidence, the suite's set scorers and the case.

The suite is read from where the experiment says it was run (once per report); when
it cannot be read (moved, an imported log), the tree is still shown and the evidence
says why it is missing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from shlex import quote
from typing import TYPE_CHECKING, Any

from passhat.errors import PasshatError
from passhat.records import ExperimentRecord, RunRecord

if TYPE_CHECKING:
    from passhat.divergence import Branch, Graded, ItemEvidence, SetSpec
    from passhat.signatures import Signature, Why
    from passhat.suite import Case, CaseReader

LoadCase = Callable[[str], Sequence[RunRecord]]
"""The whole runs of one case (e.g. `Store.runs(id, cases=[case])`)."""

EXPLAINED_RUNS = 20_000
"""Experiments up to this many runs get the why section by default (`report --why`
asks for it past them): each listed case's whole runs are read again for it, which
made the terminal report of 100,000 runs 1.3-1.5x slower and its HTML page 1.2x."""


def explain_by_default(runs: int) -> bool:
    """Whether a report of `runs` runs shows why its runs differ unless told."""
    return runs <= EXPLAINED_RUNS


SIGNATURES_IN_REPORT = 5_000
"""Experiments up to this many runs get the failure signatures in their reports (about
a tenth of a second per 1,000 runs on top of the report); `passhat why` past them."""

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
    basis: str = "turns"
    """What the tree's steps are (`passhat.divergence.BASES`): turns, tool calls, or
    outputs (then there is no tree: each run is one step)."""
    statuses: Mapping[int, str] = field(default_factory=dict)
    """Run -> passed / failed / errored, for the branches' verdicts."""
    graded: tuple[Graded, ...] = ()
    """Runs that did the same and were graded differently."""


def set_specs(scorers: Sequence[Any]) -> list[SetSpec]:
    """The set scorers (exact_set, subset, superset) among a suite's scorer specs, as
    evidence reads them."""
    from passhat.divergence import SetSpec
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
"""A case not in `cases/<id>.yaml` is looked for in every case file, when its cases
folder holds at most this many files (reading 10,000 takes seconds). Read as
`CaseReader` reads one: never a whole `load_suite`, which imports the suite's
environment and scorers (code a store someone else made could name)."""

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
        self._whole: dict[str, Case] | None = None
        self._tried_whole = False

    def overview(self, runs: Sequence[Any]) -> Why | None:
        """The experiment's failure signatures from its run summaries (`passhat why`
        with `--summaries-only`: what a report can afford), for a report's section;
        None past `SIGNATURES_IN_REPORT` runs."""
        from passhat.signatures import explain

        if len(runs) > SIGNATURES_IN_REPORT:
            return None
        return explain(self.experiment, runs, None)

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
            from passhat.suite import CASES_DIR

            folder = Path(self.experiment.suite_path) / CASES_DIR
            reader = self._read()
            try:
                with os.scandir(folder) as entries:
                    small = sum(1 for _ in entries) <= FULL_LOAD_CASES
                if small and not isinstance(reader, tuple):
                    self._whole = reader.every_case()
            except (PasshatError, OSError):
                self._whole = None
        return None if self._whole is None else self._whole.get(case)

    def __call__(self, case: str) -> CaseWhy:
        runs = sorted(self.load(case), key=lambda r: r.run_index)[:RUNS_LIMIT]
        return self.explain(case, runs)

    def explain(self, case: str, runs: Sequence[RunRecord]) -> CaseWhy:
        # the divergence modules (8 ms) only when a case is explained: a report of more
        # runs than are explained by default imports this module for the threshold
        from passhat.divergence import (
            case_steps,
            divergence_tree,
            graded_differently,
            item_evidence,
        )

        basis, keys = case_steps(runs)
        bare = tuple(r.run_index for r in runs if not r.transcript)
        tree = divergence_tree(keys) if keys and basis != "outputs" else None
        graded = tuple(graded_differently(divergence_tree(keys), runs)) if keys else ()
        statuses = {r.run_index: str(r.status) for r in runs}
        base = CaseWhy(case, tree, bare, basis=basis, statuses=statuses, graded=graded)
        if not any(r.graded_items for r in runs):
            return base
        specs, found, problem = self._case(case)
        if found is None:
            return replace(base, notes=(problem,) if problem else ())
        notes: list[Problem] = []
        if any(r.case_hash != found.hash for r in runs):
            notes.append(("ev_case_changed", {"case": case}))
        evidence = item_evidence(case, runs, specs, goal=found.goal, case_input=found.input)
        return replace(base, evidence=tuple(evidence), notes=tuple(notes))


# ------------------------------------------------------------------ signatures


def runs_phrase(feature: str) -> str:
    """`runs that did not call get_bookings`, `runs with more tokens than ...`."""
    head, sep, value = feature.partition(" = ")
    if sep and head == "at the first divergence":
        return f"runs that, at the first divergence, {value}"
    if sep:
        return f"runs whose {head} is {value}"
    if feature.startswith(("called ", "did not call ")):
        return f"runs that {feature}"
    if feature.startswith(("more ", "no more ")):
        return f"runs with {feature}"
    return f"runs where {feature}"


def outcome_name(outcome: str) -> str:
    return "pass" if outcome == "pass" else f"`{outcome}`"


def _number(x: float) -> str:
    if math.isinf(x):
        return "∞"
    return f"{x:.2g}" if x < 10 else f"{x:.0f}"


def signature_sentence(s: Signature, adjust: str) -> str:
    """*`R3` missed in 6 of 6 runs that did not call get_bookings, found in 9 of 9 other
    runs, across 2 cases (within-case OR 100 [4.6, 2200], q = 0.0004)*."""
    t = s.test
    found = t.runs_without - t.missed_without
    miss, hit = ("failed", "passed") if t.outcome == "pass" else ("missed", "found")
    head = "" if t.outcome == "pass" else outcome_name(t.outcome) + " "
    q_name = "q" if adjust == "bh" else "Holm p"
    return (
        f"{head}{miss} in {t.missed_with} of {t.runs_with} {runs_phrase(t.feature)}, "
        f"{hit} in {found} of {t.runs_without} other runs, across "
        f"{t.cases} case{'s' if t.cases != 1 else ''} (within-case OR {_number(t.odds_ratio)} "
        f"[{_number(t.low)}, {_number(t.high)}], {q_name} = {s.q:.2g})"
    )


def diff_command(ref: str, pair: tuple[str, int, int]) -> str:
    case, a, b = pair
    return f"passhat diff {ref} {quote(case)} {a} {b}"


def why_dict(why: Why, ref: str) -> dict[str, Any]:
    """`passhat why --json`."""
    from passhat.stats import CORRECTIONS

    return {
        "experiment": why.experiment,
        "runs": why.runs,
        "cases": why.cases,
        "adjust": CORRECTIONS[why.adjust],
        "alpha": why.alpha,
        "tests": len(why.tests),
        "whole_runs": why.whole_runs,
        "too_few": why.too_few,
        "signatures": [
            {
                "outcome": s.test.outcome,
                "feature": s.test.feature,
                "aliases": list(s.aliases),
                "sentence": signature_sentence(s, why.adjust),
                "missed_with": s.test.missed_with,
                "runs_with": s.test.runs_with,
                "missed_without": s.test.missed_without,
                "runs_without": s.test.runs_without,
                "cases": s.test.cases,
                "odds_ratio": _finite(s.test.odds_ratio),
                "interval": [_finite(s.test.low), _finite(s.test.high)],
                "p": s.test.p,
                "q": s.q,
                "p_permutation": s.p_permutation,
                "method": s.test.method,
                "runs": [{"case": c, "run": r} for c, r in s.test.runs[:RUNS_SHOWN_JSON]],
                "runs_total": len(s.test.runs),
                "pairs": [
                    {"case": c, "missed": a, "found": b, "command": diff_command(ref, (c, a, b))}
                    for c, a, b in s.test.pairs
                ],
            }
            for s in why.signatures
        ],
        "pairs": [
            {**p, "command": diff_command(ref, (p["case"], p["missed"], p["found"]))}
            for p in why.pairs
        ],
    }


RUNS_SHOWN_JSON = 1000
"""Runs behind one signature listed in --json (`runs_total` counts them all)."""


def _finite(x: float) -> float | None:
    return None if math.isinf(x) or math.isnan(x) else x


def why_lines(why: Why, ref: str, limit: int | None = None) -> list[tuple[str, str]]:
    """`passhat why` as (style, line) pairs: the signatures, capped at `limit`, each with
    the `passhat diff` command of one pair; or why there are none."""
    from passhat.stats import CORRECTIONS

    out: list[tuple[str, str]] = []
    head = (
        f"why · {why.experiment}: {why.runs} counted runs of {why.cases} "
        f"case{'s' if why.cases != 1 else ''}, {len(why.tests)} tests "
        f"({CORRECTIONS[why.adjust]}, level {why.alpha:g})"
    )
    out.append(("bold", head))
    if why.too_few:
        out.append(
            (
                "yellow",
                "too few runs for a signature: no case's runs can show a feature going "
                "with a miss at this level (a case needs runs that differ in both)",
            )
        )
        for p in why.pairs:
            what = "failed" if p["outcome"] == "pass" else f"{outcome_name(p['outcome'])} missed"
            line = f"  {p['case']}: {what} in run {p['missed']}, not in run {p['found']}"
            out.append(
                (
                    "",
                    line
                    + pair_words(p)
                    + ": "
                    + diff_command(ref, (p["case"], p["missed"], p["found"])),
                )
            )
        return out
    if not why.signatures:
        out.append(("green", "no signature stands: no feature goes with a miss at this level"))
    shown = why.signatures if limit is None else why.signatures[:limit]
    for s in shown:
        out.append(("", "• " + signature_sentence(s, why.adjust)))
        if s.aliases:
            out.append(("dim", "    the same runs as: " + "; ".join(s.aliases[:4])))
        if s.test.pairs:
            out.append(("dim", "    e.g. " + diff_command(ref, s.test.pairs[0])))
        perm = (
            f"permutation p {s.p_permutation:.2g}"
            if s.p_permutation is not None
            else "no permutation check (too many runs to permute: the CMH law is the check)"
        )
        out.append(("dim", f"    {s.test.method} p {s.test.p:.2g}; {perm}"))
    if limit is not None and len(why.signatures) > limit:
        out.append(("dim", f"… {len(why.signatures) - limit} more: passhat why {ref}"))
    if not why.whole_runs:
        out.append(
            (
                "dim",
                "features from the run summaries only (tools, calls, errors, tokens); "
                "passhat why --whole-runs adds arguments, turns and the first divergence",
            )
        )
    return out


SIGNATURES_SHOWN = 5
"""Signatures a report shows (the rest: `passhat why`)."""


def signatures_lines(why: Why, ref: str) -> list[tuple[str, str]]:
    """A report's section: the first `SIGNATURES_SHOWN` signatures, pointing to the
    command; nothing when the data are too few or none stands."""
    if why.too_few or not why.signatures:
        return []
    lines = why_lines(why, ref, limit=SIGNATURES_SHOWN)
    return [*lines, ("dim", f"all of them, with the runs behind each: passhat why {ref}")]


def pair_words(p: Mapping[str, Any]) -> str:
    """`; run 2 called glossary 0 times, run 1 1 time; they part at call #1`."""
    out = ""
    for tool, (missed, found) in list(p.get("tools", {}).items())[:3]:
        out += (
            f"; run {p['missed']} called {tool} {missed} time{'s' if missed != 1 else ''}, "
            f"run {p['found']} {found}"
        )
    if p.get("parted_at") is not None:
        step = "turn" if p["basis"] == "turns" else "call #"
        out += f"; they part at {step}{' ' if step == 'turn' else ''}{p['parted_at']}"
    return out
