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

import asyncio
import contextlib
import inspect
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from passhat.errors import ConfigError
from passhat.fixtures import FixtureMode, fixture_key, match_exact, match_terms, query_terms
from passhat.imports import BUILTIN_ENVIRONMENTS, load_object
from passhat.models.base import ToolSpec
from passhat.plain import Loc, clones, did_you_mean, show
from passhat.plain import clone as clone  # re-exported for the runner
from passhat.schema import schema_errors, schema_problems
from passhat.tools import (
    Tool,
    ToolCallRecord,
    ToolError,
    ToolOutcome,
    args_message,
    bind,
    declared_tools,
    not_json_reason,
    signature_parameters,
    tool,
    tool_problems,
)

# the names environments imported from here before passhat.tools was a module of its own
from passhat.tools import ToolFailure as ToolFailure
from passhat.tools import parameters_from_signature as parameters_from_signature

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


UNANSWERED = "not answered: the run ended while the call ran; what it changed is graded"
"""A call's error when its run ended first (Environment.call)."""


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
        for method_name, declared in declared_tools(type(self)):
            self.add_tool(bind(self, method_name, declared))
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

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one tool call, record it, and return what the agent sees."""
        started_at, clock = time.time(), time.perf_counter()
        # Copies both ways: a handler never keeps the caller's objects, the caller never
        # gets a reference into the state, and the record shares nothing with either.
        if isinstance(arguments, dict):
            recorded, given = clones(arguments)
        else:
            recorded, given = {"_not_an_object": clone(arguments)}, arguments
        miss, kept = False, None
        try:
            content, kept = clones(await self._dispatch(name, arguments, given))
            outcome = ToolOutcome(content)
        except ToolError as failure:
            outcome = ToolOutcome(failure.message, is_error=True)
            miss = failure.fixture_miss
        except asyncio.CancelledError:
            # kept all the same: a run that ended while the call ran (a command agent gone
            # without waiting for the answer) is graded on what a world's handler, going
            # on in its thread, changed (tests/test_attack53_late.py)
            self._passhat_keep(
                name, recorded, None, ToolOutcome(UNANSWERED, is_error=True), started_at, clock
            )
            raise
        self._passhat_keep(name, recorded, kept, outcome, started_at, clock, miss)
        return outcome

    def _passhat_keep(
        self,
        name: str,
        recorded: Any,
        kept: Any,
        outcome: ToolOutcome,
        started_at: float,
        clock: float,
        miss: bool = False,
    ) -> None:
        """Record one call (Environment.call): `kept` the copy of its result."""
        self.calls.append(
            ToolCallRecord(
                tool=name,
                arguments=recorded,
                result=kept,
                error=outcome.content if outcome.is_error else None,
                fixture_miss=miss,
                started_at=started_at,
                duration_s=time.perf_counter() - clock,
            )
        )

    async def _dispatch(self, name: str, arguments: Any, given: Any) -> Any:
        """The tool's result for `arguments` (checked), its handler called with `given`
        (their copy); `call` copies the result."""
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
            raise ToolError(f"invalid arguments for {name}: {broken}")
        problems = schema_problems(arguments, entry.parameters)
        if problems:
            raise ToolError(args_message(name, problems))
        if entry.handler is None:
            return self._replay(name, arguments)
        world = self._passhat_world
        if world is not None and not inspect.iscoroutinefunction(entry.handler):
            return await world.run(entry.handler, **given)
        result = entry.handler(**given)
        if inspect.isawaitable(result):
            result = await result
        return result

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
        return best[1].response  # copied by `call`

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
        for method_name, declared in declared_tools(cls):
            parameters = declared.parameters
            if parameters is None:
                try:
                    parameters = signature_parameters(getattr(cls, method_name))
                except ConfigError as error:
                    problems.append(str(error))
                    continue
            if isinstance(parameters, dict):
                problems += tool_problems(cls.__name__, declared.name or method_name, parameters)
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
            out += tool_problems(type(self).__name__, t.name, t.parameters)
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
            key = fixture_key(entry.fixtures, fixture.args)
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
