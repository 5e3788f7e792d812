"""The built-in agent loop: drive a model through the environment's tools.

The model answers; each tool call it makes is run in the environment and its
result (or error) goes back as a tool message; the loop ends when the model
answers without a tool call or the turn limit is reached. Reaching the limit is
not an error: the run is graded on the state it left, marked `limit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from passhat.models.base import Message

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment


async def tool_loop(env: Environment, ctx: RunContext, system: str, user: str) -> dict[str, Any]:
    """Run the conversation; return the final text and why it stopped."""
    messages = ctx.transcript
    messages.extend([Message("system", system), Message("user", user)])
    for _ in range(ctx.max_turns):
        response = await ctx.generate(messages, env.tools)
        messages.append(response.message)
        if not response.message.tool_calls:
            return {"final": response.message.content, "stopped": "answered", "turns": ctx.turns}
        for call in response.message.tool_calls:
            outcome = await env.call(call.name, call.arguments)
            messages.append(
                Message(
                    "tool",
                    outcome.text(),
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=outcome.is_error,
                )
            )
    ctx.limit = ctx.limit or (
        f"the model still called tools at its last turn ({ctx.max_turns}, --max-turns "
        f"{ctx.max_turns})"
    )
    return {"final": None, "stopped": "turn limit", "turns": ctx.turns}
