"""One run whole, for `passhat show`: as rich renderables and as JSON-ready data.

Everything a run holds came from a case file, a model or a tool: it enters as
`Text`, never as markup.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from rich.console import Console
from rich.json import JSON
from rich.panel import Panel
from rich.text import Text

from passhat.records import RunRecord

_STATUS_STYLE = {"passed": "green", "failed": "red", "errored": "bold red"}


def run_dict(run: RunRecord) -> dict[str, Any]:
    """Every field of the run record, as stored."""
    return {f.name: getattr(run, f.name) for f in fields(run)}


def print_run(console: Console, r: RunRecord) -> None:
    """Head line, error and traceback, transcript, tool calls, output, final state and
    score."""
    head = Text.assemble(
        (f"{r.case_id} run {r.run_index}: ", "bold"),
        (r.status, _STATUS_STYLE[r.status]),
        f"  ·  {r.duration_s:.2f} s  ·  tokens in {r.input_tokens:,} out {r.output_tokens:,}"
        f"  ·  seed {r.seed}  ·  retries {len(r.retries)}",
        f"  ·  model answers {r.model_source}" if r.model_source else "",
        f"  ·  ran on {r.ran_on}" if r.ran_on else "",
    )
    console.print(head)
    if r.error_type:
        console.print(Text(f"{r.error_type}: {r.error_message}", style="red"))
    if r.traceback:
        console.print(Panel(Text(r.traceback.rstrip()), title="traceback", title_align="left"))
    if r.stderr:
        from passhat.agents.streams import printable

        console.print(Panel(Text(printable(r.stderr)), title="stderr (tail)", title_align="left"))
    for i, message in enumerate(r.transcript):
        body = Text(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            body.append(f"\n→ {call['name']}(", style="cyan")
            body.append(json.dumps(call.get("arguments"), ensure_ascii=False))
            body.append(")", style="cyan")
        title = Text(f"{i}: {message['role']}")
        if message.get("name"):
            title.append(f" {message['name']}")
        if message.get("is_error"):
            title.append(" (error)", style="red")
        console.print(Panel(body, title=title, title_align="left"))
    console.print(Text("tool calls", style="bold"))
    for call in r.tool_calls:
        console.print(tool_call_line(call))
    if r.output is not None:  # what the agent returned: text as written, else as JSON
        console.print(Text("output", style="bold"))
        console.print(Text(r.output) if isinstance(r.output, str) else JSON.from_data(r.output))
    console.print(Text("final state", style="bold"))
    console.print(JSON.from_data(r.final_state))
    console.print(Text("score", style="bold"))
    console.print(JSON.from_data(r.score))


RESULT_SHOWN = 2000
"""Characters of a tool call's result `show` prints (`show --json` holds it whole)."""


def tool_call_line(call: dict[str, Any]) -> Text:
    """`tool {arguments} → result` (its JSON), or `→ error: message`: a recorded call with
    what it returned, as text (a tool's answer is data, never markup)."""
    arguments = json.dumps(call.get("arguments"), ensure_ascii=False, default=str)
    line = Text(f"  {call.get('tool')} {arguments} → ")
    if call.get("error"):
        line.append(f"error: {call['error']}", style="red")
        return line
    result = json.dumps(call.get("result"), ensure_ascii=False, default=str)
    if len(result) > RESULT_SHOWN:
        cut = len(result) - RESULT_SHOWN
        result = result[:RESULT_SHOWN] + f" ... {cut:,} characters more (show --json)"
    line.append(result)
    return line
