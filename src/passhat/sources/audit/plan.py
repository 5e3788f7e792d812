"""The audit proper: each configuration's plan (the largest of declared, claimed
and the highest run index present; a table row's claim counts for its own configuration
only), its runs against that plan, the findings, one line each; and `audit_folder`,
which walks, reads and grades a folder and audits what it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from passhat.accounting import Accounting, Ledger, MissingRuns, format_ranges
from passhat.errors import InputError
from passhat.plain import plural
from passhat.sources.audit.grade import Grade, check_command, grade_from_files, grade_with_command
from passhat.sources.audit.manifest import MANIFESTS, Declared, Manifest, read_manifest
from passhat.sources.audit.walk import (
    RUN_PATTERNS,
    RunDir,
    compile_patterns,
    from_zero,
    name_configurations,
    parse_layout,
    read_claims,
    scan,
    scan_layout,
)
from passhat.sources.claims import MAX_CLAIM, Claim, SetAside, governing


@dataclass(frozen=True)
class ConfigurationAudit:
    """One configuration's runs against the plan."""

    configuration: str
    present: tuple[int, ...]
    graded: tuple[int, ...]
    """Runs with a verdict (passed or failed)."""
    passed: tuple[int, ...]
    errored: tuple[int, ...]
    """Runs whose grading failed (an unreadable grade file, a grader that crashed)."""
    ungraded: tuple[int, ...]
    """Runs present with no grade at all."""
    missing: Sequence[int]
    """Run indices of the plan with no directory (a `MissingRuns`: memory follows the
    runs present, not the plan)."""
    beyond_declared: tuple[int, ...] = ()
    """Runs present with an index past the declared k."""
    planned: int = 0
    """This configuration's plan (a table row may claim more runs of it than of others)."""
    claim: Claim | None = None
    """The claim this configuration's plan follows: the largest made for every
    configuration or by a table row for this one (never another one's row)."""


@dataclass(frozen=True)
class Audit:
    """The audit of one folder."""

    root: Path
    manifest: Manifest
    claim: Claim | None
    k_plan: int
    """The largest of declared, claimed and the highest run index present."""
    configurations: tuple[ConfigurationAudit, ...]
    grades: dict[tuple[str, int], Grade]
    run_dirs: tuple[RunDir, ...]
    findings: tuple[str, ...]
    """Every discrepancy, one line each: empty when declared = claimed = present = graded."""
    accounting: Accounting
    """Requested = the plan; graded runs counted; errored and ungraded runs errored."""
    notes: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    """Every claim read, in reading order; `claim` is the one the plan follows."""
    set_aside: tuple[SetAside, ...] = ()
    """Numbers the claim reader read and set aside, each with its rule (`--explain`)."""

    @property
    def declared_k(self) -> int | None:
        return self.manifest.declared.k if self.manifest.declared else None

    @property
    def claimed_k(self) -> int | None:
        return self.claim.k if self.claim else None


def claims_by_configuration(
    claims: Sequence[Claim], names: Iterable[str]
) -> dict[str, list[Claim]]:
    """The claims each configuration's plan answers to: every claim made for all
    configurations and every one a table row makes for it; pure. A row naming no
    configuration claims for all of them."""
    names = list(names)
    planned: dict[str, object] = {n: None for n in names}
    overall: list[tuple[int, Claim]] = []
    scoped: dict[str, list[tuple[int, Claim]]] = {n: [] for n in names}
    for index, claim in enumerate(claims):
        target = _match_configuration(claim.scope, planned) if claim.scope else None
        if target is not None and target in scoped:
            scoped[target].append((index, claim))
        else:
            overall.append((index, claim))
    return {
        n: [c for _, c in sorted(overall + own, key=lambda ic: ic[0])]
        if own
        else [c for _, c in overall]
        for n, own in scoped.items()
    }


def plans(
    manifest: Manifest, claims: Sequence[Claim], names: Iterable[str], highest: int
) -> dict[str, int]:
    """Each configuration's plan: the largest of the declared count, every claim for all
    configurations, every claim a table row makes for it, and the highest run index
    present anywhere; pure."""
    floor = max(manifest.declared.k if manifest.declared else 0, highest)
    return {
        n: max([floor, *(c.k for c in own)])
        for n, own in claims_by_configuration(claims, names).items()
    }


