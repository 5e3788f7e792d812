"""Ways around the set-id filter that make no set-id mode (round 14's outside attack).

The filter (agents/seccomp.py) refuses a set-id mode to every chmod, open and mknod. A
run's agent tried in its `write:` folder what gives a file power on the host without
one: a file capability (`security.capability`, cap_setuid, by setxattr), a hard link to
a setuid program of the system, a setgid folder (mkdir 02777), and a whiteout
(renameat2 RENAME_WHITEOUT, a 0:0 character device an ordinary user may make since Linux
5.8). At `namespace`, under root and an unprivileged passhat alike, the agent holds no
capability in its user namespace (setxattr: EPERM), its `write:` folder is a mount of its
own (link from /usr: EXDEV, whatever the file system), and mkdir drops the setgid bit;
the whiteout is made, as at `process`: a device numbered 0:0 opens nothing (ENXIO), and
passhat's look opens regular files only. The control: a root passhat's run at `process`
leaves a capability on its file and a setuid hard link (it runs as root).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, attack_in, one_run

pytestmark = ATTACK_MARKS


def _probed(user: str, open_tmp: Path, level: str) -> tuple[RunRecord, Path]:
    suite, out = attack_in(open_tmp, "ATTACK52_PROBE", agent="attack52_agent.py")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", level, "--agent-write", str(out))
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    assert isinstance(run.output, dict), run.output
    return run, out


def _capability(path: Path) -> bytes | None:
    try:
        return os.getxattr(path, "security.capability")
    except OSError:
        return None


def test_a_sandboxed_run_leaves_no_capability_setuid_link_or_setgid_folder(
    user: str, open_tmp: Path
) -> None:
    run, out = _probed(user, open_tmp, "namespace")
    seen = run.output["probe"]  # type: ignore[index]
    assert seen["caps"] == "0000000000000000" and seen["setcap"] == "EPERM", seen
    assert seen["setuid_link"] in ("EXDEV", "no setuid program"), seen
    assert not int(seen["setgid_folder"], 8) & stat.S_ISGID, seen
    assert _capability(out / "capped") is None
    assert not (out / "linked").exists()
    modes = {p.name: p.lstat().st_mode for p in out.iterdir()}
    assert not [name for name, mode in modes.items() if mode & (stat.S_ISUID | stat.S_ISGID)]
    if seen["whiteout"] != "EPERM":  # made, as at process: a device that opens nothing
        assert stat.S_ISCHR(modes["w1"]) and os.lstat(out / "w1").st_rdev == 0, seen


@pytest.mark.skipif(os.geteuid() != 0, reason="the control's agent runs as root")
def test_control_a_root_passhats_run_at_process_level_leaves_a_capability_and_a_setuid_link(
    open_tmp: Path,
) -> None:
    run, out = _probed("root", open_tmp, "process")
    seen = run.output["probe"]  # type: ignore[index]
    assert _capability(out / "capped") is not None, seen
    if seen["setuid_link"] != "no setuid program":
        assert (out / "linked").lstat().st_mode & stat.S_ISUID, seen
