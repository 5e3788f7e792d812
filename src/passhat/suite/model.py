"""What a loaded suite is: `Suite`, `Case`, `SuiteDefaults`, `Fixture` and the scorer
specs, frozen records made by loading.py and read by everything after it.

A case keeps its input, fixtures and goal as pickled blobs on a `_Shelf` (spilled to a
temporary file for large suites) and unpacks them when asked, so a suite of 100,000
cases holds bytes, not trees. Nothing here reads a file or checks a value.
"""

from __future__ import annotations

import array
import os
import pickle
import re
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from passhat.errors import ConfigError
from passhat.plain import canonical_json, did_you_mean

SUITE_FILE = "suite.yaml"
ENVIRONMENT_KEYS = ("tools", "state", "input_schema", "goal_schema")
"""suite.yaml's settings of the declarative `tools` environment."""
CASES_DIR = "cases"
_CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SCORER_KINDS = (
    "exact_set",
    "subset",
    "superset",
    "equals",
    "matches",
    "present",
    "judge",
    "custom",
)
_SCORER_EXAMPLE = (
    "- exact_set: ticket.annotations, - present: [ticket.goal], - custom: rules.py:check"
)


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Fixture:
    """One recorded tool response, replayed when a call's arguments match."""

    args: dict[str, Any]
    """Arguments as written in the case file; env.py documents how calls match them."""
    response: Any
    """What the tool answers (JSON-ready)."""


@dataclass(frozen=True)
class PathSpec:
    """A scorer of what one path of the final state holds (exact_set, subset, superset,
    equals, matches)."""

    kind: ClassVar[str]
    """How suite.yaml names the scorer; its first field is the scorer's value there,
    the others are keys beside it."""

    path: str
    """Dotted path into the state, e.g. `ticket.annotations` (digits index lists)."""

    def described(self) -> str:
        """The spec in one line, as `passhat check` lists it."""
        return f"{self.kind} {self.path}"


@dataclass(frozen=True)
class ExactSetSpec(PathSpec):
    """The items at `path` of the final state must equal the goal's, as a set."""

    kind: ClassVar[str] = "exact_set"
    """subset and superset share these fields."""

    item: str | None = None
    """How an item is named and compared, e.g. `AC{ac}:{label}`: the fields it
    names are the item's identity (other fields, like a free-text note, are
    ignored). None: text items as they are, anything else as canonical JSON."""

    def described(self) -> str:
        return super().described() + (f" (items {self.item})" if self.item else "")


@dataclass(frozen=True)
class SubsetSpec(ExactSetSpec):
    """The items at `path` of the final state must all be goal items (none extra);
    a goal item may be missing."""

    kind: ClassVar[str] = "subset"


@dataclass(frozen=True)
class SupersetSpec(ExactSetSpec):
    """The final state must hold every goal item at `path` (none missing); extra
    items are allowed."""

    kind: ClassVar[str] = "superset"


@dataclass(frozen=True)
class EqualsSpec(PathSpec):
    """The value at `path` of the final state must equal the goal's (JSON equality:
    true is not 1); the details list every difference by path. A `path` of `.`
    compares the whole state."""

    kind: ClassVar[str] = "equals"


@dataclass(frozen=True)
class MatchesSpec(PathSpec):
    """The text at `path` of the final state must match a regular expression."""

    kind: ClassVar[str] = "matches"

    pattern: str
    """A Python regular expression, searched anywhere in the text (anchor it with ^...$)."""

    def described(self) -> str:
        return f"{super().described()} {self.pattern}"


@dataclass(frozen=True)
class JudgeSpec:
    """A model grades the final state against a rubric (its own model, not the agent's)."""

    kind: ClassVar[str] = "judge"

    rubric: str
    """What a passing final state looks like, in words."""
    model: str
    """The judge's model spec, e.g. `openai:gpt-4o-mini` or `replay:cassettes/judge.jsonl`."""
    paths: tuple[str, ...] = ()
    """The parts of the final state the judge reads; empty: all of it."""
    params: dict[str, Any] = field(default_factory=dict)
    """The judge model's parameters (temperature...)."""
    base_url: str | None = None
    """An OpenAI-compatible or Anthropic endpoint for the judge."""

    def described(self) -> str:
        return f"judge by {self.model}" + (f" on {', '.join(self.paths)}" if self.paths else "")


@dataclass(frozen=True)
class PresentSpec:
    """Every path must hold something: not missing, null, blank text or empty."""

    kind: ClassVar[str] = "present"

    paths: tuple[str, ...]
    """Dotted paths into the final state."""

    def described(self) -> str:
        return "present " + ", ".join(self.paths)


@dataclass(frozen=True)
class CustomSpec:
    """A user's scorer, by import path, called as `fn(final_state, goal, **params)`."""

    kind: ClassVar[str] = "custom"

    ref: str
    """`package.module:name`, or `file.py:name` relative to the suite folder."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments passed on every call."""

    def described(self) -> str:
        return f"custom {self.ref}" + (f" {canonical_json(self.params)}" if self.params else "")


ScorerSpec = ExactSetSpec | EqualsSpec | MatchesSpec | PresentSpec | JudgeSpec | CustomSpec


