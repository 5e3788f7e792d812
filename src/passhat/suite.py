"""Suites: a folder of cases, loaded, validated and hashed before anything runs.

A suite is a folder::

    suite.yaml      name, description, environment, labels, defaults (agent,
                    model, k, params, max_turns, scorers)
    cases/*.yaml    one case per file: id, input, fixtures, goal, optional tags

`load_suite` reads YAML safely (plain data only; a key written twice is refused
rather than silently dropped; anchors and aliases are refused, so the data is a
tree and every check and hash walks each value once), checks every file against
its schema, the environment (its class, loaded through passhat/imports.py like a
user's, checks itself and every case: env.py's protocol) and the scorers, and
raises one `SuiteError` listing every problem found, each naming the file, the
field path and the fix. This module imports neither env.py nor scoring.py: the
layering runs one way, suite -> environment -> scoring. A loaded suite is immutable and carries content hashes,
so an experiment records exactly what it ran on:

- a case's hash covers its input, fixtures and goal;
- the suite's hash covers suite.yaml's content (with defaults filled in, the
  `tools` environment's declaration included), every case id with its hash, and
  the bytes of any scorer file beside suite.yaml;
- a user environment's source file has its own hash (`environment_hash`), which
  the experiment records, so resume names it when it changed.

Both are SHA-256 over canonical JSON (sorted keys, no whitespace), so key order,
YAML formatting and comments never change them; any change of content does.
"""

from __future__ import annotations

import array
import functools
import hashlib
import inspect
import json
import math
import os
import pickle
import re
import string
import sys
import tempfile
import types
import typing
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from passhat.errors import ConfigError, SuiteError
from passhat.imports import BUILTIN_ENVIRONMENTS, load_object, source_hash
from passhat.plain import MAX_K, MISSING, get_path, path_loc
from passhat.plain import Loc as Loc  # re-exported: these predate plain.py
from passhat.plain import canonical_json as canonical_json
from passhat.plain import did_you_mean as did_you_mean
from passhat.plain import field_path as field_path
from passhat.plain import sha256_json as sha256_json
from passhat.plain import show as show
from passhat.records import COMMAND_AGENT

__all__ = [
    "Case",
    "CaseReader",
    "CustomSpec",
    "EqualsSpec",
    "ExactSetSpec",
    "Fixture",
    "JudgeSpec",
    "MatchesSpec",
    "PresentSpec",
    "ScorerSpec",
    "SubsetSpec",
    "Suite",
    "SuiteDefaults",
    "SupersetSpec",
    "load_suite",
]

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
class ExactSetSpec:
    """The items at `path` of the final state must equal the goal's, as a set."""

    kind: ClassVar[str] = "exact_set"
    """How suite.yaml names the scorer (subset and superset share these fields)."""

    path: str
    """Dotted path into the state, e.g. `ticket.annotations` (digits index lists)."""
    item: str | None = None
    """How an item is named and compared, e.g. `AC{ac}:{label}`: the fields it
    names are the item's identity (other fields, like a free-text note, are
    ignored). None: text items as they are, anything else as canonical JSON."""


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
class EqualsSpec:
    """The value at `path` of the final state must equal the goal's (JSON equality:
    true is not 1); the details list every difference by path."""

    path: str
    """Dotted path into the state; `.` compares the whole state."""


@dataclass(frozen=True)
class MatchesSpec:
    """The text at `path` of the final state must match a regular expression."""

    path: str
    """Dotted path into the state."""
    pattern: str
    """A Python regular expression, searched anywhere in the text (anchor it with ^...$)."""


@dataclass(frozen=True)
class JudgeSpec:
    """A model grades the final state against a rubric (its own model, not the agent's)."""

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


@dataclass(frozen=True)
class PresentSpec:
    """Every path must hold something: not missing, null, blank text or empty."""

    paths: tuple[str, ...]
    """Dotted paths into the final state."""


@dataclass(frozen=True)
class CustomSpec:
    """A user's scorer, by import path, called as `fn(final_state, goal, **params)`."""

    ref: str
    """`package.module:name`, or `file.py:name` relative to the suite folder."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments passed on every call."""


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

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Case is immutable; cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Case is immutable; cannot delete {name}")

    def _key(self) -> tuple[Any, ...]:
        """Everything the case is, its content as the pickled bytes (not where they are)."""
        return (self.id, self.tags, self.hash, self._file, *(self._blob(p) for p in range(3)))

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


# --------------------------------------------------------------- shared helpers


class StrictModel(BaseModel):
    """Base of the file schemas: no coercion, no unknown keys."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def validation_problems(
    error: ValidationError, model: type[BaseModel], prefix: Loc = ()
) -> list[tuple[Loc, str]]:
    """Pydantic's errors as (location, message-with-the-fix) pairs."""
    out: list[tuple[Loc, str]] = []
    for err in error.errors():
        loc: Loc = tuple(err["loc"])
        out.append((prefix + loc, _error_message(err, model, loc)))
    return out


def _error_message(err: Any, model: type[BaseModel], loc: Loc) -> str:
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    if kind == "missing":
        info = _field_at(model, loc)
        hint = f": {info.description}" if info is not None and info.description else ""
        return f"missing; add it{hint}"
    if kind == "extra_forbidden":
        allowed = _keys_at(model, loc[:-1])
        key = str(loc[-1])
        return (
            f"unknown key {show(key)}; the keys allowed here are {', '.join(allowed)}"
            f"{did_you_mean(key, allowed)}"
        )
    expected = _EXPECTED.get(kind)
    if expected is not None:
        quote = "; put it in quotes" if kind == "string_type" and _is_scalar(value) else ""
        return f"expected {expected}, got {show(value)}{quote}"
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        return f"is {show(value)}; it must be at least {bound}"
    if kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        return f"is {show(value)}; it must be at most {bound:,}"
    if kind == "string_too_short":
        return "is empty; write some text"
    if kind == "too_short":
        return f"is empty; give at least {ctx.get('min_length', 1)} item(s)"
    return str(err["msg"])


