"""Two runs of one case compared (`diff_runs`): the final-state diff (items only in one
run, for set scorers; a JSON diff of the rest), the outputs, the tool calls aligned,
the turns side by side, the first step where they part and on what basis, and whether
runs that did the same were graded differently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passhat.divergence.steps import CallPair, ToolCall, Turn, align_calls, run_calls, turns
from passhat.plain import MISSING, canonical_json, get_path
from passhat.records import RunRecord

# ------------------------------------------------------------------------ pair diff


@dataclass(frozen=True)
class ItemDiff:
    """One set scorer's items in two runs."""

    scorer: str
    """As item stability names it: `exact_set ticket.annotations`."""
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    both: tuple[str, ...]
    expected: tuple[str, ...]
    """The goal's items (to tell a found goal item from an extra)."""


@dataclass(frozen=True)
class TurnPair:
    """Turn `number` of each run (None: that run has no such turn)."""

    number: int
    a: Turn | None
    b: Turn | None

    @property
    def same(self) -> bool:
        return self.a is not None and self.b is not None and self.a.key == self.b.key


@dataclass(frozen=True)
class RunDiff:
    """Two runs of one case, side by side."""

    a: RunRecord
    b: RunRecord
    items: tuple[ItemDiff, ...]
    """Per set scorer that graded both runs."""
    state: tuple[dict[str, Any], ...]
    """Where the final states differ, outside the set scorers' paths: `{path, a, b}`
    (a side left out where that run has nothing there)."""
    calls: tuple[CallPair, ...]
    turns: tuple[TurnPair, ...]
    diverged_at: int | None
    """The first turn that differs; None when the transcripts agree (or one is absent)."""
    divergence: tuple[dict[str, Any], ...]
    """Where the first differing turns differ: `{path, a, b}` inside the turn."""
    no_transcript: tuple[str, ...]
    """'a' and/or 'b': runs that hold no transcript (nothing to align turn by turn)."""
    basis: str = "turns"
    """What the runs were compared by (`BASES`): `turns` when both hold a transcript,
    else `tool calls` when either made one, else `outputs` (output and final state)."""
    parted_at: int | None = None
    """Where they part on that basis: the turn number (turns), the call number from 1
    (tool calls); None when they agree to the end of it (or the basis is outputs)."""
    output: tuple[dict[str, Any], ...] = ()
    """Where the agents' outputs differ: `{path, a, b}` (path "" for a whole text)."""
    scorers: tuple[str, ...] = ()
    """Scorers whose verdict differs between the runs (`exact_set ticket.annotations`)."""

    @property
    def same_state(self) -> bool:
        return not self.state and all(not d.only_a and not d.only_b for d in self.items)

    @property
    def first_calls(self) -> tuple[ToolCall | None, ToolCall | None]:
        """Each run's call at `parted_at` on the tool-call basis (None: it has none)."""
        if self.basis != "tool calls" or self.parted_at is None:
            return None, None
        i = self.parted_at - 1
        calls_a = [p.a for p in self.calls if p.a is not None]
        calls_b = [p.b for p in self.calls if p.b is not None]
        return (
            calls_a[i] if i < len(calls_a) else None,
            calls_b[i] if i < len(calls_b) else None,
        )

    @property
    def verdicts_differ(self) -> bool:
        return self.a.status != self.b.status or bool(self.scorers)

    @property
    def graded_differently(self) -> bool:
        """The same trajectory, output and final state, different verdicts: a scorer
        (or judge) that does not give one answer to one state."""
        return (
            self.verdicts_differ
            and "errored" not in (self.a.status, self.b.status)
            and self.parted_at is None
            and not self.output
            and self.same_state
        )


SET_SCORERS = ("exact_set", "subset", "superset")


def _label(detail: Mapping[str, Any]) -> str:
    path = detail.get("path")
    return f"{detail.get('scorer')} {path}" if path else str(detail.get("scorer"))


def _set_details(run: RunRecord) -> dict[str, Mapping[str, Any]]:
    return {
        _label(d): d
        for d in run.score
        if isinstance(d, Mapping) and isinstance(d.get("actual"), list) and "expected" in d
    }


def _multiset_minus(x: Sequence[str], y: Sequence[str]) -> tuple[str, ...]:
    left = list(y)
    out = []
    for item in x:
        if item in left:
            left.remove(item)
        else:
            out.append(item)
    return tuple(out)


def _item_diffs(a: RunRecord, b: RunRecord) -> list[ItemDiff]:
    da, db = _set_details(a), _set_details(b)
    out = []
    for label in [*da, *(k for k in db if k not in da)]:
        if label not in da or label not in db:
            continue
        xa = [str(i) for i in da[label]["actual"]]
        xb = [str(i) for i in db[label]["actual"]]
        both = _multiset_minus(xa, _multiset_minus(xa, xb))
        expected = tuple(str(i) for i in da[label].get("expected") or [])
        out.append(
            ItemDiff(label, _multiset_minus(xa, xb), _multiset_minus(xb, xa), both, expected)
        )
    return out


