"""The run's environment tools as an MCP server (the official `mcp` SDK).

`tools/list` answers with `env.tools` (name, description, JSON-schema
parameters); `tools/call` goes through `env.call`, so a call is checked,
answered from fixtures and recorded exactly as an in-process agent's call. A
tool's mistake (unknown tool, bad arguments, no recorded answer) comes back as
a result with `isError` set, as the MCP spec asks, never as a protocol error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from passhat.serve.endpoints import RUN

if TYPE_CHECKING:
    from passhat.env import Environment


def tool_list(env: Environment) -> types.ListToolsResult:
    """The environment's tools, as MCP describes them."""
    return types.ListToolsResult(
        tools=[
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters)
            for spec in env.tools
        ]
    )


def env_of(ctx: ServerRequestContext[Any]) -> Environment:
    """The environment of the run the HTTP request's token names (serve/hub.py put it in
    the request's scope)."""
    request: Any = ctx.request
    env: Environment = request.scope[RUN].env
    return env


def mcp_server() -> Server[Any]:
    """An MCP server whose tools are, for each request, its run's environment."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tool_list(env_of(ctx))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        env = env_of(ctx)
        outcome = await env.call(params.name, params.arguments or {})
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text())], is_error=outcome.is_error
        )

    return Server("passhat", on_list_tools=list_tools, on_call_tool=call_tool)
