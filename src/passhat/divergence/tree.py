"""The runs of a case as a prefix tree of their steps (`divergence_tree`): which runs
share which steps and where each branch leaves; runs graded differently at one leaf.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passhat.divergence.pairs import call_key, scorers_differ
from passhat.divergence.steps import run_calls, turns
from passhat.plain import canonical_json
from passhat.records import RunRecord

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
