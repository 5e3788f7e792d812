"""A command agent's JSON output was parsed on the event loop every run shares, whatever
its values (round 15's outside attack).

A run's stdout is taken up to 16 MiB and parsed with json.loads when its agent exits:
a C call that lets nothing else run. 16 MiB of `[[],[],...]` (5.6 million values) held
passhat's event loop 2.5 s of CPU here (more in wall time on a loaded machine): no other
run's tool call or model request answered, no timer fired, as round 11 found for model
requests (tests/test_attack49_loop.py), where the values are now counted first. Every
agent may print that once per run, at any level (the output is read by passhat, outside
any seal).

Fixed: a JSON output's values are counted first with the loop turning (serve.app.bounded,
as a model request's), and one of more than endpoints.VALUES (500,000) is the run's
`agent_output` error, never parsed. A real agent prints kilobytes.
"""

from __future__ import annotations

import pytest

from loop_pauses import loop_pauses
from passhat.agents.command import parse_output
from passhat.agents.streams import AgentProcessError, bounded_output
from passhat.serve.endpoints import VALUES

pytest.importorskip("uvicorn")

STILL = 1.0
"""Longest pause of the loop allowed (s of the loop thread's CPU), as test_attack49_loop's."""
FULL = b"[" + b"[]," * (16 * 1024 * 1024 // 3 - 1) + b"[]]"
"""16 MiB of output: 5.6 million empty lists."""


async def _still_while(work: object) -> float:
    """The longest pause of the event loop (its thread's CPU) while `work` is awaited."""
    async with loop_pauses() as pauses:
        with pytest.raises(AgentProcessError) as refused:
            await work  # type: ignore[misc]
    assert refused.value.error_type == "agent_output"
    assert f"more than {VALUES:,} values" in str(refused.value)
    return max(pauses)


async def test_an_output_of_millions_of_values_is_refused_with_the_loop_turning() -> None:
    still = await _still_while(bounded_output(bytearray(FULL)))
    assert still < STILL, f"the event loop stood still {still:.2f} s"


async def test_an_output_within_the_bound_is_parsed_as_before() -> None:
    within = b"[" + b"0," * (VALUES - 10) + b"0]"  # counted as the proxy counts
    await bounded_output(within)
    assert len(parse_output(within, "json")) == VALUES - 9
    await bounded_output(b'"' + b"[]," * VALUES + b'"')  # in a string: one value
