"""A sandboxed run holds memory past its caps, where the OOM killer does not see it (round 14).

A run's tmpfs are capped (a work folder and /tmp of 1 GiB, /dev/shm of 256 MiB: 2.25
GiB together), and its processes are the OOM killer's first choice (oom_score_adj 1000),
so an agent that eats memory ends itself. But memory can be held in no process's RSS,
which is what the OOM killer weighs: a System V shared memory segment written and
detached (kernel.shmmax and shmall are unbounded in the run's own IPC namespace), full
message queues (32,000 of 16 KiB: 500 MiB of the kernel's memory), semaphore sets, a
memfd held open (on the kernel's own tmpfs, with no size). Tried for real, one run at
`namespace`, under root and an unprivileged passhat alike: the host's MemAvailable fell
by 3.8 to 5.3 GB while the agent's RSS was 11 MB. Under memory pressure the OOM killer
then takes, among the sandboxes' processes, the one with the most RSS: another run's
agent, not the holder (not tried here: it takes the shared machine's memory). At
`namespace` it all goes with the run (its IPC namespace ends with its last process);
at `process` (the control) a SysV segment outlives its run, in the host's namespace,
until someone removes it (3 GiB were left so, removed by hand).

The same goes for the buffers of its TCP connections (loopback ones in its own network
namespace, the other end reading nothing), counted in one pool for the whole machine
(net.ipv4.tcp_mem, every namespace's sockets together: 1.18 GB to pressure, 2.36 GB to
its hard limit, past which every TCP connection of the machine stalls, passhat's and
the other runs' included): one run queued 318 MB on 81 connections in about a second,
and the host's /proc/net/sockstat showed 79,118 pages of TCP memory (324 MB) taken;
nothing bounds the number of such connections but its processes' descriptors. Only a
quarter of the way to pressure was tried, on a shared machine.

Not fixed. The fix for the first is a memory cgroup per run (memory.max, counting
tmpfs, SysV and memfd pages alike, with the run's processes in it: OOM within the run),
which needs a cgroup passhat may make (root, or a systemd-delegated one); refusing
shmget, msgget and semget in the filter (agents/seccomp.py) would take 4 GB of this, not
the memfd's. A cgroup v2 memory.max counts a run's socket buffers too, but tcp_mem stays
one pool of the machine's: bounding a run's share of it needs memory.max well under it,
or fewer connections a run (not tried). These tests take gigabytes of the machine's
memory for seconds: PASSHAT_ATTACK_MEMORY=1 runs them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from pathlib import Path

import pytest

from passhat.records import RunRecord
from sandbox_helpers import ATTACK_MARKS, attack_suite, one_run

pytestmark = [
    *ATTACK_MARKS,
    pytest.mark.skipif(
        not os.environ.get("PASSHAT_ATTACK_MEMORY"),
        reason="holds about 5 GB of the machine's memory for seconds; "
        "PASSHAT_ATTACK_MEMORY=1 runs it",
    ),
]
CAPS = (1 << 30) + (1 << 30) + (256 << 20)
"""The run's tmpfs together: its work folder, /tmp and /dev/shm (sandbox.py)."""


def _held(user: str, open_tmp: Path, level: str, kinds: str) -> RunRecord:
    suite = attack_suite(open_tmp / "work", {"ATTACK52_MEMORY": kinds}, "attack52_agent.py")
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", level)
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    return run


@pytest.mark.xfail(
    strict=True,
    reason="a run holds memory in SysV IPC and memfds, past its tmpfs caps and outside "
    "its RSS (the fix: a memory cgroup per run)",
)
def test_a_sandboxed_run_holds_no_more_memory_than_its_caps(user: str, open_tmp: Path) -> None:
    run = _held(user, open_tmp, "namespace", "shm+msg+sem+memfd")
    seen = run.output["memory"]  # type: ignore[index]
    assert seen["rss"] < 64 << 20, seen  # none of it in the agent's RSS
    assert seen["taken"] < CAPS, seen


def test_control_at_process_level_a_segment_outlives_its_run(user: str, open_tmp: Path) -> None:
    run = _held(user, open_tmp, "process", "shm")
    segment = run.output["memory"]["shm"]  # type: ignore[index]
    assert isinstance(segment, int), run.output
    try:
        left = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
        sizes = {int(line.split()[1]): int(line.split()[3]) for line in left}
        assert sizes.get(segment) == 3 << 30, sizes
    finally:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["ipcrm", "-m", str(segment)], check=False, timeout=30)


def _tcp_pages() -> int:
    """The TCP memory of the whole machine in use now, in pages (/proc/net/sockstat)."""
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        if line.startswith("TCP:"):
            fields = line.split()
            return int(fields[fields.index("mem") + 1])
    raise AssertionError("no TCP line in /proc/net/sockstat")


@pytest.mark.xfail(
    strict=True,
    reason="a run's TCP buffers are counted in the machine's one pool (tcp_mem), unbounded "
    "per run (the fix: a cgroup's memory.max well under tcp_mem, or fewer connections)",
)
def test_a_sandboxed_run_takes_at_most_an_eighth_of_the_machines_tcp_memory_to_pressure(
    open_tmp: Path,
) -> None:
    pressure = int(Path("/proc/sys/net/ipv4/tcp_mem").read_text().split()[0])
    megabytes = (pressure // 4) * 4096 >> 20  # a quarter of the way to pressure: tried
    peak, stop = [_tcp_pages()], threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            peak[0] = max(peak[0], _tcp_pages())

    sampler = threading.Thread(target=sample)
    sampler.start()
    env = {"ATTACK52_TCP": f"{megabytes},2"}
    suite = attack_suite(open_tmp / "work", env, "attack52_agent.py")
    try:
        before = _tcp_pages()
        run = one_run(
            "root" if os.geteuid() == 0 else "unprivileged",
            open_tmp,
            suite,
            open_tmp / "p.db",
            "namespace",
        )
    finally:
        stop.set()
        sampler.join()
    assert run.status != "errored", (run.error_type, run.error_message, run.stderr)
    assert peak[0] - before < pressure // 8, (peak[0], before, run.output)
