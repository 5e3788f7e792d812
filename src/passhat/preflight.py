"""What `passhat check` verifies beyond the suite's own files: that the agent the suite
names resolves (a user's function exists and is an async callable), and that every
replay cassette it names fits the cassette format (docs/cassettes.md).

The suite loader stops at the suite's files on purpose: loading an agent imports a
user's code, and a cassette can be large. `check` is where a user asks for all of it
before the first run, so it asks here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from passhat.errors import ConfigError
from passhat.models.replay import CassetteCheck, check_cassette
from passhat.suite import JudgeSpec, Suite


@dataclass(frozen=True)
class Preflight:
    """What `preflight` found."""

    cassettes: tuple[CassetteCheck, ...]
    """One check per cassette the suite names, in the order it names them."""
    problems: tuple[str, ...]
    """One line per problem (file, field, fix); empty when the suite can run."""


def preflight(suite: Suite, model: str | None = None) -> Preflight:
    """Resolve the suite's agent and check its cassettes (the model's: `model`, as
    `--model` gives it, else the suite's; and its judges'), their answers against the
    suite's cases and the model's against its tools; never raises for their faults."""
    from passhat.agents import resolve_agent

    problems: list[str] = []
    try:
        resolve_agent(suite.defaults.agent, suite_dir=suite.path)
    except ConfigError as error:
        problems.append(f"{suite.path / 'suite.yaml'}: defaults.agent: {error}")
    cases = [case.id for case in suite.cases]
    tools = suite_tools(suite)
    checks = [
        check_cassette(path, tools=tools if of_model else None, cases=cases)
        for path, of_model in suite_cassettes(suite, model)
    ]
    found = [line for check in checks for line in check.problems]
    if found:
        found[-1] += " (the cassette format: docs/cassettes.md)"
    return Preflight(tuple(checks), tuple(problems + found))


def sealing(suite: Suite, level: str | None = None) -> list[str]:
    """What a run of the suite's agent would see and reach, as lines for `passhat check`:
    the level in force (`level`, else $PASSHAT_ISOLATION, else namespace) and its view."""
    import os

    from passhat.agents import isolation, resolve_agent
    from passhat.agents.command import CommandAgent

    try:
        agent = resolve_agent(suite.defaults.agent, suite_dir=suite.path).agent
    except ConfigError:
        return []
    if not isinstance(agent, CommandAgent):
        return ["isolation: the agent runs in-process: trusted code, not sealed"]
    try:
        chosen = isolation.check_level(level or os.environ.get("PASSHAT_ISOLATION") or "namespace")
    except ValueError as error:
        raise ConfigError(str(error)) from None
    missing = isolation.unavailable(chosen)
    if missing is not None:
        return [f"isolation: {missing}"]
    if chosen == "process":
        return ["isolation: process: not sealed (a run sees and reaches what passhat's user does)"]
    from passhat.agents.sandbox import SYSTEM

    try:
        view = agent.view({})
    except Exception as error:  # a path the agent names does not exist
        return [f"isolation: namespace: {error}"]
    shown = view.describe()
    system = [p for p in shown["read"] if p in SYSTEM]
    return [
        "isolation: namespace (bubblewrap): each run in a sandbox of its own"
        + (", as a uid of its own" if isolation.is_root() else ""),
        f"  reads: the system ({' '.join(system)}); {_paths(view.read)}; its work folder",
        f"  writes: its work folder, a private /tmp and /dev/shm; {_paths(view.write)}",
        "  never: the suite's files, the store, HOME, other runs"
        + (f" (covered in view: {' '.join(view.hide)})" if view.hide else ""),
        "  reaches: its proxy and MCP endpoints"
        + (f"; through its proxy: {', '.join(agent.spec.hosts)}" if agent.spec.hosts else ""),
        f"  holds at most: {limits()}",
    ]


def limits() -> str:
    """A sandboxed run's limits, as `passhat check` and the docs say them."""
    from passhat.agents.sandbox import PROCESSES, RTPRIO, SHM_BYTES, TMP_BYTES, WORK_BYTES
    from passhat.serve import endpoints as e

    return (
        f"{PROCESSES} processes and threads, a work folder of {WORK_BYTES >> 20} MiB, /tmp "
        f"{TMP_BYTES >> 20} MiB, /dev/shm {SHM_BYTES >> 20} MiB, {e.CONNECTIONS} connections "
        f"to its endpoints at once ({e.REQUESTS} requests read at once), {e.TOOL_CALLS:,} "
        f"tool calls ({e.ARGUMENT_BYTES >> 20} MiB of names and arguments, "
        f"{e.RESULT_BYTES >> 20} MiB of answers), {e.MESSAGE_BYTES >> 20} MiB of new "
        f"messages in its model requests and {e.READ_BYTES >> 30} GiB of requests in all "
        f"({e.MESSAGES:,} messages and {e.VALUES:,} JSON values in one), {e.REFUSED} "
        f"model requests refused for their size spend the run, real-time priority "
        f"{RTPRIO} (RLIMIT_RTPRIO), no Linux AIO (a pool the whole machine shares); the "
        f"OOM killer takes it first"
    )


def _paths(paths: tuple[str, ...]) -> str:
    return " ".join(paths) if paths else "nothing more"


def suite_cassettes(suite: Suite, model: str | None = None) -> list[tuple[Path, bool]]:
    """The replay cassettes a run would read, each once: the model's (`model`, else the
    suite's), then its judges'; each with whether it is the model's."""
    from passhat.models import cassette_path

    specs = [(model if model is not None else suite.defaults.model or "", True)]
    specs += [(s.model, False) for s in suite.defaults.scorers if isinstance(s, JudgeSpec)]
    paths: dict[Path, bool] = {}
    for spec, of_model in specs:
        if spec.startswith("replay:") and spec.partition(":")[2]:
            path = cassette_path(spec.partition(":")[2], suite.path)
            paths[path] = paths.get(path, False) or of_model
    return list(paths.items())


def suite_tools(suite: Suite) -> tuple[str, ...] | None:
    """The names of the tools a run of the suite's first case gets (None when its
    environment cannot be made here: a user's setup() that fails fails its runs too)."""
    from passhat.env import make_environment

    if not suite.cases:
        return None
    try:
        env = make_environment(suite, suite.cases[0])
        tools = tuple(t.name for t in env.tools)
        env.close()
    except (Exception, SystemExit):
        return None
    return tools
