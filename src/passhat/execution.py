"""One run, from a fresh start: the layer every executor calls.

    run_once     fresh environment and context, the agent under a timeout, grading
                 (run_once_then, the local executor's: grading handed back, to run later)
    the agent    (input, env, ctx) -> result

Whatever the agent does, `run_once` returns one record: errored is kept apart from
failed (a crash, a timeout or a model error after retries gives a run with no
verdict). The experiment above it (planning, executors, writing) is `passhat.runner`;
executors (`passhat.executors`) import this module and the runner imports them, so
the layers run one way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import inspect
import os
import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from passhat._leftovers import CLEANUP_S, IN_RUN, abandon, forget_abandoned
from passhat._stall import WATCHDOG, Deadline
from passhat.agents import LoadedAgent, RetryPolicy, RunContext
from passhat.agents.streams import PASSHATS_OWN, kind_of
from passhat.env import BUILTIN_ENVIRONMENTS, clone, make_environment
from passhat.errors import ModelError, StopRuns
from passhat.limits import LIMIT
from passhat.models.base import Model
from passhat.records import ExperimentRecord, RunRecord
from passhat.scoring import Score, ScorerError, grading, score_run, score_run_async
from passhat.suite import Case, Suite

if TYPE_CHECKING:
    from passhat.executors.base import Job
    from passhat.tamper import SuiteGuard


def harness_version() -> str:
    from passhat import __version__

    return __version__


@dataclass(frozen=True)
class RunOptions:
    """How runs are executed; none of it changes what a run means."""

    concurrency: int = 8
    """Runs in flight at once."""
    timeout_s: float = 300.0
    """Wall-clock limit of one run; past it the run is errored (timeout)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of transient model errors within a run."""


TRACEBACK_LIMIT = 8000
"""Characters of a crashed agent's traceback kept with its run (the middle is cut)."""


def agent_traceback(error: BaseException, limit: int = TRACEBACK_LIMIT) -> str:
    """The traceback of an agent's crash, from the agent's own first frame down.

    The frames of this module and of asyncio that led into the agent say nothing
    about the crash; they are dropped. A longer text keeps its head and its tail
    (the innermost frames and the message), so a deep recursion cannot bloat the store."""
    summary = traceback.TracebackException.from_exception(error)
    frames = list(summary.stack)
    asyncio_dir = os.path.dirname(asyncio.__file__)
    while frames and (frames[0].filename == __file__ or frames[0].filename.startswith(asyncio_dir)):
        frames.pop(0)
    summary.stack = traceback.StackSummary.from_list(frames)
    text = "".join(summary.format())
    if len(text) <= limit:
        return text
    head = limit // 4
    cut = f"\n... {len(text) - limit:,} characters cut ...\n"
    return text[:head] + cut + text[len(text) - (limit - head) :]


