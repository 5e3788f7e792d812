"""passhat beside Inspect AI on the same workloads, each through its own command.

Workloads: N cases × k instant runs (1,000 × 1, 5 and 10), and 1,000 runs of
100 ms at concurrency 50. Each workload runs through `passhat run` (this
repo's venv) and `inspect eval` (Inspect's own venv, `make bench-inspect`),
alternating, `--repeat` times; wall and CPU time of each command (interpreter
start included) and the ratio passhat / Inspect, from the same run.

    .venv/bin/python benchmarks/vs_inspect/run.py --inspect-python benchmarks/vs_inspect/.venv/bin/python
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _fixtures import make_suite  # noqa: E402
from _result import result  # noqa: E402

WORKLOADS = [  # name, cases, k, agent, concurrency
    ("1,000 × 1 instant", 1000, 1, "instant", 8),
    ("1,000 × 5 instant", 1000, 5, "instant", 8),
    ("1,000 × 10 instant", 1000, 10, "instant", 8),
    ("1,000 × 100 ms, concurrency 50", 1000, 1, "waits_100ms", 50),
]


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inspect-python", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cases", type=int, default=1000, help="cases per workload (1,000)")
    args = parser.parse_args()
    passhat = [sys.executable, "-m", "passhat"]
    # absolute, not resolved: the commands run in a temporary folder, and resolving
    # a venv's python symlink would leave the venv
    inspect = [str(args.inspect_python.absolute()), "-m", "inspect_ai"]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suite = make_suite(root / "suite", args.cases)
        shutil.copy(HERE / "passhat_agents.py", suite / "passhat_agents.py")
        shutil.copy(HERE / "inspect_tasks.py", root / "inspect_tasks.py")
        for name, _, k, agent, concurrency in WORKLOADS:
            cases = args.cases
            name = name.replace("1,000", f"{cases:,}")
            ours, theirs = [], []
            for i in range(args.repeat):
                ours.append(
                    timed(
                        [
                            *passhat,
                            "run",
                            str(suite),
                            "--agent",
                            f"passhat_agents.py:{agent}",
                            "-k",
                            str(k),
                            "--concurrency",
                            str(concurrency),
                            "-q",
                            "--db",
                            str(root / f"p{i}-{k}-{agent}.db"),
                        ],
                        root,
                    )
                )
                theirs.append(
                    timed(
                        [
                            *inspect,
                            "eval",
                            f"inspect_tasks.py@{agent}",
                            "-T",
                            f"samples={cases}",
                            "--epochs",
                            str(k),
                            "--max-samples",
                            str(concurrency),
                            "--model",
                            "mockllm/model",
                            "--display",
                            "none",
                            "--log-dir",
                            str(root / f"logs{i}"),
                        ],
                        root,
                    )
                )
            wall_p = statistics.median(w for w, _ in ours)
            wall_i = statistics.median(w for w, _ in theirs)
            cpu_p = statistics.median(c for _, c in ours)
            cpu_i = statistics.median(c for _, c in theirs)
            print(
                f"{name}: passhat {wall_p:.2f} s wall / {cpu_p:.2f} s CPU; "
                f"Inspect {wall_i:.2f} s wall / {cpu_i:.2f} s CPU (median of {args.repeat})"
            )
            ok &= result(
                f"passhat vs Inspect AI, {name}", wall_p / wall_i, 1, "passhat wall / Inspect wall"
            )
            if agent == "waits_100ms":
                ideal = cases * k * 0.1 / concurrency
                print(
                    f"  vs the {ideal:.1f} s ideal: passhat {wall_p / ideal:.2f}×, "
                    f"Inspect {wall_i / ideal:.2f}×"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
