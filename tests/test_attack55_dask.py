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

Fixed (executors/keys.py): the local cluster's processes are spawned (os.posix_spawn,
in multiprocessing's stead while the cluster lives) with passhat's environment less every
variable named like a secret and the model's key variable; their values reach each worker
over the cluster's TLS in a worker plugin that seals the worker first, then sets them in
its os.environ, which /proc/<pid>/environ never shows. At `namespace` the agent sees no
process of the host's (its own PID namespace) and its parent is the sandbox's, not the
worker (tests/test_attack54_dask.py).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from agent_python import ENV, skip_if_closed
from passhat.executors.dask import _Connection
from passhat.executors.keys import withheld
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


def test_a_worker_killed_by_its_agent_shows_no_key_as_it_comes_back(open_tmp: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("runs passhat as a uid of its own (setpriv), which needs root")
    found, runs = _found(open_tmp, "ATTACK55_RESPAWN")
    if "spawn_main" not in str(found.get("parent")):  # the agent's parent: a worker
        pytest.fail(f"the daemon did not kill a worker: {found}")
    if sorted(runs) != [(1, "failed", None), (2, "failed", None)]:  # each recorded once
        pytest.fail(f"the runs: {runs}")
    assert MINE[::-1] not in found["environ"], "passhat's key, read in a restarted worker"


def _seen() -> dict[str, object]:
    """On a worker: what its os.environ holds, and what its exec's environment showed."""
    with open("/proc/self/environ", "rb") as file:
        exec_environ = file.read().decode(errors="replace")
    return {
        "key": os.environ.get("OPENAI_API_KEY"),
        "model": os.environ.get("ATTACK55_MODEL_VAR"),
        "in_exec": [n for n in ("OPENAI_API_KEY", "ATTACK55_MODEL_VAR") if n in exec_environ],
    }


async def test_a_local_clusters_workers_get_the_keys_after_their_start_not_in_their_exec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The keys reach the workers (a model built there reads its key), never the environment
    a worker was exec'd with: a secret-named variable, and the model's key variable
    whatever its name (`ATTACK55_MODEL_VAR` here, given as the model's)."""
    pytest.importorskip("distributed")
    monkeypatch.setenv("OPENAI_API_KEY", MINE)
    monkeypatch.setenv("ATTACK55_MODEL_VAR", "model-key")
    async with _Connection(None, 1, 1, ["ATTACK55_MODEL_VAR"]) as client:
        seen = list((await client.run(_seen)).values())
    assert [(s["key"], s["model"], s["in_exec"]) for s in seen] == [(MINE, "model-key", [])]


def test_what_a_cluster_process_is_exec_d_without() -> None:
    """Names like a secret's and the model's key variable, whatever its name; Dask's own
    configuration is kept (a worker reads it as it starts, before any plugin)."""
    environ = dict.fromkeys(
        ["OPENAI_API_KEY", "GH_TOKEN", "DB_PASSWORD", "LLM", "PATH", "DASK_X__TLS__KEY"], "v"
    )
    assert withheld(environ, ["LLM", "NOT_SET"]) == [
        "DB_PASSWORD",
        "GH_TOKEN",
        "LLM",
        "OPENAI_API_KEY",
    ]
