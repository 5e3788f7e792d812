"""TLS for the local Dask cluster passhat starts: a certificate made for that cluster,
whose private key never reaches a disk in the clear.

distributed's `Security.temporary()` keeps the certificate and key in memory, but builds
each TLS context by writing both to a temporary folder (`dask.crt`, `dask.pem`) and
loading them from there: a same-user process watching /tmp (inotify) read that key 18 of
20 times it was written (round 17), and with it could submit work to the cluster, which
runs it in passhat's own process. Here the key is written encrypted, with a password
made for the cluster and held beside it in memory (pickled to the workers with the rest
of the `Security`, as distributed's own in-memory key is): a copy read from disk is
of no use without it. Only this module's class must be importable where the cluster's
processes unpickle it, and passhat is (its workers run passhat's plugin).
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from typing import Any

from distributed.security import Security


class SealedSecurity(Security):
    """distributed's Security whose private key is PEM encrypted under `tls_password`
    (an attribute of the instance's own, not a slot: Security's `__init__` takes only the
    names of its own `__slots__`, which a subclass's would replace)."""

    tls_password: bytes
    tls_min_version: ssl.TLSVersion  # Security's, set by name (setattr)
    tls_max_version: ssl.TLSVersion | None

    @classmethod
    def temporary(cls, **kwargs: Any) -> SealedSecurity:
        """A new key and self-signed certificate for every role, the key encrypted."""
        from cryptography.hazmat.primitives import serialization

        made = Security.temporary(**kwargs)  # type: ignore[no-untyped-call]
        password = secrets.token_hex(32).encode()
        key = serialization.load_pem_private_key(made.tls_client_key.encode(), password=None)
        sealed = key.private_bytes(
            encoding=serialization.Encoding.PEM,
            format=serialization.PrivateFormat.PKCS8,
            encryption_algorithm=serialization.BestAvailableEncryption(password),
        ).decode()
        cert = made.tls_client_cert
        security = cls(
            require_encryption=True,
            tls_ca_file=cert,
            tls_client_key=sealed,
            tls_client_cert=cert,
            tls_scheduler_key=sealed,
            tls_scheduler_cert=cert,
            tls_worker_key=sealed,
            tls_worker_cert=cert,
            **kwargs,
        )
        security.tls_password = password
        return security

    def get_connection_args(self, role: str) -> dict[str, Any]:
        return {
            "ssl_context": self._context(role, ssl.Purpose.SERVER_AUTH),
            "require_encryption": True,
            "extra_conn_args": self.extra_conn_args,
        }

    def get_listen_args(self, role: str) -> dict[str, Any]:
        return {
            "ssl_context": self._context(role, ssl.Purpose.CLIENT_AUTH),
            "require_encryption": True,
        }

    def _context(self, role: str, purpose: ssl.Purpose) -> ssl.SSLContext:
        """A TLS context for `role`, as distributed builds one (mutual authentication
        against the cluster's own certificate, no host names), its key loaded encrypted."""
        tls = self.get_tls_config_for_role(role)  # type: ignore[no-untyped-call]
        context = ssl.create_default_context(purpose=purpose, cadata=tls["ca_file"])
        context.minimum_version = self.tls_min_version
        if self.tls_max_version is not None:
            context.maximum_version = self.tls_max_version
        with tempfile.TemporaryDirectory() as folder:  # ssl loads a chain from files only
            paths = []
            for name, text in (("dask.crt", tls["cert"]), ("dask.pem", tls["key"])):
                paths.append(os.path.join(folder, name))
                with open(paths[-1], "w", encoding="ascii") as file:
                    file.write(text)
            context.load_cert_chain(paths[0], paths[1], password=self.tls_password)
        context.verify_mode = ssl.CERT_REQUIRED
        context.check_hostname = False
        context.verify_flags &= ~ssl.VERIFY_X509_STRICT
        if tls.get("ciphers"):
            context.set_ciphers(tls["ciphers"])
        return context
