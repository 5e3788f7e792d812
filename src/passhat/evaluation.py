"""Running an experiment: the one library call behind `passhat run`, `passhat resume`,
the pytest plugin and a notebook.

    evaluate / resume   check everything, build the experiment (or read it back), take
                        its lease, then the rounds (one, or adaptive ones)
    _round              one event loop: the runner makes the missing runs and writes
                        each in one transaction; SIGTERM ends it as Ctrl-C does
    Experiment          what was stored, read back (passhat.results)

Nothing here prints. What a caller may want to show while runs are made (the plan,
each finished run, a cassette that lacks answers) comes through `Events`; what the
call did comes back as data (`Experiment.outcome`); an interrupted call raises
`Interrupted`, a `KeyboardInterrupt` that says how many runs were recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import os
import signal
import sys
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

from passhat.errors import ConfigError, InputError
from passhat.plain import did_you_mean
from passhat.records import ExperimentRecord, RunRecord
from passhat.results import Experiment, Outcome, WorkItem
from passhat.rounds import Rounds, adapt
from passhat.store import Store, default_db_path

if TYPE_CHECKING:
    from passhat.adaptive import Adaptive
    from passhat.agents import LoadedAgent
    from passhat.execution import RunOptions
    from passhat.executors import Executor
    from passhat.gate import Requirement
    from passhat.models.base import Model
    from passhat.suite import Suite

AgentLike = Any
"""An agent: a spec (`clarifier`, `package.module:name`, `file.py:name`, a command
agent's spec), an async or plain callable taking (input, env, ctx), or a LoadedAgent."""

ModelLike = Any
"""A model: a spec (`replay:CASSETTE.jsonl`, `openai:NAME`, `anthropic:NAME`) or an
object of the `passhat.Model` protocol."""


@dataclass(frozen=True)
class CassetteGaps:
    """A replay cassette lacks the first answer of runs about to be made: they will error."""

    cassette: str
    """The cassette's file name."""
    gaps: tuple[WorkItem, ...]
    """The runs without a first answer, in plan order."""
    runs: int
    """Runs about to be made."""

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(case for case, _ in self.gaps))


class Events:
    """What a caller hears while an experiment runs. Every method does nothing here;
    the CLI's subclass prints, a notebook's may draw a bar. A method that raises stops
    the experiment (the runs already recorded stay)."""

    def started(self, experiment: ExperimentRecord, runs: int, store: Path) -> None:
        """A new experiment was stored; `runs` are planned."""

    def resuming(self, experiment: ExperimentRecord, runs: int) -> None:
        """`resume` found `runs` to make (missing, new indices, errored ones again)."""

    def cassette_gaps(self, gaps: CassetteGaps) -> None:
        """Some of the runs about to be made have no answer on the replay cassette."""

    def lease_broken(self, experiment: ExperimentRecord, holder: str | None) -> None:
        """`break_lease`: the lease of `holder` (None: there was none) was broken."""

    def round_started(self, experiment: ExperimentRecord, runs: int) -> None:
        """A round of `runs` runs begins (one round, or one per adaptive look)."""

    def recorded(self, run: RunRecord) -> None:
        """A run was written to the store (its transaction committed)."""

    def round_ended(self, experiment: ExperimentRecord) -> None:
        """The round ended: finished, failed or interrupted."""

    def left_missing(self, runs: Sequence[WorkItem]) -> None:
        """An executor gave up on these runs (their workers kept dying): still missing."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the experiment. Every run finished before it is
    recorded; the runs in flight stay missing and `resume` makes them."""

    def __init__(self, experiment: ExperimentRecord, recorded: int, signum: int) -> None:
        super().__init__(f"experiment {experiment.name or experiment.id} interrupted")
        self.experiment = experiment
        self.recorded = recorded
        """Runs of the experiment in the store."""
        self.signum = signum
        """signal.SIGINT (Ctrl-C) or signal.SIGTERM."""


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
    left: list[WorkItem] = field(default_factory=list)


# --- checks: refuse, before anything runs, values that would turn into stored results


def check_k(k: int) -> None:
    """The one limit on k, before anything runs: the one reports enforce."""
    from passhat.accounting import MAX_K

    if k > MAX_K:
        raise InputError(
            f"-k is {k:,}, more than {MAX_K:,} runs per case (the most a report accounts); "
            "ask for fewer runs per case"
        )