def _without(state: Any, paths: Iterable[str]) -> Any:
    """`state` with the values at `paths` left out (a set scorer's items are its diff);
    only the containers on each path are copied."""
    for path in paths:
        if path and get_path(state, path) is not MISSING:
            state = _drop(state, path.split("."))
    return state


def _drop(value: Any, parts: list[str]) -> Any:
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        out = dict(value)
        if rest:
            out[head] = _drop(value[head], rest)
        else:
            del out[head]
        return out
    if isinstance(value, list):
        copied = list(value)
        if rest:
            copied[int(head)] = _drop(value[int(head)], rest)
        else:
            del copied[int(head)]
        return copied
    return value


def json_diff(a: Any, b: Any, limit: int = 50) -> list[dict[str, Any]]:
    """Where two JSON values differ: `{path, a, b}`, a side left out where it has nothing."""
    if canonical_json(a) == canonical_json(b):  # equal text, equal values: nothing to walk
        return []
    from passhat.scoring import json_diff as scoring_diff

    out = []
    for d in scoring_diff(a, b, limit=limit):
        row: dict[str, Any] = {"path": d["path"]}
        if "expected" in d:
            row["a"] = d["expected"]
        if "actual" in d:
            row["b"] = d["actual"]
        out.append(row)
    return out


Parts = tuple[list[Turn], list[ToolCall]]
"""A run's turns and tool calls (`turns`, `run_calls`)."""


def parts(run: RunRecord) -> Parts:
    cut = turns(run.transcript)
    return cut, run_calls(run, cut)


BASES = ("turns", "tool calls", "outputs")
"""What runs are compared by, in order of preference (see the module docstring)."""


def call_key(call: ToolCall) -> str:
    """A call as a step of a run: tool, arguments, result and error."""
    return canonical_json([call.tool, call.arguments, call.result, call.error])


def first_difference(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The index of the first step that differs (or that one run lacks); None if equal."""
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b) or a[i] != b[i]:
            return i
    return None


def output_diff(a: Any, b: Any) -> list[dict[str, Any]]:
    """Where two outputs differ: texts whole (`{path: "", a, b}`), the rest path by path."""
    if isinstance(a, str) or isinstance(b, str):
        return [] if a == b else [{"path": "", "a": a, "b": b}]
    return json_diff(a, b, limit=20)


def _verdicts(run: RunRecord) -> dict[str, Any]:
    return {_label(d): d.get("passed") for d in run.score if isinstance(d, Mapping)}


def scorers_differ(a: RunRecord, b: RunRecord) -> list[str]:
    """Scorers that graded both runs and gave them different verdicts."""
    va, vb = _verdicts(a), _verdicts(b)
    return [label for label in va if label in vb and va[label] != vb[label]]


def diff_runs(a: RunRecord, b: RunRecord, cache: dict[int, Parts] | None = None) -> RunDiff:
    """Run `a` beside run `b` (of one case, or of one case in two experiments). `cache`
    keeps each run's turns and calls by `id(run)` while the caller holds the runs (the
    diffs of every pair of a case's runs cut each run once)."""
    cache = {} if cache is None else cache
    for run in (a, b):
        if id(run) not in cache:
            cache[id(run)] = parts(run)
    (ta, calls_a), (tb, calls_b) = cache[id(a)], cache[id(b)]
    items = _item_diffs(a, b)
    # a set scorer's items are shown as items where both runs were graded by it
    both = {i.scorer for i in items}
    set_paths = {str(d["path"]) for k, d in _set_details(a).items() if k in both and d.get("path")}
    state = json_diff(_without(a.final_state, set_paths), _without(b.final_state, set_paths))
    pairs = [
        TurnPair(n, ta[n] if n < len(ta) else None, tb[n] if n < len(tb) else None)
        for n in range(max(len(ta), len(tb)))
    ]
    absent = tuple(side for side, t in (("a", ta), ("b", tb)) if not t)
    diverged = None
    where: list[dict[str, Any]] = []
    basis, parted = "turns", None
    if not absent:
        first = next((p for p in pairs if not p.same), None)
        if first is not None:
            diverged = parted = first.number
            if first.a is not None and first.b is not None:
                where = json_diff(list(first.a.shape), list(first.b.shape), limit=10)
    elif calls_a or calls_b:
        basis = "tool calls"
        at = first_difference([call_key(c) for c in calls_a], [call_key(c) for c in calls_b])
        if at is not None:
            parted = at + 1
            ca = calls_a[at] if at < len(calls_a) else None
            cb = calls_b[at] if at < len(calls_b) else None
            where = json_diff(ca.to_dict() if ca else None, cb.to_dict() if cb else None, limit=10)
    else:
        basis = "outputs"
    return RunDiff(
        a,
        b,
        tuple(items),
        tuple(state),
        tuple(align_calls(calls_a, calls_b)),
        tuple(pairs),
        diverged,
        tuple(where),
        absent,
        basis,
        parted,
        tuple(output_diff(a.output, b.output)),
        tuple(scorers_differ(a, b)),
    )
