"""`passhat report`'s work (`report_of`): what `passhat.cli.read.report`, the typer
command, runs once typer has parsed its options, and what `passhat.cli.main` runs
without typer for `passhat report EXPERIMENT [--json] [--html FILE] [--db PATH]`
(`cli.quick_report`).

Imports no typer (its import, with the help pages', is 40-50 ms of a `report --json`
of 100,000 runs that takes ~0.5 s): the options of other commands and the gate, the
CI files and the language tables are imported only when asked for."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from contextlib import nullcontext
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from passhat._lazy import imported_meanwhile
from passhat.cli._out import console_of, write_json, write_json_pieces
from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunSummary
from passhat.report import ROWS_SHOWN
from passhat.report.digest import TALLIED_K, tallied
from passhat.store import RunNumbers, Store, default_db_path
from passhat.usage import Unseen

if TYPE_CHECKING:
    from passhat.accounting import Accounting
    from passhat.gate import Requirement
    from passhat.records import RunJson
    from passhat.report.digest import Digest
    from passhat.report.why import Explainer


STREAMED_RUNS = 0
"""Runs asked for from which `report --json` for a pipe is written as its runs are read
(`passhat.report.json_stream`), never all held: every experiment. Read column by column
it takes no longer at any size than reading every run's summary (1,000 runs: 16 ms
either way; 100,000 runs of 1,000 cases: 0.39 -> 0.33 s in-process), and at 1,000,000
runs it holds 300 MB less."""


REPORT_MODULES = ("passhat.report.experiment", "numpy", "numpy.random")
"""What `passhat report` loads while the store is read (`imported_meanwhile`): the
report's tables and statistics, numpy and its random generators (the bootstrap's),
not imported with the command, so that their 0.1 to 0.2 s of imports overlap SQLite's
counting or scanning of the runs."""


def report_of(
    experiment_ref: str,
    *,
    as_json: bool = False,
    html: Path | None = None,
    lang: str | None = None,
    forecast_m: int = 10,
    show_all: bool = False,
    strict: bool = False,
    price: str | None = None,
    prices_file: Path | None = None,
    why_option: bool | None = None,
    verbose: bool = False,
    db: Path | None = None,
    junit_xml: Path | None = None,
    summary: Path | None = None,
    require: list[str] | None = None,
) -> bool:
    """`passhat report` with its options parsed: the report written, then False when
    --strict asks for exit 1 (a requested run not counted), else True."""
    from passhat.usage import choose_prices

    if lang is not None:  # checked before anything is read, as are the next two
        from passhat.report.i18n import check_lang

        check_lang(lang)
    rules = _requirements(require)
    if forecast_m != 10:  # (the default needs no check)
        from passhat.cli._options import check_forecast

        check_forecast(forecast_m)
    # `report --json` for a pipe, nothing else written: read in one snapshot of the store
    piped = as_json and not sys.stdout.isatty() and html is junit_xml is summary is None
    with (
        Store(db or default_db_path(), create=False, read_only=True) as store,  # open_store's
        store.snapshot() if piped else nullcontext(),
    ):
        experiment = store.experiment(experiment_ref)
        prices = choose_prices(price, prices_file, experiment.model)
        # `report --json` and the page decode each case's per-item results as they write
        # them (never all decoded at once); the terminal report alone reads none but the
        # listed cases' (`load`), unless it lists all, shows why runs differ, or a CI file
        # needs them all
        terminal_only = not as_json and html is None and junit_xml is None and summary is None
        # a large experiment's `report --json` for a pipe is written as its runs are read
        streamed = piped and prices is None and experiment.runs_requested >= STREAMED_RUNS
        unread = streamed or (
            terminal_only and not show_all and not _explained(experiment.runs_requested, why_option)
        )
        # a large experiment's report counts its runs in SQL, reading none; the
        # terminal report's modules and numpy load meanwhile, while SQLite counts
        # (`Store.tallies` lets them finish before it takes a row into Python)
        tallied = _tallied(store, experiment, streamed=streamed) if unread else None
        # a streamed report's every run's index, tokens and tool counts, read before
        # any JSON (a damaged tool count is said first); None: values `passhat run`
        # writes none of (a float token count...), and the runs are read whole
        numbers = _numbers(store, experiment.id, tallied[0]) if streamed and tallied else None
        if streamed and numbers is None:
            tallied = None
        # else while SQLite scans; not for a streamed --json (`_tallied`) nor for a page,
        # which reads its runs' detail after: once a thread has started, even one that
        # ended, every row and object costs more (likely malloc leaving its one-thread
        # path): `report --html` took 3-5 % more CPU at 100,000 runs, 13 % at 1,000,000
        with nullcontext() if streamed or html else imported_meanwhile(*REPORT_MODULES):
            runs = (
                store.summaries(
                    experiment.id, decode_items=False, read_items=streamed or not unread
                )
                if tallied is None
                else []
            )
        recorded = len(runs) if tallied is None else tallied[0].runs
        # why runs differ is shown by the terminal report and the page, not by --json
        shown = not as_json or html is not None
        why = _explainer(store, experiment, recorded, why_option) if shown else None
        if unread and why is not None:  # fewer runs recorded than asked for: read them
            runs, unread = store.summaries(experiment.id, decode_items=False), False
            tallied = None
        try:
            if tallied is None:
                counted_in = sum(map(attrgetter("input_tokens"), runs))  # in C: 100,000 runs
                counted_out = sum(map(attrgetter("output_tokens"), runs))
            elif numbers is not None:  # summed exactly: SQL's float sum rounds past 2**53
                counted_in, counted_out = sum(numbers.tokens_in), sum(numbers.tokens_out)
            else:
                counted_in, counted_out = tallied[0].input_tokens, tallied[0].output_tokens
        except TypeError:  # text in a token column (by hand): the store's check names the run
            next(store.tokens(experiment.id), None)
            raise
        counted: Accounting | None = None  # the page's, reused for --strict
        if html is not None:
            from passhat.report.experiment import experiment_accounting
            from passhat.report.html import write_html

            counted = experiment_accounting(experiment, runs)
            language = _language(lang)

            def load(cases: Sequence[str]) -> list[RunJson]:
                return store.runs_json(experiment.id, cases)

            try:
                written = write_html(
                    html,
                    experiment,
                    runs,
                    lang=language,
                    load=load,
                    prices=prices,
                    forecast_m=forecast_m,
                    why=why,
                    accounting=counted,
                )
            except OSError as error:
                raise InputError(f"--html {html}: cannot write ({error.strerror})") from None
            from passhat.report.i18n import t

            err = console_of("err_console")
            err.print(t("wrote", language, path=written), markup=False, soft_wrap=True)
        read = runs if tallied is None else tallied[0].errored  # the errored runs at least
        unseen = Unseen(
            tuple(store.attempt_tokens(experiment.id)), store.abandoned_calls(experiment.id, read)
        )
        unseen_data = unseen.to_dict(counted_in, counted_out, prices)
        if tallied is not None and numbers is not None:  # streamed: counted in SQL
            from passhat.report.json_stream import streamed_json

            accounting = tallied[1]
            write_json_pieces(
                streamed_json(
                    store, experiment, tallied, numbers, forecast_m=forecast_m, unseen=unseen_data
                )
            )
            complete = accounting.runs_counted > 0 and accounting.complete
        elif as_json and not sys.stdout.isatty():  # for a pipe: compact, written in pieces
            from passhat.report.experiment import experiment_json

            accounting, pieces = experiment_json(
                experiment,
                runs,
                forecast_m=forecast_m,
                prices=prices,
                unseen=unseen_data,
                # the kept text only where the runs were read in the same snapshot: else a
                # run recorded (and kept) since their read would be in the items alone
                kept_items=store.kept_items(experiment.id) if piped else None,
            )
            write_json_pieces(pieces)
            complete = accounting.runs_counted > 0 and accounting.complete
        elif as_json:  # indented for a person at a terminal
            from passhat.report.experiment import experiment_dict

            data = experiment_dict(
                experiment, runs, forecast_m=forecast_m, prices=prices, unseen=unseen_data
            )
            write_json(data)
            complete = data["dataset"] is not None and data["dataset"]["complete"]
        elif counted is not None and not verbose:
            complete = counted.complete
        else:
            from passhat.report.experiment import print_experiment_report

            console = console_of("console")

            accounting = print_experiment_report(
                console,
                experiment,
                runs,
                forecast_m=forecast_m,
                limit=None if show_all else ROWS_SHOWN,
                lang=_language(lang),
                prices=prices,
                why=why,
                signatures=why.overview(runs) if why is not None else None,
                load=partial(_listed_runs, store, experiment.id) if unread else None,
                counted=tallied,
            )
            for line in unseen.lines(counted_in, counted_out):
                console.print(line, style="yellow", markup=False, soft_wrap=True)
            complete = accounting.complete
    if junit_xml is not None or summary is not None:
        _write_ci(experiment, runs, junit_xml, summary)
    if rules:
        from passhat.cli._options import say_gate
        from passhat.results import Experiment

        say_gate(Experiment(store.path, experiment).gate(rules))
    return not (strict and not complete)


def _requirements(require: list[str] | None) -> tuple[Requirement, ...]:
    """--require's rules (passhat.gate imported only when some are given)."""
    if not require:
        return ()
    from passhat.gate import requirements

    return requirements(require)


