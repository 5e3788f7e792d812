"""The Dask executor: runs fan out as tasks to Dask distributed workers.

Each task runs a batch of (case, index) pairs: one pair while run times are
unknown or long, several when runs are short (`batching.py`: at most 50 ms of
runs per batch, so a round trip through the scheduler is shared by several
short runs and a finished run waits little for its batch). A worker rebuilds
the experiment from a shipment (`shipment.py`: everything by value, hashes
checked), runs each pair of the batch in turn (fresh environment, agent,
scorers; each under its own deadline) and returns their whole RunRecords; the
driver alone writes the store, one transaction per run. The shipment reaches
every worker, present and future, as a worker plugin, so a worker that joins
or is restarted mid-way gets it too; tasks themselves carry only the digest
and the (case, index, attempt) triples.

Workers that differ: every worker is checked before it gets a run (its passhat
version and code hash; `identity.py`), those present at the start and those that
join later alike. One that differs is refused, named with the files that differ
(`refused`), and given no run; a batch it took before the driver knew is sent again
to the others (it ran none of it, so nothing is lost or counted twice). A worker
that refuses the shipment itself (another agent source) is refused the same way.
Only when no worker is left that may run the experiment does the driver stop, with
one line naming each worker and why.

Faults:
- a worker dies mid-run: Dask runs the task (the whole batch) again elsewhere;
  none of its runs had been recorded, since a batch comes back whole or not at
  all. A task whose workers died `distributed.scheduler.allowed-failures`
  times is left missing, every run of it (never recorded, so never counted
  twice; `passhat resume` runs them again);
- the scheduler is lost: the driver stops with an ExecutorError, every
  finished run already written;
- a run past --timeout: errored(timeout), by the worker, even when the agent
  blocks its event loop;
- passhat's own limits lowered on a worker past setting back (`StopRuns`): its
  batch's runs finished before it come back with it, no more batches are sent, those
  in flight finish (`batching.batched`), then the driver stops.

Without a scheduler address a LocalCluster of worker processes is started on
127.0.0.1 (no dashboard), one process per core (at most one a run to make: each costs a
second or two of CPU to start and stop) and enough threads for --concurrency runs in
flight, its housekeeping slowed (HOUSEKEEPING). Its shutdown
is quiet: a worker whose heartbeat was in flight when it closed does not print that
failure (`QuietClose`); a heartbeat that fails while the worker runs is printed as
before.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from typing import Any
from urllib.parse import urlsplit

import dask.config
from distributed import Client, LocalCluster, get_worker
from distributed.client import FutureCancelledError
from distributed.core import Status
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.scheduler import KilledWorker

from passhat.errors import ExecutorError, InputError, StopRuns, WorkerRefused
from passhat.executors import keys
from passhat.executors.base import Job, WorkItem
from passhat.executors.batching import TARGET_S, BatchSizer, batched
from passhat.executors.identity import code_manifest, differences, foreign, identity
from passhat.executors.program import isolation_refusal
from passhat.executors.shipment import Shipment, prepared, release, ship
from passhat.executors.tls import SealedSecurity
from passhat.records import RunRecord
from passhat.serve import endpoints

CONNECT_TIMEOUT_S = 15.0
"""How long to wait for the scheduler to answer, and for a first worker to join."""

LOOK_EVERY_S = 0.5
"""Once a worker was refused, how often the driver asks the scheduler which workers it
has (a batch goes only to workers checked), so that one joining later gets runs too."""

_RECEIVED: dict[str, Shipment] = {}
"""Shipments this worker process received through the plugin, by digest."""
_REFUSED: dict[str, str] = {}
"""Shipments this worker process refused (it runs other passhat code), by digest: why."""
_SHARED: dict[str, int] = {}
"""The connection cap each worker of this process took for its threads (endpoints.share),
once, by its address: a process holds more than one worker with processes=False."""


@dataclass(frozen=True)
class Refusal:
    """What a worker returns for a batch instead of its records when it cannot run the
    experiment: it ran none of the batch."""

    worker: str
    reason: str
    crowded: bool = False
    """Refused for its open-file limit (`crowded`): the fix is the worker's, not an install."""


