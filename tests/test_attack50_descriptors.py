"""A run that takes passhat's file descriptors: another run cannot start, and a look for
answers made meanwhile saw nothing, for good (round 12's outside attack).

Each run's listener holds at most 128 connections (serve/endpoints.CONNECTIONS), "so an
agent that opens thousands cannot take passhat's file descriptors"; but the cap is per
run, and passhat's own limit (`ulimit -n`, raised to its hard limit) is not weighed
against it: with --concurrency 32 under a hard limit of 4096 (or 8 under 1024), runs
that each hold 128 connections take every descriptor passhat has. Tried for real,
scaled down (a limit of 160, two runs at once): while run 1 holds its 128 connections,
run 3 could not start ("cannot start 'setpriv': Too many open files", errored
agent_start). Now each run's share of connections is weighed against passhat's limit
and --concurrency at the experiment's start (serve/endpoints.share), down to a floor.

Worse, the look for answers before each run (agents/lookout.py) took an error for an
answer: a folder it could not list for want of a descriptor was "a folder holding
nothing", a file it could not open "none of passhat's", and both were kept as looked at
(their stat keys trusted), so every later run of the experiment, the descriptors back,
saw that folder's `.env` and earlier stores uncovered. Now a look that runs out of
descriptors or memory raises (answers.SCARCE), keeps nothing of that look, and the run
is errored `isolation` rather than started with less covered than it should be.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from passhat.agents import lookout
from passhat.agents.lookout import Lookout
from passhat.serve import endpoints
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, holds_first, passhat_as

SECRET = "OPENAI_API_KEY=sk-the-users-own-key\n"


@contextlib.contextmanager
def _no_descriptors() -> Iterator[None]:
    """Every descriptor this process may open taken, until the block ends (a run's
    flood did that to passhat)."""
    held: list[int] = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError as error:
        assert error.errno == errno.EMFILE
    try:
        yield
    finally:
        for fd in held:
            os.close(fd)


def _looked_out(look: Lookout) -> list[str] | None:
    """What `look` finds with no descriptor to spare, None when it says it cannot look."""
    with _no_descriptors():
        try:
            return look.found()
        except OSError as error:
            assert error.errno == errno.EMFILE
            return None


def test_a_folder_listed_out_of_descriptors_is_not_taken_for_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lookout, "RACY_NS", 0)  # every key trusted at once
    (tmp_path / ".env").write_text(SECRET)
    (tmp_path / "runs").mkdir()
    with Store(tmp_path / "runs" / "model-a.db"):
        pass
    wanted = [str(tmp_path / ".env"), str(tmp_path / "runs" / "model-a.db")]
    look = Lookout(str(tmp_path))
    assert _looked_out(look) is None, "a folder that could not be listed covered nothing"
    assert sorted(look.found()) == wanted, "the failed look was kept: later runs see all"


def test_a_file_read_out_of_descriptors_is_not_taken_for_none_of_passhats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file rewritten in place (its folder's listing unchanged) is read again at the
    next look; read with no descriptor to spare, it was kept as none of passhat's."""
    monkeypatch.setattr(lookout, "RACY_NS", 0)
    target = tmp_path / "results.json"
    target.write_text("notes\n")
    look = Lookout(str(tmp_path))
    assert look.found() == []
    with target.open("w") as f:  # the same file, now a report --json (the goal's items)
        f.write('{"experiment": {"id": "0123abcd", "name": "model-a"}, "cases": []}\n')
    assert _looked_out(look) is None, "a file that could not be read covered nothing"
    assert look.found() == [str(target)], "the failed read was kept: later runs see the report"


def test_a_run_whose_look_ran_out_of_descriptors_is_not_started(tmp_path: Path) -> None:
    """The run is errored `isolation`, naming why, rather than started with less covered
    (CommandAgent.view); the look before it is not taken for one."""
    from passhat.agents.command import CommandAgent, CommandSpec
    from passhat.agents.streams import AgentProcessError

    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    (work / ".env").write_text(SECRET)  # listed just now: listed again at every look
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    assert str(work / ".env") in agent.view({}).hide
    with _no_descriptors(), pytest.raises(AgentProcessError) as raised:
        agent.view({})
    assert raised.value.error_type == "isolation"
    assert "could not look for answers" in str(raised.value), raised.value
    assert "Too many open files" in str(raised.value), raised.value
    assert str(work / ".env") in agent.view({}).hide


def _suite(folder: Path, hold: str, late: float, flags: Path) -> Path:
    """A suite in `folder`/suite whose agent (tests/attack50_agent.py, in `folder`/work)
    holds connections (ATTACK_HOLD) in its run 1; its other runs wait for that, `late`
    seconds at most, and each says in `flags` (ATTACK_FLAGS) when it is done."""
    env = {"ATTACK_HOLD": hold, "ATTACK_LATE": str(late), "ATTACK_FLAGS": str(flags)}
    return attack_suite(folder / "work", env, "attack50_agent.py", suite=folder / "suite")


