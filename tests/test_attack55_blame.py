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

Not fixed (xfail strict): passhat cannot stop a same-user process at `process` from
lowering its limits (a root passhat's agent is root; an unprivileged passhat cannot raise
a hard limit again). The fix would look: read its own limits (RLIMIT_NOFILE, NPROC, AS,
DATA, FSIZE) before each spawn and at each run's end, and when one fell below what passhat
set at its start, charge it to the runs under way since the last look (the agent's
doing, `agent_left`-like, named with the limit) and start no more runs at a level that
cannot keep them apart, rather than record every later run as passhat's failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_python import skip_if_closed
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_in, passhat_as

pytestmark = ATTACK_MARKS


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="an agent at process lowers passhat's limits with prlimit(2), and the later runs "
    "are errored passhat_error: check passhat's limits around each run, charge the runs "
    "under way",
)
def test_an_agent_lowering_passhats_limits_makes_no_run_passhats_failure(
    open_tmp: Path,
) -> None:
    skip_if_closed()  # passhat itself runs as a uid of its own, from the checkout
    suite, _ = attack_in(open_tmp, "ATTACK55_PRLIMIT", "5", agent="attack55_agent.py")
    db = open_tmp / "p.db"
    args = ["-k", "3", "--concurrency", "1", "--timeout", "60", "--isolation", "process"]
    done = passhat_as(
        "unprivileged", open_tmp, "run", str(suite), *args, "--db", str(db), "-q", "--no-report"
    )
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    if [r.run_index for r in runs] != [1, 2, 3] or runs[0].output != {"prlimit": "ok"}:
        pytest.fail(f"the attack did not run as planned: {done.stderr[-500:]}")  # not xfail
    kinds = [r.error_type for r in runs]
    assert "passhat_error" not in kinds, [r.error_message for r in runs]
