"""A run that leaves thousands of `.env` files in its `write:` folder had every later run
errored as passhat's failure (round 15's outside attack).

The look for answers covers each secret-named file in view with a mount of bwrap's
(`--ro-bind /dev/null PATH`: 3 arguments), and bwrap takes at most 9,000 arguments. A
run that left 3,000 folders holding a `.env` each in its `write:` folder (6,000
entries, well within the look's WALK_LIMIT of 20,000) had the next run's bwrap stop at
"Exceeded maximum number of arguments 9000": that run, and every later one, errored
`isolation` (passhat's failure, not counted, as the agent chose). Tried for real at
`namespace` under a root passhat (9,000 and 3,000 folders); at `process` nothing is
covered, and the later run is counted (the control).

Fixed: a view of more than archives.MAX_COVERS (2,000) paths to cover is the look's
bound (TooMuchToLook): refused at the experiment's start, and a later run not started,
errored `agent_left` where the covers past the bound lie in the run's `write:` folder
(the host's own within it), `isolation` otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passhat.agents import archives
from passhat.agents.archives import TooMuchToLook
from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS
from test_attack53_blame import two_runs

FOLDERS = 3_000
UNPRIVILEGED = pytest.mark.parametrize("user", ["unprivileged"], indirect=True)


def _agent(tmp_path: Path) -> object:
    from passhat.agents.command import CommandAgent, CommandSpec

    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    return CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)


def _secrets(folder: Path, count: int) -> None:
    for index in range(count):
        (folder / f"d{index}").mkdir()
        (folder / f"d{index}" / ".env").write_text("NOT_A_KEY=1\n")


def test_covers_past_the_bound_left_in_a_write_folder_are_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_COVERS", 20)
    read, write = tmp_path / "read", tmp_path / "out"
    read.mkdir()
    write.mkdir()
    _secrets(read, 20)  # the host's own: within the bound
    agent = _agent(tmp_path)
    params = {"sandbox": {"read": [str(read)], "write": [str(write)]}}
    agent.view(params)  # type: ignore[attr-defined]  # the experiment's start
    _secrets(write, 5)  # what run 1 left
    with pytest.raises(TooMuchToLook) as raised:
        agent.view(params)  # type: ignore[attr-defined]  # run 2's look
    assert raised.value.error_type == "agent_left", str(raised.value)
    assert "more than 20 files to cover" in str(raised.value)


def test_control_the_hosts_own_covers_past_the_bound_are_refused_at_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_COVERS", 20)
    read = tmp_path / "read"
    read.mkdir()
    _secrets(read, 21)
    with pytest.raises(TooMuchToLook) as raised:
        _agent(tmp_path).view({"sandbox": {"read": [str(read)]}})  # type: ignore[attr-defined]
    assert raised.value.error_type == "isolation", str(raised.value)


def _two_runs(user: str, open_tmp: Path, level: str) -> list[RunRecord]:
    return two_runs(user, open_tmp, level, "ATTACK53_MANY", str(FOLDERS))


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_thousands_of_secrets_a_run_left_make_the_next_run_the_agents_doing(
    user: str, open_tmp: Path
) -> None:
    first, second = _two_runs(user, open_tmp, "namespace")
    assert first.output == {"many": "left"}, (first.error_message, first.stderr)
    assert second.error_type == "agent_left", (second.error_type, second.error_message)


@ATTACK_MARKS[1]
@UNPRIVILEGED
def test_control_at_process_level_the_next_run_is_counted(user: str, open_tmp: Path) -> None:
    first, second = _two_runs(user, open_tmp, "process")
    assert first.output == {"many": "left"}
    assert second.output == {"many": ["there", FOLDERS]}, second.error_message


def _outermost_pairwise(paths: list[str]) -> list[str]:
    """`sandbox.outermost` by its definition: every pair compared."""
    from passhat.agents.sandbox import under

    unique = list(dict.fromkeys(os.path.abspath(p) for p in paths))
    return [p for p in unique if not any(p != q and under(p, [q]) for q in unique)]


def test_the_outermost_of_thousands_of_covers_compares_no_pair_of_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """3,000 covers a run left took the next run's look 9 million `under` calls (~3 s of
    passhat's CPU, before every later run) to drop those inside another; now each path's
    folders are looked up: the same answer, in order, with no pair compared."""
    from passhat.agents import sandbox

    paths = [f"/w/d{i}/.env" for i in range(FOLDERS)] + [f"/w/d{i}" for i in range(0, 99, 7)]
    paths += ["/w/d1/.env", "/w/d3//x/../.env/", "/w/d30/.env/y", "w/rel"]
    expected = _outermost_pairwise(paths)
    calls: list[object] = []
    under = sandbox.under
    monkeypatch.setattr(sandbox, "under", lambda *a: calls.append(a) or under(*a))
    assert sandbox.outermost(paths) == expected
    assert len(calls) <= len(paths), f"{len(calls):,} comparisons"
    for few in (["/a/b", "//", "/c"], ["/", "/a", "//"], ["/a/", "/ab", "/a/b/../c"]):
        assert sandbox.outermost(few) == _outermost_pairwise(few)
