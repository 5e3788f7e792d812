"""The calls: `evaluate` and `resume` (and their async forms) check everything, build the
experiment (or read it back), take its lease, run the rounds and read the experiment
back as `passhat.results.Experiment`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.errors import InputError
from passhat.evaluation.checks import (
    _check_base_url,
    _check_options,
    check_k,
    check_model_params,
    check_retry,
    check_seed,
    checked,
)
from passhat.evaluation.events import Events
from passhat.evaluation.planning import (
    AgentLike,
    ModelLike,
    _all_runs,
    _baseline_setup,
    _check_replay_tools,
    _given,
    _guard,
    _load_suite,
    _made,
    _open,
    _options,
    _params,
    _sandbox,
    _sealing,
    _select,
    _warn_gaps,
    _with_tools,
    check_descriptors,
)
from passhat.evaluation.running import _make_runs, _read_back
from passhat.results import Experiment, Outcome

if TYPE_CHECKING:
    from passhat.executors import Executor
    from passhat.gate import Requirement
    from passhat.models.base import Model
    from passhat.rounds import Rounds
    from passhat.suite import Suite


@checked
def evaluate(
    suite: str | Path | Suite,
    *,
    agent: AgentLike = None,
    model: ModelLike = None,
    k: int | None = None,
    cases: Sequence[str] | None = None,
    db: str | Path | None = None,
    concurrency: int = 8,
    executor: str | Executor = "local",
    scheduler: str | None = None,
    timeout: float = 300.0,
    retries: int = 4,
    retry_max_wait: float | None = None,
    call_timeout: float | None = None,
    seed: int | None = None,
    name: str | None = None,
    prompt: str | Path | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    model_seed: int | None = None,
    max_turns: int | None = None,
    environment: Any = None,
    scorers: Sequence[Any] | None = None,
    adaptive: Rounds | None = None,
    events: Events | None = None,
    isolation: str | None = None,
    token_budget: int | None = None,
    sandbox: Mapping[str, Any] | None = None,
    require: Sequence[str | Requirement] | str | None = None,
) -> Experiment:
    """Create an experiment and run every case k times, each from a fresh start; return
    it read back from the store (`passhat run` is this call and a print).

    `suite` is a suite folder (or a loaded `Suite`); `agent`, `model` and `k` default
    to the suite's. `agent` and `model` are specs as on the command line or Python
    objects; `cases` picks case ids; `db` is the SQLite store (default: $PASSHAT_DB,
    else ./passhat.db). `environment` (a class or spec) and `scorers` (mappings as
    suite.yaml writes them, or functions: custom scorers) replace the suite's.
    `isolation` ("namespace", the default, or "process") seals a command agent's runs,
    `sandbox` ({"read": [paths], "write": [folders], "hosts": ["name:port"], "write_limit":
    "512MiB"}) adds to what a sandboxed run sees and reaches, and bounds what it writes to
    its write: folders, `token_budget` caps the model tokens one run may
    spend and `max_turns` its model calls (a run stopped there is counted, marked
    `limit`; docs/command-agents.md). `require` ("pass^k>=0.8", or `passhat.Requirement`s)
    is judged by the returned experiment's `gate()` and `exit_code()`. Bad input raises a
    `PasshatError` before any run starts.
    """
    from passhat.agents.isolation import seal_this_process
    from passhat.executors.base import checks_isolation

    seal_this_process()  # from the start: the provider's key is in this process's environment
    rules = _requirements(require)
    events = events or Events()
    whole, before = _load_suite(suite, environment, scorers)
    loaded_suite = _select(whole, cases or [])
    k = loaded_suite.defaults.k if k is None else k
    _check_options(k, concurrency, max_turns, timeout, retries)
    check_seed(seed)
    check_retry(retries, retry_max_wait, call_timeout)
    check_model_params(temperature, max_tokens)
    _check_base_url(base_url)
    if adaptive is not None:
        adaptive.check(len(loaded_suite.cases))
        adaptive.check_decidable(adaptive.plan(k), len(loaded_suite.cases))
    params = _params(
        loaded_suite,
        _given(temperature=temperature, max_tokens=max_tokens, seed=model_seed),
        max_turns=max_turns,
        prompt=Path(prompt) if prompt is not None else None,
        base_url=base_url,
        timeout=timeout,
        retries=retries,
        retry_max_wait=retry_max_wait,
        call_timeout=call_timeout,
    )
    wanted_agent = agent if agent is not None else loaded_suite.defaults.agent
    # a command agent's isolation and the proxy's token budget (docs/command-agents.md)
    here = not checks_isolation(executor)  # else each worker is asked, and refused by name
    params.update(_sealing(wanted_agent, isolation, token_budget, here))
    params.update(_sandbox(sandbox))
    wanted_model = model if model is not None else (loaded_suite.defaults.model or "")
    made = _made(loaded_suite, wanted_agent, wanted_model, params, executor, scheduler)
    check_descriptors(made, concurrency, here)
    _warn_gaps(made, _all_runs(loaded_suite, k), events)

    experiment = _with_tools(made.experiment(k, seed, name), loaded_suite)
    _check_replay_tools(made.model, experiment.tools)
    options = _options(params, concurrency)
    with _open(db, create=True) as store:
        guard = _guard(store, made, before)
        if adaptive is not None:
            adaptive = adaptive.resolved(store, experiment)
        base = _baseline_setup(store, adaptive, executor, scheduler, concurrency, events)
        store.create_experiment(experiment)
        events.started(experiment, len(loaded_suite.cases) * k, store.path)
        setup = made.setup(store, options, events, guard)
        return _make_runs(
            setup, experiment, adaptive, experiment.runs_requested, rules=rules, baseline=base
        )


@checked
def resume(
    experiment: str,
    *,
    db: str | Path | None = None,
    k: int | None = None,
    agent: AgentLike = None,
    model: ModelLike = None,
    concurrency: int = 8,
    errored: bool = False,
    retries: int | None = None,
    retry_max_wait: float | None = None,
    call_timeout: float | None = None,
    break_lease: bool = False,
    executor: str | Executor = "local",
    scheduler: str | None = None,
    environment: Any = None,
    scorers: Sequence[Any] | None = None,
    adaptive: Rounds | None = None,
    events: Events | None = None,
    require: Sequence[str | Requirement] | str | None = None,
) -> Experiment:
    """Run exactly the missing runs of a stored experiment (and new indices with a
    larger `k`; with `errored`, every errored run again as its next attempt).

    Timeout and every model parameter are the experiment's own: a resumed run means
    the same as the runs before it (a changed configuration is refused, saying what
    changed). `agent`, `model`, `environment` and `scorers` are needed only when they
    were Python objects or replaced the suite's: they must match what was recorded.
    `require` is as `evaluate`'s."""
    from passhat.agents.isolation import seal_this_process
    from passhat.executors.base import checks_isolation
    from passhat.runner import check_resumable, pending

    seal_this_process()
    rules = _requirements(require)
    events = events or Events()
    check_retry(retries, retry_max_wait, call_timeout)
    with _open(db, create=False) as store:
        stored = store.experiment(experiment)
        if stored.kind != "run":
            raise InputError(
                f"experiment {stored.name or stored.id} is of kind {stored.kind!r}, not a run: "
                "it has no agent to resume (import, audit or regrade again instead)"
            )
        if k is not None:
            check_k(k)
        if k is not None and k < stored.k_requested:
            raise InputError(
                f"-k is {k} but experiment {stored.name or stored.id} already asks for "
                f"{stored.k_requested}; k can only grow"
            )
        whole, before = _load_suite(stored.suite_path, environment, scorers)
        suite = _select(whole, list(stored.case_ids))
        params = dict(stored.params)
        wanted_agent = agent if agent is not None else stored.agent
        wanted_model = model if model is not None else stored.model
        made = _made(suite, wanted_agent, wanted_model, params, executor, scheduler)
        check_descriptors(made, concurrency, not checks_isolation(executor))
        guard = _guard(store, made, before)
        check_resumable(stored, made.experiment(stored.k_requested, stored.seed))
        if adaptive is not None:
            adaptive = adaptive.resolved(store, stored)
            adaptive.check(len(stored.case_ids))
            planned = adaptive.plan(max(k or 0, stored.k_requested))
            adaptive.check_decidable(planned, len(stored.case_ids))
        base = _baseline_setup(store, adaptive, executor, scheduler, concurrency, events)
        options = _options(params, concurrency, retries, retry_max_wait)
        if call_timeout is not None:
            _set_call_timeout(made.model, call_timeout)
        if break_lease:
            events.lease_broken(stored, store.break_lease(stored.id))
        # the lease before any change: a resume refused because another process runs the
        # experiment must leave the store as it found it (k included)
        with store.lease(stored.id):
            if k is not None and k > stored.k_requested:
                store.set_k(stored.id, k)
                stored = store.experiment(stored.id)
            todo = pending(store, stored, rerun_errored=errored)[0]
            if not todo and adaptive is None:
                return _read_back(store, stored, Outcome(0, require=rules))
            _warn_gaps(made, todo, events)
            events.resuming(stored, len(todo))
            setup = made.setup(store, options, events, guard)
            return _make_runs(
                setup,
                stored,
                adaptive,
                len(todo),
                rerun_errored=errored,
                rules=rules,
                baseline=base,
            )


async def evaluate_async(suite: str | Path | Suite, **options: Any) -> Experiment:
    """`evaluate` for a caller that already runs an event loop (a notebook, an async
    test): the experiment runs on its own loop in a worker thread, this one waits."""
    return await asyncio.to_thread(evaluate, suite, **options)


async def resume_async(experiment: str, **options: Any) -> Experiment:
    """`resume` for a caller that already runs an event loop (see `evaluate_async`)."""
    return await asyncio.to_thread(resume, experiment, **options)


def _set_call_timeout(model: Model | None, seconds: float) -> None:
    """After the fingerprint check: how long a call may take is not what a run means."""
    from passhat.models.provider import ProviderModel

    if isinstance(model, ProviderModel):
        model.timeout = seconds


def _requirements(require: Sequence[str | Requirement] | str | None) -> tuple[Requirement, ...]:
    """`require=` checked (passhat.gate.requirements); the gate's module only when given."""
    if require is None:
        return ()
    from passhat.gate import requirements

    return requirements(require)
