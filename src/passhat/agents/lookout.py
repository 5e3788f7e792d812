"""The look for answers in the folders a run sees, made before an experiment's first run
and brought up to date before each later one (CommandAgent.view, sandbox.covered;
executors/program.py makes one look).

What it looks for is covered in the run's view: secret-looking names (sandbox.is_secret)
and, by their content, passhat stores and their write-ahead logs (sandbox.is_store,
is_store_wal), the reports and exports passhat wrote (answers.is_report), and archives
holding any of them (agents/archives.py); and, by their mode, set-id files in the run's
`write:` folders: the filter (agents/seccomp.py) keeps a run from making one, but one
there already, the run's uid's to write, kept its bit through a write by a shared
mapping (mmap: write(2) clears it), with the agent's code in it
(tests/test_attack52_rewrite.py). Made once, before the first run, the look
missed what appeared after it: a second experiment started beside a long one made its
store and exports in a folder the first one's later runs saw. A Lookout keeps, for each
folder and file it looked at, its stat key (device, inode, size, mtime, ctime: ctime no
one can set back); before each run it stats them again and looks again only at what
changed: a folder whose key changed is listed again, a file whose key changed is read
again. A key within RACY_NS of the look's own time is not trusted (a file system stamps
times from a clock that ticks coarsely, so a file written twice in one tick keeps its
times): that entry is looked at again next time. What was found stays found while it
is the same file (inode and device) and no shorter: a store another experiment writes
on is not opened again before every run.

Not covered: a file made or changed in a folder in view while a run runs (its folders
are bound into its sandbox live), or in the moment between a run's look and its
sandbox's start. The next run's look covers it.

A look that runs out of descriptors or memory (answers.SCARCE: a run holding its
connections took passhat's last) raises and keeps nothing of itself: a folder it could
not list is not an empty one, nor a file it could not read none of passhat's. Nor is
one closed to passhat's user (EACCES): such a folder is covered whole and such a file
covered, not taken for none of passhat's. An unprivileged passhat's agent is its uid: it
opened a store by its name in a folder of mode --x (passed through, not listed), and in
a `write:` folder it chmod-ed open a store or a folder of mode 000, the owner's
(tests/test_attack53_closed.py).

Inside an installation (a folder named as one of sandbox.PACKAGES, site-packages,
dist-packages, node_modules: installed.py's rule) no name is secret (certifi's
cacert.pem), no file named as code is read (_CODE) nor archive opened: the look there
is for a store, log, report or export copied in (review51); past WALK_LIMIT entries in
installations the rest is left unlooked (a virtualenv's site-packages holds 32,000
entries: refusing it would refuse most views), as all of them were before; and a folder
there whose key is the same keeps its files as last read, not stat'ed again (a later
run's look of a virtualenv's first 20,000 entries: 8 ms of CPU, not 15): a file
rewritten in place there, its folder unchanged, is not read again.

Elsewhere the look is bounded, and fails closed at its bound: it goes as deep as the
folder goes (not through links, nor into secret-named folders, covered whole), and past
WALK_LIMIT entries in one folder in view
(counted while a folder is listed: a folder of millions is not listed whole) it raises
TooMuchToLook, naming the folder and the fix: refused at the experiment's start, that
run errored `isolation` and not started later (`agent_left` where the stop lies in a
`write:` folder of the run, walked after the rest of any folder holding it: the entries
an agent left there never make the stop fall in a folder of the host's; `isolation` still
where the host's part holds more entries than at the first look: its growth, not the
agent's, pushed the count past the bound in the agent's folder). A `.env` or a
store past the bound was left in view (round 12's outside attack: seven folders deep, or beside 20,000 files).

A look counts against its run's --timeout (it is made once the run has started); a
deadline that comes during it is the look's (`in_time`): the run is errored `isolation`,
naming the look, not `timeout`, which reads as an agent too slow; `agent_left` where the
look was then listing or reading what changed in one of the run's `write:` folders since
the last look (walked last: what an earlier run of the agent left), not where it only
passed through one as it was (a deadline the host's part brought near lands there too).
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from passhat.agents.answers import REPORT_HEAD, SCARCE, file_head, is_report
from passhat.agents.archives import (
    LOOK_S,
    LookStopped,
    TooMuchToLook,
    holds_answers,
    is_archive,
)
from passhat.agents.sandbox import (
    PACKAGES,
    SQLITE_MAGIC,
    WAL_MAGIC,
    WALK_LIMIT,
    is_secret,
    is_store,
    is_store_wal,
    store_files,
    under,
)
from passhat.agents.seccomp import SETID

GONE = frozenset({errno.ENOENT, errno.ENOTDIR})
"""A folder's listing failing so: it is no longer there (nothing to cover). Any other
failure but SCARCE is a folder closed to passhat's user: covered whole (_list)."""

