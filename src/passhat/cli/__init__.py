"""The `passhat` command. It parses arguments, calls the library and prints.

Each command module registers its commands on `app` when imported; `main` imports
only the one the command line names (see COMMANDS in _app.py), and for
`passhat report EXPERIMENT [--json] [--html FILE] [--db PATH]` none: it calls the report
itself (`quick_report`), without typer."""

from __future__ import annotations

import contextlib
import errno
import gc
import importlib
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from passhat._gc import RUN_YOUNG_THRESHOLD, gc_paused, nothing_frozen, set_aside_for_good
from passhat._lazy import one_blas_thread
from passhat.errors import PasshatError

__all__ = ["app", "command", "main"]


READING = frozenset(
    {"report", "show", "diff", "why", "list", "metrics", "compare", "audit", "export"}
)
"""Commands that read and compute but run none of a user's code (agents, scorers,
environments): numpy's BLAS gets one thread for them (passhat._lazy.one_blas_thread),
and the cyclic garbage collector is paused while they load and run (passhat._gc:
importing their modules allocates thousands of objects that all stay alive, and
each collection walked them again, 8 ms of a report's start)."""


_OWN_PROCESS = False
"""Set by `command`: this process is the `passhat` command's own (its console script,
`python -m passhat`), not a program of a user's that calls `main` among its objects."""


RUNNING = frozenset({"run", "resume"})
"""Commands that call `set_aside_start_up` before they load a user's code."""

_PAUSED = False
"""Set by `command` when it paused the collector until `set_aside_start_up`."""


def command() -> None:
    """Entry point of the console script and of `python -m passhat`: `main()` in a
    process of its own. For `run` and `resume` the cyclic collector waits until
    `set_aside_start_up` sets aside what the start-up built (the imports' collections,
    some 60 of them, walked what was to be frozen anyway)."""
    global _OWN_PROCESS, _PAUSED
    _OWN_PROCESS = True
    if command_name(sys.argv[1:]) in RUNNING and gc.isenabled():
        # nothing it builds before then is collected: the collections would be wasted
        gc.disable()
        _PAUSED = True
    _writable_streams()
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C before a command handles it (its imports): no
        print("\nAborted!", file=sys.stderr)  # traceback, as click ends a command
        sys.exit(130)


