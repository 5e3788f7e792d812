"""What an experiment and a run leave behind: plain, frozen, JSON-ready records.

The runner makes them, the store keeps them, the reports read them. Nothing
here does I/O or computes a metric.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from passhat.plain import Status

COMMAND_AGENT = "command:"
"""Agent specs of command agents: this, then the canonical JSON of their config."""


def agent_label(spec: str) -> str:
    """An agent spec for people: a command agent as the command line it runs."""
    if not spec.startswith(COMMAND_AGENT):
        return spec
    try:
        command = json.loads(spec[len(COMMAND_AGENT) :])["command"]
        return "command: " + " ".join(shlex.quote(str(a)) for a in command)
    except (ValueError, KeyError, TypeError):
        return spec


@dataclass(frozen=True)
class ExperimentRecord:
    """One configuration run over a suite."""

    id: str
    """Short hex id, unique in the store."""
    name: str | None
    """Optional unique name given with --name."""
    created_at: str
    """ISO 8601 UTC time of creation."""
    suite_name: str
    """The suite's name."""
    suite_path: str
    """Where the suite was loaded from (resume loads it again from here)."""
    suite_hash: str
    """Content hash of the suite: runs of different suite contents never pool."""
    agent: str
    """Agent spec: a built-in name or `package.module:name`."""
    model: str
    """Model spec: `provider:name` (API keys are never part of it)."""
    model_config: dict[str, Any]
    """What the provider says about itself (base URL, parameters; never a key)."""
    params: dict[str, Any]
    """Generation and agent parameters (temperature, seed, max_turns, ...)."""
    prompt_version: str | None
    """First 12 hex digits of the SHA-256 of the prompt template, if the agent has one."""
    k_requested: int
    """Runs per case asked for (resume with a larger k raises it)."""
    seed: int
    """Experiment seed; each run's seed derives from it, the case and the index."""
    harness_version: str
    """passhat's version when the experiment was created."""
    fingerprint: str
    """Hash of suite hash, agent, model, parameters, prompt version, harness version."""
    case_ids: tuple[str, ...]
    """The planned cases, in suite order."""
    case_hashes: dict[str, str] = field(default_factory=dict)
    """Content hash of each planned case."""
    tools: tuple[str, ...] = ()
    """Names of the environment's tools, so a report can say which were never called."""
    agent_hash: str | None = None
    """SHA-256 of a user agent's source file (None for built-in agents)."""
    kind: str = "run"
    """Where its runs came from: `run` (passhat ran them), `imported` (another
    harness's log, e.g. Inspect or τ²-bench), `audited` (a result folder) or
    `regrade` (a stored experiment's final states scored again)."""
    source: dict[str, Any] | None = None
    """For a run not made here: what it came from (tool, path, SHA-256, task,
    model, tool version; for a regrade, the source experiment and the new goal
    and scorer hashes). None for experiments passhat ran."""
    environment_hash: str | None = None
    """SHA-256 of a user environment's source file (None for built-in environments)."""
    case_k: Mapping[str, int] = field(default_factory=dict)
    """Cases asked for fewer runs than `k_requested`, with the runs asked of each: an
    adaptive rule (`--until-decided`) stopped adding runs to them. Every other case is
    asked `k_requested`. Such a case is not short: its plan is what the rule asked."""

    adaptive: tuple[Mapping[str, Any], ...] = ()
    """Records of the adaptive rounds run on it (`passhat.adaptive.Adaptive.to_dict`),
    oldest first: the rule, each look, why it stopped and the runs it spent."""

    def k_of(self, case: str) -> int:
        """Runs asked of `case`."""
        return self.case_k.get(case, self.k_requested)

    @property
    def command_ref(self) -> str:
        """The experiment as one word of a command passhat tells its user to run (`passhat
        show REF CASE RUN`): its name, shell-quoted (a name may hold a space, a quote or
        `$(...)`); its id when it has none, or one read as an option or as `latest`."""
        name = self.name
        if not name or name.startswith("-") or name == "latest":
            return self.id
        return shlex.quote(name)

    @property
    def runs_requested(self) -> int:
        """Runs asked of all planned cases together."""
        return self.k_requested * (len(self.case_ids) - len(self.case_k)) + sum(
            self.case_k.values()
        )


@dataclass(frozen=True)
class CaseItem:
    """One item of a case's scorer (a goal item, or an extra some run produced) over some
    of its runs: analysis.ItemStability says which counted runs found it, and
    divergence.ItemEvidence which recorded runs wrote it."""

    case: str
    scorer: str
    """The scorer and path it belongs to, e.g. `exact_set ticket.annotations`."""
    item: str
    expected: bool
    """In the goal state (True) or an extra the runs added (False)."""
    runs: tuple[int, ...]
    """The runs it was looked for in (indices)."""


