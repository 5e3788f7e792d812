"""Whether a suite's files changed while its experiment ran: grading reads a suite whose
hash is checked again.

The goals an experiment grades against are loaded once, at its start, and kept in
memory, so a suite rewritten mid-run (by an agent outside a sandbox, by a person)
cannot change a verdict of this experiment; it would change every later one. A run
graded after such a change is errored `suite_changed`, never given a verdict, so the
report says so at once.

Before each grading, the files that grading reads for that run (suite.yaml and the
run's case file) are looked at (`stat`, no parsing); every file of the suite is
looked at too, once SPACING times the last such look's cost has passed (a suite of
ten files is looked at whole all the time, one of 20,000 a few times a second), by
a thread of the guard's own: the walk does not hold up the event loop whose runs
wait on their timers, and a change it finds errors every run graded after it. When
suite.yaml or the run's case file moved, the whole look is made at once, before the
run is graded. Only when a file's size, mtime or inode moved is the suite loaded
again and its hash compared (a `touch` is not a change).

Each experiment has a guard of its own (`watch`, from a `look` taken before the suite's
files were read: `load` for regrade, the evaluation's own load for run and resume),
handed down with its runs (`Job.guard`, `run_once(guard=...)`, a Dask worker's
`Prepared.guard`; `current()` for a user's executor that calls `run_once` without one,
from the context or, on a thread of its own, from the experiments running on that
suite): a change one experiment saw stays told to it, and another experiment on the same
suite in the same process, started once the files were put back, watches them afresh.
Neither ever clears the other's finding.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from passhat.suite import Suite, load_suite

SPACING = 50
"""A look at the suite's files waits this many times the last look's cost (<= 2 % CPU)."""
MAX_FILES = 20_000
"""Files of a suite folder looked at (a folder that holds more is looked at this far)."""
SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"})
"""Folders of a suite that are not the suite's content."""

Signature = tuple[tuple[str, int, int, int], ...]


def graded(root: Path, path: str) -> bool:
    """Whether grading reads the file at `path`: suite.yaml, a case file, Python (a
    scorer's or an environment's source). Other files (an environment's own state, logs,
    a store beside the suite) may change while runs go on."""
    rel = os.path.relpath(path, root)
    return (
        rel in ("suite.yaml", "suite.yml")
        or rel.startswith("cases" + os.sep)
        or (rel.endswith(".py"))
    )


