"""Environments: the world one run acts on, its tools, and the record of every call.

Every run gets a fresh `Environment` from `make_environment`: a deep copy of the
case's initial state and fixtures, so two runs (even of one case, even
concurrent) never see each other's writes. Tools have JSON schemas; arguments
are checked against them before a tool runs. An agent's mistake (unknown tool,
bad arguments, a look-up with no recorded answer) never raises: it comes back
as an error outcome the agent can read, and is recorded like every other call
(tool, arguments, result or error, start time, duration).

Fixture tools replay the case's recorded responses (`fixtures` in the case
file). Matching rule:

- Arguments are normalised first: Unicode NFKC, case folded, runs of
  whitespace collapsed, ends trimmed (recursively through lists and objects).
- `query_background` (ticket environment) matches by terms. A query's terms:
  punctuation is read as a space, and the text is split at spaces and wherever
  a run of Chinese or Japanese characters (Han, kana, bopomofo: scripts written
  without spaces) starts or ends. Every term of the fixture's `query` must be
  in the call's query: a word as a whole word, a Chinese or Japanese term
  anywhere inside a run of such characters (there are no spaces to find words
  by). The fixture with the most distinct terms wins; ties go to the one
  written first. So the fixture query `優惠碼 會員折扣` answers
  "優惠碼可以和會員折扣一起用嗎？", `coupon stacking` answers "What is the coupon
  stacking policy?", and `return policy` does not answer "nonreturnable items
  and policyholder". (Korean is written with spaces: its terms are whole words.)
- Any other fixture tool matches when the normalised arguments are equal.
- No match: an error outcome ("no recorded answer"), recorded with
  `fixture_miss=True`: never an empty success.

Registry (`ENVIRONMENTS`):

- `ticket` (the clarifier): tools `get_ticket`, `query_background` (fixtures),
  `update_ticket`; final state `{"ticket": {...}}`.
- `board` (a Trello-like board): tools `get_board`, `get_guide` (fixtures),
  `create_card`; final state `{"cards": [...]}`.
"""

from __future__ import annotations

import builtins
import json
import pickle
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field, ValidationError

from passhat.errors import ConfigError
from passhat.models.base import RAW_ARGUMENTS, ToolSpec
from passhat.suite import (
    Loc,
    StrictModel,
    did_you_mean,
    field_path,
    show,
    validation_problems,
)

if TYPE_CHECKING:
    from passhat.suite import Case, Fixture, Suite

__all__ = [
    "ENVIRONMENTS",
    "BoardEnvironment",
    "Environment",
    "TicketEnvironment",
    "ToolCallRecord",
    "ToolOutcome",
    "make_environment",
    "schema_problems",
]


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


