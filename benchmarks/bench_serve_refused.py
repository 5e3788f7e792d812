"""Benchmark: what refused model requests cost passhat, per run.

A command agent may send model requests passhat refuses with 413 (past MAX_BODY, VALUES
or MESSAGES) in a loop. Each was read and counted on the event loop every run shares
(about 0.55 s of passhat's CPU for a 32 MiB one), bounded only by the run's READ_BYTES
(4 GiB: some 128 such requests, ~70 s of CPU), and a dense one (1.2 MB of `0,`) cost
~0.16 s of counting, 3,500 of them to the same bound. Measured here: one run served
in this process (serve_run, as a command agent's is), an agent-side loop in another
process sending `--requests` refused requests of each shape until the run refuses them
unread, and the CPU time this process spent meanwhile (the client's is its own); each
shape with no budget (endpoints.REFUSED set past the loop: main's behaviour) and with
it, in turn, `--repeat` pairs, median.

Target: the whole loop costs passhat at most 5 s of CPU per run, whatever the shape.

    python -m compileall -q src
    chrt -f 20 .venv/bin/python benchmarks/bench_serve_refused.py [--requests 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _result import result

from passhat.agents.base import RunContext
from passhat.env import make_environment
from passhat.serve import endpoints, hub_scope, serve_run
from passhat.serve.app import MAX_BODY
from passhat.serve.endpoints import MESSAGES, VALUES
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0

CLIENT = r"""
import http.client, json, sys
port, token, shape, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
values, messages, max_body = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
if shape == "32 MiB of empty messages":
    one = b'{"role":"user","content":""},'
    body = b'{"model":"m","messages":[' + one * ((max_body - 200) // len(one)) + b'{}]}'
elif shape == "dense values (1.2 MB)":
    body = b'{"model":"m","messages":[' + b"0," * (values + 10) + b'0]}'
elif shape == "messages past the cap":
    body = json.dumps({"model": "m", "messages": [{"role": "user"}] * (messages + 1)}).encode()
else:  # past MAX_BODY, sent chunked (no Content-Length)
    body = None
statuses = []
for _ in range(count):
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=300)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    try:
        if body is None:
            chunks = (b" " * (1 << 20) for _ in range(max_body // (1 << 20) + 2))
            conn.request("POST", "/v1/chat/completions", chunks, headers, encode_chunked=True)
        else:
            conn.request("POST", "/v1/chat/completions", body, headers)
        statuses.append(conn.getresponse().status)
    except (ConnectionError, http.client.HTTPException) as error:
        statuses.append(type(error).__name__)
    finally:
        conn.close()
print(json.dumps(statuses))
"""

SHAPES = [
    "32 MiB of empty messages",
    "dense values (1.2 MB)",
    "messages past the cap",
    "past MAX_BODY, chunked",
]


async def one_loop(shape: str, requests: int) -> tuple[float, float, list[object]]:
    """CPU and wall seconds this process spent serving `requests` of `shape`."""
    suite = load_suite(ROOT / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)
    async with hub_scope(), serve_run(env, ctx) as run:
        args = [str(run.port), run.token, shape, str(requests), str(VALUES), str(MESSAGES)]
        cpu, wall = time.process_time(), time.perf_counter()
        client = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLIENT, *args, str(MAX_BODY), stdout=subprocess.PIPE
        )
        out, _ = await client.communicate()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    kept = endpoints.REFUSED
    worst = 0.0
    for shape in SHAPES:
        sides: dict[str, list[float]] = {"no budget": [], "budget": []}
        for _ in range(args.repeat):  # the two in turn: main's behaviour, then the budget's
            for side, refused in (("no budget", 10**9), ("budget", kept)):
                endpoints.REFUSED = refused
                cpu, wall, statuses = asyncio.run(one_loop(shape, args.requests))
                sides[side].append(cpu)
                seen = {str(s): statuses.count(s) for s in dict.fromkeys(statuses)}
                print(f"{shape:<26} {side:<9} passhat CPU {cpu:6.2f} s  wall {wall:6.2f} s"
                      f"  answers {seen}")  # fmt: skip
        endpoints.REFUSED = kept
        free, bounded = (statistics.median(sides[s]) for s in ("no budget", "budget"))
        print(f"{shape:<26} median CPU: no budget {free:.2f} s, budget {bounded:.2f} s")
        worst = max(worst, bounded)
    met = result(
        f"passhat's CPU for {args.requests} refused model requests of one run (worst shape)",
        worst / TARGET_S,
        1.0,
        f"CPU seconds over {TARGET_S:g} s",
    )
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
