"""`passhat audit DIR`: declared, claimed, present and graded runs of a result folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from passhat.accounting import MissingRuns, format_ranges
from passhat.cli._app import app, console, err_console, write_json
from passhat.cli._help import examples
from passhat.cli._options import JsonOption
from passhat.plain import plural
from passhat.store import DB_ENV

if TYPE_CHECKING:
    from rich.console import Console

    from passhat.sources.audit import Audit, ConfigurationAudit


def _indices(indices: Sequence[int]) -> str:
    if isinstance(indices, MissingRuns):
        return format_ranges(indices.ranges()) if len(indices) else "–"
    return ", ".join(str(i) for i in indices) if indices else "–"


OTHER_CLAIMS_SHOWN = 4
"""Claims besides the one the plan follows, listed under it (each with file and line)."""

ROWS_SHOWN = 30
"""Configurations and findings listed unless --all is given, as `report` lists 30 cases:
an audit of 10,000 configurations printed 12,587 lines."""


def shown_configurations(audit: Audit, limit: int | None = ROWS_SHOWN) -> list[ConfigurationAudit]:
    """The configurations a table lists: with `limit`, those short of the plan first (they
    are the point of an audit), then the others, in folder order either way."""
    configurations = audit.configurations
    if limit is None or len(configurations) <= limit:
        return list(configurations)
    short = [i for i, c in enumerate(configurations) if len(c.graded) < audit.k_plan][:limit]
    chosen = set(short)
    for i in range(len(configurations)):
        if len(chosen) >= limit:
            break
        chosen.add(i)
    return [configurations[i] for i in sorted(chosen)]


def audit_table(audit: Audit, limit: int | None = None) -> Table:
    """One row per configuration (at most `limit`, None: all): declared, claimed, present,
    graded, passed, missing."""
    shown = shown_configurations(audit, limit)
    hidden = len(audit.configurations) - len(shown)
    caption = (
        f"{hidden:,} more configuration{'s' if hidden != 1 else ''} not listed "
        "(--all lists every one, --json has all)"
        if hidden
        else None
    )
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 2, 0, 0),
        caption=caption,
        caption_justify="left",
    )
    table.add_column("configuration", overflow="fold")
    for column in ("declared", "claimed", "present", "graded", "passed"):
        table.add_column(column, no_wrap=True, justify="right")
    table.add_column("missing runs", style="bold red", no_wrap=True)
    declared = str(audit.declared_k) if audit.declared_k is not None else "–"
    for c in shown:
        table.add_row(
            Text(c.configuration),
            declared,
            str(c.claim.k) if c.claim else "–",
            str(len(c.present)),
            str(len(c.graded)),
            str(len(c.passed)),
            _indices(c.missing),
        )
    return table


def print_audit(out: Console, audit: Audit, limit: int | None = ROWS_SHOWN) -> None:
    """The audit in one screen: sources, the table, findings, then the labelled figures;
    the table and the findings list at most `limit` lines each (None: all)."""
    out.print(Text(f"audit of {audit.root}", style="bold"), soft_wrap=True)
    declared = audit.manifest.declared
    out.print(
        Text(
            f"  declared  {declared.k}  ({declared.source})"
            if declared
            else "  declared  –  (no manifest with a run count)"
        )
    )
    claim = audit.claim
    if claim:
        quote = f': "{claim.quote}"' if claim.quote else ""
        out.print(Text(f"  claimed   {claim.k}  ({claim.source}{quote})"), soft_wrap=True)
    else:
        out.print(Text("  claimed   –  (no report file claims a run count; --claimed K)"))
    others = [c for c in audit.claims if c is not claim]
    if others:
        shown = ", ".join(
            f"{c.k}{'+' if c.at_least else ''} ({c.source})" for c in others[:OTHER_CLAIMS_SHOWN]
        )
        more = len(others) - OTHER_CLAIMS_SHOWN
        tail = f" and {more:,} more (--json lists every one)" if more > 0 else ""
        out.print(Text(f"            also claimed: {shown}{tail}"), soft_wrap=True)
    from passhat.sources.claims import NOT_ATTACHED

    loose = [a for a in audit.set_aside if a.rule.startswith(NOT_ATTACHED)]
    if loose:
        shown = ", ".join(f"{a.written} ({a.source})" for a in loose[:OTHER_CLAIMS_SHOWN])
        more = len(loose) - OTHER_CLAIMS_SHOWN
        tail = f" and {more:,} more" if more > 0 else ""
        out.print(
            Text(f"  read, not attached to results (plans nothing; --explain): {shown}{tail}"),
            soft_wrap=True,
        )
    most = max((len(c.present) for c in audit.configurations), default=0)
    out.print(
        Text(
            f"  plan      {plural(audit.k_plan, 'run')} per configuration: the largest of declared, "
            f"claimed and present ({most} at most)"
        ),
        soft_wrap=True,
    )
    out.print(audit_table(audit, limit))
    findings = audit.findings if limit is None else audit.findings[:limit]
    for line in findings:
        out.print(Text("  ✗ " + line, style="red"), soft_wrap=True)
    if len(findings) < len(audit.findings):
        more = len(audit.findings) - len(findings)
        line = f"  ✗ ... and {more:,} more finding{'s' if more != 1 else ''} "
        out.print(Text(line + "(--all lists them, --json has all)", style="red"))
    for note in audit.notes:
        out.print(Text("  note: " + note, style="yellow"), soft_wrap=True)
    _print_figures(out, audit)


def print_explanation(out: Console, audit: Audit) -> None:
    """Every number the claim reader read: each claim with its file, line, sentence and
    the rule that read it, then each number set aside with the rule that set it aside."""
    out.print(Text("claims read (file:line, rule, count, sentence):", style="bold"))
    if not audit.claims:
        out.print(Text("  none"))
    for claim in audit.claims:
        count = f"{claim.k}{'+' if claim.at_least else ''}"
        scope = f" for {claim.scope}" if claim.scope else ""
        attached = f"  (attached: {claim.attached})" if claim.attached else ""
        out.print(
            Text(f'  {claim.source}  [{claim.rule}]  {count}{scope}  "{claim.quote}"{attached}'),
            soft_wrap=True,
        )
    out.print(Text("numbers set aside (file:line, rule, sentence):", style="bold"))
    if not audit.set_aside:
        out.print(Text("  none"))
    for aside in audit.set_aside:
        out.print(
            Text(f'  {aside.source}  [{aside.rule}]  {aside.written}  "{aside.quote}"'),
            soft_wrap=True,
        )


def _print_figures(out: Console, audit: Audit) -> None:
    accounting = audit.accounting
    if not accounting.runs_counted:
        out.print(Text("no graded run: no figure can be computed", style="bold red"))
        return
    d = accounting.dataset()
    m = d.metrics
    cases = f"{m.cases} configuration{'s' if m.cases != 1 else ''}"
    left = f"; left out, no graded run: {', '.join(d.excluded)}" if d.excluded else ""
    out.print(Text("figures, counted over graded runs only (never the plan):", style="bold"))
    out.print(
        Text(
            f"  pass rate  {m.pass_at_1:6.1%}  {m.passes} passed / {m.runs} graded runs "
            f"(of {accounting.runs_requested} planned){left}"
        ),
        soft_wrap=True,
    )
    out.print(
        Text(
            f"  pass@{m.j:<5} {m.pass_at_j:6.1%}  share of {cases} passing at least once "
            f"in {m.j} graded run{'s' if m.j != 1 else ''}"
        ),
        soft_wrap=True,
    )
    out.print(
        Text(
            f"  pass^{m.j:<5} {m.pass_hat_j:6.1%}  share of {cases} passing all of "
            f"{m.j} graded run{'s' if m.j != 1 else ''}"
        ),
        soft_wrap=True,
    )


def _k_option(flag: str, help: str) -> Any:
    """--declared-k and --claimed: a K, runs per configuration, given instead of read."""
    return typer.Option(flag, metavar="K", help=help)


@app.command(
    epilog=examples(
        "passhat audit examples/audit/trello",
        "passhat audit results/ --grade 'python grade.py {run_dir}' --strict",
        "passhat audit results/ --declared-k 3 --into-store --name cards-audit",
        "passhat audit tb-runs/ --layout 'run{run}/{task}'",
    )
)
def audit(
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", help="Result folder: a manifest, a report and run directories."
        ),
    ],
    declared_k: Annotated[
        int | None,
        _k_option("--declared-k", "Declared runs per configuration (instead of the manifest's)."),
    ] = None,
    claimed: Annotated[
        int | None,
        _k_option(
            "--claimed", "Runs per configuration a report claims (instead of parsing REPORT.md)."
        ),
    ] = None,
    manifest: Annotated[
        str | None,
        typer.Option(
            "--manifest",
            metavar="FILE",
            help="Manifest file in DIR. Default: benchmark.json, metadata.json, ...",
        ),
    ] = None,
    run_pattern: Annotated[
        list[str] | None,
        typer.Option(
            "--run-pattern",
            metavar="REGEX",
            help=r"Run-directory name with the index in a group, e.g. 'sample-(\d+)' "
            "(repeatable). Default: run-N, trial-N, attempt-N, epoch-N.",
        ),
    ] = None,
    layout: Annotated[
        str | None,
        typer.Option(
            "--layout",
            metavar="PATTERN",
            help="Where runs sit below DIR: {config}, {task}, {run} and * in folder names, "
            "e.g. 'outputs/{config}/run-{run}' or terminal-bench's 'run{run}/{task}'.",
        ),
    ] = None,
    grade: Annotated[
        str | None,
        typer.Option(
            "--grade",
            metavar="CMD",
            help="Grade every run directory with CMD ('{run_dir}' is replaced): "
            "exit 0 passed, 1 failed, anything else errored.",
        ),
    ] = None,
    grade_timeout: Annotated[
        float,
        typer.Option("--grade-timeout", metavar="SECONDS", help="Seconds one grading may take."),
    ] = 300.0,
    grade_jobs: Annotated[
        int, typer.Option("--grade-jobs", metavar="N", help="Grade commands run at once.")
    ] = 4,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Exit 1 on any shortfall or disagreement."),
    ] = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Also list every claim read and every number set aside, each with its "
            "file, line, sentence and the rule that decided it.",
        ),
    ] = False,
    as_json: JsonOption = False,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help=f"List every configuration and finding (default: at most {ROWS_SHOWN} each).",
        ),
    ] = False,
    into_store: Annotated[
        bool,
        typer.Option("--into-store", help="Also keep the audit as an experiment in the store."),
    ] = False,
    name: Annotated[
        str | None, typer.Option(help="A unique name for the stored experiment.")
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            metavar="PATH",
            help=f"SQLite store for --into-store. Default: ${DB_ENV} if set, else ./passhat.db.",
        ),
    ] = None,
) -> None:
    """Audit a result folder no harness owns: declared, claimed, present and graded runs
    per configuration, the missing ones by index, and figures labelled by what was counted.

    Claims in prose are read by patterns, not understood: on write-ups nobody tuned the
    reader to, it caught about 4 in 5 over-claims and passed 7 to 9 in 10 consistent
    folders (docs/audit.md). Confirm what it read with --explain."""
    from passhat.sources.audit import RUN_PATTERNS, AuditOptions, audit_folder, audit_summary

    options = AuditOptions(
        declared_k=declared_k,
        claimed=claimed,
        manifest=manifest,
        patterns=tuple(run_pattern) if run_pattern else RUN_PATTERNS,
        grade=grade,
        grade_timeout_s=grade_timeout,
        grade_jobs=grade_jobs,
        layout=layout,
    )
    result = audit_folder(folder, options)
    if as_json:
        write_json(audit_summary(result))
    else:
        print_audit(console, result, None if show_all else ROWS_SHOWN)
        if explain:
            print_explanation(console, result)
    if into_store:
        from passhat.sources.audit import audit_experiment
        from passhat.store import Store, default_db_path

        imported = audit_experiment(result, name=name)
        with Store(db or default_db_path()) as store:
            store.add_experiment_with_runs(imported.experiment, imported.records())
        err_console.print(
            f"stored as experiment {imported.experiment.id} (kind audited): "
            f"`passhat report {imported.experiment.id}`",
            markup=False,
            soft_wrap=True,
        )
    if strict and result.findings:
        raise typer.Exit(1)
