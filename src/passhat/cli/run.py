"""`passhat run / resume / cassette`: make experiments (and replay cassettes from them).

`run` and `resume` parse their options, make one library call (`passhat.evaluate`,
`passhat.resume`: everything about running an experiment is decided there) and print:
the plan, a progress bar, warnings, the end report and the exit code the returned
experiment gives. `report`, `show` and `list` only read the store: they live in
cli/read.py and import none of this module (nor the adaptive options it parses)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from passhat.cli import adaptive as adaptive_k
from passhat.cli._app import app, console, err_console
from passhat.cli._help import examples, in_panel
from passhat.cli._options import (
    JunitOption,
    LangOption,
    RequireOption,
    SummaryOption,
    report_lang,
    say_gate,
    write_ci,
)
from passhat.cli._store import DbOption, ExperimentArg, open_store
from passhat.errors import InputError, StoreError
from passhat.plain import plural
from passhat.records import ExperimentRecord, RunRecord
from passhat.report.experiment import print_experiment_report, print_figures
from passhat.report.i18n import t, tn

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from passhat.evaluation import CassetteGaps, Events, Interrupted
    from passhat.results import Experiment

# The library (runner, agents, providers, suites: pydantic, yaml) is imported inside
# the commands that use it, so `passhat metrics` and `passhat report` start faster.

# The panels `run -h` and `resume -h` group their options in (typer's rich_help_panel;
# cli/_help.py prints them), in this order; the adaptive options bring their own.
WHAT = "What to run"
MODEL = "Model"
LIMITS = "Limits and workers"
STORE = "Store"
OUTPUT = "Output and CI"

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        metavar="local|dask|MODULE:NAME",
        help="What runs the runs: this process (local), Dask workers (dask; pip install "
        "'passhat[dask]'), or your own executor.",
        rich_help_panel=LIMITS,
    ),
]
IsolationOption = Annotated[
    str | None,
    typer.Option(
        "--isolation",
        metavar="LEVEL",
        help="How sealed a command agent's run is: namespace or process "
        "(docs/command-agents.md). Default: namespace (a bubblewrap sandbox per run: its own "
        "files, network and processes; a uid of its own under root), or $PASSHAT_ISOLATION.",
        rich_help_panel=LIMITS,
    ),
]


def _sandbox_option(flag: str, metavar: str, what: str) -> Any:
    """--agent-read/--agent-write/--agent-host: repeatable, recorded with the experiment."""
    help = f"{what} (again for more). Recorded with the experiment (docs/command-agents.md)."
    return typer.Option(flag, metavar=metavar, help=help, rich_help_panel=LIMITS)


AgentReadOption = Annotated[
    list[str] | None,
    _sandbox_option("--agent-read", "PATH", "A path a command agent's sandboxed run may read"),
]
AgentWriteOption = Annotated[
    list[str] | None,
    _sandbox_option("--agent-write", "PATH", "A folder a command agent's sandboxed run may write"),
]
AgentHostOption = Annotated[
    list[str] | None,
    _sandbox_option(
        "--agent-host", "HOST[:PORT]", "A host a command agent's sandboxed run may reach"
    ),
]
TokenBudgetOption = Annotated[
    int | None,
    typer.Option(
        "--token-budget",
        metavar="N",
        help="Model tokens (input + output) a run may spend; past it nothing more reaches "
        "the provider and the run ends, graded on the state it reached (marked limit). "
        "Default: no budget.",
        rich_help_panel=LIMITS,
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="A running `dask scheduler` (tcp://HOST:PORT) for --executor dask. Default: a "
        "local cluster "
        "of worker processes on 127.0.0.1.",
        show_default=False,
        rich_help_panel=LIMITS,
    ),
]


RetriesOption = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Retries of transient model errors per call. Default: 4 (resume: the experiment's).",
        rich_help_panel=MODEL,
    ),
]
RetryMaxWaitOption = Annotated[
    float | None,
    typer.Option(
        "--retry-max-wait",
        metavar="SECONDS",
        help="Longest wait between two tries of a call (doubling from 0.5 s). Default: 30.",
        rich_help_panel=MODEL,
    ),
]
CallTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--call-timeout",
        metavar="SECONDS",
        help="Seconds one model call may take before it is retried. Default: 120. With a "
        "server that answers one request at a time, lower --concurrency rather than this.",
        rich_help_panel=MODEL,
    ),
]


SUMMARY_ABOVE = 10_000
"""Past this many requested runs, `run` and `resume` end with the figures and the
accounting only (computed from the streamed statuses, in flat memory); `passhat
report` gives item stability and tool use."""


def _watch_line(experiment: ExperimentRecord, store: Path, lang: str) -> None:
    """Where to watch the experiment live, when a `passhat view` of its store runs."""
    from passhat.view.beacon import experiment_url, view_of

    url = view_of(store)
    if url is not None:
        line = t("watch_live", lang, url=experiment_url(url, experiment.id))
        err_console.print(line, markup=False, soft_wrap=True)


def _printer(lang: str, quiet: bool) -> Events:
    """The library's events, printed: the plan, a progress bar per round, warnings."""
    from passhat.evaluation import Events

    class Printer(Events):
        def __init__(self) -> None:
            self.progress: Progress | None = None
            self.task: TaskID | None = None
            self.counts: Counter[str] = Counter()

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
            err_console.print(line, markup=False)
            _watch_line(experiment, store, lang)

        def resuming(self, experiment: ExperimentRecord, runs: int) -> None:
            if not quiet:
                line = t("runs_to_do", lang, id=experiment.id, runs=tn("n_run", lang, runs))
                err_console.print(line, markup=False)

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
            err_console.print(message, style="yellow", markup=False, soft_wrap=True)

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
            err_console.print(message, style="yellow", markup=False, soft_wrap=True)

        def rounds_planned(self, lines: Sequence[str]) -> None:
            if not quiet:
                for line in lines:
                    err_console.print(line, markup=False, soft_wrap=True)

        def round_started(self, experiment: ExperimentRecord, runs: int) -> None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.counts = Counter()
            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tally]}"),
                TimeElapsedColumn(),
                console=err_console,
                disable=quiet,
                transient=False,
            )
            self.task = self.progress.add_task(t("runs", lang), total=runs, tally="")
            self.progress.start()

        def recorded(self, run: RunRecord) -> None:
            self.counts[run.status] += 1
            c = self.counts
            tally = t("tally", lang, passed=c["passed"], failed=c["failed"], errored=c["errored"])
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, advance=1, tally=tally)

        def round_ended(self, experiment: ExperimentRecord) -> None:
            if self.progress is not None:
                self.progress.stop()
                self.progress = None

        def left_missing(self, runs: Sequence[tuple[str, int]]) -> None:
            shown = ", ".join(f"{case} run {index}" for case, index in runs[:10])
            more = f" and {len(runs) - 10} more" if len(runs) > 10 else ""
            err_console.print(
                f"{plural(len(runs), 'run')} {'was' if len(runs) == 1 else 'were'} left "
                "missing because their workers kept dying: "
                f"{shown}{more}; `passhat resume` runs them again",
                style="yellow",
                markup=False,
                soft_wrap=True,
            )

        def workers_refused(self, refused: Sequence[str]) -> None:
            for why in refused:
                err_console.print(
                    f"Dask worker {why}: refused; it ran none of this experiment's runs, "
                    "the other workers made them (docs/dask.md)",
                    style="yellow",
                    markup=False,
                    soft_wrap=True,
                )

    return Printer()


