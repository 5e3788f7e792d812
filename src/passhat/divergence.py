"""Why runs of one case differ: diffs of two runs, where their turns part, and which
turn and tool call wrote each item. Pure functions over run records; no I/O, no model.

Runs of one case start from the same input with the same tools, so the first turn at
which their transcripts differ is where they parted. A transcript is cut into
**turns**: turn 0 is what the model was sent before its first answer (system and user
messages); turn n (n >= 1) is the model's n-th message with the tool results and
other messages that follow it, up to its next message. Turns are compared by what
was said: role, text, tool calls (name and arguments) and tool results; ids a
provider makes up (`call_seed1_1`) and token usage are left out.

Runs that hold no transcript (a tool-only Python agent, an imported result) still
part somewhere: where both runs hold turns they are compared turn by turn; else by
their sequence of tool calls (tool, arguments, result, error), call by call; else by
their outputs and final states. Which of the three was used is the **basis**, and
every answer says it.

- `diff_runs(a, b)`: the final-state diff (items only in one run, for set scorers; a
  JSON diff of the rest), the outputs diffed, the tool calls aligned, the turns side
  by side and the first turn (or call) where they differ; runs that did the same and
  got different verdicts are *graded differently*, with the scorers that differed.
- `divergence_tree(runs)`: the runs of a case as a prefix tree of their steps (turns,
  or tool calls): which runs share which steps, and where each branch leaves.
- `item_evidence(...)`: for each goal item and each extra, the run, turn and tool
  call that wrote it (or that none did); for an item no run found, whether the text
  of the case input it rests on was in what each run's model was sent.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passhat.plain import MISSING, canonical_json, get_path
from passhat.records import RunRecord

__all__ = [
    "BASES",
    "Branch",
    "CallPair",
    "Graded",
    "ItemDiff",
    "ItemEvidence",
    "RunDiff",
    "SetSpec",
    "Source",
    "ToolCall",
    "Turn",
    "TurnPair",
    "Write",
    "case_steps",
    "diff_runs",
    "divergence_tree",
    "graded_differently",
    "item_evidence",
    "run_calls",
    "turns",
]

MODEL = "assistant"
"""The role of the model's own messages."""


# ------------------------------------------------------------------------ turns


@dataclass(frozen=True)
class Turn:
    """One turn of a transcript (see the module docstring)."""

    number: int
    """0 for what the model was sent first; n for its n-th message and what followed."""
    messages: tuple[int, ...]
    """Indices of its messages in the transcript."""
    shape: tuple[dict[str, Any], ...]
    """What is compared of each message: role, text, tool calls, tool name."""
    key: str
    """Canonical JSON of `shape`: equal turns, equal keys."""


def _arguments(value: Any) -> Any:
    """Tool-call arguments as data: a provider's JSON text is read."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def call_shape(call: Mapping[str, Any]) -> dict[str, Any]:
    """A transcript's tool call as compared: its name and arguments (OpenAI's nested
    `function` too), without the id the provider made up."""
    function = call.get("function")
    if isinstance(function, Mapping):
        return {"name": function.get("name"), "arguments": _arguments(function.get("arguments"))}
    return {"name": call.get("name"), "arguments": _arguments(call.get("arguments"))}


def message_shape(message: Mapping[str, Any]) -> dict[str, Any]:
    """What is compared of one message."""
    shape: dict[str, Any] = {"role": message.get("role"), "content": message.get("content")}
    calls = message.get("tool_calls")
    if calls:
        shape["tool_calls"] = [call_shape(c) for c in calls if isinstance(c, Mapping)]
    if message.get("name"):
        shape["name"] = message["name"]
    if message.get("is_error"):
        shape["is_error"] = True
    return shape


def turns(transcript: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """The transcript cut into turns; [] for no transcript."""
    groups: list[list[int]] = []
    for i, message in enumerate(transcript):
        if not groups or message.get("role") == MODEL:
            groups.append([])
        groups[-1].append(i)
    if groups and transcript and transcript[0].get("role") == MODEL:
        groups.insert(0, [])  # no input before the first answer: turn 0 is empty
    out = []
    for number, indices in enumerate(groups):
        shape = tuple(message_shape(transcript[i]) for i in indices)
        out.append(Turn(number, tuple(indices), shape, canonical_json(list(shape))))
    return out


# --------------------------------------------------------------------- tool calls


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a run, numbered in call order (1-based)."""

    number: int
    tool: str
    arguments: Any
    result: Any = None
    error: Any = None
    turn: int | None = None
    """The turn whose model message made it; None when the transcript does not show it."""
    recorded: bool = True
    """Recorded by the environment (True), or read from the transcript (no result)."""

    @property
    def key(self) -> str:
        """Tool and arguments, as compared across runs."""
        return canonical_json([self.tool, self.arguments])

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
            "turn": self.turn,
            "recorded": self.recorded,
        }