class ToolFailure(Exception):
    """Raised inside a tool for an agent mistake; `call` turns it into an error outcome."""

    def __init__(self, message: str, fixture_miss: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.fixture_miss = fixture_miss


Handler = Callable[[dict[str, Any]], Any]


# ------------------------------------------------------------------ JSON schema


_TYPE_WORDS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    checks: dict[str, Callable[[Any], bool]] = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    return checks[kind](value)


def schema_problems(value: Any, schema: dict[str, Any], loc: Loc = ()) -> list[tuple[Loc, str]]:
    """Check `value` against the JSON-schema subset tool specs use.

    Supported: type, enum, properties, required, additionalProperties: false,
    items, minLength, minimum, minItems. One (location, message) per problem.
    """
    kind = schema.get("type")
    if isinstance(kind, str) and not _is_type(value, kind):
        return [(loc, f"expected {_TYPE_WORDS[kind]}, got {show(value)}")]
    if "enum" in schema and value not in schema["enum"]:
        choices = [str(c) for c in schema["enum"]]
        listed = ", ".join(choices) if choices else "(nothing: the list of choices is empty)"
        return [(loc, f"{show(value)} is not one of {listed}{did_you_mean(str(value), choices)}")]
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        return [(loc, "is empty; write some text")]
    if isinstance(value, int | float) and value < schema.get("minimum", value):
        return [(loc, f"is {value}; it must be at least {schema['minimum']}")]
    if isinstance(value, dict):
        return _object_problems(value, schema, loc)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return [(loc, f"needs at least {schema['minItems']} item(s)")]
        items = schema.get("items")
        out: list[tuple[Loc, str]] = []
        if isinstance(items, dict):
            for index, item in enumerate(value):
                out += schema_problems(item, items, (*loc, index))
        return out
    return []


def _object_problems(
    value: dict[str, Any], schema: dict[str, Any], loc: Loc
) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            out.append(((*loc, name), "missing; add it"))
    for key, item in value.items():
        if key in properties:
            out += schema_problems(item, properties[key], (*loc, key))
        elif schema.get("additionalProperties") is False:
            allowed = list(properties)
            listed = ", ".join(allowed) if allowed else "none"
            out.append(
                (
                    (*loc, key),
                    f"unknown key {show(key)}; the keys allowed here are {listed}"
                    f"{did_you_mean(key, allowed)}",
                )
            )
    return out


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


def _args_message(tool: str, problems: list[tuple[Loc, str]]) -> str:
    parts = [f"{field_path(loc)}: {message}" if loc else message for loc, message in problems]
    return f"invalid arguments for {tool}: " + "; ".join(parts)


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
    """A query's terms, in order: normalised, punctuation read as spaces, split at spaces
    and where a run of Chinese or Japanese characters starts or ends."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(
        " " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in folded
    )
    return _TERM.findall(spaced)


def terms_found(wanted: set[str], asked: list[str]) -> bool:
    """Every wanted term is in the asked terms: a word as a whole word; a Chinese or
    Japanese term anywhere inside one of the asked runs of such characters."""
    words = set(asked)
    runs = [t for t in asked if _UNSPACED_TERM.match(t)]
    return all(
        any(term in run for run in runs) if _UNSPACED_TERM.match(term) else term in words
        for term in wanted
    )


# ----------------------------------------------------------------- base class


def clone(value: Any) -> Any:
    """A deep copy of plain data (a round trip through pickle: about twice as fast as
    copy.deepcopy, which matters when every run copies its world several times)."""
    return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


class Environment:
    """The world of one run: its state, its tools and the record of every call.

    Subclasses set `kind`, the schemas of a case's `input` and `goal`
    (`input_model`, `goal_model`), which tools replay fixtures
    (`fixture_tools`), and implement `_setup`, `final_state` and their tools.
    """

    kind: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    goal_model: ClassVar[type[BaseModel]]
    fixture_tools: ClassVar[tuple[str, ...]] = ()

    def __init__(self, case: Case, labels: tuple[str, ...]) -> None:
        self.case_id = case.id
        self.labels = labels
        self.calls: list[ToolCallRecord] = []
        # A copy: nothing an agent reaches through this run is shared with another run.
        self._fixtures: dict[str, list[Fixture]] = clone(case.fixtures)
        self._tools: dict[str, tuple[ToolSpec, Handler]] = {}
        self._setup(clone(case.input))

    # -- what subclasses provide

    def _setup(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def final_state(self) -> dict[str, Any]:
        """The state scorers grade: a JSON-ready deep copy."""
        raise NotImplementedError

    @classmethod
    def check_labels(cls, labels: tuple[str, ...]) -> list[tuple[Loc, str]]:
        """Problems with the suite's label set for this environment (suite.yaml)."""
        return []

    @classmethod
    def _check_content(
        cls, case: Case, labels: tuple[str, ...], data: Any, goal: Any
    ) -> list[tuple[Loc, str]]:
        """Rules beyond the schemas, given the parsed goal and input (None if invalid)."""
        return []

    # -- tools

    @property
    def tools(self) -> list[ToolSpec]:
        """The tools the agent may call, with their JSON schemas."""
        return [spec for spec, _ in self._tools.values()]

    def _register(self, spec: ToolSpec, handler: Handler) -> None:
        self._tools[spec.name] = (spec, handler)

    def _register_fixture_tool(self, spec: ToolSpec) -> None:
        self._register(spec, lambda args: self._replay(spec.name, args))

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
            result = self._dispatch(name, arguments)
            outcome = ToolOutcome(result)
        except ToolFailure as failure:
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

    def _dispatch(self, name: str, arguments: Any) -> Any:
        entry = self._tools.get(name)
        if entry is None:
            known = list(self._tools)
            raise ToolFailure(
                f"unknown tool {show(name)}; the tools are {', '.join(known)}"
                f"{did_you_mean(str(name), known)}"
            )
        spec, handler = entry
        if not isinstance(arguments, dict):
            raise ToolFailure(
                f"invalid arguments for {name}: expected an object, got {show(arguments)}"
            )
        broken = not_json_reason(arguments)
        if broken is not None:
            raise ToolFailure(f"invalid arguments for {name}: {broken}")
        problems = schema_problems(arguments, spec.parameters)
        if problems:
            raise ToolFailure(_args_message(name, problems))
        # Copies both ways: a handler never keeps the caller's objects, and the
        # caller never gets a reference into the state.
        return clone(handler(clone(arguments)))

    # -- fixtures

    def _replay(self, tool: str, arguments: dict[str, Any]) -> Any:
        best: tuple[int, Fixture] | None = None
        for fixture in self._fixtures.get(tool, []):
            score = self._match(tool, fixture.args, arguments)
            if score is not None and (best is None or score > best[0]):
                best = (score, fixture)
        if best is None:
            raise ToolFailure(
                f"{tool}: no recorded answer for {show(arguments, 200)}; nothing more is "
                "known here, so work from what you have",
                fixture_miss=True,
            )
        return clone(best[1].response)

    def _match(self, tool: str, recorded: dict[str, Any], called: dict[str, Any]) -> int | None:
        """How well a fixture matches a call (higher is better); None: no match."""
        return 0 if normalise(recorded) == normalise(called) else None

    @classmethod
    def _fixture_key(cls, tool: str, args: dict[str, Any]) -> str:
        """Equal for two fixtures that `_match` treats alike (they answer the same calls)."""
        return json.dumps(normalise(args), sort_keys=True, ensure_ascii=False)

    # -- load-time checks

    @classmethod
    def check_case(cls, case: Case, labels: tuple[str, ...]) -> list[tuple[Loc, str]]:
        """Every problem of a case for this environment: input, goal, fixtures, rules."""
        problems: list[tuple[Loc, str]] = []
        parsed: dict[str, Any] = {}
        for key, model, value in (
            ("input", cls.input_model, case.input),
            ("goal", cls.goal_model, case.goal),
        ):
            try:
                parsed[key] = model.model_validate(value)
            except ValidationError as error:
                problems += validation_problems(error, model, (key,))
        if "input" in parsed:
            problems += cls._check_fixtures(case, labels)
        if "goal" in parsed:
            problems += cls._check_content(case, labels, parsed.get("input"), parsed["goal"])
        return problems

    @classmethod
    def _check_fixtures(cls, case: Case, labels: tuple[str, ...]) -> list[tuple[Loc, str]]:
        problems: list[tuple[Loc, str]] = []
        specs = {spec.name: spec for spec in cls(case, labels).tools}
        for tool, fixtures in case.fixtures.items():
            if tool not in cls.fixture_tools:
                replayed = ", ".join(cls.fixture_tools) or "none"
                problems.append(
                    (
                        ("fixtures", tool),
                        f"{show(tool)} does not replay recorded responses; the {cls.kind} "
                        f"environment's fixture tools are: {replayed}"
                        f"{did_you_mean(tool, cls.fixture_tools)}",
                    )
                )
                continue
            seen: dict[str, int] = {}
            for index, fixture in enumerate(fixtures):
                loc: Loc = ("fixtures", tool, index, "args")
                problems += [
                    ((*loc, *where), message)
                    for where, message in schema_problems(fixture.args, specs[tool].parameters)
                ]
                key = cls._fixture_key(tool, fixture.args)
                if key in seen:
                    problems.append(
                        (
                            loc,
                            f"matches the same calls as fixtures.{tool}[{seen[key]}], so it "
                            "would never be used; remove one",
                        )
                    )
                seen.setdefault(key, index)
        return problems


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    )