def _interrupted(stop: Interrupted, lang: str) -> typer.Exit:
    """Ctrl-C or SIGTERM: say what was kept; exit 130 (143 for SIGTERM)."""
    import signal

    ref = stop.experiment.name or stop.experiment.id
    line = t("interrupted", lang, done=tn("n_run", lang, stop.recorded), ref=ref)
    err_console.print(line, style="yellow", markup=False, soft_wrap=True)
    return typer.Exit(143 if stop.signum == signal.SIGTERM else 130)


def _report_and_exit(
    experiment: Experiment, shared: Shared, lang: str, *, said: bool = False
) -> None:
    """The end report (or one line with --no-report; none when `said`: the caller's
    line said what happened), then the exit code the experiment gives."""
    quiet, no_report = shared.quiet, shared.no_report
    record = experiment.record
    ref = record.name or record.id
    requested = record.runs_requested
    if no_report or requested > SUMMARY_ABOVE:
        accounting = experiment.accounting  # from the streamed statuses, in flat memory
        if no_report:
            if not said:
                recorded = tn("n_run", lang, accounting.runs_completed)
                line = t("report_skipped", lang, runs=recorded, ref=ref)
                err_console.print(line, markup=False, soft_wrap=True)
        else:
            if not quiet:
                console.print()
            with open_store(experiment.path, read_only=True) as store:
                replayed = store.replayed(record.id)
            print_figures(console, record, accounting, lang=lang, replayed=replayed)
            line = t("summary_only", lang, runs=tn("n_run", lang, requested), ref=ref)
            console.print(Text(line), soft_wrap=True)
    else:
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


