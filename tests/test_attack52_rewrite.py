"""A set-id file already in a `write:` folder is rewritten through a mapping, its bit kept
(round 14's outside attack).

The filter (agents/seccomp.py) keeps a run from making a file set-id. A file that is set-id
already, and the run's uid's to write, is another matter: write(2) clears its set-id
bits (the kernel's file_remove_privs), but a write through a shared mapping (mmap) does
not. Tried for real: a file of the unprivileged passhat's user (nobody here), mode 4755,
left in the agent's `write:` folder before the run; at `namespace` the agent wrote over
its start through mmap, and on the host it still had mode 4755 with the agent's bytes:
code of the agent's that any local user starts as passhat's user, what the filter is there
to prevent. The same at `process` (the control). Under root each run is a uid of its own,
so no file made before the run is its to write (not tried: the uid is drawn per run).

Fixed: the look (agents/lookout.py) finds set-id regular files in the run's `write:`
folders, by their mode, and covers them (`/dev/null`, read-only), as it covers
passhat's answers: the agent's open for writing gets EACCES, and the file is left as it
was. In a `read:` folder a set-id file is left in view: its mount is read-only already.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from passhat.agents.lookout import Looks
from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, NOBODY, attack_suite, open_to_all, runs_at

ORIGINAL = b"#!/bin/sh\necho the user's own tool\n"


def test_the_look_covers_a_set_id_file_in_a_write_folder_and_only_there(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    tool, plain = folder / "tool", folder / "plain"
    for path in (tool, plain):
        path.write_bytes(ORIGINAL)
    tool.chmod(0o4755)
    plain.chmod(0o755)
    assert Looks(last=[str(folder)]).found(str(folder)) == [str(tool)]
    assert Looks().found(str(folder)) == []  # a read: folder: read-only in the sandbox
    looks = Looks(last=[str(folder)])
    looks.found(str(folder))
    tool.chmod(0o755)  # its bit cleared: looked at again, no longer covered
    assert looks.found(str(folder)) == []


def _rewritten(user: str, open_tmp: Path, level: str) -> tuple[RunRecord, Path]:
    """A set-id file of the unprivileged passhat's user in the agent's `write:` folder,
    rewritten by a run at `level`: the run, and the file."""
    out = open_tmp / "out"
    out.mkdir()
    tool = out / "tool"
    suite = attack_suite(open_tmp / "work", {"ATTACK52_REWRITE": str(tool)}, "attack52_agent.py")
    open_to_all(open_tmp)
    tool.write_bytes(ORIGINAL)
    if os.geteuid() == 0:
        os.chown(tool, NOBODY, NOBODY)
    tool.chmod(0o4755)
    (run,) = runs_at(user, open_tmp, suite, level, "--no-report", "--agent-write", str(out), k=1)
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    return run, tool


UNPRIVILEGED = pytest.mark.parametrize("user", ["unprivileged"], indirect=True)
"""The `user` fixture's unprivileged passhat alone (skipped where it is: a checkout closed
to other users, no setpriv), as the sandbox tests beside it are."""


def _kept(tool: Path) -> bool:
    """Whether the file holds the agent's bytes and is set-id still."""
    return tool.read_bytes().startswith(b"injected") and bool(tool.stat().st_mode & stat.S_ISUID)


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
@UNPRIVILEGED  # the file is of the unprivileged passhat's user
def test_a_sandboxed_run_cannot_rewrite_a_set_id_file_and_keep_its_bit(
    user: str, open_tmp: Path
) -> None:
    run, tool = _rewritten(user, open_tmp, "namespace")
    assert not _kept(tool), (run.output, oct(tool.stat().st_mode))
    assert run.output in ({"rewrite": "EACCES"}, {"rewrite": "EROFS"}), run.output  # covered
    assert tool.read_bytes() == ORIGINAL


@ATTACK_MARKS[1]
@UNPRIVILEGED
def test_control_at_process_level_the_set_id_file_is_rewritten(user: str, open_tmp: Path) -> None:
    run, tool = _rewritten(user, open_tmp, "process")
    assert _kept(tool), (run.output, oct(tool.stat().st_mode))
