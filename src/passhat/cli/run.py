"""`passhat run / resume / report / show / list`: experiments in the store."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.json import JSON
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from passhat.cli._app import app, console, err_console, write_json
from passhat.cli.metrics import LangOption, report_lang
from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord
from passhat.report.experiment import experiment_dict, print_experiment_report
from passhat.report.i18n import t
from passhat.report.terminal import ROWS_SHOWN
from passhat.store import DB_ENV, Store, default_db_path

if TYPE_CHECKING:
    from passhat.agents import LoadedAgent
    from passhat.executors import Executor
    from passhat.models.base import Model
    from passhat.runner import RunOptions
    from passhat.suite import Suite

# The runner, agents, providers and suites (pydantic, yaml) are imported inside the
# commands that use them, so `passhat metrics` and `passhat report` start faster.

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help=f"SQLite store. Default: ${DB_ENV} if set, else ./passhat.db.",
        show_default=False,
    ),
]
ExperimentArg = Annotated[str, typer.Argument(help="Experiment id, unique name, or 'latest'.")]
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
        metavar="tcp://HOST:PORT",
        help="A running `dask scheduler` for --executor dask. Default: a local cluster "
        "of worker processes on 127.0.0.1.",
        show_default=False,
    ),
]


def open_store(db: Path | None, *, create: bool = False, read_only: bool = False) -> Store:
    """The store at --db, $PASSHAT_DB or ./passhat.db; only `run` creates one; reading
    commands open it read-only, so they work on a read-only file or mount."""
    return Store(db or default_db_path(), create=create, read_only=read_only)


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
        help="Retries of transient model errors per call. Default: 4 (resume: the experiment's)."
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
    from passhat.agents import resolve_agent
    from passhat.models import model_from_params

    prompt = params.get("prompt_file")
    agent = resolve_agent(agent_spec, prompt=prompt, suite_dir=suite.path)
    model = model_from_params(model_spec, params, suite.path) if model_spec else None
    return agent, model


def _warn_uncovered(model: Model | None, suite: Suite, k: int, language: str) -> None:
    """A replay cassette that lacks first answers: say so before the runs error."""
    from passhat.models.replay import ReplayModel

    if not isinstance(model, ReplayModel):
        return
    answers = model.cassette.answers
    gaps = [(c.id, i) for c in suite.cases for i in range(1, k + 1) if (c.id, i, 0) not in answers]
    if gaps:
        cases = list(dict.fromkeys(case for case, _ in gaps))
        shown = ", ".join(cases[:5]) + (", ..." if len(cases) > 5 else "")
        message = t(
            "cassette_gaps",
            language,
            cassette=model.path.name,
            n=len(gaps),
            total=len(suite.cases) * k,
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
    from passhat.runner import plan, run_experiment

    todo = len(plan(experiment, store.recorded(experiment.id)))
    todo += len(store.errored(experiment.id)) if rerun_errored else 0
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
            t("interrupted", lang, done=done, ref=experiment.name or experiment.id),
            style="yellow",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(143 if terminated else 130) from None
    _warn_left_missing(executor)


def _terminate(main: asyncio.Task[None], terminated: list[int]) -> None:
    terminated.append(signal.SIGTERM)
    main.cancel()


def _warn_left_missing(executor: Executor | None) -> None:
    """Runs an executor gave up on (their workers kept dying): missing, never counted."""
    left = list(getattr(executor, "left_missing", None) or [])
    if left:
        shown = ", ".join(f"{case} run {index}" for case, index in left[:10])
        more = f" and {len(left) - 10} more" if len(left) > 10 else ""
        err_console.print(
            f"{len(left)} runs were left missing because their workers kept dying: "
            f"{shown}{more}; `passhat resume` runs them again",
            style="yellow",
            markup=False,
            soft_wrap=True,
        )


def _executor(spec: str, scheduler: str | None, suite: Suite) -> Executor:
    from passhat.executors import resolve_executor

    return resolve_executor(spec, scheduler=scheduler, suite_dir=suite.path)


def _report_and_exit(
    store: Store, experiment: ExperimentRecord, strict: bool, quiet: bool, lang: str
) -> None:
    runs = store.runs(experiment.id, full=False)
    if not quiet:
        console.print()
    accounting = print_experiment_report(console, experiment, runs, lang=lang)
    if strict and not accounting.complete:
        raise typer.Exit(1)


@app.command()
def run(
    suite_dir: Annotated[
        Path, typer.Argument(metavar="SUITE", help="Suite folder (suite.yaml, cases/).")
    ],
    agent: Annotated[
        str | None, typer.Option(help="Built-in agent name or package.module:name.")
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
        typer.Option(help="provider:name — replay:CASSETTE, openai:MODEL, anthropic:MODEL."),
    ] = None,
    k: Annotated[
        int | None, typer.Option("-k", "--k", help="Runs per case. Default: the suite's.")
    ] = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Run only this case (repeatable).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Runs in flight at once.")] = 8,
    timeout: Annotated[
        float, typer.Option(help="Seconds one run may take before it is errored.")
    ] = 300.0,
    retries: Annotated[int, typer.Option(help="Retries of transient model errors per call.")] = 4,
    retry_max_wait: RetryMaxWaitOption = None,
    call_timeout: CallTimeoutOption = None,
    seed: Annotated[
        int | None, typer.Option(help="Experiment seed (per-run seeds derive from it).")
    ] = None,
    name: Annotated[str | None, typer.Option(help="A unique name for the experiment.")] = None,
    prompt: Annotated[
        Path | None, typer.Option(help="Prompt template file for the clarifier.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Model endpoint, e.g. http://127.0.0.1:8000/v1.")
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Output token limit per model call.")
    ] = None,
    model_seed: Annotated[
        int | None, typer.Option(help="Seed passed to the model provider.")
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option(help="Model turns per run. Default: the suite's.")
    ] = None,
    db: DbOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any requested run was not counted.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    lang: LangOption = None,
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
    model_spec = model or suite.defaults.model
    loaded, provider = _build(suite, agent_spec, model_spec, params)
    engine = _executor(executor, scheduler, suite)
    _warn_uncovered(provider, suite, k, language)
    experiment = new_experiment(
        suite, loaded, model_spec, provider, k=k, params=params, seed=seed, name=name
    )
    experiment = _with_tools(experiment, suite)
    options = _options(params, concurrency)
    with open_store(db, create=True) as store:
        store.add_secrets(secret_values(provider))
        store.create_experiment(experiment)
        if not quiet:
            start = t(
                "run_start",
                language,
                id=experiment.id,
                cases=len(suite.cases),
                k=k,
                runs=len(suite.cases) * k,
                path=store.path,
            )
            err_console.print(start, markup=False)
        _execute(store, experiment, suite, loaded, provider, options, quiet, language, engine)
        _report_and_exit(store, experiment, strict, quiet, language)


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
        tools = tuple(t.name for t in make_environment(suite, suite.cases[0]).tools)
    return replace(experiment, tools=tools)


@app.command()
def resume(
    experiment_ref: ExperimentArg,
    k: Annotated[
        int | None,
        typer.Option("-k", "--k", help="Raise the requested k and run the new indices too."),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Runs in flight at once.")] = 8,
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
    lang: LangOption = None,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
) -> None:
    """Run exactly the missing runs of an experiment (and new indices with a larger k).

    Timeout and every model parameter are the experiment's own: a resumed run means
    the same as the runs before it. Only how hard a model call is tried may change
    (--retries, --retry-max-wait, --call-timeout), e.g. after a model server outage."""
    from passhat.runner import check_resumable, new_experiment, plan
    from passhat.suite import load_suite

    language = report_lang(lang)
    _check_retry(retries, retry_max_wait, call_timeout)
    with open_store(db) as store:
        stored = store.experiment(experiment_ref)
        if stored.kind != "run":
            raise InputError(
                f"experiment {stored.name or stored.id} is {stored.kind}, not run by passhat: "
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
        _warn_uncovered(provider, suite, max(k or 0, stored.k_requested), language)
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
        if k is not None and k > stored.k_requested:
            store.set_k(stored.id, k)
            stored = store.experiment(stored.id)
        options = _options(params, concurrency, retries, retry_max_wait)
        if call_timeout is not None:
            _set_call_timeout(provider, call_timeout)
        if break_lease:
            _break_lease(store, stored)
        todo = len(plan(stored, store.recorded(stored.id)))
        todo += len(store.errored(stored.id)) if errored else 0
        if not quiet:
            err_console.print(t("runs_to_do", language, id=stored.id, n=todo), markup=False)
        _execute(
            store,
            stored,
            suite,
            loaded,
            provider,
            options,
            quiet,
            language,
            engine,
            rerun_errored=errored,
        )
        _report_and_exit(store, stored, strict, quiet, language)


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


@app.command()
def report(
    experiment_ref: ExperimentArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", metavar="FILE", help="Also write a self-contained HTML report to FILE."
        ),
    ] = None,
    lang: LangOption = None,
    forecast_m: Annotated[
        int,
        typer.Option(
            "--forecast", "-m", metavar="M", help="Forecast the chance the next M runs all pass."
        ),
    ] = 10,
    show_all: Annotated[
        bool, typer.Option("--all", help=f"List every case (default: at most {ROWS_SHOWN}).")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any requested run was not counted.")
    ] = False,
    db: DbOption = None,
) -> None:
    """The three numbers with intervals, the accounting, item stability and tool use."""
    language = report_lang(lang)
    if forecast_m < 1:
        raise InputError(f"--forecast is {forecast_m}; forecast at least 1 run (default 10)")
    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        runs = store.runs(experiment.id, full=html is not None)
    if html is not None:
        from passhat.report.html import write_html

        try:
            written = write_html(html, experiment, runs, lang=language)
        except OSError as error:
            raise InputError(f"--html {html}: cannot write ({error.strerror})") from None
        err_console.print(t("wrote", language, path=written), markup=False, soft_wrap=True)
    if as_json:
        data = experiment_dict(experiment, runs, forecast_m=forecast_m)
        write_json(data)
        complete = data["dataset"] is not None and data["dataset"]["complete"]
    else:
        accounting = print_experiment_report(
            console,
            experiment,
            runs,
            forecast_m=forecast_m,
            limit=None if show_all else ROWS_SHOWN,
            lang=language,
        )
        complete = accounting.complete
    if strict and not complete:
        raise typer.Exit(1)


@app.command()
def show(
    experiment_ref: ExperimentArg,
    case_id: Annotated[str, typer.Argument(metavar="CASE", help="Case id.")],
    run_index: Annotated[int, typer.Argument(metavar="RUN", help="Run index (1-based).")],
    db: DbOption = None,
) -> None:
    """One run whole: transcript, tool calls, final state and score."""
    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        r = store.run(experiment.id, case_id, run_index)
    status_style = {"passed": "green", "failed": "red", "errored": "bold red"}[r.status]
    head = Text.assemble(
        (f"{r.case_id} run {r.run_index}: ", "bold"),
        (r.status, status_style),
        f"  ·  {r.duration_s:.2f} s  ·  tokens in {r.input_tokens} out {r.output_tokens}"
        f"  ·  seed {r.seed}  ·  retries {len(r.retries)}",
        f"  ·  model answers {r.model_source}" if r.model_source else "",
    )
    console.print(head)
    if r.error_type:
        console.print(Text(f"{r.error_type}: {r.error_message}", style="red"))
    if r.stderr:
        from passhat.agents.command import printable

        console.print(Panel(Text(printable(r.stderr)), title="stderr (tail)", title_align="left"))
    for i, message in enumerate(r.transcript):
        body = Text(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            body.append(f"\n→ {call['name']}(", style="cyan")
            body.append(json.dumps(call.get("arguments"), ensure_ascii=False))
            body.append(")", style="cyan")
        title = Text(f"{i}: {message['role']}")
        if message.get("name"):
            title.append(f" {message['name']}")
        if message.get("is_error"):
            title.append(" (error)", style="red")
        console.print(Panel(body, title=title, title_align="left"))
    console.print(Text("tool calls", style="bold"))
    for call in r.tool_calls:
        outcome = f"error: {call['error']}" if call.get("error") else "ok"
        console.print(
            Text(
                f"  {call['tool']} {json.dumps(call.get('arguments'), ensure_ascii=False)} → {outcome}"
            )
        )
    console.print(Text("final state", style="bold"))
    console.print(JSON.from_data(r.final_state))
    console.print(Text("score", style="bold"))
    console.print(JSON.from_data(r.score))


@app.command("list")
def list_experiments(db: DbOption = None) -> None:
    """The experiments in the store."""
    with open_store(db, read_only=True) as store:
        experiments = store.experiments()
        recorded = {e.id: len(store.recorded(e.id)) for e in experiments}
    table = Table(title=f"experiments in {db or default_db_path()}", title_justify="left")
    for column in ("id", "name", "created", "suite", "agent", "model", "k", "runs"):
        table.add_column(column)
    for e in experiments:
        planned = e.k_requested * len(e.case_ids)
        table.add_row(
            e.id,
            Text(e.name or ""),
            e.created_at[:19],
            Text(e.suite_name),
            Text(e.agent),
            Text(e.model),
            str(e.k_requested),
            f"{recorded[e.id]}/{planned}",
        )
    console.print(table)


@app.command()
def cassette(
    experiment_ref: ExperimentArg,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Cassette file to write (.jsonl).")
    ],
    db: DbOption = None,
) -> None:
    """Turn a finished experiment into a replay cassette: regrade it later without a call."""
    from passhat.models.replay import cassette_from_runs

    with open_store(db, read_only=True) as store:
        experiment = store.experiment(experiment_ref)
        runs = store.runs(experiment.id)
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
    tape = cassette_from_runs(meta, ((r.case_id, r.run_index, r.transcript) for r in runs))
    try:
        tape.dump(output)
    except OSError as error:
        raise InputError(f"-o {output}: cannot write ({error.strerror})") from None
    console.print(
        Text(
            f"{output}: {len(tape.answers)} model answers from {len(runs)} runs; replay with "
            f"--model replay:{output}"
        ),
        soft_wrap=True,
    )
