"""A `read:` folder inside a `write:` folder was writable in the sandbox (round 13's
second outside attack).

bwrap mounts in the order of its command line, and bwrap_argv bound every read-only
path (the agent's `read:`, its program's folder, virtualenv and base Python) before
every writable one: a `write:` folder holding a `read:` one was mounted over it, and
the agent wrote what it was given to read only: the reference data its later runs
read, or a virtualenv of its own it runs from (only its command's files are refused
inside a `write:` folder): a run rewrote the code the later runs of the same
experiment ran under the same fingerprint. Tried with the sandbox passhat makes
(bwrap_argv, run as is) as root and as an unprivileged user: the write went through.
The control, in the same sandbox: the `write:` folder itself is written (and at
`process` every folder is).

Fixed: bwrap_argv mounts the paths in view outermost first, read-only and writable
alike (a path inside another after it), so each path is as it was named, whichever
holds the other.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from passhat.agents.sandbox import View, bwrap_argv
from sandbox_helpers import ATTACK_MARKS, unprivileged


def _tried(user: str, view: View, *paths: Path) -> dict[str, int]:
    """Each of `paths` written in a sandbox of `view` as `user`: the shell's status."""
    script = "; ".join(f'echo new > "{p}" 2>/dev/null; echo $?' for p in paths)
    argv = [*bwrap_argv(view, Path("/tmp/passhat-run-test")), "/bin/sh", "-c", script]
    head = unprivileged() if user == "unprivileged" else []
    done = subprocess.run([*head, *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(zip(map(str, paths), map(int, done.stdout.split()), strict=True))


@ATTACK_MARKS[0]
@pytest.mark.parametrize("inner", ["read", "write"])
def test_a_path_in_view_inside_another_is_as_it_was_named(
    user: str, open_tmp: Path, inner: str
) -> None:
    outer = open_tmp / "outer"
    (outer / "inner").mkdir(parents=True)
    for folder in (outer, outer / "inner"):
        folder.chmod(0o777)
    if inner == "read":
        view = View(read=(str(outer / "inner"),), write=(str(outer),))
    else:
        view = View(read=(str(outer),), write=(str(outer / "inner"),))
    seen = _tried(user, view, outer / "a.txt", outer / "inner" / "b.txt")
    written = {Path(p).name for p, status in seen.items() if status == 0}
    assert written == {"a.txt" if inner == "read" else "b.txt"}, seen
