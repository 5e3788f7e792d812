"""What an experiment is made of: the suite, agent, model, scorer and environment specs
as parameters, the runs to make, the executor and the store's lease, checked and built
into `_Made` (shared by `evaluate` and `resume`) and the `_Setup` a round needs.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.errors import ConfigError, InputError, PasshatError
from passhat.evaluation.events import CassetteGaps, Events
from passhat.records import ExperimentRecord
from passhat.results import WorkItem
from passhat.store import Store, default_db_path

if TYPE_CHECKING:
    from passhat.agents import LoadedAgent
    from passhat.execution import RunOptions
    from passhat.executors import Executor
    from passhat.models.base import Model
    from passhat.rounds import Rounds
    from passhat.suite import Suite
    from passhat.tamper import Look, SuiteGuard


AgentLike = Any
"""An agent: a spec (`clarifier`, `package.module:name`, `file.py:name`, a command
agent's spec), an async or plain callable taking (input, env, ctx), or a LoadedAgent."""

ModelLike = Any
"""A model: a spec (`replay:CASSETTE.jsonl`, `openai:NAME`, `anthropic:NAME`) or an
object of the `passhat.Model` protocol."""


@dataclass(frozen=True)
class _Setup:
    """Everything a round needs, built and checked before the first run."""

    store: Store
    suite: Suite
    agent: LoadedAgent
    model: Model | None
    options: RunOptions
    executor: Executor
    events: Events
    guard: SuiteGuard | None = None
    """The experiment's watch on its suite's files over all its rounds (`_guard`)."""
    left: list[WorkItem] = field(default_factory=list)


# --- what an experiment is made of


def _given(**values: Any) -> dict[str, Any]:
    """The values given (not None), by name: what an experiment records only when given,
    so the fingerprints of experiments without them stay as they were."""
    return {name: value for name, value in values.items() if value is not None}


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
    params.update(
        _given(
            prompt_file=str(Path(prompt).resolve()) if prompt is not None else None,
            base_url=base_url,
            retry_max_wait_s=retry_max_wait,
            call_timeout_s=call_timeout,
        )
    )
    return params


def _options(
    params: dict[str, Any],
    concurrency: int,
    retries: int | None = None,
    retry_max_wait: float | None = None,
) -> RunOptions:
    """How runs execute; `retries` and `retry_max_wait` (resume) override the experiment's."""
    from passhat.agents import RetryPolicy
    from passhat.execution import RunOptions

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


def _load_suite(
    suite: str | Path | Suite, environment: Any = None, scorers: Sequence[Any] | None = None
) -> tuple[Suite, Look | None]:
    """The suite, with `environment` and `scorers` in place of suite.yaml's, and its
    folder's files as they were before the load read them (for the experiment's guard,
    `_guard`; None for a Suite given loaded)."""
    from passhat import tamper
    from passhat.suite import Suite, load_suite

    if isinstance(suite, Suite):
        if environment is not None or scorers is not None:
            raise InputError(
                "environment= and scorers= apply to a suite folder; give its path, not a "
                "loaded Suite"
            )
        return suite, None
    load = None
    if environment is not None or scorers is not None:  # the guard loads it again alike
        load = functools.partial(
            load_suite,
            environment=None if environment is None else _environment_spec(environment),
            scorers=None if scorers is None else [_scorer_spec(s) for s in scorers],
        )
    before = tamper.look(suite, load)
    return (load or load_suite)(Path(suite)), before


def _importable(obj: Any, what: str) -> str:
    """`module:qualname` of a class or function that can be imported back from there
    (in this process: `__main__` included), as suite.yaml names one."""
    import importlib

    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module_name or not qualname or "<locals>" in qualname:
        raise ConfigError(
            f"{what} {obj!r} cannot be named by an import path; define it at the top "
            "level of a module (or name it file.py:Name in suite.yaml)"
        )
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not obj:
        raise ConfigError(f"{what} {obj!r} is not {module_name}:{qualname}; define it there")
    return f"{module_name}:{qualname}"


def _environment_spec(environment: Any) -> str:
    return environment if isinstance(environment, str) else _importable(environment, "environment")


def _scorer_spec(scorer: Any) -> Any:
    """A scorer as suite.yaml writes it: a mapping as it is, a function as `custom`."""
    if isinstance(scorer, dict):
        return scorer
    if isinstance(scorer, str):
        return {"custom": scorer}
    return {"custom": _importable(scorer, "scorer")}


def _select(suite: Suite, cases: Sequence[str]) -> Suite:
    if isinstance(cases, str):
        raise InputError(f"cases={cases!r} is one string; give a list of case ids: [{cases!r}]")
    if not cases:
        return suite
    chosen = tuple(suite.case(c) for c in dict.fromkeys(cases))
    return replace(suite, cases=chosen)


def _agent(agent: AgentLike, prompt: str | None, suite: Suite) -> LoadedAgent:
    """The agent: by spec, or a Python object named by where it is defined."""
    from passhat.agents import LoadedAgent, check_agent, resolve_agent

    if isinstance(agent, LoadedAgent):
        return agent
    if isinstance(agent, str):
        return resolve_agent(agent, prompt=prompt, suite_dir=suite.path)
    if prompt is not None:
        raise ConfigError("prompt= is for the clarifier agent; a Python agent has no template")
    spec, source = _object_spec(agent)
    check_agent(spec, agent)
    return LoadedAgent(spec, agent, getattr(agent, "prompt_version", None), source)


def _object_spec(obj: Any) -> tuple[str, str | None]:
    """`module:qualname` of a Python object (what `resume` imports again when the object
    is where the name says), and its module's source hash (editing it changes the
    fingerprint)."""
    from passhat.imports import module_source_hash

    target = obj if hasattr(obj, "__qualname__") else type(obj)
    module_name = getattr(target, "__module__", None) or "__main__"
    qualname = getattr(target, "__qualname__", type(obj).__name__)
    module = sys.modules.get(module_name)
    source = module_source_hash(module) if module is not None else None
    return f"{module_name}:{qualname}", source


def _model(model: ModelLike, params: dict[str, Any], suite: Suite) -> tuple[str, Model | None]:
    """(spec as recorded, the model); "" and None for an agent that needs none."""
    from passhat.models import model_from_params

    if model is None or model == "":
        return "", None
    if isinstance(model, str):
        return model, model_from_params(model, params, suite.path)
    if not callable(getattr(model, "complete", None)):
        raise ConfigError(
            f"model {model!r} is neither a spec (provider:name) nor a passhat.Model "
            "(an object with an async complete(...) method)"
        )
    return f"python:{model.name}", model


def _build(
    suite: Suite, agent: AgentLike, model: ModelLike, params: dict[str, Any]
) -> tuple[LoadedAgent, str, Model | None]:
    """The agent and model an experiment's parameters describe (run and resume alike)."""
    from passhat.agents import BUILTIN

    prompt = params.get("prompt_file")
    loaded = _agent(agent, prompt, suite)
    if not model and loaded.spec in BUILTIN:
        raise ConfigError(
            f"agent {loaded.spec} needs a model; give --model provider:name (e.g. "
            "openai:gpt-4o-mini) or defaults.model in suite.yaml"
        )
    spec, built = _model(model, params, suite)
    return loaded, spec, built


@dataclass(frozen=True)
class _Made:
    """What an experiment's suite and parameters build (run and resume alike)."""

    suite: Suite
    agent: LoadedAgent
    model_spec: str
    model: Model | None
    params: dict[str, Any]
    executor: Executor

    def experiment(self, k: int, seed: int | None, name: str | None = None) -> ExperimentRecord:
        """The experiment record they make: `resume` compares it with the stored one."""
        from passhat.runner import new_experiment

        return new_experiment(
            self.suite,
            self.agent,
            self.model_spec,
            self.model,
            k=k,
            params=self.params,
            seed=seed,
            name=name,
        )

    def setup(
        self, store: Store, options: RunOptions, events: Events, guard: SuiteGuard | None
    ) -> _Setup:
        return _Setup(
            store, self.suite, self.agent, self.model, options, self.executor, events, guard
        )


def _made(
    suite: Suite,
    agent: AgentLike,
    model: ModelLike,
    params: dict[str, Any],
    executor: str | Executor,
    scheduler: str | None,
) -> _Made:
    loaded, model_spec, provider = _build(suite, agent, model, params)
    engine = _executor(executor, scheduler, suite, loaded)
    return _Made(suite, loaded, model_spec, provider, params, engine)


def _warn_gaps(made: _Made, runs: Collection[WorkItem], events: Events) -> None:
    gaps = cassette_gaps(made.agent, made.model, runs)
    if gaps is not None:
        events.cassette_gaps(gaps)


def _executor(
    executor: str | Executor, scheduler: str | None, suite: Suite, agent: LoadedAgent
) -> Executor:
    """The executor, with the agent it is to run checked (an executor with a
    `check_agent(spec)` method refuses what it cannot run: Dask, a command agent)."""
    from passhat.executors import resolve_executor

    if not isinstance(executor, str):
        if not callable(getattr(executor, "run", None)):
            raise ConfigError(
                f"executor {executor!r} has no run(job, todo) method; see passhat.executors.base"
            )
        engine = executor
    else:
        engine = resolve_executor(executor, scheduler=scheduler, suite_dir=suite.path)
    check = getattr(engine, "check_agent", None)
    if callable(check):
        check(agent.spec)
    return engine


def _with_tools(experiment: ExperimentRecord, suite: Suite) -> ExperimentRecord:
    from passhat.preflight import suite_tools

    # a user's setup() or close() that fails here fails in the runs too, each an errored run
    return replace(experiment, tools=suite_tools(suite) or ())


def _check_replay_tools(model: Model | None, tools: Sequence[str]) -> None:
    """A replay cassette whose answers call tools the suite does not have is refused
    before anything is written, as `passhat check` refuses it."""
    from passhat.models.replay import CassetteError, ReplayModel, check_cassette

    if isinstance(model, ReplayModel) and tools:
        problems = check_cassette(model.path, tools=tools).problems
        if problems:
            raise CassetteError(problems)


def _all_runs(suite: Suite, k: int) -> Collection[WorkItem]:
    from passhat.runner import Plan  # made as read: not N x k tuples in memory

    return Plan(tuple(c.id for c in suite.cases), k, case_major=True)


def cassette_gaps(
    agent: LoadedAgent, model: Model | None, runs: Collection[WorkItem]
) -> CassetteGaps | None:
    """A replay cassette that lacks first answers for runs about to be made (runs that
    will not be made are none of its business).

    Only for a built-in agent, which always asks the model: a user's agent may never
    ask it, and a warning that its runs will error would be false (if it does ask, the
    runs without an answer are listed as errored in the report)."""
    from passhat.agents import BUILTIN
    from passhat.models.replay import ReplayModel

    if agent.spec not in BUILTIN or not isinstance(model, ReplayModel):
        return None
    answers = model.cassette.answers
    gaps = tuple((case, i) for case, i in runs if (case, i, 0) not in answers)
    return CassetteGaps(model.path.name, gaps, len(runs)) if gaps else None


def _open(db: str | Path | None, *, create: bool) -> Store:
    return Store(Path(db) if db is not None else default_db_path(), create=create)


def _guard(store: Store, made: _Made, before: Look | None = None) -> SuiteGuard | None:
    """What no run may see or keep: the store stays out of every sandbox's view, and the
    provider's key and every value handed through `pass_env` are blanked from every record
    (by value, whatever the variable's name). Returns the experiment's watch on the
    suite's files, noted as they were `before` the load read them (`_load_suite`): a run
    graded after they change is errored (tamper.py). `_make_runs` closes it."""
    from passhat import tamper
    from passhat.agents.protected import protect
    from passhat.models import secret_values

    protect(store.path)
    _check_view(made.agent, made.params)
    store.add_secrets(secret_values(made.model))
    handed = getattr(made.agent.agent, "secret_values", None)
    if callable(handed):
        store.add_secrets(handed())
    return tamper.watch(made.suite, before)


def _check_view(loaded: LoadedAgent, params: dict[str, Any]) -> None:
    """A command agent's sandbox that cannot be made (a write: path holding the suite, a
    path that does not exist, a look for answers out of descriptors or memory: a run's
    AgentProcessError) is one ConfigError before anything is stored."""
    from passhat.agents.streams import AgentProcessError

    check = getattr(loaded.agent, "check_view", None)
    if callable(check) and params.get("isolation", "namespace") == "namespace":
        try:
            check(params)
        except AgentProcessError as error:
            raise ConfigError(str(error).replace("the run was", "nothing was")) from None


def check_descriptors(made: _Made, concurrency: int, here: bool) -> None:
    """Refuse, before anything runs, more command-agent runs at once (`here`: in this
    process) than passhat's open-file limit holds at CONNECTIONS_FLOOR connections each:
    past it, runs are errored for want of a descriptor (serve/endpoints.connections_for)."""
    from passhat.serve import endpoints

    if not here or not callable(getattr(made.agent.agent, "check_view", None)):
        return  # an in-process agent holds no connections to passhat; a worker shares its own
    limit = endpoints.descriptor_limit()
    most = endpoints.most_at_once(limit)
    if concurrency > most:
        fix = f"lower --concurrency to {most} or raise" if most else "raise"
        raise InputError(
            f"--concurrency {concurrency} is more command-agent runs at once than passhat's "
            f"limit of {limit:,} open files holds ({most} at most, {endpoints.CONNECTIONS_FLOOR} "
            f"connections each); {fix} the limit (`ulimit -n`, its hard limit)"
        )


def _sandbox(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """`sandbox=` (--agent-read, --agent-write, --agent-host, --agent-write-limit) as the
    recorded parameter."""
    if not given:
        return {}
    from passhat.agents.command import check_hosts

    if not isinstance(given, Mapping) or set(given) - {"read", "write", "hosts", "write_limit"}:
        raise InputError(
            'sandbox= takes {"read": [...], "write": [...], "hosts": [...], "write_limit": SIZE}'
        )
    found: dict[str, Any] = {}
    for key in ("read", "write", "hosts"):
        values = list(given.get(key) or [])
        if not all(isinstance(v, str) and v for v in values):
            raise InputError(f"sandbox[{key!r}]: give a list of strings")
        if key != "hosts":
            values = [os.path.abspath(v) for v in values]
            missing = [v for v in values if not os.path.exists(v)]
            if missing:
                raise InputError(f"--agent-{key} {missing[0]}: no such path; fix it or drop it")
        if values:
            found[key] = values
    check_hosts(found.get("hosts"), "--agent-host")
    if given.get("write_limit") is not None:  # bytes, recorded (agents/writes.py)
        from passhat.agents.writes import parse_size, settable

        try:
            found["write_limit"] = settable(parse_size(given["write_limit"]))
        except ValueError as error:
            raise InputError(str(error)) from None
    return {"sandbox": found} if found else {}


ISOLATION_ENV = "PASSHAT_ISOLATION"
"""The isolation level of runs when --isolation (`isolation=`) does not give one."""


def _sealing(
    agent_spec: object, isolation: str | None, token_budget: int | None, here: bool = True
) -> dict[str, Any]:
    """--isolation and --token-budget as parameters (recorded only when given), checked:
    a command agent's level must be had on this machine where `here` (its runs are made
    in this process; an executor that checks its own workers says not). Without
    --isolation, $PASSHAT_ISOLATION gives the level when set (a machine's own default: a
    container with no user namespaces, a checkout other users cannot read)."""
    from passhat.agents import is_command_spec
    from passhat.agents import isolation as levels

    params: dict[str, Any] = {}
    if isolation is None:
        isolation = os.environ.get(ISOLATION_ENV) or None
    if token_budget is not None:
        if token_budget < 1:
            raise InputError(f"--token-budget is {token_budget}; give a run at least 1 token")
        params["token_budget"] = token_budget
    if isolation is not None:
        try:
            params["isolation"] = levels.check_level(isolation)
        except ValueError as error:
            raise InputError(str(error)) from None
    if here and isinstance(agent_spec, str) and is_command_spec(agent_spec):
        reason = levels.unavailable(levels.check_level(params.get("isolation", levels.DEFAULT)))
        if reason is not None:
            raise InputError(reason)
    return params


def _baseline_setup(
    store: Store,
    adaptive: Rounds | None,
    executor: str | Executor,
    scheduler: str | None,
    concurrency: int,
    events: Events,
) -> _Setup | None:
    """What re-running the baseline alongside needs (the anytime rule's default), built
    as `resume` builds a stored experiment's agent and checked before anything runs;
    None when the rounds keep the baseline fixed."""
    from passhat.runner import check_resumable

    base = adaptive.reruns(store) if adaptive is not None else None
    if base is None:
        return None
    try:
        whole, before = _load_suite(base.suite_path)
        suite = _select(whole, list(base.case_ids))
        made = _made(suite, base.agent, base.model, dict(base.params), executor, scheduler)
        guard = _guard(store, made, before)
        check_resumable(base, made.experiment(base.k_requested, base.seed))
    except PasshatError as error:
        raise InputError(
            f"--spending anytime re-runs the baseline {base.name or base.id} alongside, and "
            f"it cannot be run again: {error}; give --no-rerun-baseline "
            f"(rerun_baseline=False) to keep it fixed"
        ) from None
    return made.setup(store, _options(made.params, concurrency), events, guard)
