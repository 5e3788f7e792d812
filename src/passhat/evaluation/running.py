"""The rounds: one, or adaptive ones, each on an event loop of its own (on a thread of
passhat's own when the caller's loop runs, or when the round starts sandboxed runs: the
thread that starts them leaves its session keyring for good); the runner makes the
missing runs, SIGTERM ends a round as Ctrl-C does.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any

from passhat import _orphans as orphans
from passhat.agents import own_limits
from passhat.evaluation.events import Interrupted
from passhat.evaluation.planning import _Setup
from passhat.records import ExperimentRecord
from passhat.results import Experiment, Outcome
from passhat.store import Store

if TYPE_CHECKING:
    from passhat.adaptive import Adaptive
    from passhat.gate import Requirement
    from passhat.rounds import Rounds


def _read_back(store: Store, experiment: ExperimentRecord, outcome: Outcome) -> Experiment:
    return Experiment(store.path, store.experiment(experiment.id), outcome)


# --- rounds


def _make_runs(
    setup: _Setup,
    experiment: ExperimentRecord,
    adaptive: Rounds | None,
    planned: int,
    *,
    rerun_errored: bool = False,
    rules: tuple[Requirement, ...] = (),
    baseline: _Setup | None = None,
) -> Experiment:
    """What `evaluate` and `resume` share once the experiment is stored: the rounds, then
    the experiment read back with what the call did (`planned`: its first round's runs)
    and the requirements it is gated on. `baseline`: the baseline's runs, when the
    rounds re-run it alongside."""
    try:
        experiment, rounds = _rounds(
            setup, experiment, adaptive, rerun_errored=rerun_errored, baseline=baseline
        )
    finally:  # the suite's guards (their threads) end with the experiment
        orphans.finish()  # and what its command runs left running (a setsid daemon)
        own_limits.forget()  # the next experiment takes passhat's limits anew
        for guarded in (setup, baseline):
            if guarded is not None and guarded.guard is not None:
                guarded.guard.close()
    outcome = Outcome(planned, rounds, tuple(setup.left), rules)
    return _read_back(setup.store, experiment, outcome)


def _rounds(
    setup: _Setup,
    experiment: ExperimentRecord,
    adaptive: Rounds | None,
    *,
    rerun_errored: bool = False,
    baseline: _Setup | None = None,
) -> tuple[ExperimentRecord, Adaptive | None]:
    """The missing runs once, or round by round under an adaptive rule (k may grow);
    errored runs are run again (resume's `errored`) in the first round only."""
    rounds_run: list[int] = []

    def execute(current: ExperimentRecord) -> None:
        again = rerun_errored and not rounds_run
        rounds_run.append(1)
        _round(setup, current, rerun_errored=again)

    if adaptive is None:
        execute(experiment)
        return experiment, None

    def execute_baseline(current: ExperimentRecord) -> None:
        assert baseline is not None
        _round(baseline, current, rerun_errored=False)

    # the rules' modules (and the statistics they pull in) only for an adaptive experiment
    from passhat.rounds import adapt

    again = None if baseline is None else execute_baseline
    return adapt(setup.store, experiment, adaptive, execute, again, setup.events.rounds_planned)


def _round(setup: _Setup, experiment: ExperimentRecord, *, rerun_errored: bool) -> None:
    """One round on an event loop of its own (in a worker thread when this thread
    already runs one: a notebook's)."""
    from passhat.runner import pending

    todo = len(pending(setup.store, experiment, rerun_errored=rerun_errored)[0])
    setup.events.round_started(experiment, todo)
    terminated: list[int] = []
    try:
        go = functools.partial(_go, setup, experiment, rerun_errored, terminated)
        _on_own_loop(go, terminated, apart=_seals_runs(setup, experiment))
    except (KeyboardInterrupt, asyncio.CancelledError):
        recorded = setup.store.recorded_total(experiment.id)
        signum = signal.SIGTERM if terminated else signal.SIGINT
        raise Interrupted(experiment, recorded, signum) from None
    finally:
        setup.events.round_ended(experiment)
    left = list(getattr(setup.executor, "left_missing", None) or [])
    if left:
        setup.left.extend(left)
        setup.events.left_missing(left)
    refused = getattr(setup.executor, "refused", None)
    if isinstance(refused, dict) and refused:
        setup.events.workers_refused([str(why) for why in refused.values()])


def _seals_runs(setup: _Setup, experiment: ExperimentRecord) -> bool:
    """Whether this process starts the round's runs sealed from its session keyring (a
    command agent at --isolation namespace, run here): the thread that starts them joins
    a keyring of its own for good (sandbox.seal_keyring), so it must be passhat's, not the
    caller's (a script's or a notebook's, whose keys would be gone for it after)."""
    from passhat.agents.isolation import DEFAULT
    from passhat.executors.base import checks_isolation

    command = getattr(setup.agent.agent, "check_view", None) is not None
    level = experiment.params.get("isolation", DEFAULT)
    return command and level == "namespace" and not checks_isolation(setup.executor)


def _on_own_loop(
    main: Callable[[], Coroutine[Any, Any, None]], terminated: list[int], *, apart: bool = False
) -> None:
    """asyncio.run(main()) here, or on a thread of passhat's own when this thread's loop
    is running or `apart` asks for one. Ctrl-C and SIGTERM, which reach this (the main)
    thread, then end the round as on the loop's own thread: its task is cancelled, the
    runs in flight stopped, those finished written. (_leftovers.run_loop, not asyncio.run:
    the loop closes leaving behind abandoned runs that never end.)"""
    from passhat._leftovers import run_loop

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False  # (not run in here: the agents' tracebacks would chain this error)
    else:
        running = True
    if not running and not apart:
        run_loop(main())
        return
    failure: list[BaseException] = []
    held: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    stopping = threading.Event()
    finished = threading.Event()

    async def top() -> None:
        task = asyncio.current_task()
        assert task is not None
        held.append((asyncio.get_running_loop(), task))
        if stopping.is_set():  # stopped before the loop was up
            raise asyncio.CancelledError
        await main()

    def target() -> None:
        try:
            run_loop(top())
        except BaseException as error:  # carried to the caller's thread
            failure.append(error)
        finally:
            finished.set()

    def stop(signum: int) -> None:
        if signum == signal.SIGTERM:
            terminated.append(signum)
        stopping.set()
        for loop, task in held:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(task.cancel)

    thread = threading.Thread(target=target, name="passhat-evaluate")
    with _sigterm_to(stop):
        thread.start()
        # an Event, not thread.join(): a join that Ctrl-C interrupts marks the thread
        # ended while it runs on (Python 3.11's threading, bpo-45274), so every later join
        # returned at once: the caller counted the runs, and the process could exit,
        # while the round still stopped its runs and wrote those finished
        try:
            finished.wait()
        except KeyboardInterrupt:
            stop(signal.SIGINT)
            try:
                finished.wait()
            except KeyboardInterrupt:  # a second Ctrl-C cancels again and still waits,
                stop(signal.SIGINT)  # as asyncio.run does
                finished.wait()
            thread.join()
            raise
        thread.join()
    if failure:
        raise failure[0]
    if stopping.is_set():  # a SIGTERM taken as the loop shut down, its task done: told
        raise asyncio.CancelledError


@contextlib.contextmanager
def _sigterm_to(stop: Callable[[int], None]) -> Iterator[None]:
    """SIGTERM calls `stop` while the block runs, when this is the main thread (only it
    may set a handler) and the caller's handler is one Python can put back; elsewhere
    SIGTERM does what it did. A handler set outside Python (by a C library, or a program
    that embeds Python) is None to `signal`, which cannot set it again: it is left in
    place, to decide what SIGTERM does during the round too, rather than taken and
    SIG_DFL left after it."""
    if signal.getsignal(signal.SIGTERM) is None:
        yield
        return
    try:
        before = signal.signal(signal.SIGTERM, lambda signum, frame: stop(signum))
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextlib.contextmanager
def _sigterm_cancels(main: asyncio.Task[None] | None, terminated: list[int]) -> Iterator[None]:
    """SIGTERM (a container stop, `kill`) ends the round like Ctrl-C does, when the loop
    runs on the main thread; the caller's handler is set again after (asyncio's
    remove_signal_handler sets SIG_DFL, which lost it)."""
    before = signal.getsignal(signal.SIGTERM)
    if main is None or before is None:  # None: set outside Python, as in _sigterm_to
        yield
        return
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGTERM, _terminate, main, terminated)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, before)


async def _go(
    setup: _Setup, experiment: ExperimentRecord, rerun_errored: bool, terminated: list[int]
) -> None:
    from passhat.runner import run_experiment

    try:
        with _sigterm_cancels(asyncio.current_task(), terminated):
            await run_experiment(
                setup.store,
                experiment,
                setup.suite,
                setup.agent,
                setup.model,
                setup.options,
                setup.events.recorded,
                executor=setup.executor,
                rerun_errored=rerun_errored,
                guard=setup.guard,
            )
    finally:
        close = getattr(setup.model, "aclose", None)
        if close is not None:
            await close()


def _terminate(main: asyncio.Task[None], terminated: list[int]) -> None:
    terminated.append(signal.SIGTERM)
    main.cancel()