# ------------------------------------------------------------ ticket (clarifier)


class _AC(StrictModel):
    ac: int = Field(ge=1, description="the AC's number, e.g. 1")
    text: str = Field(min_length=1, description="what the AC requires")


class _Ticket(StrictModel):
    key: str = Field(min_length=1, description="the ticket key, e.g. SHOP-1042")
    title: str = Field(min_length=1, description="the ticket's title")
    description: str = Field(description="the ticket's description")
    acceptance_criteria: list[_AC] = Field(
        min_length=1, description="numbered ACs, e.g. - {ac: 1, text: ...}"
    )


class _TicketInput(StrictModel):
    ticket: _Ticket = Field(description="the ticket to clarify (key, title, description, ACs)")


class _Annotation(StrictModel):
    ac: int = Field(ge=1, description="the number of the AC it annotates")
    label: str = Field(min_length=1, description="one of the suite's labels")
    note: str = ""


class _GoalTicket(StrictModel):
    annotations: list[_Annotation] = Field(
        description="the expected AC annotations; [] when every AC is fine"
    )
    goal: str | None = None
    scope_in: list[str] | None = None
    scope_out: list[str] | None = None


class _TicketGoal(StrictModel):
    ticket: _GoalTicket = Field(description="the expected ticket, e.g. ticket: {annotations: []}")


