"""A command run's bound on what it writes to its `write:` folders (--agent-write-limit).

A run's `write:` folders (suite.yaml `agent: {write: [...]}`, --agent-write) are the
host's own folders, bound writable into its sandbox: its work folder, /tmp and /dev/shm
are tmpfs of a set size, but what it wrote there had no bound, and a run that wrote
without end filled the filesystem they lie on, the store's too when it is the same one
(tests/test_fix54_write_limit.py). No kernel limit an unprivileged passhat can set
bounds a process tree's writes to a host folder (quotas need root and the filesystem's
support; a sized tmpfs or overlay would end the folder's being the host's), so with
`--agent-write-limit SIZE` (`evaluate(sandbox={"write_limit": SIZE})`, recorded with the
experiment) a run is held to it by two things together:

- RLIMIT_FSIZE of SIZE on the agent and all it starts (a shell's `ulimit -f` before its
  command): no one file it writes grows past SIZE, anywhere (its tmpfs too); a write
  past it fails (`EFBIG`, or SIGXFSZ for a program that does not ignore it);
- a watch of the folders' growth (their files' allocated blocks, walked every
  SAMPLE_S off the event loop, from what they held as the run started): past SIZE, the
  run's agent is stopped.

A run whose folders grew to SIZE or past is the agent's result, as for --max-turns: it
is counted and graded on the state it reached, marked `limit`, its message naming the
limit. What it can still write past SIZE: what it writes in one SAMPLE_S across several
files. The growth counted is the folders', so runs in flight together that write the
same folder each see the other's writes (--concurrency 1 keeps each its own). Without the
option nothing is bounded, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
from collections.abc import AsyncIterator, Sequence
from decimal import Decimal
from typing import Any

from passhat.agents.sandbox import outermost
from passhat.agents.streams import AgentProcessError
from passhat.limits import LIMIT

SAMPLE_S = 0.1
"""Seconds between two looks at a run's `write:` folders' growth."""
BLOCK = 512
"""The unit of a shell's `ulimit -f` (POSIX: 512-byte blocks; bash as `sh` too)."""
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2}
_UNITS |= {"mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4}
_UNITS |= {"tb": 1000**4, "tib": 1024**4}
MOST = 1000 * 1024**4
"""The largest SIZE taken (1000 TiB): far below where a shell's `ulimit -f` wraps (dash
multiplies its blocks by 512 in 64 bits: 2**55 blocks is no limit at all)."""
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)


def parse_size(value: Any, where: str = "--agent-write-limit") -> int:
    """SIZE as bytes: a number of bytes, or one with a unit (`8MiB`, `2GB`, `512k`);
    ValueError naming `where` and the fix otherwise."""
    found = _SIZE.fullmatch(str(value)) if isinstance(value, str | int) else None
    unit = _UNITS.get(found.group(2).lower()) if found else None
    if found is None or unit is None or isinstance(value, bool):
        raise ValueError(f"{where} {value!r}: give a size, e.g. 512MiB, 2GiB or 100000000")
    size = int(Decimal(found.group(1)) * unit)  # exact, however long (no float's inf)
    if size < BLOCK:
        raise ValueError(f"{where} {value!r}: give at least {BLOCK} bytes")
    if size > MOST:
        raise ValueError(f"{where} {value!r}: give at most 1000TiB ({MOST} bytes)")
    return size


def settable(size: int, where: str = "--agent-write-limit") -> int:
    """`size`, when passhat's own hard RLIMIT_FSIZE lets a run's `ulimit -f` set it (no
    process raises its hard limit: every run would fail in its prefix); ValueError naming
    `where`, the limit and the fix otherwise."""
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    if hard != resource.RLIM_INFINITY and size // BLOCK * BLOCK > hard:
        raise ValueError(
            f"{where} {size}: passhat's own file size limit is {hard} bytes (ulimit -Hf "
            f"{hard // BLOCK}), and no run may set a larger one; give at most {hard} or "
            "raise passhat's limit"
        )
    return size


def budget(params: dict[str, Any]) -> int | None:
    """The experiment's write limit in bytes (its `sandbox` parameter), None when unset."""
    limit = (params.get("sandbox") or {}).get("write_limit")
    return int(limit) if limit is not None else None


def distinct(folders: Sequence[str]) -> list[str]:
    """`folders` each once (by resolved path), less those inside another of them: a folder
    given twice (the suite's `write:` and --agent-write) or within another is walked
    once, its growth not counted twice (the run stopped at half its limit)."""
    return outermost(os.path.realpath(f) for f in folders)


def allocated(folders: Sequence[str]) -> int:
    """Bytes the files under `folders` take on disk (their blocks; links not followed)."""
    total = 0
    stack = list(folders)
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
    return total


def prefix(size: int) -> list[str]:
    """What runs the agent's command with RLIMIT_FSIZE of `size` (soft and hard)."""
    blocks = size // BLOCK
    cap = f'ulimit -f {blocks} || {{ echo "passhat: the run\'s file size limit could not be set" >&2; exit 126; }}'
    return ["/bin/sh", "-c", f'{cap}\nexec "$@"', "sh"]


def _past(size: int, grown: int) -> str:
    return (
        f"the agent's write: folders grew by {grown:,} bytes, past the run's limit of "
        f"{size:,} (--agent-write-limit {size}); it was stopped there"
    )


class Watch:
    """A run's `write:` folders and its limit: the growth looked at until the run ends."""

    def __init__(self, folders: Sequence[str], size: int, stop: asyncio.Event) -> None:
        self.folders = list(folders)
        self.size = size
        self.stop = stop
        self.start = 0
        self.grown = 0

    async def _growth(self) -> int:
        now = await asyncio.to_thread(allocated, self.folders)
        self.grown = max(self.grown, now - self.start)
        return self.grown

    async def watch(self) -> None:
        while await self._growth() < self.size:
            await asyncio.sleep(SAMPLE_S)
        self.stop.set()  # the run's agent is stopped (as a tool flood stops it)


@contextlib.asynccontextmanager
async def watched(
    agent: Any, params: dict[str, Any], stop: asyncio.Event
) -> AsyncIterator[list[str]]:
    """A command run of `agent` (a CommandAgent) under the experiment's write limit (none:
    nothing done): what to put before its agent's command (`prefix`), and its `write:`
    folders' growth watched (`stop` set past the limit: the agent is stopped); a run whose
    folders grew to the limit ends in a `limit` (counted and graded), whatever it ended in."""
    size = budget(params)
    folders = distinct(agent.extra_paths(params)[1]) if size is not None else []
    if size is None or not folders:
        yield []
        return
    watch = Watch(folders, size, stop)
    watch.start = await asyncio.to_thread(allocated, watch.folders)
    task = asyncio.create_task(watch.watch())
    try:
        yield prefix(size)
    except Exception as error:
        if await _reached(watch, task):
            raise AgentProcessError(LIMIT, _past(size, watch.grown)) from error
        raise
    finally:
        task.cancel()  # a stop (a cancel) too
    if await _reached(watch, task):
        raise AgentProcessError(LIMIT, _past(size, watch.grown))


async def _reached(watch: Watch, task: asyncio.Task[None]) -> bool:
    """Whether the run's folders grew to its limit: a last look, its watch ended."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return await watch._growth() >= watch.size