def run_calls(run: RunRecord, cut: Sequence[Turn] | None = None) -> list[ToolCall]:
    """The run's tool calls: the environment's records, each with the turn that made it
    (matched in order by tool and arguments); a run whose environment recorded none (an
    imported log) has the calls its transcript shows. `cut`: the run's `turns`, when
    the caller has them."""
    made: list[tuple[int, str]] = []  # (turn, key) of every call the transcript shows
    for part in turns(run.transcript) if cut is None else cut:
        for shape in part.shape:
            for call in shape.get("tool_calls", ()):
                made.append((part.number, canonical_json([call["name"], call["arguments"]])))
    if not run.tool_calls:
        return [
            ToolCall(n, json.loads(key)[0], json.loads(key)[1], turn=number, recorded=False)
            for n, (number, key) in enumerate(made, 1)
        ]
    out = []
    at = 0
    for n, call in enumerate(run.tool_calls, 1):
        tool, arguments = str(call.get("tool")), call.get("arguments")
        key = canonical_json([tool, arguments])
        made_in: int | None = None
        for j in range(at, len(made)):
            if made[j][1] == key:
                made_in, at = made[j][0], j + 1
                break
        out.append(ToolCall(n, tool, arguments, call.get("result"), call.get("error"), made_in))
    return out


@dataclass(frozen=True)
class CallPair:
    """Two runs' tool calls aligned: a call of each, or of one only."""

    a: ToolCall | None
    b: ToolCall | None

    @property
    def same(self) -> bool:
        """The same tool, arguments, result and error."""
        a, b = self.a, self.b
        return (
            a is not None
            and b is not None
            and a.key == b.key
            and canonical_json([a.result, a.error]) == canonical_json([b.result, b.error])
        )


def align_calls(a: Sequence[ToolCall], b: Sequence[ToolCall]) -> list[CallPair]:
    """The calls of two runs aligned on tool and arguments (difflib's matching): equal
    calls side by side, changed ones side by side, a call one run alone made on its own row."""
    matcher = difflib.SequenceMatcher(None, [c.key for c in a], [c.key for c in b], autojunk=False)
    out: list[CallPair] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal" or op == "replace":
            common = min(a1 - a0, b1 - b0)
            out.extend(CallPair(a[a0 + i], b[b0 + i]) for i in range(common))
            out.extend(CallPair(a[i], None) for i in range(a0 + common, a1))
            out.extend(CallPair(None, b[i]) for i in range(b0 + common, b1))
        elif op == "delete":
            out.extend(CallPair(a[i], None) for i in range(a0, a1))
        else:  # insert
            out.extend(CallPair(None, b[i]) for i in range(b0, b1))
    return out


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


# ------------------------------------------------------------------------ the tree


@dataclass(frozen=True)
class Branch:
    """Runs that share a stretch of turns: turns `first`..`last` are the same in every
    one of `runs` (none when `last` < `first`); after `last` they part into `children`,
    and the runs in `ended` have no turn after `last`."""

    runs: tuple[int, ...]
    first: int
    last: int
    ended: tuple[int, ...]
    children: tuple[Branch, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": list(self.runs),
            "first": self.first,
            "last": self.last,
            "ended": list(self.ended),
            "children": [c.to_dict() for c in self.children],
        }