def _annotation_problems(
    annotations: list[dict[str, Any]],
    ac_numbers: list[int] | None,
    labels: tuple[str, ...] | None,
    loc: Loc,
) -> list[tuple[Loc, str]]:
    """ACs that exist (when known), labels of the suite (when given), each (ac, label) once."""
    out: list[tuple[Loc, str]] = []
    seen: dict[tuple[int, str], int] = {}
    numbers = ", ".join(str(n) for n in ac_numbers or [])
    for index, note in enumerate(annotations):
        ac, label = note["ac"], note["label"]
        if ac_numbers is not None and ac not in ac_numbers:
            out.append(((*loc, index, "ac"), f"the ticket has no AC {ac}; its ACs are {numbers}"))
        if labels is not None and label not in labels:
            out.append(
                (
                    (*loc, index, "label"),
                    f"{show(label)} is not one of the suite's labels ({', '.join(labels)})"
                    f"{did_you_mean(label, labels)}",
                )
            )
        if (ac, label) in seen:
            out.append(
                (
                    (*loc, index),
                    f"repeats {field_path((*loc, seen[(ac, label)]))} (AC{ac}:{label}); "
                    "give each AC and label once",
                )
            )
        seen.setdefault((ac, label), index)
    return out


class TicketEnvironment(Environment):
    """A ticket store holding the case's ticket; the clarifier's world."""

    kind = "ticket"
    input_model = _TicketInput
    goal_model = _TicketGoal
    fixture_tools = ("query_background",)

    def _setup(self, data: dict[str, Any]) -> None:
        ticket = data["ticket"]
        ticket.update(goal="", scope_in=[], scope_out=[], annotations=[])
        self._tickets: dict[str, dict[str, Any]] = {ticket["key"]: ticket}
        self._key = ticket["key"]
        text_list = {"type": "array", "items": {"type": "string"}}
        self._register(
            _spec(
                "get_ticket",
                "Read a ticket: key, title, description, numbered acceptance criteria "
                "(ac, text) and what has been written back so far.",
                {"key": {"type": "string", "description": "The ticket key, e.g. SHOP-1042."}},
                ["key"],
            ),
            self._get_ticket,
        )
        self._register_fixture_tool(
            _spec(
                "query_background",
                "Search the product knowledge base (policies, existing rules, definitions) "
                "for background the ticket relies on. Returns the matching passage, or an "
                "error when nothing matches.",
                {"query": {"type": "string", "minLength": 1, "description": "What to look up."}},
                ["query"],
            )
        )
        annotation = {
            "type": "object",
            "properties": {
                "ac": {"type": "integer", "minimum": 1, "description": "The AC's number."},
                "label": {"type": "string", "enum": list(self.labels)},
                "note": {"type": "string", "description": "Why, in one or two sentences."},
            },
            "required": ["ac", "label", "note"],
            "additionalProperties": False,
        }
        self._register(
            _spec(
                "update_ticket",
                "Write the clarified ticket back: its goal, what is in and out of scope, "
                "and one annotation per problem found in an acceptance criterion (an AC "
                "may carry several labels). Replaces what was written before; give "
                "annotations: [] when every AC is fine.",
                {
                    "key": {"type": "string", "description": "The ticket key."},
                    "goal": {"type": "string", "description": "The ticket's goal."},
                    "scope_in": {**text_list, "description": "What the work includes."},
                    "scope_out": {**text_list, "description": "What it leaves out."},
                    "annotations": {"type": "array", "items": annotation},
                },
                ["key", "goal", "scope_in", "scope_out", "annotations"],
            ),
            self._update_ticket,
        )

    def _ticket(self, key: str) -> dict[str, Any]:
        if key not in self._tickets:
            raise ToolFailure(f"no ticket {show(key)}; the ticket here is {self._key}")
        return self._tickets[key]

    def _get_ticket(self, args: dict[str, Any]) -> Any:
        return self._ticket(args["key"])

    def _update_ticket(self, args: dict[str, Any]) -> Any:
        ticket = self._ticket(args["key"])
        numbers = [c["ac"] for c in ticket["acceptance_criteria"]]
        problems = _annotation_problems(args["annotations"], numbers, None, ("annotations",))
        if problems:
            raise ToolFailure(_args_message("update_ticket", problems))
        for name in ("goal", "scope_in", "scope_out", "annotations"):
            ticket[name] = args[name]
        return {"updated": ticket["key"], "annotations": len(args["annotations"])}

    def _match(self, tool: str, recorded: dict[str, Any], called: dict[str, Any]) -> int | None:
        if tool != "query_background":
            return super()._match(tool, recorded, called)
        terms = set(query_terms(recorded["query"]))
        if terms and terms_found(terms, query_terms(called["query"])):
            return len(terms)
        return None

    @classmethod
    def _fixture_key(cls, tool: str, args: dict[str, Any]) -> str:
        query = args.get("query")
        if tool != "query_background" or set(args) != {"query"} or not isinstance(query, str):
            return super()._fixture_key(tool, args)
        return json.dumps(sorted(set(query_terms(query))), ensure_ascii=False)

    def final_state(self) -> dict[str, Any]:
        return {"ticket": clone(self._tickets[self._key])}

    @classmethod
    def check_labels(cls, labels: tuple[str, ...]) -> list[tuple[Loc, str]]:
        if labels:
            return []
        return [
            (
                ("labels",),
                "is empty; the ticket environment annotates ACs with these labels, e.g. "
                "labels: [conflict, inconsistent_with_description, unverifiable]",
            )
        ]

    @classmethod
    def _check_content(
        cls, case: Case, labels: tuple[str, ...], data: Any, goal: Any
    ) -> list[tuple[Loc, str]]:
        problems: list[tuple[Loc, str]] = []
        numbers: list[int] | None = None  # unknown when the input is invalid
        if data is not None:
            numbers = [criterion.ac for criterion in data.ticket.acceptance_criteria]
            problems += [
                (
                    ("input", "ticket", "acceptance_criteria", index, "ac"),
                    f"AC {number} is numbered twice; number each AC once",
                )
                for index, number in enumerate(numbers)
                if number in numbers[:index]
            ]
        for index, query in enumerate(case.fixtures.get("query_background", [])):
            text = query.args.get("query")
            if isinstance(text, str) and text and not query_terms(text):
                problems.append(
                    (
                        ("fixtures", "query_background", index, "args", "query"),
                        "has no words to match; write the terms a query must contain",
                    )
                )
        problems += _annotation_problems(
            [a.model_dump() for a in goal.ticket.annotations],
            numbers,
            labels,
            ("goal", "ticket", "annotations"),
        )
        return problems