def run_seed(experiment_seed: int, case_id: str, index: int) -> int:
    """A per-run seed derived from the experiment seed, the case and the index."""
    digest = hashlib.sha256(f"{experiment_seed}:{case_id}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


async def run_once(
    experiment: ExperimentRecord,
    suite: Suite,
    case: Case,
    index: int,
    agent: LoadedAgent,
    model: Model | None,
    options: RunOptions,
    attempt: int = 1,
    *,
    guard: SuiteGuard | None = None,
) -> RunRecord:
    """One run from a fresh start: environment, conversation, agent, grading.

    `guard`: the experiment's watch on its suite's files (`Job.guard`); without it, the
    guard of the experiment running in this context, or on this suite (`tamper.current`).

    Whatever the agent does, this returns one record: a crash, `sys.exit`, a
    `CancelledError` of its own, a broken environment or a run past its deadline
    make an errored run. The record of a run past its deadline is made at the
    deadline; what the agent does later is discarded. Only `StopRuns` (passhat cannot
    run as it should: its own limits lowered under it) is raised, to stop the experiment.
    """
    ran = _Ran(experiment, suite, case, index, options, attempt, guard)
    return await _finish(await _run(ran, agent, model))


async def run_once_then(job: Job, case: Case, index: int) -> RunRecord | Callable[[], RunRecord]:
    """`run_once`, its last step (final state, the suite's look, grading, the record)
    given back to call later when nothing in it waits (a built-in environment, scorers
    that only read): the local executor starts the slot's next run first. 50 agents'
    timers share one loop; grading each run as its agent ended held the next runs back."""
    attempt = job.attempt((case.id, index))
    ran = _Ran(job.experiment, job.suite, case, index, job.options, attempt, job.guard)
    waits = _user_world(job.suite) or grading(job.suite) != "reads"
    try:
        await _run(ran, job.agent, job.model)
    except Returned as stop:  # its last step goes with the stop (`bounded` keeps the run)
        ran.paused = time.perf_counter()  # (unset, the run was stored minus the clock long)
        stop.last_step = None if waits else functools.partial(_finish_now, ran)
        raise
    if waits:
        return await _finish(ran)
    ran.paused = time.perf_counter()
    return functools.partial(_finish_now, ran)


class Returned(asyncio.CancelledError):
    """A stop (Ctrl-C, SIGTERM, a cancel) that landed after the run's agent returned, before
    the run took its `outcome`; `last_step` makes the run's record when that step waits for
    nothing (`run_once_then`; `bounded` keeps the record). A run whose last step waits (a
    user's environment, scorers that search or wait) stays missing, as runs in flight do."""

    def __init__(self, outcome: tuple[Any, Failure | None]) -> None:
        super().__init__()
        self.outcome = outcome
        self.last_step: Callable[[], RunRecord] | None = None


@dataclass(slots=True)
class _Ran:
    """A run: what it is given, then what its last step (`_finish`) needs."""

    experiment: ExperimentRecord
    suite: Suite
    case: Case
    index: int
    options: RunOptions
    attempt: int
    guard: SuiteGuard | None
    started: float = 0.0
    clock: float = 0.0
    env: Any = None
    error: Failure | None = None
    ctx: RunContext = field(init=False)
    output: Any = None
    limit: str | None = None
    paused: float = 0.0


async def _run(ran: _Ran, agent: LoadedAgent, model: Model | None) -> _Ran:
    """A fresh environment and context, and the agent under its deadline."""
    experiment, suite, case, index = ran.experiment, ran.suite, ran.case, ran.index
    ran.started, ran.clock = time.time(), time.perf_counter()
    ran.env, ran.error = await _start_environment(suite, case, ran.options.timeout_s)
    ran.ctx = ctx = RunContext(
        case_id=case.id,
        run_index=index,
        seed=run_seed(experiment.seed, case.id, index),
        model=model,
        labels=suite.labels,
        max_turns=int(experiment.params.get("max_turns", suite.defaults.max_turns)),
        params=clone(experiment.params),
        retry=ran.options.retry,
        loop=asyncio.get_running_loop(),
    )
    if ran.env is not None:
        timeout_s = ran.options.timeout_s
        try:
            output, error = await _run_agent(agent, case.input, ran.env, ctx, timeout_s)  # a copy
        except Returned as stop:  # its last step may still make the record
            output, error = stop.outcome
            ran.output, (ran.limit, ran.error) = output, _limit_of(ctx, error)
            raise
        ran.output = output
        ran.limit, ran.error = _limit_of(ctx, error)
    return ran


def _finish_now(ran: _Ran) -> RunRecord:
    """`_finish`, run through at once: nothing in it waits (`run_once_then`)."""
    ran.clock += time.perf_counter() - ran.paused  # waiting for its turn is not the run's
    finishing = _finish(ran)
    try:
        finishing.send(None)
    except StopIteration as finished:
        record: RunRecord = finished.value
        return record
    finishing.close()
    raise RuntimeError("a run's last step waited, where it only reads the state")


async def _finish(ran: _Ran) -> RunRecord:
    """The final state, the suite's look and grading; the run's record."""
    suite, case, env, ctx, options = ran.suite, ran.case, ran.env, ran.ctx, ran.options
    final_state: dict[str, Any] = {}
    error = ran.error
    if env is not None:
        left = options.timeout_s - (time.perf_counter() - ran.clock)
        final_state, state_error = await _end_environment(env, left)
        error = error or state_error
    details: list[dict[str, Any]] = []
    status = "errored"
    if error is None:
        left = options.timeout_s - (time.perf_counter() - ran.clock)
        reason = _changed(ran.guard, suite, case)
        if reason is not None:
            score, error = None, ("suite_changed", reason)
        else:
            how = {"run_index": ran.index, "seed": ctx.seed}
            score, error = await _grade(suite, case, final_state, left, options.timeout_s, **how)
        if score is not None:
            details = score.details
            status = "passed" if score.passed else "failed"
            error = (LIMIT, ran.limit) if ran.limit is not None else None
    record = RunRecord(
        experiment_id=ran.experiment.id,
        case_id=case.id,
        run_index=ran.index,
        case_hash=case.hash,
        status=status,  # type: ignore[arg-type]
        error_type=error[0] if error else None,
        error_message=error[1] if error else None,
        output=ran.output,
        final_state=final_state,
        score=details,
        transcript=_transcript(ctx),
        tool_calls=[c.to_dict() for c in list(env.calls)] if env is not None else [],
        started_at=ran.started,
        duration_s=time.perf_counter() - ran.clock,
        input_tokens=ctx.usage.input_tokens,
        output_tokens=ctx.usage.output_tokens,
        seed=ctx.seed,
        retries=list(ctx.retries),
        model_source=ctx.model_source(),
        stderr=ctx.stderr,
        attempt=ran.attempt,
        traceback=ctx.crash,
    )
    release = getattr(env, "_release", None)  # freed now, not by the cyclic collector
    if release is not None:
        release()
    return record


Failure = tuple[str, str]
"""(error type, message) of an errored run."""


def _limit_of(ctx: RunContext, error: Failure | None) -> tuple[str | None, Failure | None]:
    """(why a limit stopped the run, the failure left): a run stopped by --max-turns or
    --token-budget is the agent's result and is graded, whether the agent ended on the
    refusal (an in-process agent raised it, a command agent's proxy answered 403) or
    went on without the model; any other failure leaves the run errored."""
    if error is not None and error[0] == LIMIT:
        return ctx.limit or error[1], None
    if error is None and ctx.limit is not None:
        return ctx.limit, None
    return None, error


async def _run_agent(
    agent: LoadedAgent, input: Any, env: Any, ctx: RunContext, timeout_s: float
) -> tuple[Any, Failure | None]:
    """The agent's output, or why the run errored; never raises but for our own cancel.

    The agent runs in a task of its own, waited for until the deadline: an agent
    that swallows the cancel, or a plain `def` agent blocking its worker thread,
    is left behind and its late result discarded.
    """
    clock, loop = time.perf_counter(), asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()
    returned: list[tuple[bool, Any]] = []  # a sync agent's, as its thread ends (in_thread)
    task = asyncio.ensure_future(_invoke_telling(ended, agent.agent, input, env, ctx, returned))
    guard = WATCHDOG.get()
    if guard is not None:
        guard.watch(task, time.monotonic() + timeout_s)
    deadline = loop.call_later(timeout_s, _tell, ended)
    try:
        await ended
    except asyncio.CancelledError:  # Ctrl-C or SIGTERM: the run stays missing...
        if task.done() and not task.cancelled() and task.exception() is None:
            outcome = _in_time(task.result(), clock, timeout_s)  # ...but for one whose
            raise Returned(outcome) from None  # agent had returned (run_once_then)
        if returned:  # a sync agent's thread returned; the loop had not yet handed it over
            abandon(task)  # its outcome is taken here, once: the task's is dropped
            outcome = _in_time(_thread_outcome(returned[0], ctx), clock, timeout_s)
            raise Returned(outcome) from None
        ctx.given_up = True
        abandon(task)
        raise
    finally:
        deadline.cancel()
    late = f"the run did not finish within {timeout_s:g} s"
    if not task.done():  # the deadline came first
        ctx.given_up = True  # no model call starts now: its record is being made
        task.cancel()
        # a moment to clean up after the cancel (a command agent kills its process group
        # and keeps its stderr); one that ignores it is left behind
        await asyncio.wait({task}, timeout=CLEANUP_S)
        if not task.done():
            abandon(task, 0.0)  # it had its moment
        else:
            forget_abandoned(task)
            own = _look_failed(task, timeout_s)
            if own is not None:
                return None, own
        return None, ("timeout", late)
    if not task.cancelled() and isinstance(task.exception(), Deadline):
        # the watchdog's stop landed in passhat's own making of the agent's failure
        # (str() of its exception runs its code, which blocked the loop): not a crash
        return None, _STOPPED
    return _in_time(task.result(), clock, timeout_s)


def _in_time(
    outcome: tuple[Any, Failure | None], clock: float, timeout_s: float
) -> tuple[Any, Failure | None]:
    """The agent's outcome; a timeout for an async agent that blocked the event loop past
    its deadline (`clock` its start): its answer came too late to count."""
    if outcome[1] is None and time.perf_counter() - clock > timeout_s:
        late = f"the run did not finish within {timeout_s:g} s"
        return None, ("timeout", late + " (it blocked the event loop; see README: sync code)")
    return outcome


def _look_failed(
    task: asyncio.Future[tuple[Any, Failure | None]], timeout_s: float
) -> Failure | None:
    """What a run stopped at its deadline ended in when passhat's own part of it was
    under way (its look for answers: agents/lookout.in_time): `isolation`, which names
    passhat, or `agent_left` where the look was in what an earlier run of the agent left
    (LookStopped.left_in), not `timeout`, which reads as this run's agent too slow; and
    `passhat_error` where passhat's own part failed as it stopped the run (its cleanup:
    agents/streams.passhats_own), said beside the deadline, not hidden behind it."""
    if task.cancelled() or task.exception() is not None:
        return None
    _, failure = task.result()
    if failure is not None and failure[0] == PASSHATS_OWN:
        at = f" (as it stopped the run at its deadline, {timeout_s:g} s)"
        return (PASSHATS_OWN, failure[1] + at)
    return failure if failure is not None and failure[0] in ("isolation", "agent_left") else None


async def _invoke_telling(
    ended: asyncio.Future[None],
    fn: Any,
    input: Any,
    env: Any,
    ctx: RunContext,
    returned: list[tuple[bool, Any]],
) -> tuple[Any, Failure | None]:
    """`_invoke`, telling `ended` as its task's last step ends: the run waiting on it
    goes on in the loop's next turn, not one turn later (a task's done callbacks are
    called a turn after it ends, and the run's wake-up a turn after them). With 50
    agents' timers on one loop, each turn between a run's end and the start of its
    slot's next run is a wait behind the other runs' work."""
    try:
        return await _invoke(fn, input, env, ctx, returned)
    finally:
        _tell(ended)


def _tell(ended: asyncio.Future[None]) -> None:
    """Wake the run waiting on its agent (its agent's task ended, or its deadline came)."""
    if not ended.done():
        ended.set_result(None)


async def _invoke(
    fn: Any, input: Any, env: Any, ctx: RunContext, returned: list[tuple[bool, Any]] | None = None
) -> tuple[Any, Failure | None]:
    """Call the agent; every way it can end becomes (output, None) or (None, failure).
    A sync agent's thread also puts how it ended in `returned` as it ends (in_thread).

    A task must never end in SystemExit or KeyboardInterrupt: asyncio re-raises
    those out of the event loop and the whole experiment would stop.
    """
    IN_RUN.set(True)  # in this task: the tasks the agent makes are its run's
    try:
        if _is_async(fn):
            return await fn(input, env, ctx), None
        return await in_thread(fn, input, env, ctx, ended=returned), None
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # cancelled by the runner (deadline) or by Ctrl-C
        return None, _RAISED_CANCEL
    except KeyboardInterrupt:
        raise  # on the event loop's thread this is the user's Ctrl-C (threads wrap theirs)
    except Deadline:
        return None, _STOPPED
    except StopRuns:
        raise  # passhat can run no more runs as it should: the experiment stops
    except BaseException as exc:  # the agent under test crashed: record it, keep going
        return None, _crashed(exc, ctx)


_RAISED_CANCEL = ("agent_error", "CancelledError: the agent raised asyncio.CancelledError")
_STOPPED = (
    "timeout",
    "the run blocked the event loop past its deadline and was stopped there (see README: "
    "sync code)",
)
"""The failure of a run the watchdog stopped (`_stall.Deadline`)."""


def _crashed(exc: BaseException, ctx: RunContext) -> Failure:
    """The failure of an agent that raised `exc`; an in-process one's traceback kept."""
    crashed = exc.inner if isinstance(exc, _ThreadExit) else exc
    failure = _agent_failure(crashed)  # first: the traceback's str() swallows a Deadline
    if kind_of(crashed) is None and not isinstance(crashed, ModelError):
        # an in-process agent crashed: where, exactly (a command agent's own
        # failures carry their kind and stderr instead, passhat's frames say nothing)
        ctx.crash = agent_traceback(crashed)
    return failure


def _thread_outcome(ended: tuple[bool, Any], ctx: RunContext) -> tuple[Any, Failure | None]:
    """What `_invoke` makes of a sync agent's thread that ended so (in_thread's outcome),
    taken before the loop handed it over (a stop landed first: _run_agent)."""
    ok, value = ended
    if ok:
        return value, None
    if isinstance(value, asyncio.CancelledError):
        return None, _RAISED_CANCEL
    return None, _crashed(value, ctx)


def _agent_failure(exc: BaseException) -> Failure:
    kind = kind_of(exc)
    if isinstance(exc, Exception) and kind is not None:
        # a command agent's failures say which kind they are (agent_exit, agent_output...)
        return (kind, _text(exc))
    if isinstance(exc, ModelError):
        return ("model_error", f"{type(exc).__name__}: {_text(exc)}")
    if isinstance(exc, SystemExit):
        return ("agent_error", f"SystemExit: the agent called sys.exit({exc.code!r})")
    return ("agent_error", f"{type(exc).__name__}: {_text(exc)}")


def _is_async(fn: Any) -> bool:
    target = fn if inspect.isfunction(fn) else getattr(fn, "__call__", fn)  # noqa: B004
    return inspect.iscoroutinefunction(target)


GRADE_FLOOR_S = 0.1
"""Seconds grading always gets, even when the agent finished at its deadline."""


async def in_thread(
    fn: Callable[..., Any], *args: Any, ended: list[tuple[bool, Any]] | None = None
) -> Any:
    """`fn(*args)` in a daemon thread of its own, awaited without blocking the loop.
    `ended` gets (True, its result) or (False, what it raised) as the thread ends, before
    the loop's next turn hands that over: a stop landing in between still finds it.

    Not `asyncio.to_thread`: its pool is joined when the loop closes, so one agent
    blocked forever would keep passhat from exiting. A daemon thread is left behind.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def target() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # handed to the awaiting run, which classifies it
            outcome = (False, exc)
        if ended is not None:
            ended.append(outcome)
        # a closed loop (RuntimeError): the run was given up long ago
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, future, outcome)

    threading.Thread(target=target, name="passhat-sync", daemon=True).start()
    return await future


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    elif isinstance(value, (SystemExit, KeyboardInterrupt)):
        # a Future holding these would re-raise them out of the loop: wrap them
        future.set_exception(_ThreadExit(value))
    else:
        future.set_exception(value)


class _ThreadExit(Exception):
    """SystemExit or KeyboardInterrupt raised in a worker thread, carried as data."""

    def __init__(self, inner: BaseException) -> None:
        super().__init__(inner)
        self.inner = inner


def _user_world(suite: Suite) -> bool:
    """A user's environment class (its setup, final_state and close may raise, exit or
    block: they run in the run's `WorldThread`, bounded by the run's deadline)."""
    return suite.environment not in BUILTIN_ENVIRONMENTS


def _env_failure(what: str, exc: BaseException) -> Failure:
    inner = exc.inner if isinstance(exc, _ThreadExit) else exc
    if isinstance(inner, SystemExit):
        return ("environment_error", f"{what} called sys.exit({inner.code!r})")
    return ("environment_error", f"{what} raised {type(inner).__name__}: {_text(inner)}")


_Job = tuple[Callable[[], Any], Callable[[tuple[bool, Any]], None]]
"""A call for the world's thread, and what to do with its outcome."""


