"""Archives a run leaves in its `write:` folder made the next run's look outlast its
--timeout (round 12's outside attack); now that run is errored `isolation`, naming why.

The look for answers before each run opens every archive in view, each bounded (10,000
members, 64 MiB, 1 s: agents/archives.py), but nothing bounds them together, and the look
is made inside the next run's deadline (CommandAgent.__call__, under run_once's
--timeout). Run 1 leaves 80 hard links of one gzipped tar of 10,000 members (163 KiB)
in its `write:` folder: each costs the look about 0.45 s (chrt -f 20, side by side: 10
of them 4.5 s), so run 2 is errored `timeout` before its agent starts, "the run did not
finish within 20 s"; as many plain files of the same size (the control) cost nothing.
A run so chooses which later runs of the experiment get no verdict. As root and as
nobody.

fix50b bounded the whole look (archives.LOOK_S, 10 s; LOOK_BYTES) and refuses past it
(TooMuchToLook), but in a later run that refusal was recorded `agent_error`, the agent
blamed for what passhat did before starting it. TooMuchToLook now carries error_type
`isolation`: run 2 is errored `isolation`, its message naming the archives, the bound
and the fix, and its agent never started. The look still counts against the run's
--timeout (the run's wall clock is what --timeout bounds: k runs never take more than k
timeouts), so its bound, 10 s, must stay below a --timeout worth giving; a run whose
--timeout is shorter than the look is still recorded `timeout` (execution.py's deadline,
not the look's). As root and as nobody; the control (as many plain files cost nothing)
is a unit test.

Round 13 (attack51): what stops the look lies in the agent's own `write:` folder, filled
since the experiment started, so run 2 is errored `agent_left`, the agent's doing, not
`isolation`, passhat's.

The passhat under attack runs with its whole look's bound at LOOK_S_HERE (1 s), not 10 s:
the look spends its bound in CPU, and at 10 s this one test took 10 CPU-s of the suite
(heavy57). What the test proves (the look stopped, before the timeout, is `agent_left`,
naming the archives) does not hang on the bound's size; LOOK_S itself stays below a
--timeout worth giving (asserted below against TIMEOUT_S).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passhat.agents import archives
from passhat.agents.archives import TooMuchToLook, whole_look
from passhat.agents.lookout import Lookout
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, lowered, passhat_as

COUNT = 80
TIMEOUT_S = 30
LOOK_S_HERE = 1.0
"""The whole look's bound of the passhat under attack (sandbox_helpers.lowered)."""


def _suite(folder: Path, scratch: Path, kind: str) -> Path:
    """A suite in `folder`/suite whose agent (tests/attack50_agent.py, in `folder`/work)
    leaves COUNT files of `kind` in `scratch` in its run 1."""
    env = {"ATTACK_PACK": f"{scratch},{COUNT},{kind}"}
    return attack_suite(folder / "work", env, "attack50_agent.py", suite=folder / "suite")


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_archives_a_run_leaves_error_the_next_run_isolation_not_timeout(
    user: str, open_tmp: Path
) -> None:
    scratch = open_tmp / "scratch"
    scratch.mkdir()
    suite = _suite(open_tmp, scratch, "tgz")
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "2", "--concurrency", "1", "--timeout", str(TIMEOUT_S), "--db", str(db)]
    args += ["--agent-write", str(scratch), "-q", "--no-report"]
    assert LOOK_S_HERE < archives.LOOK_S < TIMEOUT_S
    head = lowered("passhat.agents.archives", "LOOK_S", LOOK_S_HERE)
    done = passhat_as(user, open_tmp, "run", str(suite), *args, head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {run.run_index: run for run in store.runs(store.experiment("latest").id)}
    assert runs[1].output == {"packed": COUNT}, runs[1].error_message
    # the archives lie in the agent's write: folder, left by its run 1 (round 13)
    assert (runs[2].status, runs[2].error_type) == ("errored", "agent_left"), runs[2].error_message
    assert f"{scratch}: the archives in the agent's view" in str(runs[2].error_message)
    assert f"or {LOOK_S_HERE:g} s)" in str(runs[2].error_message)  # lowered took


def test_the_whole_look_past_its_bound_is_an_isolation_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unit-level control: archives past the whole look's bound (LOOK_S, here 0.05 s)
    raise TooMuchToLook, which a run records as `isolation`; as many plain files of the
    same size do not."""
    import io
    import tarfile

    monkeypatch.setattr(archives, "LOOK_S", 0.05)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for index in range(10_000):
            member = tarfile.TarInfo(f"m{index}")
            member.size = 600
            tar.addfile(member, io.BytesIO(bytes(600)))
    for kind, data in (("plain", os.urandom(len(buffer.getvalue()))), ("tgz", buffer.getvalue())):
        (tmp_path / kind).mkdir()
        for index in range(8):
            (tmp_path / kind / f"{index}.tgz").write_bytes(data)
    with whole_look():
        assert Lookout(str(tmp_path / "plain")).found() == []
    with whole_look(), pytest.raises(TooMuchToLook, match="take more than the look") as err:
        Lookout(str(tmp_path / "tgz")).found()
    assert err.value.error_type == "isolation"