@dataclass(frozen=True)
class SuiteDefaults:
    """How the suite's cases are run unless the command line says otherwise."""

    model: str | None = None
    """Free model string, e.g. `replay:cassettes/seed.jsonl` (paths are relative to
    the suite folder); `--model` overrides it. None: the suite's agent calls no model."""
    agent: str = "clarifier"
    """Built-in agent name, `package.module:name`, or `command:{...}` (a command agent)."""
    k: int = 3
    """Runs per case (at least 1)."""
    params: dict[str, Any] = field(default_factory=dict)
    """Model parameters (temperature...), passed through as written."""
    max_turns: int = 10
    """Model calls allowed per run (at least 1)."""
    scorers: tuple[ScorerSpec, ...] = ()
    """Every scorer must pass for a run to pass."""


class Case:
    """One evaluation case: the input, the recorded world and the goal state.

    Immutable. A suite of 10,000 cases stays loaded for a whole experiment, so a
    case keeps its input, fixtures and goal as pickled bytes on its suite's shelf
    (`_Shelf`: a temporary file, not the heap) and reading one of them gives a fresh
    copy: what a run, a scorer or an environment does with it never reaches the next
    run. In memory a case is its id, tags, hash, file and where its bytes are."""

    __slots__ = ("_file", "_n", "_shelf", "hash", "id", "tags")
    _FIELDS: ClassVar = ("id", "tags", "hash", "_file", "_shelf", "_n")
    """The slots in the order `_set` takes them."""

    id: str
    """Unique within the suite; letters, digits, '.', '_' and '-'."""
    tags: tuple[str, ...]
    """Free labels for selecting and grouping cases."""
    hash: str
    """SHA-256 (hex) of the canonical JSON of input, fixtures and goal."""
    _file: str
    _shelf: _Shelf
    _n: int
    """The number of the input's blob on the shelf; fixtures and goal follow it."""

    def __init__(
        self,
        id: str,
        input: dict[str, Any],
        fixtures: dict[str, list[Fixture]],
        goal: dict[str, Any],
        tags: tuple[str, ...],
        file: Path,
        hash: str,
    ) -> None:
        plain = {tool: [(f.args, f.response) for f in items] for tool, items in fixtures.items()}
        blobs = (_pack(input), _pack(plain), _pack(goal))
        self._set(id, tags, hash, str(file), *_shelved(_Shelf(spill=False), blobs))

    def _set(self, *values: Any) -> None:
        for name, value in zip(self._FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def _blob(self, part: int) -> bytes:
        """The pickled input (0), fixtures (1) or goal (2)."""
        return self._shelf.get(self._n + part)

    @property
    def input(self) -> dict[str, Any]:
        """What the agent starts from; for the clarifier, `{"ticket": {...}}` (a copy)."""
        value: dict[str, Any] = _unpack(self._blob(0))
        return value

    @property
    def fixtures(self) -> dict[str, list[Fixture]]:
        """Recorded responses per tool name (a copy)."""
        return {
            tool: [Fixture(args=args, response=response) for args, response in items]
            for tool, items in _unpack(self._blob(1)).items()
        }

    @property
    def goal(self) -> dict[str, Any]:
        """The human-confirmed goal state the final state is graded against (a copy)."""
        value: dict[str, Any] = _unpack(self._blob(2))
        return value

    @property
    def file(self) -> Path:
        """The case file (resolved)."""
        return Path(self._file)

    @property
    def file_text(self) -> str:
        """The case file's path as text (grading looks at it before every run: no Path)."""
        return self._file

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Case is immutable; cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Case is immutable; cannot delete {name}")

    def _key(self) -> tuple[Any, ...]:
        """Everything the case is, its content as the pickled bytes (not where they are)."""
        return (
            self.id,
            self.tags,
            self.hash,
            self._file,
            *(self._blob(p) for p in range(3)),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Case) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.id, self.hash))

    def __repr__(self) -> str:
        return f"Case(id={self.id!r}, tags={self.tags!r}, file={self._file!r}, hash={self.hash!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # shipped (Dask) with its bytes; the other process keeps them in memory
        return (_case_from_state, (self._key(),))


def _case_of(
    id: str,
    input: dict[str, Any],
    fixtures: dict[str, list[tuple[dict[str, Any], Any]]],
    goal: dict[str, Any],
    tags: tuple[str, ...],
    file: str,
    hash: str,
    shelf: _Shelf,
) -> Case:
    """A Case from plain parts, its content put on `shelf`: fixtures as (args, response)
    pairs per tool (no `Fixture` objects on the way: the loader makes thousands)."""
    case = Case.__new__(Case)
    blobs = (_pack(input), _pack(fixtures), _pack(goal))
    case._set(id, tags, hash, file, *_shelved(shelf, blobs))
    return case


def _case_from_state(state: tuple[Any, ...]) -> Case:
    """A Case from `Case._key()`: id, tags, hash, file and the three pickled blobs."""
    id, tags, hash, file, *blobs = state
    case = Case.__new__(Case)
    case._set(id, tags, hash, file, *_shelved(_Shelf(spill=False), blobs))
    return case


