"""The local Dask cluster's TLS key, in the clear on disk each time a TLS context was built
(round 17's outside attack).

passhat's local cluster speaks TLS with a certificate made for it (round 16: an agent at
`--isolation process` ran code in the scheduler, passhat itself, on plain TCP). But
distributed's `Security.temporary()` builds each TLS context by writing the certificate
and the private key to a folder of /tmp (`dask.crt`, `dask.pem`, in the clear) and loading
them from there. A process of passhat's user watching /tmp with inotify (the code of
tests/attack55_agent.py `grab`) read the key 18 of the 20 times a context was built, at
load 10 on 2 cores; with it, a client joins the cluster and runs what it likes there.
Contexts are built as the cluster's processes start: the cluster's own start, and each
worker the nanny starts again (a worker a same-user agent killed: tests/test_attack55_dask.py).

Fixed: the key is written only encrypted, under a password made for the cluster and held
in memory beside it (passhat/executors/tls.py); what lands in /tmp is no use without it.
The test spies on what every TLS context of the cluster's loads from disk; the control
(the handshake) shows the contexts still do their work, also as unpickled on a worker.
"""

from __future__ import annotations

import asyncio
import pickle
import ssl
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed")
pytest.importorskip("cryptography")

from passhat.executors.dask import _private

ROLES = ["client", "scheduler", "worker"]


def test_no_tls_context_of_the_local_cluster_reads_its_key_in_the_clear_from_disk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded: list[str] = []
    load = ssl.SSLContext.load_cert_chain

    def spy(self: ssl.SSLContext, certfile: Any, keyfile: Any = None, **kw: Any) -> None:
        loaded.append(Path(keyfile or certfile).read_text())  # what lay on disk
        load(self, certfile, keyfile, **kw)

    monkeypatch.setattr(ssl.SSLContext, "load_cert_chain", spy)
    security = _private()
    for role in ROLES:
        security.get_connection_args(role)
        security.get_listen_args(role)
    assert len(loaded) == 2 * len(ROLES)
    assert not [k for k in loaded if "BEGIN PRIVATE KEY" in k], "the key in the clear on disk"
    assert all("BEGIN ENCRYPTED PRIVATE KEY" in k for k in loaded)


async def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> bytes:
    """One TLS connection over loopback between the two contexts: what the server sent."""

    async def answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"ok")
        await writer.drain()
        writer.close()

    listening = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server)
    port = listening.sockets[0].getsockname()[1]
    async with listening:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client)
        said = await reader.read()
        writer.close()
    return said


async def test_the_clusters_contexts_authenticate_each_other_also_on_a_worker() -> None:
    security = _private()
    shipped = pickle.loads(pickle.dumps(security))  # as the nanny hands it to a worker
    server = shipped.get_listen_args("scheduler")["ssl_context"]
    client = security.get_connection_args("worker")["ssl_context"]
    assert client.verify_mode == ssl.CERT_REQUIRED == server.verify_mode
    assert await _handshake(server, client) == b"ok"
    # a client with a certificate of its own is refused: the cluster's alone is taken
    stranger = type(security).temporary().get_connection_args("client")["ssl_context"]
    with pytest.raises((ssl.SSLError, ConnectionError)):
        await _handshake(server, stranger)
    assert "tls_password" not in repr(security) and "Temporary" in repr(security)
