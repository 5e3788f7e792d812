"""Searching a run's text with the meaning of Python's `re`, for at most a time bound: the
`matches` scorer's verdict (scoring.Matches).

`re` backtracks with no bound, on the thread holding the GIL: an agent's text can hold
grading for minutes. The `regex` engine (its version 0) stops at a timeout and releases
the GIL, but its meaning is not quite `re`'s, and a verdict that changes with the engine
disagrees with the earlier runs graded by `re` (and with a regrade of them):

- ignoring case, `re` takes i, I, dotless ı and dotted İ for one letter; `regex` folds
  ı and İ apart from i (`(?i)kapali` found "Sipariş kapalı" with `re` only);
- `\\w` holds combining marks (é written e + U+0301) and ² ½ for `regex`, not for `re`;
  `\\s` holds U+001C..U+001F for `re` only;
- characters newer than this Python's Unicode (regex knows their case and letters);
- `\\B` in empty text: `re` (before Python 3.14) finds no match there, `regex` one;
- syntax `re` reads literally: `[[:alpha:]]` (a POSIX class for `regex`) and `{e<=1}`
  (a fuzzy match for `regex`).

So a search whose text or pattern holds any of those (`disputed`) runs on `re` itself,
and so does one `regex` cannot compile safely (`unsafe`: it writes a counted repeat out
copy by copy, where `re` keeps a loop: `(?:ab|c){300000}` killed the process with SIGSEGV
in regex.compile, `a{10000000}` took 2.6 GB) or at all (400 nested groups: RecursionError),
in a child process killed at the time bound, or with passhat (counted once the child has started and
read the search: a start slowed by a loaded machine is not the agent's text's; START_S
bounds it apart); any other runs on `regex` in this process,
where both engines decide alike (tests/test_searching.py compares them over generated
patterns and texts). Turkish text or a pattern with non-ASCII escapes costs a process
start (tens of ms); the rest costs nothing more.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import select
import subprocess
import sys
import tempfile
import unicodedata
from typing import Any

_SYNTAX = re.compile(
    r"\\[uUNx0-7]"  # an escape that may name a character past ASCII
    r"|[^\x00-\x7f]-|-[^\x00-\x7f]"  # a range with an end past ASCII
    r"|\[[:=.]"  # a POSIX class or its kin, for regex only
    r"|\{(?!\d*(?:,\d*)?\})"  # a brace that is no counted repeat: regex's fuzzy match
)
_CHILD = (
    "import json,os,re,sys\n"
    # killed when the thread that started it ends (Linux's PR_SET_PDEATHSIG, SIGKILL): a
    # passhat killed mid-search left it searching, orphaned, for hours; without ctypes
    # or elsewhere, a search as before
    "try:import ctypes;ctypes.CDLL(None).prctl(1,9)\n"
    "except Exception:pass\n"
    "if os.getppid()!=int(sys.argv[1]):sys.exit(3)\n"  # its parent gone already
    "pattern,text=json.load(sys.stdin)\n"
    "sys.stdout.write('.');sys.stdout.flush()\n"  # started: the search's time starts here
    "sys.stdout.write('1' if re.search(pattern,text) else '0')\n"
)
START_S = 60.0
"""Seconds a child for `re` may take to start and read its search (30-150 ms here, some
seconds on a loaded machine), apart from the search's own bound: a child slow to start
is no fault of the agent's text, and past this it is passhat's error (no verdict)."""


def search(pattern: str, text: str, timeout: float) -> bool:
    """Whether `re.search(pattern, text)` finds something; TimeoutError past `timeout`
    seconds. OSError when a child cannot be started; RuntimeError when it fails."""
    if disputed(pattern, text) or unsafe(pattern):
        return _search_with_re(pattern, text, timeout)
    try:
        compiled = _compiled(pattern)
    except Exception:  # regex.error, RecursionError: a pattern re reads (the suite's check)
        return _search_with_re(pattern, text, timeout)
    return compiled.search(text, timeout=timeout, concurrent=True) is not None


def disputed(pattern: str, text: str) -> bool:
    """Whether `re` and `regex` may decide this search differently (module docstring)."""
    if not text and "\\B" in pattern:  # re's \B never matches in empty text, regex's does
        return True
    return bool(_SYNTAX.search(pattern)) or _holds_rare(pattern) or _holds_rare(text)


_LEAST = re.compile(r"\{(\d+)(?:,\d*)?\}")
"""A counted repeat's least count: the copies regex.compile writes out (`{3,}`, `{3}`,
`{3,9}`: 3; the rest of a range it keeps a loop, as `{,9}` whole)."""
EXPANDED = 100_000
"""Past this many pattern characters, counted repeats written out (a bound on what
regex.compile builds: the pattern's length times every repeat's least count, nested or
not), a search runs on `re` in a child: regex.compile has no time bound and runs in
passhat's process (`(?:ab|c){100000}`: 0.35 s and 120 MB; at 300,000, `{300000}`,
`{300000,}` or `{300000,300001}`, SIGSEGV; `{1,300000}` compiles at once)."""


def unsafe(pattern: str) -> bool:
    """Whether regex.compile may take passhat's process down over `pattern`: its counted
    repeats written out (see EXPANDED); `re` keeps them loops."""
    size = len(pattern)
    for least in _LEAST.findall(pattern):
        size *= max(1, int(least) if len(least) < 10 else EXPANDED)
        if size > EXPANDED:
            return True
    return False


def _holds_rare(text: str) -> bool:
    """Whether `text` holds a character the engines treat differently: one look over it
    (a bitmap for the Basic Multilingual Plane, 40-60 ms over 4 MiB), then its
    characters past it, if any, one by one: the rest cut out of a copy first (the list
    re.findall made of 4 Mi emoji, a string each, was 338 MB and 1.8 s; this 0.5 s)."""
    bmp, past, plain = _rare()
    if text.isascii():  # known without a look (CPython keeps it): ASCII text's own few
        return plain.search(text) is not None
    if bmp.search(text):
        return True
    return any(
        c in past or (c >= _UNASKED and not _PLANE_14 <= c < _UNASKED_TOO)
        for c in set(_in_bmp().sub("", text))
    )


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    import regex  # type: ignore[import-untyped]  # no stubs

    return regex.compile(pattern)  # version 0: the syntax and meaning of `re`, mostly


def _search_with_re(pattern: str, text: str, timeout: float) -> bool:
    """`re.search` in a child: START_S for it to start and read the search (it says so
    with a byte), then `timeout` for the search alone."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as errors:
        given.write(json.dumps([pattern, text]).encode())  # a file: the child reads it at will
        given.seek(0)
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CHILD, str(os.getpid())],
            stdin=given,
            stdout=subprocess.PIPE,
            stderr=errors,
            env={},  # passhat's own code; not handed the provider's key in passhat's environ
        )
        with child:
            try:
                started = _byte(child, START_S)
                if started is None:
                    raise RuntimeError(f"the child for re.search did not start in {START_S:g} s")
                answer = _byte(child, timeout) if started == b"." else b""
                if answer is None:
                    raise TimeoutError(f"re.search ran past {timeout:g} s")
            finally:
                child.kill()  # done or not: it has nothing more to say
            code = child.wait()
            errors.seek(0)
            last = errors.read().decode(errors="replace").strip().splitlines()[-1:]
    if answer not in (b"0", b"1"):
        raise RuntimeError(f"re.search in a child failed ({code}): {last}")
    return answer == b"1"


