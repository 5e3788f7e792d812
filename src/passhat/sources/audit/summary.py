"""The audit as others read it: `audit --json` data (SCHEMA_VERSION), the totals
and figures over graded runs, and the experiment of kind `audited` that `--into-store`
keeps (one run per run folder).
"""

from __future__ import annotations

from typing import Any

from passhat.plain import named
from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import Imported, new_id, now, short_hash
from passhat.sources.audit.plan import Audit
from passhat.sources.claims import Claim

SCHEMA_VERSION = 3
"""Version of `audit --json` (docs/audit.md); 2 added claims, totals, figures and reasons;
3 added each claim's rule, the numbers set aside, and each configuration's own claim."""


def _claim_data(claim: Claim) -> dict[str, Any]:
    return named(claim, _CLAIM_KEYS)


_CLAIM_KEYS = ("k", "source", "quote", "at_least", "scope", "rule", "attached")
"""A claim's fields in `audit --json`: all but `written` (the number as written)."""


def audit_figures(audit: Audit) -> dict[str, Any] | None:
    """The figures the text prints, counted over graded runs (None: no graded run)."""
    accounting = audit.accounting
    if not accounting.runs_counted:
        return None
    d = accounting.dataset()
    m = d.metrics
    return {
        "pass_rate": m.pass_at_1,
        "passes": m.passes,
        "graded_runs": m.runs,
        "j": m.j,
        "pass_at_j": m.pass_at_j,
        "pass_hat_j": m.pass_hat_j,
        "configurations": m.cases,
        "left_out": list(d.excluded),
    }


def audit_totals(audit: Audit) -> dict[str, int]:
    """Runs over every configuration: planned (requested), present, graded, passed,
    failed, errored (grading failed), ungraded (no grade) and missing."""
    cs = audit.configurations
    return {
        "configurations": len(cs),
        "requested": sum(c.planned for c in cs),
        "present": sum(len(c.present) for c in cs),
        "graded": sum(len(c.graded) for c in cs),
        "passed": sum(len(c.passed) for c in cs),
        "failed": sum(len(c.graded) - len(c.passed) for c in cs),
        "errored": sum(len(c.errored) for c in cs),
        "ungraded": sum(len(c.ungraded) for c in cs),
        "missing": sum(len(c.missing) for c in cs),
    }


def audit_summary(audit: Audit) -> dict[str, Any]:
    """The audit as JSON-ready data: everything the text shows (docs/audit.md)."""
    declared = audit.manifest.declared
    configurations = []
    for c in audit.configurations:
        not_graded = [
            {
                "run": i,
                "status": audit.grades[(c.configuration, i)].status,
                "source": audit.grades[(c.configuration, i)].source or None,
                "reason": audit.grades[(c.configuration, i)].message,
            }
            for i in sorted((*c.errored, *c.ungraded))
        ]
        configurations.append(
            {
                "configuration": c.configuration,
                "declared": audit.declared_k,
                "claimed": c.claim.k if c.claim else None,
                "claim_source": c.claim.source if c.claim else None,
                "planned": c.planned,
                "present": list(c.present),
                "graded": list(c.graded),
                "passed": list(c.passed),
                "failed": [i for i in c.graded if i not in set(c.passed)],
                "errored": list(c.errored),
                "ungraded": list(c.ungraded),
                "missing": list(c.missing),
                "beyond_declared": list(c.beyond_declared),
                "not_graded": not_graded,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "folder": str(audit.root),
        "manifest": str(audit.manifest.path) if audit.manifest.path else None,
        "declared": {"k": declared.k, "source": declared.source} if declared else None,
        "claimed": _claim_data(audit.claim) if audit.claim else None,
        "claims": [_claim_data(c) for c in audit.claims],
        "set_aside": [
            {"source": a.source, "quote": a.quote, "rule": a.rule} for a in audit.set_aside
        ],
        "k_plan": audit.k_plan,
        "totals": audit_totals(audit),
        "figures": audit_figures(audit),
        "configurations": configurations,
        "findings": list(audit.findings),
        "notes": list(audit.notes),
    }


def audit_experiment(audit: Audit, *, name: str | None = None) -> Imported:
    """The audit as an experiment of kind `audited`, one run per run directory."""
    from passhat import __version__

    configurations = tuple(c.configuration for c in audit.configurations)
    case_hashes = {c: short_hash({"configuration": c}) for c in configurations}
    source: dict[str, Any] = {
        "tool": "audit",
        "path": str(audit.root.resolve()),
        "manifest": str(audit.manifest.path) if audit.manifest.path else None,
        "manifest_sha256": audit.manifest.sha256,
        "declared": audit.declared_k,
        "claimed": audit.claimed_k,
        "findings": list(audit.findings),
    }
    suite_hash = short_hash({"manifest": audit.manifest.sha256, "configurations": configurations})
    model = audit.manifest.model or "unknown"
    experiment = ExperimentRecord(
        id=new_id(),
        name=name,
        created_at=now(),
        suite_name=audit.root.resolve().name,
        suite_path=str(audit.root.resolve()),
        suite_hash=suite_hash,
        agent="audit",
        model=model,
        model_config={},
        params={},
        prompt_version=None,
        k_requested=audit.k_plan,
        # a table row may plan fewer runs of one configuration than of the others
        case_k={
            c.configuration: c.planned for c in audit.configurations if c.planned < audit.k_plan
        },
        seed=0,
        harness_version=__version__,
        fingerprint=short_hash({"audit": suite_hash, "model": model}),
        case_ids=configurations,
        case_hashes=case_hashes,
        kind="audited",
        source=source,
    )
    runs = []
    for run in audit.run_dirs:
        config = run.configuration
        grade = audit.grades[(config, run.index)]
        status = "errored" if grade.status == "ungraded" else grade.status
        runs.append(
            RunRecord(
                experiment_id=experiment.id,
                case_id=config,
                run_index=run.index,
                case_hash=case_hashes[config],
                status=status,
                error_type=None
                if status != "errored"
                else ("ungraded" if grade.status == "ungraded" else "grader_error"),
                error_message=grade.message if status == "errored" else None,
                final_state={"run_dir": str(run.path.resolve())},
                score=[
                    {
                        "scorer": grade.source or "none",
                        "passed": status == "passed",
                        **grade.details,
                    }
                ]
                if status != "errored"
                else [],
            )
        )
    return Imported(experiment, tuple(runs))
