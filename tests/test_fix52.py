"""fix52: defects left at round 13's stop, each shown by a test that failed before its fix
(the runs a stop keeps are in test_faults.py and test_executors.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import passhat


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="no prlimit (util-linux) here")
def test_a_dask_worker_whose_threads_do_not_fit_its_descriptors_refuses_by_name(
    tmp_path: Path,
) -> None:
    """A worker of 4 threads under `prlimit --nofile=150:150` holds one command-agent run
    at 8 connections: it took all four, and runs past its limit were errored for want of
    a descriptor, counted as the agent's errored runs. Now the worker refuses the
    experiment in one line naming itself, its limit and the fix; no run is recorded."""
    pytest.importorskip("distributed")
    from agent_python import ENV, PYTHON
    from cli_helpers import CLARIFY, ROOT, SEED
    from dask_cluster import TESTS, Cluster
    from passhat.agents.command import CommandSpec
    from passhat.errors import WorkerRefused
    from passhat.executors.dask import DaskExecutor
    from test_dask import _rows

    if PYTHON is None:
        pytest.skip("no Python any user may run (a root passhat's runs need one)")
    cluster = Cluster(tmp_path, env={"PYTHONPATH": TESTS})
    try:
        args = ["--nthreads", "4", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
        argv = ["prlimit", "--nofile=150:150", "--", sys.executable, "-m", "dask", "worker"]
        argv += ["--scheduler-file", str(cluster.file), *args]
        with (tmp_path / "worker.log").open("wb") as out:
            cluster.workers.append(
                subprocess.Popen(argv, env=cluster.env, stdout=out, stderr=subprocess.STDOUT)
            )
        cluster.wait_for_workers(1)
        spec = CommandSpec(
            command=(PYTHON, str(ROOT / "examples" / "command-agent" / "agent.py")), env=ENV
        ).spec()
        db = tmp_path / "p.db"
        with pytest.raises(WorkerRefused) as refused:
            passhat.evaluate(
                CLARIFY,
                agent=spec,
                cases=[SEED],
                k=4,
                db=db,
                isolation="process",
                concurrency=4,
                executor=DaskExecutor(cluster.address),
            )
    finally:
        cluster.close()
    said = str(refused.value)
    assert "\n" not in said
    assert said.startswith("Dask workers cannot run this experiment: tcp://127.0.0.1:"), said
    assert "its 4 threads are 4 command-agent runs at once" in said
    assert "its limit of 150 open files holds (1 at most, 8 connections each)" in said
    assert "start it with --nthreads 1 or raise its limit" in said
    assert "install the same passhat" not in said  # not what is wrong with it
    assert _rows(db, "latest") == []

