"""Audit a result folder no harness owns: how many runs were declared, claimed,
made and graded, and which are missing.

The seed's second story is the shape this reads: a Trello experiment whose
report said each group ran three times, whose `benchmark.json` said
`runs_per_configuration: 1`, whose output folder held only `run-1`, and whose
grader read `run_dir = run_dirs[0]`. An audit puts the four numbers side by
side, per configuration:

- **declared**: the run count the manifest records (`runs_per_configuration`,
  `k`, `epochs`, `num_trials`, `n_attempts`, ...), or `--declared-k`;
- **claimed**: what a report says (`--claimed`, or every claim of the report
  files and JSON summaries, read by `claims.py` the way people write them:
  "each group ran three times", "averaged over 5 seeds", "pass^5", a `runs`
  column of a markdown table);
- **present**: run directories found (`run-N`, `trial-N`, `attempt-N`,
  `epoch-N`; other patterns with `--run-pattern`; any nesting with `--layout`);
- **graded**: run directories with a verdict: a grade file inside
  (`grade.json`, `verdict.json`, ...) or the exit code of `--grade "CMD
  {run_dir}"`, which passhat runs once for **every** run directory.

The plan the numbers are measured against is the largest of the three
(declared, claimed, highest run index present): a run someone claims or
declares and nobody kept is missing, by index. Figures are labelled with the
graded runs behind them, never with the plan.

Nothing is sized by what the folder says before it is checked: a claim, a
declared count or a run index above MAX_CLAIM (100,000) is refused in one line.
Reading is pure over what the folder holds (`audit_listing`); the file system and
subprocesses are touched only by `scan`, `scan_layout`, `read_manifest`,
`read_claims`, `grade_from_files` and `grade_with_command`. docs/audit.md is the
reference.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from passhat.accounting import Accounting, Ledger, MissingRuns, format_ranges
from passhat.errors import InputError
from passhat.plain import plural
from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import Imported, file_sha256, new_id, now, short_hash
from passhat.sources._files import MAX_SMALL_BYTES, parse_json, read_bytes, regular_size
from passhat.sources.claims import MAX_CLAIM, Claim, SetAside, governing, read_text

MANIFESTS = ("benchmark.json", "metadata.json", "manifest.json", "experiment.json")
"""Files read for the declared run count, first found wins."""
K_KEYS = (
    "runs_per_configuration",
    "runs_per_config",
    "runs_per_case",
    "k",
    "epochs",
    "num_trials",
    "n_trials",
    "trials",
    "n_attempts",
    "num_attempts",
    "n_runs",
    "num_runs",
    "repeats",
)
"""Manifest keys that declare runs per configuration (top level or one level down)."""
CONFIG_KEYS = ("configurations", "groups", "cases", "tasks")
"""Manifest keys listing the configurations that were planned."""
RUN_PATTERNS = (r"run[-_]?(\d+)", r"trial[-_]?(\d+)", r"attempt[-_]?(\d+)", r"epoch[-_]?(\d+)")
"""Directory names of one run; group 1 is the run index."""
GRADE_FILES = ("grade.json", "verdict.json", "grading.json", "score.json", "result.json")
"""A verdict file inside a run directory, first found wins."""
REPORT_FILES = ("REPORT.md", "report.md", "RESULTS.md", "results.md", "README.md", "report.txt")
"""Files read first for claims; every other text file of the folder tree follows."""
CLAIM_SUFFIXES = (
    ".md",
    ".markdown",
    ".txt",
    ".rst",
    ".tex",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".cfg",
    ".sh",
    ".bash",
)
"""Text files read for claims (and files with no suffix, such as README, and configuration
scripts named config*.py or settings*.py)."""
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
MAX_GRADE_BYTES = 1024 * 1024
"""A grade file larger than this is no verdict: that run is errored."""

GradeStatus = Literal["passed", "failed", "errored", "ungraded"]


@dataclass(frozen=True)
class Declared:
    """The run count a manifest declares."""

    k: int
    source: str
    """Where it was read, e.g. `benchmark.json: runs_per_configuration`."""


@dataclass(frozen=True)
class Manifest:
    """What the manifest says: declared k and the planned configurations."""

    path: Path | None
    declared: Declared | None
    configurations: tuple[str, ...] = ()
    model: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class RunDir:
    """One run directory: its configuration and index."""

    configuration: str
    index: int
    path: Path


@dataclass(frozen=True)
class Grade:
    """The verdict of one run directory and where it came from."""

    status: GradeStatus
    source: str
    """The grade file's name, or the command."""
    message: str | None = None
    """Why it is errored or ungraded."""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigurationAudit:
    """One configuration's runs against the plan."""

    configuration: str
    present: tuple[int, ...]
    graded: tuple[int, ...]
    """Runs with a verdict (passed or failed)."""
    passed: tuple[int, ...]
    errored: tuple[int, ...]
    """Runs whose grading failed (an unreadable grade file, a grader that crashed)."""
    ungraded: tuple[int, ...]
    """Runs present with no grade at all."""
    missing: Sequence[int]
    """Run indices of the plan with no directory (a `MissingRuns`: memory follows the
    runs present, not the plan)."""
    beyond_declared: tuple[int, ...] = ()
    """Runs present with an index past the declared k."""
    planned: int = 0
    """This configuration's plan (a table row may claim more runs of it than of others)."""
    claim: Claim | None = None
    """The claim this configuration's plan follows: the largest made for every
    configuration or by a table row for this one (never another one's row)."""


