"""The replay model: plays back recorded assistant messages from a cassette.

A cassette is a JSON Lines file. Its first line describes it::

    {"cassette": 1, "model": "gpt-5.4-mini", "prompt_version": "cd590b9ba593", "note": "..."}

and every other line is one model answer, keyed by case, run index and turn::

    {"case": "ac-conflict-001", "run": 1, "turn": 0, "message": {...}, "usage": {...}}

A call with no recorded answer is a `PermanentModelError`, so the run ends as
errored: a replay never makes an answer up. The format is documented in
docs/cassettes.md, with a JSON Schema for one line (`cassette.schema.json`, beside
this module); `passhat check` validates a suite's cassettes against it
(`check_cassette`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passhat.errors import ConfigError, PermanentModelError
from passhat.models.base import CallContext, Message, ModelResponse, ToolSpec, Usage
from passhat.plain import did_you_mean

CASSETTE_VERSION = 1

PROBLEMS_LISTED = 20
"""Problems `check_cassette` lists before it says how many more it found."""

SCHEMA_FILE = "cassette.schema.json"

LINE_LIMIT = 16 * 1024 * 1024
"""The longest cassette line `check_cassette` reads (16 MiB): a longer one is a problem,
not a read of a whole device or a runaway file."""


def cassette_schema() -> dict[str, Any]:
    """The JSON Schema of one cassette line (Draft 2020-12), as shipped with passhat: the
    file beside this module, read through importlib.resources only where there is none
    (passhat imported from a zip): importing that module was 8 ms of every replay run."""
    beside = Path(__file__).with_name(SCHEMA_FILE)
    if beside.is_file():
        text = beside.read_text("utf-8")
    else:  # pragma: no cover - a zip import
        from importlib import resources

        text = resources.files("passhat.models").joinpath(SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@dataclass(frozen=True)
class CassetteCheck:
    """What `check_cassette` found in one cassette."""

    path: Path
    """The cassette checked."""
    missing: bool = False
    """No file at `path`: not a problem of the suite's (`--model` may name another
    model at run time), but `run` without one would stop."""
    answers: int = 0
    """Answer lines that fit the schema."""
    runs: dict[str, set[int]] = field(default_factory=dict)
    """For each case, the run indices with at least one answer."""
    problems: tuple[str, ...] = ()
    """One line per problem (path:line: what is wrong; what to write), at most
    PROBLEMS_LISTED of them, then a count of the rest."""


class CassetteError(ConfigError):
    """A cassette that does not fit the format; `problems` lists each, line and field."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(problems[0] if problems else "the cassette does not fit its format")
        self.problems = list(problems)


def check_cassette(
    path: Path, *, tools: Collection[str] | None = None, cases: Sequence[str] | None = None
) -> CassetteCheck:
    """Every line of a cassette against the schema, and each (case, run, turn) once: the
    one validator of `passhat check` and of a run's `replay:` model. Given the suite's
    `tools` and `cases`, an answer calling another tool, or answering a case the suite
    does not hold, is a problem too (with the closest id). A file with no line at all is
    refused; a first line that means to be a header must say `"cassette": 1`.

    Reads line by line: memory stays bounded by the longest line (LINE_LIMIT)."""
    schema = cassette_schema()
    problems: list[str] = []
    found = 0
    runs: dict[str, set[int]] = {}
    seen: set[tuple[str, int, int]] = set()
    answers = 0
    lines = 0
    unknown: dict[str, int] = {}  # a case the suite lacks: the line it first appears on

    def problem(text: str) -> None:
        nonlocal found
        found += 1
        if len(problems) < PROBLEMS_LISTED:
            problems.append(text)

    try:
        if not path.exists():
            return CassetteCheck(path=path, missing=True)
        if not path.is_file():
            raise IsADirectoryError(21, "not a regular file")
        with path.open("rb") as f:
            for number, raw in enumerate(_lines(f), start=1):
                if raw is None:
                    lines += 1  # a line all the same: the cassette is not empty
                    problem(
                        f"{path}:{number}: a line longer than {LINE_LIMIT:,} bytes; "
                        "one JSON object per line"
                    )
                    continue
                if not raw.strip():
                    continue
                lines += 1
                try:
                    entry = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError, RecursionError) as error:
                    problem(
                        f"{path}:{number}: not JSON ({type(error).__name__}); "
                        "each line is one JSON object"
                    )
                    continue
                if lines == 1 and _header_without_version(entry):
                    problem(
                        f'{path}:{number}: a header without "cassette": 1 (it has '
                        f'{", ".join(sorted(entry))}); write {{"cassette": 1, ...}} first'
                    )
                    continue
                plain = _plain_header(entry) or _plain_answer(entry)
                where = "" if plain else _described(schema, entry)
                if where:
                    problem(f"{path}:{number}: {where}")
                    continue
                if "cassette" in entry:
                    if number != 1:
                        problem(
                            f"{path}:{number}: a header line after the first line; "
                            'the header ({"cassette": 1, ...}) goes first, once'
                        )
                    continue
                key = (entry["case"], entry["run"], entry["turn"])
                if key in seen:
                    problem(
                        f"{path}:{number}: a second answer for case {key[0]!r}, run "
                        f"{key[1]}, turn {key[2]}; keep one line per (case, run, turn)"
                    )
                    continue
                seen.add(key)
                runs.setdefault(key[0], set()).add(key[1])
                answers += 1
                if cases is not None and key[0] not in cases and key[0] not in unknown:
                    unknown[key[0]] = number
                for text in _unknown_tools(entry["message"], tools):
                    problem(f"{path}:{number}: {text}")
        if not lines:
            problem(
                f"{path}: the cassette is empty; a cassette is a header line "
                '({"cassette": 1, ...}) and one line per recorded answer'
            )
    except OSError as error:
        problem(
            f"{path}: cannot read the cassette ({error.strerror or error}); "
            "give replay:PATH to an existing .jsonl file"
        )
    for case, number in unknown.items():
        suite_cases = list(cases or ())
        problem(
            f"{path}:{number}: case: {case!r} is not a case of the suite"
            f"{did_you_mean(case, suite_cases)}; a replay answers by case id"
        )
    if found > len(problems):
        problems.append(f"{path}: ... and {found - len(problems):,} more problems")
    return CassetteCheck(path=path, answers=answers, runs=runs, problems=tuple(problems))


