"""One run at `--isolation process` that takes every descriptor passhat has through the
connections it opens to its endpoints' port (round 16's outside attack).

At `process` a run reaches passhat's one server for the experiment on the host's
loopback, where a connection is taken before its token is read: the per-run cap
(serve/endpoints.CONNECTIONS, which a sandboxed run's own listener or relay holds it to)
cannot apply. The agent (tests/attack54_agent.py, ATTACK54_HOLD) opens connections until
one fails and holds them 6 s (2 s here: the flood's thousands of tracebacks come well
within that), beside a second run, under a limit of 512 open files.
Both runs are recorded and counted (held). But asyncio's accept loop, out of descriptors
(EMFILE), reports the failure once per connection of its backlog on every retry, and
schedules a retry each time: passhat printed about 30,000 tracebacks (12 MB) on its
stderr in those 6 s, and spent about three times the CPU of the same run at `namespace`
(5.7 against 1.8 s of user CPU, one run of each as root under a limit of 4,096, load
about 20), where the run's own listener closes
every connection past its cap as it comes and nothing is printed.

Fixed: the shared listener closes each connection past `share` times the runs at once
as it comes (serve/endpoints.shared_connections), as a run's own listener does past its
share, and asyncio's accept loop takes at most 128 in one turn (serve/http.BACKLOG, not
uvicorn's 2,048), so accept never meets EMFILE. The agent still opens as many as its
own descriptors allow (each is closed at passhat's end), and nothing is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import subprocess
from pathlib import Path

import pytest

from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import endpoints, hub_scope, serve_run
from passhat.store import Store
from passhat.suite import load_suite
from sandbox_helpers import attack_suite, open_to_all, passhat_as

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 512
"""passhat's open-file limit in these tests, as in the attack."""

Flooded = tuple[list[tuple[str, str | None]], int | None, str]


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory) -> Flooded:
    """Two runs at process under 512 open files, the first holding every connection it
    can: ((status, error_type) of each, what it held, passhat's stderr)."""
    folder = tmp_path_factory.mktemp("flood")
    out = folder / "out"
    out.mkdir()
    suite = attack_suite(folder / "work", {"ATTACK54_HOLD": f"{out},2"}, "attack54_agent.py")
    open_to_all(folder)
    db = folder / "p.db"
    args = ["-k", "2", "--concurrency", "2", "--timeout", "60", "--isolation", "process"]
    head = ["prlimit", "--nofile=512:512"]
    done: subprocess.CompletedProcess[str] = passhat_as(
        "root", folder, "run", str(suite), *args, "--db", str(db), "-q", "--no-report", head=head
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    held = next((r.output["held"] for r in runs if r.output and "held" in r.output), None)
    return [(r.status, r.error_type) for r in runs], held, done.stderr


def test_a_run_holding_passhats_descriptors_at_process_leaves_both_runs_recorded(
    flooded: Flooded,
) -> None:
    runs, held, _ = flooded
    assert held is not None and held > 400, held  # the attack took passhat's descriptors
    assert sorted(runs) == [("failed", None), ("failed", None)], runs


def test_a_run_holding_passhats_descriptors_at_process_floods_no_traceback(
    flooded: Flooded,
) -> None:
    _, _, stderr = flooded
    assert stderr.count("Traceback") == 0, f"{stderr.count('Traceback')} tracebacks"


async def _answers(port: int, count: int) -> list[bytes]:
    """The first line of the answer on each of `count` connections to `port`, all open at
    once and each sent a request with no token (b"" for a connection closed unanswered)."""
    opened = [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]
    try:
        answers = []
        for reader, writer in opened:
            with contextlib.suppress(ConnectionError):
                writer.write(b"GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
                await writer.drain()
            try:
                answers.append(await asyncio.wait_for(reader.readline(), 30))
            except ConnectionError:
                answers.append(b"")
        return answers
    finally:
        for _, writer in opened:
            writer.close()


async def test_the_shared_listener_holds_no_more_than_the_runs_shares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two runs at once under a limit of LIMIT: the experiment's listener on the host's
    loopback holds each run's share (`connections()`) for both, and past that closes the
    oldest idle one for each new one (round 17: before, the new one, so that idle
    connections shut every other run out: tests/test_attack55_listener.py); before round
    16 it took every connection until passhat had no descriptor."""
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (LIMIT, LIMIT))
    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    async with hub_scope(2), serve_run(env, ctx) as run:
        most = endpoints.shared_connections()
        assert most == 2 * endpoints.connections() < LIMIT - endpoints.OWN_DESCRIPTORS
        answers = await _answers(run.port, most + 4)
    assert answers[:4] == [b""] * 4  # all idle as the last 4 came: the oldest closed
    assert all(a.startswith(b"HTTP/1.1 401") for a in answers[4:]), answers[4:]
    assert endpoints.shared_connections() == endpoints.CONNECTIONS