@dataclass(frozen=True)
class Audit:
    """The audit of one folder."""

    root: Path
    manifest: Manifest
    claim: Claim | None
    k_plan: int
    """The largest of declared, claimed and the highest run index present."""
    configurations: tuple[ConfigurationAudit, ...]
    grades: dict[tuple[str, int], Grade]
    run_dirs: tuple[RunDir, ...]
    findings: tuple[str, ...]
    """Every discrepancy, one line each: empty when declared = claimed = present = graded."""
    accounting: Accounting
    """Requested = the plan; graded runs counted; errored and ungraded runs errored."""
    notes: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    """Every claim read, in reading order; `claim` is the one the plan follows."""
    set_aside: tuple[SetAside, ...] = ()
    """Numbers the claim reader read and set aside, each with its rule (`--explain`)."""

    @property
    def declared_k(self) -> int | None:
        return self.manifest.declared.k if self.manifest.declared else None

    @property
    def claimed_k(self) -> int | None:
        return self.claim.k if self.claim else None


# ----------------------------------------------------------------- manifest


def read_manifest(root: Path, name: str | None = None) -> Manifest:
    """The first manifest found in `root` (or the one named); none is not an error."""
    candidates = [name] if name else list(MANIFESTS)
    for candidate in candidates:
        path = root / candidate
        if not path.is_file():
            if name and not path.exists():
                raise InputError(f"{path}: no such manifest; give --manifest a file in {root}")
            if path.exists() or path.is_symlink():
                regular_size(path, "manifest")  # a FIFO, a device or a folder: named, not skipped
            continue
        return parse_manifest(path, _read_json(path, "manifest"))
    return Manifest(path=None, declared=None)


def _read_json(path: Path, what: str) -> Any:
    fix = "fix it or give --declared-k"
    return parse_json(read_bytes(path, what, MAX_SMALL_BYTES), path, what, fix)


def _big(value: int) -> str:
    """An integer for a message: a number of 30 digits or more by its length only."""
    if value.bit_length() > 96:
        return f"a number of about {int(value.bit_length() * 0.30103):,} digits"
    return f"{value:,}"


