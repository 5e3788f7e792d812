"""An agent at `--isolation process` with `--executor dask` on a local cluster read
passhat's provider key in a worker it killed, as the nanny started it again (round 17's
outside attack).

`process` promises an agent of an unprivileged passhat cannot read the environment of
the local cluster's processes: each worker marks itself not dumpable (tests/
test_attack49_dask.py). But it does so when passhat's plugin reaches it (ShipmentPlugin.
setup), after its interpreter started, imported distributed and joined the scheduler: a
second or so in which a process of passhat's user reads /proc/<pid>/environ, with the key
inherited from passhat. No agent is running while the cluster starts; but any agent may
kill its worker (SIGKILL: same uid; not dumpable does not stop a signal), and the nanny
starts it again. The agent (tests/attack55_agent.py, ATTACK55_RESPAWN) leaves a daemon
(`setsid`: at `process` it outlives its run, docs/command-agents.md) that kills the
agent's parent, the worker, and reads the environment of every new process of its uid:
it found passhat's key (5 of 5 tries, load 8-20 on 2 cores). Every run is still
recorded once (the killed worker's task ran again elsewhere): that part holds.

Not fixed (xfail strict): a restarted worker is readable from its exec until the plugin.
The fix: start the cluster's workers with no provider key in the environment they are
exec'd with (the keys handed over after the worker sealed itself, through the nanny's
pickled `env`, which the child applies with os.environ.update and /proc/<pid>/environ
does not show), and seal each worker before it reads anything else from its nanny (a
worker preload, or distributed's `multiprocessing-method: forkserver` with a forkserver
that seals itself and starts before any run). With Yama's ptrace_scope 1 (Ubuntu's
default; this machine has no Yama) a same-user process could no longer read a new
worker's memory either. At `namespace` the agent sees no process of the host's (its own
PID namespace) and its parent is the sandbox's, not the worker (tests/test_attack54_dask.py).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from agent_python import ENV, skip_if_closed
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, KEY, attack_suite, open_to_all, passhat_as
from test_attack55_survivor import daemon_found

pytestmark = [*ATTACK_MARKS, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

MINE = KEY + "-attack55-" + secrets.token_hex(8)
"""This test's provider key: one no other passhat on the machine holds."""
UID = 0x5A550000 + secrets.randbelow(0x10000)
"""The unprivileged passhat's uid: one of its own, whose processes and loopback ports are
this test's alone."""


def _found(folder: Path, variable: str, *extra: str) -> tuple[dict[str, object], list]:
    """`passhat run -k 2 --executor dask --isolation process` as UID, its agent given
    `variable`=OUT,OPENAI_API_KEY[,extra]: what its daemon wrote, and the runs."""
    pytest.importorskip("distributed")
    skip_if_closed()  # passhat itself runs as a uid of its own, from the checkout
    out = folder / "out"
    out.mkdir()
    env = {variable: ",".join([str(out), "OPENAI_API_KEY", *extra]), **ENV}
    suite = attack_suite(folder / "work", env, agent="attack55_agent.py")
    open_to_all(folder)
    db = folder / "p.db"
    args = ["-k", "2", "--timeout", "120", "--isolation", "process", "--executor", "dask"]
    head = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups"]
    args += ["--db", str(db), "-q", "--no-report"]
    done = passhat_as("root", folder, "run", str(suite), *args, key=MINE, head=head)
    found = daemon_found(out, 30)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    return found, [(r.run_index, r.status, r.error_type) for r in runs]


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="a worker the nanny starts again is dumpable, with the key in its environment, "
    "until passhat's plugin seals it: start workers without the key, sealed first",
)
def test_a_worker_killed_by_its_agent_shows_no_key_as_it_comes_back(open_tmp: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("runs passhat as a uid of its own (setpriv), which needs root")
    found, runs = _found(open_tmp, "ATTACK55_RESPAWN")
    if "spawn_main" not in str(found.get("parent")):  # the agent's parent: a worker
        pytest.fail(f"the daemon did not kill a worker: {found}")
    if sorted(runs) != [(1, "failed", None), (2, "failed", None)]:  # each recorded once
        pytest.fail(f"the runs: {runs}")
    assert MINE[::-1] not in found["environ"], "passhat's key, read in a restarted worker"
