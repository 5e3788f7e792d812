"""A real Dask cluster for tests: `dask scheduler` and `dask worker` processes on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TESTS = str(Path(__file__).resolve().parent)
QUIET = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
}
"""Dask's own housekeeping, slowed where no test looks at it: a worker's statistical
profiler (a thread sampling every thread each 10 ms), the event loop's health tick (20
ms) and the system monitor (500 ms). Idle, a scheduler and two workers cost 2.4 CPU-s
each 30 s with them, 0.9 without: a module's cluster lives minutes under make test."""


class Cluster:
    """A scheduler and its workers, each its own process (no nanny: a kill is final)."""

    def __init__(self, folder: Path, *, env: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.file = folder / "scheduler.json"
        self.env = {
            **os.environ,
            **QUIET,
            "PYTHONPATH": TESTS,
            **(env or {}),
        }
        self.scheduler = self._start(
            "scheduler",
            [
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--dashboard-address",
                "127.0.0.1:0",
            ],
            "scheduler.log",
        )
        self.workers: list[subprocess.Popen[bytes]] = []

    @property
    def address(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.file.exists():
                try:
                    return str(json.loads(self.file.read_text())["address"])
                except (ValueError, KeyError):
                    pass  # being written
            if self.scheduler.poll() is not None:
                raise AssertionError(f"dask scheduler exited: {self.log('scheduler.log')}")
            time.sleep(0.05)
        raise AssertionError("dask scheduler did not start within 60 s")

    def add_worker(
        self, nthreads: int = 2, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        n = len(self.workers)
        args = ["--nthreads", str(nthreads), "--no-nanny", "--no-dashboard"]
        args += ["--host", "127.0.0.1", "--name", f"w{n}"]
        worker = self._start("worker", args, f"worker{n}.log", env)
        self.workers.append(worker)
        return worker

    def wait_for_workers(self, n: int, timeout: float = 60.0) -> None:
        """Until the scheduler counts exactly n live workers."""
        from distributed import Client

        with Client(self.address, timeout=timeout, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=timeout)
            deadline = time.monotonic() + timeout
            while len(client.nthreads()) != n:  # a killed one may not be forgotten yet
                if time.monotonic() > deadline:
                    raise AssertionError(f"the scheduler has {len(client.nthreads())} workers")
                time.sleep(0.1)

    def add_limited_worker(self, nthreads: int, nofile: int) -> subprocess.Popen[bytes]:
        """A worker under `prlimit --nofile=N:N` (its open-file limit, soft and hard)."""
        args = ["--nthreads", str(nthreads), "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
        argv = ["prlimit", f"--nofile={nofile}:{nofile}", "--", sys.executable, "-m", "dask"]
        argv += ["worker", "--scheduler-file", str(self.file), *args]
        with (self.folder / f"worker{len(self.workers)}.log").open("wb") as out:
            worker = subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.workers.append(worker)
        return worker

    def live_workers(self) -> list[subprocess.Popen[bytes]]:
        return [w for w in self.workers if w.poll() is None]

    def _start(
        self, role: str, args: list[str], log: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "dask", role, "--scheduler-file", str(self.file), *args]
        with (self.folder / log).open("wb") as out:  # the child keeps its own descriptor
            return subprocess.Popen(
                argv, env={**self.env, **(env or {})}, stdout=out, stderr=subprocess.STDOUT
            )

    def log(self, name: str) -> str:
        return (self.folder / name).read_text(errors="replace")[-2000:]

    def close(self) -> None:
        """Kill every process of the cluster: a graceful close takes seconds, a test has none."""
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
            process.wait()


@contextmanager
def started(folder: Path, env: dict[str, str], workers: int = 2) -> Iterator[Cluster]:
    """A cluster of `workers` live workers for the block, killed whole after it."""
    cluster = Cluster(folder, env=env)
    try:
        for _ in range(workers):
            cluster.add_worker()
        cluster.wait_for_workers(workers)
        yield cluster
    finally:
        cluster.close()


@contextmanager
def limited(folder: Path, nthreads: int, nofile: int) -> Iterator[tuple[Cluster, Any]]:
    """One worker of `nthreads` threads under `prlimit --nofile=NOFILE`, for the block
    (killed whole after it), and the spec of examples/command-agent run by any user's
    Python there (pytest skips where there is none): (cluster, agent spec)."""
    import pytest

    from agent_python import ENV, PYTHON
    from cli_helpers import ROOT
    from passhat.agents.command import CommandSpec

    if PYTHON is None:
        pytest.skip("no Python any user may run (a root passhat's runs need one)")
    cluster = Cluster(folder, env={"PYTHONPATH": TESTS})
    try:
        cluster.add_limited_worker(nthreads=nthreads, nofile=nofile)
        cluster.wait_for_workers(1)
        agent = str(ROOT / "examples" / "command-agent" / "agent.py")
        yield cluster, CommandSpec(command=(PYTHON, agent), env=ENV).spec()
    finally:
        cluster.close()