def audit_listing(
    root: Path,
    manifest: Manifest,
    claims: Sequence[Claim],
    run_dirs: Sequence[RunDir],
    grades: dict[tuple[str, int], Grade],
    notes: Sequence[str] = (),
    unreadable: Sequence[str] = (),
) -> Audit:
    """The audit of what a folder holds; pure. `unreadable`: folders that could not be
    listed (each is a finding: what they hold cannot be counted)."""
    declared = manifest.declared.k if manifest.declared else None
    highest = max((r.index for r in run_dirs), default=0)
    by_config: dict[str, list[RunDir]] = {c: [] for c in manifest.configurations}
    for run in run_dirs:
        by_config.setdefault(_match_configuration(run.configuration, by_config), []).append(run)
    plan = plans(manifest, claims, by_config, highest)
    own_claims = claims_by_configuration(claims, by_config)
    k_plan = max(plan.values(), default=max(highest, 1))
    ledger = Ledger()
    configurations = []
    for name, runs in by_config.items():
        ledger.expect(name)
        present = tuple(sorted(r.index for r in runs))
        statuses = {i: grades[(name, i)].status for i in present}
        for index, status in statuses.items():
            ledger.add(name, index, "errored" if status == "ungraded" else status)
        configurations.append(
            ConfigurationAudit(
                configuration=name,
                present=present,
                graded=tuple(i for i in present if statuses[i] in ("passed", "failed")),
                passed=tuple(i for i in present if statuses[i] == "passed"),
                errored=tuple(i for i in present if statuses[i] == "errored"),
                ungraded=tuple(i for i in present if statuses[i] == "ungraded"),
                missing=MissingRuns(plan[name], present),
                beyond_declared=tuple(i for i in present if declared and i > declared),
                planned=plan[name],
                claim=governing(own_claims[name]),
            )
        )
    accounting = ledger.close(k_plan, plan)
    claim = governing(list(claims))
    findings = _findings(manifest, claims, configurations, k_plan)
    findings += [
        f"{folder}: cannot be read; the runs it holds cannot be counted" for folder in unreadable
    ]
    return Audit(
        root=root,
        manifest=manifest,
        claim=claim,
        k_plan=k_plan,
        configurations=tuple(configurations),
        grades=grades,
        run_dirs=tuple(run_dirs),
        findings=tuple(findings),
        accounting=accounting,
        notes=tuple(notes),
        claims=tuple(claims),
    )


def _match_configuration(found: str, planned: Mapping[str, object]) -> str:
    """A folder's configuration as the manifest names it (by its last part), if it does."""
    if found in planned:
        return found
    last = found.rsplit("/", 1)[-1]
    return last if last in planned else found


def _indices(indices: Iterable[int]) -> str:
    if isinstance(indices, MissingRuns):
        return format_ranges(indices.ranges())
    return ", ".join(str(i) for i in indices)


def _findings(
    manifest: Manifest,
    claims: Sequence[Claim],
    configurations: Sequence[ConfigurationAudit],
    k_plan: int,
) -> list[str]:
    declared = manifest.declared
    lines = []
    most_present = max((len(c.present) for c in configurations), default=0)
    by_name = {c.configuration: c for c in configurations}
    claim = governing([c for c in claims if c.scope is None or c.scope not in by_name])
    if (
        claim
        and declared
        and (claim.k > declared.k or (claim.k != declared.k and not claim.at_least))
    ):
        lines.append(
            f"claimed {claim.describe()} ({claim.source}) but the manifest "
            f"declares {declared.k} ({declared.source})"
        )
    if claim and claim.k > most_present:
        lines.append(
            f"claimed {claim.describe()} ({claim.source}) but no configuration "
            f"has more than {plural(most_present, 'run directory', 'run directories')}"
        )
    for scoped in claims:
        target = by_name.get(scoped.scope or "")
        if target is not None and scoped.k > len(target.present):
            lines.append(
                f"claimed {scoped.describe()} ({scoped.source}) but it has "
                f"{plural(len(target.present), 'run directory', 'run directories')}"
            )
    if declared is None:
        lines.append(
            "no manifest declares a run count ("
            + ", ".join(MANIFESTS)
            + f"); the plan is taken as {k_plan}, the largest run count seen"
        )
    for c in configurations:
        parts = []
        if c.missing:
            parts.append(f"missing run {_indices(c.missing)}")
        if c.ungraded:
            parts.append(f"ungraded run {_indices(c.ungraded)}")
        if c.errored:
            parts.append(f"grading errored on run {_indices(c.errored)}")
        if c.beyond_declared:
            parts.append(
                f"run {_indices(c.beyond_declared)} beyond the declared {declared and declared.k}"
            )
        if parts:
            lines.append(
                f"{c.configuration}: {len(c.graded)} of {c.planned} planned runs graded ("
                + "; ".join(parts)
                + ")"
            )
    return lines