class ShipmentPlugin(WorkerPlugin):
    """Hands a shipment to every worker, those that join later included."""

    idempotent = False

    def __init__(self, shipment: Shipment) -> None:
        self.shipment = shipment
        self.name = plugin_name(shipment.digest)

    def setup(self, worker: Any) -> None:
        from passhat.agents.isolation import seal_this_process

        # before any run: an idle worker (its environment holds the provider's key) is
        # unreadable to a `process` agent that another worker runs
        seal_this_process()
        # a command agent's run holds connections to its endpoints here: this worker's
        # runs at once (a task, a batch of runs one after another, per thread) share this
        # process's open files, as the driver's runs share its (serve/endpoints.share)
        # (one scope a worker, whatever number of experiments is shipped to it: its
        # threads are its runs at once for them all, and the scopes of a process add up)
        if worker.address not in _SHARED:
            _SHARED[worker.address] = endpoints.share(worker_threads(worker))
        # a worker of other code (one that joins later too) keeps the refusal, and
        # answers each batch with it; raising here would fail the registration for all
        refusal = foreign(worker.address, identity(), self.shipment.version, self.shipment.code)
        if refusal is not None:
            _REFUSED[self.shipment.digest] = refusal
            return
        _RECEIVED[self.shipment.digest] = self.shipment

    def teardown(self, worker: Any) -> None:
        _RECEIVED.pop(self.shipment.digest, None)
        _REFUSED.pop(self.shipment.digest, None)


def worker_threads(worker: Any) -> int:
    """The tasks, so the command agents' runs, a worker runs at once."""
    return int(getattr(getattr(worker, "state", worker), "nthreads", 1) or 1)


def crowded(where: str, threads: int) -> str | None:
    """Why a worker refuses a command agent's runs: its threads, each a run at once
    holding CONNECTIONS_FLOOR connections, do not fit its open-file limit (as a local
    --concurrency past passhat's is refused at start: evaluation/planning.py); past it,
    runs would be errored for want of a descriptor, which reads as the agent's failure."""
    limit = endpoints.descriptor_limit()
    most = endpoints.most_at_once(limit)
    if threads <= most:
        return None
    fix = f"start it with --nthreads {most} or raise" if most else "raise"
    return (
        f"worker {where} refuses the experiment: its {threads} threads are {threads} "
        f"command-agent runs at once, more than its limit of {limit:,} open files holds "
        f"({most} at most, {endpoints.CONNECTIONS_FLOOR} connections each); {fix} its "
        "limit (`ulimit -n`, its hard limit)"
    )


HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat"
"""The start of what distributed's worker logs, with a traceback, when a heartbeat's
connection to the scheduler breaks (distributed/worker.py, Worker.heartbeat)."""


class QuietClose(WorkerPlugin):
    """On a worker of a LocalCluster passhat started: a heartbeat that fails once the
    worker is closing is not printed. The worker closes its connections (rpc.close)
    with a heartbeat in flight, which then logged "Failed to communicate with scheduler
    during heartbeat" and a CommClosedError traceback on passhat's stderr after a run
    that went well. While the worker runs, such a failure is printed as before."""

    idempotent = True
    name = "passhat-quiet-close"

    def setup(self, worker: Any) -> None:
        log = logging.getLogger("distributed.worker")
        if not any(isinstance(f, _HeartbeatAtClose) for f in log.filters):
            log.addFilter(_HeartbeatAtClose(worker))

    # no teardown: a closing worker removes its plugins before it closes its
    # connections, and the filter must outlive that; it dies with the worker's process


class _HeartbeatAtClose(logging.Filter):
    """Drops a worker's heartbeat failure logged once that worker is closing."""

    def __init__(self, worker: Any) -> None:
        super().__init__()
        self.worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        closing = self.worker.status in (Status.closing, Status.closed)
        return not (closing and str(record.msg).startswith(HEARTBEAT_FAILED))


def plugin_name(digest: str) -> str:
    return f"passhat-{digest[:16]}"


