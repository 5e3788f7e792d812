"""A sandboxed run left setuid files on the host (round 13's outside attack).

A run's `write:` folders are the host's. An agent made a file there setuid and setgid
(`chmod 6755`, or `open(..., O_CREAT, 0o6755)`, or `mknod`): in its sandbox the bit does
nothing (its mounts are nosuid), but on the host the file kept it, owned by passhat's own
user when passhat is unprivileged (nobody here) and by the run's uid under a root
passhat. Any local user who ran it then ran the agent's code outside its sandbox as that
user: its HOME, its keys, its store. Tried for real: mode 0o106755 left on the host at
`namespace`, as root and as an unprivileged user, as at `process` (the control, where the
agent is passhat's user anyway). Flatpak resets the modes its sandboxed scripts leave
for the same reason (flatpak/flatpak#2323). Now every sandbox starts under a system-call
filter (agents/seccomp.py, bwrap's --seccomp) that refuses a set-id mode to every
`chmod`, `open` and `mknod`, and the calls that would slip past it.
"""

from __future__ import annotations

import errno
import json
import platform
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from passhat.agents.seccomp import TABLES, X32_BIT, program
from sandbox_helpers import ATTACK_MARKS, attack_in, one_run

SETID = 0o6000
FILTERED = r"""
import ctypes, errno, json, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
code = bytes.fromhex(sys.argv[1])
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
prog = Prog(len(code) // 8, code)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()  # a filter
folder = sys.argv[2]
seen = {}
def attempt(name, call):
    try:
        call(os.path.join(folder, name))
        seen[name] = oct(os.lstat(os.path.join(folder, name)).st_mode)
    except OSError as error:
        seen[name] = errno.errorcode[error.errno]
def made(path, mode=0o644):
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, mode))
def chmodded(mode):
    return lambda path: (made(path), os.chmod(path, mode))
attempt("plain", chmodded(0o755))
attempt("setuid", chmodded(0o4755))
attempt("setgid", chmodded(0o2755))
attempt("created", lambda path: made(path, 0o6755))
attempt("mknod", lambda path: os.mknod(path, stat.S_IFREG | 0o4755))
attempt("fifo", lambda path: os.mkfifo(path, 0o644))
def raw(number, *args):
    if libc.syscall(ctypes.c_long(number), *args) == -1:
        return errno.errorcode[ctypes.get_errno()]
    return "ok"
if len(sys.argv) > 3:  # x86_64: the calls by number
    target = os.path.join(folder, "plain").encode()
    seen["raw chmod"] = raw(90, target, 0o4755)
    seen["raw fchmodat"] = raw(268, -100, target, 0o2755)
    seen["raw fchmodat2"] = raw(452, -100, target, 0o4755, 0)
    seen["raw openat2"] = raw(437, -100, target, None, 0)
    seen["raw io_uring_setup"] = raw(425, 1, None)
    seen["x32 chmod"] = raw(X32 | 90, target, 0o4755)
    seen["raw chmod plain"] = raw(90, target, 0o700)
print(json.dumps(seen))
""".replace("X32", str(X32_BIT))


