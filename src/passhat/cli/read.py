"""`passhat report / show / list`: read experiments from the store.

They never run anything, so this module imports neither the runner nor the
adaptive-k options `run` and `resume` parse (cli/run.py, cli/_run_options.py):
`passhat report` starts with what a report needs and nothing more. `report`'s work is
`passhat.cli.report.report_of`, which `passhat.cli.main` also calls without typer for
`passhat report EXPERIMENT [--json] [--html FILE]`."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated

import typer

from passhat._gc import without_gc
from passhat.cli import _app
from passhat.cli._app import app, write_json
from passhat.cli._help import examples
from passhat.cli._options import (
    AllCasesOption,
    JsonOption,
    JunitOption,
    LangOption,
    PriceOption,
    PricesOption,
    RequireOption,
    StrictOption,
    SummaryOption,
    forecast_option,
)
from passhat.cli._store import DbOption, ExperimentArg, open_store
from passhat.cli.report import report_of
from passhat.errors import InputError
from passhat.records import ExperimentRecord
from passhat.store import default_db_path


@app.command(
    epilog=examples(
        "passhat report latest",
        "passhat report mine-1 --html report.html --lang zh-TW",
        "passhat report latest --json --price in=0.15,out=0.60",
    )
)
@without_gc  # 100,000 runs: see passhat._gc
def report(
    experiment_ref: ExperimentArg,
    as_json: JsonOption = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Write a self-contained HTML report to FILE and print its path (-v: the "
            "terminal report too).",
        ),
    ] = None,
    lang: LangOption = None,
    forecast_m: Annotated[
        int, forecast_option("Forecast the chance the next M runs all pass.")
    ] = 10,
    show_all: AllCasesOption = False,
    strict: StrictOption = False,
    price: PriceOption = None,
    prices_file: PricesOption = None,
    why_option: Annotated[
        bool | None,
        typer.Option(
            "--why/--no-why",
            help="--why shows why runs differ (divergence tree, item evidence), --no-why "
            "leaves it out. Default: shown for experiments of at most 20,000 runs.",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="With --html: print the terminal report too, not only the path."
        ),
    ] = False,
    db: DbOption = None,
    junit_xml: JunitOption = None,
    summary: SummaryOption = None,
    require: RequireOption = None,
) -> None:
    """The three numbers with intervals, the accounting, item stability, tool use and
    tokens (and cost, given prices). With --html, the page's path alone (-v: the
    report too)."""
    if not report_of(
        experiment_ref,
        as_json=as_json,
        html=html,
        lang=lang,
        forecast_m=forecast_m,
        show_all=show_all,
        strict=strict,
        price=price,
        prices_file=prices_file,
        why_option=why_option,
        verbose=verbose,
        db=db,
        junit_xml=junit_xml,
        summary=summary,
        require=require,
    ):
        raise typer.Exit(1)


@app.command(
    epilog=examples(
        "passhat show latest ac-conflict-001 2",
        "passhat show mine-1 ac-conflict-001 2 --json",
    )
)
def show(
    experiment_ref: ExperimentArg,
    case_id: Annotated[str, typer.Argument(metavar="CASE", help="Case id.")],
    run_index: Annotated[int, typer.Argument(metavar="RUN", help="Run index (1-based).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the run record as JSON.")] = False,
    db: DbOption = None,
) -> None:
    """One run whole: transcript, tool calls, output, final state, score, and a crash's traceback."""
    from passhat.report.run import print_run, run_dict

    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        _check_run_ref(experiment, case_id, run_index)
        r = store.run(experiment.id, case_id, run_index)
    if as_json:
        write_json(run_dict(r))
    else:
        print_run(_app.console, r)


def _check_run_ref(experiment: ExperimentRecord, case_id: str, run_index: int) -> None:
    """A case the experiment never planned, or an index outside 1..k, is a typo: say so."""
    ref = experiment.name or experiment.id
    if case_id not in experiment.case_ids:
        close = difflib.get_close_matches(case_id, experiment.case_ids, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        ids = experiment.case_ids
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        raise InputError(f"experiment {ref} has no case {case_id!r}{hint} (its cases: {shown})")
    k = experiment.k_of(case_id)
    if not 1 <= run_index <= k:
        of = "of each case" if k == experiment.k_requested else f"of case {case_id}"
        raise InputError(
            f"experiment {ref} asks for runs 1 to {k} {of}; there is no run {run_index}"
        )


@app.command(
    "list",
    epilog=examples(
        "passhat list",
        "passhat list --db runs/passhat.db",
    ),
)
def list_experiments(db: DbOption = None) -> None:
    """The experiments in the store, with each one's counted, errored and planned runs."""
    from passhat.report.parts import experiments_table

    with open_store(db, read_only=True) as store:
        experiments = store.experiments()
        counts = store.status_counts()
    _app.console.print(experiments_table(experiments, counts, title=f"{db or default_db_path()}"))
