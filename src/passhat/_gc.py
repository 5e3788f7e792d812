"""Pause the cyclic garbage collector while a report builds many small objects, and
space its collections out while an experiment's runs are in flight (`gc_spaced`).

A report of 100,000 runs or a million verdicts allocates a few hundred thousand
dicts, tuples and records that all stay alive until it is printed. CPython's
cyclic collector is triggered by allocations, and each full collection walks
every live container: measured, that was a third of `passhat metrics --json`.
Those objects form no reference cycles (reference counting frees them), so the
collector is paused for the duration and restored afterwards.

Pauses nest and may come from several threads: the collector is switched off by
the first pause and back on by the last one to end, and only if it was on before.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (reference counting still frees memory)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                _settle()
                gc.enable()


_set_aside = False
"""Set by `set_aside_for_good`: the process froze its start-up for good (passhat's own
command)."""


def set_aside_for_good() -> None:
    """`gc.freeze()` for the life of the process (passhat.cli.set_aside_start_up: what
    the `passhat` command's start-up built), remembered so that `nothing_frozen` need
    not ask the collector again."""
    global _set_aside
    gc.freeze()
    _set_aside = True


def nothing_frozen() -> bool:
    """Whether no object is frozen (`gc.freeze`), so that a freeze here may be undone
    by an unfreeze. `gc.get_freeze_count()` walks every frozen object, one cache miss
    each: after `passhat run`'s start-up (40,000 objects) 1 to 5 ms a call, and a run
    asked six times (the runs' `gc_spaced`, each of the end report's pauses). Once the
    start-up is set aside the answer is no, without the walk. (Were a user's code to
    thaw it with `gc.unfreeze()`, the answer stays no: pauses would not settle, runs
    would not set the heap aside, nothing else.)"""
    return not _set_aside and gc.get_freeze_count() == 0


def _settle() -> None:
    """Count what the pause built as old, not young. Every container allocated in the
    pause counts toward the youngest generation, so the first allocation after it would
    walk them all (400,000 objects of a 100,000-run report: ~50 ms), then again as
    they age. Freezing and unfreezing (two list splices, no walk) moves every tracked
    object to the oldest generation with the counts reset: the next full collection
    still sees them, and frees any cycle among them. Left alone when the program froze
    objects itself (e.g. before forking): unfreezing would thaw those too."""
    if nothing_frozen():
        gc.freeze()
        gc.unfreeze()


def without_gc(function: Callable[P, R]) -> Callable[P, R]:
    """Decorate a function that builds many objects: it runs inside `gc_paused`."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return function(*args, **kwargs)

    return wrapper


RUN_YOUNG_THRESHOLD = 10_000
"""Net new containers between two young collections while runs are in flight (Python's
default is 700)."""

_spaced_lock = threading.Lock()
_spaced_depth = 0
_spaced_saved: tuple[tuple[int, ...], bool] = ((700, 10, 10), False)
"""The thresholds before the first `gc_spaced`, and whether it froze the heap."""


@contextmanager
def gc_spaced(young: int = RUN_YOUNG_THRESHOLD) -> Iterator[None]:
    """While an experiment's runs are in flight on one event loop, a collection stops
    every timer: the heap that was there before (modules, the loaded suite, numpy being
    imported by the end report's warm-up) is set aside (`gc.freeze`: a full collection
    walked it for 30-80 ms during a 2 s experiment), and the young generation is
    collected every `young` net new containers instead of 700 (50 runs in flight
    crossed 700 some 50 times per 1,000 runs, about 15 ms of the loop's CPU; their
    objects die by reference counting). Cycles are still collected: garbage that
    refcounting cannot free still counts towards the next collection. Nests (runs of
    several threads); the last one out restores the thresholds and thaws the heap, only
    if it froze it (a program that froze its own objects, say before a fork, keeps them
    frozen). What the experiment made and still holds then is counted as old, not young."""
    global _spaced_depth, _spaced_saved
    with _spaced_lock:
        if _spaced_depth == 0:
            froze = nothing_frozen()
            _spaced_saved = (gc.get_threshold(), froze)
            if froze:
                gc.freeze()
            first, *older = gc.get_threshold()
            gc.set_threshold(max(first, young), *older)
        _spaced_depth += 1
    try:
        yield
    finally:
        with _spaced_lock:
            _spaced_depth -= 1
            if _spaced_depth == 0:
                thresholds, froze = _spaced_saved
                gc.set_threshold(*thresholds)
                if froze:
                    # the runs' young objects counted as old with the heap (`_settle`): up
                    # to 10,000 of them were walked at the first allocation after, 0.7-0.8 ms
                    # of an experiment's end (the lease's end keeps the cases' items)
                    gc.freeze()
                    gc.unfreeze()


def set_aside() -> None:
    """Inside `gc_spaced`, when it set the heap aside: what was made since (a thread's
    imports while the runs are in flight: `writer.RunWriter.warm_up`) is set aside with it,
    not walked by the next young collection (the writer's imports made one of 2-2.6 ms,
    on the loop's thread as the first runs' agents returned); thawed with the heap. Not
    after `set_aside_for_good`: that would freeze the user's objects for good too (an
    object of theirs in a cycle would not be finalized at exit; test_startup)."""
    with _spaced_lock:
        if _spaced_depth and _spaced_saved[1]:
            gc.freeze()
