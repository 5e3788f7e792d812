"""`passhat run / resume / cassette`: make experiments (and replay cassettes from them).

`report`, `show` and `list` only read the store: they live in cli/read.py and import
none of this module (nor the adaptive options it parses)."""

from __future__ import annotations

import contextlib
import signal
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.text import Text

from passhat.cli import adaptive as adaptive_k
from passhat.cli._app import app, console, err_console
from passhat.cli._help import examples
from passhat.cli._options import LangOption, report_lang
from passhat.cli._store import DbOption, ExperimentArg, open_store
from passhat.errors import ConfigError, InputError, StoreError
from passhat.plain import plural
from passhat.records import ExperimentRecord, RunRecord
from passhat.report.experiment import print_experiment_report, print_figures
from passhat.report.i18n import t, tn
from passhat.store import Store

if TYPE_CHECKING:
    import asyncio

    from passhat.agents import LoadedAgent
    from passhat.executors import Executor
    from passhat.models.base import Model
    from passhat.runner import RunOptions
    from passhat.suite import Suite

# The runner, agents, providers and suites (pydantic, yaml) are imported inside the
# commands that use them, so `passhat metrics` and `passhat report` start faster.

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        metavar="local|dask|MODULE:NAME",
        help="What runs the runs: this process (local), Dask workers (dask; pip install "
        "'passhat[dask]'), or your own executor.",
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
    ),
]


def _model_params(
    temperature: float | None, max_tokens: int | None, seed: int | None
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if temperature is not None:
        params["temperature"] = temperature
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    if seed is not None:
        params["seed"] = seed
    return params


def _check_retry(
    retries: int | None, retry_max_wait: float | None, call_timeout: float | None
) -> None:
    if retries is not None and retries < 0:
        raise InputError(f"--retries is {retries}; use 0 for no retries")
    if retry_max_wait is not None and not retry_max_wait >= 0:
        raise InputError(f"--retry-max-wait is {retry_max_wait:g}; give seconds, 0 or more")
    if call_timeout is not None and not call_timeout > 0:
        raise InputError(f"--call-timeout is {call_timeout:g}; give a call more than 0 seconds")


def _check_k(k: int) -> None:
    """The one limit on k, before anything runs: the one reports enforce."""
    from passhat.accounting import MAX_K

    if k > MAX_K:
        raise InputError(
            f"-k is {k:,}, more than {MAX_K:,} runs per case (the most a report accounts); "
            "ask for fewer runs per case"
        )


def _check_options(
    k: int, concurrency: int, max_turns: int | None, timeout: float, retries: int
) -> None:
    """Refuse, before anything runs, values that would turn into stored results."""
    if k < 1:
        raise InputError(f"-k is {k}; ask for at least 1 run per case")
    _check_k(k)
    if concurrency < 1:
        raise InputError(f"--concurrency is {concurrency}; use at least 1")
    if max_turns is not None and max_turns < 1:
        raise InputError(f"--max-turns is {max_turns}; give the model at least 1 turn")
    if not timeout > 0:
        raise InputError(f"--timeout is {timeout:g}; give a run more than 0 seconds")
    if retries < 0:
        raise InputError(f"--retries is {retries}; use 0 for no retries")


def _check_base_url(base_url: str | None) -> None:
    if base_url is None:
        return
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"--base-url {base_url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1"
        )
    if parts.username or parts.password or parts.query or parts.fragment or ";" in parts.path:
        raise InputError(
            "--base-url carries credentials, a query, a #fragment or ;parameters; put the key in the provider's "
            "environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY): it is never stored"
        )


def _params(
    suite: Suite,
    model_params: dict[str, Any],
    *,
    max_turns: int | None,
    prompt: Path | None,
    base_url: str | None,
    timeout: float,
    retries: int,
    retry_max_wait: float | None = None,
    call_timeout: float | None = None,
) -> dict[str, Any]:
    """Everything that decides what a run means, as the experiment records it."""
    params: dict[str, Any] = {
        **suite.defaults.params,
        **model_params,
        "max_turns": max_turns or suite.defaults.max_turns,
        "timeout_s": timeout,
        "max_retries": retries,
    }
    if prompt is not None:
        params["prompt_file"] = str(prompt.resolve())
    if base_url is not None:
        params["base_url"] = base_url
    # recorded only when given, so the fingerprints of experiments without them stay
    if retry_max_wait is not None:
        params["retry_max_wait_s"] = retry_max_wait
    if call_timeout is not None:
        params["call_timeout_s"] = call_timeout
    return params


