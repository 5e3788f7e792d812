"""A minimal card-writing agent for the trello suite: the built-in tool loop, a short prompt.

`agent: card_writer:write_card` in suite.yaml; put this folder on PYTHONPATH.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from passhat.agents.loop import tool_loop

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment

SYSTEM = """You write one card on the team's board for the request you are given.
Read the board (get_board) and the team's writing guide (get_guide), follow the
guide exactly, then call create_card once. Afterwards answer with one line."""


async def write_card(input: dict[str, Any], env: Environment, ctx: RunContext) -> Any:
    """Write the card for `input["request"]`."""
    return await tool_loop(env, ctx, SYSTEM, f"Request: {input['request']}")
