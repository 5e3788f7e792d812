"""An agent of an unprivileged passhat with `--executor dask` runs code in the local
cluster's workers and reads passhat's provider key there (round 16's outside attack).

`process` promises one thing (docs/command-agents.md): an agent of an unprivileged
passhat cannot read passhat's environment, "nor that of a local Dask cluster's
processes" (they mark themselves not dumpable: tests/test_attack49_dask.py). But the
local cluster's scheduler listens on 127.0.0.1 with no authentication, and any process
of the same machine may connect to it: the agent (tests/attack54_agent.py,
ATTACK54_DASK) finds its port in /proc/net/tcp (the ports its own uid listens on), connects
with the `distributed` client, and runs a function in every worker and in the scheduler
that returns their OPENAI_API_KEY: passhat's real key, which the workers hold to forward
the runs' model calls. Not dumpable does not matter: the code runs inside them.

At `namespace` (root and unprivileged) the run's network is its own: no port of the
host's loopback is in its /proc/net/tcp, and the scheduler is not reached. Held.
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
    suite = attack_suite(
        folder / "work", {"ATTACK54_DASK": "OPENAI_API_KEY", **ENV}, agent="attack54_agent.py"
    )
    open_to_all(folder)
    db = folder / "p.db"
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
    found: dict[str, object] = run.output["dask"]
    return found


def test_an_agent_at_namespace_cannot_reach_the_local_clusters_scheduler(
    user: str, open_tmp: Path
) -> None:
    found = _dask_run(user, open_tmp, "namespace")
    assert found == {"tried": found["tried"], "scheduler": False, "found": []}, found


@pytest.mark.parametrize("user", ["unprivileged"], indirect=True)
def test_an_agent_at_process_level_reads_no_key_through_the_local_scheduler(
    user: str, open_tmp: Path
) -> None:
    found = _dask_run(user, open_tmp, "process")
    assert found["scheduler"] is False, found
    assert MINE[::-1] not in found["found"], "passhat's key, read in its Dask workers"
