"""The `judge` scorer: a model grades a run's final state against a rubric.

    scorers:
      - judge: |
          The goal names the ticket's outcome in one sentence a customer would
          understand, and says nothing the ticket does not.
        model: openai:gpt-4o-mini          # the judge's own model, not the agent's
        paths: [ticket.goal]               # what it reads; default: the whole state
        params: {temperature: 0}

The judge gets the rubric, the run's final state (or the parts `paths` names)
and the case's goal state as a reference; it must end its answer with
`VERDICT: PASS` or `VERDICT: FAIL`. Its verdict and reasoning, its model spec,
what the provider says about itself (a replay cassette's SHA-256...) and its
token usage go into the score details. It goes through the same providers as an
agent, so `replay:cassettes/judge.jsonl` replays a judge without a call: the
cassette's lines are keyed by case, run index and turn 0.

A judge that cannot give a verdict (the model fails after retries, or answers
without a VERDICT line) makes the run errored, never failed: the run has no
verdict, it is not a wrong answer. State-based scorers (exact_set, equals...)
are preferred wherever they can decide; a judge is for what only a reader can.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.errors import ModelError
from passhat.models.base import CallContext, Message, Model
from passhat.plain import MISSING, get_path

SYSTEM = """You grade the final state of an AI agent's run against a rubric.
You get the rubric, the agent's final state and a reference state a person
confirmed. Judge the final state only by the rubric; the reference shows what a
good outcome looks like. Explain your reasoning in a few sentences, then end your
answer with exactly one line, either
VERDICT: PASS
or
VERDICT: FAIL"""

_VERDICT = re.compile(r"^\W*VERDICT\W*:?\W*(PASS|FAIL)\b", re.IGNORECASE | re.MULTILINE)
MAX_RETRIES = 2
"""Transient failures of the judge's model retried before the run is errored."""


class JudgeError(Exception):
    """The judge gave no verdict; the scorer turns it into an errored run."""


def judge_prompt(rubric: str, final_state: Any, goal: Any) -> list[Message]:
    """The conversation the judge model answers."""
    shown = json.dumps(final_state, ensure_ascii=False, indent=2, sort_keys=True)
    reference = json.dumps(goal, ensure_ascii=False, indent=2, sort_keys=True)
    return [
        Message("system", SYSTEM),
        Message(
            "user",
            f"Rubric:\n{rubric.strip()}\n\nFinal state:\n{shown}\n\n"
            f"Reference (goal state):\n{reference}",
        ),
    ]


def parse_verdict(text: str) -> tuple[bool, str]:
    """(passed, reasoning) from the judge's answer: its last VERDICT line decides."""
    found = list(_VERDICT.finditer(text))
    if not found:
        head = " ".join(text.split())[:200] or "(an empty answer)"
        raise JudgeError(
            f"the judge's answer has no 'VERDICT: PASS' or 'VERDICT: FAIL' line: {head}"
        )
    last = found[-1]
    reasoning = (text[: last.start()] + text[last.end() :]).strip()
    return last.group(1).upper() == "PASS", reasoning


def selected(final_state: dict[str, Any], paths: tuple[str, ...]) -> Any:
    """What the judge reads: the parts of the final state at `paths`, or all of it."""
    if not paths:
        return final_state
    out: dict[str, Any] = {}
    for path in paths:
        value = get_path(final_state, path)
        out[path] = None if value is MISSING else value
    return out


@dataclass(frozen=True)
class Judge:
    """A model-graded rubric scorer (see the module docstring)."""

    rubric: str
    model_spec: str
    paths: tuple[str, ...]
    params: dict[str, Any]
    base_url: str | None
    suite_dir: Path
    name: str = "judge"

    def build(self) -> Model:
        """The judge's model (ConfigError when it cannot be used)."""
        from passhat.models import resolve_model

        return resolve_model(
            self.model_spec, base_url=self.base_url, params=self.params, suite_dir=self.suite_dir
        )

    async def grade(
        self, final_state: dict[str, Any], goal: dict[str, Any], call: CallContext
    ) -> dict[str, Any]:
        """One verdict with its reasoning; JudgeError when there is none."""
        from passhat.models import describe_model
        from passhat.models.retry import generate_with_retry

        model = self.build()  # one per call: an HTTP client is never shared between runs
        messages = judge_prompt(self.rubric, selected(final_state, self.paths), goal)
        try:
            response, retries = await generate_with_retry(
                model, messages, [], call, max_retries=MAX_RETRIES
            )
        except ModelError as error:
            raise JudgeError(f"the judge's model failed: {type(error).__name__}: {error}") from None
        finally:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
        passed, reasoning = parse_verdict(response.message.content)
        return {
            "scorer": self.name,
            "passed": passed,
            "verdict": "pass" if passed else "fail",
            "reasoning": reasoning,
            "model": self.model_spec,
            "model_config": describe_model(model),
            "usage": {
                "input_tokens": response.usage.input_tokens,
                "output_tokens": response.usage.output_tokens,
            },
            "retries": len(retries),
        }
