"""Benchmark: peak memory of `passhat import tau2` and `passhat import inspect` on
300 MB files.

Target (issue #34): peak RSS at most 200 MB on a 300 MB τ²-bench results.json (read
whole, such a file held 936 MB) and on a 300 MB Inspect .json log. The τ² file is
written here in the shape of τ²-bench's pydantic models (tests/test_import_tau2.py's
simulation, with longer messages: a customer-service conversation of tool calls and
replies, about 50 kB a simulation); the Inspect log is a real one (tests/inspect_logs.py
runs Inspect's own eval of a tiny task), its samples copied under new ids, each given
a longer conversation (about 25 kB), its header saying so. Both are written one item at
a time so this process stays small. Each import is a `passhat import ... --json`
command of its own, its peak RSS its own ru_maxrss (`_result.measured`); the same file
read whole (the stream's threshold raised past it) is measured beside it. Memory does
not depend on the machine's load, so the figures are steady on a shared machine.

    .venv/bin/python benchmarks/bench_import_rss.py [--mb 300] [--source tau2|inspect|both]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from _result import measured, result

TARGET_MB = 200.0
WHOLE = (
    "import sys; from passhat.sources import {module} as m; m.STREAM_ABOVE = 1 << 62; "
    "from passhat.cli import main; sys.argv[0] = 'passhat'; main()"
)
MODULES = {"tau2": "tau2", "inspect": "inspect_log"}


def simulation(task: int, trial: int) -> dict[str, Any]:
    """One τ²-bench SimulationRun, about 30 kB, as `Results.save` dumps it."""
    messages: list[dict[str, Any]] = []
    for turn in range(12):
        text = f"turn {turn} of task {task}: " + "please look up the reservation. " * 60
        messages.append({"role": "user", "content": text, "turn_idx": 2 * turn})
        messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": f"call-{turn}",
                        "name": "get_reservation_details",
                        "arguments": {"reservation_id": f"R{task:05d}{trial:03d}"},
                        "requestor": "assistant",
                    }
                ],
                "turn_idx": 2 * turn + 1,
            }
        )
    reward = float((task + trial) % 3 != 0)
    return {
        "id": f"sim-{task}-{trial}",
        "task_id": str(task),
        "timestamp": "2026-01-01T00:00:00",
        "start_time": "2026-01-01T00:00:00",
        "end_time": "2026-01-01T00:01:00",
        "duration": 60.0,
        "termination_reason": "user_stop",
        "agent_cost": 0.01,
        "user_cost": 0.01,
        "reward_info": {"reward": reward, "reward_basis": ["DB"], "db_check": {"db_match": True}},
        "messages": messages,
        "trial": trial,
        "seed": 300 + trial,
        "mode": "half_duplex",
    }


def write_results(path: Path, megabytes: int, trials: int = 10) -> int:
    """A results.json of about `megabytes` MB; the number of simulations written."""
    size = len(json.dumps(simulation(0, 0))) + 2
    tasks = max(1, megabytes * 1_000_000 // size // trials)
    info = {
        "git_commit": "a2c0247",
        "num_trials": trials,
        "max_steps": 200,
        "max_errors": 10,
        "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1", "llm_args": {}},
        "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1-mini", "llm_args": {}},
        "environment_info": {"domain_name": "airline", "policy": "..."},
        "seed": 300,
    }
    task_list = [
        {"id": str(t), "user_scenario": {"instructions": f"task {t}"}} for t in range(tasks)
    ]
    with path.open("w") as out:
        out.write('{"timestamp": "2026-01-01T00:00:00", "info": ' + json.dumps(info))
        out.write(', "tasks": ' + json.dumps(task_list) + ', "simulations": [')
        for t in range(tasks):
            for trial in range(trials):
                out.write(("" if t == trial == 0 else ", ") + json.dumps(simulation(t, trial)))
        out.write("]}")
    return tasks * trials


def write_inspect_log(path: Path, megabytes: int, work: Path) -> int:
    """An Inspect .json log of about `megabytes` MB made from a real one; its samples."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from inspect_ai.log import read_eval_log
    from inspect_ai.log._file import eval_log_json

    from inspect_logs import make_logs

    log = read_eval_log(str(make_logs(work / "logs")["tiny-math"]))
    assert log.samples is not None
    raws = [json.loads(s.model_dump_json()) for s in log.samples]
    talk = [
        {"role": "user" if i % 2 else "assistant", "content": f"step {i}: " + "x = 2 + 2. " * 200}
        for i in range(10)
    ]
    for raw in raws:
        raw["messages"] = raw["messages"] + talk
    epochs = log.eval.config.epochs or 1
    size = sum(len(json.dumps(raw)) + 2 for raw in raws)
    copies = max(1, megabytes * 1_000_000 // size)
    # Inspect's own writer (eval_log_json) for the header: it leaves out what is None
    header = json.loads(eval_log_json(log.model_copy(update={"samples": None, "reductions": None})))
    header.pop("samples", None)
    header.pop("reductions", None)
    ids = [f"c{c}-{raw['id']}" for c in range(copies) for raw in raws if raw["epoch"] == 1]
    header["eval"]["dataset"].update(samples=len(ids), sample_ids=ids)
    if header.get("results"):
        header["results"]["sample_reductions"] = None
    with path.open("w") as out:
        out.write(json.dumps(header)[:-1] + ', "samples": [')
        first = True
        for c in range(copies):
            for raw in raws:
                copy = {**raw, "id": f"c{c}-{raw['id']}", "uuid": f"u{c}-{raw['uuid']}"}
                out.write(("" if first else ", ") + json.dumps(copy))
                first = False
        out.write("]}")
    assert epochs >= 1
    return copies * len(raws)


def measure(source: str, path: Path, tmp: Path) -> dict[str, float]:
    """Peak RSS (MiB) of the import read as a stream and read whole, with its wall time."""
    peaks = {}
    for how, argv in (
        ("stream", [sys.executable, "-m", "passhat"]),
        ("whole", [sys.executable, "-c", WHOLE.format(module=MODULES[source])]),
    ):
        db = tmp / f"{source}-{how}.db"
        run = measured([*argv, "import", source, str(path), "--db", str(db), "--json"])
        peaks[how] = run.peak_mb
        print(
            f"passhat import {source}, read as a {how}: {run.wall:.1f} s wall, "
            f"peak RSS {run.peak_mb:.1f} MiB"
        )
        db.unlink()
    print(f"the stream's peak is {peaks['stream'] / peaks['whole']:.2f}× the whole read's")
    return peaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300, help="size of each file (MB)")
    parser.add_argument("--source", choices=("tau2", "inspect", "both"), default="both")
    args = parser.parse_args()
    met = True
    with tempfile.TemporaryDirectory() as tmp:
        for source in ("tau2", "inspect") if args.source == "both" else (args.source,):
            if source == "tau2":
                path = Path(tmp) / "results.json"
                count = write_results(path, args.mb)
                what = "results.json", "simulations"
            else:
                path = Path(tmp) / "log.json"
                count = write_inspect_log(path, args.mb, Path(tmp))
                what = "Inspect .json log", "samples × epochs"
            mb = path.stat().st_size / 1e6
            print(f"{what[0]}: {mb:.0f} MB, {count:,} {what[1]}")
            peaks = measure(source, path, Path(tmp))
            path.unlink()
            met &= result(
                f"peak RSS of `passhat import {source}` on a {mb:.0f} MB {what[0]}",
                peaks["stream"] / TARGET_MB,
                1.0,
                f"peak RSS (MiB) / {TARGET_MB:g} MB",
            )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
