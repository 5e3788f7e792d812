"""The replay model: plays back recorded assistant messages from a cassette.

A cassette is a JSON Lines file. Its first line describes it::

    {"cassette": 1, "model": "gpt-5.4-mini", "prompt_version": "cd590b9ba593", "note": "..."}

and every other line is one model answer, keyed by case, run index and turn::

    {"case": "ac-conflict-001", "run": 1, "turn": 0, "message": {...}, "usage": {...}}

A call with no recorded answer is a `PermanentModelError`, so the run ends as
errored: a replay never makes an answer up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.errors import ConfigError, PermanentModelError
from passhat.models.base import CallContext, Message, ModelResponse, ToolSpec, Usage

CASSETTE_VERSION = 1


@dataclass(frozen=True)
class Cassette:
    """Recorded answers keyed by (case, run index, turn), and what recorded them."""

    meta: dict[str, Any]
    answers: dict[tuple[str, int, int], ModelResponse]

    @classmethod
    def load(cls, path: Path) -> Cassette:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise ConfigError(
                f"{path}: cannot read the replay cassette ({error.strerror}); "
                "give replay:PATH to an existing .jsonl cassette"
            ) from None
        meta: dict[str, Any] = {}
        answers: dict[tuple[str, int, int], ModelResponse] = {}
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if "cassette" in entry:
                    meta = entry
                    continue
                key = (str(entry["case"]), int(entry["run"]), int(entry["turn"]))
                if key in answers:
                    raise ConfigError(
                        f"{path}:{number}: a second answer for case {key[0]!r}, run {key[1]}, "
                        f"turn {key[2]}; keep one line per (case, run, turn)"
                    )
                message = entry["message"]
                if message.get("role") != "assistant" or not isinstance(
                    message.get("content") or "", str
                ):
                    raise ValueError("message must be an assistant message with text content")
                usage = entry.get("usage") or {}
                answers[key] = ModelResponse(
                    message=Message.from_dict(entry["message"]),
                    usage=Usage(
                        int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
                    ),
                    stop_reason=str(entry.get("stop_reason", "stop")),
                )
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
                raise ConfigError(
                    f"{path}:{number}: not a cassette entry ({type(error).__name__}: {error}); "
                    "each line is a JSON object with case, run, turn and message"
                ) from None
        return cls(meta=meta, answers=answers)

    def dump(self, path: Path) -> None:
        """Write the cassette: its description first, then answers by case, run and turn."""
        with path.open("w", encoding="utf-8") as f:
            f.write(
                json.dumps({"cassette": CASSETTE_VERSION, **self.meta}, ensure_ascii=False) + "\n"
            )
            for (case, run, turn), answer in sorted(self.answers.items()):
                entry = {
                    "case": case,
                    "run": run,
                    "turn": turn,
                    "message": answer.message.to_dict(),
                    "usage": {
                        "input_tokens": answer.usage.input_tokens,
                        "output_tokens": answer.usage.output_tokens,
                    },
                    "stop_reason": answer.stop_reason,
                }
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def cassette_from_runs(
    meta: dict[str, Any], runs: Iterable[tuple[str, int, list[dict[str, Any]]]]
) -> Cassette:
    """A cassette of every model answer in (case, run index, transcript) triples.

    The n-th assistant message of a run's transcript is its answer at turn n, so
    replaying it drives the same agent through the same conversation.
    """
    answers: dict[tuple[str, int, int], ModelResponse] = {}
    for case, run, transcript in runs:
        turn = 0
        for entry in transcript:
            if entry.get("role") != "assistant":
                continue
            usage = entry.get("usage") or {}
            message = Message.from_dict(entry)
            answers[(case, run, turn)] = ModelResponse(
                message=message,
                usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
                stop_reason="tool_calls" if message.tool_calls else "stop",
            )
            turn += 1
    return Cassette(meta=meta, answers=answers)


class ReplayModel:
    """A `Model` that answers from a cassette."""

    replays = True
    """Its answers are re-plays of one recording, not new trials of a model."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cassette = Cassette.load(path)
        self.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()

    @property
    def name(self) -> str:
        return f"replay:{self.path.name}"

    def describe(self) -> dict[str, Any]:
        meta = {k: v for k, v in self.cassette.meta.items() if k != "cassette"}
        # the content hash, not the name: a changed cassette is another model
        return {
            "provider": "replay",
            "cassette": self.path.name,
            "sha256": self.sha256,
            "recorded": meta,
        }

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], ctx: CallContext
    ) -> ModelResponse:
        try:
            return self.cassette.answers[(ctx.case_id, ctx.run_index, ctx.turn)]
        except KeyError:
            raise PermanentModelError(
                f"the cassette {self.path.name} has no answer for case {ctx.case_id!r}, "
                f"run {ctx.run_index}, turn {ctx.turn}"
            ) from None
