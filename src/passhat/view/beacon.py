"""Where a running `passhat view` can be found, so `passhat run` can say where to watch.

The view writes one small file per store it serves (its URL and pid) in a folder of
this user's alone under the temporary directory, and removes it when it stops; `run`
reads it. `--open` leaves the browser a page there that leads to the URL, so the token
is on no command line. A folder of that name another user made first is neither
written in nor believed. Nothing is written to the store, which the view only reads.
Light on purpose: `passhat run` imports it, and nothing of the web app.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _folder() -> Path:
    return Path(tempfile.gettempdir()) / f"passhat-view-{os.getuid()}"


def beacon_path(db: Path) -> Path:
    """The file that names the view of the store at `db`."""
    key = hashlib.sha256(str(db.resolve()).encode()).hexdigest()[:24]
    return _folder() / f"{key}.json"


def _ours(folder: Path) -> bool:
    """Whether `folder` is a folder (not a link to one) of this user's own."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


@contextlib.contextmanager
def announced(db: Path, url: str) -> Iterator[Path]:
    """The beacon of the view of `db` at `url`, for as long as the block runs."""
    folder = _folder()
    folder.mkdir(mode=0o700, exist_ok=True)
    path = beacon_path(db)
    if not _ours(folder):  # made first by another user (its name is foreseeable): not
        yield path  # written in, nor followed into where its links lead; not announced
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    descriptor = os.open(path, flags, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump({"url": url, "pid": os.getpid()}, file)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
        path.with_suffix(".html").unlink(missing_ok=True)


def opening_page(db: Path, url: str) -> str:
    """What `--open` hands the browser: a page of this user's alone (0600, beside the
    beacon) that leads to `url`, so the token is on no command line (a browser's is
    readable by every local user in /proc). `url` without its token where the folder
    is not ours: the page it opens says to open the printed URL."""
    path = beacon_path(db).with_suffix(".html")
    if not _ours(path.parent):
        return url.partition("?")[0]
    quoted = html.escape(url, quote=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as file:
        file.write(
            f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={quoted}">'
            f'<title>passhat view</title><p><a href="{quoted}">Open the passhat view</a></p>\n'
        )
    return path.as_uri()


def view_of(db: Path) -> str | None:
    """The URL of a running view of the store at `db` (its token included), if any."""
    path = beacon_path(db)
    if not _ours(path.parent):
        return None  # none, or a folder another user made: not ours to believe
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        url, pid = str(data["url"]), int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    from passhat._proc import pid_alive  # the lease's own check: is that process there

    return url if pid_alive(pid) else None


def experiment_url(base: str, experiment_id: str) -> str:
    """The page of one experiment under a view's URL (which may carry `?token=`)."""
    root, _, query = base.partition("?")
    return f"{root.rstrip('/')}/e/{experiment_id}" + (f"?{query}" if query else "")


__all__ = ["announced", "beacon_path", "experiment_url", "opening_page", "view_of"]