LIMIT = 160
"""passhat's descriptors in the run below: what it holds itself, about 30, and one run's
128 connections (a hard limit of 4096 under --concurrency 32, scaled down)."""


def test_the_runs_connections_are_weighed_against_passhats_descriptor_limit() -> None:
    """A run's cap on its connections comes from passhat's limit and --concurrency: runs
    all holding theirs (one descriptor a connection to the listener, two a tunnel through
    the proxy, and each run's own) leave passhat its own, down to a floor."""
    assert endpoints.connections_for(1 << 20, 8) == endpoints.CONNECTIONS
    assert endpoints.connections_for(4096, 32) == 34  # was 128: 32 x 128 took all 4096
    assert endpoints.connections_for(LIMIT, 2) == endpoints.CONNECTIONS_FLOOR
    assert endpoints.connections_for(64, 1000) == endpoints.CONNECTIONS_FLOOR
    for limit in (256, 1024, 4096, 65536):
        for concurrency in (1, 2, 8, 32, 50):
            cap = endpoints.connections_for(limit, concurrency)
            if cap > endpoints.CONNECTIONS_FLOOR:
                taken = concurrency * (endpoints.RUN_DESCRIPTORS + 3 * cap)
                assert taken + endpoints.OWN_DESCRIPTORS <= limit, (limit, concurrency)


async def test_a_runs_proxy_holds_no_more_than_its_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside an experiment's hub scope under a limit of LIMIT, two runs at once: a run's
    proxy closes connections past its share as they come; the share ends with the scope."""
    from passhat.serve import hub_scope
    from passhat.serve.egress import serve_egress

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (LIMIT, LIMIT))
    share = endpoints.CONNECTIONS_FLOOR
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(share + 20)
    async with hub_scope(2), serve_egress(None, ["nowhere.invalid:1"]) as listen:
        assert endpoints.connections() == share
        await listen(listener)
        await holds_first(listener.getsockname()[1], share, share + 4)
    assert endpoints.connections() == endpoints.CONNECTIONS


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="no prlimit (util-linux) here")
@ATTACK_MARKS[1]
@ATTACK_MARKS[0]
def test_a_run_holding_its_connections_leaves_the_others_able_to_start(
    user: str, open_tmp: Path
) -> None:
    """The whole run, as root and as nobody. Before the share, run 3 was errored
    agent_start ("cannot start 'setpriv': Too many open files") while run 1 held 128;
    with no connections held (attack50's control, dropped: the unit tests above show the
    cap at work) all three were graded."""
    held = 128
    # run 1 holds `held` connections until run 3 has started and listed its tools (60 s
    # at most); run 2 ends once run 1 holds them, and run 3 starts then
    flags = open_tmp / "flags"
    flags.mkdir()
    suite = _suite(open_tmp, f"{held},60", late=60, flags=flags)
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "3", "--concurrency", "2", "--timeout", "120", "--db", str(db), "-q"]
    args += ["--agent-write", str(flags)]
    head = ["prlimit", f"--nofile={LIMIT}:{LIMIT}", "--"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report", head=head)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {run.run_index: run for run in store.runs(store.experiment("latest").id)}
    assert sorted(runs) == [1, 2, 3]
    # the agent's connects all succeed (the kernel's backlog); passhat closes those
    # past the run's share as they come
    assert runs[1].output is not None and runs[1].output["held"] == held, runs[1].error_message
    starved = {i: r.error_message for i, r in runs.items() if r.status == "errored"}
    assert starved == {}, "a run's flood kept another run from starting"
    # run 3 started while run 1 held its connections (run 1 let go once run 3 said so)
    assert (flags / "3").exists() and runs[1].duration_s < 60
    assert runs[3].started_at < runs[1].started_at + runs[1].duration_s


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="no prlimit (util-linux) here")
def test_passhat_starts_at_its_hard_limit_of_open_files(tmp_path: Path) -> None:
    """The share above is of the hard limit: passhat raises its soft limit to it as it
    starts (agents/isolation.seal_this_process, as servers commonly do), from 64 here."""
    import subprocess
    import sys

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= 64:
        pytest.skip(f"the hard limit of open files here is {hard}: nothing to raise")
    code = (
        "import resource\n"
        "from passhat.agents.isolation import seal_this_process\n"
        "seal_this_process()\n"
        "print(*resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    )
    argv = ["prlimit", "--nofile=64:", "--", sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(hard), str(hard)]