def _explained(runs: int, asked: bool | None) -> bool:
    """Whether a report of `runs` runs shows why its runs differ (--why/--no-why, else
    by the count: `passhat.report.why.explain_by_default`)."""
    from passhat.report.why import explain_by_default

    return explain_by_default(runs) if asked is None else asked


def _tallied(
    store: Store, experiment: ExperimentRecord, *, streamed: bool = False
) -> tuple[Digest, Accounting] | None:
    """The digest and accounting of a large experiment's runs counted in SQL (None for
    one the report lists whole, of cases of few runs, or a damaged store: its runs are
    read), the terminal report's modules imported in a thread while SQLite counts.
    `streamed`: for `report --json` (`passhat.report.json_stream`), every case listed,
    whatever the runs per case, and no thread: it reads every run's row afterwards, and
    once a process has started a thread, even one that ended, each row SQLite hands over
    costs more (likely its mutexes and malloc's locks leaving their one-thread path):
    `Store.run_numbers` of 1,000,000 runs took 670-710 ms after an empty thread, 510-570
    without; a plain sqlite3 fetch of 100,000 rows, 62-69 ms against 49-50."""
    if experiment.k_requested < TALLIED_K and not streamed:
        return None
    meanwhile = None if streamed else imported_meanwhile(*REPORT_MODULES)
    tallies = store.tallies(experiment.id, parts=not streamed, meanwhile=meanwhile)
    if tallies is None:
        return None
    return tallied(tallies, experiment, 0 if streamed else ROWS_SHOWN)