_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "list_type": "a list ('- item' lines or [a, b])",
    "tuple_type": "a list ('- item' lines or [a, b])",
    "dict_type": "a mapping ('key: value' lines)",
    "model_type": "a mapping ('key: value' lines)",
    "model_attributes_type": "a mapping ('key: value' lines)",
}


def _is_scalar(value: Any) -> bool:
    return isinstance(value, int | float | bool) or value is None


def _model_at(model: type[BaseModel], loc: Loc) -> Any:
    """The annotation reached by walking `loc` through models, lists and dicts."""
    current: Any = model
    for part in loc:
        current = _step(current, part)
        if current is None:
            return None
    return current


def _step(annotation: Any, part: str | int) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _step(arg, part)
            if found is not None:
                return found
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        info = annotation.model_fields.get(part) if isinstance(part, str) else None
        return info.annotation if info is not None else None
    if origin in (list, tuple) and isinstance(part, int):
        return typing.get_args(annotation)[0]
    if origin is dict and isinstance(part, str):
        return typing.get_args(annotation)[1]
    return None


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def _keys_at(model: type[BaseModel], loc: Loc) -> list[str]:
    found = _unwrap_model(_model_at(model, loc))
    return list(found.model_fields) if found is not None else []


def _field_at(model: type[BaseModel], loc: Loc) -> FieldInfo | None:
    owner = _unwrap_model(_model_at(model, loc[:-1]))
    if owner is None or not isinstance(loc[-1], str):
        return None
    return owner.model_fields.get(loc[-1])


# ----------------------------------------------------------------------- YAML


# libyaml's parser when PyYAML was built with it (its wheels are): several times
# faster on a suite of a thousand cases; the safe constructor is the same Python code.
if hasattr(yaml, "CSafeLoader"):  # noqa: SIM108  (mypy needs a plain class for the base)
    _SafeLoader = yaml.CSafeLoader
else:  # pragma: no cover - PyYAML built without libyaml
    _SafeLoader = yaml.SafeLoader  # type: ignore[misc,assignment]


class _UniqueKeyLoader(_SafeLoader):
    """SafeLoader that refuses a key written twice in one mapping."""

    plain: bool = True
    """`_load_yaml`'s finding: nothing but JSON's kinds of values read so far."""

    # The safe loader has no path resolvers, so the composer's two calls per node to
    # descend and ascend them do nothing: they are answered by builtins that do nothing
    # either (`{}.get(node, index)`, `{}.clear()`), which cost no Python frame (a
    # tenth of a case file's load as Python methods; a class attribute that is a
    # builtin is not bound to the loader).
    descend_resolver: Any = {}.get
    ascend_resolver: Any = {}.clear

    # libyaml asks this for every node: the base class's answer, without its list
    # concatenation per scalar and path-resolver checks (a safe loader has none).
    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _FIRST_CHAR_RESOLVERS.get(value[:1], _ANY_CHAR_RESOLVERS):
                    if regexp.match(value):
                        return tag
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str | int | float | bool) and key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {show(key)} is written twice (first on line "
                    f"{seen[key].line + 1}); keep one",
                    key_node.start_mark,
                )
            if isinstance(key, str | int | float | bool):
                seen[key] = key_node.start_mark
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_INT = "tag:yaml.org,2002:int"
_ANY_CHAR_RESOLVERS = list(_UniqueKeyLoader.yaml_implicit_resolvers.get(None, []))
_FIRST_CHAR_RESOLVERS: dict[Any, list[tuple[str, Any]]] = {
    first: list(resolvers) + _ANY_CHAR_RESOLVERS
    for first, resolvers in _UniqueKeyLoader.yaml_implicit_resolvers.items()
    if first is not None
}
"""The implicit resolvers of a plain scalar by its first character ('' for an empty one)."""


def load_yaml(text: str) -> Any:
    """`yaml.load(text, Loader=_UniqueKeyLoader)`, several times faster on case files.

    libyaml composes the node tree (tags already resolved); plain mappings,
    sequences and strings become Python values here in one tight recursion, and
    anything else (numbers, booleans, null, dates, an unusual key) goes through the
    safe constructor as before: same values, same errors."""
    return _load_yaml(text)[0]