class WorldThread:
    """One daemon thread that does everything a user's environment does in one run:
    setup(), every plain (not async) tool handler, final_state() and close().

    A world may hold what belongs to the thread that made it (a `sqlite3` connection
    refuses any other thread): setup in one worker thread and tools on the event
    loop broke the sql example. In a thread of its own, a blocking setup() or close()
    is still bounded by the run's deadline, and a blocking tool no longer stops the
    event loop. The thread ends when the run is done with it (`stop`), or is left
    behind, blocked, when the world never returns.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="passhat-world", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, done = job
            try:
                outcome: tuple[bool, Any] = (True, fn())
            except BaseException as exc:  # handed to the awaiting run, which classifies it
                outcome = (False, exc)
            done(outcome)

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)` in the world's thread, awaited without blocking the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def done(outcome: tuple[bool, Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the run is long gone
                loop.call_soon_threadsafe(_settle, future, outcome)

        self._jobs.put((functools.partial(fn, *args, **kwargs), done))
        return await future

    def stop(self) -> None:
        """End the thread once the jobs before this one are done."""
        self._jobs.put(None)


async def _start_environment(
    suite: Suite, case: Case, timeout_s: float
) -> tuple[Any, Failure | None]:
    """The run's fresh environment, or why there is none: a user's setup() that raises,
    calls sys.exit or blocks past the deadline errors this run, not the experiment.
    A user's world lives in a `WorldThread` of its own (`env.world`)."""
    world: WorldThread | None = None
    try:
        if not _user_world(suite):
            return make_environment(suite, case), None
        world = WorldThread()
        pending = world.run(make_environment, suite, case)
        env = await asyncio.wait_for(pending, max(timeout_s, GRADE_FLOOR_S))
        env._passhat_world = world  # its tool handlers run there too (Environment._dispatch)
        return env, None
    except TimeoutError:
        if world is not None:
            world.stop()  # ends once the blocked setup() returns, if ever
        return None, ("timeout", f"the environment's setup() did not finish within {timeout_s:g} s")
    except Exception as exc:
        if world is not None:
            world.stop()
        return None, _env_failure("setup()", exc)