def parse_manifest(path: Path, data: Any) -> Manifest:
    """Declared k, planned configurations and model from a manifest's JSON."""
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: the manifest is not a JSON object; write e.g. "
            '{"runs_per_configuration": 3} or give --declared-k'
        )
    declared = None
    for where, mapping in [("", data)] + [
        (f"{key}.", value) for key, value in data.items() if isinstance(value, dict)
    ]:
        for key in K_KEYS:
            if key in mapping:
                value = mapping[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise InputError(
                        f"{path}: field {where}{key} is {json.dumps(value)[:60]}; "
                        "a run count must be a whole number >= 1 (or give --declared-k)"
                    )
                if value > MAX_CLAIM:
                    raise InputError(
                        f"{path}: field {where}{key} is {_big(value)}, more than {MAX_CLAIM:,} "
                        "runs per configuration; correct it, or give --declared-k"
                    )
                declared = Declared(value, f"{path.name}: {where}{key}")
                break
        if declared:
            break
    configurations: list[str] = []
    for key in CONFIG_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    configurations.append(item)
                elif isinstance(item, dict):
                    name = item.get("name") or item.get("id")
                    if isinstance(name, str):
                        configurations.append(name)
            break
    model = data.get("model")
    return Manifest(
        path=path,
        declared=declared,
        configurations=tuple(dict.fromkeys(configurations)),
        model=model if isinstance(model, str) else None,
        sha256=file_sha256(path),
    )


# ------------------------------------------------------------------- claims


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
    return (
        lower.endswith(CLAIM_SUFFIXES)
        or "." not in name
        or (lower.endswith(".py") and lower.startswith(("config", "settings")))
    )


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


# ------------------------------------------------------------------ run dirs


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


# ------------------------------------------------------------------- grades

_PASS_WORDS = {"passed", "pass", "accepted", "accept", "success", "succeeded", "ok", "true"}
_FAIL_WORDS = {"failed", "fail", "rejected", "reject", "failure", "false"}


def grade_from_data(data: Any, source: str) -> Grade:
    """A verdict from a grade file's JSON; pure."""
    if isinstance(data, bool):
        return Grade("passed" if data else "failed", source)
    if not isinstance(data, dict):
        return Grade("errored", source, f"{source} holds no JSON object with a verdict")
    for key in ("passed", "pass", "success", "accepted", "correct"):
        if isinstance(data.get(key), bool):
            return Grade("passed" if data[key] else "failed", source, details=data)
    for key in ("status", "verdict", "result"):
        value = data.get(key)
        if isinstance(value, str) and value.lower() in _PASS_WORDS | _FAIL_WORDS:
            status: GradeStatus = "passed" if value.lower() in _PASS_WORDS else "failed"
            return Grade(status, source, details=data)
        if isinstance(value, str) and value.lower() in {"errored", "error"}:
            return Grade("errored", source, str(data.get("message") or value), details=data)
    for key in ("reward", "score"):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not 0 <= value <= 1:  # NaN and ±Infinity fail both comparisons
                return Grade(
                    "errored",
                    source,
                    f"{source}: {key} is {value!r}, not a score in 0..1 (a grader that "
                    "crashed or overflowed is no failure)",
                    details=data,
                )
            return Grade("passed" if value == 1 else "failed", source, details=data)
    return Grade(
        "errored",
        source,
        f"{source} has no verdict (passed: true/false, status: passed/failed, or reward: 0..1)",
        details=data,
    )


def grade_from_files(run_dir: Path) -> Grade:
    """The run directory's grade file, if any; a run folder or grade file that cannot be
    read, or one larger than MAX_GRADE_BYTES, is errored with the reason."""
    try:
        with os.scandir(run_dir) as entries:
            names = {e.name for e in entries}
    except OSError as error:
        return Grade("errored", "", f"the run folder cannot be read ({error.strerror})")
    for name in GRADE_FILES:
        if name not in names:
            continue
        try:
            data = parse_json(
                read_bytes(run_dir / name, "grade file", MAX_GRADE_BYTES),
                run_dir / name,
                "grade file",
            )
        except InputError as error:
            return Grade("errored", name, str(error).split(": ", 1)[-1])
        return grade_from_data(data, name)
    return Grade("ungraded", "", "no grade file (" + ", ".join(GRADE_FILES) + ")")


def check_command(template: str) -> list[str]:
    """The grade command as argv tokens; it must name {run_dir}."""
    if "{run_dir}" not in template:
        raise InputError(
            f"--grade {template!r} does not name {{run_dir}}; write e.g. "
            "--grade 'python grade.py {run_dir}' so every run directory is graded"
        )
    try:
        tokens = shlex.split(template)
    except ValueError as error:
        raise InputError(f"--grade {template!r} cannot be split into words ({error})") from None
    if not tokens:
        raise InputError("--grade is empty; give a command such as 'python grade.py {run_dir}'")
    return tokens


MAX_GRADER_TAIL = 64 * 1024
"""Bytes of a grader's stdout and of its stderr kept (its last ones): a grader printing
300 MB made audit hold 900 MB to keep 500 characters."""
_TRACEBACK = b"Traceback (most recent call last)"


class OutputTail:
    """The last MAX_GRADER_TAIL bytes of a stream, and whether a Python traceback was
    printed anywhere in it; read in chunks, never whole."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.traceback = False

    def feed(self, chunk: bytes) -> None:
        if not self.traceback:
            self.traceback = _TRACEBACK in bytes(self.data[-len(_TRACEBACK) :]) + chunk
        self.data += chunk
        if len(self.data) > 2 * MAX_GRADER_TAIL:
            del self.data[:-MAX_GRADER_TAIL]

    def drain(self, stream: Any) -> None:
        """Read `stream` to its end, 64 kB at a time."""
        with stream:
            for chunk in iter(lambda: stream.read(65536), b""):
                self.feed(chunk)

    def text(self) -> str:
        return bytes(self.data[-MAX_GRADER_TAIL:]).decode("utf-8", errors="replace")


def grade_with_command(tokens: Sequence[str], run_dir: Path, timeout_s: float) -> Grade:
    """Run the grader on one run directory: exit 0 passed, 1 failed (unless it is a
    Python traceback: the grader crashed), else errored. The grader runs in its own
    process group, which is killed when it times out or exits (no child outlives it);
    its output is read as bytes and shown with undecodable bytes replaced."""
    argv = [t.replace("{run_dir}", str(run_dir)) for t in tokens]
    source = " ".join(tokens)
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise InputError(
            f"--grade: command {argv[0]!r} not found; give a program on PATH or its path"
        ) from None
    except OSError as error:
        raise InputError(f"--grade: command {argv[0]!r} cannot be run ({error.strerror})") from None
    tails = (OutputTail(), OutputTail())
    readers = [
        threading.Thread(target=tail.drain, args=(stream,), daemon=True)
        for tail, stream in zip(tails, (process.stdout, process.stderr), strict=True)
    ]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.wait()
        return Grade(
            "errored", source, f"the grader ran past {timeout_s:g} s (its process group was killed)"
        )
    finally:
        _kill_group(process)
        for reader in readers:
            reader.join(timeout=5)
    stdout, stderr = (tail.text() for tail in tails)
    last = (stderr.strip().splitlines() or stdout.strip().splitlines() or [""])[-1]
    details = {
        "exit_code": process.returncode,
        "stdout_tail": stdout[-500:],
        "stderr_tail": stderr[-500:],
    }
    if process.returncode == 0:
        return Grade("passed", source, details=details)
    if process.returncode == 1 and not tails[1].traceback:
        return Grade("failed", source, details=details)
    # exit 1 with a Python traceback is the grader crashing (as the seed's run_dirs[0]
    # grader does), not a verdict: errored, never a silent "failed"
    return Grade("errored", source, f"exit {process.returncode}: {last[:200]}", details)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill what is left of the grader's process group (its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


# -------------------------------------------------------------------- audit


def claims_by_configuration(
    claims: Sequence[Claim], names: Iterable[str]
) -> dict[str, list[Claim]]:
    """The claims each configuration's plan answers to: every claim made for all
    configurations and every one a table row makes for it; pure. A row naming no
    configuration claims for all of them."""
    names = list(names)
    planned: dict[str, object] = {n: None for n in names}
    overall: list[tuple[int, Claim]] = []
    scoped: dict[str, list[tuple[int, Claim]]] = {n: [] for n in names}
    for index, claim in enumerate(claims):
        target = _match_configuration(claim.scope, planned) if claim.scope else None
        if target is not None and target in scoped:
            scoped[target].append((index, claim))
        else:
            overall.append((index, claim))
    return {
        n: [c for _, c in sorted(overall + own, key=lambda ic: ic[0])]
        if own
        else [c for _, c in overall]
        for n, own in scoped.items()
    }


def plans(
    manifest: Manifest, claims: Sequence[Claim], names: Iterable[str], highest: int
) -> dict[str, int]:
    """Each configuration's plan: the largest of the declared count, every claim for all
    configurations, every claim a table row makes for it, and the highest run index
    present anywhere; pure."""
    floor = max(manifest.declared.k if manifest.declared else 0, highest)
    return {
        n: max([floor, *(c.k for c in own)])
        for n, own in claims_by_configuration(claims, names).items()
    }


def audit_listing(
    root: Path,
    manifest: Manifest,
    claims: Sequence[Claim],
    run_dirs: Sequence[RunDir],
    grades: dict[tuple[str, int], Grade],
    notes: Sequence[str] = (),
    unreadable: Sequence[str] = (),
) -> Audit:
    """The audit of what a folder holds; pure. `unreadable`: folders that could not be
    listed (each is a finding: what they hold cannot be counted)."""
    declared = manifest.declared.k if manifest.declared else None
    highest = max((r.index for r in run_dirs), default=0)
    by_config: dict[str, list[RunDir]] = {c: [] for c in manifest.configurations}
    for run in run_dirs:
        by_config.setdefault(_match_configuration(run.configuration, by_config), []).append(run)
    plan = plans(manifest, claims, by_config, highest)
    own_claims = claims_by_configuration(claims, by_config)
    k_plan = max(plan.values(), default=max(highest, 1))
    ledger = Ledger()
    configurations = []
    for name, runs in by_config.items():
        ledger.expect(name)
        present = tuple(sorted(r.index for r in runs))
        statuses = {i: grades[(name, i)].status for i in present}
        for index, status in statuses.items():
            ledger.add(name, index, "errored" if status == "ungraded" else status)
        configurations.append(
            ConfigurationAudit(
                configuration=name,
                present=present,
                graded=tuple(i for i in present if statuses[i] in ("passed", "failed")),
                passed=tuple(i for i in present if statuses[i] == "passed"),
                errored=tuple(i for i in present if statuses[i] == "errored"),
                ungraded=tuple(i for i in present if statuses[i] == "ungraded"),
                missing=MissingRuns(plan[name], present),
                beyond_declared=tuple(i for i in present if declared and i > declared),
                planned=plan[name],
                claim=governing(own_claims[name]),
            )
        )
    accounting = ledger.close(k_plan, plan)
    claim = governing(list(claims))
    findings = _findings(manifest, claims, configurations, k_plan)
    findings += [
        f"{folder}: cannot be read; the runs it holds cannot be counted" for folder in unreadable
    ]
    return Audit(
        root=root,
        manifest=manifest,
        claim=claim,
        k_plan=k_plan,
        configurations=tuple(configurations),
        grades=grades,
        run_dirs=tuple(run_dirs),
        findings=tuple(findings),
        accounting=accounting,
        notes=tuple(notes),
        claims=tuple(claims),
    )


def _match_configuration(found: str, planned: Mapping[str, object]) -> str:
    """A folder's configuration as the manifest names it (by its last part), if it does."""
    if found in planned:
        return found
    last = found.rsplit("/", 1)[-1]
    return last if last in planned else found


def _indices(indices: Iterable[int]) -> str:
    if isinstance(indices, MissingRuns):
        return format_ranges(indices.ranges())
    return ", ".join(str(i) for i in indices)


def _findings(
    manifest: Manifest,
    claims: Sequence[Claim],
    configurations: Sequence[ConfigurationAudit],
    k_plan: int,
) -> list[str]:
    declared = manifest.declared
    lines = []
    most_present = max((len(c.present) for c in configurations), default=0)
    by_name = {c.configuration: c for c in configurations}
    claim = governing([c for c in claims if c.scope is None or c.scope not in by_name])
    if (
        claim
        and declared
        and (claim.k > declared.k or (claim.k != declared.k and not claim.at_least))
    ):
        lines.append(
            f"claimed {claim.describe()} ({claim.source}) but the manifest "
            f"declares {declared.k} ({declared.source})"
        )
    if claim and claim.k > most_present:
        lines.append(
            f"claimed {claim.describe()} ({claim.source}) but no configuration "
            f"has more than {plural(most_present, 'run directory', 'run directories')}"
        )
    for scoped in claims:
        target = by_name.get(scoped.scope or "")
        if target is not None and scoped.k > len(target.present):
            lines.append(
                f"claimed {scoped.describe()} ({scoped.source}) but it has "
                f"{plural(len(target.present), 'run directory', 'run directories')}"
            )
    if declared is None:
        lines.append(
            "no manifest declares a run count ("
            + ", ".join(MANIFESTS)
            + f"); the plan is taken as {k_plan}, the largest run count seen"
        )
    for c in configurations:
        parts = []
        if c.missing:
            parts.append(f"missing run {_indices(c.missing)}")
        if c.ungraded:
            parts.append(f"ungraded run {_indices(c.ungraded)}")
        if c.errored:
            parts.append(f"grading errored on run {_indices(c.errored)}")
        if c.beyond_declared:
            parts.append(
                f"run {_indices(c.beyond_declared)} beyond the declared {declared and declared.k}"
            )
        if parts:
            lines.append(
                f"{c.configuration}: {len(c.graded)} of {c.planned} planned runs graded ("
                + "; ".join(parts)
                + ")"
            )
    return lines


@dataclass(frozen=True)
class AuditOptions:
    """What the command line can change about an audit."""

    declared_k: int | None = None
    """Overrides the manifest's declared run count."""
    claimed: int | None = None
    """Overrides the run count parsed from a report file."""
    manifest: str | None = None
    """Manifest file name in the folder (default: the first of MANIFESTS found)."""
    patterns: tuple[str, ...] = RUN_PATTERNS
    """Run-directory name patterns, group 1 the run index."""
    grade: str | None = None
    """Grade command with {run_dir}: run once for every run directory."""
    grade_timeout_s: float = 300.0
    """Seconds one grading may take before that run is errored."""
    grade_jobs: int = 4
    """Grade commands run at once."""
    layout: str | None = None
    """Where runs sit (`Layout`), instead of run folders found by `patterns` anywhere."""


def _check_unique(run_dirs: Sequence[RunDir]) -> None:
    """Two folders for one run (run-1 and trial-1 side by side) would count it twice."""
    seen: dict[tuple[str, int], Path] = {}
    for run in run_dirs:
        key = (run.configuration, run.index)
        if key in seen:
            raise InputError(
                f"{seen[key]} and {run.path} are both run {run.index} of {run.configuration!r}; "
                "a run is never counted twice: keep one, or narrow --run-pattern"
            )
        seen[key] = run.path


def _grades(
    run_dirs: Sequence[RunDir], tokens: list[str] | None, options: AuditOptions
) -> list[Grade]:
    """Every run directory's grade, in order: its grade file, or the grade command run
    for each (--grade-jobs at a time)."""
    if tokens is None:
        return [grade_from_files(r.path) for r in run_dirs]
    with ThreadPoolExecutor(max_workers=options.grade_jobs) as pool:
        return list(
            pool.map(
                lambda r: grade_with_command(tokens, r.path.resolve(), options.grade_timeout_s),
                run_dirs,
            )
        )


def audit_folder(root: Path, options: AuditOptions) -> Audit:
    """Read a folder and audit it; InputError for a folder that is not one or holds no run."""
    if not root.is_dir():
        raise InputError(f"{root}: not a folder; give the folder holding the run directories")
    if options.grade_jobs < 1:
        raise InputError(f"--grade-jobs is {options.grade_jobs}; run at least 1 at a time")
    for value, flag in ((options.declared_k, "--declared-k"), (options.claimed, "--claimed")):
        if value is not None and value < 1:
            raise InputError(f"{flag} is {value}; give a run count of at least 1")
    manifest = read_manifest(root, options.manifest)
    if options.declared_k is not None:
        manifest = replace(manifest, declared=Declared(options.declared_k, "--declared-k"))
    if options.claimed is not None and options.claimed > MAX_CLAIM:
        raise InputError(f"--claimed is {options.claimed:,}; give at most {MAX_CLAIM:,}")
    if options.declared_k is not None and options.declared_k > MAX_CLAIM:
        raise InputError(f"--declared-k is {options.declared_k:,}; give at most {MAX_CLAIM:,}")
    notes: list[str] = []
    tokens = check_command(options.grade) if options.grade else None
    if options.layout is not None:
        if options.patterns != RUN_PATTERNS:
            raise InputError("--layout and --run-pattern both say where runs are; give one")
        layout = parse_layout(options.layout)
        run_dirs, unreadable = scan_layout(root, layout)
        if not run_dirs:
            raise InputError(
                f"{root}: no folder matches --layout {layout.pattern!r}; check it against "
                "the folder's tree (docs/audit.md shows examples)"
            )
    else:
        found, unreadable = scan(root, compile_patterns(options.patterns))
        run_dirs = name_configurations(found)
    if not run_dirs:
        raise InputError(
            f"{root}: no run directories found (names like run-1, trial-1, attempt-1, "
            "epoch-1); give --run-pattern REGEX with the index in a group for other names"
        )
    set_aside: list[SetAside] = []
    if options.claimed is not None:
        claims = [Claim(options.claimed, "--claimed", "", rule="--claimed")]
    else:
        claims, set_aside, read_notes = read_claims(root, manifest.path, (r.path for r in run_dirs))
        notes.extend(read_notes)
    if from_zero(run_dirs):
        run_dirs = [replace(r, index=r.index + 1) for r in run_dirs]
        notes.append("run directories count from 0: run-0 is reported as run 1")
    planned: dict[str, list[RunDir]] = {c: [] for c in manifest.configurations}
    run_dirs = [
        replace(r, configuration=_match_configuration(r.configuration, planned)) for r in run_dirs
    ]
    _check_unique(run_dirs)
    grades = dict(
        zip(
            ((r.configuration, r.index) for r in run_dirs),
            _grades(run_dirs, tokens, options),
            strict=True,
        )
    )
    audit = audit_listing(root, manifest, claims, run_dirs, grades, notes, unreadable)
    return replace(audit, set_aside=tuple(set_aside))


SCHEMA_VERSION = 3
"""Version of `audit --json` (docs/audit.md); 2 added claims, totals, figures and reasons;
3 added each claim's rule, the numbers set aside, and each configuration's own claim."""


def _claim_data(claim: Claim) -> dict[str, Any]:
    return {
        "k": claim.k,
        "source": claim.source,
        "quote": claim.quote,
        "at_least": claim.at_least,
        "scope": claim.scope,
        "rule": claim.rule,
    }


def audit_figures(audit: Audit) -> dict[str, Any] | None:
    """The figures the text prints, counted over graded runs (None: no graded run)."""
    accounting = audit.accounting
    if not accounting.runs_counted:
        return None
    d = accounting.dataset()
    m = d.metrics
    return {
        "pass_rate": m.pass_at_1,
        "passes": m.passes,
        "graded_runs": m.runs,
        "j": m.j,
        "pass_at_j": m.pass_at_j,
        "pass_hat_j": m.pass_hat_j,
        "configurations": m.cases,
        "left_out": list(d.excluded),
    }


def audit_totals(audit: Audit) -> dict[str, int]:
    """Runs over every configuration: planned (requested), present, graded, passed,
    failed, errored (grading failed), ungraded (no grade) and missing."""
    cs = audit.configurations
    return {
        "configurations": len(cs),
        "requested": sum(c.planned for c in cs),
        "present": sum(len(c.present) for c in cs),
        "graded": sum(len(c.graded) for c in cs),
        "passed": sum(len(c.passed) for c in cs),
        "failed": sum(len(c.graded) - len(c.passed) for c in cs),
        "errored": sum(len(c.errored) for c in cs),
        "ungraded": sum(len(c.ungraded) for c in cs),
        "missing": sum(len(c.missing) for c in cs),
    }


def audit_summary(audit: Audit) -> dict[str, Any]:
    """The audit as JSON-ready data: everything the text shows (docs/audit.md)."""
    declared = audit.manifest.declared
    configurations = []
    for c in audit.configurations:
        not_graded = [
            {
                "run": i,
                "status": audit.grades[(c.configuration, i)].status,
                "source": audit.grades[(c.configuration, i)].source or None,
                "reason": audit.grades[(c.configuration, i)].message,
            }
            for i in sorted((*c.errored, *c.ungraded))
        ]
        configurations.append(
            {
                "configuration": c.configuration,
                "declared": audit.declared_k,
                "claimed": c.claim.k if c.claim else None,
                "claim_source": c.claim.source if c.claim else None,
                "planned": c.planned,
                "present": list(c.present),
                "graded": list(c.graded),
                "passed": list(c.passed),
                "failed": [i for i in c.graded if i not in set(c.passed)],
                "errored": list(c.errored),
                "ungraded": list(c.ungraded),
                "missing": list(c.missing),
                "beyond_declared": list(c.beyond_declared),
                "not_graded": not_graded,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "folder": str(audit.root),
        "manifest": str(audit.manifest.path) if audit.manifest.path else None,
        "declared": {"k": declared.k, "source": declared.source} if declared else None,
        "claimed": _claim_data(audit.claim) if audit.claim else None,
        "claims": [_claim_data(c) for c in audit.claims],
        "set_aside": [
            {"source": a.source, "quote": a.quote, "rule": a.rule} for a in audit.set_aside
        ],
        "k_plan": audit.k_plan,
        "totals": audit_totals(audit),
        "figures": audit_figures(audit),
        "configurations": configurations,
        "findings": list(audit.findings),
        "notes": list(audit.notes),
    }


def audit_experiment(audit: Audit, *, name: str | None = None) -> Imported:
    """The audit as an experiment of kind `audited`, one run per run directory."""
    from passhat import __version__

    configurations = tuple(c.configuration for c in audit.configurations)
    case_hashes = {c: short_hash({"configuration": c}) for c in configurations}
    source: dict[str, Any] = {
        "tool": "audit",
        "path": str(audit.root.resolve()),
        "manifest": str(audit.manifest.path) if audit.manifest.path else None,
        "manifest_sha256": audit.manifest.sha256,
        "declared": audit.declared_k,
        "claimed": audit.claimed_k,
        "findings": list(audit.findings),
    }
    suite_hash = short_hash({"manifest": audit.manifest.sha256, "configurations": configurations})
    model = audit.manifest.model or "unknown"
    experiment = ExperimentRecord(
        id=new_id(),
        name=name,
        created_at=now(),
        suite_name=audit.root.resolve().name,
        suite_path=str(audit.root.resolve()),
        suite_hash=suite_hash,
        agent="audit",
        model=model,
        model_config={},
        params={},
        prompt_version=None,
        k_requested=audit.k_plan,
        # a table row may plan fewer runs of one configuration than of the others
        case_k={
            c.configuration: c.planned for c in audit.configurations if c.planned < audit.k_plan
        },
        seed=0,
        harness_version=__version__,
        fingerprint=short_hash({"audit": suite_hash, "model": model}),
        case_ids=configurations,
        case_hashes=case_hashes,
        kind="audited",
        source=source,
    )
    runs = []
    for run in audit.run_dirs:
        config = run.configuration
        grade = audit.grades[(config, run.index)]
        status = "errored" if grade.status == "ungraded" else grade.status
        runs.append(
            RunRecord(
                experiment_id=experiment.id,
                case_id=config,
                run_index=run.index,
                case_hash=case_hashes[config],
                status=status,
                error_type=None
                if status != "errored"
                else ("ungraded" if grade.status == "ungraded" else "grader_error"),
                error_message=grade.message if status == "errored" else None,
                final_state={"run_dir": str(run.path.resolve())},
                score=[
                    {
                        "scorer": grade.source or "none",
                        "passed": status == "passed",
                        **grade.details,
                    }
                ]
                if status != "errored"
                else [],
            )
        )
    return Imported(experiment, tuple(runs))