StrictOption = Annotated[
    bool,
    typer.Option(
        "--strict", help="Exit 1 when any requested run was not counted.", rich_help_panel=OUTPUT
    ),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bar.", rich_help_panel=OUTPUT)
]
NoReportOption = Annotated[
    bool,
    typer.Option(
        "--no-report",
        help="Print no report at the end (one line; `passhat report` gives it). Above "
        f"{SUMMARY_ABOVE:,} runs the end report shows the figures and accounting only.",
        rich_help_panel=OUTPUT,
    ),
]


ConcurrencyOption = Annotated[
    int, typer.Option(metavar="N", help="Runs in flight at once.", rich_help_panel=LIMITS)
]


@dataclass(frozen=True)
class Shared:
    """The options `run` and `resume` both take, declared once: `with_shared` puts them
    in each command's signature where its `shared` parameter stands (typer reads the
    signature), and hands them to the command as this one value."""

    retry_max_wait: RetryMaxWaitOption = None
    call_timeout: CallTimeoutOption = None
    concurrency: ConcurrencyOption = 8
    executor: ExecutorOption = "local"
    scheduler: SchedulerOption = None
    until_width: adaptive_k.UntilWidth = None
    until_decided: adaptive_k.UntilDecided = False
    baseline: adaptive_k.Baseline = None
    max_k: adaptive_k.MaxK = None
    k_step: adaptive_k.KStep = None
    adaptive_json: adaptive_k.AdaptiveJson = None
    spending: adaptive_k.SpendingOption = "bonferroni"
    all_cases: adaptive_k.AllCases = False
    no_rerun_baseline: adaptive_k.NoRerunBaseline = False
    db: Annotated[Path | None, in_panel(DbOption, STORE)] = None
    strict: StrictOption = False
    quiet: QuietOption = False
    no_report: NoReportOption = False
    lang: Annotated[str | None, in_panel(LangOption, OUTPUT)] = None
    junit_xml: Annotated[Path | None, in_panel(JunitOption, OUTPUT)] = None
    summary: Annotated[Path | None, in_panel(SummaryOption, OUTPUT)] = None
    require: Annotated[list[str] | None, in_panel(RequireOption, OUTPUT)] = None

    def call_options(self, lang: str) -> dict[str, Any]:
        """What `evaluate` and `resume` take of these: store, workers, call limits, the
        adaptive rounds, and the events printed in `lang`."""
        from passhat.rounds import rounds

        adaptive = rounds(
            self.until_width,
            self.until_decided,
            self.baseline,
            self.max_k,
            self.k_step,
            self.adaptive_json,
            self.spending,
            self.all_cases,
            not self.no_rerun_baseline,
        )
        return {
            "db": self.db,
            "concurrency": self.concurrency,
            "executor": self.executor,
            "scheduler": self.scheduler,
            "retry_max_wait": self.retry_max_wait,
            "call_timeout": self.call_timeout,
            "adaptive": adaptive,
            "events": _printer(lang, self.quiet),
            "require": self.require,
        }


_DEFAULTS = Shared()


def with_shared(command: Callable[..., None]) -> Callable[..., None]:
    """`command` with `Shared`'s options in its signature in place of its `shared`
    parameter; called, it gets them back as one `Shared`."""
    named = inspect.Parameter.KEYWORD_ONLY  # typer passes every value by name
    hints = typing.get_type_hints(Shared, include_extras=True)
    options = [
        inspect.Parameter(f.name, named, annotation=hints[f.name], default=f.default)
        for f in dataclasses.fields(Shared)
    ]
    own = inspect.signature(command, eval_str=True).parameters.values()
    params = [q.replace(kind=named) for p in own for q in (options if p.name == "shared" else [p])]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        shared = Shared(**{option.name: kwargs.pop(option.name) for option in options})
        command(shared=shared, **kwargs)

    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return wrapper