def _options(
    params: dict[str, Any],
    concurrency: int,
    retries: int | None = None,
    retry_max_wait: float | None = None,
) -> RunOptions:
    """How runs execute; `retries` and `retry_max_wait` (resume) override the experiment's."""
    from passhat.agents import RetryPolicy
    from passhat.runner import RunOptions

    default = RetryPolicy()
    return RunOptions(
        concurrency=concurrency,
        timeout_s=float(params.get("timeout_s", 300.0)),
        retry=RetryPolicy(
            max_retries=retries if retries is not None else int(params.get("max_retries", 4)),
            max_delay=retry_max_wait
            if retry_max_wait is not None
            else float(params.get("retry_max_wait_s", default.max_delay)),
        ),
    )


RetriesOption = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Retries of transient model errors per call. Default: 4 (resume: the experiment's).",
    ),
]
RetryMaxWaitOption = Annotated[
    float | None,
    typer.Option(
        "--retry-max-wait",
        metavar="SECONDS",
        help="Longest wait between two tries of a call (doubling from 0.5 s). Default: 30.",
    ),
]
CallTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--call-timeout",
        metavar="SECONDS",
        help="Seconds one model call may take before it is retried. Default: 120. With a "
        "server that answers one request at a time, lower --concurrency rather than this.",
    ),
]


def _select(suite: Suite, cases: list[str]) -> Suite:
    if not cases:
        return suite
    chosen = tuple(suite.case(c) for c in dict.fromkeys(cases))
    return replace(suite, cases=chosen)


def _build(
    suite: Suite, agent_spec: str, model_spec: str | None, params: dict[str, Any]
) -> tuple[LoadedAgent, Model | None]:
    """The agent and model an experiment's parameters describe (run and resume alike)."""
    from passhat.agents import BUILTIN, resolve_agent
    from passhat.models import model_from_params

    prompt = params.get("prompt_file")
    agent = resolve_agent(agent_spec, prompt=prompt, suite_dir=suite.path)
    if not model_spec and agent_spec in BUILTIN:
        raise ConfigError(
            f"agent {agent_spec} needs a model; give --model provider:name (e.g. "
            "openai:gpt-4o-mini) or defaults.model in suite.yaml"
        )
    model = model_from_params(model_spec, params, suite.path) if model_spec else None
    return agent, model


def _all_runs(suite: Suite, k: int) -> Collection[tuple[str, int]]:
    from passhat.runner import Plan  # made as read: not N x k tuples in memory

    return Plan(tuple(c.id for c in suite.cases), k, case_major=True)


def _warn_uncovered(
    agent: LoadedAgent, model: Model | None, runs: Collection[tuple[str, int]], language: str
) -> None:
    """A replay cassette that lacks first answers for runs about to be made: say so
    before they error (runs that will not be made are none of its business).

    Only for a built-in agent, which always asks the model: a user's agent may never
    ask it, and a warning that its runs will error would be false (if it does ask, the
    runs without an answer are listed as errored in the report)."""
    from passhat.agents import BUILTIN
    from passhat.models.replay import ReplayModel

    if agent.spec not in BUILTIN or not isinstance(model, ReplayModel):
        return
    answers = model.cassette.answers
    gaps = [(case, i) for case, i in runs if (case, i, 0) not in answers]
    if gaps:
        cases = list(dict.fromkeys(case for case, _ in gaps))
        shown = ", ".join(cases[:5]) + (", ..." if len(cases) > 5 else "")
        message = t(
            "cassette_gaps",
            language,
            cassette=model.path.name,
            n=len(gaps),
            total=tn("n_run", language, len(runs)),
            cases=shown,
        )
        err_console.print(message, style="yellow", markup=False, soft_wrap=True)


