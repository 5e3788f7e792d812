"""With `--executor dask` on a local cluster, no process of passhat's shows its provider
key to an agent (round 11's outside attack).

`process` promises one thing: an agent of an unprivileged passhat cannot read passhat's
environment, where the provider's key sits (passhat is not dumpable). A local Dask
cluster's processes are passhat's too, started with the same environment: the worker
processes (each sealed itself only when it first ran a command agent, so an idle one
stayed readable) and multiprocessing's resource tracker (never sealed). An agent at
`process` read the key from /proc/<pid>/environ of both. Now every worker seals itself
as it starts (ShipmentPlugin.setup, executors/dask.py), and the resource tracker is started without the environment.
The control: a process of the same user holding a decoy of the key in its environment is
found, so the agent's search works. Unprivileged passhat only: under a root passhat the
agent at `process` is root, and reads everything (docs/command-agents.md).
"""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import pytest

from agent_python import PYTHON, skip_if_closed
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, KEY, passhat_as, unprivileged
from test_attack49_serve import agent_suite

pytestmark = [*ATTACK_MARKS, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

MINE = KEY + "-attack49-" + secrets.token_hex(8)
"""This test's provider key: one no other passhat on the machine holds (other tests run
passhat as nobody with KEY, and a passhat is readable while it starts, before it seals
itself)."""
PREFIX = MINE[:-8]
"""What the agent looks for: the head of this test's key (its decoy's too)."""


def test_no_local_dask_process_shows_the_key_to_a_process_agent(open_tmp: Path) -> None:
    pytest.importorskip("distributed")
    skip_if_closed()  # passhat is run as another user, from the checkout
    suite = agent_suite(open_tmp / "work", {"ATTACK_ENVIRON": PREFIX})
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    decoy = subprocess.Popen(
        [*unprivileged(), str(PYTHON), "-c", "import time; time.sleep(300)"],
        env={"PATH": os.environ["PATH"], "DECOY": PREFIX + "decoy"},
    )
    try:
        db = open_tmp / "p.db"
        args = ["-k", "1", "--isolation", "process", "--executor", "dask", "--db", str(db)]
        done = passhat_as(
            "unprivileged",
            open_tmp,
            "run",
            str(suite),
            *args,
            "--concurrency",
            "2",
            "-q",
            "--no-report",
            key=MINE,
        )
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    finally:
        decoy.kill()
        decoy.wait()
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    found = run.output["environ"]
    assert f"{decoy.pid}/environ" in found, f"the control: the decoy was not found ({found})"
    del found[f"{decoy.pid}/environ"]
    assert found == {}, f"passhat's key, readable by a process agent in {found}"
