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

Faults:
- a worker dies mid-run: Dask runs the task (the whole batch) again elsewhere;
  none of its runs had been recorded, since a batch comes back whole or not at
  all. A task whose workers died `distributed.scheduler.allowed-failures`
  times is left missing, every run of it (never recorded, so never counted
  twice; `passhat resume` runs them again);
- the scheduler is lost: the driver stops with an ExecutorError, every
  finished run already written;
- a run past --timeout: errored(timeout), by the worker, even when the agent
  blocks its event loop.

Without a scheduler address a LocalCluster of worker processes is started on
127.0.0.1 (no dashboard), one process per core and enough threads for
--concurrency runs in flight.
"""

from __future__ import annotations

import math
import os
import secrets
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from distributed import Client, LocalCluster, get_worker
from distributed.client import FutureCancelledError
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.scheduler import KilledWorker

from passhat.errors import ExecutorError, InputError, WorkerRefused
from passhat.executors.base import Job, WorkItem
from passhat.executors.batching import TARGET_S, BatchSizer, batched
from passhat.executors.identity import code_manifest, differences, foreign, identity
from passhat.executors.shipment import Shipment, prepared, ship
from passhat.records import RunRecord

CONNECT_TIMEOUT_S = 15.0
"""How long to wait for the scheduler to answer, and for a first worker to join."""

_RECEIVED: dict[str, Shipment] = {}
"""Shipments this worker process received through the plugin, by digest."""


class ShipmentPlugin(WorkerPlugin):
    """Hands a shipment to every worker, those that join later included."""

    idempotent = False

    def __init__(self, shipment: Shipment) -> None:
        self.shipment = shipment
        self.name = plugin_name(shipment.digest)

    def setup(self, worker: Any) -> None:
        # refused at once, before any task (a worker that joins later too)
        refusal = foreign(worker.address, identity(), self.shipment.version, self.shipment.code)
        if refusal is not None:
            raise WorkerRefused(refusal)
        _RECEIVED[self.shipment.digest] = self.shipment

    def teardown(self, worker: Any) -> None:
        _RECEIVED.pop(self.shipment.digest, None)


def plugin_name(digest: str) -> str:
    return f"passhat-{digest[:16]}"


def run_batch(digest: str, batch: list[tuple[str, int, int]]) -> list[RunRecord]:
    """The task a worker runs for a batch of (case, index, attempt): each run in turn,
    each under its own deadline; their whole records, or a refusal."""
    where = get_worker().address
    shipment = _RECEIVED.get(digest)
    if shipment is None:
        raise WorkerRefused(
            f"worker {where} did not receive the experiment (its passhat could not load "
            "passhat's worker plugin); install the same passhat on every worker (docs/dask.md)"
        )
    runs = prepared(shipment, where)
    version, code = identity()
    ran_on = f"{where} (passhat {version}, code {code})"
    return [replace(record, ran_on=ran_on) for record in runs.run_batch(batch)]


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

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        workers: int | None = None,
        batch: int | None = None,
        batch_target_s: float = TARGET_S,
    ) -> None:
        """`scheduler`: tcp://HOST:PORT of a running `dask scheduler`; None starts a
        LocalCluster of `workers` processes (default: one per core) on 127.0.0.1.
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

    def __repr__(self) -> str:
        return f"DaskExecutor(scheduler={self.scheduler!r})"

    def check_agent(self, agent_spec: str) -> None:
        """Refuse an agent its workers cannot run, before anything is written."""
        from passhat.executors.shipment import check_shippable

        check_shippable(agent_spec)

    async def run(self, job: Job, todo: Iterable[WorkItem]) -> AsyncIterator[RunRecord]:
        self.left_missing = []  # this call's give-ups only (adaptive rounds call run again)
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(self._client(job.options.concurrency))
            self.address = str(client.scheduler.address)
            shipment = ship(job)
            await _check_workers(client, shipment.version, shipment.code)
            plugin = ShipmentPlugin(shipment)
            await _register(client, plugin)
            stack.push_async_callback(_unregister, client, plugin.name)
            token = secrets.token_hex(4)
            self.tasks = 0
            sizer = BatchSizer(target_s=self.batch_target_s, fixed=self.batch)

            async def some(batch: list[WorkItem]) -> list[RunRecord] | None:
                case_id, index = batch[0]
                self.tasks += 1
                key = f"passhat-{job.experiment.id}-{case_id}-{index}-{len(batch)}-{token}"
                triples = [(c, i, job.attempt((c, i))) for c, i in batch]
                future = client.submit(run_batch, shipment.digest, triples, key=key, pure=False)
                try:
                    records: list[RunRecord] = await future
                except KilledWorker:
                    self.left_missing.extend(batch)
                    return None
                except FutureCancelledError as error:
                    raise _lost(self.scheduler, error) from None
                except (OSError, TimeoutError) as error:
                    raise _lost(self.scheduler, error) from None
                return records

            async for record in batched(todo, job.options.concurrency, sizer, some):
                yield record

    def _client(self, concurrency: int) -> _Connection:
        return _Connection(self.scheduler, self.workers, concurrency)


class _Connection:
    """An asynchronous Client to the scheduler, or to a LocalCluster started for it."""

    def __init__(self, scheduler: str | None, workers: int | None, concurrency: int) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self.concurrency = concurrency
        self.stack = AsyncExitStack()

    async def __aenter__(self) -> Any:
        try:
            address: Any = self.scheduler
            if address is None:
                n = self.workers or max(1, min(os.cpu_count() or 1, self.concurrency))
                cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=n,
                    threads_per_worker=max(1, math.ceil(self.concurrency / n)),
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # no dashboard, and its HTTP server (metrics) on a free loopback port:
                    # by default it tries 8787 and warns when that is taken
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    asynchronous=True,
                )
                address = await self.stack.enter_async_context(cluster)
            client = await self.stack.enter_async_context(
                Client(  # type: ignore[no-untyped-call]
                    address, asynchronous=True, timeout=CONNECT_TIMEOUT_S, set_as_default=False
                )
            )
            await client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
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


async def _check_workers(client: Any, version: str, code: str) -> None:
    """Every worker present runs this passhat, the same code: else a refusal naming each
    worker and what differs (the version, or the files whose bytes differ)."""
    found = await client.run(identity, on_error="return")
    wrong: dict[str, str] = {}
    for address, got in sorted(found.items()):
        if not isinstance(got, tuple | list):
            wrong[address] = "no passhat it can import"
        elif got[0] != version:
            wrong[address] = f"passhat {got[0]}"
        elif got[1] != code:
            wrong[address] = f"other passhat code ({got[1]} against {code})"
    if not wrong:
        return
    odd = [a for a, what in wrong.items() if what.startswith("other")]
    if odd:
        manifests = await client.run(code_manifest, workers=odd, on_error="return")
        for address in odd:
            theirs = manifests.get(address)
            if isinstance(theirs, dict):
                wrong[address] += ": " + differences(code_manifest(), theirs)
    listed = "; ".join(f"{address} has {what}" for address, what in wrong.items())
    raise WorkerRefused(
        f"Dask workers cannot run this experiment: {listed}; the driver has passhat "
        f"{version} (code {code}); install the same passhat on every worker (docs/dask.md)"
    )


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
