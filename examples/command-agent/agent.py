"""A minimal command agent in Python: passhat runs it once per run, in its own process.

    passhat run examples/clarify --case ac-conflict-001 \
        --agent-cmd ".venv/bin/python examples/command-agent/agent.py"

It reads the case input from stdin, reaches the run's tools over MCP (the
official `mcp` SDK, 1.x or 2.x) and the experiment's model through passhat's per-run
OpenAI-compatible proxy (the official `openai` SDK: OPENAI_BASE_URL and
OPENAI_API_KEY already point at the proxy, with a per-run token), runs the tool
loop, and prints one JSON value on stdout: the run's output. Logs go to stderr,
whose tail passhat keeps on the run. Nothing here imports passhat.
"""

import asyncio
import json
import os
import sys
from importlib.metadata import version

from mcp import ClientSession
from mcp.client import streamable_http
from openai import AsyncOpenAI


def mcp_transport(url, headers):
    """Streamable HTTP to `url` sending `headers`, with whichever `mcp` is installed."""
    if int(version("mcp").split(".")[0]) >= 2:  # 2.x: bring an httpx2 client
        import httpx2

        client = httpx2.AsyncClient(headers=headers, timeout=300)
        return streamable_http.streamable_http_client(url, http_client=client)
    if hasattr(streamable_http, "streamable_http_client"):  # 1.2x: an httpx client
        import httpx

        client = httpx.AsyncClient(headers=headers, timeout=300)
        return streamable_http.streamable_http_client(url, http_client=client)
    return streamable_http.streamablehttp_client(url, headers=headers)  # older 1.x


async def tools_call(tools, name, arguments):
    """Call a tool: (its text, whether it is an error), in 1.x's and 2.x's result alike."""
    result = (await tools.call_tool(name, arguments)).model_dump(by_alias=True)
    text = "".join(block.get("text", "") for block in result["content"])
    return text, result.get("isError", False)


SYSTEM = (
    "You are a requirements-clarification agent. Check every acceptance criterion of the "
    "ticket against the description and the other criteria, then call update_ticket once "
    "with goal, scope_in, scope_out and annotations. Use only these labels: {labels}."
)


async def main() -> None:
    ticket = json.load(sys.stdin).get("ticket")
    labels = ", ".join(json.loads(os.environ["PASSHAT_LABELS"]))
    auth = {"Authorization": f"Bearer {os.environ['PASSHAT_MCP_TOKEN']}"}
    model = AsyncOpenAI(max_retries=0)  # passhat retries the real model itself
    async with (
        mcp_transport(os.environ["PASSHAT_MCP_URL"], auth) as (read, write, *_),
        ClientSession(read, write) as tools,
    ):
        await tools.initialize()
        listed = [t.model_dump(by_alias=True) for t in (await tools.list_tools()).tools]
        specs = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description") or "",
                    "parameters": t["inputSchema"],
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
                name, arguments = call.function.name, json.loads(call.function.arguments)
                text, is_error = await tools_call(tools, name, arguments)
                print(f"{name}: {'error' if is_error else 'ok'}", file=sys.stderr)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    print(json.dumps({"final": None, "stopped": "turn limit"}))


asyncio.run(main())
