"""The requirements-clarification agent from the seed.

It reads a ticket, may look up background, and finishes with one
`update_ticket` carrying Goal, Scope in, Scope out and the AC annotations from
the suite's label set. A run that never calls `update_ticket` leaves the ticket
unchanged and is graded (failed), not errored.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

from passhat.agents.loop import tool_loop
from passhat.errors import ConfigError

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.env import Environment


def prompt_version(template: bytes) -> str:
    """The first 12 hex digits of the SHA-256 of the template's bytes."""
    return hashlib.sha256(template).hexdigest()[:12]


def builtin_template() -> bytes:
    return resources.files("passhat.agents").joinpath("prompts/clarifier.md").read_bytes()


def read_template(path: str | Path | None) -> bytes:
    """The user's template file, or the built-in one."""
    if path is None:
        return builtin_template()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(
            f"{path}: cannot read the prompt template ({error.strerror}); give an existing file "
            "to --prompt"
        ) from None


def user_message(ticket: Any) -> str:
    return (
        "Here is the ticket to clarify, as JSON:\n\n"
        + json.dumps(ticket, ensure_ascii=False, indent=2)
        + "\n"
    )


class Clarifier:
    """The clarifier agent with one prompt template."""

    def __init__(self, template: bytes | None = None) -> None:
        self.template = builtin_template() if template is None else template
        self.prompt_version = prompt_version(self.template)
        try:
            self._system = Template(self.template.decode("utf-8"))
        except UnicodeDecodeError:
            raise ConfigError("the prompt template is not UTF-8 text; save it as UTF-8") from None

    def system_prompt(self, labels: tuple[str, ...]) -> str:
        return self._system.safe_substitute(labels=", ".join(labels))

    async def __call__(self, input: Any, env: Environment, ctx: RunContext) -> Any:
        ticket = input.get("ticket", input) if isinstance(input, dict) else input
        return await tool_loop(env, ctx, self.system_prompt(ctx.labels), user_message(ticket))
