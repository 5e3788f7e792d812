"""The rounds: one, or adaptive ones, each on an event loop of its own (a thread's when the
caller's loop runs); the runner makes the missing runs, SIGTERM ends a round as Ctrl-C
does.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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
        _on_own_loop(lambda: _go(setup, experiment, rerun_errored, terminated))
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


def _on_own_loop(main: Callable[[], Any]) -> None:
    """asyncio.run(main()) here, or in a thread when this thread's loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False  # (not run in here: the agents' tracebacks would chain this error)
    else:
        running = True
    if not running:
        asyncio.run(main())
        return
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as error:  # carried to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=target, name="passhat-evaluate")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


async def _go(
    setup: _Setup, experiment: ExperimentRecord, rerun_errored: bool, terminated: list[int]
) -> None:
    from passhat.runner import run_experiment

    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if main is not None:
        # SIGTERM (a container stop, `kill`) ends the run like Ctrl-C does
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, _terminate, main, terminated)
    try:
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
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)
        close = getattr(setup.model, "aclose", None)
        if close is not None:
            await close()


def _terminate(main: asyncio.Task[None], terminated: list[int]) -> None:
    terminated.append(signal.SIGTERM)
    main.cancel()