_ANSWER_KEYS = frozenset({"case", "run", "turn", "message", "usage", "stop_reason"})
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
_CALL_KEYS = frozenset({"id", "name", "arguments"})


def _plain_answer(entry: Any) -> bool:
    """An answer the schema accepts, seen without it (the schema's check costs about a
    millisecond a line; a replay of 10,000 answers reads its cassette first). False
    means "ask the schema", which then names what is wrong."""
    if type(entry) is not dict or not entry.keys() <= _ANSWER_KEYS:
        return False
    case, run, turn, message = (entry.get(k) for k in ("case", "run", "turn", "message"))
    if not (type(case) is str and case and type(run) is int and run >= 1):
        return False
    if not (type(turn) is int and turn >= 0 and type(message) is dict):
        return False
    if not message.keys() <= _MESSAGE_KEYS or message.get("role") != "assistant":
        return False
    if not (message.get("content") is None or type(message["content"]) is str):
        return False
    calls = message.get("tool_calls", [])
    if type(calls) is not list or not all(_plain_call(call) for call in calls):
        return False
    usage = entry.get("usage", {})
    if type(usage) is not dict or not usage.keys() <= {"input_tokens", "output_tokens"}:
        return False
    if not all(type(n) is int and n >= 0 for n in usage.values()):
        return False
    return type(entry.get("stop_reason", "")) is str


def _plain_header(entry: Any) -> bool:
    """A header the schema accepts, seen without it (importing it alone takes 0.2 s)."""
    return (
        type(entry) is dict
        and type(entry.get("cassette")) is int
        and entry["cassette"] == CASSETTE_VERSION
        and all(
            type(entry.get(k)) in (str, type(None)) for k in ("model", "prompt_version", "note")
        )
    )


def _plain_call(call: Any) -> bool:
    return (
        type(call) is dict
        and call.keys() <= _CALL_KEYS
        and type(call.get("id")) is str
        and type(call.get("name")) is str
        and bool(call["name"])
        and type(call.get("arguments", {})) is dict
    )


def _header_without_version(entry: Any) -> bool:
    """A first line that describes a recording (model, note...) but says no version."""
    return (
        isinstance(entry, dict)
        and "cassette" not in entry
        and "case" not in entry
        and bool({"model", "prompt_version", "note"} & entry.keys())
    )


def _unknown_tools(message: Any, tools: Collection[str] | None) -> list[str]:
    """An answer's calls to tools the suite does not have (it would fail at replay)."""
    if tools is None or not isinstance(message, dict):
        return []
    out = []
    for n, call in enumerate(message.get("tool_calls") or []):
        name = call.get("name") if isinstance(call, dict) else None
        if isinstance(name, str) and name not in tools:
            out.append(
                f"message.tool_calls[{n}].name: calls tool {name!r}, which the suite does not "
                f"have{did_you_mean(name, list(tools))}; its tools are {', '.join(tools) or 'none'}"
            )
    return out


def _lines(f: Any) -> Iterable[bytes | None]:
    """The file's lines, None for one longer than LINE_LIMIT (skipped to its end)."""
    while True:
        line = f.readline(LINE_LIMIT + 1)
        if not line:
            return
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = f.readline(LINE_LIMIT + 1)
            yield None
            continue
        yield line


def _described(schema: dict[str, Any], entry: Any) -> str:
    """Why a line is not a header or an answer (empty when it is one), in the words of
    the branch it was meant to be: an object holding `cassette` is a header."""
    from passhat.plain import field_path
    from passhat.schema import schema_problems

    if not isinstance(entry, dict):
        return "expected a JSON object; each line is one object"
    branch = "header" if "cassette" in entry else "answer"
    part = {**schema["$defs"][branch], "$defs": schema["$defs"]}
    if branch == "answer":
        part.pop("not", None)
    messages = schema_problems(entry, part)
    return "; ".join(f"{field_path(loc)}: {text}" if loc else text for loc, text in messages[:3])


@dataclass(frozen=True)
class Cassette:
    """Recorded answers keyed by (case, run index, turn), and what recorded them."""

    meta: dict[str, Any]
    answers: dict[tuple[str, int, int], ModelResponse]

    @classmethod
    def load(cls, path: Path) -> Cassette:
        """The cassette, checked first by `check_cassette` (a `CassetteError` lists its
        problems, line and field, as `passhat check` does)."""
        # checked before it is read whole: a FIFO blocked for ever, and a device, a
        # sparse 2 GB file or text that is not UTF-8 ended in a traceback
        checked = check_cassette(path)
        if checked.problems:
            raise CassetteError(checked.problems)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:  # missing, or changed since checked
            reason = getattr(error, "strerror", None) or "not UTF-8 text"
            raise ConfigError(
                f"{path}: cannot read the replay cassette ({reason}); "
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