def run_batch(digest: str, batch: list[tuple[str, int, int]]) -> list[RunRecord] | Refusal:
    """The task a worker runs for a batch of (case, index, attempt): each run in turn,
    each under its own deadline; their whole records, or a refusal (none of them ran)."""
    worker = get_worker()
    where = worker.address
    shipment = _RECEIVED.get(digest)
    if shipment is None:
        return Refusal(
            where,
            _REFUSED.get(digest)
            or f"worker {where} did not receive the experiment (its passhat could not load "
            "passhat's worker plugin); install the same passhat on every worker (docs/dask.md)",
        )
    too_many = crowded(where, worker_threads(worker)) if shipment.level is not None else None
    if too_many is not None:  # its command agents' runs would be errored for a descriptor
        return Refusal(where, too_many, crowded=True)
    try:
        runs = prepared(shipment, where, hold=True)  # kept while the batch runs
    except WorkerRefused as error:
        return Refusal(where, str(error))
    try:
        records = runs.run_batch(batch)
    except StopRuns as stop:  # raised to the driver with the runs finished before it
        stop.records = _ran_on(where, stop.records)
        raise
    finally:
        release(runs)
    return _ran_on(where, records)


def _ran_on(where: str, records: list[RunRecord]) -> list[RunRecord]:
    version, code = identity()
    ran_on = f"{where} (passhat {version}, code {code})"
    return [replace(record, ran_on=ran_on) for record in records]


def check_scheduler(address: str) -> str:
    """A scheduler address as Dask takes it; InputError naming the form otherwise."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise InputError(
            f"--scheduler {address!r} is not a scheduler address; write tcp://HOST:PORT, "
            "e.g. tcp://127.0.0.1:8786 (`dask scheduler` prints it)"
        )
    return address


def reachable(address: str, timeout_s: float = 5.0) -> str:
    """The address, once something listens there: checked before an experiment is
    stored, so a wrong --scheduler leaves no empty experiment holding its --name."""
    parts = urlsplit(address)
    try:
        socket.create_connection((parts.hostname or "", parts.port or 0), timeout_s).close()
    except OSError as error:
        raise InputError(
            f"cannot reach the Dask scheduler at {address} ({error.strerror or error}); start "
            "one with `dask scheduler` (docs/dask.md) or leave --scheduler out for a local "
            "cluster; nothing was stored"
        ) from None
    return address


class DaskExecutor:
    """Runs work items as Dask tasks on a scheduler's workers, or on a LocalCluster."""

    checks_isolation = True
    """Each worker is asked whether it can seal command agents' runs at the experiment's
    level (`_unsealable`); one that cannot runs none (executors.base.checks_isolation)."""

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        workers: int | None = None,
        batch: int | None = None,
        batch_target_s: float = TARGET_S,
    ) -> None:
        """`scheduler`: tcp://HOST:PORT of a running `dask scheduler`; None starts a
        LocalCluster of `workers` processes (default: one per core, at most --concurrency and at most
        the runs to make) on 127.0.0.1.
        `batch`: runs per task, fixed (1: no batching); None sizes batches by run
        time, at most `batch_target_s` of runs each (`batching.py`)."""
        self.scheduler = None if scheduler is None else reachable(check_scheduler(scheduler))
        self.workers = workers
        self.batch = batch
        self.batch_target_s = batch_target_s
        self.tasks = 0
        """Tasks (batches) the last run sent."""
        self.left_missing: list[WorkItem] = []
        """Work items whose workers died too often: not recorded, so still missing."""
        self.address: str | None = None
        """The scheduler the last run used (a LocalCluster's, when none was given)."""
        self.refused: dict[str, str] = {}
        """Workers the last run refused (address -> what differs, the files named): they
        ran none of its runs."""
        self.local_processes: int | None = None
        """The worker processes of the local cluster the last run started (None on a
        scheduler's): `workers`, or by default no more than the runs it had to make."""

    def __repr__(self) -> str:
        return f"DaskExecutor(scheduler={self.scheduler!r})"

    async def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        self.left_missing = []  # this call's give-ups only (adaptive rounds call run again)
        async with AsyncExitStack() as stack:
            workers = self.workers
            if self.scheduler is None and workers is None:
                # a local cluster of its own size: no more processes than runs to make
                todo, counted = _ahead(todo, local_workers(job.options.concurrency))
                workers = local_workers(job.options.concurrency, counted)
            connection = self._client(job.options.concurrency, _key_names(job), workers)
            client = await stack.enter_async_context(connection)
            self.address = str(client.scheduler.address)
            self.local_processes = connection.processes
            shipment = ship(job)
            pool = _Pool(shipment.version, shipment.code, shipment.level)
            self.refused = pool.refused
            await pool.look(client)
            pool.workers()  # no worker that may run it: stop before anything runs
            plugin = ShipmentPlugin(shipment)
            await _register(client, plugin)
            stack.push_async_callback(_unregister, client, plugin.name)
            token = secrets.token_hex(4)
            self.tasks = 0
            sizer = BatchSizer(target_s=self.batch_target_s, fixed=self.batch)

            async def some(batch: list[WorkItem]) -> list[RunRecord] | None:
                case_id, index = batch[0]
                triples = [(c, i, job.attempt((c, i))) for c, i in batch]
                for sent in range(1, MAX_SENDS + 1):
                    self.tasks += 1
                    key = f"passhat-{job.experiment.id}-{case_id}-{index}-{len(batch)}-{token}"
                    try:
                        await pool.look(client)
                        future = client.submit(
                            run_batch, shipment.digest, triples, key=f"{key}-{sent}",
                            pure=False, workers=pool.workers(), allow_other_workers=False,
                        )  # fmt: skip
                        got: list[RunRecord] | Refusal = await future
                    except KilledWorker:
                        self.left_missing.extend(batch)
                        return None
                    except FutureCancelledError as error:
                        raise _lost(self.scheduler, error) from None
                    except (OSError, TimeoutError) as error:
                        raise _lost(self.scheduler, error) from None
                    if not isinstance(got, Refusal):
                        return got
                    await pool.refuse(client, got)  # none of it ran: to the others
                raise pool.stop()

            # closed here as this iterator is (a stop): its finished runs go to job.keep
            # while the driver's writer is still open, not when the loop collects it
            runs = batched(todo, job.options.concurrency, sizer, some, keep=job.keep)
            async with aclosing(runs):
                async for record in runs:
                    yield record

    def _client(
        self, concurrency: int, held: Sequence[str] = (), workers: int | None = None
    ) -> _Connection:
        return _Connection(self.scheduler, workers or self.workers, concurrency, held)