@app.command(
    epilog=examples(
        "passhat run examples/clarify --case ac-conflict-001",
        "passhat run SUITE --model openai:gpt-4o-mini --base-url http://127.0.0.1:8080/v1",
        "passhat run SUITE --agent my_agent.py:my_agent -k 5 --name mine-1",
        "passhat run SUITE --agent-cmd 'node dist/agent.js'",
        "passhat run SUITE --concurrency 32 --timeout 120 --strict",
    )
)
@with_shared
def run(
    suite_dir: Annotated[
        Path, typer.Argument(metavar="SUITE", help="Suite folder (suite.yaml, cases/).")
    ],
    agent: Annotated[
        str | None,
        typer.Option(
            metavar="AGENT",
            help="The agent: built-in 'clarifier', a file beside suite.yaml (or here) as "
            "file.py:name, or package.module:name. Default: the suite's.",
            rich_help_panel=WHAT,
        ),
    ] = None,
    agent_cmd: Annotated[
        str | None,
        typer.Option(
            "--agent-cmd",
            metavar="COMMAND",
            help='An agent in any language, one process per run, e.g. "node agent.js": '
            "input on stdin, tools over MCP, model through passhat's proxy.",
            rich_help_panel=WHAT,
        ),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--k",
            metavar="K",
            help="Runs per case. Default: the suite's.",
            rich_help_panel=WHAT,
        ),
    ] = None,
    case: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            metavar="CASE",
            help="Run only this case (repeatable).",
            rich_help_panel=WHAT,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Experiment seed (each run's seed derives from it).",
            rich_help_panel=WHAT,
        ),
    ] = None,
    prompt: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Prompt template file for the clarifier.", rich_help_panel=WHAT
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            metavar="PROVIDER:NAME",
            help="replay:CASSETTE.jsonl, openai:MODEL or anthropic:MODEL. Default: the suite's.",
            rich_help_panel=MODEL,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="Model endpoint, e.g. http://127.0.0.1:8000/v1.",
            rich_help_panel=MODEL,
        ),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(metavar="T", help="Sampling temperature.", rich_help_panel=MODEL),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(metavar="N", help="Output token limit per model call.", rich_help_panel=MODEL),
    ] = None,
    model_seed: Annotated[
        int | None,
        typer.Option(metavar="N", help="Seed passed to the model provider.", rich_help_panel=MODEL),
    ] = None,
    retries: Annotated[
        int,
        typer.Option(
            metavar="N", help="Retries of transient model errors per call.", rich_help_panel=MODEL
        ),
    ] = 4,
    shared: Shared = _DEFAULTS,
    timeout: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help="Time one run may take before it is errored.",
            rich_help_panel=LIMITS,
        ),
    ] = 300.0,
    max_turns: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Model calls a run may make, for every agent; past it nothing more reaches "
            "the provider and the run ends, graded on the state it reached (marked limit). "
            "Default: the suite's.",
            rich_help_panel=LIMITS,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help="A unique name for the experiment.", rich_help_panel=STORE
        ),
    ] = None,
    isolation: IsolationOption = None,
    agent_read: AgentReadOption = None,
    agent_write: AgentWriteOption = None,
    agent_host: AgentHostOption = None,
    token_budget: TokenBudgetOption = None,
) -> None:
    """Create an experiment and run every case k times, each from a fresh start."""
    from passhat.evaluation import Interrupted, evaluate

    language = report_lang(shared.lang)
    try:
        experiment = evaluate(
            suite_dir,
            agent=_agent_spec(agent, agent_cmd),
            model=model,
            k=k,
            cases=case or [],
            timeout=timeout,
            retries=retries,
            seed=seed,
            name=name,
            prompt=prompt,
            base_url=base_url,
            temperature=temperature,
            max_tokens=max_tokens,
            model_seed=model_seed,
            max_turns=max_turns,
            isolation=isolation,
            sandbox=_sandbox(agent_read, agent_write, agent_host),
            token_budget=token_budget,
            **shared.call_options(language),
        )
    except Interrupted as stop:
        raise _interrupted(stop, language) from None
    _report_and_exit(experiment, shared, language)


def _sandbox(
    read: list[str] | None, write: list[str] | None, hosts: list[str] | None
) -> dict[str, list[str]] | None:
    """--agent-read/--agent-write/--agent-host as `evaluate(sandbox=...)` takes them."""
    given = {"read": read or [], "write": write or [], "hosts": hosts or []}
    return {k: v for k, v in given.items() if v} or None


def _agent_spec(agent: str | None, agent_cmd: str | None) -> str | None:
    """--agent or --agent-cmd (a command agent's spec: relative paths read from here)."""
    if agent_cmd is None:
        return agent
    if agent is not None:
        raise InputError("give --agent or --agent-cmd, not both")
    from passhat.agents.command import from_command_line

    return from_command_line(agent_cmd, Path.cwd()).spec()


