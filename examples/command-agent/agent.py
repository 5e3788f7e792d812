"""A minimal command agent in Python: passhat runs it once per run, in its own process.

    passhat run examples/clarify --case ac-conflict-001 \
        --agent-cmd ".venv/bin/python examples/command-agent/agent.py"

It reads the case input from stdin, reaches the run's tools over MCP (the
official `mcp` SDK) and the experiment's model through passhat's per-run
OpenAI-compatible proxy (the official `openai` SDK: OPENAI_BASE_URL and
OPENAI_API_KEY already point at the proxy, with a per-run token), runs the tool
loop, and prints one JSON value on stdout: the run's output. Logs go to stderr,
whose tail passhat keeps on the run. Nothing here imports passhat.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI

SYSTEM = (
    "You are a requirements-clarification agent. Check every acceptance criterion of the "
    "ticket against the description and the other criteria, then call update_ticket once "
    "with goal, scope_in, scope_out and annotations. Use only these labels: {labels}."
)


async def main() -> None:
    ticket = json.load(sys.stdin).get("ticket")
    labels = ", ".join(json.loads(os.environ["PASSHAT_LABELS"]))
    auth = {"Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}"}
    transport = streamable_http_client(
        os.environ["PASSHAT_MCP_URL"], http_client=httpx2.AsyncClient(headers=auth)
    )
    model = AsyncOpenAI(max_retries=0)  # passhat retries the real model itself
    async with Client(transport) as tools:
        listed = (await tools.list_tools()).tools
        specs = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or "",
                    "parameters": t.input_schema,
                },
            }
            for t in listed
        ]
        messages = [
            {"role": "system", "content": SYSTEM.format(labels=labels)},
            {"role": "user", "content": json.dumps(ticket, ensure_ascii=False)},
        ]
        for turn in range(int(os.environ.get("PASSHAT_MAX_TURNS", "10"))):
            answer = await model.chat.completions.create(
                model=os.environ.get("PASSHAT_MODEL", "passhat"), messages=messages, tools=specs
            )
            message = answer.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                print(json.dumps({"final": message.content, "turns": turn + 1}, ensure_ascii=False))
                return
            for call in message.tool_calls:
                result = await tools.call_tool(
                    call.function.name, json.loads(call.function.arguments)
                )
                text = "".join(getattr(block, "text", "") for block in result.content)
                print(
                    f"{call.function.name}: {'error' if result.is_error else 'ok'}", file=sys.stderr
                )
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    print(json.dumps({"final": None, "stopped": "turn limit"}))


asyncio.run(main())
