"""One run takes its user's key quota from the other runs and from passhat (round 14).

The kernel counts the keys a user holds (kernel.keys.maxkeys, 200, and maxbytes, 20,000
bytes, for every uid but root) per host uid, across user namespaces: a sandbox's keyrings
are its own (pam_keyinit's and passhat's are out of its reach: test_sandbox_keyring.py),
its quota is not. Tried for real at `--concurrency 2`, run 1 adding user keys of 1,000
bytes until refused and holding them while run 2 added one: at `namespace` under root
(a uid of its own per run) run 1 took 19 (EDQUOT) and run 2 added its key; under an
unprivileged passhat every run is passhat's own uid, and run 2 got EDQUOT, as at
`process` (the control). passhat's own session keyring for the runs it starts
(sandbox.seal_keyring, once per thread) is a key of the same user in the same quota (not
tried here). The agent keeps its keys in its process keyring, gone with it: at `process`
keys left in the user keyring (@u) outlived their run (19 of nobody's, in
/proc/key-users, until removed by hand); in a sandbox @u is its user namespace's.

Not fixed: the same cause and fix as test_attack51_ucounts.py's inotify instances, a
host uid per run for an unprivileged passhat too (its subordinate uids, newuidmap). The
unprivileged test and its control hold the quota of the user nobody, machine-wide, for
as long as run 2 takes to try (under a second): PASSHAT_ATTACK_KEYS=1 runs them, since a
test sealing a keyring as nobody meanwhile would fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, attack_suite, open_to_all, runs_at

pytestmark = ATTACK_MARKS

SHARED = (
    "an unprivileged passhat runs every sandbox as its own host uid: one run takes the "
    "user's key quota from the others and from passhat (the fix: a subordinate uid per "
    "run, newuidmap)"
)
NOBODYS = pytest.mark.skipif(
    not os.environ.get("PASSHAT_ATTACK_KEYS"),
    reason="holds the key quota of the user nobody machine-wide while it runs: a test "
    "sealing a keyring as nobody meanwhile fails; PASSHAT_ATTACK_KEYS=1 runs it",
)


def _keys(user: str, open_tmp: Path, level: str) -> tuple[RunRecord, RunRecord]:
    """Run 1 takes its user's key quota and holds it while run 2 adds a key."""
    out = open_tmp / "out"
    out.mkdir()
    suite = attack_suite(
        open_tmp / "work", {"ATTACK52_HOLD": f"{out},60,keys"}, "attack52_agent.py"
    )
    open_to_all(open_tmp)
    first, second = runs_at(user, open_tmp, suite, level, "--no-report", "--agent-write", str(out))
    took = first.output["hold"]["took"]["keys"]  # type: ignore[index]
    assert took[0] > 0 and took[1] == "EDQUOT", first.output
    return first, second


@pytest.mark.skipif(os.geteuid() != 0, reason="a root passhat gives each run a uid of its own")
def test_a_root_passhats_run_leaves_the_other_runs_their_key_quota(open_tmp: Path) -> None:
    _, second = _keys("root", open_tmp, "namespace")
    assert second.output == {"hold": {"got": {"keys": "ok"}}}, second.output


@NOBODYS
@pytest.mark.xfail(strict=True, reason=SHARED)
def test_an_unprivileged_passhats_run_leaves_the_other_runs_their_key_quota(
    open_tmp: Path,
) -> None:
    _, second = _keys("unprivileged", open_tmp, "namespace")
    assert second.output == {"hold": {"got": {"keys": "ok"}}}, second.output


@NOBODYS
def test_control_at_process_level_one_run_takes_the_others_key_quota(open_tmp: Path) -> None:
    _, second = _keys("unprivileged", open_tmp, "process")
    assert second.output == {"hold": {"got": {"keys": "EDQUOT"}}}, second.output
