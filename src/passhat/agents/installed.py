"""Which secret-looking files in a PYTHONPATH entry pip installed (certifi's cacert.pem):
files an installed package's record lists are no secrets, and covering them breaks TLS.

A folder named site-packages, dist-packages or node_modules is an installation whole
(installations). Packages installed with `pip install --target DIR` lie in DIR
itself, beside whatever else the user keeps there: there a file is an installed one when
a `*.dist-info/RECORD` (wheels, PEP 376) or an `*.egg-info/installed-files.txt` (legacy
setup.py installs) in DIR lists it, the path staying inside DIR once resolved (no `..`
out of it, no absolute path elsewhere, no link), it is a regular file, and its content
is none of passhat's (lookout.kind: a store, a log, an archive of them, a report). A
`.env` or `.netrc` beside the packages, listed by no record, stays covered.

The look is bounded: at most RECORDS records per entry, RECORD_BYTES of each and
RECORDS_BYTES in all (what lies past it is not read: what it lists stays covered), and
it is made once an experiment, before its first run (CommandAgent.view's plan), so a
record a run writes later uncovers nothing.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from passhat.agents.sandbox import (
    PACKAGES,
    SECRET_EXACT,
    SECRET_PREFIXES,
    SECRET_SUFFIXES,
    _loads,
    _program,
    _runtime,
    is_secret,
    real,
    under,
)

RECORDS = 10_000
"""Records read per PYTHONPATH entry, at most."""
RECORD_BYTES = 8 << 20
"""Bytes read of one record, at most (torch's RECORD is about 2 MiB)."""
RECORDS_BYTES = 64 << 20
"""Bytes read of all records of one entry, at most."""

_LISTS = ((".dist-info", "RECORD"), (".egg-info", "installed-files.txt"))
_TELLS = tuple(
    name.encode()
    for name in (
        *SECRET_EXACT,
        *SECRET_PREFIXES,
        *SECRET_SUFFIXES,
        "id_rsa",
        "id_ed25519",
        "id_ecdsa",
    )
)
"""A piece of every secret-looking name: a record holding none lists no such file, and
its lines are not parsed."""


def installed_secrets(entry: str) -> list[str]:
    """The secret-looking files (sandbox.is_secret) under the folder `entry` (a real
    path) that a package's record there lists (module docstring), as real paths."""
    found: dict[str, None] = {}
    left = RECORDS_BYTES
    for count, record in enumerate(_records(entry)):
        if count >= RECORDS or left <= 0:
            break
        data = _read(record, min(RECORD_BYTES, left))
        left -= len(data)
        if not any(tell in data for tell in _TELLS):
            continue
        rows = record.endswith("RECORD")
        base = entry if rows else os.path.dirname(record)
        for name in _listed(data, rows):
            if is_secret(os.path.basename(name)):
                path = _inside(entry, base, name)
                if path is not None:
                    found[path] = None
    return [path for path in found if _plain(path)]


def _records(entry: str) -> list[str]:
    """The records of the packages installed right in `entry`, in name order."""
    try:
        with os.scandir(entry) as entries:
            names = sorted(e.name for e in entries if e.name.endswith((".dist-info", ".egg-info")))
    except OSError:
        return []
    return [
        os.path.join(entry, name, listing)
        for name in names
        for suffix, listing in _LISTS
        if name.endswith(suffix)
    ]


def _read(path: str, size: int) -> bytes:
    from passhat.agents.answers import file_head

    return file_head(path, size)  # a regular file only: a FIFO named RECORD is not opened


def _listed(data: bytes, rows: bool) -> list[str]:
    """The paths a record lists: RECORD's first CSV column (`rows`), installed-files.txt's
    lines (a line cut at the read's bound is left out). Lines end at a newline only: a
    file named `a\\u2028.env` (or with a form feed...) was read as `a` and `.env` by
    str.splitlines, uncovering the user's own `.env` beside the packages; and a CSV field
    quoted across a newline is one name."""
    text = data[: data.rfind(b"\n") + 1].decode("utf-8", "replace")
    if not rows:
        return [line.removesuffix("\r") for line in text.split("\n") if line]
    names: list[str] = []
    try:
        for row in csv.reader(io.StringIO(text, newline=""), strict=True):
            if row:
                names.append(row[0])
    except csv.Error:  # a quote left open (at the read's bound): the rest is not read
        pass
    return names


def _inside(entry: str, base: str, name: str) -> str | None:
    """The real path of `name` (relative to `base`) when it stays inside `entry`, through
    no link, else None."""
    if os.path.isabs(name) or "\x00" in name:
        return None
    path = os.path.normpath(os.path.join(base, name))
    if not under(path, [entry]) or path == entry or real(path) != path:
        return None
    return path


def _plain(path: str) -> bool:
    """Whether `path` is a regular file holding none of passhat's answers."""
    from passhat.agents.lookout import kind

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    return kind(path) == ""


def installations(argv: Sequence[str], env: Mapping[str, str], guarded: Sequence[str]) -> list[str]:
    """The runtime paths no secret is looked for in (covered: certifi's cacert.pem is no
    secret): a virtualenv, its base Python, a program's `bin/` prefix, a PYTHONPATH /
    NODE_PATH entry named as a folder of PACKAGES; in another entry (`pip install
    --target DIR`), the secret-looking files a package's record there lists
    (installed_secrets, below). Not a script's own folder or the rest of an entry: the agent's
    own files (a `.env` beside `./agent.py` was shown to it)."""
    program = _program(argv, env)
    found = [] if program is None else _runtime(program, guarded, scripts=False)
    for entry in _loads(env):
        found += [entry] if Path(entry).name in PACKAGES else installed_secrets(entry)
    return found


__all__ = ["RECORDS", "RECORDS_BYTES", "RECORD_BYTES", "installations", "installed_secrets"]