@dataclass(frozen=True)
class RunRecord:
    """One execution of one case: recorded whole, or not at all."""

    experiment_id: str
    case_id: str
    run_index: int
    """1-based."""
    case_hash: str
    status: Status
    """passed / failed (graded) or errored (no verdict)."""
    error_type: str | None = None
    """For errored runs: timeout, model_error, agent_error, scorer_error, ...; for a
    counted run, `limit` when --max-turns or --token-budget stopped it (passhat.limits)."""
    error_message: str | None = None
    output: Any = None
    """What the agent returned; the store keeps what is not JSON as its str()."""
    final_state: dict[str, Any] = field(default_factory=dict)
    """The environment's state after the run: what was graded."""
    score: list[dict[str, Any]] = field(default_factory=list)
    """Details of each scorer (verdict, missing and extra items...)."""
    transcript: list[dict[str, Any]] = field(default_factory=list)
    """Every message of the conversation, in order."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Every tool call: tool, arguments, result or error, time."""
    started_at: float = 0.0
    """Epoch seconds."""
    duration_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    seed: int = 0
    """The run's own seed."""
    retries: list[dict[str, Any]] = field(default_factory=list)
    """Transient model errors that were retried: attempt, error, wait."""
    model_source: str | None = None
    """Where the run's model answers came from: `live`, `replayed` (a cassette), or
    None when it asked no model. Replayed runs are not independent trials."""
    stderr: str | None = None
    """A command agent's stderr, its last 64 KiB (None for in-process agents)."""
    attempt: int = 1
    """1 for a run's first attempt; `resume --errored` re-runs an errored run as attempt
    2, 3... The last attempt is the counted one; the earlier ones stay in the store."""
    traceback: str | None = None
    """For a crashed agent: where it crashed (the agent's frames, at most
    `passhat.execution.TRACEBACK_LIMIT` characters; the middle is cut when longer)."""
    ran_on: str | None = None
    """Where the run ran: None for the process that stored it (the local executor), else
    the Dask worker's address with its passhat version and code hash."""

    @property
    def counted(self) -> bool:
        """Has a verdict, so it enters the metrics."""
        return self.status != "errored"

    @property
    def graded_items(self) -> list[dict[str, Any]]:
        """The per-item results of the score (see `graded_items`)."""
        return graded_items(self.score)

    @property
    def tool_counts(self) -> dict[str, tuple[int, int]]:
        """Per tool: (calls, calls that ended in an error), in first-call order."""
        return tool_counts(self.tool_calls)


ITEM_KEYS = ("scorer", "path", "passed", "expected", "missing", "extra")
"""What a report keeps of a set scorer's detail: enough for item stability."""


def graded_items(score: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The details that judge items one by one (`is_set_detail`), reduced to
    `ITEM_KEYS`: the store keeps them in a column of their own so a report never
    decodes a whole score, transcript or tool call."""
    return [
        {key: detail[key] for key in ITEM_KEYS if key in detail}
        for detail in score
        if is_set_detail(detail)
    ]


_HASHED = frozenset((str, int, float, bool, type(None)))


def is_set_detail(detail: Any) -> bool:
    """Whether a scorer's detail judges items one by one, as item stability reads it:
    `expected` and `missing` lists (each item shown as its text), and `extra` a list of
    text or numbers (readers count each distinct one), or none. A custom scorer's
    `"expected": 1` is a detail of its own (the store's summary column keeps any detail
    with both keys: readers take it through this)."""
    if type(detail) is not dict and not isinstance(detail, Mapping):
        return False
    extra = detail.get("extra")
    return (
        type(detail.get("expected")) is list
        and type(detail.get("missing")) is list
        # no set made of a run's empty extras (most runs')
        and (
            extra is None
            or (type(extra) is list and (not extra or set(map(type, extra)) <= _HASHED))
        )
    )


def tool_counts(tool_calls: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per tool: (calls, calls that ended in an error), in first-call order."""
    counts: dict[str, tuple[int, int]] = {}
    for call in tool_calls:
        calls, errors = counts.get(call["tool"], (0, 0))
        counts[call["tool"]] = (calls + 1, errors + (1 if call.get("error") else 0))
    return counts


class RunJson(NamedTuple):
    """A run as a page embeds it: its facts, and its JSON columns as the store keeps
    them (UTF-8 JSON text, never decoded). `Store.runs_json` reads it; the HTML report
    writes the columns into the page as they are, so 10,000 runs of detail cost no
    decoding and encoding of their transcripts."""

    case_id: str
    run_index: int
    """1-based."""
    status: Status
    duration_s: float
    input_tokens: int
    output_tokens: int
    seed: int
    output: bytes
    final_state: bytes
    score: bytes
    transcript: bytes
    tool_calls: bytes
    retries: bytes


class RunSummary(NamedTuple):
    """What a report reads of a run: status, per-item results and tool counts.

    No transcript, output, final state or tool arguments: `Store.summaries`
    reads only the small columns, so a report of 100,000 runs stays near the
    cost of scanning them. Runs with equal per-item results share one (read-only)
    value. A named tuple, not a frozen dataclass: as immutable, and a third of the
    cost to build (a frozen dataclass sets its 13 fields one by one, 0.16 s per
    100,000 runs)."""

    case_id: str
    run_index: int
    """1-based."""
    status: Status
    """passed / failed (graded) or errored (no verdict)."""
    error_type: str | None
    error_message: str | None
    duration_s: float
    input_tokens: int
    output_tokens: int
    model_source: str | None
    """live, replayed, or None (see `RunRecord.model_source`)."""
    attempt: int
    """1 for a first attempt; `resume --errored` counts up (see `RunRecord.attempt`)."""
    traceback: str | None
    """A crashed in-process agent's traceback (see `RunRecord.traceback`)."""
    graded_items: Sequence[dict[str, Any]]
    """`graded_items(score)` of the run (a list, or `store.LazyItems` that read as one)."""
    tool_counts: dict[str, tuple[int, int]]
    """`tool_counts(tool_calls)` of the run."""

    @property
    def counted(self) -> bool:
        """Has a verdict, so it enters the metrics."""
        return self.status != "errored"


ReportRun = RunRecord | RunSummary
"""A run as what reads runs takes it (the analysis, the limit and gate readers, the
reports): the whole record, or the summary `Store.summaries` reads."""