def _ahead(todo: Iterable[WorkItem], most: int) -> tuple[Iterator[WorkItem], int | None]:
    """`todo` whole, and how many runs it holds when that is under `most` (None when it
    holds `most` or more): read `most` items ahead, no more, the rest left lazy."""
    items = iter(todo)
    first = list(islice(items, most))
    return chain(first, items), (len(first) if len(first) < most else None)


class _Connection:
    """An asynchronous Client to the scheduler, or to a LocalCluster started for it."""

    def __init__(
        self, scheduler: str | None, workers: int | None, concurrency: int, held: Sequence[str]
    ) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self.concurrency = concurrency
        self.held = held
        """Variables a local cluster's processes are not exec'd with (keys.py)."""
        self.processes: int | None = None
        """The worker processes of the local cluster started, once it is."""
        self.stack = AsyncExitStack()

    async def __aenter__(self) -> Any:
        try:
            address: Any = self.scheduler
            security = None
            if address is None:
                _bare_tracker()
                # its processes spawned without passhat's secrets, handed over by Keys
                held = keys.withheld(os.environ, self.held)
                self.stack.enter_context(keys.spawning_without(held))
                security = _private()
                n = self.workers or local_workers(self.concurrency)
                with dask.config.set(HOUSEKEEPING):  # read as each server is made
                    cluster = LocalCluster(  # type: ignore[no-untyped-call]
                        n_workers=n,
                        threads_per_worker=max(1, math.ceil(self.concurrency / n)),
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        # no dashboard, and its HTTP server (metrics) on a free loopback
                        # port: by default it tries 8787 and warns when that is taken
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                        security=security,
                        asynchronous=True,
                    )
                    address = await self.stack.enter_async_context(cluster)
                    self.processes = len(cluster.workers)
            client = await self.stack.enter_async_context(
                Client(  # type: ignore[no-untyped-call]
                    address,
                    asynchronous=True,
                    timeout=CONNECT_TIMEOUT_S,
                    set_as_default=False,
                    security=security,
                )
            )
            await client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
            if self.scheduler is None:  # workers that join later (restarted) get it too
                await client.register_plugin(QuietClose(), name=QuietClose.name)
                values = {n: os.environ[n] for n in held if n in os.environ}
                await client.register_plugin(keys.Keys(values), name=keys.Keys.name)
        except (OSError, TimeoutError) as error:
            await self.stack.aclose()
            where = self.scheduler or "a local cluster"
            raise ExecutorError(
                f"cannot use the Dask scheduler at {where} ({type(error).__name__}: {error}); "
                "start one with `dask scheduler` and at least one `dask worker` (docs/dask.md), "
                "or leave --scheduler out for a local cluster"
            ) from None
        return client

    async def __aexit__(self, *exc: object) -> None:
        await self.stack.aclose()


