"""passhat._gc: the collector pause a report takes while it builds many objects, and the
spaced collections of an experiment's runs."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from passhat._gc import RUN_YOUNG_THRESHOLD, gc_paused, gc_spaced, set_aside, without_gc


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def collect() -> None:
    """gc.collect(), the garbage of tests run before in this worker not these tests' to
    judge: its unclosed sockets' ResourceWarning (an error under the suite's
    filterwarnings) surfaced once in a collection here: two client sockets of a server
    on 127.0.0.1, let go by an earlier file's thread while this file ran; not passhat's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


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

    collect()
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
    collect()
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
        # A frozen object another thread lets go of leaves the count (238,854 of 238,856
        # once): a thaw empties it.
        assert gc.get_freeze_count() >= frozen - 100
    finally:
        gc.unfreeze()


def test_runs_space_young_collections_and_set_the_old_heap_aside() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with gc_spaced():
        assert gc.get_threshold() == (RUN_YOUNG_THRESHOLD, *before[1:])
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_spaced():  # nested (another thread's runs): no second freeze
            assert gc.get_freeze_count() == frozen
        assert gc.get_threshold()[0] == RUN_YOUNG_THRESHOLD  # the inner end restores nothing
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cycles_made_while_runs_are_spaced_are_still_collected() -> None:
    """Garbage that reference counting cannot free counts towards the next young
    collection, which comes: memory stays bounded however many runs make cycles."""

    class Node:
        pass

    with gc_spaced():
        collect()
        first = Node()
        first.me = first  # type: ignore[attr-defined]
        gone = weakref.ref(first)
        del first
        for _ in range(3 * RUN_YOUNG_THRESHOLD):  # other runs' cycles
            node = Node()
            node.me = node  # type: ignore[attr-defined]
        del node
        assert gone() is None


def test_runs_leave_what_the_program_froze_frozen_and_a_higher_threshold_as_it_is() -> None:
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, *before[1:])
    try:
        with gc_spaced():
            assert gc.get_threshold()[0] == 50_000
        assert gc.get_freeze_count() > 0  # not thawed (a frozen object may have died)
        assert gc.get_threshold()[0] == 50_000
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_what_the_runs_hold_at_their_end_counts_as_old_not_young() -> None:
    """runner54: leaving gc_spaced counts what the runs still hold as old (freeze and thaw,
    no walk): the first allocation after it no longer walked up to 10,000 young objects
    (0.7-0.8 ms of an experiment's end)."""
    with gc_spaced():
        held = [[i] for i in range(5_000)]
        assert gc.get_count()[0] >= 4_000
        young = gc.get_stats()[0]["collections"]
    more = [[i] for i in range(100)]
    assert gc.get_stats()[0]["collections"] == young  # no walk of the 5,000
    assert gc.get_freeze_count() == 0 and len(held) == 5_000 and len(more) == 100


def test_set_aside_sets_what_was_made_aside_with_the_heap_only_inside_gc_spaced() -> None:
    """runner54: the writer's imports while runs are in flight are set aside with the heap
    (thawed with it), not walked by a young collection on the loop's thread; outside
    gc_spaced, or where the program froze its own objects, nothing is frozen."""
    set_aside()
    assert gc.get_freeze_count() == 0
    with gc_spaced():
        frozen = gc.get_freeze_count()
        held = [[i] for i in range(5_000)]
        set_aside()
        assert gc.get_freeze_count() >= frozen + 5_000
        assert gc.get_count()[0] < 700
    assert gc.get_freeze_count() == 0 and len(held) == 5_000


def test_the_writers_imports_make_no_collection_and_are_set_aside(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """runner54: RunWriter's warm-up imports with collections paused, then sets what they
    made aside (_gc.set_aside): a young collection of the imported modules' objects
    stopped the loop 2-2.6 ms as the first runs' agents returned."""
    import sys

    from passhat import writer

    (tmp_path / "r54_probe.py").write_text("import gc\nCOLLECTING = gc.isenabled()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "r54_probe", raising=False)
    monkeypatch.setattr(writer, "WARM_UP", ("r54_probe",))
    with gc_spaced():
        frozen = gc.get_freeze_count()
        writer._warm()
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen
    assert sys.modules["r54_probe"].COLLECTING is False


def test_once_the_start_up_is_set_aside_the_frozen_heap_is_not_walked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`gc.get_freeze_count()` walks every frozen object (1-5 ms a call after `passhat
    run`'s start-up) and a run asked six times: once `passhat run` set its start-up
    aside, the pauses of its end report and the runs' spacing know it is frozen without
    asking, and leave it frozen (they neither settle nor thaw)."""
    from passhat import _gc

    monkeypatch.setattr(_gc, "_set_aside", False)
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    _gc.set_aside_for_good()
    assert calls == ["freeze"]

    def walked() -> int:
        calls.append("walked")
        return 0

    monkeypatch.setattr(gc, "get_freeze_count", walked)
    with gc_paused():
        pass
    with gc_spaced():
        pass
    assert calls == ["freeze"]