def _shelved(shelf: _Shelf, blobs: Sequence[bytes]) -> tuple[_Shelf, int]:
    """Put the blobs on the shelf in order; (the shelf, the first one's number)."""
    first = shelf.put(blobs[0])
    for blob in blobs[1:]:
        shelf.put(blob)
    return shelf, first


def _pack(value: Any) -> bytes:
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def _unpack(blob: bytes) -> Any:
    return pickle.loads(blob)


class _Shelf:
    """Append-only numbered blobs: the pickled content of a loaded suite's cases.

    With `spill` (a loaded suite) the blobs go to an anonymous temporary file (unlinked
    at once, closed with the shelf), and each read is one `os.pread` (from the page
    cache, under a microsecond): a loaded case holds its id, tags, hash and file in
    memory, not its content. For the seed's ticket that is 2.3 KB a case less; with it,
    `passhat run` of 10,000 cases at k = 10 peaked at 76 MiB instead of 99 MiB (100
    cases: 67 MiB). Blobs are buffered and written 1 MiB at a time; `flush` writes the
    rest once the suite is loaded, after which the shelf is only read (from any thread:
    pread takes its own offset). Without `spill`, or when no temporary file can be made
    or written (no TMPDIR, no room in it), the blobs stay in memory: as fast, only
    larger. (Where TMPDIR is a tmpfs, the file's pages are memory too, only not the
    process's RSS; on a disk the kernel may drop them and read them back.)"""

    FLUSH_BYTES = 1 << 20

    __slots__ = ("__weakref__", "_buffer", "_ends", "_fd", "_spill", "_written")

    def __init__(self, *, spill: bool = True) -> None:
        self._ends = array.array("Q", [0])
        """Where each blob ends (blob i is bytes ends[i]..ends[i+1] of the shelf)."""
        self._buffer = bytearray()
        """Blobs not written yet: the shelf's bytes from `_written` on."""
        self._written = 0
        """Bytes in the file."""
        self._fd: int | None = None
        """The temporary file (None: no file, every blob in memory)."""
        self._spill = False
        """Whether `flush` writes to the file (until a write fails)."""
        if spill and hasattr(os, "pread"):
            try:
                file = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 (closed by the finalizer)
            except OSError:
                return
            self._fd, self._spill = file.fileno(), True
            weakref.finalize(self, file.close)

    def put(self, blob: bytes) -> int:
        """Add a blob; its number."""
        self._buffer += blob
        self._ends.append(self._ends[-1] + len(blob))
        if len(self._buffer) >= self.FLUSH_BYTES:
            self.flush()
        return len(self._ends) - 2

    def flush(self) -> None:
        """Write the buffered blobs to the file. Without a file they stay in memory, and
        so do these and all later ones when writing fails (the bytes already written
        are still read from the file)."""
        fd = self._fd
        if fd is None or not self._spill or not self._buffer:
            return
        done = 0
        try:
            while done < len(self._buffer):
                done += os.pwrite(fd, memoryview(self._buffer)[done:], self._written + done)
        except OSError:
            self._spill = False
            return
        self._written += done
        self._buffer = bytearray()

    def get(self, number: int) -> bytes:
        """The blob's bytes (a new bytes object)."""
        start, end = self._ends[number], self._ends[number + 1]
        if start >= self._written:
            return bytes(memoryview(self._buffer)[start - self._written : end - self._written])
        assert self._fd is not None
        return os.pread(self._fd, end - start, start)


@dataclass(frozen=True)
class Suite:
    """A loaded, valid suite."""

    name: str
    """Short name from suite.yaml."""
    description: str
    """What the suite evaluates, and for the clarifier how to label."""
    path: Path
    """The suite folder (resolved); relative paths in the suite start here."""
    labels: tuple[str, ...]
    """The label set (annotation labels for tickets, card labels for boards)."""
    environment: str
    """Which world the cases run in: `ticket`, `board`, `tools` or a user's
    `file.py:Class` / `package.module:Class` (see env.py)."""
    defaults: SuiteDefaults
    """Agent, model, k, parameters, turn limit and scorers."""
    cases: tuple[Case, ...]
    """Every case, sorted by id."""
    hash: str
    """SHA-256 (hex) of the suite's whole content (see the module docstring)."""
    environment_config: dict[str, Any] = field(default_factory=dict)
    """suite.yaml's tools, state, input_schema and goal_schema (the `tools` environment)."""
    environment_hash: str | None = None
    """SHA-256 of a user environment's source file (None for the built-in ones):
    an experiment records it, and resume refuses when it changed."""
    loaded_with: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The `environment` and `scorers` load_suite was given in place of suite.yaml's (empty:
    none): the suite's guard loads it again alike (tamper.py), or finds another hash."""

    def case(self, case_id: str) -> Case:
        """The case with this id; a ConfigError naming the known ids otherwise."""
        for case in self.cases:
            if case.id == case_id:
                return case
        ids = [c.id for c in self.cases]
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        raise ConfigError(
            f"no case {case_id!r} in suite {self.name!r}{did_you_mean(case_id, ids)}; "
            f"its cases are {shown}"
        )
