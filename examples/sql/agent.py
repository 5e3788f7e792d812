"""A small SQL agent for the sql suite: the built-in tool loop and a short prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from passhat.agents.loop import tool_loop

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment

SYSTEM = """You answer questions about a SQLite database. Read it with query (one
read-only SQL statement at a time; glossary explains business terms), then write
your answer as rows with insert_answer, once, using the answer columns given.
Afterwards reply with one line."""


async def answer(input: dict[str, Any], env: Environment, ctx: RunContext) -> Any:
    """Answer `input["question"]` by writing rows into the answer table."""
    columns = ", ".join(input["answer_columns"])
    return await tool_loop(
        env, ctx, SYSTEM, f"Question: {input['question']}\nAnswer columns: {columns}"
    )