def _execute(
    store: Store,
    experiment: ExperimentRecord,
    suite: Suite,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
    quiet: bool,
    lang: str,
    executor: Executor | None = None,
    *,
    rerun_errored: bool = False,
) -> None:
    import asyncio  # only `run` and `resume` need these (a report starts faster without)

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from passhat.runner import pending, run_experiment

    todo = len(pending(store, experiment, rerun_errored=rerun_errored)[0])
    counts: Counter[str] = Counter()
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[tally]}"),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
        transient=False,
    )
    task = progress.add_task(t("runs", lang), total=todo, tally="")

    def tick(run: RunRecord) -> None:
        counts[run.status] += 1
        tally = t(
            "tally",
            lang,
            passed=counts["passed"],
            failed=counts["failed"],
            errored=counts["errored"],
        )
        progress.update(task, advance=1, tally=tally)

    terminated: list[int] = []

    async def go() -> None:
        main = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if main is not None:
            # SIGTERM (a container stop, `kill`) ends the run like Ctrl-C does
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGTERM, _terminate, main, terminated)
        try:
            await run_experiment(
                store,
                experiment,
                suite,
                agent,
                model,
                options,
                tick,
                executor=executor,
                rerun_errored=rerun_errored,
            )
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGTERM)
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()

    try:
        with progress:
            asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        done = len(store.recorded(experiment.id))
        err_console.print(
            t(
                "interrupted",
                lang,
                done=tn("n_run", lang, done),
                ref=experiment.name or experiment.id,
            ),
            style="yellow",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(143 if terminated else 130) from None
    _warn_left_missing(executor)


def _terminate(main: asyncio.Task[None], terminated: list[int]) -> None:
    terminated.append(signal.SIGTERM)
    main.cancel()


SUMMARY_ABOVE = 10_000
"""Past this many requested runs, `run` and `resume` end with the figures and the
accounting only (computed from the streamed statuses, in flat memory); `passhat
report` gives item stability and tool use."""


def _warn_left_missing(executor: Executor | None) -> None:
    """Runs an executor gave up on (their workers kept dying): missing, never counted."""
    left = list(getattr(executor, "left_missing", None) or [])
    if left:
        shown = ", ".join(f"{case} run {index}" for case, index in left[:10])
        more = f" and {len(left) - 10} more" if len(left) > 10 else ""
        err_console.print(
            f"{plural(len(left), 'run')} {'was' if len(left) == 1 else 'were'} left missing "
            "because their workers kept dying: "
            f"{shown}{more}; `passhat resume` runs them again",
            style="yellow",
            markup=False,
            soft_wrap=True,
        )


def _executor(spec: str, scheduler: str | None, suite: Suite) -> Executor:
    from passhat.executors import resolve_executor

    return resolve_executor(spec, scheduler=scheduler, suite_dir=suite.path)


def _report_and_exit(
    store: Store,
    experiment: ExperimentRecord,
    strict: bool,
    quiet: bool,
    lang: str,
    no_report: bool = False,
    rounds: adaptive_k.Rounds | None = None,
    *,
    said: bool = False,
) -> None:
    """The end report (or one line with --no-report; none when `said`: the caller's
    line said what happened), then the exit code."""
    from passhat.accounting import account

    ref = experiment.name or experiment.id
    requested = experiment.runs_requested
    if no_report or requested > SUMMARY_ABOVE:
        accounting = account(
            store.statuses(experiment.id),
            experiment.k_requested,
            experiment.case_ids,
            experiment.case_k,
        )
        if no_report:
            if not said:
                recorded = tn("n_run", lang, accounting.runs_completed)
                line = t("report_skipped", lang, runs=recorded, ref=ref)
                err_console.print(line, markup=False, soft_wrap=True)
        else:
            if not quiet:
                console.print()
            replayed = store.replayed(experiment.id)
            print_figures(console, experiment, accounting, lang=lang, replayed=replayed)
            line = t("summary_only", lang, runs=tn("n_run", lang, requested), ref=ref)
            console.print(Text(line), soft_wrap=True)
    else:
        runs = store.summaries(experiment.id, decode_items=False)  # as `passhat report`
        if not quiet:
            console.print()
        accounting = print_experiment_report(console, experiment, runs, lang=lang)
    if rounds is not None:
        adaptive_k.show(*rounds)
    if accounting.runs_counted == 0 or (strict and not accounting.complete):
        # nothing counted is never a success, --strict or not: a CI step must not pass
        raise typer.Exit(1)


def _run_rounds(
    store: Store,
    experiment: ExperimentRecord,
    adaptive: adaptive_k.Settings | None,
    suite: Suite,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
    quiet: bool,
    lang: str,
    executor: Executor | None = None,
    *,
    rerun_errored: bool = False,
) -> tuple[ExperimentRecord, adaptive_k.Rounds | None]:
    """The missing runs once, or round by round under an adaptive option (k may grow);
    errored runs are run again (resume --errored) in the first round only."""
    rounds_run: list[int] = []

    def execute(current: ExperimentRecord) -> None:
        again = rerun_errored and not rounds_run
        rounds_run.append(1)
        _execute(
            store, current, suite, agent, model, options, quiet, lang, executor, rerun_errored=again
        )

    if adaptive is None:
        execute(experiment)
        return experiment, None
    experiment, result = adaptive_k.adapt(store, experiment, adaptive, execute)
    return experiment, (result, adaptive.json_path)


NoReportOption = Annotated[
    bool,
    typer.Option(
        "--no-report",
        help="Print no report at the end (one line; `passhat report` gives it). Above "
        f"{SUMMARY_ABOVE:,} runs the end report shows the figures and accounting only.",
    ),
]


@app.command(
    epilog=examples(
        "passhat run examples/clarify --case ac-conflict-001",
        "passhat run SUITE --model openai:gpt-4o-mini --base-url http://127.0.0.1:8080/v1",
        "passhat run SUITE --agent my_agent.py:my_agent -k 5 --name mine-1",
        "passhat run SUITE --agent-cmd 'node dist/agent.js'",
        "passhat run SUITE --concurrency 32 --timeout 120 --strict",
    )
)
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
        ),
    ] = None,
    agent_cmd: Annotated[
        str | None,
        typer.Option(
            "--agent-cmd",
            metavar="COMMAND",
            help='An agent in any language, one process per run, e.g. "node agent.js": '
            "input on stdin, tools over MCP, model through passhat's proxy.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            metavar="PROVIDER:NAME",
            help="replay:CASSETTE.jsonl, openai:MODEL or anthropic:MODEL. Default: the suite's.",
        ),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("-k", "--k", metavar="K", help="Runs per case. Default: the suite's."),
    ] = None,
    case: Annotated[
        list[str] | None,
        typer.Option("--case", metavar="CASE", help="Run only this case (repeatable)."),
    ] = None,
    concurrency: Annotated[int, typer.Option(metavar="N", help="Runs in flight at once.")] = 8,
    timeout: Annotated[
        float,
        typer.Option(metavar="SECONDS", help="Time one run may take before it is errored."),
    ] = 300.0,
    retries: Annotated[
        int, typer.Option(metavar="N", help="Retries of transient model errors per call.")
    ] = 4,
    retry_max_wait: RetryMaxWaitOption = None,
    call_timeout: CallTimeoutOption = None,
    seed: Annotated[
        int | None,
        typer.Option(metavar="N", help="Experiment seed (each run's seed derives from it)."),
    ] = None,
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="A unique name for the experiment.")
    ] = None,
    prompt: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Prompt template file for the clarifier.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Model endpoint, e.g. http://127.0.0.1:8000/v1."),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(metavar="T", help="Sampling temperature.")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(metavar="N", help="Output token limit per model call.")
    ] = None,
    model_seed: Annotated[
        int | None, typer.Option(metavar="N", help="Seed passed to the model provider.")
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option(metavar="N", help="Model turns per run. Default: the suite's."),
    ] = None,
    db: DbOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any requested run was not counted.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    no_report: NoReportOption = False,
    lang: LangOption = None,
    until_width: adaptive_k.UntilWidth = None,
    until_decided: adaptive_k.UntilDecided = False,
    baseline: adaptive_k.Baseline = None,
    max_k: adaptive_k.MaxK = None,
    k_step: adaptive_k.KStep = None,
    adaptive_json: adaptive_k.AdaptiveJson = None,
    spending: adaptive_k.SpendingOption = "bonferroni",
    all_cases: adaptive_k.AllCases = False,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
) -> None:
    """Create an experiment and run every case k times, each from a fresh start."""
    from passhat.models import secret_values
    from passhat.runner import new_experiment
    from passhat.suite import load_suite

    language = report_lang(lang)
    suite = _select(load_suite(suite_dir), case or [])
    k = suite.defaults.k if k is None else k
    _check_options(k, concurrency, max_turns, timeout, retries)
    _check_retry(retries, retry_max_wait, call_timeout)
    _check_base_url(base_url)
    adaptive = adaptive_k.settings(
        until_width, until_decided, baseline, max_k, k_step, adaptive_json, spending, all_cases
    )
    if adaptive is not None:
        adaptive.check(len(suite.cases))
        adaptive.check_decidable(adaptive.plan(k), len(suite.cases))
    params = _params(
        suite,
        _model_params(temperature, max_tokens, model_seed),
        max_turns=max_turns,
        prompt=prompt,
        base_url=base_url,
        timeout=timeout,
        retries=retries,
        retry_max_wait=retry_max_wait,
        call_timeout=call_timeout,
    )
    agent_spec = _agent_spec(agent, agent_cmd) or suite.defaults.agent
    model_spec = model or suite.defaults.model or ""  # "": an agent that needs no model
    loaded, provider = _build(suite, agent_spec, model_spec, params)
    engine = _executor(executor, scheduler, suite)
    _warn_uncovered(loaded, provider, _all_runs(suite, k), language)
    experiment = new_experiment(
        suite, loaded, model_spec or "", provider, k=k, params=params, seed=seed, name=name
    )
    experiment = _with_tools(experiment, suite)
    options = _options(params, concurrency)
    with open_store(db, create=True) as store:
        store.add_secrets(secret_values(provider))
        if adaptive is not None:
            adaptive = adaptive.resolved(store, experiment)
        store.create_experiment(experiment)
        if not quiet:
            start = t(
                "run_start",
                language,
                id=experiment.id,
                cases=tn("n_case", language, len(suite.cases)),
                k=k,
                runs=tn("n_run", language, len(suite.cases) * k),
                path=store.path,
            )
            err_console.print(start, markup=False)
        experiment, rounds = _run_rounds(
            store, experiment, adaptive, suite, loaded, provider, options, quiet, language, engine
        )
        _report_and_exit(store, experiment, strict, quiet, language, no_report, rounds)