def _under_filter(folder: Path) -> dict[str, str]:
    """What a process under this machine's filter could make in `folder`."""
    machine = platform.machine()
    args = [sys.executable, "-c", FILTERED, program(machine).hex(), str(folder)]
    done = subprocess.run(
        [*args, *(["raw"] if machine == "x86_64" else [])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(platform.machine() not in TABLES, reason="no filter for this machine")
def test_the_filter_refuses_a_set_id_mode_to_every_chmod_open_and_mknod(tmp_path: Path) -> None:
    seen = _under_filter(tmp_path)
    assert seen["plain"] == "0o100755" and seen["fifo"] == "0o10644", seen
    for name in ("setuid", "setgid", "created", "mknod"):
        assert seen[name] == "EPERM", seen
    left = {p.name: p.lstat().st_mode for p in tmp_path.iterdir()}
    assert left["setuid"] == left["setgid"] == 0o100644, left  # made, refused the bit
    assert "created" not in left and "mknod" not in left, left
    if platform.machine() == "x86_64":
        for name in ("raw chmod", "raw fchmodat", "raw fchmodat2"):
            assert seen[name] == "EPERM", seen
        for name in ("raw openat2", "raw io_uring_setup", "x32 chmod"):
            assert seen[name] == "ENOSYS", seen
        assert seen["raw chmod plain"] == "ok", seen


def test_a_machine_with_no_table_gets_a_filter_refusing_everything() -> None:
    (code,) = [program("sparc64")[i : i + 8] for i in range(0, len(program("sparc64")), 8)]
    assert code[:2] == (0x06).to_bytes(2, sys.byteorder)  # BPF_RET: no call allowed
    assert int.from_bytes(code[4:], sys.byteorder) == 0x00050000 | errno.ENOSYS


def _left(user: str, open_tmp: Path, level: str) -> dict[str, object]:
    """A run at `level` that tries to leave set-id files in its `write:` folder: what
    the agent saw, and the modes of what it left there."""
    suite, out = attack_in(open_tmp, "ATTACK_SETID")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", level, "--agent-write", str(out))
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    assert isinstance(run.output, dict), run.output
    left = {p.name: oct(p.lstat().st_mode) for p in out.iterdir()}
    return {"saw": run.output["setid"], "left": left}


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_sandboxed_run_leaves_no_setuid_file_on_the_host(user: str, open_tmp: Path) -> None:
    found = _left(user, open_tmp, "namespace")
    left = found["left"]
    assert isinstance(left, dict)
    assert [name for name, mode in left.items() if int(mode, 8) & SETID] == [], found
    assert left["plain"] == "0o100755", found  # an ordinary executable is still made


@ATTACK_MARKS[1]
def test_control_a_run_at_process_level_leaves_setuid_files(user: str, open_tmp: Path) -> None:
    found = _left(user, open_tmp, "process")
    left = found["left"]
    assert isinstance(left, dict)
    assert {n for n, mode in left.items() if int(mode, 8) & SETID} == {
        "chmod",
        "fchmod",
        "created",
        "mknod",
    }, found


@pytest.mark.parametrize("machine", ["riscv64", "x86_64"])
def test_namespace_is_refused_on_a_machine_with_no_filter(
    machine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passhat.agents import isolation

    monkeypatch.setattr(platform, "machine", lambda: machine)
    isolation.unavailable.cache_clear()
    try:
        reason = isolation.unavailable("namespace")
    finally:
        isolation.unavailable.cache_clear()
    refused = "no system-call filter for this machine (riscv64;"
    assert (reason is not None and refused in reason) == (machine == "riscv64"), reason


def _decide(code: bytes, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """What the classic-BPF program `code` returns for a call (a small interpreter of
    the five instructions seccomp.program writes): the filter of a machine this one is
    not, tried without it."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(args + (0,) * (6 - len(args))))
    ops = [struct.unpack("=HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = ops[pc]
        if op == 0x20:  # load a word of seccomp_data
            acc = struct.unpack_from("=I", data, k)[0]
        elif op == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += jt if taken else jf
        pc += 1


@pytest.mark.parametrize("machine", sorted(TABLES))
def test_each_machines_filter_decides_as_its_table_says(machine: str) -> None:
    code = program(machine)
    audit, numbers = TABLES[machine]
    allow, eperm = 0x7FFF0000, 0x00050000 | errno.EPERM
    enosys = 0x00050000 | errno.ENOSYS
    modes = {"openat": 3, "mknodat": 2, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2}
    modes |= {"open": 2, "creat": 1, "chmod": 1, "mknod": 1}
    for name, arg in modes.items():
        if name not in numbers:
            continue
        setid = tuple(0o4755 if i == arg else 0 for i in range(arg + 1))
        plain = tuple(0o755 if i == arg else 0o6000 for i in range(arg + 1))
        assert _decide(code, audit, numbers[name], setid) == eperm, name
        assert _decide(code, audit, numbers[name], plain) == allow, name  # other args: not read
    for name in ("openat2", "io_uring_setup", "io_uring_enter", "io_uring_register", "io_setup"):
        assert _decide(code, audit, numbers[name]) == enosys, name
    read = {"x86_64": 0, "aarch64": 63}[machine]
    assert _decide(code, audit, read, (0o6755,) * 6) == allow  # read(2): not looked at
    assert _decide(code, 0x40000003, 90, (0, 0o4755)) == enosys  # another ABI (i386)
    if machine == "x86_64":
        assert _decide(code, audit, X32_BIT | 90, (0, 0o4755)) == enosys  # x32


@ATTACK_MARKS[0]
def test_the_levels_probe_starts_its_sandbox_with_the_filter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from passhat.agents import isolation, seccomp

    monkeypatch.setattr(seccomp, "this_machine", lambda: b"\x06\x00\x00")  # not 8 bytes
    isolation.unavailable.cache_clear()
    try:
        reason = isolation.unavailable("namespace")
    finally:
        isolation.unavailable.cache_clear()
    assert reason is not None and "seccomp" in reason, reason
