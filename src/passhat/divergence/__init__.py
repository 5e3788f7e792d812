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

The rooms: steps.py (turns, tool calls, calls aligned), pairs.py (`diff_runs`), tree.py
(`divergence_tree`, runs graded differently), evidence.py (`item_evidence`).
"""

from __future__ import annotations

from passhat.divergence.evidence import ItemEvidence, SetSpec, Source, Write, item_evidence
from passhat.divergence.pairs import BASES, ItemDiff, RunDiff, TurnPair, diff_runs
from passhat.divergence.steps import CallPair, ToolCall, Turn, run_calls, turns
from passhat.divergence.tree import (
    Branch,
    Graded,
    case_steps,
    divergence_tree,
    graded_differently,
    parted_at,
)

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
    "parted_at",
    "run_calls",
    "turns",
]
