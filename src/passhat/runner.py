"""Run every case k times, each from a fresh start, and record every run whole.

One concern per layer, as in httpx's send chain:

    run_experiment   plan the (case, index) pairs still missing; bounded concurrency
    _run_and_record  one pair: run it, write it in one transaction, report progress
    run_once         fresh environment and context, the agent under a timeout, grading
    the agent        (input, env, ctx) -> result

Errored is kept apart from failed: a crash, a timeout or a model error after
retries gives a run with no verdict. A run cancelled in flight (Ctrl-C, a kill)
is never written, so it stays missing and `resume` runs it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from passhat.agents import LoadedAgent, RetryPolicy, RunContext
from passhat.env import clone, make_environment
from passhat.errors import FingerprintMismatch, InputError, ModelError
from passhat.models import describe_model
from passhat.models.base import Model
from passhat.records import ExperimentRecord, RunRecord
from passhat.scoring import ScorerError, prepare_scorers, score_run_async
from passhat.store import Store
from passhat.suite import Case, Suite


def harness_version() -> str:
    from passhat import __version__

    return __version__


@dataclass(frozen=True)
class RunOptions:
    """How runs are executed; none of it changes what a run means."""

    concurrency: int = 8
    """Runs in flight at once."""
    timeout_s: float = 300.0
    """Wall-clock limit of one run; past it the run is errored (timeout)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of transient model errors within a run."""


ProgressFn = Callable[[RunRecord], None]


def run_seed(experiment_seed: int, case_id: str, index: int) -> int:
    """A per-run seed derived from the experiment seed, the case and the index."""
    digest = hashlib.sha256(f"{experiment_seed}:{case_id}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def fingerprint(
    suite_hash: str,
    agent: str,
    model: str,
    model_config: dict[str, Any],
    params: dict[str, Any],
    prompt_version: str | None,
    version: str,
    agent_hash: str | None = None,
    environment_hash: str | None = None,
) -> str:
    """Hash of everything that changes what a run means (never k or concurrency)."""
    payload: dict[str, Any] = {
        "suite_hash": suite_hash,
        "agent": agent,
        "agent_hash": agent_hash,
        "model": model,
        "model_config": model_config,
        "params": params,
        "prompt_version": prompt_version,
        "harness_version": version,
    }
    if environment_hash is not None:  # absent for built-ins: their fingerprints stay as they were
        payload["environment_hash"] = environment_hash
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def new_experiment(
    suite: Suite,
    agent: LoadedAgent,
    model_spec: str,
    model: Model | None,
    *,
    k: int,
    params: dict[str, Any],
    seed: int | None = None,
    name: str | None = None,
) -> ExperimentRecord:
    """The record of a new experiment (not yet stored)."""
    model_config = describe_model(model) if model is not None else {}
    version = harness_version()
    return ExperimentRecord(
        id=secrets.token_hex(4),
        name=name,
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        suite_name=suite.name,
        suite_path=str(suite.path),
        suite_hash=suite.hash,
        agent=agent.spec,
        model=model_spec,
        model_config=model_config,
        params=params,
        prompt_version=agent.prompt_version,
        k_requested=k,
        seed=secrets.randbelow(2**31) if seed is None else seed,
        harness_version=version,
        fingerprint=fingerprint(
            suite.hash,
            agent.spec,
            model_spec,
            model_config,
            params,
            agent.prompt_version,
            version,
            agent.source_hash,
            suite.environment_hash,
        ),
        case_ids=tuple(c.id for c in suite.cases),
        case_hashes={c.id: c.hash for c in suite.cases},
        agent_hash=agent.source_hash,
        environment_hash=suite.environment_hash,
    )


def check_resumable(stored: ExperimentRecord, current: ExperimentRecord) -> None:
    """Refuse to pool runs of a changed configuration, saying what changed."""
    if stored.fingerprint == current.fingerprint:
        return
    changes = []
    for attr, what in [
        ("suite_hash", "suite content (hash)"),
        ("agent", "agent"),
        ("agent_hash", "agent source (hash)"),
        ("environment_hash", "environment source (hash)"),
        ("model", "model"),
        ("model_config", "model configuration"),
        ("params", "parameters"),
        ("prompt_version", "prompt version"),
        ("harness_version", "passhat version"),
    ]:
        changes.extend(_changes(what, getattr(stored, attr), getattr(current, attr)))
    raise FingerprintMismatch(
        f"experiment {stored.name or stored.id} cannot be resumed: its configuration changed ("
        + "; ".join(changes or ["fingerprint"])
        + "); start a new experiment with `passhat run` instead"
    )


def _changes(what: str, before: Any, after: Any) -> list[str]:
    """What differs, down to the key of a nested dict: `params.temperature: 0 -> 1`."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            out.extend(_changes(f"{what}.{key}", before.get(key), after.get(key)))
        return out
    return [f"{what}: {_short(before)} -> {_short(after)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def plan(experiment: ExperimentRecord, recorded: set[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (case, index) pairs of the plan that have no record yet, index-major."""
    return [
        (case_id, index)
        for index in range(1, experiment.k_requested + 1)
        for case_id in experiment.case_ids
        if (case_id, index) not in recorded
    ]


async def run_experiment(
    store: Store,
    experiment: ExperimentRecord,
    suite: Suite,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
    progress: ProgressFn | None = None,
) -> int:
    """Run every planned run that has no record yet; return how many were recorded."""
    if options.concurrency < 1:
        raise InputError(f"concurrency is {options.concurrency}; use at least 1")
    prepare_scorers(suite)  # a scorer that cannot be used stops here, before any run
    with store.lease(experiment.id):
        todo = plan(experiment, store.recorded(experiment.id))
        try:
            await _run_all(store, experiment, suite, agent, model, options, progress, todo)
        except BaseExceptionGroup as group:
            # a worker failed (say, the store could not write): the first failure is the
            # story; the other workers were cancelled and their runs stay missing
            raise group.exceptions[0] from None
    return len(todo)


async def _run_all(
    store: Store,
    experiment: ExperimentRecord,
    suite: Suite,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
    progress: ProgressFn | None,
    todo: list[tuple[str, int]],
) -> None:
    cases = {c.id: c for c in suite.cases}
    loop = asyncio.get_running_loop()
    queue = iter(todo)

    # SQLite writes go to one writer thread, so a commit never stalls the runs in
    # flight; a run counts as recorded once its commit returns. On cancel (Ctrl-C)
    # the writes already handed over still finish before this function returns.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="passhat-store") as writer:

        async def worker() -> None:
            # a pool of `concurrency` workers keeps memory flat for large plans
            for case_id, index in queue:
                record = await run_once(
                    experiment, suite, cases[case_id], index, agent, model, options
                )
                await loop.run_in_executor(writer, store.record_run, record)
                if progress is not None:
                    progress(record)
                await asyncio.sleep(0)  # let a cancel land even when agents never wait

        async with asyncio.TaskGroup() as group:
            for _ in range(min(options.concurrency, len(todo))):
                group.create_task(worker())


async def run_once(
    experiment: ExperimentRecord,
    suite: Suite,
    case: Case,
    index: int,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
) -> RunRecord:
    """One run from a fresh start: environment, conversation, agent, grading."""
    env = make_environment(suite, case)
    ctx = RunContext(
        case_id=case.id,
        run_index=index,
        seed=run_seed(experiment.seed, case.id, index),
        model=model,
        labels=suite.labels,
        max_turns=int(experiment.params.get("max_turns", suite.defaults.max_turns)),
        params=clone(experiment.params),
        retry=options.retry,
    )
    started = time.time()
    clock = time.perf_counter()
    output: Any = None
    error: tuple[str, str] | None = None
    try:
        output = await asyncio.wait_for(agent.agent(clone(case.input), env, ctx), options.timeout_s)
    except TimeoutError:
        error = ("timeout", f"the run did not finish within {options.timeout_s:g} s")
    except ModelError as exc:
        error = ("model_error", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # the agent under test crashed: record it, keep going
        # a command agent's failures say which kind they are (agent_exit, agent_output...)
        kind = getattr(exc, "error_type", None)
        error = (
            (kind, str(exc))
            if isinstance(kind, str)
            else ("agent_error", f"{type(exc).__name__}: {exc}")
        )
    final_state: dict[str, Any] = {}
    try:
        final_state = env.final_state()
    except Exception as exc:  # a user environment's bug: this run has no state to grade
        error = error or ("environment_error", f"final_state() raised {type(exc).__name__}: {exc}")
    finally:
        env.close()
    details: list[dict[str, Any]] = []
    status = "errored"
    if error is None:
        try:
            score = await score_run_async(suite, case, final_state, run_index=index, seed=ctx.seed)
        except ScorerError as exc:
            error = ("scorer_error", str(exc))
        else:
            details = score.details
            status = "passed" if score.passed else "failed"
    return RunRecord(
        experiment_id=experiment.id,
        case_id=case.id,
        run_index=index,
        case_hash=case.hash,
        status=status,  # type: ignore[arg-type]
        error_type=error[0] if error else None,
        error_message=error[1] if error else None,
        output=output,
        final_state=final_state,
        score=details,
        transcript=ctx.transcript_dicts(),
        tool_calls=[c.to_dict() for c in env.calls],
        started_at=started,
        duration_s=time.perf_counter() - clock,
        input_tokens=ctx.usage.input_tokens,
        output_tokens=ctx.usage.output_tokens,
        seed=ctx.seed,
        retries=ctx.retries,
        model_source=ctx.model_source(),
        stderr=ctx.stderr,
    )