# ------------------------------------------------------------------------ board


class _Board(StrictModel):
    name: str = Field(min_length=1, description="the board's name")
    lists: list[str] = Field(min_length=1, description="its lists, e.g. [Backlog, Doing, Done]")


class _BoardInput(StrictModel):
    request: str = Field(min_length=1, description="what the card should be about")
    board: _Board = Field(description="the board: {name: ..., lists: [...]}")


class _GoalCard(StrictModel):
    list: str = Field(min_length=1, description="the list the card belongs in")
    labels: builtins.list[str] = Field(description="the card's labels; [] for none")


class _BoardGoal(StrictModel):
    cards: list[_GoalCard] = Field(
        description="the expected cards, e.g. - {list: Backlog, labels: []}"
    )


class BoardEnvironment(Environment):
    """A Trello-like board; the agent writes a card following a writing guide."""

    kind = "board"
    input_model = _BoardInput
    goal_model = _BoardGoal
    fixture_tools = ("get_guide",)

    def _setup(self, data: dict[str, Any]) -> None:
        self._board: dict[str, Any] = data["board"]
        self._cards: list[dict[str, Any]] = []
        text_list = {"type": "array", "items": {"type": "string"}}
        self._register(
            _spec(
                "get_board",
                "Read the board: its name, its lists and the labels cards may carry.",
                {},
                [],
            ),
            self._get_board,
        )
        self._register_fixture_tool(
            _spec("get_guide", "Read the team's card writing guide.", {}, [])
        )
        self._register(
            _spec(
                "create_card",
                "Create a card on the board.",
                {
                    "list": {"type": "string", "enum": list(self._board["lists"])},
                    "title": {"type": "string", "minLength": 1},
                    "description": {"type": "string", "description": "Markdown."},
                    "checklist": {**text_list, "description": "Checklist items, in order."},
                    "labels": {
                        "type": "array",
                        "items": {"type": "string", "enum": list(self.labels)},
                    },
                },
                ["list", "title", "description", "checklist", "labels"],
            ),
            self._create_card,
        )

    def _get_board(self, args: dict[str, Any]) -> Any:
        return {**self._board, "labels": list(self.labels)}

    def _create_card(self, args: dict[str, Any]) -> Any:
        card = {"id": f"card-{len(self._cards) + 1}", **args}
        self._cards.append(card)
        return {"created": card["id"]}

    def final_state(self) -> dict[str, Any]:
        return {"cards": clone(self._cards)}

    @classmethod
    def _check_content(
        cls, case: Case, labels: tuple[str, ...], data: Any, goal: Any
    ) -> list[tuple[Loc, str]]:
        problems: list[tuple[Loc, str]] = []
        lists: list[str] | None = None if data is None else data.board.lists
        for index, card in enumerate(goal.cards):
            loc: Loc = ("goal", "cards", index)
            if lists is not None and card.list not in lists:
                problems.append(
                    (
                        (*loc, "list"),
                        f"{show(card.list)} is not a list of the board ({', '.join(lists)})"
                        f"{did_you_mean(card.list, lists)}",
                    )
                )
            for j, label in enumerate(card.labels):
                if label not in labels:
                    problems.append(
                        (
                            (*loc, "labels", j),
                            f"{show(label)} is not one of the suite's labels "
                            f"({', '.join(labels) or 'none'}){did_you_mean(label, labels)}",
                        )
                    )
                elif label in card.labels[:j]:
                    # exact_set compares multisets: a label written twice would be
                    # a label the card must carry twice.
                    problems.append(
                        (
                            (*loc, "labels", j),
                            f"{show(label)} repeats labels[{card.labels.index(label)}]; "
                            "give each label once",
                        )
                    )
        return problems


# --------------------------------------------------------------------- registry

ENVIRONMENTS: dict[str, type[Environment]] = {
    TicketEnvironment.kind: TicketEnvironment,
    BoardEnvironment.kind: BoardEnvironment,
}


def make_environment(suite: Suite, case: Case) -> Environment:
    """A fresh environment for one run of `case`: nothing is shared with any other run."""
    env_cls = ENVIRONMENTS.get(suite.environment)
    if env_cls is None:
        known = ", ".join(sorted(ENVIRONMENTS))
        raise ConfigError(
            f"suite {suite.name!r}: unknown environment {suite.environment!r}; use one of {known}"
        )
    return env_cls(case, suite.labels)