@app.command(
    epilog=examples(
        "passhat resume latest",
        "passhat resume mine-1 -k 10",
    )
)
@with_shared
def resume(
    experiment_ref: ExperimentArg,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--k",
            metavar="K",
            help="Raise the requested k and run the new indices too.",
            rich_help_panel=WHAT,
        ),
    ] = None,
    errored: Annotated[
        bool,
        typer.Option(
            "--errored",
            help="Also run every errored run again, as its next attempt; the earlier "
            "attempts stay in the store and the report says how many runs were retried.",
            rich_help_panel=WHAT,
        ),
    ] = False,
    retries: RetriesOption = None,
    shared: Shared = _DEFAULTS,
    break_lease: Annotated[
        bool,
        typer.Option(
            "--break-lease",
            help="Take the experiment over from a process that is gone (another host, a "
            "restarted container). If it still runs, both would run the experiment.",
            rich_help_panel=STORE,
        ),
    ] = False,
) -> None:
    """Run exactly the missing runs of an experiment (and new indices with a larger k).

    Timeout and every model parameter are the experiment's own: a resumed run means
    the same as the runs before it. Only how hard a model call is tried may change
    (--retries, --retry-max-wait, --call-timeout), e.g. after a model server outage."""
    from passhat.evaluation import Interrupted
    from passhat.evaluation import resume as resume_experiment

    language = report_lang(shared.lang)
    try:
        experiment = resume_experiment(
            experiment_ref,
            k=k,
            errored=errored,
            retries=retries,
            break_lease=break_lease,
            **shared.call_options(language),
        )
    except Interrupted as stop:
        raise _interrupted(stop, language) from None
    said = experiment.outcome is not None and experiment.outcome.planned == 0
    if said:
        err_console.print(_nothing_to_do(experiment, language), markup=False, soft_wrap=True)
    _report_and_exit(experiment, shared, language, said=said)


def _nothing_to_do(experiment: Experiment, lang: str) -> str:
    """Resume found every requested run recorded: say so, with the counts and what
    would give it something to do."""
    accounting = experiment.accounting
    record = experiment.record
    passed = sum(c.passes for c in accounting.cases)
    ref = record.name or record.id
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


@app.command(
    epilog=examples(
        "passhat cassette mine-1 -o cassettes/mine.jsonl",
        "passhat run SUITE --model replay:cassettes/mine.jsonl",
    )
)
def cassette(
    experiment_ref: ExperimentArg,
    output: Annotated[
        Path,
        typer.Option("-o", "--output", metavar="FILE", help="Cassette file to write (.jsonl)."),
    ],
    db: DbOption = None,
) -> None:
    """Turn a finished experiment into a replay cassette: regrade it later without a call."""
    from passhat.models.replay import cassette_from_runs

    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        recorded = experiment.model_config.get("recorded") if experiment.model_config else None
        meta: dict[str, Any] = {
            "model": experiment.model,
            "prompt_version": experiment.prompt_version,
            "experiment": experiment.id,
            "suite_hash": experiment.suite_hash,
            "note": f"recorded from experiment {experiment.name or experiment.id} "
            f"({experiment.created_at}) by passhat cassette",
        }
        if isinstance(recorded, dict):
            meta["replayed_from"] = recorded
        # each run's transcript alone, decoded as read: not every run whole (1.8 GB at
        # 100,000 runs); the cassette holds the model answers only
        rows = store.columns(experiment.id, ("case_id", "run_index", "transcript"))
        read = [0]
        tape = cassette_from_runs(meta, _transcripts(rows, read))
    runs = read[0]
    if not tape.answers:
        ref = experiment.name or experiment.id
        # not "none asked a model": runs whose every call failed asked, and got no answer
        raise InputError(
            f"experiment {ref} holds no model answer to record: none of its "
            f"{plural(runs, 'run')} (of kind {experiment.kind!r}) has a model answer in its "
            "transcript (the model never answered, or the agent kept no transcript); "
            "nothing was written"
        )
    try:
        tape.dump(output)
    except OSError as error:
        raise InputError(f"-o {output}: cannot write ({error.strerror})") from None
    console.print(
        Text(
            f"{output}: {plural(len(tape.answers), 'model answer')} from "
            f"{plural(runs, 'run')}; replay with "
            f"--model replay:{output}"
        ),
        soft_wrap=True,
    )


def _transcripts(
    rows: Iterable[tuple[Any, ...]], read: list[int]
) -> Iterator[tuple[str, int, list[dict[str, Any]]]]:
    """(case, run index, transcript) of each stored row, decoded as it comes; `read[0]`
    counts the runs."""
    import json

    for case_id, index, text in rows:
        read[0] += 1
        try:
            transcript = json.loads(text)
        except (TypeError, ValueError) as error:
            raise StoreError(
                f"the store is damaged: transcript of run {index} of case {case_id!r} "
                f"is not JSON ({error})"
            ) from None
        yield case_id, index, transcript
