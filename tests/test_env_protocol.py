"""The environment protocol: the one door the built-in worlds and a user's world share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import Field

from passhat import Environment, ToolError, tool
from passhat.env import make_environment, parameters_from_signature
from passhat.errors import SuiteError
from passhat.suite import Case, load_suite


def _case(input: dict[str, Any], fixtures: dict[str, Any] | None = None) -> Case:
    from passhat.suite import Fixture

    return Case(
        id="c-1",
        input=input,
        fixtures={k: [Fixture(**f) for f in v] for k, v in (fixtures or {}).items()},
        goal={},
        tags=(),
        file=Path("c-1.yaml"),
        hash="0" * 64,
    )


class Shop(Environment):
    """A toy world: orders in, refunds out."""

    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "required": ["orders"]}

    def setup(self, input: dict[str, Any]) -> None:
        self.orders: dict[str, int] = input["orders"]
        self.refunds: list[dict[str, Any]] = []

    @tool
    def refund(
        self,
        order: Annotated[str, Field(description="The order id, e.g. A-1.")],
        cents: Annotated[int, Field(ge=1)],
        reason: str = "",
    ) -> dict[str, Any]:
        """Refund part of an order.

        More text the model does not need."""
        if order not in self.orders:
            raise ToolError(f"no order {order!r}; the orders are {', '.join(self.orders)}")
        self.refunds.append({"order": order, "cents": cents})
        return {"refunded": order}

    @tool(fixtures="terms")
    def policy(self, topic: str) -> str:
        """Read the refund policy on a topic."""
        raise AssertionError("a look-up's body is never called")

    @tool(name="count-refunds")
    async def count(self) -> int:
        """How many refunds so far (an async tool)."""
        return len(self.refunds)

    def final_state(self) -> dict[str, Any]:
        return {"refunds": list(self.refunds)}


def _shop(**fixtures: Any) -> Shop:
    return Shop(_case({"orders": {"A-1": 900, "B-2": 100}}, fixtures))


def test_a_tool_schema_comes_from_the_type_hints_and_the_docstring() -> None:
    specs = {spec.name: spec for spec in _shop().tools}
    assert list(specs) == ["refund", "policy", "count-refunds"]
    refund = specs["refund"]
    assert refund.description == "Refund part of an order."
    assert refund.parameters == {
        "type": "object",
        "properties": {
            "order": {"type": "string", "description": "The order id, e.g. A-1."},
            "cents": {"type": "integer", "minimum": 1},
            "reason": {"type": "string", "default": ""},
        },
        "required": ["order", "cents"],
        "additionalProperties": False,
    }


async def test_calls_change_the_state_and_are_recorded() -> None:
    env = _shop()
    assert (await env.call("refund", {"order": "A-1", "cents": 300})).content == {"refunded": "A-1"}
    assert (await env.call("count-refunds", {})).content == 1
    assert env.final_state() == {"refunds": [{"order": "A-1", "cents": 300}]}
    assert [c.tool for c in env.calls] == ["refund", "count-refunds"]


async def test_a_tool_error_is_an_outcome_the_agent_reads_and_nothing_changes() -> None:
    env = _shop()
    outcome = await env.call("refund", {"order": "Z-9", "cents": 1})
    assert outcome.is_error and outcome.text() == "no order 'Z-9'; the orders are A-1, B-2"
    assert env.calls[0].error == outcome.text()
    assert env.final_state() == {"refunds": []}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param({"order": "A-1"}, "cents: missing; add it", id="missing"),
        pytest.param({"order": "A-1", "cents": 0}, "cents: is 0; it must be at least 1", id="min"),
        pytest.param({"order": 5, "cents": 1}, "order: expected a string, got 5", id="type"),
        pytest.param(
            {"order": "A-1", "cents": 1, "note": "x"},
            "note: unknown key 'note'; the keys allowed here are order, cents, reason",
            id="extra",
        ),
        pytest.param({"order": "A-1", "cents": True}, "cents: expected an integer", id="bool"),
    ],
)
async def test_arguments_are_checked_against_the_json_schema(
    args: dict[str, Any], message: str
) -> None:
    env = _shop()
    outcome = await env.call("refund", args)
    assert outcome.is_error and outcome.text().startswith("invalid arguments for refund: ")
    assert message in outcome.text()
    assert env.final_state() == {"refunds": []}


async def test_keywords_the_old_hand_written_checker_ignored_are_enforced() -> None:
    class Strict(Shop):
        @tool(
            parameters={
                "type": "object",
                "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"}},
                "required": ["sku"],
                "additionalProperties": False,
            }
        )
        def stock(self, sku: str) -> int:
            """Units in stock."""
            return 3

    env = Strict(_case({"orders": {}}))
    assert (await env.call("stock", {"sku": "ABC-1"})).content == 3
    outcome = await env.call("stock", {"sku": "abc"})
    assert outcome.text() == (
        "invalid arguments for stock: sku: 'abc' does not match the pattern '^[A-Z]{3}-[0-9]+$'"
    )


async def test_look_ups_answer_from_fixtures_by_terms_and_a_miss_is_an_error() -> None:
    env = _shop(policy=[{"args": {"topic": "partial refund"}, "response": "Up to 90 days."}])
    hit = await env.call("policy", {"topic": "Is a PARTIAL refund allowed?"})
    assert hit.content == "Up to 90 days."
    miss = await env.call("policy", {"topic": "refunds of partials"})
    assert miss.is_error and env.calls[-1].fixture_miss


def test_a_class_without_final_state_is_refused_by_name() -> None:
    class Broken(Environment):
        @tool
        def ping(self) -> str:
            """Ping."""
            return "pong"

    problems = Broken.check_class()
    assert problems == [
        (
            ("environment",),
            "Broken does not define final_state(); add def final_state(self) -> dict "
            "returning the state the scorers grade",
        )
    ]


def test_a_tool_schema_that_is_not_json_schema_is_refused() -> None:
    class BadSchema(Shop):
        @tool(parameters={"type": "object", "properties": {"x": {"type": "text"}}})
        def ping(self, x: str) -> str:
            """Ping."""
            return x

    [(loc, message)] = BadSchema.check_class()
    assert loc == ("environment",)
    assert message.startswith("BadSchema: tool ping: parameters are not a valid JSON Schema:")


def test_varargs_cannot_be_described() -> None:
    def spread(self: object, *names: str) -> None: ...

    with pytest.raises(Exception, match=r"\*names cannot be described by a schema"):
        parameters_from_signature(spread)


def test_the_built_in_worlds_load_through_the_public_door() -> None:
    suite = load_suite(Path(__file__).resolve().parents[1] / "examples" / "clarify")
    env = make_environment(suite, suite.cases[0])
    assert type(env).__module__ == "passhat.envs.ticket"
    assert isinstance(env, Environment)
    assert suite.environment_hash is None  # built-ins are versioned with passhat


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        pytest.param("passhat.suite", "passhat.env", id="suite-needs-no-env"),
        pytest.param("passhat.suite", "passhat.scoring", id="suite-needs-no-scoring"),
        pytest.param("passhat.env", "passhat.suite", id="env-needs-no-suite"),
        pytest.param("passhat.envs.ticket", "passhat.suite", id="ticket-needs-no-suite"),
        pytest.param("passhat.scoring", "passhat.env", id="scoring-needs-no-env"),
    ],
)
def test_no_import_circle(module: str, absent: str) -> None:
    code = f"import sys, {module}; print({absent!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_case_that_breaks_the_input_schema_is_refused_at_check(tmp_path: Path) -> None:
    from conftest import SuiteWriter

    writer = SuiteWriter(tmp_path / "suite")
    writer.case["input"]["ticket"]["acceptance_criteria"][0]["ac"] = "one"
    with pytest.raises(SuiteError) as caught:
        load_suite(writer.write())
    assert any(
        "tiny.yaml: input.ticket.acceptance_criteria[0].ac: expected a whole number, got 'one'" in p
        for p in caught.value.problems
    ), caught.value.problems
