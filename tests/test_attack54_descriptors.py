"""One run at `--isolation process` that takes every descriptor passhat has through the
connections it opens to its endpoints' port (round 16's outside attack).

At `process` a run reaches passhat's one server for the experiment on the host's
loopback, where a connection is taken before its token is read: the per-run cap
(serve/endpoints.CONNECTIONS, which a sandboxed run's own listener or relay holds it to)
cannot apply. The agent (tests/attack54_agent.py, ATTACK54_HOLD) opens connections until
one fails and holds them 6 s, beside a second run, under a limit of 512 open files.
Both runs are recorded and counted (held). But asyncio's accept loop, out of descriptors
(EMFILE), reports the failure once per connection of its backlog on every retry, and
schedules a retry each time: passhat printed about 30,000 tracebacks (12 MB) on its
stderr in those 6 s, and spent about three times the CPU of the same run at `namespace`
(5.7 against 1.8 s of user CPU, one run of each as root under a limit of 4,096, load
about 20), where the run's own listener closes
every connection past its cap as it comes and nothing is printed.

Not fixed (strict xfail): the fix is a cap on the shared listener too (stop reading it,
or close what comes, past the descriptors the runs in flight may hold: serve/endpoints
`share` times the runs), so that accept never meets EMFILE; a quieter exception handler
alone would leave the retry storm.
"""

from __future__ import annotations

import subprocess

import pytest

from passhat.store import Store
from sandbox_helpers import attack_suite, open_to_all, passhat_as

Flooded = tuple[list[tuple[str, str | None]], int | None, str]


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory) -> Flooded:
    """Two runs at process under 512 open files, the first holding every connection it
    can: ((status, error_type) of each, what it held, passhat's stderr)."""
    folder = tmp_path_factory.mktemp("flood")
    out = folder / "out"
    out.mkdir()
    suite = attack_suite(folder / "work", {"ATTACK54_HOLD": f"{out},6"}, "attack54_agent.py")
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


@pytest.mark.xfail(strict=True, reason="see the module docstring: cap the shared listener")
def test_a_run_holding_passhats_descriptors_at_process_floods_no_traceback(
    flooded: Flooded,
) -> None:
    _, _, stderr = flooded
    assert stderr.count("Traceback") == 0, f"{stderr.count('Traceback')} tracebacks"
