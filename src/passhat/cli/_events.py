"""What `passhat run` and `resume` print while the library runs an experiment: the
plan, a progress bar per round, warnings (cassette gaps, a broken lease, runs left
missing, refused workers), where to watch it live, and the line an interrupt leaves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from passhat.cli import _app
from passhat.plain import plural
from passhat.records import ExperimentRecord, RunRecord
from passhat.report.i18n import t, tn

if TYPE_CHECKING:
    import threading

    from rich.progress import Progress, TaskID

    from passhat.evaluation import CassetteGaps, Events, Interrupted


def _watch_line(experiment: ExperimentRecord, store: Path, lang: str) -> None:
    """Where to watch the experiment live, when a `passhat view` of its store runs."""
    from passhat.view.beacon import experiment_url, view_of

    url = view_of(store)
    if url is not None:
        line = t("watch_live", lang, url=experiment_url(url, experiment.id))
        _app.err_console.print(line, markup=False, soft_wrap=True)


def printer(lang: str, quiet: bool, report: bool = True) -> Events:
    """The library's events, printed: the plan, a progress bar per round, warnings.
    With `report` (an end report follows), its modules and numpy (for its intervals) are
    imported in a background thread while the runs wait on their agents; numpy.random
    too (numpy loads it at first use: the intervals' bootstrap, 12 ms of the end report's
    own thread when it was left to them)."""
    from passhat.evaluation import Events

    class Printer(Events):
        def __init__(self) -> None:
            self.progress: Progress | None = None
            self.task: TaskID | None = None
            self.counts: Counter[str] = Counter()
            self.warm = report
            self.warming: threading.Thread | None = None

        def started(self, experiment: ExperimentRecord, runs: int, store: Path) -> None:
            if quiet:
                return
            line = t(
                "run_start",
                lang,
                id=experiment.id,
                cases=tn("n_case", lang, len(experiment.case_ids)),
                k=experiment.k_requested,
                runs=tn("n_run", lang, runs),
                path=store,
            )
            _app.err_console.print(line, markup=False)
            _watch_line(experiment, store, lang)

        def resuming(self, experiment: ExperimentRecord, runs: int) -> None:
            if not quiet:
                line = t("runs_to_do", lang, id=experiment.id, runs=tn("n_run", lang, runs))
                _app.err_console.print(line, markup=False)

        def cassette_gaps(self, gaps: CassetteGaps) -> None:
            cases = gaps.cases
            shown = ", ".join(cases[:5]) + (", ..." if len(cases) > 5 else "")
            message = t(
                "cassette_gaps",
                lang,
                cassette=gaps.cassette,
                n=len(gaps.gaps),
                total=tn("n_run", lang, gaps.runs),
                cases=shown,
            )
            _app.err_console.print(message, style="yellow", markup=False, soft_wrap=True)

        def lease_broken(self, experiment: ExperimentRecord, holder: str | None) -> None:
            if holder is None:
                message = (
                    f"--break-lease: experiment {experiment.id} had no lease; nothing to break"
                )
            else:
                message = (
                    f"warning: broke the lease of {holder} on experiment {experiment.id}; if "
                    "that process is still running, both now run this experiment (no run is "
                    "counted twice, but work is repeated): stop it"
                )
            _app.err_console.print(message, style="yellow", markup=False, soft_wrap=True)

        def rounds_planned(self, lines: Sequence[str]) -> None:
            if not quiet:
                for line in lines:
                    _app.err_console.print(line, markup=False, soft_wrap=True)

        def round_started(self, experiment: ExperimentRecord, runs: int) -> None:
            self.counts = Counter()
            if quiet:
                return  # no bar to draw: nothing to count or update on the loop
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tally]}"),
                TimeElapsedColumn(),
                console=_app.err_console,
                transient=False,
            )
            self.task = self.progress.add_task(t("runs", lang), total=runs, tally="")
            self.progress.start()

        def recorded(self, run: RunRecord) -> None:
            if self.warm:
                # once the runs are under way (their threads started: a warm-up importing
                # numpy holds the interpreter for tens of ms at a time)
                from passhat._lazy import short_blas_spin, warm_up

                self.warm = False
                short_blas_spin()  # numpy loads among the runs' timers
                self.warming = warm_up(
                    "numpy", "numpy.random", "passhat.report.experiment", "passhat.gate"
                )
            if self.progress is None or self.task is None:
                return
            self.counts[run.status] += 1
            c = self.counts
            tally = t("tally", lang, passed=c["passed"], failed=c["failed"], errored=c["errored"])
            self.progress.update(self.task, advance=1, tally=tally)

        def round_ended(self, experiment: ExperimentRecord) -> None:
            if self.warming is not None:
                # the runs no longer wait: what comes next (the rounds' statistics, the
                # end report) imports those modules in this thread, and two threads
                # importing into each other's modules on 3.11 can give one of them a
                # half-made module (numpy without fromiter) rather than deadlock
                self.warming.join()
                self.warming = None
            if self.progress is not None:
                self.progress.stop()
                self.progress = None

        def left_missing(self, runs: Sequence[tuple[str, int]]) -> None:
            shown = ", ".join(f"{case} run {index}" for case, index in runs[:10])
            more = f" and {len(runs) - 10} more" if len(runs) > 10 else ""
            _app.err_console.print(
                f"{plural(len(runs), 'run')} {'was' if len(runs) == 1 else 'were'} left "
                "missing because their workers kept dying: "
                f"{shown}{more}; `passhat resume` runs them again",
                style="yellow",
                markup=False,
                soft_wrap=True,
            )

        def workers_refused(self, refused: Sequence[str]) -> None:
            for why in refused:
                _app.err_console.print(
                    f"Dask worker {why}: refused; it ran none of this experiment's runs, "
                    "the other workers made them (docs/dask.md)",
                    style="yellow",
                    markup=False,
                    soft_wrap=True,
                )

    return Printer()


@contextmanager
def said_if_interrupted(lang: str) -> Iterator[None]:
    """Around `run`'s and `resume`'s library call: Ctrl-C or SIGTERM (`Interrupted`) is
    said in one line, what was kept, and exits 130 (143 for SIGTERM); no traceback."""
    from passhat.evaluation import Interrupted

    try:
        yield
    except Interrupted as stop:
        raise _interrupted(stop, lang) from None


def _interrupted(stop: Interrupted, lang: str) -> typer.Exit:
    import signal

    ref = stop.experiment.command_ref
    line = t("interrupted", lang, done=tn("n_run", lang, stop.recorded), ref=ref)
    _app.err_console.print(line, style="yellow", markup=False, soft_wrap=True)
    return typer.Exit(143 if stop.signum == signal.SIGTERM else 130)