@dataclass(frozen=True)
class AuditOptions:
    """What the command line can change about an audit."""

    declared_k: int | None = None
    """Overrides the manifest's declared run count."""
    claimed: int | None = None
    """Overrides the run count parsed from a report file."""
    manifest: str | None = None
    """Manifest file name in the folder (default: the first of MANIFESTS found)."""
    patterns: tuple[str, ...] = RUN_PATTERNS
    """Run-directory name patterns, group 1 the run index."""
    grade: str | None = None
    """Grade command with {run_dir}: run once for every run directory."""
    grade_timeout_s: float = 300.0
    """Seconds one grading may take before that run is errored."""
    grade_jobs: int = 4
    """Grade commands run at once."""
    layout: str | None = None
    """Where runs sit (`Layout`), instead of run folders found by `patterns` anywhere."""


def _check_unique(run_dirs: Sequence[RunDir]) -> None:
    """Two folders for one run (run-1 and trial-1 side by side) would count it twice."""
    seen: dict[tuple[str, int], Path] = {}
    for run in run_dirs:
        key = (run.configuration, run.index)
        if key in seen:
            raise InputError(
                f"{seen[key]} and {run.path} are both run {run.index} of {run.configuration!r}; "
                "a run is never counted twice: keep one, or narrow --run-pattern"
            )
        seen[key] = run.path


def _grades(
    run_dirs: Sequence[RunDir], tokens: list[str] | None, options: AuditOptions
) -> list[Grade]:
    """Every run directory's grade, in order: its grade file, or the grade command run
    for each (--grade-jobs at a time)."""
    if tokens is None:
        return [grade_from_files(r.path) for r in run_dirs]
    with ThreadPoolExecutor(max_workers=options.grade_jobs) as pool:
        return list(
            pool.map(
                lambda r: grade_with_command(tokens, r.path.resolve(), options.grade_timeout_s),
                run_dirs,
            )
        )


def audit_folder(root: Path, options: AuditOptions) -> Audit:
    """Read a folder and audit it; InputError for a folder that is not one or holds no run."""
    if not root.is_dir():
        raise InputError(f"{root}: not a folder; give the folder holding the run directories")
    if options.grade_jobs < 1:
        raise InputError(f"--grade-jobs is {options.grade_jobs}; run at least 1 at a time")
    if not options.grade_timeout_s > 0:  # nan too: no grading could finish in time
        raise InputError(
            f"--grade-timeout is {options.grade_timeout_s:g}; give a grading more than 0 seconds"
        )
    for value, flag in ((options.declared_k, "--declared-k"), (options.claimed, "--claimed")):
        if value is not None and value < 1:
            raise InputError(f"{flag} is {value}; give a run count of at least 1")
    manifest = read_manifest(root, options.manifest)
    if options.declared_k is not None:
        manifest = replace(manifest, declared=Declared(options.declared_k, "--declared-k"))
    if options.claimed is not None and options.claimed > MAX_CLAIM:
        raise InputError(f"--claimed is {options.claimed:,}; give at most {MAX_CLAIM:,}")
    if options.declared_k is not None and options.declared_k > MAX_CLAIM:
        raise InputError(f"--declared-k is {options.declared_k:,}; give at most {MAX_CLAIM:,}")
    notes: list[str] = []
    tokens = check_command(options.grade) if options.grade else None
    if options.layout is not None:
        if options.patterns != RUN_PATTERNS:
            raise InputError("--layout and --run-pattern both say where runs are; give one")
        layout = parse_layout(options.layout)
        run_dirs, unreadable = scan_layout(root, layout)
        if not run_dirs:
            raise InputError(
                f"{root}: no folder matches --layout {layout.pattern!r}; check it against "
                "the folder's tree (docs/audit.md shows examples)"
            )
    else:
        found, unreadable = scan(root, compile_patterns(options.patterns))
        run_dirs = name_configurations(found)
    if not run_dirs:
        raise InputError(
            f"{root}: no run directories found (names like run-1, trial-1, attempt-1, "
            "epoch-1); give --run-pattern REGEX with the index in a group for other names"
        )
    set_aside: list[SetAside] = []
    if options.claimed is not None:
        claims = [Claim(options.claimed, "--claimed", "", rule="--claimed")]
    else:
        claims, set_aside, read_notes = read_claims(root, manifest.path, (r.path for r in run_dirs))
        notes.extend(read_notes)
    if from_zero(run_dirs):
        run_dirs = [replace(r, index=r.index + 1) for r in run_dirs]
        notes.append("run directories count from 0: run-0 is reported as run 1")
    planned: dict[str, list[RunDir]] = {c: [] for c in manifest.configurations}
    run_dirs = [
        replace(r, configuration=_match_configuration(r.configuration, planned)) for r in run_dirs
    ]
    _check_unique(run_dirs)
    grades = dict(
        zip(
            ((r.configuration, r.index) for r in run_dirs),
            _grades(run_dirs, tokens, options),
            strict=True,
        )
    )
    audit = audit_listing(root, manifest, claims, run_dirs, grades, notes, unreadable)
    return replace(audit, set_aside=tuple(set_aside))