async def _end_environment(env: Any, left_s: float) -> tuple[dict[str, Any], Failure | None]:
    """final_state() then close(): a user's world in its own thread, after its last tool
    call, within what is left of the deadline (`WorldThread`); a built-in one inline."""
    world = env._passhat_world
    if world is None:
        return _final_state(env)
    try:
        result: tuple[dict[str, Any], Failure | None] = await asyncio.wait_for(
            world.run(_final_state, env), max(left_s, GRADE_FLOOR_S)
        )
        return result
    except TimeoutError:
        return {}, ("timeout", "the environment's final_state() or close() did not finish in time")
    except _ThreadExit as exc:
        return {}, _env_failure("final_state() or close()", exc)
    finally:
        world.stop()  # a thread still blocked in the world ends when that call returns


def _final_state(env: Any) -> tuple[dict[str, Any], Failure | None]:
    """The environment's final state, then its close(); a broken one errors the run
    instead of the experiment."""
    try:
        state = env.final_state()
    except (Exception, SystemExit) as exc:
        _close(env)
        return {}, _env_failure("final_state()", exc)
    failure = _close(env)
    if failure is not None:
        return {}, failure
    if not isinstance(state, dict):
        return {}, (
            "environment_error",
            f"final_state() returned {type(state).__name__}, not a dict",
        )
    return state, None


