"""The benchmark workloads as passhat agents: write the goal state at once, or after 100 ms."""

from __future__ import annotations

import asyncio
from typing import Any

ANNOTATIONS = [
    {"ac": 3, "label": "conflict", "note": "n"},
    {"ac": 3, "label": "inconsistent_with_description", "note": "n"},
    {"ac": 4, "label": "unverifiable", "note": "n"},
    {"ac": 7, "label": "unverifiable", "note": "n"},
]


async def instant(input: Any, env: Any, ctx: Any) -> str:
    await env.call(
        "update_ticket",
        {
            "key": "SHOP-1042",
            "goal": "g",
            "scope_in": ["a"],
            "scope_out": [],
            "annotations": ANNOTATIONS,
        },
    )
    return "ok"


async def waits_100ms(input: Any, env: Any, ctx: Any) -> str:
    await asyncio.sleep(0.1)
    return await instant(input, env, ctx)