def signature(root: Path) -> Signature:
    """(path, size, mtime_ns, inode) of the suite's files that grading reads, sorted."""
    found: list[tuple[str, int, int, int]] = []
    top = str(root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        cases = folder == os.path.join(top, "cases")  # its files are read, whatever their name
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not (cases or name.endswith(".py") or graded(root, path)):
                continue
            try:
                st = os.stat(path)
            except OSError:
                continue
            found.append((path, st.st_size, st.st_mtime_ns, st.st_ino))
            if len(found) >= MAX_FILES:
                return tuple(found)
    return tuple(found)


@dataclass
class SuiteGuard:
    """One suite's files as they were when its experiment started."""

    suite: Suite
    seen: Signature = ()
    checked_at: float = 0.0
    cost: float = 0.0
    changed: str | None = None
    """Why the suite no longer is the one loaded (None while it is)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    _due: threading.Event | None = None
    """Set to have the guard's thread look at every file (started by the first `check`)."""
    _by_path: tuple[Signature, dict[str, tuple[int, int, int]]] | None = None
    _asked: float = 0.0
    """When the thread's look was last asked for: its cost counts the thread's wake-up."""
    _head: str = ""
    """suite.yaml's path as text (looked at before every grading: no Path made each time)."""
    _closed: bool = False
    """Set by `close`: the guard's thread ends (each experiment's guard has one)."""
    reload: Callable[[Path], Suite] | None = None
    """How the suite was loaded, to load it again alike when its files moved (`Look.load`:
    with the caller's environment and scorers in place of suite.yaml's); None: load_suite
    with the suite's own `loaded_with`."""

    def __post_init__(self) -> None:
        self._head = str(self.suite.path / "suite.yaml")
        if self.checked_at:  # a look already taken (`load`: before the suite was read)
            return
        start = time.monotonic()
        self.seen = signature(self.suite.path)
        self.checked_at = time.monotonic()
        self.cost = self.checked_at - start

    def check(
        self, *, now: float | None = None, force: bool = False, files: tuple[str, ...] = ()
    ) -> str | None:
        """None while the suite's content is the loaded one; else why not (sticky).
        `files` (a run's case file) are looked at every time, the rest spaced out."""
        now = time.monotonic() if now is None else now
        with self.lock:
            if self.changed is not None:
                return self.changed
            if force or not self._same(files):
                return self._look(now)
            if now - self.checked_at >= SPACING * self.cost:
                self._look_soon()
            return None

    def _look(self, now: float) -> str | None:
        """Every file, now (the lock held): why the suite changed, or None."""
        return self._judge(signature(self.suite.path), now)

    def _judge(self, current: Signature, started: float) -> str | None:
        """The files as a look that began at `started` found them (the lock held)."""
        self.checked_at = time.monotonic()
        self.cost = self.checked_at - started
        if current == self.seen:
            return None
        self.changed = self._compare(current)
        if self.changed is None:
            self.seen = current  # the same content (a touch, a copy over itself)
        return self.changed

    def close(self) -> None:
        """The experiment ended: the guard's thread, if it started, ends too (a finding
        already made still answers `check`)."""
        with self.lock:
            self._closed = True
            if self._due is not None:
                self._due.set()

    def _look_soon(self) -> None:
        """Have the guard's thread look at every file (the lock held)."""
        if self._closed:
            return
        if self._due is None:
            self._due = threading.Event()
            threading.Thread(target=self._watch, name="passhat-tamper", daemon=True).start()
        self.checked_at = float("inf")  # asked once until that look is made
        self._asked = time.monotonic()
        self._due.set()

    def _watch(self) -> None:
        """The guard's thread: a whole look each time one is due, the walk without the
        lock (gradings meanwhile still look at their own files)."""
        due = self._due
        assert due is not None
        while True:
            due.wait()
            due.clear()
            if self._closed:
                return
            started = time.monotonic()
            try:
                current = signature(self.suite.path)
            except Exception:  # a walk that fails is made again by the next grading's look
                current = None
            with self.lock:
                if current is None:
                    self.checked_at = started
                elif self.changed is None:
                    # its cost from the ask: waking the thread (a futex, the GIL taken
                    # from the loop) costs as much as a small suite's walk
                    self._judge(current, min(started, self._asked))

    def _same(self, files: tuple[str, ...]) -> bool:
        """Whether suite.yaml and `files` are as they were (a stat each)."""
        seen = self._index()
        for path in (self._head, *files):
            try:
                st = os.stat(path)
            except OSError:
                return path not in seen
            if seen.get(path) != (st.st_size, st.st_mtime_ns, st.st_ino):
                return False
        return True

    def _index(self) -> dict[str, tuple[int, int, int]]:
        if self._by_path is None or self._by_path[0] is not self.seen:
            self._by_path = (self.seen, {p: (size, m, ino) for p, size, m, ino in self.seen})
        return self._by_path[1]

    def _compare(self, current: Signature) -> str | None:
        before = {p: rest for p, *rest in self.seen}
        after = {p: rest for p, *rest in current}
        moved = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        named = ", ".join(os.path.relpath(p, self.suite.path) for p in moved[:3])
        more = f" and {len(moved) - 3} more" if len(moved) > 3 else ""
        try:
            if self.reload is not None:
                again = self.reload(self.suite.path)
            else:
                again = load_suite(self.suite.path, **self.suite.loaded_with)
        except Exception as error:  # a suite that no longer loads (or is half written) changed
            return (
                f"the suite at {self.suite.path} changed during the experiment "
                f"({named}{more}: {error})"
            )
        if again.hash == self.suite.hash:
            return None
        return (
            f"the suite at {self.suite.path} changed during the experiment ({named}{more}); "
            "a run graded now would not be graded against the goals the experiment "
            "started with. Find out what wrote it, then run the experiment again"
        )


@dataclass(frozen=True)
class Look:
    """A suite folder's files as they were just before a load read them (`look`)."""

    folder: Path
    seen: Signature
    at: float
    cost: float
    load: Callable[[Path], Suite] | None = None
    """The load that read them, when not load_suite alone (`evaluate(scorers=...)`): a
    guard loads the suite again as it did, or its hash differs with no file changed."""


def look(path: str | Path, load: Callable[[Path], Suite] | None = None) -> Look | None:
    """The files of the suite folder at `path` (or of the folder of the suite.yaml named),
    as they are now, before `load` (None: load_suite) reads them; None when there are
    none to look at."""
    given = Path(path)
    if given.is_file():  # suite.yaml named, as load_suite takes it
        given = given.parent
    folder = given.resolve()
    started = time.monotonic()
    seen = signature(folder)
    at = time.monotonic()
    return Look(folder, seen, at, at - started, load) if seen else None


def watch(suite: Suite, before: Look | None = None) -> SuiteGuard | None:
    """A new guard of this loaded suite's files, for one experiment (its caller closes it
    when the experiment ends), or None for a suite that has no folder of its own on disk.
    The files are taken as they were `before` the suite was read (`look`, when it looked
    at this suite's folder), else as they are now: a guard started after the load takes a
    goal rewritten in between as the suite's own."""
    if before is not None and before.folder == suite.path:
        return SuiteGuard(
            suite, seen=before.seen, checked_at=before.at, cost=before.cost, reload=before.load
        )
    on_disk = any((suite.path / name).is_file() for name in ("suite.yaml", "suite.yml"))
    reload = None if before is None else before.load
    return SuiteGuard(suite, reload=reload) if on_disk else None


def load(path: str | Path) -> tuple[Suite, SuiteGuard | None]:
    """`load_suite(path)` and its guard (as `watch`), whose look at the files is taken
    before the load reads them: a change made after, even as the suite loads, is seen by
    the first grading (one made before the load read it is the loaded suite's, not a
    change)."""
    before = look(path)
    suite = load_suite(path)
    return suite, watch(suite, before)


_CURRENT: ContextVar[SuiteGuard | None] = ContextVar("passhat_suite_guard", default=None)
_OPEN: list[SuiteGuard] = []
"""The guards of the experiments running now (`watching`), for a thread without the context."""
_OPEN_LOCK = threading.Lock()


def current(suite: Suite | None = None) -> SuiteGuard | None:
    """The guard of the experiment running in this context (`watching`); else, on a thread
    that does not carry the context (a user's executor's own), the guard of an experiment
    running now on this `suite` (its folder and hash); else None."""
    found = _CURRENT.get()
    if found is not None or suite is None:
        return found
    with _OPEN_LOCK:
        for running in reversed(_OPEN):
            if running.suite.path == suite.path and running.suite.hash == suite.hash:
                return running
    return None


@contextlib.contextmanager
def watching(suite: Suite, guard: SuiteGuard | None = None) -> Iterator[SuiteGuard | None]:
    """`guard`, or a guard of this block's own (`watch`, closed at its end), as the
    running experiment's within this block and the tasks it starts (they copy the
    context): `current()` for a user's executor that calls `run_once` without one."""
    own = watch(suite) if guard is None else None
    watched = own or guard
    token = _CURRENT.set(watched)
    if watched is not None:
        with _OPEN_LOCK:
            _OPEN.append(watched)
    try:
        yield watched
    finally:
        _CURRENT.reset(token)
        if watched is not None:
            with _OPEN_LOCK:  # this block's entry (by identity: guards compare by value)
                del _OPEN[max(i for i, g in enumerate(_OPEN) if g is watched)]
        if own is not None:
            own.close()


def changed(guard: SuiteGuard | None, case_file: Path | str | None = None) -> str | None:
    """Why the suite `guard` watches is no longer what is on disk (None: it still is, or
    there is no guard); `case_file`, the file a run's goal came from, is looked at every
    time."""
    files = (str(case_file),) if case_file is not None else ()
    return None if guard is None else guard.check(files=files)
