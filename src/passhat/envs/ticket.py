"""The `ticket` environment: a ticket store holding the case's ticket; the clarifier's world.

Tools: `get_ticket`, `query_background` (a look-up answered from the case's
fixtures, matched by terms) and `update_ticket`; final state `{"ticket": {...}}`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from passhat.env import Environment, ToolError, tool
from passhat.envs import closed_object
from passhat.plain import Loc, clone, did_you_mean, field_path, show
from passhat.tools import args_message

_TEXT_LIST = {"type": "array", "items": {"type": "string"}}

_AC = closed_object(
    {
        "ac": {"type": "integer", "minimum": 1, "description": "the AC's number, e.g. 1"},
        "text": {"type": "string", "minLength": 1, "description": "what the AC requires"},
    }
)

INPUT_SCHEMA: dict[str, Any] = closed_object(
    {
        "ticket": {
            "description": "the ticket to clarify (key, title, description, ACs)",
            **closed_object(
                {
                    "key": {
                        "type": "string",
                        "minLength": 1,
                        "description": "the ticket key, e.g. SHOP-1042",
                    },
                    "title": {
                        "type": "string",
                        "minLength": 1,
                        "description": "the ticket's title",
                    },
                    "description": {"type": "string", "description": "the ticket's description"},
                    "acceptance_criteria": {
                        "type": "array",
                        "minItems": 1,
                        "items": _AC,
                        "description": "numbered ACs, e.g. - {ac: 1, text: ...}",
                    },
                }
            ),
        }
    }
)

GOAL_SCHEMA: dict[str, Any] = closed_object(
    {
        "ticket": {
            "description": "the expected ticket, e.g. ticket: {annotations: []}",
            **closed_object(
                {
                    "annotations": {
                        "description": "the expected AC annotations; [] when every AC is fine",
                        "type": "array",
                        "items": closed_object(
                            {
                                "ac": {
                                    "type": "integer",
                                    "minimum": 1,
                                    "description": "the number of the AC it annotates",
                                },
                                "label": {
                                    "type": "string",
                                    "minLength": 1,
                                    "description": "one of the suite's labels",
                                },
                                "note": {"type": "string"},
                            },
                            required=["ac", "label"],
                        ),
                    },
                    "goal": {"type": ["string", "null"]},
                    "scope_in": {"type": ["array", "null"], "items": {"type": "string"}},
                    "scope_out": {"type": ["array", "null"], "items": {"type": "string"}},
                },
                required=["annotations"],
            ),
        }
    }
)


def _update_parameters(env: TicketEnvironment) -> dict[str, Any]:
    return _update_schema(env.labels)


@functools.lru_cache(maxsize=64)
def _update_schema(labels: tuple[str, ...]) -> dict[str, Any]:
    """One schema object per label set: its validator is built once, not per run."""
    annotation = closed_object(
        {
            "ac": {"type": "integer", "minimum": 1, "description": "The AC's number."},
            "label": {"type": "string", "enum": list(labels)},
            "note": {"type": "string", "description": "Why, in one or two sentences."},
        }
    )
    return closed_object(
        {
            "key": {"type": "string", "description": "The ticket key."},
            "goal": {"type": "string", "description": "The ticket's goal."},
            "scope_in": {**_TEXT_LIST, "description": "What the work includes."},
            "scope_out": {**_TEXT_LIST, "description": "What it leaves out."},
            "annotations": {"type": "array", "items": annotation},
        }
    )


def annotation_problems(
    annotations: list[dict[str, Any]],
    ac_numbers: list[int] | None,
    labels: tuple[str, ...] | None,
    loc: Loc,
) -> list[tuple[Loc, str]]:
    """ACs that exist (when known), labels of the suite (when given), each (ac, label) once."""
    out: list[tuple[Loc, str]] = []
    seen: dict[tuple[int, str], int] = {}
    numbers = ", ".join(str(n) for n in ac_numbers or [])
    for index, note in enumerate(annotations):
        ac, label = note["ac"], note["label"]
        if ac_numbers is not None and ac not in ac_numbers:
            out.append(((*loc, index, "ac"), f"the ticket has no AC {ac}; its ACs are {numbers}"))
        if labels is not None and label not in labels:
            out.append(
                (
                    (*loc, index, "label"),
                    f"{show(label)} is not one of the suite's labels ({', '.join(labels)})"
                    f"{did_you_mean(label, labels)}",
                )
            )
        if (ac, label) in seen:
            out.append(
                (
                    (*loc, index),
                    f"repeats {field_path((*loc, seen[(ac, label)]))} (AC{ac}:{label}); "
                    "give each AC and label once",
                )
            )
        seen.setdefault((ac, label), index)
    return out


class TicketEnvironment(Environment):
    """A ticket store holding the case's ticket; the clarifier's world."""

    input_schema = INPUT_SCHEMA
    goal_schema = GOAL_SCHEMA

    def setup(self, input: dict[str, Any]) -> None:
        ticket = input["ticket"]
        ticket.update(goal="", scope_in=[], scope_out=[], annotations=[])
        self._tickets: dict[str, dict[str, Any]] = {ticket["key"]: ticket}
        self._key: str = ticket["key"]

    @tool(
        parameters={
            "type": "object",
            "properties": {
                "key": {"type": "string", "description": "The ticket key, e.g. SHOP-1042."}
            },
            "required": ["key"],
            "additionalProperties": False,
        }
    )
    def get_ticket(self, key: str) -> Any:
        """Read a ticket: key, title, description, numbered acceptance criteria (ac, text)
        and what has been written back so far."""
        return self._ticket(key)

    @tool(
        fixtures="terms",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "What to look up."}
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    )
    def query_background(self, query: str) -> Any:
        """Search the product knowledge base (policies, existing rules, definitions) for
        background the ticket relies on. Returns the matching passage, or an error when
        nothing matches."""

    @tool(parameters=_update_parameters)
    def update_ticket(
        self,
        key: str,
        goal: str,
        scope_in: list[str],
        scope_out: list[str],
        annotations: list[dict[str, Any]],
    ) -> Any:
        """Write the clarified ticket back: its goal, what is in and out of scope, and one
        annotation per problem found in an acceptance criterion (an AC may carry several
        labels). Replaces what was written before; give annotations: [] when every AC is
        fine."""
        ticket = self._ticket(key)
        numbers = [c["ac"] for c in ticket["acceptance_criteria"]]
        problems = annotation_problems(annotations, numbers, None, ("annotations",))
        if problems:
            raise ToolError(args_message("update_ticket", problems))
        ticket.update(goal=goal, scope_in=scope_in, scope_out=scope_out, annotations=annotations)
        return {"updated": ticket["key"], "annotations": len(annotations)}

    def _ticket(self, key: str) -> dict[str, Any]:
        if key not in self._tickets:
            raise ToolError(f"no ticket {show(key)}; the ticket here is {self._key}")
        return self._tickets[key]

    def final_state(self) -> dict[str, Any]:
        return {"ticket": clone(self._tickets[self._key])}

    @classmethod
    def check_labels(cls, labels: tuple[str, ...]) -> list[tuple[Loc, str]]:
        if labels:
            return []
        return [
            (
                ("labels",),
                "is empty; the ticket environment annotates ACs with these labels, e.g. "
                "labels: [conflict, inconsistent_with_description, unverifiable]",
            )
        ]

    def check_rules(self, input: dict[str, Any], goal: dict[str, Any]) -> Iterable[tuple[Loc, str]]:
        numbers = [criterion["ac"] for criterion in input["ticket"]["acceptance_criteria"]]
        yield from (
            (
                ("input", "ticket", "acceptance_criteria", index, "ac"),
                f"AC {number} is numbered twice; number each AC once",
            )
            for index, number in enumerate(numbers)
            if number in numbers[:index]
        )
        yield from annotation_problems(
            goal["ticket"]["annotations"], numbers, self.labels, ("goal", "ticket", "annotations")
        )
