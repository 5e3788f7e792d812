"""A run is sealed: a command agent cannot read passhat's key or another run's token,
its descendants end with it, and it ends when the agent exits.

Each test runs the real `passhat` command in a process of its own, as root and
as an unprivileged user (nobody, through setpriv, when the tests run as root;
the tests' own user otherwise), so what is checked is what an agent of either
could do. The agent is tests/command_agent.py; `process` isolation is run too,
as the control that shows each check can fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_python import AGENT_SCRIPT, CHECKOUT_CLOSED, PYTHON, SITE
from conftest import SuiteWriter
from fakeserver import FakeServer
from passhat.agents import isolation, relay, sandbox
from passhat.store import Store
from sandbox_helpers import KEY, ROOT, passhat_as

SCRIPT = AGENT_SCRIPT  # a copy others may read when the checkout is closed to them

pytest_plugins = ["fakeserver"]

pytestmark = [
    pytest.mark.skipif(
        isolation.unavailable("namespace") is not None,
        reason=f"this machine has no namespaces for agents: {isolation.unavailable('namespace')}",
    ),
    pytest.mark.skipif(
        PYTHON is None,
        reason="no Python of this version that other users may run (agents run as another uid)",
    ),
]


def _passhat(
    user: str, folder: Path, *args: str, key: str = KEY
) -> subprocess.CompletedProcess[str]:
    return passhat_as(user, folder, *args, key=key)


def _suite(folder: Path, mode: str, **env: str) -> Path:
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(SCRIPT), mode],
        "env": env,
    }
    if "PID_DIR" in env:  # the spies' notes: in the sandbox only because the suite says so
        writer.suite["defaults"]["agent"]["write"] = [env["PID_DIR"]]  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    path = writer.write()
    for item in [path, *path.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    return path


def _outputs(db: Path) -> dict[int, Any]:
    with Store(db, create=False) as store:
        experiment = store.experiment("latest")
        return {r.run_index: r for r in store.runs(experiment.id)}


def _holding(text: str) -> list[int]:
    """Pids of the processes whose environment holds `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _spy(user: str, folder: Path, level: str) -> dict[int, Any]:
    notes = folder / f"notes-{level}"
    notes.mkdir()
    notes.chmod(0o777)
    # a key of this call's own: another test's passhat (same user, same moment) holds KEY
    key = f"sk-passhat-spy-{uuid.uuid4().hex}"
    suite = _suite(folder, "spy", PID_DIR=str(notes), SPY_NEEDLE=key[::-1], SPY_PEERS="2")
    db = folder / f"{level}.db"
    args = ["-k", "2", "--concurrency", "2", "--timeout", "60", "--isolation", level]
    done = _passhat(
        user, folder, "run", str(suite), *args, "--db", str(db), "-q", "--no-report", key=key
    )
    assert done.returncode in (0, 1), done.stderr
    runs = _outputs(db)
    assert sorted(runs) == [1, 2]
    for run in runs.values():
        assert run.output is not None, run.error_message
    return {i: r.output for i, r in runs.items()}


def test_the_agent_reads_neither_the_key_nor_another_runs_token(user: str, open_tmp: Path) -> None:
    seen = _spy(user, open_tmp, "namespace")
    for output in seen.values():
        assert output["parent_has_needle"] in (None, False)
        assert output["needle_seen"] is False, "the provider key was readable from the agent"
        assert output["foreign_tokens"] == [], "another run's token was readable"
    # the control: without namespaces, what the checks above look for is there to find
    control = _spy(user, open_tmp, "process")
    assert any(o["foreign_tokens"] for o in control.values())
    if user == "root":
        assert all(o["needle_seen"] for o in control.values()), "a root agent reads everything"
    else:
        # passhat is not dumpable: a same-user agent cannot read its environment
        assert not any(o["needle_seen"] or o["parent_has_needle"] for o in control.values()), (
            control
        )


def _daemon(user: str, folder: Path, level: str) -> tuple[Any, list[int]]:
    mark = f"MARK={uuid.uuid4().hex}"
    suite = _suite(folder, "daemon", MARK=mark.split("=", 1)[1])
    db = folder / f"daemon-{level}.db"
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    done = _passhat(user, folder, "run", str(suite), *args, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    return _outputs(db)[1], _holding(mark)


def test_a_setsid_child_ends_with_its_run_and_does_not_hold_the_run_open(
    user: str, open_tmp: Path
) -> None:
    run, left = _daemon(user, open_tmp, "namespace")
    assert run.output == {"daemon": "started"}
    # a run held open by its child would end at its 60 s timeout (the child sleeps 300 s);
    # 45 s leaves room for a loaded machine (10 s failed once at load average 17)
    assert run.duration_s < 45, "the run waited for a child that held its stdout"
    assert left == [], "a daemonised child outlived its run"
    # at process, the setsid child leaves the run's process group, but passhat is a child
    # subreaper there: it is re-parented to passhat and ended as the run ends (_orphans.py;
    # its control, without a subreaper: tests/test_orphans.py)
    run, left = _daemon(user, open_tmp, "process")
    try:
        assert run.duration_s < 45
        assert left == [], "a daemonised child outlived its run at process"
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


def test_a_level_that_cannot_be_had_is_one_line_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_helpers import run_cli

    isolation.unavailable.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no unshare on it
    monkeypatch.delenv("PASSHAT_ISOLATION", raising=False)  # the default level is asked for
    try:
        suite = _suite(tmp_path, "ok")
        db = tmp_path / "p.db"
        result = run_cli(capsys, "run", str(suite), "--db", str(db), "-q")
    finally:
        isolation.unavailable.cache_clear()
    assert result.code == 2
    assert "--isolation namespace needs bwrap" in result.err
    assert "apt-get install bubblewrap" in result.err
    assert "use --isolation process" in result.err
    assert "Traceback" not in result.err and not db.exists()
    bad = run_cli(capsys, "run", str(suite), "--isolation", "jail", "--db", str(db))
    assert bad.code == 2 and "use namespace or process" in bad.err


def test_namespace_runs_as_root_get_a_uid_of_their_own() -> None:
    assert isolation.launcher("process") == []
    cap = sandbox.process_cap()
    assert cap[:2] == ["/bin/sh", "-c"] and f"ulimit -u {isolation.PROCESSES}" in cap[2]
    # the cap is set inside the sandbox, by its first command: nothing of it outside
    assert isolation.launcher("namespace") == []
    assert sandbox.CAP in relay.socat_argv(sandbox.View(), "/usr/bin/socat")[2]
    assert sandbox.base_argv()[:2] == ["bwrap", "--unshare-all"]
    argv = isolation.launcher("namespace", uid=isolation.RUN_UID_BASE + 7)
    assert argv == isolation.as_uid(isolation.RUN_UID_BASE + 7) and "prlimit" not in argv
    assert f"{isolation.RUN_UID_BASE + 7}" in argv[1] and f"{isolation.RUN_UID_BASE + 7}" in argv[2]
    uid = isolation.run_uid("namespace")
    if os.geteuid() == 0:
        assert uid is not None and uid >= isolation.RUN_UID_BASE
    else:
        assert uid is None
    assert isolation.run_uid("process") is None


def test_kill_group_takes_the_namespace_down(open_tmp: Path) -> None:
    """The watchdog kills the launcher's group when passhat dies: the agent (the
    namespace's first process) and everything in it go too."""
    mark = f"MARK={uuid.uuid4().hex}"
    argv = [*sandbox.base_argv(), "sh", "-c", "setsid sleep 300 & sleep 300"]
    proc = subprocess.Popen(
        argv, env={"PATH": os.environ["PATH"], **dict([mark.split("=")])}, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        while len(_holding(mark)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_holding(mark)) >= 4  # bwrap, sh, two sleeps
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _holding(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _holding(mark) == []
    finally:
        for pid in _holding(mark):
            os.kill(pid, signal.SIGKILL)


def test_max_turns_lets_at_most_its_calls_reach_the_provider_for_either_user(
    user: str, open_tmp: Path, fake_server: FakeServer
) -> None:
    if CHECKOUT_CLOSED:
        pytest.skip(
            f"the agent imports this virtualenv's packages, which a run's own uid cannot "
            f"reach in a checkout ({ROOT}) under a folder closed to other users"
        )
    fake_server.reply("hello", usage=(10, 5), times=30)
    suite = _suite(open_tmp, "turns", TURNS="8", PYTHONPATH=SITE)
    db = open_tmp / "turns.db"
    model = ["--model", "openai:gpt-test", "--base-url", fake_server.openai_url]
    args = ["-k", "1", "--max-turns", "3", *model, "--db", str(db), "-q", "--no-report"]
    done = _passhat(user, open_tmp, "run", str(suite), *args)
    assert done.returncode == 0, done.stderr  # a run a limit stopped is counted
    assert len(fake_server.requests) == 3
    run = _outputs(db)[1]
    assert (run.status, run.error_type) == ("failed", "limit")
    assert "--max-turns 3" in (run.error_message or "")
    # the key went to the provider only, never into the store
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY.encode() not in b"".join(p.read_bytes() for p in open_tmp.glob("turns.db*"))


@pytest.mark.parametrize("caps", [frozenset(), frozenset({isolation.CAP_SYS_NICE})])
def test_a_real_time_root_without_cap_sys_nice_keeps_chrt_in_front_of_its_sandboxes(
    monkeypatch: pytest.MonkeyPatch, caps: frozenset[int]
) -> None:
    """A real-time passhat sets each sandbox's first process to the ordinary policy at its
    gate (sandbox.ordinary; test_sandbox_sched.py checks the agent's policy) instead of
    exec'ing `chrt --other 0` in front of it. A root passhat's runs have uids of their own:
    without CAP_SYS_NICE it may not set theirs, and keeps chrt."""
    monkeypatch.setattr(isolation, "realtime", lambda: True)
    monkeypatch.setattr(isolation, "is_root", lambda: True)
    monkeypatch.setattr(isolation, "_effective_caps", lambda: caps)
    argv = isolation.launcher("namespace", uid=isolation.RUN_UID_BASE + 7)
    assert (argv[:3] == ["chrt", "--other", "0"]) == (not caps), argv
    assert argv[3 if not caps else 0 :] == isolation.as_uid(isolation.RUN_UID_BASE + 7)
    monkeypatch.setattr(isolation, "is_root", lambda: False)  # the sandbox has passhat's uid
    assert isolation.launcher("namespace") == []
    assert isolation.launcher("process") == []


STATUS = ("Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapAmb:")


def _credentials(argv: list[str]) -> list[str]:
    done = subprocess.run([*argv, "cat", "/proc/self/status"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return [line.partition(":")[2].strip() for line in lines if line.startswith(STATUS)]


@pytest.mark.skipif(os.geteuid() != 0, reason="a run's own uid is a root passhat's")
def test_a_runs_own_uid_is_reached_by_unshare_with_the_credentials_setpriv_gave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A root passhat switches each run to its uid with `unshare --setuid --setgid` (its
    numbers read as numbers: setpriv looked each up as a name first, 0.55 ms a run): the
    same uid, gid, saved ids, no groups, no capabilities as `setpriv` gave. Where the
    thread holds inheritable capabilities, which unshare would leave, setpriv clears them."""
    uid = isolation.RUN_UID_BASE + 11
    argv = isolation.as_uid(uid)
    assert argv[0] == "unshare"
    setpriv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", *isolation.SETPRIV]
    got = _credentials(argv)
    assert got == _credentials(setpriv)
    zero = "0000000000000000"
    assert got == [f"{uid}\t{uid}\t{uid}\t{uid}"] * 2 + ["", zero, zero, zero, zero], got
    monkeypatch.setattr(isolation._THREAD, "inheritable", 1 << 13)
    assert isolation.as_uid(uid) == setpriv
