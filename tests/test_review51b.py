"""review51b: an outside review of this stop's changes (runner51's deferred last step,
fix51's searching, the look's blame, attack51's filter, the shares of descriptors)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import SimpleNamespace

import pytest


def test_in_process_dask_workers_each_take_their_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Dask workers in one process (a LocalCluster with processes=False, a notebook's
    Client(processes=False)) run their threads' runs at once out of the same descriptors:
    the process's cap counts both. Once per process, the second worker's 2 threads went
    uncounted (the cap as for 2 runs at once while 4 ran), where one long-lived worker
    shipped many experiments is still counted once."""
    pytest.importorskip("distributed")
    from passhat.agents import isolation
    from passhat.executors import dask
    from passhat.serve import endpoints

    monkeypatch.setattr(isolation, "seal_this_process", lambda: None)
    monkeypatch.setattr(dask, "foreign", lambda *args: None)
    monkeypatch.setattr(dask, "identity", lambda: None)
    monkeypatch.setattr(dask, "_SHARED", type(dask._SHARED)())
    monkeypatch.setattr(dask, "_RECEIVED", {})
    monkeypatch.setattr(endpoints, "_open", [])
    monkeypatch.setattr(endpoints, "_share", endpoints.CONNECTIONS)
    shipments = [SimpleNamespace(digest=d, version="v", code="c") for d in ("one", "two")]
    workers = [
        SimpleNamespace(address=f"inproc://127.0.0.1/1/{n}", state=SimpleNamespace(nthreads=2))
        for n in (1, 2)
    ]
    for shipment in shipments:  # two experiments shipped to both workers
        for worker in workers:
            dask.ShipmentPlugin(shipment).setup(worker)  # type: ignore[arg-type]
    assert sum(endpoints._open) == 4, endpoints._open


def test_bounded_yields_every_run_once_however_its_last_steps_fall() -> None:
    """runner51's deferral: a run's last step (a `Finish`) is called a loop turn after its
    slot's next run starts, the last run's after its slot has ended. Whatever each run
    does (waits or not, a record, a Finish or nothing), with any slots and ramp, every
    run that made a record is yielded once, and none after the end of the stream."""
    import asyncio
    import random

    from passhat.executors import bounded
    from passhat.records import RunRecord

    async def once(seed: int) -> None:
        rng = random.Random(seed)
        n, slots = rng.randint(0, 12), rng.randint(1, 5)
        ramp = rng.choice([0.0, 0.0, 0.0005])
        kinds = [rng.choice(["finish", "finish", "record", "none"]) for _ in range(n)]
        waits = [rng.choice([None, 0, 0.0005]) for _ in range(n)]
        made: list[int] = []

        async def run_one(case_id: str, index: int) -> object:
            if waits[index] is not None:
                await asyncio.sleep(waits[index])
            record = RunRecord("e", case_id, index, "h", "passed")
            if kinds[index] == "none":
                return None
            if kinds[index] == "record":
                made.append(index)
                return record

            def finish() -> RunRecord:
                made.append(index)
                return record

            return finish

        got = [
            r.run_index
            async for r in bounded((("c", i) for i in range(n)), slots, run_one, ramp=ramp)
        ]  # type: ignore[arg-type]
        # a last step called after the stream ended is one lost: one deferred up to 2 ms
        # (its timer set before this one) is called before this sleep ends
        await asyncio.sleep(0.002)
        wanted = [i for i, kind in enumerate(kinds) if kind != "none"]
        assert sorted(got) == wanted == sorted(made), (seed, kinds, waits, slots, ramp, got)

    async def all_of() -> None:
        for seed in range(300):
            await once(seed)

    asyncio.run(all_of())


def test_a_store_its_owner_cannot_reach_is_still_one_to_a_root_look(tmp_path: Path) -> None:
    """attack51's as_owner: a root passhat asks SQLite about a file as the file's owner.
    A store of another user's kept under a folder only root may enter (root's 0700 home;
    a teammate's results unpacked by root keep their owner) is out of its owner's reach:
    SQLite, asked as the owner, could not open it, and the look fell back to the first
    pages, where a store migrated after it held runs has no table text: it was taken for
    no store, and a run whose view holds the folder (its mounts reach what the owner
    cannot) would have read its answers."""
    from passhat.agents.sandbox import is_store
    from test_review49 import _migrated_store

    if os.geteuid() != 0:
        pytest.skip("as_owner acts only where passhat is root")
    private = tmp_path / "root-only"
    private.mkdir(mode=0o700)
    store = private / "results.db"
    _migrated_store(store)
    for leftover in (store.with_name("results.db-wal"), store.with_name("results.db-shm")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
    os.chown(store, 65533, 65533)
    assert is_store(str(store)) is True
