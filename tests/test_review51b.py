"""review51b: an outside review of this stop's changes (runner51's deferred last step,
fix51's searching, the look's blame, attack51's filter, the shares of descriptors)."""

from __future__ import annotations

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