def _load_yaml(text: str) -> tuple[Any, bool]:
    """`load_yaml`'s value, and True when it surely holds only what JSON holds (text
    keys; text, whole and finite numbers, booleans, null): found while the value is
    built, so a file is not walked a second time to check it. False: anything else
    was read somewhere (`_json_problems` names it, or finds nothing after all)."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, True
        loader.plain = True
        return _value(node, loader), loader.plain
    finally:
        loader.dispose()


_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})


def _value(node: yaml.Node, loader: _UniqueKeyLoader) -> Any:
    if isinstance(node, yaml.ScalarNode):
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag == _INT:
            text = node.value
            if text.isascii() and text.isdigit() and (len(text) == 1 or text[0] != "0"):
                return int(text)  # plain decimal; signs, 0x, 0o, 1_000, 1:30 go the long way
        value = loader.construct_object(node, deep=True)
        kind = type(value)
        if kind not in _PLAIN_SCALARS and not (kind is float and math.isfinite(value)):
            loader.plain = False  # a date, NaN, bytes...: named after the load
        return value
    if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
        # text items inline: a call per scalar is most of this function's time
        return [
            item.value
            if type(item) is yaml.ScalarNode and item.tag == _STR
            else _value(item, loader)
            for item in node.value
        ]
    if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
        out: dict[Any, Any] = {}
        marks: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if (
                not isinstance(key_node, yaml.ScalarNode)
                or key_node.tag == "tag:yaml.org,2002:merge"
            ):
                loader.plain = False
                return loader.construct_object(node, deep=True)  # the general path
            if key_node.tag == _STR:
                key = key_node.value
            else:
                key = _value(key_node, loader)
                if type(key) is not str:
                    loader.plain = False
            if key in marks:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {show(key)} is written twice (first on line "
                    f"{marks[key].line + 1}); keep one",
                    key_node.start_mark,
                )
            marks[key] = key_node.start_mark
            if type(value_node) is yaml.ScalarNode and value_node.tag == _STR:
                out[key] = value_node.value
            else:
                out[key] = _value(value_node, loader)
        return out
    loader.plain = False  # a tagged collection (!!set, !!omap...)
    return loader.construct_object(node, deep=True)


def _anchor_problem(text: str) -> str | None:
    """Where a YAML text first writes an anchor or alias, as a message; None if nowhere.

    Suites refuse them: an alias makes two places of the data one object, so a few
    hundred bytes of nested aliases expand into millions of nodes for the checks and
    hashes to walk, and an alias inside its own anchor is a cycle. libyaml composes
    nodes in C, so this looks at the parser's events instead of the composer's nodes.
    """
    if "&" not in text and "*" not in text:
        return None  # neither can be written without its indicator: no parse needed
    for event in yaml.parse(text, Loader=_SafeLoader):
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            mark = event.start_mark
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            kind = "alias *" if isinstance(event, yaml.AliasEvent) else "anchor &"
            return (
                f"{where}YAML anchors and aliases are not allowed in suites; write the "
                f"value out (found the {kind}{event.anchor})"
            )
    return None


def _yaml_message(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    if "could not determine a constructor" in problem or "python/" in problem:
        problem += "; passhat reads plain YAML data only (no !tags)"
    return f"{where}invalid YAML: {problem}"


def _json_problems(value: Any, loc: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """What YAML read that JSON cannot hold (dates, sets, non-text keys, NaN...)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield (*loc, str(key)), f"the key {show(key)} is not text; put it in quotes"
            else:
                yield from _json_problems(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_problems(item, (*loc, index))
    elif isinstance(value, float) and not math.isfinite(value):
        yield loc, f"{value} is not a number JSON can hold; write a finite number"
    elif not (value is None or isinstance(value, str | int | float | bool)):
        kind = type(value).__name__
        yield loc, f"YAML read this as a {kind} ({value}); put it in quotes to keep it text"


# ----------------------------------------------------------------- file schemas


class _CommandAgentFile(StrictModel):
    """`agent: {command: [...], ...}`: a command agent (agents/command.py)."""

    command: list[str] = Field(
        min_length=1, description="the program and its arguments, e.g. [node, dist/agent.js]"
    )
    cwd: str = Field(".", min_length=1)
    env: dict[str, str | int | float | bool] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    output: typing.Literal["json", "text"] = "json"


def command_agent_spec(config: _CommandAgentFile) -> str:
    """The agent spec string a command agent is recorded and resumed by."""
    data = config.model_dump(exclude_defaults=True)
    data.setdefault("cwd", config.cwd)
    return COMMAND_AGENT + json.dumps(data, ensure_ascii=False, sort_keys=True)


class _DefaultsFile(StrictModel):
    agent: Any = Field(
        "clarifier",
        description="a built-in agent name, package.module:name, or "
        "{command: [program, args...]} for an agent in any language",
    )
    model: str | None = Field(
        None,
        min_length=1,
        description="the model to run, e.g. replay:cassettes/seed.jsonl or "
        "openai:gpt-4o-mini (--model overrides it; leave it out when the agent calls none)",
    )
    k: int = Field(3, ge=1, le=MAX_K)
    params: dict[str, Any] = Field(default_factory=dict)
    max_turns: int = Field(10, ge=1)
    scorers: list[Any] = Field(
        min_length=1,
        description=f"the scorers every run must pass, e.g. {_SCORER_EXAMPLE}",
    )


class _SuiteFile(StrictModel):
    name: str = Field(min_length=1, description="a short name for the suite, e.g. clarify")
    description: str = ""
    environment: str = Field(
        min_length=1,
        description="the world cases run in: ticket, board, tools or file.py:ClassName",
    )
    labels: list[str] = Field(default_factory=list)
    tools: list[Any] | None = None
    state: dict[str, Any] | None = None
    input_schema: dict[str, Any] | None = None
    goal_schema: dict[str, Any] | None = None
    defaults: _DefaultsFile = Field(
        description="agent, model, k and scorers, e.g. defaults: {k: 3, scorers: [...]}"
    )


class _ExactSetFile(StrictModel):
    exact_set: str = Field(min_length=1)
    item: str | None = Field(None, min_length=1)


class _SubsetFile(StrictModel):
    subset: str = Field(min_length=1)
    item: str | None = Field(None, min_length=1)


class _SupersetFile(StrictModel):
    superset: str = Field(min_length=1)
    item: str | None = Field(None, min_length=1)


class _EqualsFile(StrictModel):
    equals: str = Field(min_length=1)


class _MatchesFile(StrictModel):
    matches: str = Field(min_length=1)
    pattern: str = Field(description="a regular expression the text must match, e.g. '^AC'")


class _JudgeFile(StrictModel):
    judge: str = Field(min_length=1)
    model: str = Field(
        min_length=1, description="the judge's model, e.g. replay:cassettes/judge.jsonl"
    )
    paths: list[str] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    base_url: str | None = None


class _PresentFile(StrictModel):
    present: list[str] = Field(min_length=1)


class _CustomFile(StrictModel):
    custom: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class _FixtureFile(StrictModel):
    args: dict[str, Any] = Field(description="the call's arguments, e.g. {query: ...}")
    response: Any = Field(description="what the tool answers")


class _CaseFile(StrictModel):
    id: str = Field(min_length=1, description="a unique case id such as ac-conflict-001")
    input: dict[str, Any] = Field(description="what the agent starts from")
    fixtures: dict[str, list[_FixtureFile]] = Field(default_factory=dict)
    goal: dict[str, Any] = Field(description="the goal state the final state must match")
    tags: list[str] = Field(default_factory=list)


_PATH = re.compile(r"^[^.\s]+(\.[^.\s]+)*$")


def _path_problem(path: str) -> str | None:
    if _PATH.match(path):
        return None
    return f"{show(path)} is not a dotted path; write keys joined by dots, e.g. ticket.annotations"


MAX_FORMAT_NUMBER = 100
"""Largest width or precision an item template may ask for: `{ac:>10000000000}`
would make every item string gigabytes long."""


def _template_problem(template: str) -> str | None:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        return f"{show(template)} is not a valid item template ({error}); e.g. 'AC{{ac}}:{{label}}'"
    fields = [f for _, f, _, _ in parsed if f is not None]
    for _, name, spec, _ in parsed:
        numbers = [int(n) for n in re.findall(r"\d+", spec or "")]
        if numbers and max(numbers) > MAX_FORMAT_NUMBER:
            return (
                f"{show(template)}: the format of {{{name}}} asks for a width or precision of "
                f"{max(numbers):,}; use at most {MAX_FORMAT_NUMBER}, e.g. 'AC{{ac:>3}}:{{label}}'"
            )
    bad = [f for f in fields if not f.isidentifier()]
    if not fields or bad:
        return (
            f"{show(template)} must name item fields in braces, each a plain key, "
            "e.g. 'AC{ac}:{label}'"
        )
    return None


@functools.lru_cache(maxsize=256)
def template_fields(template: str) -> tuple[str, ...]:
    """The fields an item template names, e.g. `AC{ac}:{label}` -> (ac, label)."""
    return tuple(f for _, f, _, _ in string.Formatter().parse(template) if f)


# ---------------------------------------------------------------------- loading


def load_suite(
    path: str | Path, *, environment: str | None = None, scorers: list[Any] | None = None
) -> Suite:
    """Load and validate a suite folder (or its suite.yaml); SuiteError lists every problem.

    `environment` and `scorers` replace suite.yaml's `environment` and
    `defaults.scorers` (as suite.yaml would write them) before anything is checked:
    the suite, its hash included, is what suite.yaml with them would give."""
    overrides: dict[str, Any] = {}
    if environment is not None:
        overrides["environment"] = environment
    if scorers is not None:
        overrides["scorers"] = scorers
    return _Loader(Path(path), overrides).load()


class CaseReader:
    """suite.yaml's scorers and single cases read from `cases/<id>.yaml` (or `.yml`),
    without reading the other case files: what a report reads to explain a few cases of
    a suite of 10,000 (a whole load takes seconds). SuiteError when the folder or
    suite.yaml's scorers are not valid."""

    def __init__(self, path: str | Path) -> None:
        self._loader = loader = _Loader(Path(path))
        if not loader.root.is_dir():
            raise SuiteError(f"{loader.shown}: no such folder; give a suite folder")
        head = loader._suite_file()
        specs = loader._scorer_specs() if head is not None else None
        if specs is None:
            problem = loader.problems[0] if loader.problems else f"{loader.shown}: no scorers"
            raise SuiteError(problem, loader.problems)
        self.scorers: tuple[ScorerSpec, ...] = tuple(specs)

    def case(self, case_id: str) -> Case | None:
        """The case from its own file; None when no file of that name holds it, valid."""
        loader = self._loader
        for ext in (".yaml", ".yml"):
            rel = f"{CASES_DIR}/{case_id}{ext}"
            if (loader.root / rel).is_file():
                read = loader._case(rel, None, (), list(self.scorers))
                loader.shelf.flush()
                if read is not None and read[0].id == case_id:
                    return read[0]
        return None


class _Loader:
    """One load: collects every problem before giving up."""

    def __init__(self, given: Path, overrides: dict[str, Any] | None = None) -> None:
        self.overrides = overrides or {}
        """suite.yaml's environment and defaults.scorers given by the caller (`load_suite`)."""
        if given.name == SUITE_FILE and given.is_file():
            given = given.parent
        self.shown = given
        self.root = given.resolve()
        self.problems: list[str] = []
        self.env_name: str | None = None
        """suite.yaml's environment, when it is text (even if other fields are wrong)."""
        self.labels: tuple[str, ...] | None = None
        """suite.yaml's labels, when they are a list of text."""
        self.scorers: list[Any] | None = None
        """suite.yaml's defaults.scorers, when they are a non-empty list."""
        self.env_config: dict[str, Any] = {}
        """suite.yaml's settings of the declarative `tools` environment."""
        self.env_hash: str | None = None
        """SHA-256 of a user environment's source file."""
        self.shelf = _Shelf()
        """Where the cases' content goes (see `Case`)."""
        self.item_keys: dict[int, set[str]] = {}
        """Per set scorer with an item template (by index): every key any goal item holds."""

    def problem(self, rel: str, loc: Loc, message: str) -> None:
        where = field_path(loc)
        head = str(self.shown / rel) if rel else str(self.shown)
        self.problems.append(f"{head}: {where}: {message}" if where else f"{head}: {message}")

    def load(self) -> Suite:
        if not self.root.exists():
            raise SuiteError(
                f"{self.shown}: no such folder; give a suite folder holding {SUITE_FILE} "
                f"and {CASES_DIR}/"
            )
        if not self.root.is_dir():
            raise SuiteError(
                f"{self.shown}: is a file, not a suite folder; give the folder holding "
                f"{SUITE_FILE} and {CASES_DIR}/"
            )
        head = self._suite_file()
        agent = self._agent_spec(head.defaults.agent) if head is not None else None
        specs = self._scorer_specs()
        env_cls = self._environment(self.env_name) if self.env_name else None
        if env_cls is not None and self.labels is not None:
            for loc, message in env_cls.check_labels(self.labels):
                self.problem(SUITE_FILE, loc, message)
        cases, goal_problems = self._cases(
            env_cls if self.labels is not None else None, self.labels or (), specs or []
        )
        scorer_hashes: dict[str, str] = {}
        if specs is not None:
            scorer_hashes = self._check_scorers(specs, goal_problems)
        if self.problems or head is None or specs is None or agent is None:
            count = len(self.problems)
            raise SuiteError(
                f"{self.shown}: {count} problem{'s' if count != 1 else ''} in the suite",
                self.problems,
            )
        defaults = SuiteDefaults(
            agent=agent,
            model=head.defaults.model,
            k=head.defaults.k,
            params=dict(head.defaults.params),
            max_turns=head.defaults.max_turns,
            scorers=tuple(specs),
        )
        ordered = tuple(sorted(cases, key=lambda c: c.id))
        content = {
            "suite": {
                "name": head.name,
                "description": head.description,
                "environment": head.environment,
                "labels": list(head.labels),
                "defaults": _defaults_dict(defaults),
            },
            "cases": {c.id: c.hash for c in ordered},
            "scorer_files": scorer_hashes,
        }
        if self.env_config:
            content["environment_config"] = self.env_config
        self.shelf.flush()  # from here on only read
        return Suite(
            name=head.name,
            description=head.description,
            path=self.root,
            labels=tuple(head.labels),
            environment=head.environment,
            defaults=defaults,
            cases=ordered,
            hash=sha256_json(content),
            environment_config=self.env_config,
            environment_hash=self.env_hash,
        )

    # -- files

    def _read(self, rel: str) -> Any:
        """Parsed, JSON-ready YAML of a file, or None (after recording why not)."""
        try:
            with open(os.path.join(self.root, rel), "rb") as file:
                text = file.read().decode("utf-8")
        except FileNotFoundError:
            self.problem(rel, (), "no such file")
            return None
        except UnicodeDecodeError:
            self.problem(rel, (), "is not UTF-8 text; save it as UTF-8")
            return None
        except OSError as error:
            self.problem(rel, (), f"cannot be read ({error.strerror})")
            return None
        try:
            anchor = _anchor_problem(text)
            data, plain = (None, True) if anchor else _load_yaml(text)  # a SafeLoader
        except yaml.YAMLError as error:
            self.problem(rel, (), _yaml_message(error))
            return None
        except ValueError as error:  # an integer past Python's 4,300-digit limit
            self.problem(
                rel, (), f"holds a number too long to read ({error}); quote it to keep it as text"
            )
            return None
        if anchor:
            self.problem(rel, (), anchor)
            return None
        if data is None:
            self.problem(rel, (), "is empty; write the fields as 'key: value' lines")
            return None
        if not isinstance(data, dict):
            self.problem(rel, (), f"expected 'key: value' lines, got {show(data)}")
            return None
        bad = [] if plain else list(_json_problems(data))
        for loc, message in bad:
            self.problem(rel, loc, message)
        return None if bad else data

    def _overridden(self, data: Any) -> Any:
        """suite.yaml's data with the caller's environment and scorers in place."""
        if not self.overrides or not isinstance(data, dict):
            return data
        data = dict(data)
        if "environment" in self.overrides:
            data["environment"] = self.overrides["environment"]
        if "scorers" in self.overrides:
            defaults = data.get("defaults")
            defaults = dict(defaults) if isinstance(defaults, dict) else {}
            defaults["scorers"] = self.overrides["scorers"]
            data["defaults"] = defaults
        return data

    def _suite_file(self) -> _SuiteFile | None:
        if not (self.root / SUITE_FILE).is_file():
            self.problem(
                SUITE_FILE,
                (),
                "no such file; every suite folder needs one (name, environment, labels, defaults)",
            )
            return None
        data = self._read(SUITE_FILE)
        if data is None:
            return None
        data = self._overridden(data)
        # What can be read even when other fields are wrong, so that cases and
        # scorers are still checked and one run lists every problem.
        env_name, labels = data.get("environment"), data.get("labels", [])
        self.env_name = env_name if isinstance(env_name, str) else None
        self.env_config = {k: data[k] for k in ENVIRONMENT_KEYS if k in data}
        if isinstance(labels, list) and all(isinstance(x, str) for x in labels):
            self.labels = tuple(labels)
        defaults = data.get("defaults")
        scorers = defaults.get("scorers") if isinstance(defaults, dict) else None
        self.scorers = scorers if isinstance(scorers, list) and scorers else None
        try:
            head = _SuiteFile.model_validate(data)
        except ValidationError as error:
            for loc, message in validation_problems(error, _SuiteFile):
                self.problem(SUITE_FILE, loc, message)
            return None
        seen: dict[str, int] = {}
        for index, label in enumerate(head.labels):
            if not label.strip():
                self.problem(SUITE_FILE, ("labels", index), "is empty; write the label's name")
            elif label in seen:
                self.problem(
                    SUITE_FILE,
                    ("labels", index),
                    f"{show(label)} repeats labels[{seen[label]}]; list each label once",
                )
            seen.setdefault(label, index)
        return head

    def _agent_spec(self, raw: Any) -> str | None:
        """The agent spec string: a name as written, or a command agent's canonical spec."""
        loc: Loc = ("defaults", "agent")
        if isinstance(raw, str) and raw.strip():
            return raw
        if isinstance(raw, dict):
            try:
                return command_agent_spec(_CommandAgentFile.model_validate(raw))
            except ValidationError as error:
                for where, message in validation_problems(error, _CommandAgentFile, loc):
                    self.problem(SUITE_FILE, where, message)
                return None
        self.problem(
            SUITE_FILE,
            loc,
            f"expected an agent name (clarifier, package.module:name) or "
            f"{{command: [program, args...]}}, got {show(raw)}",
        )
        return None

    def _environment(self, name: str) -> Any:
        """The environment class suite.yaml names, checked; None (after recording why)."""
        try:
            env_cls = load_object(
                BUILTIN_ENVIRONMENTS.get(name, name), self.root, what="environment"
            )
        except ConfigError as error:
            known = sorted(BUILTIN_ENVIRONMENTS)
            # the location already says "environment:", so the message need not
            message = str(error).removeprefix("environment ")
            if ":" not in name:
                message = (
                    f"{show(name)} is not an environment; use one of {', '.join(known)} or "
                    f"file.py:ClassName{did_you_mean(name, known)}"
                )
            self.problem(SUITE_FILE, ("environment",), message)
            return None
        if not (isinstance(env_cls, type) and hasattr(env_cls, "check_class")):
            self.problem(
                SUITE_FILE,
                ("environment",),
                f"{name}: {show(getattr(env_cls, '__name__', env_cls))} is not a "
                "passhat Environment; write class Name(passhat.Environment) with @tool methods",
            )
            return None
        found = env_cls.check_class(self.env_config)
        for loc, message in found:
            prefix = (
                f"{name}: " if loc == ("environment",) and name not in BUILTIN_ENVIRONMENTS else ""
            )
            self.problem(SUITE_FILE, loc, prefix + message)
        if name not in BUILTIN_ENVIRONMENTS:
            self.env_hash = source_hash(env_cls)
        return None if found else env_cls

    def _scorer_specs(self) -> list[ScorerSpec] | None:
        if self.scorers is None:
            return None
        specs: list[ScorerSpec] = []
        ok = True
        for index, raw in enumerate(self.scorers):
            spec = self._scorer_spec(raw, ("defaults", "scorers", index))
            if spec is None:
                ok = False
            else:
                specs.append(spec)
        return specs if ok else None

    def _scorer_spec(self, raw: Any, loc: Loc) -> ScorerSpec | None:
        if not isinstance(raw, dict):
            self.problem(SUITE_FILE, loc, f"expected a scorer such as {_SCORER_EXAMPLE}")
            return None
        kinds = [k for k in _SCORER_KINDS if k in raw]
        if len(kinds) != 1:
            got = "none" if not kinds else " and ".join(kinds)
            keys = [str(k) for k in raw]
            hint = "".join(did_you_mean(k, _SCORER_KINDS) for k in keys[:1]) if not kinds else ""
            self.problem(
                SUITE_FILE,
                loc,
                f"names {got} of the scorer kinds; give exactly one of "
                f"{', '.join(_SCORER_KINDS)}{hint}",
            )
            return None
        model: type[StrictModel] = {  # type: ignore[assignment]
            "exact_set": _ExactSetFile,
            "subset": _SubsetFile,
            "superset": _SupersetFile,
            "equals": _EqualsFile,
            "matches": _MatchesFile,
            "present": _PresentFile,
            "judge": _JudgeFile,
            "custom": _CustomFile,
        }[kinds[0]]
        try:
            parsed = model.model_validate(raw)
        except ValidationError as error:
            for where, message in validation_problems(error, model, loc):
                self.problem(SUITE_FILE, where, message)
            return None
        return self._spec_from(parsed, loc)

    def _spec_from(self, parsed: StrictModel, loc: Loc) -> ScorerSpec | None:
        if isinstance(parsed, _ExactSetFile):
            bad = _path_problem(parsed.exact_set)
            if bad:
                self.problem(SUITE_FILE, (*loc, "exact_set"), bad)
            bad_item = _template_problem(parsed.item) if parsed.item is not None else None
            if bad_item:
                self.problem(SUITE_FILE, (*loc, "item"), bad_item)
            return None if bad or bad_item else ExactSetSpec(parsed.exact_set, parsed.item)
        if isinstance(parsed, _SubsetFile | _SupersetFile):
            path = parsed.subset if isinstance(parsed, _SubsetFile) else parsed.superset
            kind = "subset" if isinstance(parsed, _SubsetFile) else "superset"
            bad = _path_problem(path)
            if bad:
                self.problem(SUITE_FILE, (*loc, kind), bad)
            bad_item = _template_problem(parsed.item) if parsed.item is not None else None
            if bad_item:
                self.problem(SUITE_FILE, (*loc, "item"), bad_item)
            cls = SubsetSpec if kind == "subset" else SupersetSpec
            return None if bad or bad_item else cls(path, parsed.item)
        if isinstance(parsed, _EqualsFile):
            bad = _path_problem(parsed.equals) if parsed.equals != "." else None
            if bad:
                self.problem(SUITE_FILE, (*loc, "equals"), bad)
            return None if bad else EqualsSpec(parsed.equals)
        if isinstance(parsed, _MatchesFile):
            bad = _path_problem(parsed.matches)
            if bad:
                self.problem(SUITE_FILE, (*loc, "matches"), bad)
            try:
                re.compile(parsed.pattern)
            except re.error as error:
                self.problem(
                    SUITE_FILE,
                    (*loc, "pattern"),
                    f"{show(parsed.pattern)} is not a regular expression ({error})",
                )
                return None
            return None if bad else MatchesSpec(parsed.matches, parsed.pattern)
        if isinstance(parsed, _JudgeFile):
            return self._judge_spec(parsed, loc)
        if isinstance(parsed, _PresentFile):
            ok = self._paths_ok(parsed.present, (*loc, "present"))
            return PresentSpec(tuple(parsed.present)) if ok else None
        assert isinstance(parsed, _CustomFile)
        return CustomSpec(parsed.custom, dict(parsed.params))

    def _paths_ok(self, paths: Sequence[str], loc: Loc) -> bool:
        """Name every path of a list that is not a dotted path; True when all are."""
        ok = True
        for index, path in enumerate(paths):
            bad = _path_problem(path)
            if bad:
                self.problem(SUITE_FILE, (*loc, index), bad)
                ok = False
        return ok

    def _judge_spec(self, parsed: _JudgeFile, loc: Loc) -> JudgeSpec | None:
        ok = True
        provider, _, name = parsed.model.partition(":")
        if not name or provider not in ("replay", "openai", "anthropic"):
            self.problem(
                SUITE_FILE,
                (*loc, "model"),
                f"{show(parsed.model)} is not provider:name; use replay:CASSETTE.jsonl, "
                "openai:MODEL or anthropic:MODEL",
            )
            ok = False
        ok = self._paths_ok(parsed.paths, (*loc, "paths")) and ok
        if not parsed.judge.strip():
            self.problem(SUITE_FILE, (*loc, "judge"), "is empty; write the rubric")
            ok = False
        if not ok:
            return None
        return JudgeSpec(
            rubric=parsed.judge,
            model=parsed.model,
            paths=tuple(parsed.paths),
            params=dict(parsed.params),
            base_url=parsed.base_url,
        )

    def _case_files(self) -> list[str]:
        folder = self.root / CASES_DIR
        if not folder.is_dir():
            self.problem(
                CASES_DIR,
                (),
                "no such folder; put one YAML file per case in cases/ "
                "(e.g. cases/ac-conflict-001.yaml)",
            )
            return []
        # names, not Paths: pathlib's parsing cost more than reading a thousand small files
        with os.scandir(folder) as entries:
            files = sorted(
                entry.name
                for entry in entries
                if os.path.splitext(entry.name)[1] in (".yaml", ".yml") and self._case_file(entry)
            )
        if not files:
            self.problem(CASES_DIR, (), "holds no case files; add cases/<case-id>.yaml")
        return files

    def _case_file(self, entry: os.DirEntry[str]) -> bool:
        """A case file to read; a link that loops or cannot be followed is a problem named
        with the file (it was an OSError traceback), not a file skipped in silence."""
        try:
            return entry.is_file()
        except OSError as error:
            self.problem(
                f"{CASES_DIR}/{entry.name}",
                (),
                f"cannot be read ({error.strerror}); remove the link or point it at a case file",
            )
            return False

    def _cases(
        self, env_cls: Any, labels: tuple[str, ...], specs: list[ScorerSpec]
    ) -> tuple[list[Case], dict[int, list[tuple[str, Loc, str]]]]:
        """The valid cases, and per scorer (by its index) what the goals of the cases
        lack for it (file, location, message), in case order."""
        cases: list[Case] = []
        goal_problems: dict[int, list[tuple[str, Loc, str]]] = {}
        first_file: dict[str, str] = {}
        for name in self._case_files():
            rel = f"{CASES_DIR}/{name}"
            found = self._case(rel, env_cls, labels, specs)
            if found is None:
                continue
            case, lacking = found
            if case.id in first_file:
                self.problem(
                    rel,
                    ("id",),
                    f"{show(case.id)} is already the id of {self.shown / first_file[case.id]}; "
                    "give each case its own id",
                )
                continue
            first_file[case.id] = rel
            cases.append(case)
            for index, loc, message in lacking:
                goal_problems.setdefault(index, []).append((rel, loc, message))
        return cases, goal_problems

    def _case(
        self, rel: str, env_cls: Any, labels: tuple[str, ...], specs: list[ScorerSpec]
    ) -> tuple[Case, list[tuple[int, Loc, str]]] | None:
        """A case file's case, with what its goal lacks for the scorers (by the scorer's
        index); None (after recording why) when the file is not a valid case."""
        data = self._read(rel)
        if data is None:
            return None
        ok = True
        try:
            parsed = _CaseFile.model_validate(data)
        except ValidationError as error:
            found = validation_problems(error, _CaseFile)
            for loc, message in found:
                self.problem(rel, loc, message)
            # When only id, tags or stray keys are wrong, the environment can still
            # check input, goal and fixtures: every problem is listed in one go.
            if any(loc[:1] in (("input",), ("goal",), ("fixtures",)) for loc, _ in found):
                return None
            core = {k: v for k, v in data.items() if k in ("input", "goal", "fixtures")}
            try:
                parsed = _CaseFile.model_validate({**core, "id": "unchecked"})
            except ValidationError:
                return None
            ok = False
        if ok and not _CASE_ID.match(parsed.id):
            self.problem(
                rel,
                ("id",),
                f"{show(parsed.id)} may hold only letters, digits, '.', '_' and '-' "
                "(and must start with a letter or digit)",
            )
            ok = False
        lacking = goal_lacks(specs, parsed.goal)  # read while the goal is at hand
        for index, keys in goal_item_keys(specs, parsed.goal).items():
            self.item_keys.setdefault(index, set()).update(keys)
        case = self._build_case(parsed, rel)
        if env_cls is not None:
            found = env_cls.check_case(case, labels, self.env_config)
            for loc, message in found:
                self.problem(rel, loc, message)
            ok = ok and not found
        return (case, lacking) if ok else None

    def _build_case(self, parsed: _CaseFile, rel: str) -> Case:
        fixtures = {
            tool: [{"args": f.args, "response": f.response} for f in items]
            for tool, items in parsed.fixtures.items()
        }
        content = {"input": parsed.input, "fixtures": fixtures, "goal": parsed.goal}
        return _case_of(
            parsed.id,
            parsed.input,
            {tool: [(f["args"], f["response"]) for f in items] for tool, items in fixtures.items()},
            parsed.goal,
            tuple(sys.intern(tag) for tag in parsed.tags),
            os.path.join(self.root, rel),
            sha256_json(content),
            self.shelf,
        )

    # -- scorers

    def _check_scorers(
        self, specs: list[ScorerSpec], goal_problems: dict[int, list[tuple[str, Loc, str]]]
    ) -> dict[str, str]:
        """What the goals lack for the scorers (found per case as it loaded); custom
        scorers importable and callable."""
        hashes: dict[str, str] = {}
        for index, spec in enumerate(specs):
            problems = goal_problems.get(index, [])
            never = self._fields_no_item_holds(index, spec)
            if never:
                # the template is wrong, not every case's goal: one line, on the template
                problems = [p for p in problems if not set(_lacked(p[2])) <= set(never)]
                assert isinstance(spec, ExactSetSpec) and spec.item is not None
                held = sorted(self.item_keys[index])
                hint = "".join(did_you_mean(name, held) for name in never[:1])
                self.problem(
                    SUITE_FILE,
                    ("defaults", "scorers", index, "item"),
                    f"{show(spec.item)} names {', '.join(never)}, which no goal item of any "
                    f"case holds (they hold {', '.join(held)}){hint}",
                )
            for rel, loc, message in problems:
                self.problem(rel, loc, message)
            if isinstance(spec, CustomSpec):
                try:
                    fn = load_object(spec.ref, self.root, what="")
                    check_scorer_function(fn, spec.ref, spec.params)
                except ConfigError as error:
                    self.problem(SUITE_FILE, ("defaults", "scorers", index, "custom"), str(error))
                    continue
                source = _scorer_file(spec.ref, self.root)
                if source is not None:
                    hashes[spec.ref] = hashlib.sha256(source.read_bytes()).hexdigest()
        return hashes

    def _fields_no_item_holds(self, index: int, spec: ScorerSpec) -> list[str]:
        """The fields of a set scorer's item template that no goal item of any case
        holds, when some case has items: a misspelt template, not a hundred goals."""
        keys = self.item_keys.get(index)
        if not keys or not isinstance(spec, ExactSetSpec) or spec.item is None:
            return []
        return [name for name in template_fields(spec.item) if name not in keys]


def goal_item_keys(specs: Sequence[ScorerSpec], goal: dict[str, Any]) -> dict[int, set[str]]:
    """Per set scorer with an item template (by index), the keys the goal's items hold."""
    out: dict[int, set[str]] = {}
    for index, spec in enumerate(specs):
        if isinstance(spec, ExactSetSpec) and spec.item is not None:
            value = get_path(goal, spec.path)
            keys = out.setdefault(index, set())
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        keys.update(str(key) for key in item)
    return out


_LACKS = re.compile(r"lacks (.+?), which the scorer's item ")


def _lacked(message: str) -> list[str]:
    """The fields a `check_goal_items` message says an item lacks ([] for others)."""
    found = _LACKS.match(message)
    return found.group(1).split(", ") if found else []


def goal_lacks(specs: Sequence[ScorerSpec], goal: dict[str, Any]) -> list[tuple[int, Loc, str]]:
    """What a goal lacks for the scorers that compare paths of it: (scorer index,
    location in the case file, message)."""
    out: list[tuple[int, Loc, str]] = []
    for index, spec in enumerate(specs):
        if isinstance(spec, ExactSetSpec):
            out += [
                (index, ("goal", *loc), message) for loc, message in check_goal_items(spec, goal)
            ]
        elif (
            isinstance(spec, EqualsSpec)
            and spec.path != "."
            and get_path(goal, spec.path) is MISSING
        ):
            out.append(
                (
                    index,
                    ("goal", *path_loc(spec.path)),
                    "missing; the equals scorer in suite.yaml compares this path, so "
                    "write the expected value here",
                )
            )
    return out


def check_goal_items(spec: ExactSetSpec, goal: dict[str, Any]) -> list[tuple[Loc, str]]:
    """Load-time: the goal holds a list at the scorer's path, each item nameable."""
    value = get_path(goal, spec.path)
    loc = path_loc(spec.path)
    if value is MISSING:
        return [
            (
                loc,
                f"missing; the {spec.kind} scorer in suite.yaml compares this path, so write "
                "the expected items here ([] when none is expected)",
            )
        ]
    if not isinstance(value, list):
        return [(loc, f"expected a list of items for the {spec.kind} scorer, got {show(value)}")]
    if spec.item is None:
        return []
    names = template_fields(spec.item)
    out: list[tuple[Loc, str]] = []
    for index, item in enumerate(value):
        lacking = [n for n in names if not isinstance(item, dict) or n not in item]
        if lacking:
            out.append(
                (
                    (*loc, index),
                    f"lacks {', '.join(lacking)}, which the scorer's item {show(spec.item)} names",
                )
            )
    return out


def check_scorer_function(fn: Any, ref: str, params: dict[str, Any]) -> None:
    """A custom scorer must be a plain callable taking (final_state, goal, **params)."""
    if not callable(fn):
        raise ConfigError(f"{ref}: is a {type(fn).__name__}, not a function")
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (an object's async __call__)
    ):
        raise ConfigError(f"{ref}: is async; a scorer is a plain function")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins without a signature: trust them
    try:
        signature.bind(object(), object(), **params)
    except TypeError as error:
        shown = "".join(f", {k}=..." for k in params)
        raise ConfigError(
            f"{ref}: cannot be called as {getattr(fn, '__name__', 'it')}"
            f"(final_state, goal{shown}): {error}; define it as "
            "def name(final_state, goal, **params) -> bool | dict"
        ) from None


def _scorer_file(ref: str, root: Path) -> Path | None:
    module = ref.partition(":")[0]
    return (root / module) if module.endswith(".py") else None


def _defaults_dict(defaults: SuiteDefaults) -> dict[str, Any]:
    return {
        "agent": defaults.agent,
        "model": defaults.model,
        "k": defaults.k,
        "params": defaults.params,
        "max_turns": defaults.max_turns,
        "scorers": [spec_dict(s) for s in defaults.scorers],
    }


def spec_dict(spec: ScorerSpec) -> dict[str, Any]:
    """A scorer spec as suite.yaml writes it (for hashing and display)."""
    if isinstance(spec, ExactSetSpec):
        return {spec.kind: spec.path, "item": spec.item}
    if isinstance(spec, EqualsSpec):
        return {"equals": spec.path}
    if isinstance(spec, MatchesSpec):
        return {"matches": spec.path, "pattern": spec.pattern}
    if isinstance(spec, PresentSpec):
        return {"present": list(spec.paths)}
    if isinstance(spec, JudgeSpec):
        return {
            "judge": spec.rubric,
            "model": spec.model,
            "paths": list(spec.paths),
            "params": spec.params,
            "base_url": spec.base_url,
        }
    return {"custom": spec.ref, "params": spec.params}
