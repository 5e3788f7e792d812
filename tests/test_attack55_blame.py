"""An agent at `--isolation process` lowers passhat's own open-file limit, and the runs
after it are errored `passhat_error`, "not the agent's doing" (round 17's outside attack).

`passhat_error` says passhat's own part of a run failed (tests/test_attack54_blame.py),
and the kind breakdown does not count it against any agent's behaviour. A limit an agent
sets on itself does not reach passhat; but prlimit(2) sets another process's limits, and
needs only the same uid: not dumpable does not stop it. The agent (tests/
attack55_agent.py, ATTACK55_PRLIMIT) set its parent's, passhat's, RLIMIT_NOFILE to 5,
soft and hard, and was itself counted (failed, as the empty cassette leaves every run);
each later run of the experiment was errored passhat_error ("Too many open files" making
its folder's input.json), and passhat ended with exit 2, unable to open the store again
(every run was recorded once). At `namespace` the agent sees no process of passhat's
(its own PID namespace) and, under root, has a uid of its own.

Fixed (agents/own_limits.py): passhat cannot stop a same-user process at `process` from
lowering its limits (a root passhat's agent is root; an unprivileged passhat cannot raise
a hard limit again), but it looks at its own limits as each run at `process` starts and
ends. The run in flight when one fell is errored `agent_limits`, the limit named (the
agent's doing); passhat sets the limit back where it can, and otherwise starts no more
runs: it stops with one line naming the limit (exit 1), the later runs missing, never
recorded as passhat's failure (`passhat resume` runs them in a passhat of whole limits).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_python import skip_if_closed
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_in, passhat_as

pytestmark = ATTACK_MARKS


def _lowered(open_tmp: Path, how: str) -> tuple[int, str, list]:
    """`passhat run -k 3 --concurrency 1 --isolation process` as an unprivileged user, its
    first run's agent lowering passhat's limit as `how` says (LIMIT[,NAME[,soft]]):
    (passhat's exit code, its stderr, the runs as (index, status, kind, message))."""
    skip_if_closed()  # passhat itself runs as a uid of its own, from the checkout
    suite, out = attack_in(open_tmp, "ATTACK55_PRLIMIT", how, agent="attack55_agent.py")
    db = open_tmp / "p.db"
    args = ["-k", "3", "--concurrency", "1", "--timeout", "60", "--isolation", "process"]
    done = passhat_as(
        "unprivileged", open_tmp, "run", str(suite), *args, "--db", str(db), "-q", "--no-report"
    )
    if not (out / "armed").exists():
        pytest.fail(f"the attack did not run as planned: {done.stderr[-500:]}")
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    said = [(r.run_index, r.status, r.error_type, r.error_message) for r in runs]
    return done.returncode, done.stderr, said


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("5", "RLIMIT_NOFILE) fell from"),  # round 17's attack
        # no thread nor process to start: its loop's close started one to join its pool
        ("1,NPROC", "RLIMIT_NPROC) fell from"),
        ("2147483648,AS", "RLIMIT_AS) fell from"),  # above what passhat maps
    ],
    ids=["nofile", "nproc", "as"],
)
def test_an_agent_lowering_passhats_limits_makes_no_run_passhats_failure(
    open_tmp: Path, how: str, said: str
) -> None:
    code, stderr, runs = _lowered(open_tmp, how)
    assert "passhat_error" not in json.dumps(runs), runs
    # the attacker's run is charged, named with the limit; no run is started after it
    assert [r[:3] for r in runs] == [(1, "errored", "agent_limits")], (runs, stderr[-3000:])
    assert said in runs[0][3] and "while this run's agent ran" in runs[0][3], runs
    # passhat stops in one line that names the limit and what to do, no traceback
    assert code == 1, stderr
    assert said in stderr and "passhat resume" in stderr, stderr
    assert "Traceback" not in stderr, stderr


def test_the_runs_never_started_are_run_by_resume_in_a_passhat_of_whole_limits(
    open_tmp: Path,
) -> None:
    """The stop leaves the store whole (its lease released under 5 open files): `passhat
    resume` runs the rest, the attacker's run kept as it was charged."""
    code, stderr, _ = _lowered(open_tmp, "5")
    assert code == 1, stderr
    db = open_tmp / "p.db"
    with Store(db, create=False) as store:  # the stop names the experiment to resume
        assert f"`passhat resume {store.experiment('latest').command_ref}`" in stderr, stderr
    done = passhat_as("unprivileged", open_tmp, "resume", "latest", "--db", str(db), "-q")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    assert [(r.run_index, r.status, r.error_type) for r in runs] == [
        (1, "errored", "agent_limits"),
        (2, "failed", None),
        (3, "failed", None),
    ]


def test_a_file_size_limit_lowered_stops_passhat_cleanly(open_tmp: Path) -> None:
    """RLIMIT_FSIZE of 4 KiB: the store can grow no more, so the attacker's run is not
    written either (missing: `passhat resume` runs it again), but passhat says why."""
    code, stderr, runs = _lowered(open_tmp, "4096,FSIZE")
    assert [r[:3] for r in runs] in ([], [(1, "errored", "agent_limits")]), runs
    assert code == 1, stderr
    assert "RLIMIT_FSIZE) fell from" in stderr and "Traceback" not in stderr, stderr


def test_a_soft_limit_lowered_is_set_back_and_the_later_runs_run(open_tmp: Path) -> None:
    _, stderr, runs = _lowered(open_tmp, "5,NOFILE,soft")
    assert [r[:3] for r in runs] == [
        (1, "errored", "agent_limits"),
        (2, "failed", None),  # the empty cassette fails every run that runs
        (3, "failed", None),
    ], (runs, stderr[-2000:])
    assert "RLIMIT_NOFILE" in runs[0][3] and "to 5 (hard " in runs[0][3], runs
