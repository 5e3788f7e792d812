"""What tells passhat's own files among those of a folder a run would see, by their content
(never by their names): the reports and exports it wrote (`report --json`, `--html`,
`--junit-xml`, the terminal report kept as text, `show`/`diff`/`why --json`, `export`
as JSON Lines, CSV or Parquet), each naming the goal's items, and the safe read of a
file's first bytes that the look for them (agents/lookout.py, sandbox.is_store)
makes: regular files only, checked before the open.
"""

from __future__ import annotations

import errno
import os
import re
import stat

SCARCE = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
"""Errors that say passhat is out of descriptors or memory, nothing of the file: raised
on, never taken for "none of passhat's". A run holding its 128 connections under a low
`ulimit -n` took every descriptor, and a look made then covered nothing, for good
(agents/lookout.py, tests/test_attack50_descriptors.py)."""


def regular_fd(path: str) -> int | None:
    """`path` opened for reading when it is a regular file (None otherwise). A FIFO, a
    socket or a device, or a link to one (a run may leave links in a `write:` folder), is
    never opened: opening some has effects (/dev/watchdog starts the watchdog, a tape
    rewinds, a FIFO frees its writer, one without a writer would block the look). stat
    before the open, and fstat after it for a file swapped in between. OSError when
    passhat is out of descriptors or memory (SCARCE)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as error:
        if error.errno in SCARCE:
            raise
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def file_head(path: str, size: int) -> bytes:
    """The first `size` bytes of `path` when it is a regular file, else b"" (regular_fd;
    OSError when passhat is out of descriptors or memory: SCARCE)."""
    fd = regular_fd(path)
    if fd is None:
        return b""
    try:
        return os.read(fd, size)
    except OSError as error:
        if error.errno in SCARCE:
            raise
        return b""
    finally:
        os.close(fd)


REPORT_HEAD = 4096
_REPORT_JSON = re.compile(
    rb'\A\s*\{\s*(?:"experiment"\s*:\s*(?:\{\s*"id"\s*:\s*"[0-9a-f]+"'  # report --json
    rb'|"[0-9a-f]+"\s*,\s*"(?:experiment_name|runs)")'  # export, why --json
    rb'|"experiment_id"\s*:\s*"[0-9a-f]+"\s*,\s*"case_id"'  # show --json
    rb'|"case"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"a"\s*:\s*\{\s*"experiment"\s*:\s*"[0-9a-f]+")'  # diff
)
_REPORT_XML = (
    re.compile(rb'<property name="experiment" value="[0-9a-f]+"'),
    re.compile(rb'<property name="fingerprint" value="[0-9a-f]+"'),
)
_REPORT_HTML = re.compile(rb'<meta name="generator" content="passhat [0-9]')
_EXPORT_CSV = b"experiment,experiment_name,kind,model,fingerprint,case,run,status,"
_REPORT_TEXT = (
    re.compile(rb"^[ \t]*(?:experiment|" + "實驗".encode() + rb")[ \t]+[0-9a-f]{8,}[ \t]*$", re.M),
    re.compile(rb"^[ \t]*(?:fingerprint|" + "指紋".encode() + rb")[ \t]+[0-9a-f]{16}\b", re.M),
)
_PARQUET = b"PAR1"
PARQUET_MARKS = (b"verdict_details", b"fingerprint", b"experiment_name")
PARQUET_FOOTER = 1 << 20
"""What tells passhat's own reports and exports from an agent's files, whatever their
names, in their first bytes: `report --json` starts with its experiment's head
(`{"experiment": {"id": "<hex>"`), `export` as JSON Lines with its first row's
(`{"experiment": "<hex>", "experiment_name"`), as CSV with the run table's header;
`why`, `show` and `diff --json` with their own heads; `--junit-xml` with its
experiment and fingerprint properties;
`report --html` names passhat and its version as its generator in its <head>; the terminal report kept
as text starts with its experiment's id and fingerprint lines (in English or zh-TW);
`export` as Parquet names the run table's columns in its footer (read up to 1 MiB)."""


def is_report(path: str, head: bytes | None = None) -> bool:
    """Whether `path` is a report or an export passhat wrote (`report --json`, `--html`,
    `--junit-xml`, the terminal report, `show`/`diff`/`why --json`, `export` of the
    runs), kept under any name: each names the
    goal's items, as the store it came from does. `head`: its first REPORT_HEAD bytes,
    when read already."""
    head = file_head(path, REPORT_HEAD) if head is None else head
    if head.startswith(_PARQUET):
        return _parquet_of_runs(path)
    return is_report_head(head)


def is_report_head(head: bytes) -> bool:
    """Whether a file's first REPORT_HEAD bytes are those of a report or export passhat
    wrote (a Parquet file's tell is in its footer: is_report reads it)."""
    return (
        _REPORT_JSON.match(head) is not None
        or _REPORT_HTML.search(head) is not None
        or all(pattern.search(head) is not None for pattern in _REPORT_XML)
        or head.lstrip(b"\xef\xbb\xbf").startswith(_EXPORT_CSV)
        or all(pattern.search(head) is not None for pattern in _REPORT_TEXT)
    )


def _parquet_of_runs(path: str) -> bool:
    """Whether the Parquet file at `path` holds passhat's run table (its footer, the
    schema, names its columns)."""
    fd = regular_fd(path)
    if fd is None:
        return False
    try:
        info = os.fstat(fd)
        if info.st_size < 12:
            return False
        end = os.pread(fd, 8, info.st_size - 8)
        size = int.from_bytes(end[:4], "little")
        if end[4:] != _PARQUET or size > min(PARQUET_FOOTER, info.st_size - 12):
            return False
        footer = os.pread(fd, size, info.st_size - 8 - size)
        return all(mark in footer for mark in PARQUET_MARKS)
    except OSError:
        return False
    finally:
        os.close(fd)


__all__ = [
    "PARQUET_MARKS",
    "REPORT_HEAD",
    "SCARCE",
    "file_head",
    "is_report",
    "is_report_head",
    "regular_fd",
]
