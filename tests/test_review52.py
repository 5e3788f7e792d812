"""review52: defects found reviewing round 13's changes, each shown by a test that failed
before its fix (or marked xfail, strict, with the reason)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def test_a_walk_stop_in_the_write_folder_after_the_hosts_part_grew_is_not_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `write:` folder inside a read: folder is walked last, so a stop at the bound
    there was taken for the agent's doing (`agent_left`): but the host's part may have
    grown since the start's look (files of the host's, not the agent's), and the agent's
    folder, unchanged, is where the count then crosses. That is no agent's doing."""
    from passhat.agents import lookout
    from passhat.agents.archives import TooMuchToLook
    from passhat.agents.command import CommandAgent, CommandSpec

    monkeypatch.setattr(lookout, "WALK_LIMIT", 50)
    work, data = tmp_path / "work", tmp_path / "data"
    out = data / "out"
    work.mkdir()
    out.mkdir(parents=True)
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    for index in range(40):
        (data / f"host{index}").write_text("")
    for index in range(5):
        (out / f"left{index}").write_text("")  # the agent's, the same all along
    params = {"sandbox": {"read": [str(data)], "write": [str(out)]}}
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    agent.check_view(params)  # the start's look: 46 entries, within the bound
    agent.view(params)  # a run's look, the same
    for index in range(40, 47):  # the host's folder grows; the agent's does not
        (data / f"host{index}").write_text("")
    with pytest.raises(TooMuchToLook) as run:
        agent.view(params)
    assert run.value.error_type == "isolation", str(run.value)
    # the control: the agent's folder grown, the host's as at the start
    for index in range(40, 47):
        (data / f"host{index}").unlink()
    for index in range(5, 12):
        (out / f"left{index}").write_text("")
    with pytest.raises(TooMuchToLook) as left:
        agent.view(params)
    assert left.value.error_type == "agent_left", str(left.value)


def test_a_deadline_while_passing_an_unchanged_write_folder_is_not_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write: folder is walked last, so a deadline the host's part brought near
    lands there: a run whose agent left nothing in its (unchanged) folder, the deadline
    coming as the look looked at it (its stat, slow here as on a loaded machine), was
    errored `agent_left`, "filled by an earlier run of the agent". Only listing or
    reading what changed there since the last look is the agent's doing; the control:
    a deadline while listing a folder it did fill is still its."""
    import asyncio
    import os
    import threading
    import time

    from passhat.agents import lookout
    from passhat.agents.command import CommandAgent, CommandSpec

    work, data = tmp_path / "work", tmp_path / "data"
    out = data / "out"
    work.mkdir()
    out.mkdir(parents=True)
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    params = {"sandbox": {"read": [str(data)], "write": [str(out)]}}
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    # a key 0.3 s old is trusted (not 2 s, the default): the file system's tick here is
    # 1-10 ms, and the test waits 1.8 s less for out's listing to be trusted
    monkeypatch.setattr(lookout, "RACY_NS", 300_000_000)
    agent.view(params)  # the start's look
    time.sleep(lookout.RACY_NS / 1e9 + 0.1)  # out's listing trusted from now on
    agent.view(params)
    # where the look is held until its deadline has come (and no longer: the test
    # waits for the look's thread to end, not for a sleep longer than the deadline)
    slow = {"stat": False, "scandir": False}
    passed = threading.Event()
    stat, scandir, target = os.stat, os.scandir, str(out.resolve())

    def slow_stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if path == target and kwargs.get("follow_symlinks") is False and slow["stat"]:
            passed.wait(30)
        return stat(path, *args, **kwargs)

    def slow_scandir(path: Any) -> Any:
        if path == target and slow["scandir"]:
            passed.wait(30)
        return scandir(path)

    monkeypatch.setattr(os, "stat", slow_stat)
    monkeypatch.setattr(os, "scandir", slow_scandir)

    def kind() -> str:
        async def late() -> object:
            look = lookout.in_time(agent.view, params, folders=lambda: agent.extra_paths(params))
            try:
                return await asyncio.wait_for(look, 0.5)
            finally:
                passed.set()  # the look's thread then ends, and asyncio.run with it

        passed.clear()
        with pytest.raises(lookout.LookOutOfTime) as raised:
            asyncio.run(late())
        return raised.value.error_type

    slow["stat"] = True  # out as it was: only its stat, to see that
    assert kind() == "isolation"
    slow["stat"], slow["scandir"] = False, True
    (out / "left.txt").write_text("the agent's")  # out changed: listed again, the agent's
    assert kind() == "agent_left"


def test_re_s_child_does_not_outlive_a_killed_passhat() -> None:
    """A disputed search runs in a child that `re` may keep busy for hours (the agent's
    text); passhat killed -9 (or crashed) mid-search left it running, orphaned, a core
    taken: it now dies with the thread that started it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = "from passhat import searching\nsearching.search(r'(?i)(ı+)+$', 'ı' * 60 + '!', 600.0)\n"
    parent = subprocess.Popen([sys.executable, "-c", code])
    child = None
    try:
        deadline = time.monotonic() + 60
        while child is None and time.monotonic() < deadline:
            for task in os.listdir(f"/proc/{parent.pid}/task"):
                with open(f"/proc/{parent.pid}/task/{task}/children") as listed:
                    child = next(iter(map(int, listed.read().split())), child)
            time.sleep(0.05)
        assert child is not None, "no child started"
        time.sleep(0.5)  # searching
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.05)
        assert not _alive(child), "re's child outlived passhat"
    finally:
        parent.kill()
        parent.wait()
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (not gone, nor a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_text_of_emoji_is_looked_over_without_a_string_for_each() -> None:
    """Whether a text holds a disputed character past the Basic Multilingual Plane was
    asked of a list of every such character of it (re.findall): the agent's 4 Mi emoji
    (16 MB of text) took 338 MB more and 1.8 s with the GIL held (every run's timers
    stopped). Its characters past the plane are now one string (the rest cut out)."""
    import subprocess
    import sys

    code = (
        "import resource\n"
        "from passhat import searching\n"
        "searching._rare()\n"
        "text = '\\U0001F600' * (1 << 20) + '\\U0001F601'\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "assert not searching._holds_rare(text)\n"
        "assert searching._holds_rare(text + '\\U00050000')  # plane 5: unasked, disputed\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) >> 10)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert int(done.stdout) < 30, f"{done.stdout.strip()} MB more over 4 MB of emoji"


def test_re_s_child_searches_without_ctypes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child asks to die with passhat through ctypes; a Python without it (or a
    system without prctl) still searches, as before."""
    from passhat import searching

    no_ctypes = "import sys\nsys.modules['ctypes'] = None\n"
    monkeypatch.setattr(searching, "_CHILD", no_ctypes + searching._CHILD)
    assert searching.search("(?i)kapali", "Sipariş kapalı", 30.0) is True
