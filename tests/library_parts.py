"""An environment and a scorer handed to `passhat.evaluate()` as Python objects."""

from __future__ import annotations

from typing import Any

from passhat.envs.ticket import TicketEnvironment


class CountingTicket(TicketEnvironment):
    """The ticket world, counting the runs it was made for."""

    made = 0

    def setup(self, input: Any) -> None:
        CountingTicket.made += 1
        super().setup(input)


def always_passes(final_state: dict[str, Any], goal: dict[str, Any]) -> bool:
    """Passes every run: shows that this scorer, not suite.yaml's, graded them."""
    return True
