"""The kernel's keyrings: a sandboxed agent reads no key of passhat's session keyring,
and leaves no note there for another run (round 9's outside attack).

A process's session keyring is inherited by every process it starts, through bubblewrap,
a new user namespace and setpriv alike, and a process *possesses* the keys of its session
keyring whatever its uid: the keyring's possessor permissions apply. passhat started in
a login (pam_keyinit gives every ssh session a keyring of its own) or as a systemd service
(KeyringMode=private) has one, and what its user keeps there (a token a CLI cached with
`keyctl`, a Kerberos KEYRING: ticket) is passhat's user's secret. The test starts passhat
in a fresh session keyring holding a key, as root and as an unprivileged user; the
`process` level is the control that shows the agent reads it there.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from agent_python import PYTHON
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as

pytestmark = [
    *ATTACK_MARKS,
    pytest.mark.skipif(
        os.uname().machine not in ("x86_64", "aarch64", "riscv64"),
        reason="the test knows the keyctl and add_key syscall numbers of x86_64 and the generic table",
    ),
]

LOGIN = """
import ctypes, os, sys
keyctl, add_key = {"x86_64": (250, 248)}.get(os.uname().machine, (219, 217))
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(keyctl, 1, b"passhat-login") <= 0:  # KEYCTL_JOIN_SESSION_KEYRING
    sys.exit("cannot make a session keyring: errno %d" % ctypes.get_errno())
name, value = sys.argv[1].encode(), sys.argv[2].encode()
if libc.syscall(add_key, b"user", name, value, len(value), ctypes.c_long(-3)) <= 0:
    sys.exit("cannot add a key: errno %d" % ctypes.get_errno())
os.execv(sys.argv[3], sys.argv[3:])
"""
"""Starts the rest of its command line in a session keyring of its own holding one key,
as a login's pam_keyinit would (then `keyctl add user NAME VALUE @s`)."""


def _runs(user: str, folder: Path, level: str, name: str, secret: str) -> list[dict[str, object]]:
    work = folder / f"work-{level}"
    suite = attack_suite(work, {"ATTACK_RING": name, "ATTACK_WAIT": "0.5"})
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = work / "p.db"
    args = ["-k", "2", "--concurrency", "2", "--timeout", "60", "--isolation", level]
    head = [str(PYTHON), "-I", "-c", LOGIN, name, secret]
    done = passhat_as(
        user, folder, "run", str(suite), *args, "--db", str(db), "-q", "--no-report", head=head
    )
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    assert len(runs) == 2 and all(r.output is not None for r in runs), [
        r.error_message for r in runs
    ]
    return [r.output["keyring"] for r in runs]


def test_the_agent_reads_no_key_of_passhats_session_keyring_and_leaves_none_there(
    user: str, open_tmp: Path
) -> None:
    name, secret = f"passhat-test-{uuid.uuid4().hex[:8]}", f"sk-keyring-{uuid.uuid4().hex}"
    for seen in _runs(user, open_tmp, "namespace", name, secret):
        assert seen["read"] is None, "a key of passhat's session keyring was readable"
        assert seen["added"] is False, "a run could leave a key where the others look"
    # the control: at --isolation process the agent is in passhat's session, key and all
    control = _runs(user, open_tmp, "process", name, secret)
    assert [seen["read"] for seen in control] == [secret, secret]
    assert all(seen["added"] for seen in control)
