"""The built-in environments, each written on the public protocol of passhat.env.

`ticket` (the clarifier's world), `board` (a Trello-like board) and `tools` (the
declarative environment: tools declared in suite.yaml). suite.yaml names them by
these words, which stand for import paths (`passhat.env.BUILTIN_ENVIRONMENTS`)
loaded exactly as a user's `file.py:Class` is. Their schemas are closed objects
(`closed_object`): a key no schema names is a mistake the message names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def closed_object(
    properties: dict[str, Any], required: Iterable[str] | None = None
) -> dict[str, Any]:
    """The JSON Schema of an object with these properties and no other key; `required`:
    the keys it must hold (every property when not given)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }
