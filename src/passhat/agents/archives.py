"""What an archive in a folder a run sees holds of passhat's: a store, the write-ahead log
of one, or a report or export passhat wrote, inside a .zip (stored or compressed), a
.tar, or a .tar or a bare file compressed with gzip, bzip2 or xz (.tar.gz, .tgz, .gz of a
store), told by their content, never by their names. The look for answers
(agents/lookout.py) covers such an archive: a run could unpack an earlier experiment's
answers from it.

The look is bounded, in memory, nothing extracted: it reads each member's first bytes
only (ARCHIVE_HEAD of most; a store's first pages, a log's first MiB, a Parquet file of
at most 1 MiB whole, as a file outside an archive is told; a database whose schema
outgrew its first page, as a store migrated after it held runs has, on to the pages of
its schema that page lists: `_schema`), looks at the first
ARCHIVE_MEMBERS members, reads at most ARCHIVE_BYTES (from the file and out of its
decompressors, counted together) and stops after ARCHIVE_LOOK_S. A zip bomb, an archive
of 100,000 members or a member that says it holds a terabyte cannot hold the look or
fill memory, and a FIFO or device named .zip is never opened (answers.regular_fd). What
lies past the bound is not looked at, nor is an archive inside an archive.

One whole look (`whole_look`: the look before a run, across the folders in view) is
bounded too, LOOK_BYTES and LOOK_S across all the archives it reads: 300 large archives
in view took ~36 s before the first run. Past it the run is refused (TooMuchToLook, one
line naming the folder and the fix) rather than started with archives not looked into.
"""

from __future__ import annotations

import bz2
import contextlib
import io
import lzma
import os
import struct
import tarfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence

from passhat.agents.answers import (
    PARQUET_MARKS,
    REPORT_HEAD,
    SCARCE,
    is_report_head,
    regular_fd,
)
from passhat.agents.sandbox import (
    SQLITE_MAGIC,
    STORE_HEAD,
    STORE_MARKS,
    WAL_HEAD,
    WAL_MAGIC,
    under,
)
from passhat.errors import ConfigError

ARCHIVE_MEMBERS = 10_000
ARCHIVE_BYTES = 64 << 20
ARCHIVE_LOOK_S = 1.0
"""The bound of the look into one archive: members looked at, bytes read (compressed and
decompressed together), seconds."""
PARQUET_WHOLE = 1 << 20
"""A Parquet member up to this size is read whole (its tell is in its footer)."""

_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP, _BZIP2, _XZ = b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"
_USTAR = b"ustar"  # at offset 257 of a tar's first header


LOOK_BYTES = 2 << 30
LOOK_S = 10.0
"""The bound of one whole look (`whole_look`: every archive looked into before a run, in
every folder in view): bytes read and seconds spent inside archives, together. 300
archives of 64 MiB each took ~36 s before the first run; past this bound the run is
refused (`TooMuchToLook`), never started with archives not looked into."""


class _Past(Exception):
    """The look's bound is reached."""


class LookStopped(Exception):
    """A run's look for answers stopped before the run started, `where` it was (a folder it
    listed, or an archive; "" for nowhere known): the run is errored `isolation`
    (error_type: what execution records), passhat's failure, unless `left_in` says the
    agent's."""

    error_type = "isolation"

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where

    def left_in(self, write: Sequence[str]) -> LookStopped:
        """This error, or where the look stopped inside one of the run's `write:` folders
        (all within the bound at the experiment's start, else it was refused then; walked
        after the rest of any folder holding one, lookout.Lookout.last), the same error as
        the agent's (`agent_left`): an earlier run of the agent left it there, and this
        run's loss is the agent's doing, not passhat's."""
        if not self.where or not under(self.where, write):
            return self
        left = type(self)(
            f"{self}; it lies in the agent's write: folder, filled by an earlier run of the "
            "agent since the experiment started, so this run was not started",
            self.where,
        )
        left.error_type = "agent_left"
        return left


class TooMuchToLook(LookStopped, ConfigError):
    """The look for answers reached its bound: the archives in view cost more than one
    whole look's (LOOK_BYTES, LOOK_S), or a folder in view holds more than
    sandbox.WALK_LIMIT entries (agents/lookout.py). At the experiment's start a refusal
    (a ConfigError, one line); raised in a later run's look, that run is errored
    `isolation` (or `agent_left`: LookStopped), not started, never left uncovered.
    `where`: the path the look stopped at (a folder it listed, or an archive)."""


MAX_COVERS = 2_000
"""Paths one run's view may cover (3 of bwrap's arguments each; bwrap takes at most
9,000 in all): 3,000 `.env` files an earlier run left in its `write:` folder made the
next run's bwrap refuse its arguments, and every later run was errored `isolation`,
passhat's failure (tests/test_attack53_covers.py)."""


def check_covers(hide: Sequence[str], write: Sequence[str]) -> None:
    """TooMuchToLook when `hide` holds more than MAX_COVERS paths: at one lying in a
    `write:` folder (the agent's, LookStopped.left_in) when the host's own are within it."""
    if len(hide) <= MAX_COVERS:
        return
    host = [p for p in hide if not under(p, write)]
    where = "" if len(host) > MAX_COVERS else next(p for p in hide if under(p, write))
    raise TooMuchToLook(
        f"{where or host[0]}: the agent's view holds more than {MAX_COVERS:,} files to cover "
        "(secret-looking names, passhat's stores, reports and exports), more than a sandbox "
        "takes; give the agent narrower read and write paths or move them out of its view",
        where,
    )


class _Whole:
    """What is left of one whole look (`whole_look`), spent by each archive's budget."""

    def __init__(self) -> None:
        self.bytes = LOOK_BYTES
        self.seconds = LOOK_S
        self.archives = 0


_LOOK = threading.local()
"""The whole look this thread makes now (`whole_look`), if any."""


@contextlib.contextmanager
def whole_look() -> Iterator[None]:
    """Every archive looked into within this block (on this thread) spends one bound
    (LOOK_BYTES, LOOK_S) as well as its own: past it, `holds_answers` raises TooMuchToLook
    naming the archive's folder. Nested blocks share the outermost one's bound."""
    if getattr(_LOOK, "whole", None) is not None:
        yield
        return
    _LOOK.whole = _Whole()
    try:
        yield
    finally:
        _LOOK.whole = None


class _Beyond(Exception):
    """The whole look's bound is reached (not only this archive's)."""


class _Budget:
    def __init__(self, whole: _Whole | None = None) -> None:
        self.whole = whole
        self.started = time.monotonic()
        self.left = ARCHIVE_BYTES
        self.deadline = self.started + ARCHIVE_LOOK_S
        self.spent = 0

    def spend(self, size: int) -> None:
        self.left -= size
        now = time.monotonic()
        whole = self.whole
        if whole is not None:
            self.spent += size
            if self.spent > whole.bytes or now - self.started > whole.seconds:
                raise _Beyond
        if self.left < 0 or now > self.deadline:
            raise _Past

    def end(self) -> None:
        """This archive's look is over: what it spent leaves the whole look."""
        if self.whole is not None:
            self.whole.bytes -= self.spent
            self.whole.seconds -= time.monotonic() - self.started
            self.whole.archives += 1


class _Counted(io.RawIOBase):
    """A stream read through a budget: every read spends what it returns (and a read
    past the budget is refused before it is made)."""

    def __init__(self, read: Callable[[int], bytes], budget: _Budget) -> None:
        self._read = read
        self._budget = budget
        self._ends = 0
        self._left = budget.left

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        want = min(len(buffer), 1 << 16)
        if want > self._budget.left:
            raise _Past
        data = self._read(want)
        self._budget.spend(len(data))
        if not data:
            # read on past the end: a tar member said it was longer. (gzip's reader asks
            # its file again at each step after the file's end while its output goes on:
            # an end met after bytes were spent elsewhere starts the count again)
            self._ends = 1 if self._budget.left != self._left else self._ends + 1
            self._left = self._budget.left
            if self._ends > 8:
                raise _Past
        buffer[: len(data)] = data
        return len(data)


def is_archive(head: bytes) -> bool:
    """Whether a file's first bytes are those of an archive the look opens."""
    return head.startswith((*_ZIP, _GZIP, _BZIP2, _XZ)) or head[257 : 257 + len(_USTAR)] == _USTAR


def holds_answers(path: str) -> bool:
    """Whether the archive at `path` (a regular file) holds one of passhat's stores, logs,
    reports or exports among what the bound lets the look see (module docstring); OSError
    when passhat is out of descriptors or memory (answers.SCARCE), never a False for it."""
    fd = regular_fd(path)
    if fd is None:
        return False
    budget = _Budget(getattr(_LOOK, "whole", None))
    try:
        head = os.pread(fd, REPORT_HEAD, 0)
        if head.startswith(_ZIP):
            return _zip(fd, budget)
        if head.startswith((_GZIP, _BZIP2, _XZ)):
            return _compressed(fd, head, budget)
        return _tar(_raw(fd, budget))
    except OSError as error:
        if error.errno in SCARCE:  # not looked into: not "holds nothing" (lookout.py)
            raise
        return False  # bz2's and gzip's bad data, a read that failed: none of passhat's
    except (_Past, EOFError, ValueError, struct.error, zlib.error, lzma.LZMAError):
        return False  # past the bound, or not what it seemed: looked at no further
    except (tarfile.TarError, OverflowError):  # OverflowError: an offset past 2**63
        return False  # past the bound, or not what it seemed: looked at no further
    except _Beyond:
        raise _too_much(path, budget) from None
    finally:
        os.close(fd)
        budget.end()


