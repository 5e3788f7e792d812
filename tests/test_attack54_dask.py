"""An agent of an unprivileged passhat with `--executor dask` ran code in the local
cluster's workers and in its scheduler and read passhat's provider key there (round 16's
outside attack).

`process` promises one thing (docs/command-agents.md): an agent of an unprivileged
passhat cannot read passhat's environment, "nor that of a local Dask cluster's
processes" (they mark themselves not dumpable: tests/test_attack49_dask.py). But the
local cluster's scheduler listened on 127.0.0.1 on plain TCP, with no authentication: the
agent (tests/attack54_agent.py, ATTACK54_DASK) found its port in /proc/net/tcp (the ports
its own uid listens on), connected with the `distributed` client, and ran a function in
every worker and in the scheduler (passhat itself) returning their OPENAI_API_KEY:
passhat's real key, found 3 times. Not dumpable did not matter: the code ran inside.

Fixed: the local cluster speaks TLS with a certificate made for it (executors/dask.py
`_private`); the agent's connections are refused at the handshake. distributed wrote the key in the
clear to a temporary folder each time it built a TLS context, which a same-user process
raced and read (round 17): now only encrypted (tests/test_attack55_tls.py).
At `namespace` (root and unprivileged) the run's network is its own: no port of the
host's loopback is in its view, and with it neither the suite's goal, the store nor a
worker's shipped copy of the suite (the control: at `process` it reads all three). Held
before and after. The unprivileged passhat runs as a uid of its own (not nobody, which
other tests' clusters run as), so the agent tries no other test's cluster.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from agent_python import ENV, skip_if_closed
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, KEY, attack_suite, open_to_all, passhat_as

pytestmark = [*ATTACK_MARKS, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

MINE = KEY + "-attack54-" + secrets.token_hex(8)
"""This test's provider key: one no other passhat on the machine holds."""
UID = 0x5A540000 + secrets.randbelow(0x10000)
"""The unprivileged passhat's uid: one of its own, not nobody, whose loopback ports are
its cluster's alone (the agent tries only its own uid's: no other test's cluster)."""


def _dask_run(user: str, folder: Path, level: str) -> dict[str, object]:
    """One run at `level` on a local cluster of passhat's, as `user`: what its agent found."""
    pytest.importorskip("distributed")
    skip_if_closed()  # passhat is run as another user, from the checkout
    db = folder / "p.db"
    goal = folder / "work" / "suite" / "cases" / "tiny.yaml"
    env = {
        "ATTACK54_DASK": "OPENAI_API_KEY",
        "ATTACK54_READ": f"{goal},{db}",
        "ATTACK54_WRITE": str(db),
        "ATTACK54_GLOB": "/tmp/passhat-*/**/cases/*.yaml",  # a worker's shipped suite
        **ENV,
    }
    suite = attack_suite(folder / "work", env, agent="attack54_agent.py")
    open_to_all(folder)
    args = ["-k", "1", "--timeout", "120", "--isolation", level, "--executor", "dask"]
    # as a uid of its own when the tests run as root: its loopback ports are its cluster's
    own = [f"--reuid={UID}", f"--regid={UID}", "--clear-groups"]
    head = ["setpriv", *own] if user == "unprivileged" and os.geteuid() == 0 else []
    runs_as = "root" if head else user  # setpriv in `head` drops root
    args += ["--db", str(db), "-q", "--no-report"]
    done = passhat_as(runs_as, folder, "run", str(suite), *args, key=MINE, head=head)
    # (the cluster logs, with their tracebacks, the ops the agent sent a worker's port)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, (run.error_message, run.stderr)
    found: dict[str, object] = run.output
    return found


def test_an_agent_at_namespace_cannot_reach_the_local_clusters_scheduler(
    user: str, open_tmp: Path
) -> None:
    found = _dask_run(user, open_tmp, "namespace")
    dask = found["dask"]
    assert dask == {"tried": dask["tried"], "scheduler": False, "found": []}, found
    # nor the suite's goal, the store or a worker's shipped copy of the suite
    assert all(v.endswith("Error") for v in [*found["read"].values(), *found["write"].values()])
    assert found["glob"] == {}, found


@pytest.mark.parametrize("user", ["unprivileged"], indirect=True)
def test_an_agent_at_process_level_reads_no_key_through_the_local_scheduler(
    user: str, open_tmp: Path
) -> None:
    found = _dask_run(user, open_tmp, "process")
    dask = found["dask"]
    assert dask["scheduler"] is False, found
    assert MINE[::-1] not in dask["found"], "passhat's key, read in its Dask workers"
    # the control of the namespace test: at process the agent reads the goal, may write
    # the store, and finds the worker's shipped copy of the suite
    assert not any(v.endswith("Error") for v in found["read"].values()), found
    assert set(found["write"].values()) == {"ok"}, found
    assert found["glob"] and not any(v.endswith("Error") for v in found["glob"].values())
