"""The agent protocol and the context each run hands its agent.

An agent is an async callable `(input, env, ctx) -> result`: `input` is the
case's input, `env` the run's fresh environment (its tools and state), `ctx`
this run's `RunContext` (the model, the seed, the transcript). What it returns
is stored as the run's output; what it leaves in `env` is graded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from passhat.errors import PermanentModelError
from passhat.models.base import CallContext, Message, Model, ModelResponse, ToolSpec, Usage

if TYPE_CHECKING:
    from passhat.env import Environment

T = TypeVar("T")


class Agent(Protocol):
    """What passhat runs k times per case."""

    async def __call__(self, input: Any, env: Environment, ctx: RunContext) -> Any: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How transient model errors are retried within a run."""

    max_retries: int = 4
    """Retries of one call after its first try (--retries)."""
    base_delay: float = 0.5
    """Seconds before the first retry; doubled at each retry."""
    max_delay: float = 30.0
    """The longest wait between two tries (--retry-max-wait)."""


class _RetriesOfTurn(list[dict[str, Any]]):
    """The retries of one model call: each one appended is also added to the run's
    retries at once, with its turn."""

    def __init__(self, run: list[dict[str, Any]], turn: int) -> None:
        super().__init__()
        self.run = run
        self.turn = turn

    def append(self, retry: dict[str, Any]) -> None:
        super().append(retry)
        self.run.append({"turn": self.turn, **retry})


@dataclass
class RunContext:
    """Everything one run knows besides its input and environment.

    Deliberately not the case or the suite: those hold the goal state, and the
    agent under test must never see what it is graded against.
    """

    case_id: str
    """The case being run."""
    run_index: int
    """1-based index of this run."""
    seed: int
    """This run's seed, derived from the experiment seed, the case and the index."""
    model: Model | None
    """The experiment's model (None when the experiment has none)."""
    labels: tuple[str, ...] = ()
    """The suite's annotation labels."""
    max_turns: int = 10
    """Model turns the built-in loop may take."""
    params: dict[str, Any] = field(default_factory=dict)
    """The experiment's parameters (this run's own copy)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    transcript: list[Message] = field(default_factory=list)
    """Every message of the run's conversation; agents append as they go."""
    usage: Usage = field(default_factory=Usage)
    retries: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    responses: list[ModelResponse] = field(default_factory=list)
    """Every model answer of the run, in order (their usage goes into the transcript)."""
    stderr: str | None = None
    """A command agent's stderr, its last 64 KiB (None for in-process agents)."""
    crash: str | None = None
    """Where an in-process agent crashed: its traceback, set by the runner."""
    limit: str | None = None
    """Why the run stopped at one of its limits (the first call refused, or the built-in
    loop's last turn): the run is graded on the state it reached, marked `limit`."""
    given_up: bool = False
    """Set when the runner gives the run up (its deadline, Ctrl-C): from then on no model
    call starts, nor a retry of one under way (a command agent's proxy call still
    retrying during the run's cleanup made provider requests its record never saw)."""

    def model_source(self) -> str | None:
        """`replayed` (answers from a cassette), `live`, or None when no model was asked."""
        if not self.responses:
            return None
        return "replayed" if getattr(self.model, "replays", False) else "live"

    loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False, compare=False)
    """The event loop the run belongs to (for `run` from a synchronous agent)."""

    def run(self, awaitable: Awaitable[T]) -> T:
        """From a synchronous agent (a plain `def`, run in a worker thread): run
        `env.call(...)` or `ctx.generate(...)` on passhat's event loop and return
        its result, e.g. `outcome = ctx.run(env.call("get_ticket", {"key": k}))`."""
        if self.loop is None:
            raise RuntimeError("ctx.run is for synchronous agents started by passhat")

        async def wrapped() -> T:
            return await awaitable

        coroutine = wrapped()
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        except RuntimeError:  # the loop is closed: this run was given up at its deadline
            coroutine.close()
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise
        return future.result()

    def transcript_dicts(self) -> list[dict[str, Any]]:
        """The transcript as JSON-ready dicts; a model's answer carries its turn's usage."""
        usage = {id(r.message): r.usage for r in self.responses}
        out = []
        for message in self.transcript:
            d = message.to_dict()
            if id(message) in usage:
                u = usage[id(message)]
                d["usage"] = {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}
            out.append(d)
        return out

    async def generate(self, messages: list[Message], tools: list[ToolSpec]) -> ModelResponse:
        """Ask the model, retrying transient errors; usage and retries are recorded."""
        from passhat.models.retry import generate_with_retry

        if self.model is None:
            raise PermanentModelError(
                "the agent asked for a model, but the experiment has none; give --model "
                "provider:name or defaults.model in suite.yaml"
            )
        self._check_given_up()
        self._check_limits()
        call = CallContext(self.case_id, self.run_index, self.turns, self.seed)
        # each retry lands on the run as it happens: a run given up at its deadline
        # (a command agent's proxy call still retrying) keeps the retries it made
        made = _RetriesOfTurn(self.retries, call.turn)
        response, _ = await generate_with_retry(
            self.model,
            messages,
            tools,
            call,
            max_retries=self.retry.max_retries,
            base_delay=self.retry.base_delay,
            max_delay=self.retry.max_delay,
            sleep=self._pause,
            record=made,
        )
        self.turns += 1
        self.usage = self.usage + response.usage
        self.responses.append(response)
        return response

    async def _pause(self, seconds: float) -> None:
        """The wait before a retry; none is made once the run is given up."""
        self._check_given_up()
        await asyncio.sleep(seconds)
        self._check_given_up()

    def _check_given_up(self) -> None:
        if self.given_up:
            raise PermanentModelError(
                "the run was given up (its deadline, or Ctrl-C): no more model calls"
            )

    def _check_limits(self) -> None:
        """Refuse a call past --max-turns or --token-budget: it never reaches the model,
        whatever the agent does with the refusal (a second call is refused as well)."""
        from passhat.limits import RunLimitError, past_limit

        budget = self.params.get("token_budget")
        reason = past_limit(
            self.turns,
            self.usage.input_tokens + self.usage.output_tokens,
            self.max_turns,
            int(budget) if budget is not None else None,
        )
        if reason is not None:
            self.limit = self.limit or reason
            raise RunLimitError(reason)
