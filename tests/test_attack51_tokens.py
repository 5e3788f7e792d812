"""One run's token used by another run of the same experiment (round 13's outside attack).

At `--concurrency 2` both runs share a `write:` folder: run 1 leaves its token there,
and run 2 calls a tool with it, at the endpoint run 2 was given. At `namespace` the call
never reaches run 1: run 2's endpoint is a listener of its own network namespace (a root
passhat's) or its relay's Unix socket, bound to run 2's token, so run 1's is refused
(401), and run 1's record holds no call of run 2's. At `process` (the control) both runs
reach the one server on the host's loopback, any live run's token is taken, and the call
is recorded as run 1's: one run touched another. A finished run's token, replayed by
the run after it, is refused at both levels (the hub drops it with its run: tried at
`process`, whose shared server would take it otherwise). Tried as
root and as an unprivileged user.
"""

from __future__ import annotations

from pathlib import Path

from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as


def _borrowed(
    user: str, open_tmp: Path, level: str, gone: bool = False
) -> tuple[object, list[str]]:
    """Run 2's status for its call with run 1's token (run 1 still running, or `gone`:
    ended before run 2 started), and the tools run 1's record says it called."""
    out = open_tmp / "out"
    out.mkdir()
    env = {"ATTACK_BORROW": str(out), **({"ATTACK_GONE": "1"} if gone else {})}
    suite = attack_suite(open_tmp / "work", env, "attack51_agent.py")
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "2", "--concurrency", "1" if gone else "2", "--timeout", "120"]
    args += ["--isolation", level]
    args += ["--db", str(db), "-q", "--agent-write", str(out), "--no-report"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {r.run_index: r for r in store.runs(store.experiment("latest").id)}
    for run in runs.values():
        assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    assert runs[1].output == {"borrowed": {"waited": not gone}}, runs[1].output
    assert isinstance(runs[2].output, dict), runs[2].output
    return runs[2].output["borrowed"], [c["tool"] for c in runs[1].tool_calls]


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_sandboxed_run_cannot_call_tools_with_another_runs_token(
    user: str, open_tmp: Path
) -> None:
    status, calls = _borrowed(user, open_tmp, "namespace")
    assert status == 401 and calls == [], (status, calls)


@ATTACK_MARKS[1]
def test_control_at_process_level_a_run_calls_tools_as_another_run(
    user: str, open_tmp: Path
) -> None:
    status, calls = _borrowed(user, open_tmp, "process")
    assert status == 200 and calls == ["borrowed"], (status, calls)


@ATTACK_MARKS[1]
def test_a_finished_runs_token_is_taken_nowhere(user: str, open_tmp: Path) -> None:
    # at `process`, where the shared server takes any live run's token: only the hub's
    # drop refuses it. At `namespace` run 2's own listener refuses any token not run 2's,
    # live (the test above) or not (test_hub: a run's own listener takes only its token)
    status, calls = _borrowed(user, open_tmp, "process", gone=True)
    assert status == 401 and calls == [], (status, calls)
