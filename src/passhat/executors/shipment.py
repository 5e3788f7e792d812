"""An experiment shipped by value to another process, and rebuilt there.

A worker on another machine shares no files with the driver. So the driver
packs what a run needs as bytes — the suite folder (cases, fixtures, scorers
and environments written as `file.py`), the agent's source file, the prompt
template, the replay cassette — with the hashes the experiment recorded. The
worker writes them to a private folder, loads them through the same doors the
CLI uses (`load_suite`, `resolve_agent`, `model_from_params`) and refuses,
naming what differs, unless passhat's version, the suite hash, the agent's
source hash, the prompt version and the model's description all match.

A `package.module:name` agent is imported from the worker's own environment
(install it there); its source hash is checked all the same. A command agent's
program travels as bytes too, and its runs are sealed on the worker at the
experiment's level (executors/program.py). API keys never travel: a worker reads
them from its own environment.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from passhat import tamper
from passhat._leftovers import run_loop
from passhat.agents.command import CommandAgent
from passhat.agents.isolation import DEFAULT
from passhat.agents.sandbox import SQLITE_MAGIC
from passhat.errors import ConfigError, PasshatError, StopRuns, WorkerRefused
from passhat.executors.base import Job
from passhat.executors.identity import code_hash, foreign, identity
from passhat.executors.program import (
    ROOT,
    isolation_refusal,
    make_cwd,
    program_files,
    shipped_hash,
    unpack_modes,
    worker_spec,
)
from passhat.imports import module_file
from passhat.records import ExperimentRecord, RunRecord
from passhat.store.connection import redact_all

SUITE = "suite"
"""Where the suite folder goes inside a shipment."""
MAX_SUITE_BYTES = 256 * 2**20
"""A suite folder larger than this is refused: keep data sets outside the suite."""
GRACE_S = 2.0
"""How long past --timeout a worker waits for a run that ignores its deadline: more than
the second (_leftovers.CLEANUP_S) a run out of time has to clean up after its cancel,
else one that swallows it is given up as blocking its loop, not recorded a timeout."""


@dataclass(frozen=True)
class Shipment:
    """Everything a worker needs to run the experiment's runs, by value."""

    digest: str
    """SHA-256 over everything below: the worker's cache key."""
    version: str
    """The driver's passhat version; a worker with another refuses."""
    code: str
    """The hash of the driver's passhat code (executors/identity.py); a worker whose
    code hashes otherwise refuses, whatever its version says."""
    experiment: ExperimentRecord
    """The experiment (id, seed, parameters, recorded hashes)."""
    files: dict[str, bytes]
    """Relative path -> content: the suite folder under `suite/`, then `agent/`,
    `prompt/` and `model/` files."""
    agent_spec: str
    """The agent spec as the worker resolves it; `{root}` stands for the shipment's folder."""
    prompt: str | None
    """The prompt template's path inside the shipment (None: the agent's default)."""
    model_spec: str | None
    """The model spec as the worker resolves it; `{root}` as above."""
    expect: dict[str, Any]
    """What the worker must find: suite hash, agent hash, prompt version, model config."""
    timeout_s: float
    """The per-run timeout (--timeout)."""
    retry: dict[str, float]
    """The retry policy's fields."""
    level: str | None = None
    """A command agent's isolation level (--isolation): a worker that cannot seal its
    runs at it refuses. None for an in-process agent."""
    executable: frozenset[str] = frozenset()
    """The files of `files` unpacked executable (a command agent's scripts)."""
    loaded_with: dict[str, Any] = field(default_factory=dict)
    """What the driver's suite was loaded with (`load_suite(path, scorers=...)`): the
    worker loads it alike, or its hash differs. In the digest through the suite hash."""


