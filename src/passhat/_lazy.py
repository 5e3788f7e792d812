"""Import a heavy module on first use, so a command that never needs it starts faster.

`passhat --help`, `check` and `list` never compute an interval; importing
numpy (with its BLAS) for them was half of their start-up time. Commands that do
load it but run no user code start its BLAS with one thread (`one_blas_thread`).
`warm_up` imports such a module in a background thread while the caller waits on
something else (`passhat run` while its runs wait on their agents).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any


class _Deferred(ModuleType):
    """Stands for a module until its first attribute is read, then imports it through the
    import system (its locks make that safe from any thread, a `warm_up` thread
    included) and keeps the module's names: later reads are plain lookups.

    Not `importlib.util.LazyLoader`: its module, in `sys.modules`, runs its code in
    whichever thread reads an attribute first, and on Python 3.11 a second thread
    reading meanwhile sees a half-made module."""

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attr)


def lazy_import(name: str) -> ModuleType:
    """`name` as a module whose code runs on the first attribute access; the real
    module if it is already imported."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    return _Deferred(name)


WARM_UP_SWITCH_S = 0.0005
"""While a warm-up imports, the interpreter lets other threads run every 0.5 ms (not every
5): an event loop waking for a timer waits that long at most for the warm-up to let go."""

_switching = threading.Lock()
_switch_holders = 0
_switch_before = 0.0


@contextlib.contextmanager
def quick_switching() -> Iterator[None]:
    """While the body runs (in any thread), the interpreter switches threads every
    WARM_UP_SWITCH_S at most; the interval it had is set back when the last body that
    asked for this ends, whatever order they end in (a warm-up that outlives the runs
    it began among does not leave the runs' setting behind, nor undo it early)."""
    global _switch_holders, _switch_before
    with _switching:
        if _switch_holders == 0:
            _switch_before = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_before, WARM_UP_SWITCH_S))
        _switch_holders += 1
    try:
        yield
    finally:
        with _switching:
            _switch_holders -= 1
            if _switch_holders == 0:
                sys.setswitchinterval(_switch_before)


def warm_up(*names: str) -> threading.Thread:
    """Import `names` in a daemon thread (already imported ones cost nothing): what
    comes later finds them loaded. A failure there is left for the real import to meet."""

    def target() -> None:
        with quick_switching():
            _import_all(names)

    thread = threading.Thread(target=target, name="passhat-warm-up", daemon=True)
    thread.start()
    return thread


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""What numpy's OpenBLAS reads, in its order, for the size of its thread pool."""


def one_blas_thread() -> None:
    """Let numpy's OpenBLAS start one thread, unless the user chose a number.

    OpenBLAS starts a pool of threads when numpy is loaded: measured, 50 ms of CPU
    (and more wall time on a busy machine) for a report whose matrices (2,000
    resamples by a dozen case records) one thread multiplies in microseconds. Only
    for commands that run none of a user's code (their numpy keeps its threads), and
    only before numpy is loaded (OpenBLAS reads it then)."""
    if not any(name in os.environ for name in BLAS_THREADS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


BLAS_SPIN = ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")
"""Where OpenBLAS reads how long its idle threads spin before they sleep (log2 cycles)."""
BLAS_SPIN_LOG2 = 20
"""2**20 cycles, a third of a millisecond: OpenBLAS's own is 2**28, a tenth of a second."""


def short_blas_spin() -> None:
    """Let numpy's OpenBLAS threads sleep a third of a millisecond after their last work,
    not a tenth of a second, unless the user chose (or numpy is loaded already: too late).

    Idle, each thread of OpenBLAS's pool spins 2**28 cycles before it sleeps, from the
    moment numpy loads. `passhat run` loads numpy in a warm-up thread while its runs wait
    on their agents: on 2 cores the spinning thread took one from the event loop whose
    timers were firing, 30-40 ms of the wall of 1,000 runs of 100 ms at concurrency 50
    (measured under chrt -f 20; about 70 ms without it at load 7). The pool keeps its
    threads for a user's own numpy, which still spins through back-to-back calls."""
    if "numpy" not in sys.modules and not any(name in os.environ for name in BLAS_SPIN):
        os.environ[BLAS_SPIN[0]] = str(BLAS_SPIN_LOG2)


@contextlib.contextmanager
def imported_meanwhile(*names: str) -> Iterator[Callable[[], bool]]:
    """Import `names` in a thread while the body runs, and wait for them at its end.
    Gives the body a call that says whether the thread is still importing.

    For a body that spends its time outside the interpreter (an SQLite query, which
    lets go of the GIL while it steps): a reading command's numpy loads in the time
    the store takes to count its runs, not after it. The body must import nothing
    itself, so that no two threads import into each other's modules (on 3.11 one
    then meets a half-made module); what follows the body imports once the thread is
    done. Meanwhile the interpreter switches threads every 0.5 ms, so the body has the
    GIL back soon after each step. Already imported: no thread."""
    missing = [name for name in names if name not in sys.modules]
    if not missing:
        yield _done
        return
    thread = threading.Thread(
        target=_import_all, args=(missing,), name="passhat-meanwhile", daemon=True
    )
    with quick_switching():
        thread.start()
        try:
            yield thread.is_alive
        finally:
            thread.join()


def _done() -> bool:
    return False


def _import_all(names: Iterable[str]) -> None:
    """Import each of `names`; a failure is left for the real import to meet."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # the caller's own import meets it and says what went wrong
            continue


def installed_version(name: str) -> str:
    """The version of package `name` without importing it (an import of numpy is 50-100 ms):
    its own module's if imported already, else its `version.py`'s `version = "..."` line
    (numpy's layout), else the import's `__version__`; "" where there is none."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            return ""
        with contextlib.suppress(OSError, UnicodeDecodeError):
            path = os.path.join(os.path.dirname(spec.origin), "version.py")
            with open(path, encoding="utf-8") as file:
                for line in file:
                    if line.startswith('version = "'):
                        return line.removeprefix('version = "').split('"', 1)[0]
        module = importlib.import_module(name)
    return str(getattr(module, "__version__", ""))