def _agent_spec(agent: str | None, agent_cmd: str | None) -> str | None:
    """--agent or --agent-cmd (a command agent's spec: relative paths read from here)."""
    if agent_cmd is None:
        return agent
    if agent is not None:
        raise InputError("give --agent or --agent-cmd, not both")
    from passhat.agents.command import from_command_line

    return from_command_line(agent_cmd, Path.cwd()).spec()


def _with_tools(experiment: ExperimentRecord, suite: Suite) -> ExperimentRecord:
    from passhat.env import make_environment

    tools: tuple[str, ...] = ()
    if suite.cases:
        env = make_environment(suite, suite.cases[0])
        tools = tuple(t.name for t in env.tools)
        env.close()
    return replace(experiment, tools=tools)


@app.command(
    epilog=examples(
        "passhat resume latest",
        "passhat resume mine-1 -k 10",
    )
)
def resume(
    experiment_ref: ExperimentArg,
    k: Annotated[
        int | None,
        typer.Option(
            "-k", "--k", metavar="K", help="Raise the requested k and run the new indices too."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(metavar="N", help="Runs in flight at once.")] = 8,
    errored: Annotated[
        bool,
        typer.Option(
            "--errored",
            help="Also run every errored run again, as its next attempt; the earlier "
            "attempts stay in the store and the report says how many runs were retried.",
        ),
    ] = False,
    retries: RetriesOption = None,
    retry_max_wait: RetryMaxWaitOption = None,
    call_timeout: CallTimeoutOption = None,
    break_lease: Annotated[
        bool,
        typer.Option(
            "--break-lease",
            help="Take the experiment over from a process that is gone (another host, a "
            "restarted container). If it still runs, both would run the experiment.",
        ),
    ] = False,
    db: DbOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any requested run was not counted.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    no_report: NoReportOption = False,
    lang: LangOption = None,
    until_width: adaptive_k.UntilWidth = None,
    until_decided: adaptive_k.UntilDecided = False,
    baseline: adaptive_k.Baseline = None,
    max_k: adaptive_k.MaxK = None,
    k_step: adaptive_k.KStep = None,
    adaptive_json: adaptive_k.AdaptiveJson = None,
    spending: adaptive_k.SpendingOption = "bonferroni",
    all_cases: adaptive_k.AllCases = False,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
) -> None:
    """Run exactly the missing runs of an experiment (and new indices with a larger k).

    Timeout and every model parameter are the experiment's own: a resumed run means
    the same as the runs before it. Only how hard a model call is tried may change
    (--retries, --retry-max-wait, --call-timeout), e.g. after a model server outage."""
    from passhat.runner import check_resumable, new_experiment, pending
    from passhat.suite import load_suite

    language = report_lang(lang)
    _check_retry(retries, retry_max_wait, call_timeout)
    adaptive = adaptive_k.settings(
        until_width, until_decided, baseline, max_k, k_step, adaptive_json, spending, all_cases
    )
    with open_store(db) as store:
        stored = store.experiment(experiment_ref)
        if stored.kind != "run":
            raise InputError(
                f"experiment {stored.name or stored.id} is of kind {stored.kind!r}, not a run: "
                "it has no agent to resume (import, audit or regrade again instead)"
            )

        if k is not None:
            _check_k(k)
        if k is not None and k < stored.k_requested:
            raise InputError(
                f"-k is {k} but experiment {stored.name or stored.id} already asks for "
                f"{stored.k_requested}; k can only grow"
            )
        suite = _select(load_suite(stored.suite_path), list(stored.case_ids))
        params = dict(stored.params)
        loaded, provider = _build(suite, stored.agent, stored.model, params)
        engine = _executor(executor, scheduler, suite)
        current = new_experiment(
            suite,
            loaded,
            stored.model,
            provider,
            k=stored.k_requested,
            params=params,
            seed=stored.seed,
        )
        check_resumable(stored, current)
        if adaptive is not None:
            adaptive = adaptive.resolved(store, stored)
            adaptive.check(len(stored.case_ids))
            planned = adaptive.plan(max(k or 0, stored.k_requested))
            adaptive.check_decidable(planned, len(stored.case_ids))
        options = _options(params, concurrency, retries, retry_max_wait)
        if call_timeout is not None:
            _set_call_timeout(provider, call_timeout)
        if break_lease:
            _break_lease(store, stored)
        # the lease before any change: a resume refused because another process runs the
        # experiment must leave the store as it found it (k included)
        with store.lease(stored.id):
            if k is not None and k > stored.k_requested:
                store.set_k(stored.id, k)
                stored = store.experiment(stored.id)
            todo = pending(store, stored, rerun_errored=errored)[0]
            if not todo and adaptive is None:
                line = _nothing_to_do(store, stored, language)
                err_console.print(line, markup=False, soft_wrap=True)
                _report_and_exit(store, stored, strict, quiet, language, no_report, said=True)
                return
            _warn_uncovered(loaded, provider, todo, language)
            if not quiet:
                line = t(
                    "runs_to_do", language, id=stored.id, runs=tn("n_run", language, len(todo))
                )
                err_console.print(line, markup=False)
            stored, rounds = _run_rounds(
                store,
                stored,
                adaptive,
                suite,
                loaded,
                provider,
                options,
                quiet,
                language,
                engine,
                rerun_errored=errored,
            )
        _report_and_exit(store, stored, strict, quiet, language, no_report, rounds)


def _nothing_to_do(store: Store, experiment: ExperimentRecord, lang: str) -> str:
    """Resume found every requested run recorded: say so, with the counts and what
    would give it something to do."""
    from passhat.accounting import account

    accounting = account(
        store.statuses(experiment.id),
        experiment.k_requested,
        experiment.case_ids,
        experiment.case_k,
    )
    passed = sum(c.passes for c in accounting.cases)
    ref = experiment.name or experiment.id
    line = t(
        "nothing_to_do",
        lang,
        id=experiment.id,
        runs=tn("n_run", lang, accounting.runs_requested),
        passed=passed,
        failed=accounting.runs_counted - passed,
        errored=accounting.runs_errored,
    )
    if accounting.runs_errored:
        line += t("nothing_to_do_errored", lang, ref=ref)
    return line + t("nothing_to_do_more", lang, ref=ref, k=experiment.k_requested + 1)


def _set_call_timeout(model: Model | None, seconds: float) -> None:
    """After the fingerprint check: how long a call may take is not what a run means."""
    from passhat.models.provider import ProviderModel

    if isinstance(model, ProviderModel):
        model.timeout = seconds


def _break_lease(store: Store, experiment: ExperimentRecord) -> None:
    holder = store.break_lease(experiment.id)
    if holder is None:
        message = f"--break-lease: experiment {experiment.id} had no lease; nothing to break"
    else:
        message = (
            f"warning: broke the lease of {holder} on experiment {experiment.id}; if that "
            "process is still running, both now run this experiment (no run is counted "
            "twice, but work is repeated): stop it"
        )
    err_console.print(message, style="yellow", markup=False, soft_wrap=True)


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
        raise InputError(
            f"experiment {ref} holds no model answer to record (of kind {experiment.kind!r}; "
            f"{plural(runs, 'run')}, none asked a model); nothing was written"
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