def ship(job: Job) -> Shipment:
    """Pack a job for workers that share nothing with this process."""
    from passhat.agents.clarifier import Clarifier
    from passhat.execution import harness_version
    from passhat.models.replay import ReplayModel

    experiment = job.experiment
    files = {f"{SUITE}/{rel}": data for rel, data in suite_files(job.suite.path)}
    agent_spec = job.agent.spec
    module, _, attr = agent_spec.partition(":")
    level, executable = None, frozenset[str]()
    if isinstance(job.agent.agent, CommandAgent):
        program, executable = program_files(job.agent.agent)
        files.update(program)
        agent_spec = worker_spec(job.agent.agent)
        level = str(experiment.params.get("isolation", DEFAULT))
    elif module.endswith(".py"):
        source = module_file(module, job.suite.path)
        files[f"agent/{source.name}"] = source.read_bytes()
        agent_spec = f"{{root}}/agent/{source.name}:{attr}"
    prompt = None
    if isinstance(job.agent.agent, Clarifier) and "prompt_file" in experiment.params:
        prompt = f"prompt/{Path(str(experiment.params['prompt_file'])).name}"
        files[prompt] = job.agent.agent.template
    model_spec: str | None = experiment.model or None
    if isinstance(job.model, ReplayModel):
        files[f"model/{job.model.path.name}"] = job.model.path.read_bytes()
        model_spec = f"replay:{{root}}/model/{job.model.path.name}"
    expect = {
        "suite_hash": job.suite.hash,
        "agent_hash": job.agent.source_hash,
        "prompt_version": job.agent.prompt_version,
        "model_config": experiment.model_config if model_spec else None,
    }
    retry = {
        "max_retries": job.options.retry.max_retries,
        "base_delay": job.options.retry.base_delay,
        "max_delay": job.options.retry.max_delay,
    }
    digest = hashlib.sha256()
    head: list[str | None] = [harness_version(), code_hash(), experiment.id]
    head += [experiment.fingerprint, agent_spec, prompt]
    head += [model_spec, _canonical(expect), str(job.options.timeout_s), _canonical(retry)]
    head += [level, _canonical(sorted(executable))]
    for part in head:
        digest.update(f"{part}\0".encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return Shipment(
        digest=digest.hexdigest(),
        version=harness_version(),
        code=code_hash(),
        experiment=experiment,
        files=files,
        agent_spec=agent_spec,
        prompt=prompt,
        model_spec=model_spec,
        expect=expect,
        timeout_s=job.options.timeout_s,
        retry=retry,
        level=level,
        executable=executable,
        loaded_with=job.suite.loaded_with,
    )


def suite_files(root: Path) -> list[tuple[str, bytes]]:
    """Every file of a suite folder, but hidden ones, caches and SQLite stores."""
    out: list[tuple[str, bytes]] = []
    total = 0
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(p.startswith(".") or p == "__pycache__" for p in rel.parts) or not path.is_file():
            continue
        if _is_store(path):
            continue
        data = path.read_bytes()
        total += len(data)
        if total > MAX_SUITE_BYTES:
            raise ConfigError(
                f"{root}: the suite folder holds more than {MAX_SUITE_BYTES // 2**20} MiB, too "
                "much to ship to every worker; move data the cases do not read out of it"
            )
        out.append((rel.as_posix(), data))
    return out


def _is_store(path: Path) -> bool:
    """An SQLite database (a passhat store kept beside the suite) or its journal files."""
    if path.name.endswith(("-wal", "-shm", "-journal")):
        return True
    try:
        with path.open("rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


# ----------------------------------------------------------------- the worker side


@dataclass
class Prepared:
    """A shipment unpacked and checked in one worker process, shared by its runs."""

    shipment: Shipment
    root: Path
    suite: Any
    cases: dict[str, Any]
    agent: Any
    options: Any
    models: ModelPool
    secrets: tuple[str, ...] = ()
    """This worker's own secret values (its provider key, the values `pass_env` hands a
    command agent here): blanked from every record before it leaves the worker, since
    the driver knows only its own."""
    guard: tamper.SuiteGuard | None = None
    """The experiment's watch on the suite's files as unpacked here (tamper.py): a run
    graded after an agent rewrote them is errored."""
    holds: int = 0
    """Batches running on it now (`prepared(hold=True)` until `release`; the cache lock)."""
    evicted: bool = False
    """Out of the cache: closed when its last hold ends (the cache lock)."""

    def close(self) -> None:
        """Its guard closed and its folder removed: no batch runs on it any more."""
        if self.guard is not None:
            self.guard.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def run(self, case_id: str, index: int, attempt: int = 1) -> RunRecord:
        """One run: a batch of one (`run_batch`)."""
        return self.run_batch([(case_id, index, attempt)])[0]

    def run_batch(self, batch: list[tuple[str, int, int]]) -> list[RunRecord]:
        """Runs of (case, index, attempt) one after another in a thread of their own,
        each waited for until its own deadline plus grace; their records, in order.

        Each run gets a fresh event loop (_leftovers.run_loop), so an agent that blocks
        it stalls no other run, and one that swallows every cancel, left behind at its
        deadline, does not keep the loop from closing. The thread is handed the whole
        batch, so the calling thread wakes once per batch rather than once per run (on a
        loaded machine each wake-up can cost a time slice). A run past its deadline is abandoned with its thread
        (left behind), recorded errored(timeout), and the rest of the batch goes on
        in a new thread. A `StopRuns` ends the batch: the records made before it go back
        with it (its `records`), the rest stay missing."""
        records: list[RunRecord] = []
        stop: StopRuns | None = None
        try:
            while len(records) < len(batch):
                records.extend(self._rest(batch[len(records) :]))
        except StopRuns as error:
            stop, records = error, [*records, *error.records]
        records = [blanked(r, self.secrets) for r in records] if self.secrets else records
        if stop is not None:
            stop.records = records
            raise stop
        return records

    def _rest(self, batch: list[tuple[str, int, int]]) -> list[RunRecord]:
        """As many runs of `batch` as finish in time, in order; the first overdue one
        errored(timeout) and last (the caller starts a new thread for the rest)."""
        done = threading.Condition()
        box: dict[str, Any] = {"records": [], "started": time.time(), "clock": time.perf_counter()}
        model = self.models.take()

        def target() -> None:
            try:
                for case_id, index, attempt in batch:
                    if "abandoned" in box:  # the waiting thread gave up on this one
                        return
                    case = self.cases[case_id]
                    # not asyncio.run: an agent's task left catching every cancel held
                    # its shutdown for good, the run's record made (_leftovers.run_loop)
                    record = run_loop(self._once(case, index, model, attempt))
                    with done:
                        box["records"].append(record)
                        box["started"], box["clock"] = time.time(), time.perf_counter()
            except BaseException as error:  # handed to the waiting thread
                box["error"] = error
            with done:
                box["end"] = True
                done.notify_all()

        name = f"passhat-runs-{batch[0][1]}-{len(batch)}"
        threading.Thread(target=target, name=name, daemon=True).start()
        with done:
            while "end" not in box:
                left = box["clock"] + self.options.timeout_s + GRACE_S - time.perf_counter()
                if left <= 0:  # the run under way ignored its deadline: abandon it
                    case_id, index, attempt = batch[len(box["records"])]
                    late = overdue(
                        self.shipment.experiment,
                        self.cases[case_id],
                        index,
                        self.options.timeout_s,
                        box["started"],
                        time.perf_counter() - box["clock"],
                        attempt,
                    )
                    box["abandoned"] = True  # it runs no more of the batch
                    kept: list[RunRecord] = box["records"]
                    box["records"] = []  # and what it adds later is dropped
                    return [*kept, late]
                done.wait(left)
        self.models.give(model)
        if "error" in box:
            if isinstance(box["error"], StopRuns):  # no run after it: those before kept
                box["error"].records = box["records"]
            raise box["error"]
        finished: list[RunRecord] = box["records"]
        return finished

    async def _once(self, case: Any, index: int, model: Any, attempt: int) -> RunRecord:
        from passhat.execution import run_once

        try:
            return await run_once(
                self.shipment.experiment,
                self.suite,
                case,
                index,
                self.agent,
                model,
                self.options,
                attempt,
                guard=self.guard,
            )
        finally:
            close = getattr(model, "aclose", None)  # its client belongs to this run's loop
            if close is not None:
                await close()


@dataclass
class ModelPool:
    """Model instances for the runs of one worker: one per run in flight, reused.

    A provider's HTTP client belongs to the event loop that made it, and each
    run has its own loop: runs never share an instance at the same time."""

    build: Any
    free: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> Any:
        with self.lock:
            if self.free:
                return self.free.pop()
        return self.build()

    def give(self, model: Any) -> None:
        with self.lock:
            self.free.append(model)


def blanked(record: RunRecord, secrets: tuple[str, ...]) -> RunRecord:
    """`record` with every secret value replaced by `***` in each of its texts."""
    return replace(
        record, **{f.name: _blank(getattr(record, f.name), secrets) for f in fields(record)}
    )


def _blank(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact_all(value, secrets)
    if isinstance(value, list | tuple):
        return type(value)(_blank(v, secrets) for v in value)
    if isinstance(value, dict):
        return {_blank(k, secrets): _blank(v, secrets) for k, v in value.items()}
    return value


def overdue(
    experiment: ExperimentRecord,
    case: Any,
    index: int,
    timeout_s: float,
    started: float,
    duration: float,
    attempt: int = 1,
) -> RunRecord:
    """The record of a run that never came back from its thread: errored(timeout)."""
    from passhat.execution import run_seed

    return RunRecord(
        experiment_id=experiment.id,
        case_id=case.id,
        run_index=index,
        case_hash=case.hash,
        status="errored",
        error_type="timeout",
        error_message=(
            f"the run did not finish within {timeout_s:g} s and ignored its deadline "
            "(it blocked its event loop); the worker abandoned it"
        ),
        started_at=started,
        duration_s=duration,
        seed=run_seed(experiment.seed, case.id, index),
        attempt=attempt,
    )


_CACHE: OrderedDict[str, Prepared | str] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_KEPT = 4
"""Shipments kept unpacked per worker process (a long-lived worker serves many experiments)."""


def prepared(shipment: Shipment, where: str, *, hold: bool = False) -> Prepared:
    """The shipment unpacked and checked in this process (once); WorkerRefused otherwise.

    A refusal is remembered, so every later run on this worker is refused alike
    without unpacking again. `hold`: a batch runs on it until `release`; a shipment
    evicted from the cache meanwhile (the _KEPT last are kept) keeps its guard and its
    folder until its last hold ends."""
    ended: list[Prepared] = []
    with _CACHE_LOCK:
        hit = _CACHE.get(shipment.digest)
        if hit is None:
            try:
                hit = prepare(shipment, where)
            except PasshatError as error:
                hit = str(error)
            _CACHE[shipment.digest] = hit
            while len(_CACHE) > _KEPT:
                _, old = _CACHE.popitem(last=False)
                if isinstance(old, Prepared):
                    old.evicted = True
                    if not old.holds:
                        ended.append(old)
        _CACHE.move_to_end(shipment.digest)
        if hold and isinstance(hit, Prepared):
            hit.holds += 1
    for old in ended:
        old.close()
    if isinstance(hit, str):
        raise WorkerRefused(hit)
    return hit


def release(held: Prepared) -> None:
    """A batch that `prepared(hold=True)` is done with it: an evicted shipment's last
    ends it. (A run its batch left behind past its deadline is not waited for: its
    record is already written errored.)"""
    with _CACHE_LOCK:
        held.holds -= 1
        last = held.evicted and not held.holds
    if last:
        held.close()


def prepare(shipment: Shipment, where: str) -> Prepared:
    """Unpack a shipment into a private folder and check it against the experiment."""

    refusal = foreign(where, identity(), shipment.version, shipment.code)
    if refusal is not None:
        raise WorkerRefused(refusal)
    root = Path(tempfile.mkdtemp(prefix=f"passhat-{shipment.digest[:12]}-"))
    atexit.register(shutil.rmtree, root, True)
    for rel, data in shipment.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    try:
        return _load(shipment, root, where)
    except PasshatError as error:
        shutil.rmtree(root, ignore_errors=True)
        if isinstance(error, WorkerRefused):
            raise
        raise WorkerRefused(f"worker {where} cannot load the experiment: {error}") from None


def _load(shipment: Shipment, root: Path, where: str) -> Prepared:
    from passhat.agents import RetryPolicy, resolve_agent
    from passhat.execution import RunOptions
    from passhat.models import describe_model, model_from_params, secret_values
    from passhat.suite import load_suite

    expect = shipment.expect
    before = tamper.look(root / SUITE)  # as run and resume do: before the load reads them
    suite = load_suite(root / SUITE, **shipment.loaded_with)
    _same(where, "suite content (hash)", expect["suite_hash"], suite.hash, "ship the same suite")
    guard = tamper.watch(suite, before)  # a goal rewritten since that look is a change
    experiment = shipment.experiment
    cases = {c.id: c for c in suite.cases if c.id in set(experiment.case_ids)}
    prompt = root / shipment.prompt if shipment.prompt else None
    spec = shipment.agent_spec.replace(ROOT, str(root))
    if shipment.level is not None:  # a command agent: its program unpacked, its runs sealed
        _sealable(where, shipment.level)
        make_cwd(spec)
        unpack_modes(root, shipment.executable)
    agent = resolve_agent(spec, prompt=prompt, suite_dir=suite.path)
    command = agent.agent
    if isinstance(command, CommandAgent):
        agent = replace(agent, source_hash=shipped_hash(command, root))
        if shipment.level == "namespace":  # a view that cannot be made here: refused
            command.check_view(experiment.params, later=True)  # the driver's was the start's
    _same(
        where,
        f"source of agent {experiment.agent!r} (sha256)",
        expect["agent_hash"],
        agent.source_hash,
        "install the same version of the agent's package on every worker",
    )
    _same(where, "prompt version", expect["prompt_version"], agent.prompt_version, "")
    model_spec = shipment.model_spec

    def build() -> Any:
        if model_spec is None:
            return None
        return model_from_params(
            model_spec.replace("{root}", str(root)), experiment.params, suite.path
        )

    first = build()
    if first is not None:
        _same(
            where,
            f"model {experiment.model!r} configuration",
            _canonical(expect["model_config"]),
            _canonical(describe_model(first)),
            "give every worker the same model endpoint and cassette",
        )
    options = RunOptions(
        concurrency=1,
        timeout_s=shipment.timeout_s,
        retry=RetryPolicy(
            max_retries=int(shipment.retry["max_retries"]),
            base_delay=shipment.retry["base_delay"],
            max_delay=shipment.retry["max_delay"],
        ),
    )
    pool = ModelPool(build, free=[first])
    handed = getattr(agent.agent, "secret_values", None)
    found = (*secret_values(first), *(handed() if callable(handed) else ()))
    secrets = tuple(value for value in found if value)
    return Prepared(shipment, root, suite, cases, agent, options, pool, secrets, guard)


def _sealable(where: str, level: str) -> None:
    """A worker never runs a command agent's runs at a level weaker than the experiment's."""
    reason = isolation_refusal(level)
    if reason is not None:
        raise WorkerRefused(f"worker {where} refuses the experiment: {reason}")


def _same(where: str, what: str, wanted: Any, found: Any, fix: str) -> None:
    if wanted == found:
        return
    raise WorkerRefused(
        f"worker {where} refuses the experiment: its {what} is {_short(found)}, the "
        f"experiment's is {_short(wanted)}" + (f"; {fix}" if fix else "")
    )


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else _canonical(value)
    return text if len(text) <= 24 else text[:21] + "..."