def _numbers(store: Store, experiment_id: str, read: Digest) -> RunNumbers | None:
    """`Store.run_numbers` of the runs counted per case (`Digest.case_usage`)."""
    usage = read.case_usage or {}
    return store.run_numbers(experiment_id, [(case, n) for case, (n, _, _) in usage.items()])


def _listed_runs(store: Store, experiment_id: str, cases: Sequence[str]) -> list[RunSummary]:
    """The runs of the cases a terminal report lists, their per-item results read."""
    return store.summaries(experiment_id, decode_items=False, cases=cases)


def _explainer(
    store: Store, experiment: ExperimentRecord, runs: int, asked: bool | None
) -> Explainer | None:
    """What explains why runs differ (read a case at a time from the open store), when
    --why asks for it or, by default, when the experiment is small enough."""
    from passhat.report.why import Explainer

    if not _explained(runs, asked):
        return None
    return Explainer(experiment, lambda case: store.runs(experiment.id, cases=[case]))


def _write_ci(
    experiment: ExperimentRecord,
    runs: Sequence[RunSummary],
    junit: Path | None,
    summary: Path | None,
) -> None:
    """--junit-xml and --summary, from the accounting and intervals the report shows."""
    from passhat.analysis import item_stability
    from passhat.cli._options import write_ci
    from passhat.report.ci import junit_xml, summary_markdown
    from passhat.report.experiment import experiment_accounting, experiment_uncertainty

    accounting = experiment_accounting(experiment, runs)
    u = experiment_uncertainty(accounting, 10) if accounting.runs_counted else None
    write_ci(
        junit,
        lambda: junit_xml(experiment, accounting, runs, item_stability(runs), u),
        summary,
        lambda: summary_markdown(experiment, accounting, u),
    )


def _language(lang: str | None) -> str:
    """--lang, else the locale's language (as `cli._options.report_lang`, whose module
    imports typer)."""
    from passhat.report.i18n import check_lang, default_lang

    return check_lang(lang) if lang is not None else default_lang()
