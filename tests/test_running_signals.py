"""evaluation/running.py's SIGTERM handling leaves the caller's own handler in place: one
set in Python, and one set outside Python (a C library's, an embedding program's), which
`signal` cannot hand back (`signal.getsignal` is None for it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import SuiteWriter

# The caller's SIGTERM handler, set before passhat runs a round; the round, then a
# SIGTERM: a process whose handler survived prints "alive" and exits 0.
_BEFORE = {
    # a C function as the handler (srand takes one int and returns nothing, so SIGTERM
    # is caught and does nothing). Python read every handler once, as it started; the
    # `_signal` module imported again reads them again, as it does in a program that
    # embeds Python after setting its own: a handler set outside Python is None there.
    "C": """
        import ctypes
        libc = ctypes.CDLL(None)
        libc.signal.restype = ctypes.c_void_p
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.signal(signal.SIGTERM, ctypes.cast(libc.srand, ctypes.c_void_p).value)
        del sys.modules["_signal"]
        import _signal
        assert signal.getsignal(signal.SIGTERM) is None
    """,
    "Python": """
        caught = []
        signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    """,
}

_ROUND = {
    # the round's loop on a thread of passhat's own (sandboxed runs, or a caller's loop)
    "own-thread": """
        from passhat.evaluation.running import _on_own_loop
        async def main():
            pass
        _on_own_loop(main, [], apart=True)
    """,
    # the round's loop on this thread (asyncio.run), through the public call
    "this-thread": """
        import passhat
        async def agent(input, env, ctx):
            return "done"
        done = passhat.evaluate(sys.argv[1], agent=agent, k=1, db=sys.argv[2], model="")
        assert len(done.runs()) == 1
    """,
}


@pytest.mark.parametrize("where", list(_ROUND))
@pytest.mark.parametrize("before", list(_BEFORE))
def test_the_callers_sigterm_handler_is_still_there_after_a_round(
    writer: SuiteWriter, tmp_path: Path, before: str, where: str
) -> None:
    """A handler set outside Python: `_sigterm_to` handed signal.signal the None it got
    back, a TypeError as the round ended (seen failing on main at 14e7e39). On the loop's
    own thread, asyncio's remove_signal_handler set SIG_DFL: the caller's handler, C or
    Python, was gone and the next SIGTERM killed the process (-15; seen failing too)."""
    del writer.suite["defaults"]["model"]  # type: ignore[union-attr]
    suite = writer.write()
    script = "\n".join(
        [
            "import os, signal, sys",
            textwrap.dedent(_BEFORE[before]),
            textwrap.dedent(_ROUND[where]),
            "os.kill(os.getpid(), signal.SIGTERM)",
            "print('alive')",
        ]
    )
    if before == "Python":
        script += "\nassert caught == [signal.SIGTERM], caught"
    done = subprocess.run(
        [sys.executable, "-c", script, str(suite), str(tmp_path / "p.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, "alive\n"), done.stderr[-2000:]
