"""Agents for runner tests, loaded by import path like a user's own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from typing import Any

GOAL_ANNOTATIONS = [
    {"ac": 3, "label": "conflict", "note": "n"},
    {"ac": 3, "label": "inconsistent_with_description", "note": "n"},
    {"ac": 4, "label": "unverifiable", "note": "n"},
    {"ac": 7, "label": "unverifiable", "note": "n"},
]


async def _write(env: Any, annotations: list[dict[str, Any]], key: str = "SHOP-1042") -> Any:
    return await env.call(
        "update_ticket",
        {
            "key": key,
            "goal": "g",
            "scope_in": ["a"],
            "scope_out": [],
            "annotations": annotations,
        },
    )


async def perfect(input: Any, env: Any, ctx: Any) -> str:
    """Writes the goal state: every run passes."""
    await _write(env, GOAL_ANNOTATIONS, input["ticket"]["key"])
    return "done"


async def odd_runs_pass(input: Any, env: Any, ctx: Any) -> str:
    """Passes on odd run indices, fails on even ones: deterministic per run."""
    chosen = GOAL_ANNOTATIONS if ctx.run_index % 2 else GOAL_ANNOTATIONS[:1]
    await _write(env, chosen, input["ticket"]["key"])
    return f"run {ctx.run_index}"


async def odd_runs_pass_telling_its_housekeeping(input: Any, env: Any, ctx: Any) -> Any:
    """Like odd_runs_pass, its output the Dask housekeeping of the worker it ran on: [its
    event loop's tick (s), its system monitor's period (ms), its profiler's setting]."""
    import dask.config
    from distributed import Worker

    await odd_runs_pass(input, env, ctx)
    [worker] = Worker._instances  # the one of this process (a run has a thread of its own)
    monitor = worker.periodic_callbacks["monitor"].callback_time
    return [worker._tick_interval, monitor, dask.config.get("distributed.worker.profile.enabled")]


async def slow(input: Any, env: Any, ctx: Any) -> str:
    """Like odd_runs_pass, after PASSHAT_TEST_DELAY seconds (for kill tests)."""
    await asyncio.sleep(float(os.environ.get("PASSHAT_TEST_DELAY", "0.2")))
    return await odd_runs_pass(input, env, ctx)


async def waits_for_go(input: Any, env: Any, ctx: Any) -> str:
    """Like odd_runs_pass, once the file PASSHAT_TEST_GO names exists (at most 60 s):
    runs held until a test has set the stage (a worker joining later)."""
    go = os.environ.get("PASSHAT_TEST_GO", "")
    deadline = time.monotonic() + 60
    while go and not os.path.exists(go) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return await odd_runs_pass(input, env, ctx)


async def kills_its_worker(input: Any, env: Any, ctx: Any) -> str:
    """Like slow, but run 3 SIGKILLs the process it runs in, once: the first to create
    the file PASSHAT_TEST_KILL_MARK names. A worker that dies holding a run, always."""
    await asyncio.sleep(float(os.environ.get("PASSHAT_TEST_DELAY", "0.2")))
    mark = os.environ.get("PASSHAT_TEST_KILL_MARK")
    if ctx.run_index == 3 and mark:
        try:
            os.close(os.open(mark, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return await odd_runs_pass(input, env, ctx)


async def crashes(input: Any, env: Any, ctx: Any) -> str:
    raise RuntimeError("the agent fell over")


async def crashes_on_run_2(input: Any, env: Any, ctx: Any) -> str:
    """Like odd_runs_pass, but run 2 crashes: an errored run among graded ones."""
    if ctx.run_index == 2:
        raise RuntimeError("the agent fell over in run 2")
    return await odd_runs_pass(input, env, ctx)


async def hangs(input: Any, env: Any, ctx: Any) -> str:
    await asyncio.sleep(3600)
    return "never"


def not_async(input: Any, env: Any, ctx: Any) -> str:
    return "sync"


async def two_args(input: Any, env: Any) -> str:
    return "few"


GOAL_NOTE = "描述規定每筆訂單限用一組優惠碼"
"""A phrase found only in the goal state of ac-conflict-001 (a goal note)."""


async def peeks(input: Any, env: Any, ctx: Any) -> bool:
    """Looks everywhere it is handed for the goal state; returns whether it found it."""
    seen = repr(vars(ctx)) + repr(vars(env)) + repr(input)
    return GOAL_NOTE in seen or hasattr(ctx, "case") or hasattr(ctx, "suite")


# Misbehaving agents for tests/test_faults.py: each must end as one errored run
# (or a passed one, for the well-behaved sync agent), never take the experiment down.

BLOCK_S = float(os.environ.get("PASSHAT_TEST_BLOCK", "3"))
RELEASE = threading.Event()
"""sync_blocks waits for it (BLOCK_S seconds at most): a test releases the agents it blocked."""
WOKE: list[int] = []
"""The run index of each sync_blocks agent that was released or whose wait ran out."""


def sync_perfect(input: Any, env: Any, ctx: Any) -> str:
    """A plain `def` agent: calls its tools through ctx.run, from a worker thread."""
    ctx.run(_write(env, GOAL_ANNOTATIONS, input["ticket"]["key"]))
    return "done in a thread"


def sync_blocks(input: Any, env: Any, ctx: Any) -> str:
    """Blocks its thread until RELEASE is set (BLOCK_S seconds at most), then writes the
    goal state."""
    RELEASE.wait(BLOCK_S)
    WOKE.append(ctx.run_index)
    ctx.run(_write(env, GOAL_ANNOTATIONS, input["ticket"]["key"]))
    return "late"


OVERRAN: list[str] = []
"""The name of each blocking agent or scorer below that got past its block (BLOCK_S
seconds) or returned: one the runner stopped, or left behind when the experiment
ended, never gets here. A test asserts its own name is absent, not that the list is
empty (a scorer released at the end of another test may add its name late)."""


async def async_blocks(input: Any, env: Any, ctx: Any) -> str:
    """Blocks the event loop (time.sleep in async code), then writes the goal state."""
    import time

    time.sleep(BLOCK_S)
    OVERRAN.append("async_blocks")
    await _write(env, GOAL_ANNOTATIONS, input["ticket"]["key"])
    return "late"


async def swallows_cancel(input: Any, env: Any, ctx: Any) -> str:
    """Ignores the runner's first cancel and waits BLOCK_S more (past the runner's 1 s
    for cleaning up: a second cancel ends it there), then writes the goal state."""
    try:
        await asyncio.sleep(BLOCK_S)
    except asyncio.CancelledError:
        await asyncio.sleep(BLOCK_S)
    OVERRAN.append("swallows_cancel")
    await _write(env, GOAL_ANNOTATIONS, input["ticket"]["key"])
    return "swallowed"


def blocking_score(final_state: Any, goal: Any) -> bool:
    """A custom scorer that blocks its thread until RELEASE is set (BLOCK_S seconds at
    most); a suite's scorer file imports it."""
    RELEASE.wait(BLOCK_S)
    OVERRAN.append("blocking_score")
    return True


async def exits(input: Any, env: Any, ctx: Any) -> str:
    import sys

    sys.exit(3)


def sync_exits(input: Any, env: Any, ctx: Any) -> str:
    import sys

    sys.exit(4)


async def raises_cancelled(input: Any, env: Any, ctx: Any) -> str:
    raise asyncio.CancelledError


class Odd(BaseException):
    """A BaseException that is not an Exception."""


async def raises_base(input: Any, env: Any, ctx: Any) -> str:
    raise Odd("not an Exception")


def sync_keyboard_interrupt(input: Any, env: Any, ctx: Any) -> str:
    raise KeyboardInterrupt


async def unencodable(input: Any, env: Any, ctx: Any) -> Any:
    """Output that JSON cannot hold, and tool arguments with a lone surrogate."""
    await env.call("update_ticket", {"key": "\ud83d", "goal": "g\ud83d", "annotations": []})
    loop: dict[str, Any] = {"bytes": b"\xff", "text": "half an emoji \ud83d"}
    loop["self"] = loop
    return loop


async def breaks_env(input: Any, env: Any, ctx: Any) -> str:
    """Leaves the environment in a state final_state() cannot read."""
    env._key = "no-such-ticket"
    return "broken"


async def flaky(input: Any, env: Any, ctx: Any) -> str:
    """Even runs hit a model outage while PASSHAT_TEST_DOWN=1; otherwise every run passes."""
    from passhat.errors import TransientModelError

    if os.environ.get("PASSHAT_TEST_DOWN") == "1" and ctx.run_index % 2 == 0:
        raise TransientModelError("connection failed: the model server is restarting")
    return await perfect(input, env, ctx)


async def shouts(input: Any, env: Any, ctx: Any) -> str:
    """Crashes with terminal escape sequences in its message."""
    raise RuntimeError("\x1b]0;pwned\x07\x1b[2Jgone")


async def blocks_loop(input: Any, env: Any, ctx: Any) -> str:
    """Blocks its event loop for PASSHAT_TEST_BLOCK seconds: no asyncio timeout can fire."""
    time.sleep(float(os.environ.get("PASSHAT_TEST_BLOCK", "3")))
    return await odd_runs_pass(input, env, ctx)


async def blocks_loop_on_run_2(input: Any, env: Any, ctx: Any) -> str:
    """Like odd_runs_pass, but run 2 blocks its event loop as blocks_loop does."""
    if ctx.run_index == 2:
        time.sleep(float(os.environ.get("PASSHAT_TEST_BLOCK", "3")))
    return await odd_runs_pass(input, env, ctx)


async def busy_50ms(input: Any, env: Any, ctx: Any) -> str:
    """CPU-bound: 50 ms of busy loop, then like odd_runs_pass."""
    end = time.perf_counter() + 0.05
    while time.perf_counter() < end:
        pass
    return await odd_runs_pass(input, env, ctx)


async def half_cards_vary(input: Any, env: Any, ctx: Any) -> str:
    """card-0 .. card-3 pass on odd run indices only; every other case passes every run:
    a baseline with undecided cases (its runs disagree) and settled ones."""
    if ctx.case_id in ("card-0", "card-1", "card-2", "card-3"):
        return await odd_runs_pass(input, env, ctx)
    return await perfect(input, env, ctx)


async def loops(input: Any, env: Any, ctx: Any) -> str:
    """Writes part of the goal, then asks the model again and again: only a limit stops it."""
    from passhat.models.base import Message

    await _write(env, GOAL_ANNOTATIONS[:1], input["ticket"]["key"])
    while True:
        await ctx.generate([Message("user", "again")], env.tools)


async def loops_past_refusals(input: Any, env: Any, ctx: Any) -> str:
    """Asks the model 20 times, swallowing every error (a limit's refusal included)."""
    from passhat.models.base import Message

    await _write(env, GOAL_ANNOTATIONS, input["ticket"]["key"])
    for _ in range(20):
        try:
            await ctx.generate([Message("user", "again")], env.tools)
        except Exception:
            continue
    return "done"


async def asks_then_crashes_when_told(input: Any, env: Any, ctx: Any) -> str:
    """Asks the model once, writes the goal, and crashes while $PASSHAT_TEST_CRASH is set:
    errored runs that used tokens, which `resume --errored` makes again."""
    from passhat.models.base import Message

    await ctx.generate([Message("user", "hi")], env.tools)
    await _write(env, GOAL_ANNOTATIONS, input["ticket"]["key"])
    if os.environ.get("PASSHAT_TEST_CRASH"):
        raise RuntimeError("told to crash")
    return "done"


async def asks_once(input: Any, env: Any, ctx: Any) -> str:
    """Asks the model once."""
    from passhat.models.base import Message

    await ctx.generate([Message("user", "hi")], env.tools)
    return "done"


async def signals_itself(input: Any, env: Any, ctx: Any) -> str:
    """Like odd_runs_pass; PASSHAT_TEST_SIGNAL=TERM sends passhat's own process SIGTERM
    as run 1's agent ends, =INT sends it SIGINT as run 2's agent starts: with one run at
    a time, either lands while run 1's last step waits for its turn (execution.
    run_once_then), asyncio's order of callbacks making the moment the same every time.
    =INT_END sends SIGINT as run 1's agent ends: the cancel lands before the run has
    taken its agent's result (execution._run_agent)."""
    kind = os.environ.get("PASSHAT_TEST_SIGNAL", "")
    if kind == "INT" and ctx.run_index == 2:
        os.kill(os.getpid(), signal.SIGINT)
    outcome = await odd_runs_pass(input, env, ctx)
    if kind in ("TERM", "INT_END") and ctx.run_index == 1:
        # INT_END: Python's handler (asyncio.Runner's) cancels at once, before the
        # agent's task has handed its result to the run waiting for it
        os.kill(os.getpid(), signal.SIGTERM if kind == "TERM" else signal.SIGINT)
    return outcome


class _SlowToSay(Exception):
    """An exception of the agent's whose text takes long to make (a repr of a big
    object), with its own kind: passhat's making of the run's failure runs its code."""

    error_type = "agent_error"

    def __str__(self) -> str:
        import time

        time.sleep(BLOCK_S)
        OVERRAN.append("raises_slow_to_say")
        return "said late"


async def raises_slow_to_say(input: Any, env: Any, ctx: Any) -> str:
    """Raises at once an exception whose text blocks the event loop (review54)."""
    raise _SlowToSay


async def swallows_every_cancel(input: Any, env: Any, ctx: Any) -> str:
    """Catches every cancel and waits again (a retry loop with a bare except): it never
    ends (review54)."""
    while True:
        with contextlib.suppress(BaseException):  # the misbehaviour under test
            await asyncio.sleep(BLOCK_S)


async def _swallows_forever() -> None:
    while True:
        with contextlib.suppress(BaseException):  # the misbehaviour under test
            await asyncio.sleep(BLOCK_S)


async def perfect_leaving_a_task(input: Any, env: Any, ctx: Any) -> str:
    """Passes, leaving behind a task of its own that catches every cancel (review55)."""
    asyncio.get_running_loop().create_task(_swallows_forever())
    return await perfect(input, env, ctx)


async def _closes_never() -> Any:
    try:
        yield 1
        yield 2
    finally:
        await _swallows_forever()  # its aclose() never ends


_KEPT: list[Any] = []


async def perfect_leaving_an_async_generator(input: Any, env: Any, ctx: Any) -> str:
    """Passes, leaving an async generator open whose aclose() never ends (review55)."""
    generator = _closes_never()
    await generator.__anext__()
    _KEPT.append(generator)
    return await perfect(input, env, ctx)


async def blocks_in_to_thread(input: Any, env: Any, ctx: Any) -> str:
    """Awaits a call that blocks for good in asyncio.to_thread, the loop's default
    executor (a sync library call with no timeout), past its deadline (review55)."""
    await asyncio.to_thread(threading.Event().wait)
    return "late"


class _ClaimsAKind(Exception):
    """An exception of the agent's own (or of a library it calls) that happens to carry
    an `error_type` text: here passhat's own kind (review55)."""

    error_type = "passhat_error"


async def raises_with_passhats_kind(input: Any, env: Any, ctx: Any) -> str:
    raise _ClaimsAKind("passhat failed running the agent (not the agent's doing): sure")