RACY_NS = 2_000_000_000
"""How recent (before the look) a change must be for its stat key not to be trusted: file
systems stamp times from a coarse clock (a tick of 1-10 ms here; NFS takes the server's)."""

Key = tuple[int, ...]


@dataclass(frozen=True)
class _Folder:
    """A folder as last listed: its stat key (None: list it again), what it holds."""

    key: Key | None
    secrets: tuple[str, ...]
    """Paths of its entries with secret-looking names (covered whole, not looked into)."""
    folders: tuple[str, ...]
    """Paths of the folders below it the look goes into."""
    files: tuple[str, ...]
    """Paths of its other entries (read by their content)."""
    count: int
    """Its entries, as counted towards WALK_LIMIT."""


@dataclass(frozen=True)
class _File:
    """A file as last read: its stat key (None: read it again) and what it was."""

    key: Key | None
    kind: str
    """"store", "wal", "archive", "report", "setid" (a set-id file in a `write:` folder),
    "closed" (a file passhat's user may not read: not known to be none of these), or ""
    for none of these."""
    file: Key = ()
    """Its inode, device and size."""


def kind(path: str, archives: bool = True) -> str:
    """What the file at `path` is of passhat's: "store" (is_store), "wal" (the write-ahead
    log of one: is_store_wal), "archive" (one holding either, or a report: archives.py;
    not opened without `archives`), "report" (is_report: a report or export), else ""."""
    head = file_head(path, REPORT_HEAD)  # one read tells most files apart
    if head.startswith(SQLITE_MAGIC):
        return "store" if is_store(path) else ""
    if head[: len(WAL_MAGIC[0])] in WAL_MAGIC:
        return "wal" if is_store_wal(path) else ""
    if is_archive(head):
        return "archive" if archives and holds_answers(path) else ""
    return "report" if head and is_report(path, head) else ""


