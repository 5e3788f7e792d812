"""passhat._gc: the collector pause a report takes while it builds many objects."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from passhat._gc import gc_paused, without_gc


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_paused_inside_and_restored_after() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause ending does not switch it back on
    assert gc.isenabled()


def test_restored_after_an_exception() -> None:
    @without_gc
    def boom() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        boom()
    assert gc.isenabled()


def test_left_off_when_it_was_off() -> None:
    """A program that switched the collector off keeps it off."""
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_with_the_collector_on() -> None:
    """Thread A pauses, B pauses, A ends, B ends: on again only after the last one."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def a() -> None:
        with gc_paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with gc_paused():
            b_in.set()
            a_out.wait(5)
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False]
    assert gc.isenabled()


def test_keeps_the_signature_typer_reads() -> None:
    import inspect

    def command(path: str, *, k: int = 3) -> str:
        return f"{path}:{k}"

    wrapped = without_gc(command)
    assert inspect.signature(wrapped) == inspect.signature(command)
    assert wrapped("x", k=5) == "x:5"


def test_what_a_pause_built_is_not_walked_by_the_next_young_collection() -> None:
    """Guards `_settle`: the containers built in a pause (a report's 400,000 dicts and
    lists) do not count toward the youngest generation afterwards, so the first
    allocation after the pause does not walk them all; a cycle made in the pause is
    still freed by a full collection."""

    class Node:
        pass

    gc.collect()
    with gc_paused():
        built = [[i] for i in range(50_000)]
        node = Node()
        node.self = node  # type: ignore[attr-defined]
        gone = weakref.ref(node)
        del node
        assert gc.get_count()[0] >= 50_000
    young = gc.get_count()[0]
    assert young < 1_000, young
    assert len(built) == 50_000 and gone() is not None
    gc.collect()
    assert gone() is None


def test_objects_the_program_froze_stay_frozen() -> None:
    """A program that froze its objects (say before forking workers) keeps them frozen
    after a pause: the pause's settling must not thaw them."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused():
            _ = [[i] for i in range(1_000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
