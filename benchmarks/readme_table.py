"""Write the README's performance table from benchmark outputs (the `RESULT |` lines).

    .venv/bin/python benchmarks/readme_table.py benchmarks/results/*.txt [--readme README.md]

The table quotes ratios only (a ratio of two figures measured in the same run),
with the date and the machine, between the markers
`<!-- performance:start -->` and `<!-- performance:end -->` of the README.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
from pathlib import Path

START, END = "<!-- performance:start -->", "<!-- performance:end -->"
ROW = re.compile(r"^RESULT \| (.+?) \| (.+?) \| (.+?) \| (PASS|MISS) \| (.+)$")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}"


def rows(paths: list[Path]) -> list[tuple[str, ...]]:
    found = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = ROW.match(line.strip())
            if match:
                found.append((path.stem, *match.groups()))
    return found


def table(found: list[tuple[str, ...]], when: str, where: str, note: str) -> str:
    lines = [
        START,
        f"Measured {when} on {where} by `make bench` ({note}). Ratios only: each compares "
        "two figures measured in the same run; absolute times depend on the machine.",
        "",
        "| benchmark | what | ratio | target | |",
        "|---|---|---|---|---|",
    ]
    for bench, what, ratio, target, verdict, compares in found:
        lines.append(f"| {bench} | {what} ({compares}) | {ratio} | {target} | {verdict} |")
    lines.append(END)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", nargs="+", type=Path)
    parser.add_argument("--readme", type=Path, default=Path("README.md"))
    parser.add_argument("--note", default="one run of each benchmark")
    args = parser.parse_args()
    found = rows(args.outputs)
    if not found:
        print("no RESULT lines in the outputs given")
        return 1
    when = datetime.datetime.fromtimestamp(
        max(p.stat().st_mtime for p in args.outputs), datetime.UTC
    ).strftime("%Y-%m-%d")
    text = args.readme.read_text(encoding="utf-8")
    block = table(found, when, machine(), args.note)
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Performance\n\n" + block + "\n"
    args.readme.write_text(text, encoding="utf-8")
    print(f"{args.readme}: {len(found)} results from {len(args.outputs)} outputs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
