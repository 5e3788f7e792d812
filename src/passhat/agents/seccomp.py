"""The system-call filter every sandboxed run starts under: no set-id file, no machine-wide AIO.

A run's `write:` folders are the host's. Without a filter an agent made a file there
setuid (`chmod 4755`, `open(..., O_CREAT, 0o6755)`, `mknod`): in the sandbox it does
nothing (its mounts are `nosuid`), but on the host it runs, for any local user who
starts it, as passhat's own user (an unprivileged passhat) or the run's uid (root):
code of the agent's outside its sandbox (Flatpak canonicalizes the modes its sandboxed
scripts leave for this reason, flatpak/flatpak#2323). The filter (classic BPF, handed
to bwrap's `--seccomp`) answers EPERM to a `chmod`, `open` or `mknod` of any kind whose
mode holds S_ISUID or S_ISGID, and ENOSYS to what would slip past it: `openat2` (its
mode lies in a struct the filter cannot read) and io_uring (whose opens no filter
sees), and a system call of an ABI the filter does not know (x32, or i386 on x86_64).
It refuses (ENOSYS) `io_setup` too: the events of every AIO context are counted in one
pool the whole machine shares (fs.aio-max-nr, 65,536), so one run that took them all
left every other run, and every process of the host using Linux AIO (a database), with
none (EAGAIN); such a run sees AIO as on a kernel built without it (CONFIG_AIO off).
Everything else is allowed. On a machine it has no table for, the level `namespace`
is refused (isolation.unavailable), not had without it.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct

SETID = 0o6000
"""S_ISUID | S_ISGID."""
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NR, _ARCH, _ARGS = 0, 4, 16
"""Offsets in struct seccomp_data: the call's number, its ABI, its arguments (8 bytes each)."""
X32_BIT = 0x40000000
"""Set in the number of an x32 call (an x86_64 process may make them)."""

CALLS: tuple[tuple[str, int | None], ...] = (
    ("openat2", None), ("io_uring_setup", None), ("io_uring_enter", None),
    ("io_uring_register", None), ("openat", 3), ("mknodat", 2), ("fchmod", 1),
    ("fchmodat", 2), ("fchmodat2", 2), ("open", 2), ("creat", 1), ("chmod", 1), ("mknod", 1),
    ("io_setup", None),
)  # fmt: skip
"""Each call the filter looks at: the index of its mode argument, or None for one it
refuses whole."""
TABLES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {"open": 2, "creat": 85, "chmod": 90, "fchmod": 91, "mknod": 133, "openat": 257}
        | {"mknodat": 259, "fchmodat": 268, "openat2": 437, "fchmodat2": 452}
        | {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
        | {"io_setup": 206},
    ),
    "aarch64": (
        0xC00000B7,
        {"mknodat": 33, "fchmod": 52, "fchmodat": 53, "openat": 56, "openat2": 437}
        | {"fchmodat2": 452, "io_uring_setup": 425, "io_uring_enter": 426}
        | {"io_uring_register": 427, "io_setup": 0},
    ),
}
"""Per machine: its ABI's audit number, and the numbers of the calls the filter looks at
(`chmod`, `open`, `creat` and `mknod` are not on aarch64: only their `*at` forms)."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _entry(nr: int, mode_arg: int | None) -> bytes:
    """The instructions for one call: refused outright (`mode_arg` None: ENOSYS), or
    refused (EPERM) when its mode argument holds a set-id bit; the call returns here."""
    if mode_arg is None:
        body = _op(_RET, _ERRNO | errno.ENOSYS)
    else:
        body = (
            _op(_LD_ABS, _ARGS + 8 * mode_arg)  # the low 32 bits (little-endian machines)
            + _op(_JSET, SETID, 0, 1)
            + _op(_RET, _ERRNO | errno.EPERM)
            + _op(_RET, _ALLOW)
        )
    return _op(_JEQ, nr, 0, len(body) // 8) + body


def program(machine: str) -> bytes:
    """The filter for `machine` (platform.machine()), as bwrap's --seccomp reads it: an
    array of struct sock_filter. A machine with no table gets one that refuses every
    call (ENOSYS) rather than none."""
    refuse = _op(_RET, _ERRNO | errno.ENOSYS)
    if machine not in TABLES:
        return refuse
    audit, numbers = TABLES[machine]
    calls = [(name, arg) for name, arg in CALLS if name in numbers]
    block = _op(_LD_ABS, _NR)
    if machine == "x86_64":  # x32 calls have numbers of their own, none of them looked at
        block += _op(_JGE, X32_BIT, 0, 1) + refuse
    block += b"".join(_entry(numbers[name], arg) for name, arg in calls) + _op(_RET, _ALLOW)
    return _op(_LD_ABS, _ARCH) + _op(_JEQ, audit, 1, 0) + refuse + block


@functools.cache
def this_machine() -> bytes:
    return program(platform.machine())
