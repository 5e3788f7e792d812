"""The `tools` environment: a world declared in suite.yaml, no Python needed.

    environment: tools
    state:                        # optional: defaults the case input is laid over
      ticket: {goal: "", annotations: []}
    input_schema: {...}           # optional JSON Schemas of a case's input and goal
    goal_schema: {...}
    tools:
      - name: get_ticket          # a read: answers with the state at a path
        description: Read the ticket.
        parameters: {type: object, properties: {key: {type: string}}, required: [key]}
        reads: ticket
      - name: query_background    # a look-up: answered from the case's fixtures
        description: Search the knowledge base.
        parameters: {type: object, properties: {query: {type: string}}, required: [query]}
        fixtures: terms           # exact (normalised equality) or terms
      - name: update_ticket       # a write: merges its arguments into the object at a path
        parameters: {...}
        writes: ticket            # or tickets.{key}: {field} is filled from the arguments
      - name: create_card         # an append: adds its arguments to the list at a path
        parameters: {...}
        appends: cards

A run's initial state is the case's input laid over `state` (objects merged key
by key, the input winning); its final state is that state after every write and
append. Every tool's arguments are checked against its `parameters` before it
acts; a read of a path the state lacks is an error the agent reads.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

from passhat.env import Environment, FixtureMode, Tool, ToolError
from passhat.envs import closed_object
from passhat.plain import MISSING, Loc, clone, get_path, show
from passhat.schema import schema_errors, schema_problems
from passhat.tools import tool_problems

ACTIONS = ("reads", "writes", "appends", "fixtures")

_PATH_TEMPLATE = {"type": "string", "pattern": r"^[^.\s]+(\.[^.\s]+)*$"}
CONFIG_SCHEMA: dict[str, Any] = closed_object(
    {
        "tools": {
            "type": "array",
            "minItems": 1,
            "description": "the tools, e.g. - {name: get_ticket, reads: ticket}",
            "items": closed_object(
                {
                    "name": {"type": "string", "description": "what the agent calls it"},
                    "description": {"type": "string", "description": "what it does"},
                    "parameters": {"type": "object"},
                    "reads": _PATH_TEMPLATE,
                    "writes": _PATH_TEMPLATE,
                    "appends": _PATH_TEMPLATE,
                    "fixtures": {"enum": ["exact", "terms", True]},
                },
                required=["name", "description"],
            ),
        },
        "state": {"type": "object"},
        "input_schema": {"type": "object"},
        "goal_schema": {"type": "object"},
    },
    required=["tools"],
)

_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def lay_over(base: Any, top: Any) -> Any:
    """`top` laid over `base`: objects merged key by key, anything else replaced by `top`."""
    if isinstance(base, dict) and isinstance(top, dict):
        out = dict(base)
        for key, value in top.items():
            out[key] = lay_over(base[key], value) if key in base else value
        return out
    return top


def _fields(path: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(path) if f is not None]


def fill_path(path: str, arguments: dict[str, Any]) -> list[str]:
    """A path template filled from the arguments, as its parts: `tickets.{id}` -> [tickets, 7]."""
    return [part.format(**{f: arguments[f] for f in _fields(part)}) for part in path.split(".")]


class ToolsEnvironment(Environment):
    """A world declared in suite.yaml: reads, writes and appends on a JSON state,
    and look-ups answered from the case's fixtures."""

    def setup(self, input: dict[str, Any]) -> None:
        self.state: dict[str, Any] = lay_over(clone(self.config.get("state") or {}), input)
        for declared in self.config["tools"]:
            self.add_tool(self._tool(declared))

    def _tool(self, declared: dict[str, Any]) -> Tool:
        fixtures = declared.get("fixtures")
        mode: FixtureMode | None = None
        if fixtures is not None:
            mode = "exact" if fixtures is True else fixtures
        handler: Callable[..., Any] | None = None
        if mode is None:

            def handler(**arguments: Any) -> Any:
                return self._act(declared, arguments)

        return Tool(
            name=declared["name"],
            description=declared["description"],
            parameters=declared.get("parameters") or _NO_ARGUMENTS,
            handler=handler,
            fixtures=mode,
        )

    def _act(self, declared: dict[str, Any], arguments: dict[str, Any]) -> Any:
        if "reads" in declared:
            path = ".".join(fill_path(declared["reads"], arguments))
            value = get_path(self.state, path)
            if value is MISSING:
                raise ToolError(f"{declared['name']}: nothing at {show(path)}")
            return value
        if "writes" in declared:
            parts = fill_path(declared["writes"], arguments)
            parent = self._parent(parts, declared["name"])
            current = parent.get(parts[-1])
            parent[parts[-1]] = {**current, **arguments} if isinstance(current, dict) else arguments
            return {"written": ".".join(parts)}
        parts = fill_path(declared["appends"], arguments)
        parent = self._parent(parts, declared["name"])
        items = parent.setdefault(parts[-1], [])
        if not isinstance(items, list):
            raise ToolError(
                f"{declared['name']}: {'.'.join(parts)} holds {show(items)}, not a list"
            )
        items.append(arguments)
        return {"appended": ".".join(parts), "index": len(items) - 1}

    def _parent(self, parts: list[str], tool: str) -> dict[str, Any]:
        """The object holding the path's last part, made on the way where missing."""
        node: Any = self.state
        for part in parts[:-1]:
            if isinstance(node, dict):
                node = node.setdefault(part, {})
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise ToolError(f"{tool}: cannot write under {show('.'.join(parts))}")
        if not isinstance(node, dict):
            raise ToolError(f"{tool}: {show('.'.join(parts[:-1]))} is not an object")
        return node

    def final_state(self) -> dict[str, Any]:
        state: dict[str, Any] = clone(self.state)
        return state

    # -- load-time checks

    @classmethod
    def schemas(cls, config: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        config = config or {}
        input_schema: dict[str, Any] = config.get("input_schema") or cls.input_schema
        goal_schema: dict[str, Any] = config.get("goal_schema") or cls.goal_schema
        return input_schema, goal_schema

    @classmethod
    def check_class(cls, config: dict[str, Any] | None = None) -> list[tuple[Loc, str]]:
        config = config or {}
        if "tools" not in config:
            return [
                (
                    ("tools",),
                    "missing; the tools environment needs its tools, e.g. tools: "
                    "[{name: get_ticket, description: Read the ticket., reads: ticket}]",
                )
            ]
        problems = schema_problems(config, CONFIG_SCHEMA, yaml=True)
        if problems:
            return problems
        for key in ("input_schema", "goal_schema"):
            problems += [
                ((key,), f"is not a valid JSON Schema: {e}")
                for e in schema_errors(config.get(key, {}))[:1]
            ]
        seen: dict[str, int] = {}
        for index, declared in enumerate(config["tools"]):
            problems += _declared_problems(declared, ("tools", index))
            if declared["name"] in seen:
                problems.append(
                    (
                        ("tools", index, "name"),
                        f"{show(declared['name'])} is already tools[{seen[declared['name']]}]; "
                        "give each tool its own name",
                    )
                )
            seen.setdefault(declared["name"], index)
        return problems


def _declared_problems(declared: dict[str, Any], loc: Loc) -> list[tuple[Loc, str]]:
    actions = [a for a in ACTIONS if a in declared]
    if len(actions) != 1:
        got = " and ".join(actions) if actions else "none"
        return [
            (
                loc,
                f"names {got} of {', '.join(ACTIONS)}; give exactly one: what the tool does "
                "(reads: PATH, writes: PATH, appends: PATH or fixtures: exact|terms)",
            )
        ]
    parameters = declared.get("parameters") or _NO_ARGUMENTS
    found = tool_problems("suite.yaml", declared["name"], parameters)
    if found:
        return [((*loc, "parameters"), found[0].split(": ", 1)[1])]
    action = actions[0]
    if action == "fixtures":
        return []
    try:
        fields = [f for part in declared[action].split(".") for f in _fields(part)]
    except ValueError as error:
        return [((*loc, action), f"{show(declared[action])} is not a path template ({error})")]
    required = set(parameters.get("required", []))
    return [
        (
            (*loc, action),
            f"{{{field}}} is not a required argument of {declared['name']}; name one of its "
            f"required parameters ({', '.join(sorted(required)) or 'none'})",
        )
        for field in fields
        if field not in required
    ]
