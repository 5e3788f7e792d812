"""Which run, turn and tool call wrote each goal item and each extra (`item_evidence`), or
that none did; for an item no run found, whether the case input's text it rests on was
in what each run's model was sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passhat.divergence.pairs import _label
from passhat.divergence.steps import MODEL, run_calls
from passhat.plain import MISSING, canonical_json, get_path
from passhat.records import CaseItem, RunRecord

# --------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class SetSpec:
    """What evidence needs of one set scorer (from the suite's scorer spec)."""

    label: str
    """As item stability names it: `exact_set ticket.annotations`."""
    path: str
    name: Callable[[Any], str]
    """The item string of a value (the scorer's `item_string` with its template)."""
    texts: bool = True
    """Whether a text can be an item (no template): else only objects are named."""


@dataclass(frozen=True)
class Write:
    """A tool call whose arguments carry an item."""

    run: int
    call: int
    """The call's number in its run (1-based)."""
    tool: str
    turn: int | None


@dataclass(frozen=True)
class Source:
    """A text of the case input an item rests on, and the runs whose model was sent it."""

    path: str
    """Where it sits in the case input, e.g. `ticket.acceptance_criteria.2.text`."""
    text: str
    sent: Mapping[int, int]
    """Run -> the first message (transcript index) of what its model was sent that holds it."""
    unsent: tuple[int, ...]
    """Runs with a transcript whose model was never sent it."""


@dataclass(frozen=True)
class ItemEvidence(CaseItem):
    """Who wrote one item (a goal item, or an extra some run produced) in a case's runs
    (`runs`: the recorded ones, errored too: what they wrote before failing)."""

    present: tuple[int, ...]
    """Runs whose final state holds it."""
    writes: tuple[Write, ...]
    """Every call that carried it, by run (a run may carry it more than once)."""
    sources: tuple[Source, ...] = ()
    """For a goal item no run holds: what of the case input it rests on."""
    no_transcript: tuple[int, ...] = ()
    """Runs that hold no transcript (nothing to search)."""

    def writers(self, run: int) -> tuple[Write, ...]:
        return tuple(w for w in self.writes if w.run == run)


def _values(value: Any) -> Iterable[Any]:
    """Every value inside `value` (itself first), depth first."""
    yield value
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)


def _carried(arguments: Any, spec: SetSpec) -> set[str]:
    """The item strings of every object (and text, when texts can be items) inside a
    call's arguments."""
    found = set()
    kinds = (Mapping, str) if spec.texts else (Mapping,)
    for value in _values(arguments):
        if isinstance(value, kinds):
            try:
                found.add(spec.name(value))
            except Exception:  # a user's value the template cannot name: not an item
                continue
    return found


def _items_at(state: Any, spec: SetSpec) -> list[str]:
    value = get_path(state, spec.path)
    return [spec.name(v) for v in value] if isinstance(value, list) else []


def _scalars(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(v, int | str) and not isinstance(v, bool)}


def _input_sources(element: Any, case_input: Any) -> list[tuple[str, str]]:
    """(path, text) of the input the goal element rests on: the texts of every object in
    the input that shares a field and its value with the element (`ac: 3` finds AC 3)."""
    if not isinstance(element, Mapping):
        return []
    keys = {(k, canonical_json(v)) for k, v in _scalars(element).items()}
    out: list[tuple[str, str]] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, Mapping):
            shared = {k for k, v in _scalars(value).items() if (k, canonical_json(v)) in keys}
            if shared:
                for k, v in value.items():
                    if k not in shared and isinstance(v, str) and v.strip():
                        out.append((f"{where}.{k}" if where else str(k), v))
            for k, v in value.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}.{i}" if where else str(i))

    walk(case_input, "")
    return out[:5]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def sent_in(run: RunRecord, text: str) -> int | None:
    """The first message of what the run's model was sent (anything but its own
    messages) that holds `text` as written or as JSON writes it; None if none does."""
    needle = text.strip()
    forms = {needle, json.dumps(needle, ensure_ascii=False)[1:-1], json.dumps(needle)[1:-1]}
    for i, message in enumerate(run.transcript):
        if message.get("role") == MODEL:
            continue
        body = _text(message.get("content"))
        if any(form in body for form in forms):
            return i
    return None


def item_evidence(
    case: str,
    runs: Sequence[RunRecord],
    specs: Sequence[SetSpec],
    *,
    goal: Any = None,
    case_input: Any = None,
) -> list[ItemEvidence]:
    """Per set scorer: each goal item, then each extra any run holds, with the calls
    that wrote it; a goal item no run holds gets the input texts it rests on and the
    runs whose model was sent them. `goal` and `case_input` come from the case (None
    when the suite cannot be read: the goal items are then the scorers' `expected`)."""
    runs = sorted(runs, key=lambda r: r.run_index)
    calls = {r.run_index: run_calls(r) for r in runs}
    indices = tuple(r.run_index for r in runs)
    bare = tuple(r.run_index for r in runs if not r.transcript)
    out: list[ItemEvidence] = []
    for spec in specs:
        elements = get_path(goal, spec.path) if goal is not None else MISSING
        goal_of: dict[str, Any] = {}
        if isinstance(elements, list):
            for element in elements:
                goal_of.setdefault(spec.name(element), element)
        else:
            for r in runs:
                for d in r.score:
                    if isinstance(d, Mapping) and _label(d) == spec.label:
                        goal_of.update(dict.fromkeys(str(i) for i in d.get("expected") or []))
        held = {r.run_index: _items_at(r.final_state, spec) for r in runs}
        carried = {
            i: [(c, _carried(c.arguments, spec)) for c in cs if not c.error]
            for i, cs in calls.items()
        }
        extras = sorted({x for items in held.values() for x in items if x not in goal_of})
        for item in [*goal_of, *extras]:
            present = tuple(i for i in indices if item in held[i])
            writes = tuple(
                Write(i, c.number, c.tool, c.turn)
                for i in indices
                for c, names in carried[i]
                if item in names
            )
            sources: tuple[Source, ...] = ()
            if item in goal_of and not present and case_input is not None:
                sources = tuple(
                    _source(path, text, runs)
                    for path, text in _input_sources(goal_of[item], case_input)
                )
            out.append(
                ItemEvidence(
                    case, spec.label, item, item in goal_of, indices, present, writes, sources, bare
                )
            )
    return out


def _source(path: str, text: str, runs: Sequence[RunRecord]) -> Source:
    sent: dict[int, int] = {}
    unsent = []
    for r in runs:
        if not r.transcript:
            continue
        at = sent_in(r, text)
        if at is None:
            unsent.append(r.run_index)
        else:
            sent[r.run_index] = at
    return Source(path, text, sent, tuple(unsent))