def check_retry(
    retries: int | None, retry_max_wait: float | None, call_timeout: float | None
) -> None:
    if retries is not None and retries < 0:
        raise InputError(f"--retries is {retries}; use 0 for no retries")
    if retry_max_wait is not None and not retry_max_wait >= 0:
        raise InputError(f"--retry-max-wait is {retry_max_wait:g}; give seconds, 0 or more")
    if call_timeout is not None and not call_timeout > 0:
        raise InputError(f"--call-timeout is {call_timeout:g}; give a call more than 0 seconds")


def _check_options(
    k: int, concurrency: int, max_turns: int | None, timeout: float, retries: int
) -> None:
    if k < 1:
        raise InputError(f"-k is {k}; ask for at least 1 run per case")
    check_k(k)
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
) -> Suite:
    """The suite, with `environment` and `scorers` in place of suite.yaml's."""
    from passhat.suite import Suite, load_suite

    if isinstance(suite, Suite):
        if environment is not None or scorers is not None:
            raise InputError(
                "environment= and scorers= apply to a suite folder; give its path, not a "
                "loaded Suite"
            )
        return suite
    return load_suite(
        Path(suite),
        environment=None if environment is None else _environment_spec(environment),
        scorers=None if scorers is None else [_scorer_spec(s) for s in scorers],
    )


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

    def setup(self, store: Store, options: RunOptions, events: Events) -> _Setup:
        return _Setup(store, self.suite, self.agent, self.model, options, self.executor, events)


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


def _guard(
    store: Store, loaded: LoadedAgent, provider: Model | None, suite: Suite, params: dict[str, Any]
) -> None:
    """What no run may see or keep: the store stays out of every sandbox's view, and the
    provider's key and every value handed through `pass_env` are blanked from every record
    (by value, whatever the variable's name). The suite's files are noted as loaded:
    a run graded after they change is errored (tamper.py)."""
    from passhat import tamper
    from passhat.agents import sandbox
    from passhat.models import secret_values

    tamper.guard(suite)
    sandbox.protect(store.path)
    _check_view(loaded, params)
    store.add_secrets(secret_values(provider))
    handed = getattr(loaded.agent, "secret_values", None)
    if callable(handed):
        store.add_secrets(handed())


def _check_view(loaded: LoadedAgent, params: dict[str, Any]) -> None:
    """A command agent's sandbox that cannot be made (a write: path holding the suite, a
    path that does not exist) is one ConfigError before anything is stored."""
    check = getattr(loaded.agent, "check_view", None)
    if callable(check) and params.get("isolation", "namespace") == "namespace":
        check(params)


def _sandbox(given: Mapping[str, Sequence[str]] | None) -> dict[str, Any]:
    """`sandbox=` (--agent-read, --agent-write, --agent-host) as the recorded parameter."""
    from passhat.agents.command import check_hosts

    if not given:
        return {}
    if not isinstance(given, Mapping) or set(given) - {"read", "write", "hosts"}:
        raise InputError('sandbox= takes {"read": [...], "write": [...], "hosts": [...]}')
    found: dict[str, list[str]] = {}
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
    return {"sandbox": found} if found else {}


ISOLATION_ENV = "PASSHAT_ISOLATION"
"""The isolation level of runs when --isolation (`isolation=`) does not give one."""


def _sealing(agent_spec: object, isolation: str | None, token_budget: int | None) -> dict[str, Any]:
    """--isolation and --token-budget as parameters (recorded only when given), checked.
    Without --isolation, $PASSHAT_ISOLATION gives the level when set (a machine's own
    default: a container with no user namespaces, a checkout other users cannot read)."""
    from passhat.agents import isolation as levels
    from passhat.agents.command import is_command_spec

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
    if isinstance(agent_spec, str) and is_command_spec(agent_spec):
        reason = levels.unavailable(levels.check_level(params.get("isolation", levels.DEFAULT)))
        if reason is not None:
            raise InputError(reason)
    return params


# --- the calls: their keywords checked as a command's options are


P = ParamSpec("P")
R = TypeVar("R")

_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    **{
        name: ((int,), "a whole number, e.g. 5")
        for name in (
            "k",
            "concurrency",
            "retries",
            "seed",
            "max_tokens",
            "model_seed",
            "max_turns",
            "token_budget",
        )
    },
    **{
        name: ((int, float), "a number of seconds, e.g. 120")
        for name in ("timeout", "retry_max_wait", "call_timeout")
    },
    "temperature": ((int, float), "a number, e.g. 0.7"),
    **{name: ((bool,), "True or False") for name in ("errored", "break_lease")},
    **{name: ((str,), "text") for name in ("name", "scheduler", "base_url", "isolation")},
}
"""The keywords of `evaluate` and `resume` with a plain type: what a value must be, and
an example of one (None is always allowed: the default)."""


