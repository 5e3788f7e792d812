"""Ways around the system-call filter (agents/seccomp.py) to leave on the host a file
that runs with more than its runner's rights (round 13's second outside attack).

attack51's filter refuses a setuid or setgid mode to every chmod, open and mknod. Tried
here, by a run's agent in its `write:` folder, what the filter does not look at: file
capabilities (setxattr security.capability, revision 2, and revision 3 for root id 0),
a hard link to a setuid program of the system, a copy keeping its mode
(shutil.copy2: a chmod after the copy), `install -m 4755`, a chmod through
/proc/self/fd/N, a folder made with mode 07777 (the setgid bit on a folder: files made
in it take its group), and an ACL giving another user write. At `namespace`, as root
and as an unprivileged user, they all held: no file left has a set-id bit or a
capability (the agent has no CAP_SETFCAP: it is not root in its user namespace and may
make no other, --disable-userns; a link crosses mounts, EXDEV; copy2's and install's
chmod is the filter's; mkdir never sets S_ISGID). The ACL is made (an owner may give
its files to whom it likes, as with chmod o+w): no more than the agent's own bits.
The control at `process` under a root passhat: the agent is root, and leaves a
capability (cap_setuid on an executable: any user who runs it may become root) and
setuid files.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sandbox_helpers import ATTACK_MARKS, attack_in, one_run

SETID = 0o6000


def _left(user: str, open_tmp: Path, level: str) -> tuple[dict[str, str], dict[str, int], set[str]]:
    """A run at `level` that tries ATTACK_AROUND in its `write:` folder: what the agent
    saw, the modes of what it left there, and which of those carry a capability."""
    suite, out = attack_in(open_tmp, "ATTACK_AROUND", agent="attack51b_agent.py")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", level, "--agent-write", str(out))
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    assert isinstance(run.output, dict), run.output
    left = {p.name: p.lstat().st_mode for p in out.iterdir()}
    capable = set()
    for path in out.iterdir():
        try:
            os.getxattr(path, "security.capability", follow_symlinks=False)
        except OSError as error:
            assert error.errno in (errno.ENODATA, errno.ENOTSUP), error
        else:
            capable.add(path.name)
    return run.output["around"], left, capable


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_sandboxed_run_finds_no_way_around_the_filter(user: str, open_tmp: Path) -> None:
    saw, left, capable = _left(user, open_tmp, "namespace")
    assert [name for name, mode in left.items() if mode & SETID] == [], (saw, left)
    assert capable == set(), (saw, capable)
    assert saw["cap_v2"] == saw["cap_v3"] == f"PermissionError {errno.EPERM}", saw
    assert saw["proc_fd"] == saw["copy"] == f"PermissionError {errno.EPERM}", saw
    assert saw["install"] == "refused" and saw["link"].endswith(f" {errno.EXDEV}"), saw


@ATTACK_MARKS[1]
@pytest.mark.skipif(os.geteuid() != 0, reason="the control needs a root passhat")
def test_control_a_root_passhats_run_at_process_level_leaves_capabilities(
    open_tmp: Path,
) -> None:
    saw, left, capable = _left("root", open_tmp, "process")
    assert capable == {"cap_v2", "cap_v3"}, (saw, capable)
    assert {"install", "proc_fd", "copy"} <= {n for n, m in left.items() if m & SETID}, saw
