"""A tool-only agent: no model, no transcript; in a hurry (a share of runs set by the
case) it skips the look-up, tries its first preferred room and gives up on an error."""

from __future__ import annotations

import random
from typing import Any


async def book(input: dict[str, Any], env: Any, ctx: Any) -> dict[str, Any]:
    hurried = random.Random(ctx.seed).random() < input["hurry"]
    await env.call("list_rooms", {})
    if hurried:
        room = input["prefer"][0]
        done = await env.call("book_room", {"room": room})
        if done.is_error:
            return {"booked": None, "reason": f"{done.content}; gave up"}
        return {"booked": room}
    taken = (await env.call("get_bookings", {})).content
    for room in input["prefer"]:
        if room not in taken:
            await env.call("book_room", {"room": room})
            return {"booked": room}
    return {"booked": None, "reason": "every preferred room is taken"}