def _too_much(path: str, budget: _Budget) -> TooMuchToLook:
    whole = budget.whole
    looked = whole.archives if whole is not None else 0
    return TooMuchToLook(
        f"{os.path.dirname(path) or '.'}: the archives in the agent's view (here "
        f"{os.path.basename(path)}, after {looked} others) take more than the look for "
        f"passhat's answers allows before a run ({LOOK_BYTES >> 20:,} MiB read or "
        f"{LOOK_S:g} s); move archives out of the folders the agent sees, or give it a "
        "narrower read path (the agent's read, --agent-read)",
        path,
    )


def is_answer(head: bytes, size: int | None = None) -> bool:
    """Whether a member's first bytes are a passhat store's (its tables on its first
    pages), a store's log's, a report's or an export's (a Parquet one read whole)."""
    if head.startswith((SQLITE_MAGIC, *WAL_MAGIC)):
        return all(mark in head for mark in STORE_MARKS)
    if head.startswith(b"PAR1"):
        return size is not None and len(head) >= size and all(m in head for m in PARQUET_MARKS)
    return is_report_head(head[:REPORT_HEAD])


def _wanted(first: bytes, size: int | None) -> int:
    """How much of a member to read, told by its first bytes."""
    if first.startswith(SQLITE_MAGIC):
        return STORE_HEAD
    if first.startswith(WAL_MAGIC):
        return WAL_HEAD
    if first.startswith(b"PAR1") and size is not None and size <= PARQUET_WHOLE:
        return size
    return REPORT_HEAD


def _member(read: Callable[[int], bytes], size: int | None) -> bool:
    """Read a member's head through `read` (its decompressed bytes, from its start)."""
    head = read(REPORT_HEAD)
    want = _wanted(head, size)
    if want > len(head) and len(head) == REPORT_HEAD:
        head += read(want - len(head))
    if is_answer(head, size):
        return True
    return head.startswith(SQLITE_MAGIC) and len(head) == STORE_HEAD and _schema(head, read, size)


_INTERIOR, _PAGE_ONE = 0x05, 100  # a table b-tree's interior page; page 1's b-tree header
SCHEMA_PAGES = 1_000
"""Pages of a database's schema the look goes to, at most (passhat's takes a few)."""


def _schema(head: bytes, read: Callable[[int], bytes], size: int | None) -> bool:
    """Whether passhat's tables are named on the schema's pages of a database whose first
    STORE_HEAD bytes are `head`, read on through `read`. The schema (sqlite_master) is a
    b-tree rooted at page 1; a schema that outgrew that page (a store migrated after it
    held runs: its tables' texts rewritten on pages at its end) makes page 1 an interior
    page listing the pages that hold it. Those are read, in order, what lies between
    them read through and dropped, within the look's bound; one of them that is an
    interior page adds those it lists that are in the head or still ahead, up to
    SCHEMA_PAGES pages. (`size`: the member's, when its archive says it.)"""
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1) or head[_PAGE_ONE] != _INTERIOR:
        return False  # not a database, or its whole schema on page 1: looked at
    found = {mark for mark in STORE_MARKS if mark in head}
    at = len(head)
    seen: set[int] = set()
    ahead = sorted(set(_children(head, _PAGE_ONE, page)))
    while ahead and len(found) < len(STORE_MARKS) and len(seen) < SCHEMA_PAGES:
        number = ahead.pop(0)
        seen.add(number)
        start = (number - 1) * page
        if start + page <= len(head):
            text = head[start : start + page]  # its marks counted with the head's
        elif start < at or (size is not None and start + page > size):
            continue  # behind, or past the member's end
        else:
            while at < start:  # read through, dropped
                skipped = read(min(1 << 20, start - at))
                if not skipped:
                    return False
                at += len(skipped)
            text = _exactly(read, page)
            at += len(text)
            found.update(mark for mark in STORE_MARKS if mark in text)
        if len(text) == page and text[0] == _INTERIOR:
            listed = _children(text, 0, page)
            more = {
                n
                for n in listed
                if n not in seen and ((n - 1) * page >= at or n * page <= len(head))
            }
            ahead = sorted({*ahead, *more})[:SCHEMA_PAGES]
    return len(found) == len(STORE_MARKS)