class Lookout:
    """The answers and secrets under one folder in view, looked for again on each `found`
    where something changed since the last look (module docstring)."""

    def __init__(
        self, folder: str, skip: frozenset[str] = frozenset(), last: tuple[str, ...] = ()
    ) -> None:
        self.folder = folder
        self.skip = skip
        """Paths not read (the experiment's own store: covered as protected, written on
        every run, and not worth a look each time)."""
        self.last = last
        """The run's `write:` folders: the folders inside them are walked after all the
        others, so a stop at the bound there is the agent's doing (the host's part was
        counted whole first), never one at a host's folder the agent's entries pushed."""
        self._host_start: int | None = None
        """The entries of the host's part (all but what lies in `last`) at the first whole
        walk: a stop in a write: folder with more of them now is the host's growth, not
        the agent's doing (its folder may be as it was at the start)."""
        self._folders: dict[str, _Folder] = {}
        self._files: dict[str, _File] = {}
        self._lock = threading.Lock()  # a Dask worker's threads may share an agent

    def found(self) -> list[str]:
        """The paths to cover under the folder now: secret-looking names, stores with
        their SQLite companions, write-ahead logs of stores, reports and exports."""
        at = _AT.get()
        if at is not None:  # waiting for another run's look of it is waiting on the folder
            at[:] = [self.folder]
        with self._lock:
            secrets = self._look()
            found = list(secrets)
            for path, seen in self._files.items():
                if seen.kind == "store":
                    found += store_files(path)  # a -wal made since is covered too
                elif seen.kind == "wal":
                    found += [path, *store_files(path.removesuffix("-wal"))]
                elif seen.kind:
                    found.append(path)
            return found

    def _look(self) -> list[str]:
        """Walk the folder (not into secret-named folders, nor through links, as os.walk
        would; past WALK_LIMIT entries TooMuchToLook, in PACKAGES' installations the rest
        of them left: module docstring), listing and reading
        again only what changed; keep what is there now. The secret-named paths found."""
        fresh = time.time_ns() - RACY_NS
        folders: dict[str, _Folder] = {}
        files: dict[str, _File] = {}
        secrets: list[str] = []
        seen = host = packed = 0
        installed: set[str] = set()  # the folders inside an installation (PACKAGES)
        stack: list[str] = [self.folder]
        later: list[str] = []
        known, stat_, last, at = self._files, os.stat, self.last, _AT.get()
        while stack or later:
            if not stack:  # the host's part walked: now what lies in a write: folder
                stack, later = later, []
            root = stack.pop()
            agents = bool(last) and under(root, last)
            if at is not None:  # in the agent's folder, only what changed is its doing
                at[:] = [] if agents else [root]
            grown = self._host_start is not None and host > self._host_start
            blame = "" if agents and grown else root  # the host's part grew: not the agent's
            changed = at if agents else None
            inside = root in installed
            if inside and packed >= WALK_LIMIT:
                continue  # past the installations' bound: not looked into, as before
            left = WALK_LIMIT - (packed if inside else seen)
            listed = self._list(root, fresh, left, blame, changed, inside)
            folders[root] = listed
            secrets += listed.secrets
            for path in reversed(listed.folders):  # in listing order, depth first
                if inside or os.path.basename(path) in PACKAGES:
                    installed.add(path)
                (later if last and under(path, last) else stack).append(path)
            # in an installation, a folder as it was keeps its files as they were (_SAME)
            same = inside and listed is self._folders.get(root)
            for path in listed.files:
                old = known.get(path)
                if same and old is not None and old.key is not None:
                    files[path] = old
                    continue
                try:  # a link's target: what the run would read through it
                    info = stat_(path)
                except OSError:
                    files[path] = _GONE
                    continue
                key = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_dev)
                if old is not None and (old.key == key or _grown(old, key)):  # kept tight
                    files[path] = old
                elif path not in self.skip:
                    if changed is not None:
                        changed[:] = [root]
                    writable = bool(last) and under(path, last)
                    files[path] = _read(path, info, key, fresh, writable, not inside)
            if inside:
                packed += listed.count
                continue
            seen += listed.count
            host += 0 if agents else listed.count
            if seen > WALK_LIMIT:
                raise _too_many(self.folder, root, blame)
        if at is not None:
            at.clear()  # past the walk: a deadline now is not the folder's
        self._folders, self._files = folders, files
        if self._host_start is None:
            self._host_start = host
        return secrets

    def _list(
        self,
        root: str,
        fresh: int,
        left: int,
        blame: str,
        changed: list[str] | None = None,
        inside: bool = False,
    ) -> _Folder:
        """The folder `root` as it is now (as last listed when its key is the same); past
        `left` entries TooMuchToLook (at `blame`: `root`, or "" for the host's growth),
        before the rest is listed. `changed` (in_time's note) is set to `root` when it is
        listed again: changed since the last look. `inside` an installation: no name is
        secret, code is not read (_CODE), and past `left` the rest is not looked at."""
        try:
            info = os.stat(root, follow_symlinks=False)
        except OSError:
            return _Folder(None, (), (), (), 0)
        key = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        old = self._folders.get(root)
        if old is not None and old.key == key:
            return old
        if changed is not None:
            changed[:] = [root]
        secrets: list[str] = []
        folders: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(root) as entries:
                for count, entry in enumerate(entries):
                    if count >= left and inside:
                        return _Folder(None, (), tuple(folders), tuple(files), count)
                    if count >= left:
                        raise _too_many(self.folder, root, blame)
                    path = os.path.join(root, entry.name)
                    if is_secret(entry.name) and not inside:
                        secrets.append(path)
                    elif not _is_dir(entry):
                        if not (inside and entry.name.endswith(_CODE)):
                            files.append(path)
                    elif not entry.is_symlink():
                        folders.append(path)
        except OSError as error:
            if error.errno in SCARCE:  # not looked at: not "holds nothing" (nor kept so)
                raise
            if error.errno not in GONE:  # closed to passhat's user: covered whole, as a
                # store is (a folder of mode --x is passed through to a name, one in a
                # write: folder chmod-ed open by the agent, its owner's uid)
                return _Folder(None, (root,), (), (), 1)
        count = len(secrets) + len(folders) + len(files)
        trusted = key if info.st_ctime_ns < fresh else None
        return _Folder(trusted, tuple(secrets), tuple(folders), tuple(files), count)


def _too_many(folder: str, where: str, blame: str) -> TooMuchToLook:
    return TooMuchToLook(
        f"{folder}: the agent's view holds more than {WALK_LIMIT:,} files and folders here "
        f"(counted as far as {where}), more than the look for passhat's answers reads "
        "before a run; give the agent narrower read and write paths (its read: and write:, "
        "--agent-read, --agent-write) or move what it need not see out of this folder",
        blame,
    )