def _byte(child: subprocess.Popen[bytes], seconds: float) -> bytes | None:
    """The child's next byte of output (b"" at its end); None when none came in `seconds`."""
    assert child.stdout is not None
    fd = child.stdout.fileno()
    poll = select.poll()  # not select.select: passhat's descriptors go past 1,024
    poll.register(fd, select.POLLIN)  # (isolation._more_files), and it refuses those
    if not poll.poll(max(0, math.ceil(seconds * 1000))):
        return None
    return os.read(fd, 1)  # not the buffered file: a byte it kept would hide from poll


@functools.cache
def _in_bmp() -> re.Pattern[str]:
    """Runs of characters of the Basic Multilingual Plane: compiled at the first look for
    rare characters, not at import (re builds its table of 65,536 characters one by one:
    1.5 ms of every `passhat run`, whose scoring imports this module, matches or not)."""
    return re.compile("[\x00-\uffff]+")


_UNASKED, _PLANE_14, _UNASKED_TOO = "\U00040000", "\U000e0000", "\U000f0000"
"""Planes 4 to 13 (unassigned) and 15 to 16 (private use) are not asked, but taken as
disputed: asking takes a third of the time without them."""


@functools.lru_cache(maxsize=1)
def _rare() -> tuple[re.Pattern[str], frozenset[str], re.Pattern[str]]:
    """The characters the two engines treat differently, found by asking both (once a
    process: 0.1 s, about 1 s on a loaded machine): a class of those in the Basic
    Multilingual Plane (`re` makes it a bitmap), a set of the others, and a class of
    those in ASCII (U+001C..U+001F), all that text known to be ASCII is looked for."""
    import regex

    asked = "".join(map(chr, [*range(0xD800), *range(0xE000, 0x40000), *range(0xE0000, 0xF0000)]))
    rare = {"\u0130", "\u0131"}  # İ ı: re's extra case equivalence of i
    for name in (r"\W", r"\S", r"\D"):  # what each keeps is \w, \s, \d
        rare |= set(re.sub(name, "", asked)) ^ set(regex.sub(name, "", asked))
    for run in regex.finditer(r"\P{Cn}+", asked):  # assigned for regex...
        rare.update(c for c in run.group() if unicodedata.category(c) == "Cn")  # not here
    bmp = _ranges(sorted(ord(c) for c in rare if c <= "\uffff"))
    plain = _ranges(sorted(ord(c) for c in rare if c.isascii()))
    return (
        re.compile("[" + "".join(bmp) + "]"),
        frozenset(c for c in rare if c > "\uffff"),
        re.compile("[" + "".join(plain) + "]" if plain else "(?!)"),
    )


def _ranges(points: list[int]) -> list[str]:
    """Sorted code points as the ranges of a character class."""
    out: list[str] = []
    start = end = -2
    for point in [*points, -1]:
        if point == end + 1:
            end = point
            continue
        if start >= 0:
            out.append(f"\\U{start:08x}-\\U{end:08x}")
        start = end = point
    return out
