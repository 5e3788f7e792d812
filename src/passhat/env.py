"""Environments: the world one run acts on, its tools, and the record of every call.

This module is the public door for every environment, the built-in `ticket` and
`board` (passhat/envs/) included: they use nothing a user's environment cannot.

An environment is a subclass of `Environment`:

    class Shop(Environment):
        input_schema = {"type": "object", "required": ["orders"]}   # a case's input
        goal_schema = {"type": "object", "required": ["refunds"]}   # a case's goal

        def setup(self, input):              # this run's initial state, from a copy
            self.orders, self.refunds = input["orders"], []        # of the case input

        @tool                                # name, description (docstring) and
        def refund(self, order: str, cents: int) -> dict:          # JSON-Schema
            '''Refund an order.'''                                  # parameters (type
            if order not in self.orders:                            # hints) are the
                raise ToolError(f"no order {order!r}")              # tool's spec
            self.refunds.append({"order": order, "cents": cents})
            return {"refunded": order}

        @tool(fixtures=True)                 # a look-up: answered from the case's
        def policy(self, topic: str) -> str:                        # recorded fixtures
            '''Read the refund policy on a topic.'''

        def final_state(self):               # what the scorers grade (JSON-ready)
            return {"refunds": self.refunds}

Every run gets a fresh instance (`make_environment`): `setup` receives a deep
copy of the case input and the fixtures are copied, so two runs never share a
thing. `await env.call(name, arguments)` checks the arguments against the tool's
JSON Schema (Draft 2020-12, by `jsonschema`), runs the tool (sync or async,
called with the arguments as keywords) and records the call (tool, arguments,
result or error, start, duration) in `env.calls`. An agent's mistake (unknown
tool, bad arguments, a `ToolError` raised by the tool, a look-up with no
recorded answer) never raises: it comes back as an error outcome the agent can
read, recorded like every other call.

Fixture tools replay the case's recorded responses (`fixtures` in the case
file). Arguments are normalised first: Unicode NFKC, case folded, runs of
whitespace collapsed, ends trimmed (recursively through lists and objects).

- `fixtures=True` ("exact"): a fixture answers when the normalised arguments
  are equal.
- `fixtures="terms"`: every argument the fixture gives must match; text by terms,
  anything else by equality. A text's terms: punctuation is read as a space, and
  it is split at spaces and wherever a run of Chinese or Japanese characters
  (Han, kana, bopomofo: scripts written without spaces) starts or ends. Every
  term of the fixture's text must be in the call's: a word as a whole word, a
  Chinese or Japanese term anywhere inside a run of such characters. The fixture
  with the most terms wins; ties go to the one written first. So `優惠碼 會員折扣`
  answers "優惠碼可以和會員折扣一起用嗎？", `coupon stacking` answers "What is
  the coupon stacking policy?", and `return policy` does not answer
  "nonreturnable items and policyholder".
- Override `match_fixture` for any other rule.
- No match: an error outcome ("no recorded answer"), recorded with
  `fixture_miss=True`: never an empty success.

At `passhat check` (classmethod `check_case`), every case's input and goal are
validated against `input_schema` and `goal_schema`, its fixtures against the
look-up tools' parameters, and `check_rules` adds the environment's own rules.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import re
import time
import typing
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, overload

from passhat.errors import ConfigError
from passhat.imports import BUILTIN_ENVIRONMENTS, load_object
from passhat.models.base import RAW_ARGUMENTS, ToolSpec
from passhat.plain import Loc, did_you_mean, field_path, show
from passhat.plain import clone as clone  # re-exported for the runner
from passhat.schema import schema_errors, schema_problems

if TYPE_CHECKING:
    from passhat.suite import Case, Suite

__all__ = [
    "BUILTIN_ENVIRONMENTS",
    "Environment",
    "FixtureMode",
    "Tool",
    "ToolCallRecord",
    "ToolError",
    "ToolOutcome",
    "make_environment",
    "resolve_environment",
    "tool",
]

FixtureMode = Literal["exact", "terms"]
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call gives back to the agent."""

    content: Any
    """JSON-ready result; for an error, the message (text)."""
    is_error: bool = False
    """The call failed; `content` says why and how to call it right."""

    def text(self) -> str:
        """What the model sees: text as it is, anything else as JSON."""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


