"""The run's environment tools as an MCP server (the official `mcp` SDK).

`tools/list` answers with `env.tools` (name, description, JSON-schema
parameters); `tools/call` goes through `env.call`, so a call is checked,
answered from fixtures and recorded exactly as an in-process agent's call,
within the run's tool budget (endpoints.ToolBudget: a call past it is neither
run nor recorded). A
tool's mistake (unknown tool, bad arguments, no recorded answer) comes back as
a result with `isError` set, as the MCP spec asks, never as a protocol error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from passhat.serve.endpoints import RUN, json_size

if TYPE_CHECKING:
    from passhat.env import Environment
    from passhat.serve.hub import Served


def tool_list(env: Environment) -> types.ListToolsResult:
    """The environment's tools, as MCP describes them."""
    return types.ListToolsResult(
        tools=[
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters)
            for spec in env.tools
        ]
    )


def served_of(ctx: ServerRequestContext[Any]) -> Served:
    """The run the HTTP request's token names (serve/hub.py put it in the request's scope)."""
    request: Any = ctx.request
    served: Served = request.scope[RUN]
    return served


def env_of(ctx: ServerRequestContext[Any]) -> Environment:
    """The environment of the run the HTTP request's token names."""
    return served_of(ctx).env


def mcp_server() -> Server[Any]:
    """An MCP server whose tools are, for each request, its run's environment."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tool_list(env_of(ctx))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        served = served_of(ctx)
        arguments = params.arguments or {}
        # the name as called is kept with the call (an unknown tool's too): it counts
        if not served.tools.admit(json_size(params.name) + json_size(arguments)):
            refused = served.tools.spent or ""
            return types.CallToolResult(content=[types.TextContent(text=refused)], is_error=True)
        outcome = await served.env.call(params.name, arguments)
        text = outcome.text()
        served.tools.answered(len(text))
        return types.CallToolResult(
            content=[types.TextContent(text=text)], is_error=outcome.is_error
        )

    return Server("passhat", on_list_tools=list_tools, on_call_tool=call_tool)