def divergence_tree(keys: Mapping[int, Sequence[str]]) -> Branch:
    """The prefix tree of the runs' turns: run index -> its turns' keys (`Turn.key`)."""
    return _branch(sorted(keys), keys, 0)


def _branch(runs: list[int], keys: Mapping[int, Sequence[str]], first: int) -> Branch:
    turn = first
    while all(len(keys[r]) > turn for r in runs) and len({keys[r][turn] for r in runs}) == 1:
        turn += 1
        if len(runs) == 1 and len(keys[runs[0]]) == turn:
            break
    ended = tuple(r for r in runs if len(keys[r]) <= turn)
    groups: dict[str, list[int]] = {}
    for r in runs:
        if len(keys[r]) > turn:
            groups.setdefault(keys[r][turn], []).append(r)
    children = tuple(_branch(group, keys, turn) for group in groups.values())
    return Branch(tuple(runs), first, turn - 1, ended, children)


def case_steps(runs: Sequence[RunRecord]) -> tuple[str, dict[int, list[str]]]:
    """The basis a case's runs are compared on (`BASES`) and each run's steps as keys:
    turns when every run holds a transcript, else tool calls when any run made one,
    else one step, the output and final state."""
    if runs and all(r.transcript for r in runs):
        return "turns", {r.run_index: [t.key for t in turns(r.transcript)] for r in runs}
    calls = {r.run_index: run_calls(r) for r in runs}
    if any(calls.values()):
        return "tool calls", {i: [call_key(c) for c in cs] for i, cs in calls.items()}
    return "outputs", {r.run_index: [outcome_key(r)] for r in runs}


def outcome_key(run: RunRecord) -> str:
    """What a run ended with: its output and final state."""
    return canonical_json([run.output, run.final_state])


@dataclass(frozen=True)
class Graded:
    """Runs that did the same (steps, output and final state) and got different verdicts."""

    runs: tuple[int, ...]
    verdicts: Mapping[int, str]
    """Run -> passed / failed."""
    scorers: tuple[str, ...]
    """The scorers whose verdicts differ among them."""


def graded_differently(tree: Branch, runs: Sequence[RunRecord]) -> list[Graded]:
    """Every group of runs that share all their steps, output and final state and whose
    verdicts differ (errored runs have none and are left out)."""
    by_index = {r.run_index: r for r in runs if r.counted}
    out: list[Graded] = []

    def walk(b: Branch) -> None:
        groups: dict[str, list[RunRecord]] = {}
        for i in b.ended:
            if i in by_index:
                groups.setdefault(outcome_key(by_index[i]), []).append(by_index[i])
        for group in groups.values():
            if len({r.status for r in group}) > 1:
                scorers = {s for x in group for y in group for s in scorers_differ(x, y)}
                out.append(
                    Graded(
                        tuple(r.run_index for r in group),
                        {r.run_index: r.status for r in group},
                        tuple(sorted(scorers)),
                    )
                )
        for c in b.children:
            walk(c)

    walk(tree)
    return out


def parted_at(tree: Branch, a: int, b: int) -> int | None:
    """The first turn at which runs `a` and `b` differ (or one has no turn); None when
    they agree to the end."""
    node = tree
    while True:
        if a in node.ended or b in node.ended:
            return None if a in node.ended and b in node.ended else node.last + 1
        child = next(c for c in node.children if a in c.runs)
        if b not in child.runs:
            return node.last + 1
        node = child


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
class ItemEvidence:
    """Who wrote one item (a goal item, or an extra some run produced) in a case's runs."""

    case: str
    scorer: str
    item: str
    expected: bool
    runs: tuple[int, ...]
    """Runs looked at (recorded runs; errored ones too: what they wrote before failing)."""
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