def _children(data: bytes, at: int, page: int) -> list[int]:
    """The page numbers an interior table b-tree page lists (its header at `at` of
    `data`, the page itself: cells point from its start)."""
    cells = int.from_bytes(data[at + 3 : at + 5], "big")
    pointers = data[at + 12 : at + 12 + 2 * cells]
    children = [int.from_bytes(data[at + 8 : at + 12], "big")]
    for index in range(0, len(pointers) - 1, 2):
        cell = int.from_bytes(pointers[index : index + 2], "big")
        if cell + 4 <= min(len(data), page):
            children.append(int.from_bytes(data[cell : cell + 4], "big"))
    return [n for n in children if n >= 2]


def _exactly(read: Callable[[int], bytes], size: int) -> bytes:
    """`size` bytes through `read` (fewer at the member's end)."""
    data = read(size)
    while 0 < len(data) < size:
        more = read(size - len(data))
        if not more:
            break
        data += more
    return data


class _File(_Counted):
    """The archive's file, read (pread) and sought through the budget: a tar's members'
    data are passed over, not read."""

    def __init__(self, fd: int, budget: _Budget) -> None:
        super().__init__(self._pread, budget)
        self._fd, self._at = fd, 0

    def _pread(self, size: int) -> bytes:
        data = os.pread(self._fd, size, self._at)
        self._at += len(data)
        return data

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._at, os.SEEK_END: os.fstat(self._fd).st_size}
        self._at = base[whence] + offset
        return self._at

    def tell(self) -> int:
        return self._at


def _raw(fd: int, budget: _Budget) -> io.BufferedReader:
    return io.BufferedReader(_File(fd, budget), 1 << 16)


def _tar(stream: io.BufferedIOBase, sought: bool = True) -> bool:
    """The members of a tar, nothing written: what is passed over is sought over, or, in
    a compressed stream (not `sought`), read through."""
    with (
        tarfile.open(fileobj=stream, mode="r:")
        if sought
        else tarfile.open(fileobj=stream, mode="r|") as tar
    ):
        for count, member in enumerate(tar):
            if count >= ARCHIVE_MEMBERS:
                raise _Past
            data = tar.extractfile(member) if member.isfile() else None
            if data is not None and _member(data.read, member.size):
                return True
            # what was looked at is not kept: 100,000 members take no memory
            tar.members = []  # type: ignore[attr-defined]
    return False


def _compressed(fd: int, head: bytes, budget: _Budget) -> bool:
    """A gzip, bzip2 or xz stream: a tar inside it, else the one file it holds."""

    def opened() -> io.BufferedReader:
        raw = _raw(fd, budget)
        inner: io.BufferedIOBase
        if head.startswith(_GZIP):
            import gzip

            inner = gzip.GzipFile(fileobj=raw, mode="rb")
        elif head.startswith(_BZIP2):
            inner = bz2.BZ2File(raw)
        else:
            inner = lzma.LZMAFile(raw)  # noqa: SIM115 (over an fd holds_answers closes)
        return io.BufferedReader(_Counted(inner.read, budget), 1 << 16)

    first = opened().read(REPORT_HEAD)
    if first[257 : 257 + len(_USTAR)] == _USTAR:
        return _tar(opened(), sought=False)
    return _member(opened().read, None)


_EOCD = struct.Struct("<4s4H2IH")
_ZIP64_LOCATOR = struct.Struct("<4sIQI")
_ZIP64_EOCD = struct.Struct("<4sQ2H2I4Q")
_CENTRAL = struct.Struct("<4s6H3I5H2I")
_LOCAL = struct.Struct("<4s5H3I2H")
_DEFLATED, _BZIP2ED = 8, 12


