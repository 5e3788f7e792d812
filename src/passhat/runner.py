"""Run every case k times, each from a fresh start, and record every run whole.

One concern per layer, as in httpx's send chain:

    run_experiment   plan the (case, index) pairs still missing
    _run_all         hand them to an executor (passhat.executors: local asyncio, Dask,
                     or a user's); write each record it yields in one transaction
    run_once         fresh environment and context, the agent under a timeout, grading
                     (passhat.execution: the layer the executors call)
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
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from passhat import tamper
from passhat._children import child_watcher
from passhat._gc import gc_spaced
from passhat._lazy import quick_switching
from passhat._stall import watchdog
from passhat.agents import LoadedAgent
from passhat.errors import FingerprintMismatch, InputError, StopRuns
from passhat.execution import (
    TRACEBACK_LIMIT,
    RunOptions,
    agent_traceback,
    harness_version,
    run_once,
    run_seed,
)
from passhat.executors.base import Executor, Job, WorkItem
from passhat.executors.local import RAMP_MAX_S
from passhat.models import describe_model, secret_values
from passhat.models.base import Model
from passhat.records import ExperimentRecord, RunRecord
from passhat.scoring import prepare_scorers
from passhat.serve import hub_scope
from passhat.store import Store
from passhat.suite import Suite
from passhat.writer import RunWriter

__all__ = [
    "TRACEBACK_LIMIT",
    "Plan",
    "RunOptions",
    "agent_traceback",
    "check_resumable",
    "fingerprint",
    "harness_version",
    "new_experiment",
    "pending",
    "plan",
    "run_experiment",
    "run_once",
    "run_seed",
    "writes_in_flight",
]

ProgressFn = Callable[[RunRecord], None]


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


class Plan:
    """(case, index) pairs still to run, made as they are read: the plan of 100,000
    runs is not 100,000 tuples in memory (a 10,000-case suite at k = 10 held 7 MB of
    them for the whole experiment). Sized (`len` counts without making the pairs) and
    read again from the start by each iteration.

    Index-major by default (every case's run 1, then every case's run 2...), so an
    interrupted experiment has even counts across cases; `case_major` gives each
    case's runs together. Pairs in `recorded` are left out, and pairs past a case's
    own k (`k_of`, an adaptive rule's) are not planned; `then` follows the plan."""

    def __init__(
        self,
        case_ids: Sequence[str],
        k: int,
        *,
        k_of: Callable[[str], int] | None = None,
        recorded: AbstractSet[WorkItem] = frozenset(),
        then: Sequence[WorkItem] = (),
        case_major: bool = False,
        full: AbstractSet[str] = frozenset(),
    ) -> None:
        self.case_ids = case_ids
        self.k = k
        self.k_of = k_of if k_of is not None else (lambda case_id: k)
        self.recorded = recorded
        self.full = full
        """Cases whose every planned run is recorded: none of their pairs is planned."""
        self.then = tuple(then)
        self.case_major = case_major

    def __iter__(self) -> Iterator[WorkItem]:
        k_of, recorded = self.k_of, self.recorded
        case_ids = [c for c in self.case_ids if c not in self.full] if self.full else self.case_ids
        if self.case_major:
            for case_id in case_ids:
                for index in range(1, min(k_of(case_id), self.k) + 1):
                    if (case_id, index) not in recorded:
                        yield case_id, index
        else:
            for index in range(1, self.k + 1):
                for case_id in case_ids:
                    if index <= k_of(case_id) and (case_id, index) not in recorded:
                        yield case_id, index
        yield from self.then

    def __len__(self) -> int:
        k_of, k, full = self.k_of, self.k, self.full
        planned = sum(min(k_of(case_id), k) for case_id in self.case_ids if case_id not in full)
        if self.recorded:
            ids = set(self.case_ids) - full
            planned -= sum(
                1
                for case_id, index in self.recorded
                if case_id in ids and 1 <= index <= min(k_of(case_id), k)
            )
        return planned + len(self.then)

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def __contains__(self, item: object) -> bool:
        return any(item == pair for pair in self)


def plan(
    experiment: ExperimentRecord,
    recorded: AbstractSet[WorkItem],
    then: Sequence[WorkItem] = (),
    full: AbstractSet[str] = frozenset(),
) -> Plan:
    """The (case, index) pairs of the plan that have no record yet, index-major, then
    `then`. A case an adaptive rule asked fewer runs of (`experiment.case_k`) is
    planned up to its own k, not filled up to the experiment's; `full` cases are done."""
    return Plan(
        experiment.case_ids,
        experiment.k_requested,
        k_of=experiment.k_of,
        recorded=recorded,
        then=then,
        full=full,
    )


def _full_cases(store: Store, experiment: ExperimentRecord) -> tuple[frozenset[str], list[str]]:
    """The cases with every planned run recorded, and those with some recorded and some
    not, from per-case counts in SQL: runs 1..n recorded (n rows, lowest 1, highest n)
    with n at least the case's k is a full case, whose indices are never read."""
    full: set[str] = set()
    partial: list[str] = []
    for case_id, (n, low, high) in store.recorded_counts(experiment.id).items():
        wanted = min(experiment.k_of(case_id), experiment.k_requested)
        if low == 1 and high == n >= wanted:
            full.add(case_id)
        else:
            partial.append(case_id)
    return frozenset(full), partial


def pending(
    store: Store, experiment: ExperimentRecord, *, rerun_errored: bool = False
) -> tuple[Plan, dict[WorkItem, int]]:
    """What a run or resume will do: the missing (case, index) pairs of the plan, then,
    with `rerun_errored`, the errored ones, each with the attempt it will be."""
    attempts: dict[WorkItem, int] = {}
    if rerun_errored:
        attempts = {key: n + 1 for key, n in store.errored(experiment.id).items()}
    again = sorted(attempts, key=lambda key: (key[1], key[0]))
    full, partial = _full_cases(store, experiment)
    recorded = store.recorded(experiment.id, partial) if partial else set()
    return plan(experiment, recorded, again, full), attempts


async def run_experiment(
    store: Store,
    experiment: ExperimentRecord,
    suite: Suite,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
    progress: ProgressFn | None = None,
    executor: Executor | None = None,
    *,
    rerun_errored: bool = False,
    guard: tamper.SuiteGuard | None = None,
) -> int:
    """Run every planned run that has no record yet; return how many were planned.

    With `rerun_errored`, errored runs are run again too, as their next attempt
    (the store keeps the earlier ones). `executor` runs them (default: the local
    asyncio one); this function alone writes them to the store. `guard`: the
    experiment's watch on its suite's files (evaluate's, kept over its rounds); without
    it, one of this call's own, made before any agent starts and closed at its end."""
    if options.concurrency < 1:
        raise InputError(f"concurrency is {options.concurrency}; use at least 1")
    prepare_scorers(suite)  # a scorer that cannot be used stops here, before any run
    store.add_secrets(secret_values(model))
    child_watcher()  # command agents' exits read from pidfds, not a thread each (3.11)
    # quick_switching: while the writer thread encodes a batch of runs (or the suite
    # guard's walks the suite) holding the GIL, the loop gets it back within 0.5 ms when
    # its timers fire, not the interpreter's 5 ms: 50 agents' timers firing together
    # waited on it, up to 5 ms a wave
    with (
        tamper.watching(suite, guard) as guard,  # before any agent starts
        store.lease(experiment.id),
        watchdog(),
        gc_spaced(),
        quick_switching(),
    ):
        todo, attempts = pending(store, experiment, rerun_errored=rerun_errored)
        job = Job(experiment, suite, agent, model, options, attempts, guard)
        try:
            await _run_all(store, job, todo, progress, executor)
        except BaseExceptionGroup as group:
            # a worker failed (say, the store could not write): the first failure is the
            # story; the other workers were cancelled and their runs stay missing
            raise group.exceptions[0] from None
        except StopRuns as stop:  # the runs under way finished first (executors/base.py)
            resume = f"`passhat resume {experiment.command_ref}` runs the rest"
            raise StopRuns(f"{stop}; {resume}") from None
    return len(todo)


async def _run_all(
    store: Store,
    job: Job,
    todo: Iterable[WorkItem],
    progress: ProgressFn | None,
    executor: Executor | None,
) -> None:
    if executor is None:
        from passhat.executors.local import LocalExecutor

        executor = LocalExecutor()

    # The executor runs; the driver alone writes. Finished runs go to one writer
    # thread, which commits the runs that arrive meanwhile in one transaction (group
    # commit); a run counts as recorded (progress) once its commit returns. Records are
    # handed over without waiting for their commits, up to `writes_in_flight` of them
    # uncommitted, so a slow commit (a WAL checkpoint's fsync) does not hold back the
    # next runs while memory stays bounded. On cancel (Ctrl-C) the runs already handed
    # over are still written before this function returns (RunWriter.__aexit__). A run
    # handed over waits up to COMMIT_LINGER_S for others to share its commit. Command
    # agents' runs are served by one server for the experiment (serve/hub.py).
    async with (
        hub_scope(job.options.concurrency),
        RunWriter(
            store, progress, linger=COMMIT_LINGER_S, written=_items_kept(store, job.experiment)
        ) as writer,
    ):
        # once every planned run has started, each run left is committed as it comes;
        # the runs finished and not yielded when a stop closes the executor's iterator
        # are kept (Job.keep) and written as the block ends
        job = replace(job, keep=writer.keep)
        then = _then(todo, _on_loop(writer.checkpoint_soon), _on_loop(writer.linger_no_more))
        records = executor.run(job, then)
        limit, this = writes_in_flight(job.options.concurrency), asyncio.current_task()
        warm = asyncio.get_running_loop().call_later(WARM_UP_AFTER_S, writer.warm_up)
        try:
            async for record in records:
                await writer.hand_over(record, limit)
                if this is not None and this.cancelling():
                    # a cancel lands even when agents and executor never wait (a turn of
                    # the loop for each record instead held back the runs that wait for
                    # the next item)
                    await asyncio.sleep(0)
            await writer.drain()
        finally:
            warm.cancel()
            close = getattr(records, "aclose", None)  # stop the runs still in flight
            if close is not None:
                await close()


def _items_kept(store: Store, experiment: ExperimentRecord) -> Callable[[list[RunRecord]], None]:
    """On the writer thread, after a commit: keep the items text of the cases whose last
    planned run it wrote (Store.keep_case_items), while the last runs still wait on
    their agents, rather than every case's after the last one (5 ms of the end of 1,000
    runs). A case kept before another run of it is written (runs finishing out of
    order) loses its text to the store's trigger then, and is kept again at the end."""

    def keep(runs: list[RunRecord]) -> None:
        k = experiment.k_requested
        last = {r.case_id for r in runs if r.run_index >= min(experiment.k_of(r.case_id), k)}
        if last:
            store.keep_case_items(experiment.id, last)

    return keep


def _then(
    todo: Iterable[WorkItem], taken: Callable[[], None], done: Callable[[], None]
) -> Iterator[WorkItem]:
    """`todo`; `taken()` as its last item is taken (read one item ahead), then `done()`
    once an executor asks for an item past its last (every planned run has started)."""
    items = iter(todo)
    item = next(items, None)
    while item is not None:
        following = next(items, None)
        if following is None:
            taken()
        yield item
        item = following
    done()


def _on_loop(fn: Callable[[], None]) -> Callable[[], None]:
    """`fn`, called on the running loop's thread whichever thread calls the result (a
    user's executor may read the plan from a thread of its own)."""
    loop, thread = asyncio.get_running_loop(), threading.get_ident()

    def call() -> None:
        if threading.get_ident() == thread:
            fn()
        else:
            loop.call_soon_threadsafe(fn)

    return call


WARM_UP_AFTER_S = RAMP_MAX_S
"""Seconds from the executor's start to the writer thread's imports (RunWriter.warm_up):
the local executor's ramp has started every slot's first run by then, and the agents
wait (a run of a model or of 100 ms); earlier, 30 ms of imports on a second thread took
the interpreter from the loop starting the runs, 0.5 ms at a time."""

COMMIT_LINGER_S = 0.05
"""Seconds a finished run waits for others to share its commit: runs finishing a few ms
apart (50 agents started together) cost one commit and one wake-up of the writer
thread each 50 ms, not one each. Not yet committed, a run is not yet recorded: killed
then, it stays missing and `resume` runs it again."""


def writes_in_flight(concurrency: int) -> int:
    """How many finished runs may wait for their commit before the runner waits: a few
    waves of runs (a commit stalled by a checkpoint's fsync must not stop them), at
    most 1,024 records in memory however long the plan."""
    return min(max(4 * concurrency, 256), 1024)
