"""The `board` environment: a Trello-like board; the agent writes a card following a guide.

Tools: `get_board`, `get_guide` (a look-up answered from the case's fixtures)
and `create_card`; final state `{"cards": [...]}`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from passhat.env import Environment, tool
from passhat.envs import closed_object
from passhat.plain import Loc, clone, did_you_mean, show

INPUT_SCHEMA: dict[str, Any] = closed_object(
    {
        "request": {
            "type": "string",
            "minLength": 1,
            "description": "what the card should be about",
        },
        "board": {
            "description": "the board: {name: ..., lists: [...]}",
            **closed_object(
                {
                    "name": {"type": "string", "minLength": 1, "description": "the board's name"},
                    "lists": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"type": "string"},
                        "description": "its lists, e.g. [Backlog, Doing, Done]",
                    },
                }
            ),
        },
    }
)

GOAL_SCHEMA: dict[str, Any] = closed_object(
    {
        "cards": {
            "description": "the expected cards, e.g. - {list: Backlog, labels: []}",
            "type": "array",
            "items": closed_object(
                {
                    "list": {
                        "type": "string",
                        "minLength": 1,
                        "description": "the list the card belongs in",
                    },
                    "labels": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the card's labels; [] for none",
                    },
                }
            ),
        }
    }
)

_NO_ARGUMENTS: dict[str, Any] = closed_object({})


def _card_parameters(env: BoardEnvironment) -> dict[str, Any]:
    text_list = {"type": "array", "items": {"type": "string"}}
    return closed_object(
        {
            "list": {"type": "string", "enum": list(env.lists)},
            "title": {"type": "string", "minLength": 1},
            "description": {"type": "string", "description": "Markdown."},
            "checklist": {**text_list, "description": "Checklist items, in order."},
            "labels": {"type": "array", "items": {"type": "string", "enum": list(env.labels)}},
        }
    )


class BoardEnvironment(Environment):
    """A Trello-like board; the agent writes a card following a writing guide."""

    input_schema = INPUT_SCHEMA
    goal_schema = GOAL_SCHEMA

    def setup(self, input: dict[str, Any]) -> None:
        self._board: dict[str, Any] = input["board"]
        self.lists: list[str] = list(self._board["lists"])
        self._cards: list[dict[str, Any]] = []

    @tool(parameters=_NO_ARGUMENTS)
    def get_board(self) -> Any:
        """Read the board: its name, its lists and the labels cards may carry."""
        return {**self._board, "labels": list(self.labels)}

    @tool(fixtures=True, parameters=_NO_ARGUMENTS)
    def get_guide(self) -> Any:
        """Read the team's card writing guide."""

    @tool(parameters=_card_parameters)
    def create_card(
        self, list: str, title: str, description: str, checklist: Any, labels: Any
    ) -> Any:
        """Create a card on the board."""
        card = {
            "id": f"card-{len(self._cards) + 1}",
            "list": list,
            "title": title,
            "description": description,
            "checklist": checklist,
            "labels": labels,
        }
        self._cards.append(card)
        return {"created": card["id"]}

    def final_state(self) -> dict[str, Any]:
        return {"cards": clone(self._cards)}

    def check_rules(self, input: dict[str, Any], goal: dict[str, Any]) -> Iterable[tuple[Loc, str]]:
        lists = input["board"]["lists"]
        for index, card in enumerate(goal["cards"]):
            loc: Loc = ("goal", "cards", index)
            if card["list"] not in lists:
                yield (
                    (*loc, "list"),
                    f"{show(card['list'])} is not a list of the board ({', '.join(lists)})"
                    f"{did_you_mean(card['list'], lists)}",
                )
            for j, label in enumerate(card["labels"]):
                if label not in self.labels:
                    yield (
                        (*loc, "labels", j),
                        f"{show(label)} is not one of the suite's labels "
                        f"({', '.join(self.labels) or 'none'}){did_you_mean(label, self.labels)}",
                    )
                elif label in card["labels"][:j]:
                    # exact_set compares multisets: a label written twice would be
                    # a label the card must carry twice.
                    yield (
                        (*loc, "labels", j),
                        f"{show(label)} repeats labels[{card['labels'].index(label)}]; "
                        "give each label once",
                    )