def local_workers(concurrency: int, runs: int | None = None) -> int:
    """A local cluster's worker processes when --workers is not given: one per core, at
    most --concurrency, and at most the runs to make (`runs`, when counted)."""
    most = min(os.cpu_count() or 1, concurrency, runs or concurrency)
    return max(1, most)


def _key_names(job: Job) -> list[str]:
    """The variables of keys a run may read beyond those named like one: the model's
    (`api_key_env`) and a command agent's `pass_env`."""
    names = [getattr(job.model, "api_key_env", None)]
    names += getattr(getattr(job.agent.agent, "spec", None), "pass_env", ())
    return [n for n in names if isinstance(n, str)]


def _private() -> Any:
    """TLS with a certificate made for one local cluster: its scheduler and workers take no
    connection without it. Held in memory; its key reaches a disk only encrypted, as each
    TLS context is built (tls.py: distributed's own wrote it there in the clear, and a
    same-user process watching /tmp read it). On plain TCP any process of the machine
    could connect to the scheduler on loopback and run code there: an agent at --isolation
    process ran a function in each worker and in the scheduler (passhat itself) that read
    the provider's key (tests/test_attack54_dask.py); being not dumpable does not stop
    code that runs inside."""
    return SealedSecurity.temporary()


MAX_SENDS = 20
"""Times one batch is sent before the driver gives up on finding a worker for it."""

HOUSEKEEPING = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.profile.enabled": False,
}
"""Dask's own housekeeping, slowed in the local cluster passhat starts (it shows no
dashboard), in its scheduler, nannies and workers (workers the nannies start again too):
the event loop's health tick, 20 ms by default (a loop blocked past
distributed.admin.tick.limit, 3 s, is still reported), the system monitor, 500 ms (CPU and
memory figures for the dashboard; a worker's memory limits have a monitor of their own),
and a worker's statistical profiler, a thread sampling every thread each 10 ms (off on
Python 3.11 whatever the setting). As the tests' clusters (tests/dask_cluster.py)."""


def _bare_tracker() -> None:
    """Start multiprocessing's resource tracker, which the local cluster's workers would
    start, with PATH and the PYTHON* variables alone: it lives as long as passhat, is never
    sealed, and with passhat's environment showed the provider's key in
    /proc/<pid>/environ to any process of passhat's user (a `process` agent). Spawned
    with that environment itself (keys.spawner), not through `env -i`, which was exec'd
    with passhat's whole environment first."""
    from multiprocessing import resource_tracker, util

    keep = {k: v for k, v in os.environ.items() if k == "PATH" or k.startswith("PYTHON")}
    spawn = util.spawnv_passfds
    util.spawnv_passfds = keys.spawner(keep)
    try:
        resource_tracker.ensure_running()
    finally:
        util.spawnv_passfds = spawn


