"""A run cannot make passhat hold its requests' bodies by the hundred at once (round 11's
outside attack).

Each model request may bring 32 MiB (serve/app.MAX_BODY) and each run may hold 128
connections open (serve/endpoints.CONNECTIONS), and passhat read every request's body
as it came, on all of them at once: an agent that opened 40 connections and sent on each
a request of 32 MiB, all but its last byte, held passhat at 1.3 GiB of peak memory for as
long as it liked (60 connections: 2.0 GiB; 128: 4 GiB, per run, and --concurrency
multiplies it past the machine's memory). No budget saw it: the bodies were never
finished, so nothing was kept. Now the hub serves REQUESTS of a run's POSTs at once
and the others wait their turn unread (uvicorn stops reading a connection whose request
is not read), so one run holds at most REQUESTS bodies. A real agent's parallel requests
are all answered (the control), and the MCP event streams an agent holds open (GET, no
body) take no turn. A request whose agent closes its connection mid-body is answered
quietly, not logged by uvicorn with a traceback on passhat's stderr. As root and as
nobody; the level does not matter (the memory is passhat's), so the tests run
`namespace`.
"""

from __future__ import annotations

from pathlib import Path

from agent_python import PYTHON
from passhat.records import RunRecord
from passhat.serve.endpoints import REQUESTS
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as

pytestmark = ATTACK_MARKS

PEAK = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
sys.exit(code)
"""
"""Runs the rest of its command line and writes the peak memory (MiB) of the largest
process it waited for (passhat) to the file its first argument names."""
HELD = 40
"""Connections the agent holds, each with a request of 32 MiB but its last byte."""
PEAK_MIB = 600
"""What passhat may hold at its peak for that run: it starts at about 100 MiB, and
REQUESTS bodies of 32 MiB come on top (it held 1.3 GiB before)."""


def agent_suite(work: Path, env: dict[str, str]) -> Path:
    """A suite whose agent is tests/attack49_agent.py with `env` (its ATTACK_* variables),
    its model an empty cassette: the suite's folder."""
    return attack_suite(work, env, agent="attack49_agent.py")


def one_run(user: str, folder: Path, suite: Path) -> tuple[RunRecord, int, str]:
    """The one run of `passhat run SUITE` as `user`, passhat's peak memory (MiB) and its
    stderr."""
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db, peak = folder / "p.db", folder / "peak"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "--db", str(db), "-q"]
    head = [str(PYTHON), "-I", "-c", PEAK, str(peak)]
    done = passhat_as(user, folder, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return run, int(peak.read_text()), done.stderr


def test_held_request_bodies_hold_passhats_memory_within_a_bound(user: str, open_tmp: Path) -> None:
    suite = agent_suite(open_tmp / "work", {"ATTACK_HOLD": f"{HELD},60"})
    run, peak, _ = one_run(user, open_tmp, suite)
    assert run.output is not None, run.error_message
    assert peak <= PEAK_MIB, (
        f"passhat held {peak} MiB at its peak for a run holding {HELD} requests of 32 MiB"
    )
    assert 0 < run.output["held"] <= REQUESTS, run.output


def test_a_runs_parallel_requests_past_the_bound_wait_and_are_all_answered(
    user: str, open_tmp: Path
) -> None:
    suite = agent_suite(open_tmp / "work", {"ATTACK_MANY": str(4 * REQUESTS)})
    run, _, _ = one_run(user, open_tmp, suite)
    assert run.output == {"many": [200] * (4 * REQUESTS)}, run.error_message


def test_a_request_cut_mid_body_leaves_no_traceback_on_passhats_stderr(
    user: str, open_tmp: Path
) -> None:
    # uvicorn logged each as "Exception in ASGI application" with starlette's
    # ClientDisconnect traceback: an agent could fill passhat's output with them
    suite = agent_suite(open_tmp / "work", {"ATTACK_CUT": "1"})
    run, _, stderr = one_run(user, open_tmp, suite)
    assert run.output is not None and len(run.output["cut"]) == 3, run.error_message
    assert "Traceback" not in stderr and "Exception" not in stderr, stderr[-3000:]


def test_a_runs_mcp_event_streams_held_open_take_no_turn(user: str, open_tmp: Path) -> None:
    # GET /mcp is an event stream held open as long as the client likes: were it served
    # within the REQUESTS turns, an agent holding that many would wait for ever
    env = {"ATTACK_STREAMS": str(2 * REQUESTS), "ATTACK_MANY": "4"}
    run, _, _ = one_run(user, open_tmp, agent_suite(open_tmp / "work", env))
    assert run.output == {"many": [200] * 4}, run.error_message