def _zip(fd: int, budget: _Budget) -> bool:
    """A zip's members, from its central directory, read where they lie (pread)."""
    size = os.fstat(fd).st_size
    tail_at = max(0, size - (_EOCD.size + 0xFFFF))
    tail = os.pread(fd, size - tail_at, tail_at)
    budget.spend(len(tail))
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        return False
    _, _, _, _, count, directory_size, directory_at, _ = _EOCD.unpack_from(tail, at)
    if at >= _ZIP64_LOCATOR.size and tail[at - _ZIP64_LOCATOR.size :].startswith(b"PK\x06\x07"):
        _, _, record_at, _ = _ZIP64_LOCATOR.unpack_from(tail, at - _ZIP64_LOCATOR.size)
        record = os.pread(fd, _ZIP64_EOCD.size, record_at)
        if len(record) == _ZIP64_EOCD.size and record.startswith(b"PK\x06\x06"):
            fields = _ZIP64_EOCD.unpack(record)
            count, directory_size, directory_at = fields[7], fields[8], fields[9]
    if directory_size > budget.left:
        directory_size = budget.left  # the first members' entries only
    directory = os.pread(fd, directory_size, directory_at)
    budget.spend(len(directory))
    offset = 0
    for _ in range(min(count, ARCHIVE_MEMBERS)):
        if offset + _CENTRAL.size > len(directory):
            break
        entry = _CENTRAL.unpack_from(directory, offset)
        if entry[0] != b"PK\x01\x02":
            break
        flags, method, packed, unpacked = entry[3], entry[4], entry[8], entry[9]
        name_size, extra_size, comment_size, local_at = entry[10], entry[11], entry[12], entry[16]
        extra_at = offset + _CENTRAL.size + name_size
        extra = directory[extra_at : extra_at + extra_size]
        packed, unpacked, local_at = _zip64_sizes(extra, packed, unpacked, local_at)
        offset += _CENTRAL.size + name_size + extra_size + comment_size
        if flags & 1 or unpacked == 0:  # encrypted, or empty (a folder)
            continue
        if _zip_member(fd, budget, method, packed, unpacked, local_at):
            return True
    return False


def _zip64_sizes(extra: bytes, packed: int, unpacked: int, local_at: int) -> tuple[int, int, int]:
    """Sizes and offset a zip64 member keeps in its extra field (id 1)."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, at)
        if tag == 1:
            values = list(struct.unpack_from(f"<{length // 8}Q", extra, at + 4))
            if unpacked == 0xFFFFFFFF and values:
                unpacked = values.pop(0)
            if packed == 0xFFFFFFFF and values:
                packed = values.pop(0)
            if local_at == 0xFFFFFFFF and values:
                local_at = values.pop(0)
            break
        at += 4 + length
    return packed, unpacked, local_at


def _zip_member(
    fd: int, budget: _Budget, method: int, packed: int, unpacked: int, local_at: int
) -> bool:
    header = os.pread(fd, _LOCAL.size, local_at)
    budget.spend(len(header))
    if len(header) < _LOCAL.size or not header.startswith(b"PK\x03\x04"):
        return False
    fields = _LOCAL.unpack(header)
    start = local_at + _LOCAL.size + fields[9] + fields[10]
    if method == 0:
        return _member(_Slice(fd, budget, start, packed).read, unpacked)
    if method not in (_DEFLATED, _BZIP2ED):
        return False  # lzma, zstd...: not looked into
    return _member(_Inflated(_Slice(fd, budget, start, packed), method).read, unpacked)


class _Slice:
    """`size` bytes of the file from `start`, read through the budget."""

    def __init__(self, fd: int, budget: _Budget, start: int, size: int) -> None:
        self.fd, self.budget, self.at, self.end = fd, budget, start, start + size

    def read(self, size: int) -> bytes:
        size = min(size, self.end - self.at)
        if size <= 0:
            return b""
        if size > self.budget.left:
            raise _Past
        data = os.pread(self.fd, size, self.at)
        self.budget.spend(len(data))
        self.at += len(data)
        return data


class _Inflated:
    """A member's decompressed bytes, never more at a time than asked for (a bomb's
    output is never made)."""

    def __init__(self, packed: _Slice, method: int) -> None:
        self.packed = packed
        self.zlib = zlib.decompressobj(-15) if method == _DEFLATED else None
        self.bz2 = bz2.BZ2Decompressor() if method == _BZIP2ED else None

    def read(self, size: int) -> bytes:
        out = b""
        while len(out) < size:
            if self.zlib is not None and not self.zlib.eof:
                chunk = self.zlib.unconsumed_tail or self.packed.read(1 << 16)
                if not chunk:
                    break
                data = self.zlib.decompress(chunk, size - len(out))
            elif self.bz2 is not None and not self.bz2.eof:
                chunk = self.packed.read(1 << 16) if self.bz2.needs_input else b""
                if self.bz2.needs_input and not chunk:
                    break
                data = self.bz2.decompress(chunk, size - len(out))
            else:
                break
            self.packed.budget.spend(len(data))  # and the clock: a bomb of empty blocks
            out += data
        return out


__all__ = ["ARCHIVE_BYTES", "ARCHIVE_LOOK_S", "ARCHIVE_MEMBERS", "holds_answers", "is_archive"]