@dataclass
class _Pool:
    """The workers this experiment may use. Each is checked when the driver first sees
    it (passhat version and code hash); one that differs, or that refuses a batch, is
    refused, named with what differs, and gets no batch from then on."""

    version: str
    code: str
    level: str | None = None
    """A command agent's isolation level: a worker that cannot seal runs at it is refused."""
    accepted: set[str] = field(default_factory=set)
    refused: dict[str, str] = field(default_factory=dict)
    """Address -> why, a phrase naming the worker and what differs."""
    crowded: set[str] = field(default_factory=set)
    """The refused workers whose open-file limit is the reason (not their passhat)."""
    present: set[str] = field(default_factory=set)
    looked_at: float = -math.inf

    async def look(self, client: Any) -> None:
        """Which workers the scheduler has (at most every LOOK_EVERY_S once one was
        refused; before that, once), the new ones checked."""
        now = time.monotonic()
        if now - self.looked_at < (LOOK_EVERY_S if self.refused else math.inf):
            return
        self.looked_at = now
        self.present = set(await client.scheduler.ncores())
        new = sorted(self.present - self.accepted - self.refused.keys())
        if new:
            wrong = await _differing(client, new, self.version, self.code)
            if self.level is not None:
                rest = [a for a in new if a not in wrong]
                wrong.update(await _unsealable(client, rest, self.level))
            self.refused.update(wrong)
            self.accepted.update(a for a in new if a not in wrong)

    async def refuse(self, client: Any, refusal: Refusal) -> None:
        """A worker answered a batch with a refusal: named with the files that differ
        (asked of it), or with its own reason (another agent source)."""
        wrong = await _differing(client, [refusal.worker], self.version, self.code)
        own = refusal.reason.removeprefix("worker ")  # '<address> refuses ...', as the others
        self.refused[refusal.worker] = wrong.get(refusal.worker, own)
        if refusal.crowded and refusal.worker not in wrong:
            self.crowded.add(refusal.worker)
        self.accepted.discard(refusal.worker)
        self.looked_at = -math.inf  # ask the scheduler again before the next batch

    def workers(self) -> list[str] | None:
        """Where a batch may go: anywhere while no worker was refused (one joining later
        refuses the batch itself), else the checked workers present; none: stop."""
        if not self.refused:
            return None
        usable = sorted(self.accepted & self.present)
        if not usable:
            raise self.stop()
        return usable

    def stop(self) -> WorkerRefused:
        """No worker left that may run the experiment: one line naming each and why."""
        listed = "; ".join(self.refused.values()) or "no worker took its runs"
        if self.refused and self.refused.keys() <= self.crowded:  # each names its fix
            return WorkerRefused(f"Dask workers cannot run this experiment: {listed}")
        return WorkerRefused(
            f"Dask workers cannot run this experiment: {listed}; the driver has passhat "
            f"{self.version} (code {self.code}); install the same passhat on every worker "
            "(docs/dask.md)"
        )


async def _differing(client: Any, addresses: list[str], version: str, code: str) -> dict[str, str]:
    """Of these workers, those that do not run this passhat, the same code: address ->
    '<address> has <what differs>' (the version, or the files whose bytes differ)."""
    try:
        found = await client.run(identity, workers=addresses, on_error="return")
    except (OSError, TimeoutError, ValueError, KeyError):  # gone since the scheduler named it
        return {}
    wrong: dict[str, str] = {}
    for address, got in sorted(found.items()):
        if not isinstance(got, tuple | list):
            wrong[address] = "no passhat it can import"
        elif got[0] != version:
            wrong[address] = f"passhat {got[0]}"
        elif got[1] != code:
            wrong[address] = f"other passhat code ({got[1]} against {code})"
    if not wrong:
        return {}
    odd = [a for a, what in wrong.items() if what.startswith("other")]
    if odd:
        manifests = await client.run(code_manifest, workers=odd, on_error="return")
        for address in odd:
            theirs = manifests.get(address)
            if isinstance(theirs, dict):
                wrong[address] += ": " + differences(code_manifest(), theirs)
    return {address: f"{address} has {what}" for address, what in wrong.items()}


async def _unsealable(client: Any, addresses: list[str], level: str) -> dict[str, str]:
    """Of these workers, those that cannot run a command agent's runs at `level` (no
    bwrap for namespace): address -> '<address> cannot seal runs: <why>'. A worker never
    runs them weaker, so it gets none of them."""
    if not addresses:
        return {}
    try:
        found = await client.run(isolation_refusal, level, workers=addresses, on_error="return")
    except (OSError, TimeoutError, ValueError, KeyError):  # gone since the scheduler named it
        return {}
    return {
        address: f"{address} cannot seal the runs: {why}"
        for address, why in sorted(found.items())
        if why is not None
    }


async def _register(client: Any, plugin: ShipmentPlugin) -> None:
    try:
        await client.register_plugin(plugin, name=plugin.name)
    except WorkerRefused:
        raise
    except Exception as error:  # a worker could not even unpickle passhat's plugin
        raise WorkerRefused(
            f"a Dask worker could not take passhat's worker plugin ({type(error).__name__}: "
            f"{error}); install the same passhat on every worker (docs/dask.md)"
        ) from None


async def _unregister(client: Any, name: str) -> None:
    if client.status == "running":
        try:
            await client.unregister_worker_plugin(name)
        except Exception:  # best effort: the cluster may be going away with us
            return


def _lost(scheduler: str | None, error: BaseException) -> ExecutorError:
    where = scheduler or "the local cluster"
    return ExecutorError(
        f"lost the Dask scheduler at {where} ({type(error).__name__}: {error}); every "
        "finished run is recorded, and `passhat resume` runs the rest"
    )