_GONE = _File((), "")
"""A file that cannot be stat'ed (a dangling link): nothing to read."""


_CODE = (".py", ".pyc", ".pyi", ".so", ".h", ".c", ".js", ".cjs", ".mjs", ".ts", ".map")
"""Inside an installation, files so named are not read (its bulk: 26,000 of 32,000 entries
of a virtualenv's site-packages, 1,150 of 1,450 of a global node_modules)."""


def _read(
    path: str, info: os.stat_result, key: Key, fresh: int, writable: bool, archives: bool = True
) -> _File:
    """What the file at `path` is (`kind`; "setid" for a set-id one the run may write);
    an archive is not opened without `archives` (one inside an installation)."""
    regular = stat.S_ISREG(info.st_mode)
    if regular and writable and info.st_mode & SETID:
        found = "setid"
    elif regular and not os.access(path, os.R_OK):
        found = "closed"  # not read, so not known to be none of passhat's: covered
    else:
        found = kind(path, archives) if regular else ""
    return _File(key if info.st_ctime_ns < fresh else None, found, (*key[::4], key[1]))


def _grown(old: _File, key: Key) -> bool:
    """Whether a file found of passhat's is the same file (inode, device), no shorter: a
    store or log another experiment writes on, kept found without being read again. (A
    file made anew at its name, or cut short, is read again.)"""
    same = old.file[:2] == key[::4] and key[1] >= old.file[2]
    return old.kind not in ("", "setid", "closed") and same  # a mode is looked at again


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a link to a folder counts as one (not gone into)
    except OSError:
        return False


class Looks:
    """A Lookout per folder in view, kept between the runs of one experiment: `found` is
    sandbox.covered's `look`. `skip`: paths never read (Lookout.skip); `last`: the run's
    `write:` folders, walked last inside any folder that holds one (Lookout.last)."""

    def __init__(self, skip: Iterable[str] = (), last: Iterable[str] = ()) -> None:
        self._lookouts: dict[str, Lookout] = {}
        self._skip = frozenset(skip)
        self._last = tuple(last)

    def found(self, folder: str) -> list[str]:
        lookout = self._lookouts.get(folder)
        if lookout is None:
            lookout = self._lookouts.setdefault(folder, Lookout(folder, self._skip, self._last))
        return lookout.found()


T = TypeVar("T")


class LookOutOfTime(LookStopped):
    """The run's deadline came during its look for answers, `where` the look was then;
    `error_type` is what the run records (execution keeps it in place of `timeout`)."""


_AT: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("look_at", default=None)
"""The folder a look made by `in_time` is in now (a one-item list, empty between folders),
set by Lookout's walk in the look's thread (asyncio.to_thread hands it this context)."""


async def in_time(
    look: Callable[..., T],
    *args: object,
    folders: Callable[[], tuple[Sequence[str], Sequence[str]]] = lambda: ((), ()),
) -> T:
    """`look(*args)` off the loop (a stat of all in a run's view), its run's deadline
    during it made the look's error (LookOutOfTime, naming the folder it was in) instead
    of a cancel: the agent's (`agent_left`, LookStopped.left_in) where that folder lies in
    one of the run's `write:` folders, as `folders` (its read: and write:, asked only
    then: CommandAgent.extra_paths) gives them."""
    at: list[str] = []
    token = _AT.set(at)
    try:
        return await asyncio.to_thread(look, *args)
    except asyncio.CancelledError:
        raise LookOutOfTime(
            "the run's --timeout ended during its look for answers in the folders it sees "
            f"(up to {LOOK_S:g} s at --isolation namespace, with large archives in view); "
            "the run was not started: give --timeout more, or the agent fewer folders",
            at[0] if at else "",
        ).left_in(folders()[1]) from None
    finally:
        _AT.reset(token)


def secret_files(folder: str) -> list[str]:
    """Secret-looking files and folders under `folder` (.env*, .git, .aws, *.pem, ...),
    passhat stores (is_store: an earlier experiment's answers) and reports and exports
    (is_report: the same answers, as JSON, HTML, CSV, Parquet or text), whatever their
    names, looked for as deep as `folder` goes (inside an installation, PACKAGES, for
    answers alone), at most WALK_LIMIT entries (past them TooMuchToLook; in
    installations, the rest unlooked): one look, kept nowhere
    (Lookout.found)."""
    return Lookout(folder).found()


__all__ = ["RACY_NS", "LookOutOfTime", "Lookout", "Looks", "in_time", "kind", "secret_files"]
