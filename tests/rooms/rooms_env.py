"""Meeting rooms: some taken, a list of bookings the agent adds to."""

from __future__ import annotations

from typing import Any

from passhat import Environment, ToolError, tool


class Rooms(Environment):
    input_schema = {  # noqa: RUF012
        "type": "object",
        "required": ["rooms", "taken", "prefer", "hurry"],
        "properties": {
            "rooms": {"type": "array", "items": {"type": "string"}},
            "taken": {"type": "array", "items": {"type": "string"}},
            "prefer": {"type": "array", "items": {"type": "string"}},
            "hurry": {"type": "number", "minimum": 0, "maximum": 1},
        },
    }
    goal_schema = {  # noqa: RUF012
        "type": "object",
        "required": ["bookings"],
        "properties": {"bookings": {"type": "array", "items": {"type": "object"}}},
    }

    def setup(self, input: dict[str, Any]) -> None:
        self.rooms = list(input["rooms"])
        self.taken = set(input["taken"])
        self.bookings: list[dict[str, Any]] = []

    @tool
    def list_rooms(self) -> list[str]:
        """Every room."""
        return list(self.rooms)

    @tool
    def get_bookings(self) -> list[str]:
        """The rooms already taken."""
        return sorted(self.taken)

    @tool
    def book_room(self, room: str) -> dict[str, Any]:
        """Book a room for the team."""
        if room not in self.rooms:
            raise ToolError(f"no room {room}")
        if room in self.taken:
            raise ToolError(f"{room} is taken")
        self.taken.add(room)
        self.bookings.append({"room": room})
        return {"booked": room}

    def final_state(self) -> dict[str, Any]:
        return {"bookings": list(self.bookings)}
