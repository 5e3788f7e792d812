"""`passhat run / resume`: make experiments, or finish them.

Each parses its options (cli/_run_options.py declares them, once), makes one library
call (`passhat.evaluate`, `passhat.resume`: everything about running an experiment is
decided there) and prints: the events as they come (cli/_events.py), the end report
and the exit code the returned experiment gives. `report`, `show` and `list` only read
the store: they live in cli/read.py and import none of this (nor the adaptive options
parsed here)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from passhat.cli import _app
from passhat.cli import adaptive as adaptive_k
from passhat.cli._app import app
from passhat.cli._bundle import with_bundles
from passhat.cli._events import said_if_interrupted
from passhat.cli._help import examples, panel_option
from passhat.cli._options import say_gate, write_ci
from passhat.cli._run_options import (
    MODEL,
    STORE,
    SUMMARY_ABOVE,
    WHAT,
    ModelSettings,
    NameOption,
    RetriesOption,
    RunLimits,
    Shared,
    SuiteArg,
    What,
    k_option,
)
from passhat.cli._store import ExperimentArg, open_store
from passhat.errors import InputError
from passhat.report.i18n import t, tn

if TYPE_CHECKING:
    from collections.abc import Callable

    from passhat.results import Experiment

# The library (runner, agents, providers, suites: pydantic, yaml) is imported inside
# the commands that use it, so `passhat metrics` and `passhat report` start faster.

__all__ = ["SUMMARY_ABOVE", "Shared", "resume", "run"]


@app.command(
    epilog=examples(
        "passhat run examples/clarify --case ac-conflict-001",
        "passhat run SUITE --model openai:gpt-4o-mini --base-url http://127.0.0.1:8080/v1",
        "passhat run SUITE --agent my_agent.py:my_agent -k 5 --name mine-1",
        "passhat run SUITE --agent-cmd 'node dist/agent.js'",
        "passhat run SUITE --concurrency 32 --timeout 120 --strict",
    )
)
@with_bundles
def run(
    suite_dir: SuiteArg,
    *,
    what: What,
    model: ModelSettings,
    retries: Annotated[
        int, panel_option(MODEL, metavar="N", help="Retries of transient model errors per call.")
    ] = 4,
    shared: Shared,
    limits: RunLimits,
    name: NameOption = None,
) -> None:
    """Create an experiment and run every case k times, each from a fresh start."""
    from passhat.evaluation import evaluate

    experiment = _called(
        evaluate,
        shared,
        suite_dir,
        **what.evaluate_options(),
        **asdict(model),
        retries=retries,
        **limits.evaluate_options(),
        name=name,
    )
    _report_and_exit(experiment, shared)


@app.command(
    epilog=examples(
        "passhat resume latest",
        "passhat resume mine-1 -k 10",
    )
)
@with_bundles
def resume(
    experiment_ref: ExperimentArg,
    *,
    k: Annotated[int | None, k_option("Raise the requested k and run the new indices too.")] = None,
    errored: Annotated[
        bool,
        panel_option(
            WHAT,
            "--errored",
            help="Also run every errored run again, as its next attempt; the earlier "
            "attempts stay in the store and the report says how many runs were retried.",
        ),
    ] = False,
    retries: RetriesOption = None,
    shared: Shared,
    break_lease: Annotated[
        bool,
        panel_option(
            STORE,
            "--break-lease",
            help="Take the experiment over from a process that is gone (another host, a "
            "restarted container). If it still runs, both would run the experiment.",
        ),
    ] = False,
) -> None:
    """Run exactly the missing runs of an experiment (and new indices with a larger k).

    Timeout and every model parameter are the experiment's own: a resumed run means
    the same as the runs before it. Only how hard a model call is tried may change
    (--retries, --retry-max-wait, --call-timeout), e.g. after a model server outage."""
    from passhat.evaluation import resume as resume_experiment

    experiment = _called(
        resume_experiment,
        shared,
        experiment_ref,
        k=k,
        errored=errored,
        retries=retries,
        break_lease=break_lease,
    )
    said = experiment.outcome is not None and experiment.outcome.planned == 0
    if said:
        line = _nothing_to_do(experiment, shared.language)
        _app.err_console.print(line, markup=False, soft_wrap=True)
    _report_and_exit(experiment, shared, said=said)


def _called(
    call: Callable[..., Experiment], shared: Shared, *args: Any, **options: Any
) -> Experiment:
    """The one library call of `run` and `resume` (`evaluate`, `resume`), given the
    options of `Shared` too: made once the start-up is set aside (`set_aside_start_up`,
    before a user's code loads), an interrupt said in one line."""
    from passhat.cli import set_aside_start_up

    for path, option in (
        (shared.junit_xml, "--junit-xml"),
        (shared.summary, "--summary"),
        (shared.adaptive_json, "--adaptive-json"),
    ):  # written after the runs: a folder that is not there is said before them
        if path is not None and not Path(path).parent.is_dir():
            raise InputError(
                f"{option} {path}: no folder {Path(path).parent}; make it first, or give a "
                "file in a folder that exists"
            )
    set_aside_start_up()
    with said_if_interrupted(shared.language):
        return call(*args, **options, **shared.call_options(shared.language))


def _nothing_to_do(experiment: Experiment, lang: str) -> str:
    """Resume found every requested run recorded: say so, with the counts and what
    would give it something to do."""
    accounting = experiment.accounting
    record = experiment.record
    passed = sum(c.passes for c in accounting.cases)
    ref = record.command_ref
    line = t(
        "nothing_to_do",
        lang,
        id=record.id,
        runs=tn("n_run", lang, accounting.runs_requested),
        passed=passed,
        failed=accounting.runs_counted - passed,
        errored=accounting.runs_errored,
    )
    if accounting.runs_errored:
        line += t("nothing_to_do_errored", lang, ref=ref)
    return line + t("nothing_to_do_more", lang, ref=ref, k=record.k_requested + 1)


def _report_and_exit(experiment: Experiment, shared: Shared, *, said: bool = False) -> None:
    """The end report (or one line with --no-report; none when `said`: the caller's
    line said what happened), then the exit code the experiment gives."""
    console, err_console = _app.console, _app.err_console
    quiet, no_report, lang = shared.quiet, shared.no_report, shared.language
    record = experiment.record
    ref = record.command_ref
    requested = record.runs_requested
    if no_report or requested > SUMMARY_ABOVE:
        accounting = experiment.accounting  # from the streamed statuses, in flat memory
        if no_report:
            if not said:
                recorded = tn("n_run", lang, accounting.runs_completed)
                line = t("report_skipped", lang, runs=recorded, ref=ref)
                err_console.print(line, markup=False, soft_wrap=True)
        else:
            # here, not above: --no-report's line needs neither (rich.text and the
            # report's modules, about 25 ms of CPU)
            from rich.text import Text

            from passhat.report.experiment import print_figures

            if not quiet:
                console.print()
            with open_store(experiment.path, read_only=True) as store:
                replayed = store.replayed(record.id)
            print_figures(console, record, accounting, lang=lang, replayed=replayed)
            line = t("summary_only", lang, runs=tn("n_run", lang, requested), ref=ref)
            console.print(Text(line), soft_wrap=True)
    else:
        from passhat.report.experiment import print_experiment_report

        runs = experiment.summaries(decode_items=False)  # as `passhat report`
        if not quiet:
            console.print()
        print_experiment_report(console, record, runs, lang=lang)
    rounds = experiment.outcome.rounds if experiment.outcome is not None else None
    if rounds is not None:
        adaptive_k.show(rounds, shared.adaptive_json)
    _write_ci(experiment, shared.junit_xml, shared.summary)
    if experiment.accounting.runs_counted:
        say_gate(experiment.gate())
    code = experiment.exit_code(strict=shared.strict)
    if code:
        # nothing counted is never a success, --strict or not: a CI step must not pass
        raise typer.Exit(code)


def _write_ci(experiment: Experiment, junit: Path | None, summary: Path | None) -> None:
    """--junit-xml and --summary, from the experiment's accounting (and intervals)."""
    if junit is None and summary is None:
        return
    from passhat.report.ci import junit_xml, summary_markdown

    record = experiment.record
    write_ci(
        junit,
        lambda: junit_xml(
            record,
            experiment.accounting,
            experiment.summaries(),
            experiment.items,
            experiment.uncertainty,
        ),
        summary,
        lambda: summary_markdown(record, experiment.accounting, experiment.uncertainty),
    )
