"""The walk of a result folder, bounded: the text files read for claims
(REPORT_FILES first, then every text file, at most MAX_CLAIM_DEPTH levels down,
MAX_CLAIM_FILES files, MAX_REPORT_BYTES each and MAX_CLAIM_BYTES in all, never inside
run folders), and the run folders, found by name pattern (user patterns on the `regex`
engine with a time limit) or by a `--layout` path pattern, each with its configuration
and run index.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.errors import InputError
from passhat.sources._files import read_bytes
from passhat.sources.claims import MAX_CLAIM, SUFFIXES, Claim, SetAside, read_text

RUN_PATTERNS = (r"run[-_]?(\d+)", r"trial[-_]?(\d+)", r"attempt[-_]?(\d+)", r"epoch[-_]?(\d+)")
"""Directory names of one run; group 1 is the run index."""


REPORT_FILES = ("REPORT.md", "report.md", "RESULTS.md", "results.md", "README.md", "report.txt")
"""Files read first for claims; every other text file of the folder tree follows."""
CLAIM_SUFFIXES = tuple(suffix for suffix in SUFFIXES if suffix != ".env")
"""Text files read for claims: the claim reader's prose, data and script suffixes, not an
`.env` file (its secrets are never read), and files with no suffix, such as README."""
SKIPPED_FOLDERS = ("node_modules", "__pycache__", "site-packages", "venv")
"""Folders never read for claims (nor hidden ones, nor run folders: their text is a
model's output, not a report)."""
MAX_CLAIM_FILES = 200
"""Files read for claims, at most (a note says when more were there)."""
MAX_CLAIM_DEPTH = 4
"""Folder levels below DIR read for claims (DIR itself is level 0)."""
MAX_REPORT_BYTES = 1024 * 1024
"""Bytes of one file read for claims (a larger one is read in part, with a note): a
write-up is tens of kB; the grammar reads about 1 MB a second at worst."""
MAX_CLAIM_BYTES = 8 * 1024 * 1024
"""Bytes read for claims in all (files past it are left out, with a note)."""


@dataclass(frozen=True)
class RunDir:
    """One run directory: its configuration and index."""

    configuration: str
    index: int
    path: Path


def read_claims(
    root: Path, manifest: Path | None = None, run_dirs: Iterable[Path] = ()
) -> tuple[list[Claim], list[SetAside], list[str]]:
    """Every run count the text files of `root` claim, in reading order, the numbers set
    aside (each with its rule), and notes on files read in part or left out. A claim above
    MAX_CLAIM is refused. `run_dirs` are not read: what they hold is a model's output."""
    claims: list[Claim] = []
    set_aside: list[SetAside] = []
    files, notes = claim_files(root, manifest, run_dirs)
    budget = MAX_CLAIM_BYTES
    for path in files:
        name = path.relative_to(root).as_posix()
        if budget <= 0:
            notes.append(
                f"{name} and the files after it were not read for claims: "
                f"{MAX_CLAIM_BYTES >> 20} MB were read before them"
            )
            break
        try:
            data = read_bytes(path, "report file", MAX_REPORT_BYTES, truncate=True)
        except InputError as error:
            notes.append(f"{name}: not read for claims ({error})")
            continue
        budget -= len(data)
        if len(data) >= MAX_REPORT_BYTES:
            notes.append(f"{name}: only its first {MAX_REPORT_BYTES >> 20} MB was read for claims")
        reading = read_text(data.decode("utf-8", errors="replace"), name)
        for claim in reading.claims:
            if claim.too_large:
                raise InputError(
                    f"{claim.source}: claims {claim.shown_number()} runs "
                    f'("{claim.quote}"), more than {MAX_CLAIM:,} per configuration; '
                    "correct the report, or give --claimed K"
                )
        claims.extend(reading.claims)
        set_aside.extend(reading.set_aside)
        notes.extend(reading.notes)
    return claims, set_aside, notes


def _is_claim_file(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(CLAIM_SUFFIXES) or "." not in name


def claim_files(
    root: Path, manifest: Path | None, run_dirs: Iterable[Path] = ()
) -> tuple[list[Path], list[str]]:
    """The text files of `root` read for claims: REPORT_FILES first, then every other text
    file, folder by folder (breadth first, names sorted), at most MAX_CLAIM_DEPTH levels
    down and MAX_CLAIM_FILES in all; hidden folders, SKIPPED_FOLDERS, run folders and the
    manifest are left out. Notes say what the bounds left out."""
    skip = {Path(p) for p in run_dirs}
    files: list[Path] = []
    notes: list[str] = []
    level = [root]
    for depth in range(MAX_CLAIM_DEPTH + 1):
        below = []
        for here in level:
            try:
                with os.scandir(here) as entries:
                    listed = sorted((e.name, _is_dir(e), _is_file(e)) for e in entries)
            except OSError:
                continue
            names = [n for n, _, is_file in listed if is_file and _is_claim_file(n)]
            if here == root:
                names = [n for n in REPORT_FILES if n in names] + [
                    n for n in names if n not in REPORT_FILES
                ]
            files += [here / n for n in names if manifest is None or here / n != manifest]
            below += [
                here / n
                for n, is_dir, _ in listed
                if is_dir
                and not n.startswith(".")
                and n not in SKIPPED_FOLDERS
                and here / n not in skip
            ]
        if below and depth == MAX_CLAIM_DEPTH:
            notes.append(
                f"files more than {MAX_CLAIM_DEPTH} folders below DIR were not read for claims"
            )
        level = below
    if len(files) > MAX_CLAIM_FILES:
        notes.append(
            f"{len(files):,} text files: only the first {MAX_CLAIM_FILES} were read for claims"
        )
    return files[:MAX_CLAIM_FILES], notes


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


USER_REGEX_TIMEOUT_S = 0.5
"""Seconds one --run-pattern may take on one folder name: Python's `re` backtracks
without end on a pattern such as '(a|aa)+b', so user patterns run on the `regex`
engine, which stops at a time limit."""


class RunPattern:
    """A run-directory name pattern (group 1: the run index), run with a time limit."""

    def __init__(self, pattern: str) -> None:
        import regex  # type: ignore[import-untyped]  # no stubs; a typed wrapper here

        try:
            self._regex = regex.compile(pattern, regex.IGNORECASE)
        except regex.error as error:
            raise InputError(
                f"--run-pattern {pattern!r} is not a regular expression ({error})"
            ) from None
        self.pattern = pattern
        self.groups: int = self._regex.groups

    def fullmatch(self, name: str) -> Any:
        """The match of the whole name, or None; InputError past USER_REGEX_TIMEOUT_S."""
        try:
            return self._regex.fullmatch(name, timeout=USER_REGEX_TIMEOUT_S)
        except TimeoutError:
            raise InputError(
                f"--run-pattern {self.pattern!r} ran past {USER_REGEX_TIMEOUT_S:g} s on the "
                f"folder name {name[:80]!r} (a nested repeat such as '(a|aa)+' backtracks "
                r"without end); write it without one, e.g. 'sample[-_](\d+)'"
            ) from None


def compile_patterns(patterns: Sequence[str]) -> list[RunPattern]:
    """Run-directory patterns; each must capture the run index in group 1."""
    compiled = []
    for pattern in patterns:
        regex = RunPattern(pattern)
        if regex.groups < 1:
            raise InputError(
                f"--run-pattern {pattern!r} captures no run index; put it in a group, "
                r"e.g. 'sample[-_](\d+)'"
            )
        compiled.append(regex)
    return compiled


def scan(
    root: Path, patterns: Sequence[RunPattern]
) -> tuple[list[tuple[str, int, Path]], list[str]]:
    """(parent folder relative to root, index, path) of every run directory, sorted, and
    the folders that could not be listed. The walk keeps its own stack (1,500 nested
    folders are no recursion), never follows a link to a folder it descends into, and
    refuses a run index above MAX_CLAIM (a folder named by a date) before anything is
    sized by it."""
    found = []
    unreadable = []
    stack = [root]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as entries:
                subdirs = sorted((e.name, e.is_symlink()) for e in entries if _is_dir(e))
        except OSError as error:
            unreadable.append(f"{here} ({error.strerror})")
            continue
        descend = []
        for name, link in subdirs:
            if name.startswith("."):
                continue
            match = next((m for p in patterns if (m := p.fullmatch(name))), None)
            if match is None:
                if not link:
                    descend.append(here / name)
                continue
            index = _run_index(match.group(1), here / name)
            parent = here.relative_to(root).as_posix()
            found.append((parent, index, here / name))  # never descend into a run directory
        stack.extend(reversed(descend))
    return sorted(found), unreadable


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _run_index(digits: str, path: Path) -> int:
    """A run directory's index; InputError above MAX_CLAIM (a date, a timestamp)."""
    if not digits.isdigit():
        raise InputError(
            f"{path}: the run pattern captured {digits[:40]!r}, not a run number; give "
            r"--run-pattern with the number in its first group, e.g. 'sample-(\d+)'"
        )
    stripped = digits.lstrip("0") or "0"
    if len(stripped) > len(str(MAX_CLAIM)) or int(stripped) > MAX_CLAIM:
        raise InputError(
            f"{path}: run index {digits} is more than {MAX_CLAIM:,}; is the folder named by "
            "a date or a timestamp? give --run-pattern REGEX (or --layout) that captures "
            "the run number"
        )
    return int(stripped)


_PLACEHOLDER = re.compile(r"\{(config|task|run)\}|\*")


@dataclass(frozen=True)
class Layout:
    """Where runs sit in a result folder, as a path pattern (`--layout`).

    Segments are folder names below DIR, `/`-separated; in each, `{config}` and
    `{task}` name what is compared (several join, in order, with `/`), `{run}` is the
    run number (digits, exactly once), `*` is any text, the rest is literal. The last
    segment is the run folder, where grade files are read. Examples:

        outputs/{config}/run-{run}       the seed's Trello folder
        run{run}/{task}                  terminal-bench: one folder per whole-suite run
        {config}/{task}/trial_{run}      a configuration × task × trial tree
    """

    pattern: str
    segments: tuple[re.Pattern[str], ...]
    names: tuple[tuple[str, ...], ...]
    """Per segment, the placeholders it captures in order ('config', 'task', 'run')."""


def parse_layout(pattern: str) -> Layout:
    """A `--layout` pattern, checked; InputError naming the fix."""
    parts = [p for p in pattern.strip().strip("/").split("/") if p not in ("", ".")]
    runs = pattern.count("{run}")
    if runs != 1 or not parts or any(p == ".." for p in parts):
        raise InputError(
            f"--layout {pattern!r}: name the run number exactly once with {{run}}, folders "
            "below DIR only, e.g. 'outputs/{config}/run-{run}' or 'run{run}/{task}'"
        )
    segments = []
    names = []
    for part in parts:
        regex, captured, at = "", [], 0
        for match in _PLACEHOLDER.finditer(part):
            regex += re.escape(part[at : match.start()])
            kind = match.group(1)
            if kind is None:
                regex += ".*?"
            else:
                regex += r"(\d+)" if kind == "run" else "(.+?)"
                captured.append(kind)
            at = match.end()
        regex += re.escape(part[at:])
        segments.append(re.compile(regex, re.I))
        names.append(tuple(captured))
    return Layout(pattern, tuple(segments), tuple(names))


def scan_layout(root: Path, layout: Layout) -> tuple[list[RunDir], list[str]]:
    """Every run folder the layout describes, with its configuration (the `{config}` and
    `{task}` parts, joined) and index; and the folders that could not be listed."""
    found: list[RunDir] = []
    unreadable: list[str] = []
    level: list[tuple[Path, tuple[tuple[str, str], ...]]] = [(root, ())]
    last = len(layout.segments) - 1
    for depth, (segment, names) in enumerate(zip(layout.segments, layout.names, strict=True)):
        below = []
        for here, captured in level:
            try:
                with os.scandir(here) as entries:
                    subdirs = sorted(e.name for e in entries if _is_dir(e))
            except OSError as error:
                unreadable.append(f"{here} ({error.strerror})")
                continue
            for name in subdirs:
                match = segment.fullmatch(name) if not name.startswith(".") else None
                if match is not None:
                    pairs = tuple(zip(names, match.groups(), strict=True))
                    below.append((here / name, captured + pairs))
        level = below
        if depth == last:
            break
    for path, captured in level:
        digits = next(value for kind, value in captured if kind == "run")
        configuration = "/".join(v for kind, v in captured if kind != "run") or "."
        found.append(RunDir(configuration, _run_index(digits, path), path))
    return sorted(found, key=lambda r: (r.configuration, r.index, str(r.path))), unreadable


def name_configurations(found: Sequence[tuple[str, int, Path]]) -> list[RunDir]:
    """Configuration names: the parent folders, with their shared leading part dropped."""
    parents = sorted({parent for parent, _, _ in found})
    parts = [p.split("/") if p != "." else [] for p in parents]
    common = 0
    if len(parts) > 1:
        while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
            common += 1
    elif parts and parts[0]:
        common = len(parts[0]) - 1
    names = {parent: "/".join(p[common:]) or "." for parent, p in zip(parents, parts, strict=True)}
    return [RunDir(names[parent], index, path) for parent, index, path in found]


def from_zero(run_dirs: Sequence[RunDir]) -> bool:
    return any(r.index == 0 for r in run_dirs)