@dataclass(frozen=True)
class ToolCallRecord:
    """One recorded tool call."""

    tool: str
    """The tool's name as the agent called it (also for unknown tools)."""
    arguments: dict[str, Any]
    """Arguments as given (a copy); a non-object is kept under `_not_an_object`."""
    result: Any | None
    """The result on success; None on error."""
    error: str | None
    """The error message given to the agent; None on success."""
    fixture_miss: bool
    """A fixture tool had no recorded response for these arguments."""
    started_at: float
    """When the call started (epoch seconds)."""
    duration_s: float
    """How long it took (seconds)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
            "fixture_miss": self.fixture_miss,
            "started_at": self.started_at,
            "duration_s": self.duration_s,
        }


class ToolError(Exception):
    """Raise it inside a tool for an agent's mistake: the agent reads the message."""

    def __init__(self, message: str, fixture_miss: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.fixture_miss = fixture_miss


ToolFailure = ToolError  # the name before the protocol was public


Handler = Callable[..., Any]


@dataclass(frozen=True)
class Tool:
    """A tool as an environment declares it (by `@tool` or `add_tool`)."""

    name: str
    """Name the agent calls it by: letters, digits, '_' and '-' (at most 64)."""
    description: str
    """What it does, for the model."""
    parameters: dict[str, Any]
    """JSON Schema (Draft 2020-12) of its arguments: an object schema."""
    handler: Handler | None = None
    """Called with the arguments as keywords (sync or async); None for a look-up
    answered only from fixtures."""
    fixtures: FixtureMode | None = None
    """How a look-up matches recorded fixtures; None: not a fixture tool."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


@dataclass(frozen=True)
class _Declared:
    """What `@tool` leaves on a method, read when an environment is built."""

    name: str | None
    description: str | None
    parameters: dict[str, Any] | Callable[[Any], dict[str, Any]] | None
    fixtures: FixtureMode | None


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def tool(fn: _F) -> _F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | Callable[[Any], dict[str, Any]] | None = None,
    fixtures: bool | FixtureMode = False,
) -> Callable[[_F], _F]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | Callable[[Any], dict[str, Any]] | None = None,
    fixtures: bool | FixtureMode = False,
) -> Any:
    """Declare a method of an `Environment` as a tool.

    Used bare (`@tool`) or with options: `name` (default: the method's name),
    `description` (default: the docstring's first paragraph), `parameters` (a
    JSON Schema, or a function of the environment returning one; default: derived
    from the method's type hints, `Annotated[str, Field(description=...)]` for
    argument descriptions) and `fixtures` (True or "exact", or "terms": the tool
    is a look-up answered from the case's fixtures, and its body is not called).
    """
    mode: FixtureMode | None = None
    if fixtures is True:
        mode = "exact"
    elif fixtures in ("exact", "terms"):
        mode = fixtures
    elif fixtures is not False:
        raise ConfigError(f"@tool(fixtures={fixtures!r}): use True, 'exact' or 'terms'")

    def mark(method: _F) -> _F:
        method.__passhat_tool__ = _Declared(name, description, parameters, mode)  # type: ignore[attr-defined]
        return method

    return mark(fn) if fn is not None else mark


def parameters_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """An object schema of a method's arguments (after `self`), from its type hints."""
    from pydantic import ConfigDict, create_model

    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(signature.parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(
                f"tool {fn.__name__}: *{param.name} cannot be described by a schema; "
                "name each argument, or give @tool(parameters={...})"
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), default)
    model = create_model(
        f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return _untitled(model.model_json_schema())  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1024)
def _signature_parameters(fn: Callable[..., Any]) -> dict[str, Any]:
    """`parameters_from_signature`, once per method (a millisecond each: pydantic builds
    a model): every run's tool then holds the same schema object, whose validator
    schema.py keeps by identity. Callers do not change it."""
    return parameters_from_signature(fn)


def not_json_reason(arguments: dict[str, Any]) -> str | None:
    """Why a model's arguments were no JSON object (the provider kept its text under
    RAW_ARGUMENTS), in words the model can act on; None for real arguments."""
    raw = arguments.get(RAW_ARGUMENTS)
    if set(arguments) != {RAW_ARGUMENTS} or not isinstance(raw, str):
        return None
    try:
        parsed = json.loads(raw)
    except ValueError as error:
        return (
            f"the arguments were not valid JSON: {error} in {show(raw, 200)}; "
            "send one complete JSON object"
        )
    return f"the arguments were not a JSON object but {show(parsed, 200)}; send one object"


def _untitled(schema: Any) -> Any:
    """Pydantic's schema without its generated titles (models read descriptions)."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) if k not in ("properties", "$defs") else _untitled_map(v)
            for k, v in schema.items()
            if k != "title"
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def _untitled_map(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: _untitled(v) for k, v in mapping.items()}


@functools.lru_cache(maxsize=1024)
def _doc(fn: Callable[..., Any]) -> str:
    text = inspect.getdoc(fn) or ""
    return text.split("\n\n")[0].strip()


# -------------------------------------------------------------------- matching


def normalise(value: Any) -> Any:
    """Unicode NFKC, case folded, whitespace collapsed, through lists and objects."""
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    return value


# Scripts written without spaces between words: Han (with its radicals, iteration
# marks and numerals), hiragana, katakana and bopomofo.
_UNSPACED = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303c\u3040-\u30ff"
    "\u3100-\u312f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003ffff"
)
_TERM = re.compile(f"[{_UNSPACED}]+|[^{_UNSPACED}\\s]+")
_UNSPACED_TERM = re.compile(f"[{_UNSPACED}]")


def query_terms(text: str) -> list[str]:
    """A text's terms, in order: normalised, punctuation read as spaces, split at spaces
    and where a run of Chinese or Japanese characters starts or ends."""
    return list(_query_terms(text))


@functools.lru_cache(maxsize=4096)
def _query_terms(text: str) -> tuple[str, ...]:
    """`query_terms`, once per text: every case's fixtures are checked at load and every
    look-up of a run matches the same recorded queries again."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(
        " " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in folded
    )
    return tuple(_TERM.findall(spaced))


def terms_found(wanted: set[str], asked: list[str]) -> bool:
    """Every wanted term is in the asked terms: a word as a whole word; a Chinese or
    Japanese term anywhere inside one of the asked runs of such characters."""
    words = set(asked)
    runs = [t for t in asked if _UNSPACED_TERM.match(t)]
    return all(
        any(term in run for run in runs) if _UNSPACED_TERM.match(term) else term in words
        for term in wanted
    )


def match_exact(recorded: dict[str, Any], called: dict[str, Any]) -> int | None:
    """0 when the normalised arguments are equal; None otherwise."""
    return 0 if normalise(recorded) == normalise(called) else None


def match_terms(recorded: dict[str, Any], called: dict[str, Any]) -> int | None:
    """How many terms of the fixture's texts the call holds (see the module docstring);
    None when an argument the fixture gives does not match."""
    score = 0
    for key, want in recorded.items():
        if key not in called:
            return None
        got = called[key]
        if isinstance(want, str) and isinstance(got, str):
            terms = set(query_terms(want))
            if not terms or not terms_found(terms, query_terms(got)):
                return None
            score += len(terms)
        elif normalise(want) != normalise(got):
            return None
    return score


def _fixture_key(mode: FixtureMode, args: dict[str, Any]) -> str:
    """Equal for two fixtures that answer the same calls."""
    if mode == "terms":
        keyed = {
            k: sorted(set(query_terms(v))) if isinstance(v, str) else normalise(v)
            for k, v in args.items()
        }
        return json.dumps(keyed, sort_keys=True, ensure_ascii=False)
    return json.dumps(normalise(args), sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------- the protocol


class Environment:
    """The world of one run: its state, its tools and the record of every call.

    Subclasses give `input_schema` and `goal_schema` (JSON Schemas of a case's
    `input` and `goal`), implement `setup` and `final_state`, and declare tools
    with `@tool` (or `add_tool` in `setup`). Do not override `__init__` or `call`.
    """

    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    """JSON Schema of a case's `input`, checked at `passhat check`."""
    goal_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    """JSON Schema of a case's `goal`, checked at `passhat check`."""
    _passhat_world: Any = None
    """For a user's world, the run's `execution.WorldThread`: setup(), every plain tool
    handler, final_state() and close() run in that one thread (set by the runner)."""

    def __init__(
        self, case: Case, labels: tuple[str, ...] = (), config: dict[str, Any] | None = None
    ) -> None:
        self.case_id = case.id
        """The case this run belongs to."""
        self.labels = tuple(labels)
        """The suite's label set."""
        self.config: dict[str, Any] = clone(config) if config else {}
        """Settings suite.yaml gives the environment (the `tools` environment's tools)."""
        self.calls: list[ToolCallRecord] = []
        """Every tool call of the run, in order."""
        # A case hands out copies: nothing an agent reaches through this run is shared
        # with another run. Its fixtures are read at the first look-up (most runs of a
        # tool-writing agent make none; unpickling them was a run's cost on the loop).
        self._case = case
        self._replayed: dict[str, list[Any]] | None = None
        self._tools: dict[str, Tool] = {}
        self.setup(case.input)
        # bound after setup: a schema may name what the state holds (a board's lists)
        added, self._tools = self._tools, {}
        for method_name, declared in _declared_tools(type(self)):
            self.add_tool(self._bind(method_name, declared))
        self._tools.update(added)

    # -- what subclasses provide

    def setup(self, input: dict[str, Any]) -> None:
        """Build this run's initial state from (a copy of) the case's input."""

    def final_state(self) -> dict[str, Any]:
        """The state scorers grade: JSON-ready, not shared with the live state."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what `setup` opened (a database connection, a temporary folder);
        called once the run's final state has been taken."""

    def _release(self) -> None:
        """Let go of the tools once the run is over: a tool holds a bound method of
        this environment, a reference cycle that only the cyclic garbage collector
        would free (with the run's state and fixtures), long after the run."""
        self._tools.clear()

    def match_fixture(
        self, tool: str, recorded: dict[str, Any], called: dict[str, Any]
    ) -> int | None:
        """How well a fixture's arguments match a call (higher wins); None: no match."""
        mode = self._tools[tool].fixtures if tool in self._tools else "exact"
        return match_terms(recorded, called) if mode == "terms" else match_exact(recorded, called)

    @classmethod
    def check_labels(cls, labels: tuple[str, ...]) -> list[tuple[Loc, str]]:
        """Problems with the suite's label set for this environment (suite.yaml)."""
        return []

    def check_rules(self, input: dict[str, Any], goal: dict[str, Any]) -> Iterable[tuple[Loc, str]]:
        """Rules beyond the schemas, on an environment set up from the case's input (say,
        that the goal names only rows that exist): (location in the case file, message)
        pairs, e.g. (("goal", "rows", 0, "id"), "no row 7; the rows are 1, 2")."""
        return []

    # -- tools

    @property
    def tools(self) -> list[ToolSpec]:
        """The tools the agent may call, with their JSON schemas."""
        return [t.spec for t in self._tools.values()]

    def add_tool(self, new: Tool) -> None:
        """Offer a tool built at run time (the `tools` environment declares them so)."""
        self._tools[new.name] = new

    def fixture_tools(self) -> list[str]:
        """The tools answered from the case's fixtures."""
        return [t.name for t in self._tools.values() if t.fixtures is not None]

    def _bind(self, method_name: str, declared: _Declared) -> Tool:
        method = getattr(self, method_name)
        params = declared.parameters
        if callable(params):
            params = params(self)
        if params is None:
            params = _signature_parameters(getattr(type(self), method_name))
        return Tool(
            name=declared.name or method_name,
            description=declared.description or _doc(getattr(type(self), method_name)),
            parameters=params,
            handler=None if declared.fixtures else method,
            fixtures=declared.fixtures,
        )

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one tool call, record it, and return what the agent sees."""
        started_at, clock = time.time(), time.perf_counter()
        recorded = (
            clone(arguments)
            if isinstance(arguments, dict)
            else {"_not_an_object": clone(arguments)}
        )
        miss = False
        try:
            result = await self._dispatch(name, arguments)
            outcome = ToolOutcome(result)
        except ToolError as failure:
            outcome = ToolOutcome(failure.message, is_error=True)
            miss = failure.fixture_miss
        self.calls.append(
            ToolCallRecord(
                tool=name,
                arguments=recorded,
                result=None if outcome.is_error else clone(outcome.content),
                error=outcome.content if outcome.is_error else None,
                fixture_miss=miss,
                started_at=started_at,
                duration_s=time.perf_counter() - clock,
            )
        )
        return outcome

    async def _dispatch(self, name: str, arguments: Any) -> Any:
        entry = self._tools.get(name)
        if entry is None:
            known = list(self._tools)
            raise ToolError(
                f"unknown tool {show(name)}; the tools are {', '.join(known)}"
                f"{did_you_mean(str(name), known)}"
            )
        if not isinstance(arguments, dict):
            raise ToolError(
                f"invalid arguments for {name}: expected an object, got {show(arguments)}"
            )
        broken = not_json_reason(arguments)
        if broken is not None:
            raise ToolFailure(f"invalid arguments for {name}: {broken}")
        problems = schema_problems(arguments, entry.parameters)
        if problems:
            raise ToolError(args_message(name, problems))
        if entry.handler is None:
            return self._replay(name, arguments)
        # Copies both ways: a handler never keeps the caller's objects, and the
        # caller never gets a reference into the state.
        world = self._passhat_world
        if world is not None and not inspect.iscoroutinefunction(entry.handler):
            result = await world.run(entry.handler, **clone(arguments))
        else:
            result = entry.handler(**clone(arguments))
        if inspect.isawaitable(result):
            result = await result
        return clone(result)

    # -- fixtures

    @property
    def _fixtures(self) -> dict[str, list[Any]]:
        if self._replayed is None:
            self._replayed = self._case.fixtures
        return self._replayed

    def _replay(self, tool: str, arguments: dict[str, Any]) -> Any:
        best: tuple[int, Any] | None = None
        for fixture in self._fixtures.get(tool, []):
            score = self.match_fixture(tool, fixture.args, arguments)
            if score is not None and (best is None or score > best[0]):
                best = (score, fixture)
        if best is None:
            raise ToolError(
                f"{tool}: no recorded answer for {show(arguments, 200)}; nothing more is "
                "known here, so work from what you have",
                fixture_miss=True,
            )
        return clone(best[1].response)

    # -- load-time checks

    @classmethod
    def check_class(cls, config: dict[str, Any] | None = None) -> list[tuple[Loc, str]]:
        """What keeps this class from being used as an environment, located in suite.yaml
        (empty when it is fine); `config` holds suite.yaml's settings of the `tools`
        environment (tools, state, input_schema, goal_schema)."""
        problems: list[str] = []
        if cls.final_state is Environment.final_state:
            problems.append(
                f"{cls.__name__} does not define final_state(); add "
                "def final_state(self) -> dict returning the state the scorers grade"
            )
        for attr in ("input_schema", "goal_schema"):
            problems += [
                f"{cls.__name__}.{attr} is not a valid JSON Schema: {e}"
                for e in schema_errors(getattr(cls, attr))[:1]
            ]
        for method_name, declared in _declared_tools(cls):
            parameters = declared.parameters
            if parameters is None:
                try:
                    parameters = _signature_parameters(getattr(cls, method_name))
                except ConfigError as error:
                    problems.append(str(error))
                    continue
            if isinstance(parameters, dict):
                problems += _tool_problems(cls.__name__, declared.name or method_name, parameters)
        located: list[tuple[Loc, str]] = [(("environment",), p) for p in problems]
        located += [
            ((key,), "only the tools environment reads it; remove it or write environment: tools")
            for key in config or {}
        ]
        return located

    @classmethod
    def schemas(cls, config: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The JSON Schemas of a case's input and goal (the class's, unless config says)."""
        return cls.input_schema, cls.goal_schema

    @classmethod
    def check_case(
        cls, case: Case, labels: tuple[str, ...], config: dict[str, Any] | None = None
    ) -> list[tuple[Loc, str]]:
        """Every problem of a case for this environment: input, goal, fixtures, rules."""
        input_schema, goal_schema = cls.schemas(config)
        input, goal = case.input, case.goal  # copies (a case hands out copies)
        problems = [
            (("input", *loc), m) for loc, m in schema_problems(input, input_schema, yaml=True)
        ]
        goal_problems = [
            (("goal", *loc), m) for loc, m in schema_problems(goal, goal_schema, yaml=True)
        ]
        problems += goal_problems
        if problems and len(problems) > len(goal_problems):
            return problems  # the input does not fit: no world to check the rest against
        try:
            env = cls(case, labels, config)
        except ToolError as error:
            return [*problems, (("input",), error.message)]
        except (Exception, SystemExit) as error:  # a user's setup: say what it raised, where
            return [
                *problems,
                (
                    ("input",),
                    f"{cls.__name__} cannot start from it: {type(error).__name__}: {error}",
                ),
            ]
        try:
            problems += [(("tools",), m) for m in env._tool_problems()]
            problems += env._check_fixtures(case)
            if not goal_problems:
                problems += list(env.check_rules(input, goal))
        finally:
            # a close() that fails is a fault of the runs it happens in (each is errored,
            # saying so), not a reason to refuse the suite
            with contextlib.suppress(Exception, SystemExit):
                env.close()
            env._release()
        return problems

    def _tool_problems(self) -> list[str]:
        out: list[str] = []
        if not self._tools:
            out.append(
                f"{type(self).__name__} offers no tools; declare them with @tool (or add_tool)"
            )
        for t in self._tools.values():
            out += _tool_problems(type(self).__name__, t.name, t.parameters)
        return out

    def _check_fixtures(self, case: Case) -> list[tuple[Loc, str]]:
        problems: list[tuple[Loc, str]] = []
        replayed = self.fixture_tools()
        for name, fixtures in case.fixtures.items():
            entry = self._tools.get(name)
            if entry is None or entry.fixtures is None:
                problems.append(
                    (
                        ("fixtures", name),
                        f"{show(name)} does not replay recorded responses; the environment's "
                        f"fixture tools are: {', '.join(replayed) or 'none'}"
                        f"{did_you_mean(name, replayed)}",
                    )
                )
                continue
            problems += self._check_tool_fixtures(entry, fixtures)
        return problems

    def _check_tool_fixtures(self, entry: Tool, fixtures: list[Any]) -> list[tuple[Loc, str]]:
        problems: list[tuple[Loc, str]] = []
        seen: dict[str, int] = {}
        assert entry.fixtures is not None
        for index, fixture in enumerate(fixtures):
            loc: Loc = ("fixtures", entry.name, index, "args")
            problems += [
                ((*loc, *where), message)
                for where, message in schema_problems(fixture.args, entry.parameters, yaml=True)
            ]
            if entry.fixtures == "terms":
                problems += [
                    ((*loc, key), "has no words to match; write the terms a call must contain")
                    for key, value in fixture.args.items()
                    if isinstance(value, str) and value and not query_terms(value)
                ]
            key = _fixture_key(entry.fixtures, fixture.args)
            if key in seen:
                problems.append(
                    (
                        loc,
                        f"matches the same calls as fixtures.{entry.name}[{seen[key]}], so it "
                        "would never be used; remove one",
                    )
                )
            seen.setdefault(key, index)
        return problems


_DECLARED: dict[type, list[tuple[str, _Declared]]] = {}


def _declared_tools(cls: type) -> list[tuple[str, _Declared]]:
    """The `@tool` methods of a class, in the order they are written (bases first);
    read once per class, not once per run."""
    if cls not in _DECLARED:
        found: dict[str, _Declared] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                declared = getattr(value, "__passhat_tool__", None)
                if isinstance(declared, _Declared):
                    found[attr] = declared
        _DECLARED[cls] = list(found.items())
    return _DECLARED[cls]


def _tool_problems(owner: str, name: str, parameters: Any) -> list[str]:
    if not _TOOL_NAME.match(name):
        return [
            f"{owner}: tool name {show(name)} may hold only letters, digits, '_' and '-' "
            "(at most 64)"
        ]
    errors = schema_errors(parameters)
    if errors:
        return [f"{owner}: tool {name}: parameters are not a valid JSON Schema: {errors[0]}"]
    if parameters.get("type") != "object":
        return [
            f"{owner}: tool {name}: parameters must be an object schema "
            "({type: object, properties: {...}}); models call tools with named arguments"
        ]
    return []


def args_message(tool: str, problems: list[tuple[Loc, str]]) -> str:
    """One line for the agent: `invalid arguments for T: a.b: problem; c: problem`."""
    parts = [f"{field_path(loc)}: {message}" if loc else message for loc, message in problems]
    return f"invalid arguments for {tool}: " + "; ".join(parts)


# --------------------------------------------------------------------- loading


_RESOLVED: dict[tuple[str, Path, str | None], type[Environment]] = {}


def resolve_environment(
    ref: str, suite_dir: Path, source_hash: str | None = None
) -> type[Environment]:
    """The environment class a suite names: a built-in name, `file.py:Class` beside
    suite.yaml or `package.module:Class`; ConfigError naming what is wrong. Loaded
    once per source hash: an edited file is loaded again."""
    key = (ref, suite_dir, source_hash)
    if key not in _RESOLVED:
        target = BUILTIN_ENVIRONMENTS.get(ref, ref)
        obj = load_object(target, suite_dir, what="environment")
        if not (isinstance(obj, type) and issubclass(obj, Environment)):
            raise ConfigError(
                f"environment {ref}: {show(getattr(obj, '__name__', obj))} is not a subclass "
                "of passhat.Environment; write class Name(Environment) with @tool methods"
            )
        _RESOLVED[key] = obj
    return _RESOLVED[key]


def make_environment(suite: Suite, case: Case) -> Environment:
    """A fresh environment for one run of `case`: nothing is shared with any other run."""
    env_cls = resolve_environment(suite.environment, suite.path, suite.environment_hash)
    return env_cls(case, suite.labels, suite.environment_config)
