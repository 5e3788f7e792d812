"""The long chaos run and fuzz (`make chaos`): many SIGKILLs of a larger experiment,
then the suite loader and verdict reader fuzzed with many more examples.

Prints what it did; exits non-zero when the killed experiment's report differs from
an uninterrupted one's, or when a fuzzed input raised anything but a PasshatError.

    python benchmarks/chaos.py [--k 600] [--kills 40] [--seed N] [--fuzz-examples 2000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chaos import chaos, comparable, report, stored, uninterrupted  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=600)
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--fuzz-examples", type=int, default=2000)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        result = chaos(Path(folder), k=args.k, kills=args.kills, seed=args.seed)
        uninterrupted(Path(folder), k=args.k)
        runs = stored(Path(folder) / "chaos.db", "chaos")
        same = comparable(report(Path(folder) / "chaos.db", "chaos")) == comparable(
            report(Path(folder) / "calm.db", "calm")
        )
        whole = [r[1] for r in runs] == list(range(1, args.k + 1))
        print(
            f"chaos: seed {args.seed}, k {args.k}: {result.kills} SIGKILLs "
            f"({result.kills_mid_run} mid-experiment) over {result.processes} processes in "
            f"{result.seconds:.1f} s; every run once: {whole}; report equals the "
            f"uninterrupted run's: {same}"
        )
        failed |= not (same and whole)
    # new examples every time here (make test replays the same ones: tests/conftest.py)
    env = {
        **os.environ,
        "PASSHAT_FUZZ_EXAMPLES": str(args.fuzz_examples),
        "PASSHAT_HYPOTHESIS": "explore",
    }
    started = time.monotonic()
    fuzz = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "tests" / "test_fuzz.py"),
         str(ROOT / "tests" / "test_fuzz_sources.py"), "-q", "-p",
         "no:cacheprovider"],
        env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    print(
        f"fuzz: {args.fuzz_examples} examples per property in {time.monotonic() - started:.0f} s: "
        + ("ok" if fuzz.returncode == 0 else "FAILED")
    )
    failed |= fuzz.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
