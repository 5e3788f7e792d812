"""`passhat import inspect|tau2|harbor`: other harnesses' results into the store, same
accounting."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from passhat.cli._app import app, console, write_json
from passhat.cli._bundle import with_bundles
from passhat.cli._help import Group, Typer, examples
from passhat.cli._options import StrictOption
from passhat.cli._store import DbOption, open_store
from passhat.errors import InputError
from passhat.plain import plural

if TYPE_CHECKING:
    from rich.console import Console

    from passhat.accounting import Accounting
    from passhat.records import ExperimentRecord
    from passhat.sources import Imported

import_app = Typer(
    cls=Group,
    help="Import another harness's results (Inspect logs, τ²-bench results, Harbor jobs) as "
    "experiments: every sample × epoch or trial becomes a run, with passhat's accounting.",
    epilog=examples(
        "passhat import inspect logs/",
        "passhat import tau2 results.json --name tau2-airline",
        "passhat import harbor jobs/my-job",
    ),
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")

NameOption = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="A unique name for the experiment (one input only)."),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print what was imported as JSON for machines.")
]


@dataclass(frozen=True)
class Importing:
    """The options every `passhat import` command takes, declared once (`with_bundles`
    puts them in each command's signature): the stored experiment's name, the store,
    and how the import is told."""

    name: NameOption = None
    db: DbOption = None
    as_json: JsonOption = False
    strict: StrictOption = False


MAX_ERRORED_SHOWN = 10


def print_imported(out: Console, imported: Imported, accounting: Accounting, origin: str) -> None:
    """What was imported: accounting, errored runs, passhat's figures beside the source's."""
    e = imported.experiment
    source = e.source or {}
    out.print(
        Text.assemble(
            ("imported ", "bold"),
            Text(str(source.get("path", ""))),
            (f" → experiment {e.id}", "bold"),
            (f" ({e.name})" if e.name else ""),
        ),
        soft_wrap=True,
    )
    tool_version = source.get("inspect_version") or source.get("tau2_version") or "?"
    out.print(
        Text(
            f"  task {e.suite_name} · model {e.model} · {origin} {tool_version} · "
            f"{plural(len(e.case_ids), 'case')} × requested k {e.k_requested}"
        ),
        soft_wrap=True,
    )
    out.print(
        Text(
            f"  runs: requested {accounting.runs_requested}, completed "
            f"{accounting.runs_completed}, counted {accounting.runs_counted}, errored "
            f"{accounting.runs_errored}, missing {accounting.runs_missing}"
        )
    )
    errored = [r for r in imported.runs if r.status == "errored"]
    for r in errored[:MAX_ERRORED_SHOWN]:
        out.print(
            Text(
                f"  errored: {imported.name_run(r.case_id, r.run_index)}: {r.error_message}",
                style="red",
            ),
            soft_wrap=True,
        )
    if len(errored) > MAX_ERRORED_SHOWN:
        out.print(Text(f"  … and {len(errored) - MAX_ERRORED_SHOWN} more errored runs"))
    # as many missing runs as errored ones: every one was listed, 1,971 lines at 98,029
    # simulations of 100,000
    missing = ((c.case, index) for c in accounting.cases for index in c.missing)
    for case, index in islice(missing, MAX_ERRORED_SHOWN):
        out.print(Text(f"  missing: {imported.name_run(case, index)}", style="red"), soft_wrap=True)
    if accounting.runs_missing > MAX_ERRORED_SHOWN:
        more = accounting.runs_missing - MAX_ERRORED_SHOWN
        out.print(Text(f"  … and {more} more missing runs"))
    for note in imported.notes:
        out.print(Text("  note: " + note, style="yellow"), soft_wrap=True)
    if accounting.runs_counted:
        d = accounting.dataset()
        m = d.metrics
        out.print(
            Text("  passhat, over counted runs only (errored runs never count):", style="bold")
        )
        out.print(
            Text(
                f"    pass rate          {m.pass_at_1:.3f}  {m.passes}/{m.runs} runs (weighs runs)"
            )
        )
        out.print(
            Text(
                f"    pass@{m.j} / pass^{m.j}    {m.pass_at_j:.3f} / {m.pass_hat_j:.3f}  mean over "
                f"{plural(m.cases, 'case')} (weighs cases); j = {m.j}, the fewest counted runs of any case"
            ),
            soft_wrap=True,
        )
        if d.excluded:
            out.print(Text(f"    left out, no counted run: {', '.join(d.excluded)}"))
    else:
        out.print(Text("  no counted run: passhat has no figure", style="bold red"))
    if imported.figures:
        out.print(Text(f"  {origin}'s own figures:", style="bold"))
        for f in imported.figures:
            value = "–" if f.value is None else f"{f.value:.3f}"
            out.print(Text(f"    {f.label}  {value}"), soft_wrap=True)
        for weighs in dict.fromkeys(f.weighs for f in imported.figures):
            out.print(Text(f"    (weighs {weighs})"), soft_wrap=True)
    out.print(Text(f"  `passhat report {e.id}` for the whole report"))


def _imported_dict(imported: Imported, accounting: Accounting) -> dict[str, Any]:
    e = imported.experiment
    data: dict[str, Any] = {
        "experiment": e.id,
        "name": e.name,
        "source": e.source,
        "k_requested": e.k_requested,
        "accounting": {
            "runs_requested": accounting.runs_requested,
            "runs_completed": accounting.runs_completed,
            "runs_counted": accounting.runs_counted,
            "runs_errored": accounting.runs_errored,
            "runs_missing": accounting.runs_missing,
        },
        "errored": [
            {"case": r.case_id, "run": r.run_index, "message": r.error_message}
            for r in imported.runs
            if r.status == "errored"
        ],
        "missing": {c.case: list(c.missing) for c in accounting.cases if c.missing},
        "figures": [
            {"label": f.label, "value": f.value, "weighs": f.weighs} for f in imported.figures
        ],
        "notes": list(imported.notes),
    }
    if accounting.runs_counted:
        m = accounting.dataset().metrics
        data["passhat"] = {
            "pass_rate": m.pass_at_1,
            "j": m.j,
            f"pass@{m.j}": m.pass_at_j,
            f"pass^{m.j}": m.pass_hat_j,
        }
    return data


def _as_stored(imported: Imported, experiment: ExperimentRecord) -> Imported:
    from dataclasses import replace

    return replace(imported, experiment=experiment)


def _with_digest(imported: Imported) -> Imported:
    from dataclasses import replace

    from passhat.sources import import_digest

    e = imported.experiment
    source = {**(e.source or {}), "digest": import_digest(imported)}
    return replace(imported, experiment=replace(e, source=source))


def _already(imported: Imported, stored: list[ExperimentRecord]) -> ExperimentRecord | None:
    """The experiment that holds exactly this import already (None: store it). The same
    source imported before with other runs (a job that went on) is refused: one line
    naming the experiment, and --name to keep both."""
    from passhat.sources import prior_import

    e = imported.experiment
    old = prior_import(imported, stored)
    if old is None or e.name is not None:
        return None  # new, or a second copy the user named
    if isinstance(old.source, dict) and old.source.get("digest") == (e.source or {})["digest"]:
        return old
    path = (e.source or {}).get("path")
    raise InputError(
        f"{path}: imported before as experiment {_named(old)} on {old.created_at[:10]}, and its runs "
        "differ now; give --name NAME to store this import beside it (nothing was written)"
    )


def _named(experiment: ExperimentRecord) -> str:
    return f"{experiment.id} ({experiment.name})" if experiment.name else experiment.id


def _already_line(imported: Imported, old: ExperimentRecord) -> str:
    path = (imported.experiment.source or {}).get("path")
    return (
        f"already imported: {path} is experiment {_named(old)} with the same runs; nothing written "
        "(--name NAME stores a second copy)"
    )


def store_imports(items: list[Imported], origin: str, importing: Importing) -> None:
    """Store every import (each in one transaction), then print what each says.

    Importing the same input again is a no-op naming the experiment that holds it (so a
    folder of logs can be imported again as logs are added); the same source with
    other runs is refused before anything is written, unless --name names the copy."""
    from passhat.report.experiment import experiment_accounting

    shown: list[dict[str, Any]] = []
    complete = True
    from passhat.sources import with_figures

    items = [_with_digest(with_figures(imported)) for imported in items]
    with open_store(importing.db, create=True) as store:
        stored = store.experiments()
        held: list[ExperimentRecord | None] = []
        for imported in items:  # every check before the first write: all or nothing
            held.append(_already(imported, stored))
            stored.append(imported.experiment)  # the same input twice in one command
        for imported, old in zip(items, held, strict=True):
            if old is None:
                store.add_experiment_with_runs(imported.experiment, imported.records())
    for imported, old in zip(items, held, strict=True):
        accounting = experiment_accounting(imported.experiment, imported.runs)
        complete = complete and accounting.complete
        if old is not None:
            if importing.as_json:
                data = _imported_dict(_as_stored(imported, old), accounting)
                shown.append({**data, "already_imported": True})
            else:
                console.print(Text(_already_line(imported, old)), soft_wrap=True)
        elif importing.as_json:
            shown.append({**_imported_dict(imported, accounting), "already_imported": False})
        else:
            print_imported(console, imported, accounting, origin)
    if importing.as_json:
        write_json(shown)
    if importing.strict and not complete:
        raise typer.Exit(1)


def _one_name(name: str | None, count: int) -> None:
    if name is not None and count > 1:
        raise InputError(f"--name gives one experiment a name, but {count} logs were given")


@import_app.command(
    "inspect",
    epilog=examples(
        "passhat import inspect logs/",
        "passhat import inspect run.eval --pass-if '>=0.8' --name inspect-1",
    ),
)
@with_bundles
def import_inspect(
    logs: Annotated[
        list[Path],
        typer.Argument(metavar="LOG", help="Inspect logs (.eval or .json), or folders of them."),
    ],
    *,
    pass_if: Annotated[
        list[str] | None,
        typer.Option(
            "--pass-if",
            metavar="RULE",
            help="Score values that pass (repeatable, e.g. C, P) or a threshold such as "
            "'>=0.8'. Default: C, 1 or True.",
        ),
    ] = None,
    scorer: Annotated[
        str | None,
        typer.Option(
            metavar="SCORER", help="Which scorer decides pass/fail. Default: the log's first."
        ),
    ] = None,
    importing: Importing,
) -> None:
    """Import Inspect AI eval logs: each sample × epoch a run (scored: passed or failed;
    sample error: errored; absent epoch: missing), requested k = the task's epochs."""
    from passhat.sources.inspect_log import import_log, log_paths, pass_rule

    rule = pass_rule(pass_if or [])
    paths = log_paths(logs)
    _one_name(importing.name, len(paths))
    items = [import_log(p, rule=rule, scorer=scorer, name=importing.name) for p in paths]
    store_imports(items, "Inspect", importing)


@import_app.command(
    "tau2",
    epilog=examples("passhat import tau2 results.json", "passhat import tau2 results/ --strict"),
)
@with_bundles
def import_tau2(
    results: Annotated[
        list[Path],
        typer.Argument(
            metavar="RESULTS",
            help="τ²-bench results: a results.json file, or a results folder (dir format).",
        ),
    ],
    *,
    importing: Importing,
) -> None:
    """Import τ²-bench results: each simulation (task × trial) a run; reward 1 passes,
    an infrastructure error is errored, an absent trial missing; requested k = num_trials."""
    from passhat.sources.tau2 import import_results

    _one_name(importing.name, len(results))
    items = [import_results(p, name=importing.name) for p in results]
    store_imports(items, "τ²-bench", importing)


@import_app.command(
    "harbor", epilog=examples("passhat import harbor jobs/my-job", "passhat import harbor jobs/*")
)
@with_bundles
def import_harbor(
    jobs: Annotated[
        list[Path],
        typer.Argument(metavar="JOB_DIR", help="Harbor job folders (jobs/<job_name>)."),
    ],
    *,
    importing: Importing,
) -> None:
    """Import Harbor job folders: each trial a run, one experiment per agent, model and
    dataset; a valid reward of 1 passes, an invalid reward is errored, a trial that never
    finished missing; requested k = n_attempts."""
    from passhat.sources.harbor import import_job

    items = [item for job in jobs for item in import_job(job, name=importing.name)]
    _one_name(importing.name, len(items))
    store_imports(items, "Harbor", importing)
