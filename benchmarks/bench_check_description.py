"""Benchmark: `passhat check` on a suite whose description is 8 MB.

Target (issue #34): the description costs `check` at most 2 s at 8 MB, whatever its
shape (it took 4.5 / 12 / 38 s at 2 / 4 / 8 MB: rich folded the first paragraph, one
long line, inside a table cell, in time that grew with the square of its length).
Adversarial shapes, each 8 MB: one line of near-claims ("We ran each configuration 3
times, 5 runs per task, k=5, ..."), one paragraph of many short lines, many
paragraphs, one line of numbers only; the one-line shape also at 1, 2 and 4 MB, to
show the growth. What the description costs is the CPU time (user + system) of
`check` minus that of the same suite with a one-line description, the two measured
in turn (`--repeat` pairs, median): CPU time, not wall, since the machine is shared.

    .venv/bin/python benchmarks/bench_check_description.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _result import measured, result

TARGET_S = 2.0
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MB = 1_000_000
NEAR_CLAIM = "We ran each configuration 3 times, 5 runs per task, k=5, pass^3 0.61; "


def description(shape: str, size: int) -> str:
    """A description of `size` characters in one of the adversarial shapes."""
    if shape == "one line of near-claims":
        unit = NEAR_CLAIM
    elif shape == "one paragraph of short lines":
        unit = "5 runs per task, 3 seeds each\n"
    elif shape == "many paragraphs":
        unit = "Each task ran 5 times.\n\n"
    else:  # numbers only
        unit = "12.5 3 1,000 0.61 "
    return (unit * (size // len(unit) + 1))[:size]


def write_suite(folder: Path, text: str) -> Path:
    """The clarify suite, its description `text` (a YAML block scalar)."""
    suite = Path(shutil.copytree(EXAMPLES / "clarify", folder))
    yaml = (suite / "suite.yaml").read_text(encoding="utf-8")
    start = yaml.index("description: |")
    end = yaml.index("environment:")
    block = "".join("  " + line + "\n" if line else "\n" for line in text.split("\n"))
    (suite / "suite.yaml").write_text(
        yaml[:start] + "description: |\n" + block + yaml[end:], encoding="utf-8"
    )
    return suite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = [("one line of near-claims", mb) for mb in (1, 2, 4, 8)] + [
        (shape, 8) for shape in ("one paragraph of short lines", "many paragraphs", "numbers only")
    ]
    costs: dict[tuple[str, int], list[float]] = {case: [] for case in cases}
    walls: dict[tuple[str, int], list[float]] = {case: [] for case in cases}
    with tempfile.TemporaryDirectory() as tmp:
        base = write_suite(Path(tmp) / "base", "A suite.")
        suites = {
            case: write_suite(Path(tmp) / f"s{i}", description(case[0], case[1] * MB))
            for i, case in enumerate(cases)
        }
        argv = [sys.executable, "-m", "passhat", "check"]
        for _ in range(args.repeat):
            for case, suite in suites.items():
                plain = measured([*argv, str(base)])
                big = measured([*argv, str(suite)])
                costs[case].append(big.cpu - plain.cpu)
                walls[case].append(big.wall)
    for (shape, mb), values in costs.items():
        print(
            f"check, description {mb} MB, {shape}: +{statistics.median(values):.2f} s CPU "
            f"over a one-line description (wall {statistics.median(walls[shape, mb]):.2f} s)"
        )
    growth = statistics.median(costs["one line of near-claims", 8]) / max(
        statistics.median(costs["one line of near-claims", 1]), 0.01
    )
    print(f"one line, 8 MB over 1 MB: {growth:.1f}× (linear: 8×)")
    worst = max((c for c in cases if c[1] == 8), key=lambda c: statistics.median(costs[c]))
    met = result(
        f"`passhat check`, an 8 MB description ({worst[0]}, the costliest shape)",
        statistics.median(costs[worst]) / TARGET_S,
        1.0,
        f"CPU s the description costs / {TARGET_S:g} s",
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
