"""Benchmark: the look into archives in view before a command agent's first run.

300 large archives in a folder an agent sees (each a .tar.gz whose first member unpacks to
more than the per-archive bound, 64 MiB of zeros, so each look reads to that bound) took
~36 s of looking before the first run: each archive was bounded (1 s, 64 MiB), all of
them together were not. One whole look is now bounded too (archives.LOOK_S, LOOK_BYTES):
past it the experiment is refused in one line. Measured: the wall and CPU time of one
look at the folder (lookout.Lookout, as CommandAgent.view makes it) outside a whole look
(every archive to its own bound: what main did) and inside one (`whole_look`: refused at
its bound), in turn, `--repeat` pairs, median.

Target: the whole look ends within 1.2x LOOK_S (its CPU time beside it).

    python -m compileall -q src
    chrt -f 20 .venv/bin/python benchmarks/bench_archives.py [--archives 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import io
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _result import result

from passhat.agents import archives
from passhat.agents.archives import TooMuchToLook, whole_look
from passhat.agents.lookout import Lookout


def one_archive(path: Path) -> None:
    """A .tar.gz: 80 MiB of zeros, then a note (nothing of passhat's)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, size in (("data.bin", 80 << 20), ("notes.txt", 6)):
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, io.BytesIO(bytes(size)))
    path.write_bytes(gzip.compress(out.getvalue(), 6))


def look(folder: Path, whole: bool) -> tuple[float, float, str]:
    """Wall and CPU seconds of one look at `folder`, and how it ended."""
    wall, cpu = time.perf_counter(), time.process_time()
    ended = "looked into every archive"
    try:
        if whole:
            with whole_look():
                Lookout(str(folder)).found()
        else:
            Lookout(str(folder)).found()
    except TooMuchToLook:
        ended = "refused at the whole look's bound"
    return time.perf_counter() - wall, time.process_time() - cpu, ended


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--archives", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-archives-"))
    try:
        folder = root / "view"
        folder.mkdir()
        one_archive(root / "first.tar.gz")
        for n in range(args.archives):
            shutil.copyfile(root / "first.tar.gz", folder / f"data{n:03}.tar.gz")
        size = (root / "first.tar.gz").stat().st_size
        print(f"{args.archives} archives of {size >> 10} KiB (80 MiB unpacked) each")
        print(f"bounds: per archive {archives.ARCHIVE_LOOK_S:g} s, "
              f"{archives.ARCHIVE_BYTES >> 20} MiB; whole look {archives.LOOK_S:g} s, "
              f"{archives.LOOK_BYTES >> 20} MiB")  # fmt: skip
        free: list[tuple[float, float]] = []
        bounded: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            for whole, into in ((False, free), (True, bounded)):
                wall, cpu, ended = look(folder, whole)
                into.append((wall, cpu))
                side = "whole look" if whole else "each archive alone"
                print(f"  {side:<18} wall {wall:6.2f} s  CPU {cpu:6.2f} s  ({ended})")
        free_wall = statistics.median(w for w, _ in free)
        wall = statistics.median(w for w, _ in bounded)
        cpu = statistics.median(c for _, c in bounded)
        print(f"median: each archive alone {free_wall:.2f} s; whole look {wall:.2f} s "
              f"(CPU {cpu:.2f} s)")  # fmt: skip
        met = result(
            f"look before the first run, {args.archives} archives of 80 MiB in view",
            wall / archives.LOOK_S,
            1.2,
            f"wall of the bounded look over LOOK_S ({archives.LOOK_S:g} s); unbounded: "
            f"{free_wall:.1f} s",
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