def checked(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with its keywords checked first: an unknown one (`case=` for `cases=`) or a
    value of the wrong type (`k="5"`) raises `InputError` naming the keyword and the
    fix, as a command line would, instead of a TypeError from deep inside."""
    signature = inspect.signature(fn)
    known = [name for name in signature.parameters if name != "options"]

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        unknown = [key for key in kwargs if key not in signature.parameters]
        if unknown:
            key = unknown[0]
            raise InputError(
                f"{fn.__name__}() has no keyword {key!r}{did_you_mean(key, known)}; it takes "
                + ", ".join(known)
            )
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise InputError(f"{fn.__name__}(): {error}") from None
        for key, value in bound.arguments.items():
            _check_kind(fn.__name__, key, value)
        return fn(*args, **kwargs)

    return wrapper


def _check_kind(call: str, key: str, value: Any) -> None:
    kind = _KINDS.get(key)
    if value is None or kind is None:
        return
    types, example = kind
    wrong = not isinstance(value, types) or (bool not in types and isinstance(value, bool))
    if wrong:
        raise InputError(
            f"{call}({key}={value!r}): {key} is {type(value).__name__}; give {example}"
        )


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
    sandbox: Mapping[str, Sequence[str]] | None = None,
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
    `sandbox` ({"read": [paths], "write": [folders], "hosts": ["name:port"]}) adds to what
    a sandboxed run sees and reaches, `token_budget` caps the model tokens one run may
    spend and `max_turns` its model calls (a run stopped there is counted, marked
    `limit`; docs/command-agents.md). `require` ("pass^k>=0.8", or `passhat.Requirement`s)
    is judged by the returned experiment's `gate()` and `exit_code()`. Bad input raises a
    `PasshatError` before any run starts.
    """
    from passhat.agents.isolation import seal_this_process
    from passhat.gate import requirements

    seal_this_process()  # from the start: the provider's key is in this process's environment
    rules = requirements(require)
    events = events or Events()
    loaded_suite = _select(_load_suite(suite, environment, scorers), cases or [])
    k = loaded_suite.defaults.k if k is None else k
    _check_options(k, concurrency, max_turns, timeout, retries)
    check_retry(retries, retry_max_wait, call_timeout)
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
    params.update(_sealing(wanted_agent, isolation, token_budget))
    params.update(_sandbox(sandbox))
    wanted_model = model if model is not None else (loaded_suite.defaults.model or "")
    made = _made(loaded_suite, wanted_agent, wanted_model, params, executor, scheduler)
    _warn_gaps(made, _all_runs(loaded_suite, k), events)

    experiment = _with_tools(made.experiment(k, seed, name), loaded_suite)
    _check_replay_tools(made.model, experiment.tools)
    options = _options(params, concurrency)
    with _open(db, create=True) as store:
        _guard(store, made.agent, made.model, loaded_suite, params)
        if adaptive is not None:
            adaptive = adaptive.resolved(store, experiment)
        store.create_experiment(experiment)
        events.started(experiment, len(loaded_suite.cases) * k, store.path)
        setup = made.setup(store, options, events)
        return _make_runs(setup, experiment, adaptive, experiment.runs_requested, rules=rules)


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
    from passhat.gate import requirements
    from passhat.runner import check_resumable, pending

    seal_this_process()
    rules = requirements(require)
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
        suite = _select(_load_suite(stored.suite_path, environment, scorers), list(stored.case_ids))
        params = dict(stored.params)
        wanted_agent = agent if agent is not None else stored.agent
        wanted_model = model if model is not None else stored.model
        made = _made(suite, wanted_agent, wanted_model, params, executor, scheduler)
        _guard(store, made.agent, made.model, suite, params)
        check_resumable(stored, made.experiment(stored.k_requested, stored.seed))
        if adaptive is not None:
            adaptive = adaptive.resolved(store, stored)
            adaptive.check(len(stored.case_ids))
            planned = adaptive.plan(max(k or 0, stored.k_requested))
            adaptive.check_decidable(planned, len(stored.case_ids))
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
            setup = made.setup(store, options, events)
            return _make_runs(
                setup, stored, adaptive, len(todo), rerun_errored=errored, rules=rules
            )


async def evaluate_async(suite: str | Path | Suite, **options: Any) -> Experiment:
    """`evaluate` for a caller that already runs an event loop (a notebook, an async
    test): the experiment runs on its own loop in a worker thread, this one waits."""
    return await asyncio.to_thread(evaluate, suite, **options)


async def resume_async(experiment: str, **options: Any) -> Experiment:
    """`resume` for a caller that already runs an event loop (see `evaluate_async`)."""
    return await asyncio.to_thread(resume, experiment, **options)


def _read_back(store: Store, experiment: ExperimentRecord, outcome: Outcome) -> Experiment:
    return Experiment(store.path, store.experiment(experiment.id), outcome)


def _set_call_timeout(model: Model | None, seconds: float) -> None:
    """After the fingerprint check: how long a call may take is not what a run means."""
    from passhat.models.provider import ProviderModel

    if isinstance(model, ProviderModel):
        model.timeout = seconds


# --- rounds


def _make_runs(
    setup: _Setup,
    experiment: ExperimentRecord,
    adaptive: Rounds | None,
    planned: int,
    *,
    rerun_errored: bool = False,
    rules: tuple[Requirement, ...] = (),
) -> Experiment:
    """What `evaluate` and `resume` share once the experiment is stored: the rounds, then
    the experiment read back with what the call did (`planned`: its first round's runs)
    and the requirements it is gated on."""
    experiment, rounds = _rounds(setup, experiment, adaptive, rerun_errored=rerun_errored)
    outcome = Outcome(planned, rounds, tuple(setup.left), rules)
    return _read_back(setup.store, experiment, outcome)


def _rounds(
    setup: _Setup,
    experiment: ExperimentRecord,
    adaptive: Rounds | None,
    *,
    rerun_errored: bool = False,
) -> tuple[ExperimentRecord, Adaptive | None]:
    """The missing runs once, or round by round under an adaptive rule (k may grow);
    errored runs are run again (resume's `errored`) in the first round only."""
    rounds_run: list[int] = []

    def execute(current: ExperimentRecord) -> None:
        again = rerun_errored and not rounds_run
        rounds_run.append(1)
        _round(setup, current, rerun_errored=again)

    if adaptive is None:
        execute(experiment)
        return experiment, None
    return adapt(setup.store, experiment, adaptive, execute)


def _round(setup: _Setup, experiment: ExperimentRecord, *, rerun_errored: bool) -> None:
    """One round on an event loop of its own (in a worker thread when this thread
    already runs one: a notebook's)."""
    from passhat.runner import pending

    todo = len(pending(setup.store, experiment, rerun_errored=rerun_errored)[0])
    setup.events.round_started(experiment, todo)
    terminated: list[int] = []
    try:
        _on_own_loop(lambda: _go(setup, experiment, rerun_errored, terminated))
    except (KeyboardInterrupt, asyncio.CancelledError):
        recorded = setup.store.recorded_total(experiment.id)
        signum = signal.SIGTERM if terminated else signal.SIGINT
        raise Interrupted(experiment, recorded, signum) from None
    finally:
        setup.events.round_ended(experiment)
    left = list(getattr(setup.executor, "left_missing", None) or [])
    if left:
        setup.left.extend(left)
        setup.events.left_missing(left)


def _on_own_loop(main: Callable[[], Any]) -> None:
    """asyncio.run(main()) here, or in a thread when this thread's loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False  # (not run in here: the agents' tracebacks would chain this error)
    else:
        running = True
    if not running:
        asyncio.run(main())
        return
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as error:  # carried to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=target, name="passhat-evaluate")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


async def _go(
    setup: _Setup, experiment: ExperimentRecord, rerun_errored: bool, terminated: list[int]
) -> None:
    from passhat.runner import run_experiment

    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if main is not None:
        # SIGTERM (a container stop, `kill`) ends the run like Ctrl-C does
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, _terminate, main, terminated)
    try:
        await run_experiment(
            setup.store,
            experiment,
            setup.suite,
            setup.agent,
            setup.model,
            setup.options,
            setup.events.recorded,
            executor=setup.executor,
            rerun_errored=rerun_errored,
        )
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)
        close = getattr(setup.model, "aclose", None)
        if close is not None:
            await close()


def _terminate(main: asyncio.Task[None], terminated: list[int]) -> None:
    terminated.append(signal.SIGTERM)
    main.cancel()