def _close(env: Any) -> Failure | None:
    """A user environment's close(): what it raised, or None."""
    close = getattr(env, "close", None)
    if close is None:
        return None
    try:
        close()
    except (Exception, SystemExit) as exc:
        return _env_failure("close()", exc)
    return None


def _changed(guard: SuiteGuard | None, suite: Suite, case: Case) -> str | None:
    """Why the run is not graded: a suite whose files changed since the experiment loaded
    it grades nothing (tamper.py)."""
    from passhat import tamper

    found = guard if guard is not None else tamper.current(suite)
    return tamper.changed(found, case.file_text)


async def _grade(
    suite: Suite,
    case: Case,
    final_state: dict[str, Any],
    left_s: float,
    timeout_s: float,
    *,
    run_index: int,
    seed: int,
) -> tuple[Score | None, Failure | None]:
    """Grade the final state within the deadline: a user's scorer runs in a worker
    thread (it may block); a judge's model call on the loop; the built-in ones on the
    loop, or in a thread when a `matches` pattern searches the agent's text."""
    try:
        how = grading(suite)
        grade = functools.partial(score_run, run_index=run_index, seed=seed)
        if how == "reads":
            # built-in scorers only read the state, in linear time: no task, no timer
            return grade(suite, case, final_state), None
        if how == "searches":
            # a pattern over the agent's text: bounded by its own MATCH_TIMEOUT_S, not the
            # run's deadline (a search out of time fails the run, it is not errored), in a
            # thread, the GIL released, so every other run's timers go on
            return await in_thread(grade, suite, case, final_state), None
        if how == "waits":
            pending = score_run_async(suite, case, final_state, run_index=run_index, seed=seed)
        else:
            pending = in_thread(grade, suite, case, final_state)
        # at least a moment: on 3.11 a zero wait cancels even an instant built-in scorer
        return await asyncio.wait_for(pending, max(left_s, GRADE_FLOOR_S)), None
    except TimeoutError:
        return None, ("timeout", f"the run did not finish within {timeout_s:g} s (scoring)")
    except ScorerError as exc:
        return None, ("scorer_error", str(exc))
    except _ThreadExit as exc:
        return None, ("scorer_error", f"a scorer raised {type(exc.inner).__name__}")


def _transcript(ctx: RunContext) -> list[dict[str, Any]]:
    try:
        return ctx.transcript_dicts()
    except Exception as exc:  # an agent put something odd in ctx.transcript
        return [{"role": "system", "content": f"(transcript unreadable: {_text(exc)})"}]


def _text(exc: BaseException) -> str:
    """str(exc), even for an exception whose __str__ raises."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} with an unprintable message>"
