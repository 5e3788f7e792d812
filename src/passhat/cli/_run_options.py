"""The options of `passhat run` and `passhat resume`, each declared once: an
`Annotated` alias per option (typer reads the option from the alias, so one alias
serves every command that names it), the help panels they are shown in, and
`Shared`, the options both commands take, which `cli._bundle.with_bundles` puts in
each command's signature.

`report`, `show` and `list` import none of this (cli/read.py): it is the runner's
side of the command line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from passhat.cli import adaptive as adaptive_k
from passhat.cli._events import printer
from passhat.cli._help import in_panel, panel_option
from passhat.cli._options import (
    JunitOption,
    LangOption,
    RequireOption,
    StrictOption,
    SummaryOption,
    report_lang,
)
from passhat.cli._store import DbOption
from passhat.errors import InputError

# The panels `run -h` and `resume -h` group their options in (typer's rich_help_panel;
# cli/_help.py prints them), in this order; the adaptive options bring their own.
WHAT = "What to run"
MODEL = "Model"
LIMITS = "Limits and workers"
STORE = "Store"
OUTPUT = "Output and CI"

SUMMARY_ABOVE = 10_000
"""Past this many requested runs, `run` and `resume` end with the figures and the
accounting only (computed from the streamed statuses, in flat memory); `passhat
report` gives item stability and tool use."""


# -- what to run (run's own, but -k, which resume declares with its own help)

SuiteArg = Annotated[
    Path, typer.Argument(metavar="SUITE", help="Suite folder (suite.yaml, cases/).")
]
AgentOption = Annotated[
    str | None,
    panel_option(
        WHAT,
        metavar="AGENT",
        help="The agent: built-in 'clarifier', a file beside suite.yaml (or here) as "
        "file.py:name, or package.module:name. Default: the suite's.",
    ),
]
AgentCmdOption = Annotated[
    str | None,
    panel_option(
        WHAT,
        "--agent-cmd",
        metavar="COMMAND",
        help='An agent in any language, one process per run, e.g. "node agent.js": '
        "input on stdin, tools over MCP, model through passhat's proxy.",
    ),
]
CasesOption = Annotated[
    list[str] | None,
    panel_option(WHAT, "--case", metavar="CASE", help="Run only this case (repeatable)."),
]
SeedOption = Annotated[
    int | None,
    panel_option(WHAT, metavar="N", help="Experiment seed (each run's seed derives from it)."),
]
PromptOption = Annotated[
    Path | None, panel_option(WHAT, metavar="FILE", help="Prompt template file for the clarifier.")
]


def k_option(help: str) -> Any:
    """-k: runs per case (`run`), or the raised k (`resume`)."""
    return panel_option(WHAT, "-k", "--k", metavar="K", help=help)


# -- the model

ModelOption = Annotated[
    str | None,
    panel_option(
        MODEL,
        metavar="PROVIDER:NAME",
        help="replay:CASSETTE.jsonl, openai:MODEL or anthropic:MODEL. Default: the suite's.",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    panel_option(MODEL, metavar="URL", help="Model endpoint, e.g. http://127.0.0.1:8000/v1."),
]
TemperatureOption = Annotated[
    float | None, panel_option(MODEL, metavar="T", help="Sampling temperature.")
]
MaxTokensOption = Annotated[
    int | None, panel_option(MODEL, metavar="N", help="Output token limit per model call.")
]
ModelSeedOption = Annotated[
    int | None, panel_option(MODEL, metavar="N", help="Seed passed to the model provider.")
]
RetriesOption = Annotated[
    int | None,
    panel_option(
        MODEL,
        metavar="N",
        help="Retries of transient model errors per call. Default: 4 (resume: the experiment's).",
    ),
]
RetryMaxWaitOption = Annotated[
    float | None,
    panel_option(
        MODEL,
        "--retry-max-wait",
        metavar="SECONDS",
        help="Longest wait between two tries of a call (doubling from 0.5 s). Default: 30.",
    ),
]
CallTimeoutOption = Annotated[
    float | None,
    panel_option(
        MODEL,
        "--call-timeout",
        metavar="SECONDS",
        help="Seconds one model call may take before it is retried. Default: 120. With a "
        "server that answers one request at a time, lower --concurrency rather than this.",
    ),
]

# -- limits and workers

TimeoutOption = Annotated[
    float,
    panel_option(LIMITS, metavar="SECONDS", help="Time one run may take before it is errored."),
]
MaxTurnsOption = Annotated[
    int | None,
    panel_option(
        LIMITS,
        metavar="N",
        help="Model calls a run may make, for every agent; past it nothing more reaches "
        "the provider and the run ends, graded on the state it reached (marked limit). "
        "Default: the suite's.",
    ),
]
TokenBudgetOption = Annotated[
    int | None,
    panel_option(
        LIMITS,
        "--token-budget",
        metavar="N",
        help="Model tokens (input + output) a run may spend; past it nothing more reaches "
        "the provider and the run ends, graded on the state it reached (marked limit). "
        "Default: no budget.",
    ),
]
ConcurrencyOption = Annotated[
    int, panel_option(LIMITS, metavar="N", help="Runs in flight at once.")
]
ExecutorOption = Annotated[
    str,
    panel_option(
        LIMITS,
        "--executor",
        metavar="local|dask|MODULE:NAME",
        help="What runs the runs: this process (local), Dask workers (dask; pip install "
        "'passhat[dask]'), or your own executor.",
    ),
]
SchedulerOption = Annotated[
    str | None,
    panel_option(
        LIMITS,
        "--scheduler",
        metavar="ADDRESS",
        help="A running `dask scheduler` (tcp://HOST:PORT) for --executor dask. Default: a "
        "local cluster "
        "of worker processes on 127.0.0.1.",
        show_default=False,
    ),
]
IsolationOption = Annotated[
    str | None,
    panel_option(
        LIMITS,
        "--isolation",
        metavar="LEVEL",
        help="How sealed a command agent's run is: namespace or process "
        "(docs/command-agents.md). Default: namespace (a bubblewrap sandbox per run: its own "
        "files, network and processes; a uid of its own under root), or $PASSHAT_ISOLATION.",
    ),
]


def _sandbox_option(flag: str, metavar: str, what: str) -> Any:
    """--agent-read/--agent-write/--agent-host: repeatable, recorded with the experiment."""
    help = f"{what} (again for more). Recorded with the experiment (docs/command-agents.md)."
    return panel_option(LIMITS, flag, metavar=metavar, help=help)


AgentReadOption = Annotated[
    list[str] | None,
    _sandbox_option("--agent-read", "PATH", "A path a command agent's sandboxed run may read"),
]
AgentWriteOption = Annotated[
    list[str] | None,
    _sandbox_option("--agent-write", "PATH", "A folder a command agent's sandboxed run may write"),
]
AgentHostOption = Annotated[
    list[str] | None,
    _sandbox_option(
        "--agent-host", "HOST[:PORT]", "A host a command agent's sandboxed run may reach"
    ),
]
AgentWriteLimitOption = Annotated[
    str | None,
    panel_option(
        LIMITS,
        "--agent-write-limit",
        metavar="SIZE",
        help="What a command agent's run may write to its write: folders (512MiB, 2GiB): "
        "past it the run is stopped, counted and marked limit; no file it writes grows past "
        "it. Recorded with the experiment (docs/command-agents.md). Default: no bound.",
    ),
]

# -- the store, output and CI

NameOption = Annotated[
    str | None, panel_option(STORE, metavar="NAME", help="A unique name for the experiment.")
]
QuietOption = Annotated[bool, panel_option(OUTPUT, "--quiet", "-q", help="No progress bar.")]
NoReportOption = Annotated[
    bool,
    panel_option(
        OUTPUT,
        "--no-report",
        help="Print no report at the end (one line; `passhat report` gives it). Above "
        f"{SUMMARY_ABOVE:,} runs the end report shows the figures and accounting only.",
    ),
]


@dataclass(frozen=True)
class Shared:
    """The options `run` and `resume` both take, declared once: `with_bundles` puts them
    in each command's signature where its `shared` parameter stands (typer reads the
    signature), and hands them to the command as this one value."""

    retry_max_wait: RetryMaxWaitOption = None
    call_timeout: CallTimeoutOption = None
    concurrency: ConcurrencyOption = 8
    executor: ExecutorOption = "local"
    scheduler: SchedulerOption = None
    until_width: adaptive_k.UntilWidth = None
    until_decided: adaptive_k.UntilDecided = False
    baseline: adaptive_k.Baseline = None
    max_k: adaptive_k.MaxK = None
    k_step: adaptive_k.KStep = None
    adaptive_json: adaptive_k.AdaptiveJson = None
    spending: adaptive_k.SpendingOption = "bonferroni"
    all_cases: adaptive_k.AllCases = False
    no_rerun_baseline: adaptive_k.NoRerunBaseline = False
    db: Annotated[Path | None, in_panel(DbOption, STORE)] = None
    strict: Annotated[bool, in_panel(StrictOption, OUTPUT)] = False
    quiet: QuietOption = False
    no_report: NoReportOption = False
    lang: Annotated[str | None, in_panel(LangOption, OUTPUT)] = None
    junit_xml: Annotated[Path | None, in_panel(JunitOption, OUTPUT)] = None
    summary: Annotated[Path | None, in_panel(SummaryOption, OUTPUT)] = None
    require: Annotated[list[str] | None, in_panel(RequireOption, OUTPUT)] = None

    @property
    def language(self) -> str:
        """The language the events and the end report are printed in (--lang, checked;
        else the locale's)."""
        return report_lang(self.lang)

    def _rounds_given(self) -> tuple[Any, ...]:
        """The adaptive options, as `passhat.rounds.rounds` takes them."""
        return (
            self.until_width,
            self.until_decided,
            self.baseline,
            self.max_k,
            self.k_step,
            self.adaptive_json,
            self.spending,
            self.all_cases,
            not self.no_rerun_baseline,
        )

    def call_options(self, lang: str) -> dict[str, Any]:
        """What `evaluate` and `resume` take of these: store, workers, call limits, the
        adaptive rounds, and the events printed in `lang`."""
        given = self._rounds_given()
        adaptive = None
        if given != _NO_ROUNDS:  # the rules' modules (and statistics) only when asked for
            from passhat.rounds import rounds

            adaptive = rounds(*given)
        return {
            "db": self.db,
            "concurrency": self.concurrency,
            "executor": self.executor,
            "scheduler": self.scheduler,
            "retry_max_wait": self.retry_max_wait,
            "call_timeout": self.call_timeout,
            "adaptive": adaptive,
            "events": printer(lang, self.quiet, not self.no_report),
            "require": self.require,
        }


_NO_ROUNDS = Shared()._rounds_given()
"""The adaptive options as given when none is: no rounds (their defaults, read off `Shared`)."""


@dataclass(frozen=True)
class What:
    """What `run` runs (its "What to run" options): the agent, k, the cases, the seed
    and the clarifier's prompt."""

    agent: AgentOption = None
    agent_cmd: AgentCmdOption = None
    k: Annotated[int | None, k_option("Runs per case. Default: the suite's.")] = None
    case: CasesOption = None
    seed: SeedOption = None
    prompt: PromptOption = None

    def evaluate_options(self) -> dict[str, Any]:
        return {
            "agent": agent_spec(self.agent, self.agent_cmd),
            "k": self.k,
            "cases": self.case or [],
            "seed": self.seed,
            "prompt": self.prompt,
        }


def agent_spec(agent: str | None, agent_cmd: str | None) -> str | None:
    """--agent or --agent-cmd (a command agent's spec: relative paths read from here)."""
    if agent_cmd is None:
        return agent
    if agent is not None:
        raise InputError("give --agent or --agent-cmd, not both")
    from passhat.agents.command import from_command_line

    return from_command_line(agent_cmd, Path.cwd()).spec()


@dataclass(frozen=True)
class ModelSettings:
    """The experiment's model and its sampling, fixed when `run` creates it (`resume`
    takes them from the store); `evaluate` takes them by these names."""

    model: ModelOption = None
    base_url: BaseUrlOption = None
    temperature: TemperatureOption = None
    max_tokens: MaxTokensOption = None
    model_seed: ModelSeedOption = None


@dataclass(frozen=True)
class RunLimits:
    """What one run of `run` may take: its time, model calls and tokens, and for a
    command agent how sealed it is and what it may read, write and reach."""

    timeout: TimeoutOption = 300.0
    max_turns: MaxTurnsOption = None
    isolation: IsolationOption = None
    agent_read: AgentReadOption = None
    agent_write: AgentWriteOption = None
    agent_host: AgentHostOption = None
    agent_write_limit: AgentWriteLimitOption = None
    token_budget: TokenBudgetOption = None

    def evaluate_options(self) -> dict[str, Any]:
        return {
            "timeout": self.timeout,
            "max_turns": self.max_turns,
            "isolation": self.isolation,
            "sandbox": self.sandbox(),
            "token_budget": self.token_budget,
        }

    def sandbox(self) -> dict[str, Any] | None:
        """--agent-read/--agent-write/--agent-host/--agent-write-limit as
        `evaluate(sandbox=...)` takes them."""
        given = {
            "read": self.agent_read or [],
            "write": self.agent_write or [],
            "hosts": self.agent_host or [],
            "write_limit": self.agent_write_limit,
        }
        # a limit given empty is kept, to be refused: dropped, the run had none at all
        return {k: v for k, v in given.items() if v or (k == "write_limit" and v == "")} or None