def _writable_streams() -> None:
    """Standard output and error as the `passhat` process's own commands can write them:
    one closed when the process started (`>&-`, `2>&-`: Python makes it None) writes to
    /dev/null, as print() does (every command's flush or isatty raised AttributeError: a
    traceback, or exit 1 after a report written whole); a stdout in an encoding that
    cannot hold a character (PYTHONIOENCODING=ascii, a Latin-1 locale: a terminal report's
    `–` or `·`) writes it as a backslash escape, not a UnicodeEncodeError traceback.
    --json is unchanged: `write_json_pieces` writes such a character as a JSON escape."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    out = sys.stdout
    if isinstance(out, io.TextIOWrapper) and out.errors == "strict":
        out.reconfigure(errors="backslashreplace")


def set_aside_start_up() -> None:
    """Before `run` or `resume` loads a user's code (environment, scorers, agent), in a
    process of its own (`command`): what the start-up built (modules, the CLI) is set
    aside from the collector (`gc.freeze`). The interpreter's teardown walked all of it in
    its collections: 130 -> 55 ms of CPU after `passhat run`'s exit handlers (measured
    at load 14; ~75 ms of an end-to-end run). What a user's code builds later is not
    frozen: an object of theirs in a reference cycle is still finalized at exit (its
    buffered file flushed; test_startup). Frozen objects that die by reference counting
    are freed as always; only cycles among them wait for the process to end. Not when
    something froze objects before (a host program's own freeze)."""
    global _PAUSED
    if _OWN_PROCESS and nothing_frozen():
        set_aside_for_good()
        # what follows (the suite, the runs, the end report) allocates containers that
        # die by reference counting: a young collection every 10,000 net new ones, not
        # 700 (the runs' own spacing, passhat._gc.gc_spaced, for the whole command)
        first, *older = gc.get_threshold()
        gc.set_threshold(max(first, RUN_YOUNG_THRESHOLD), *older)
    if _PAUSED:
        _PAUSED = False
        gc.enable()


def command_name(argv: list[str]) -> str | None:
    """The command `argv` names (its first word that is no option); None for none."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(args: list[str] | None = None) -> None:
    """Entry point of the console script; `args` defaults to the command line."""
    argv = sys.argv[1:] if args is None else args
    reading = command_name(argv) in READING
    if reading:
        one_blas_thread()
    try:
        with gc_paused() if reading else contextlib.nullcontext():
            quick = quick_report(argv)
            if quick is None:
                from passhat.cli import _app

                _app.load_commands(command_name(argv))
            try:
                if quick is None:
                    _app.app(args=args, prog_name="passhat")
                else:
                    _report(*quick)
            except PasshatError as error:
                _fail(error)
            except Exception as error:
                damage = _store_damage(error, argv) or _output_unwritable(error)
                if damage is None:
                    raise
                _fail(damage)
    except SystemExit as exit_:
        if args is None and reading:  # the process is this command's alone
            _hard_exit(exit_.code)
        raise


COMPLETE_ENV = "_PASSHAT_COMPLETE"
"""click's shell-completion variable for `passhat`: when set, typer answers it."""


class QuickReport(NamedTuple):
    """A `passhat report` command line `quick_report` takes, as typer would parse it."""

    experiment: str
    db: Path | None
    as_json: bool
    html: Path | None = None


def quick_report(argv: Sequence[str]) -> QuickReport | None:
    """(EXPERIMENT, --db, --json, --html) of a command line that is exactly `report
    EXPERIMENT`, with `--json` or not, `--db PATH`, `--db=PATH` or neither, `--html FILE`,
    `--html=FILE` or neither, in any order after `report`: what typer parses into
    `read.report(EXPERIMENT, as_json=..., db=..., html=...)`. None for any other line
    (another option, a word twice, an empty or dash-led value, -h...): typer parses it.
    Called without typer (`_report`), such a report starts 20-30 ms sooner: typer and
    the help pages are not imported (`report --html` of 10,000 x 10: 30-40 ms of CPU)."""
    if len(argv) < 2 or argv[0] != "report" or COMPLETE_ENV in os.environ:
        return None
    words = list(argv[1:])
    db, html = _valued(words, "--db"), _valued(words, "--html")
    if db is None or html is None:
        return None
    as_json = "--json" in words
    if as_json:
        words.remove("--json")
    if len(words) != 1 or not words[0] or words[0].startswith("-"):
        return None
    return QuickReport(words[0], _path(db), as_json, _path(html))


def _valued(words: list[str], option: str) -> str | None:
    """The value of `option` in `words` (`OPTION VALUE` or `OPTION=VALUE`), taken out of
    them; "" when it is not given; None when typer must read the line (given twice, no
    value, an empty or dash-led one)."""
    given = [w for w in words if w == option or w.startswith(f"{option}=")]
    if not given:
        return ""
    if len(given) > 1:
        return None
    if given == [option]:
        at = words.index(option)
        value = words[at + 1] if at + 1 < len(words) else ""
        del words[at : at + 2]
    else:
        value = given[0].removeprefix(f"{option}=")
        words.remove(given[0])
    return None if not value or value.startswith("-") else value


def _path(value: str) -> Path | None:
    """A `_valued` option's value as typer makes it: a path, or None when not given."""
    return Path(value) if value else None


def _report(experiment_ref: str, db: Path | None, as_json: bool, html: Path | None) -> None:
    """`passhat report EXPERIMENT [--json] [--html FILE]` as typer's standalone call ends
    it: exit 0 when done, 130 on Ctrl-C, 1 on a closed pipe (quietly) or end of input
    ("Aborted!")."""
    from passhat.cli.report import report_of

    try:
        report_of(experiment_ref, as_json=as_json, db=db, html=html)
    except KeyboardInterrupt:
        sys.exit(130)
    except EOFError:
        print("\nAborted!", file=sys.stderr)
        sys.exit(1)
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        # what stdout still buffers goes nowhere at exit, quietly (typer wraps the streams
        # in click's PacifyFlushWrapper: typer._click, from typer 0.26 on; passhat takes
        # typer 0.12 on, and importing it here was a traceback there)
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    sys.exit(0)


def _fail(error: PasshatError) -> None:
    from passhat.cli import _app

    _app.fail(error)


def _store_damage(error: Exception, argv: list[str]) -> PasshatError | None:
    """An SQLite error met while reading a store that opened well (a file cut short
    mid-page: "database disk image is malformed" was a traceback from report and
    export) as one line naming the store; None for any other error. It names the store
    only when the error came from the store's own reads (a frame of passhat.store, the
    one package that touches sqlite3: not a user's executor's own database) and the
    store is what is wrong: its file's state (a lock, read-only, a full disk) or pages
    PRAGMA quick_check finds damaged. passhat's own SQL refused on a sound store is a
    bug and keeps its traceback."""
    sqlite3 = sys.modules.get("sqlite3")  # not imported: no SQLite error either
    if sqlite3 is None or not isinstance(error, sqlite3.DatabaseError):
        return None
    if not _from_the_store(error):
        return None
    from itertools import pairwise

    from passhat.errors import StoreError
    from passhat.store.connection import (
        FILE_STATES,
        busy_timeout,
        damaged,
        default_db_path,
        explain,
    )

    path = str(default_db_path())
    options = argv[: argv.index("--")] if "--" in argv else argv  # after it: arguments
    for word, after in pairwise([*options, ""]):  # the last --db, as typer takes it
        if word == "--db" or word.startswith("--db="):
            path = after if word == "--db" else word[5:]
    lowered = str(error).lower()
    if lowered.startswith("could not decode to utf-8"):  # a store someone else wrote
        return StoreError(f"{path}: the store is damaged: {error} (bytes that are not UTF-8)")
    if not any(word in lowered for word in FILE_STATES) and not damaged(path):
        return None
    try:
        timeout = busy_timeout()
    except PasshatError:
        timeout = 30.0
    return StoreError(f"{path}: {explain(error, timeout)}")


def _from_the_store(error: BaseException) -> bool:
    """Whether `error` was raised in (or through) passhat.store's code."""
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__", "")
        if name == "passhat.store" or name.startswith("passhat.store."):
            return True
        tb = tb.tb_next
    return False


def _output_unwritable(error: Exception) -> PasshatError | None:
    """Standard output that cannot be written (a full disk behind `> out.json`: an OSError
    traceback from every printing command) as one line; None for any other error. It is
    told from another file by the innermost frame: the one writing stdout (rich's console,
    `write_json_pieces`) holds it. Its descriptor then points at /dev/null, so the
    interpreter's last flush is quiet."""
    codes = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
    if not isinstance(error, OSError) or error.errno not in codes:
        return None
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    out = (sys.stdout, getattr(sys.stdout, "buffer", None))
    held = tb.tb_frame.f_locals.values() if tb is not None else ()
    if not any(v in out or getattr(v, "file", None) in out for v in held):
        return None
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    from passhat.errors import InputError

    return InputError(
        f"standard output: cannot write ({error.strerror}); free some space, or send the "
        "output elsewhere"
    )


def _hard_exit(code: object) -> None:
    """End the process of a reading command now, its output flushed, without freeing
    what it built one object at a time: at 100,000 runs the interpreter's own
    teardown took 0.03 to 0.07 s of a 0.6 s `passhat report` (mypy's `hard_exit`
    does the same). Reading commands run none of a user's code and leave no file
    open, so no exit handler of theirs is skipped. Returns, for the usual exit, when
    the code is not a number or the output cannot be flushed (a closed pipe)."""
    if code is not None and not isinstance(code, int):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: let Python report it
        return
    os._exit(code or 0)


def __getattr__(name: str) -> Any:
    """`passhat.cli.app`: the application with every command (main() imports only the
    command it runs; see COMMANDS in _app.py)."""
    if name == "app":
        from passhat.cli import _app

        for module in sorted({m for m, _ in _app.COMMANDS.values()}):
            importlib.import_module(f"passhat.cli.{module}")
        return _app.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
