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


def preflight(suite: Suite) -> Preflight:
    """Resolve the suite's agent and check its cassettes; never raises for their faults."""
    from passhat.agents import resolve_agent

    problems: list[str] = []
    try:
        resolve_agent(suite.defaults.agent, suite_dir=suite.path)
    except ConfigError as error:
        problems.append(f"{suite.path / 'suite.yaml'}: defaults.agent: {error}")
    cassettes = tuple(check_cassette(path) for path in suite_cassettes(suite))
    found = [line for check in cassettes for line in check.problems]
    if found:
        found[-1] += " (the cassette format: docs/cassettes.md)"
    return Preflight(cassettes, tuple(problems + found))


def suite_cassettes(suite: Suite) -> list[Path]:
    """The replay cassettes a suite names: its model's and its judges', each once."""
    from passhat.models import cassette_path

    specs = [suite.defaults.model or ""]
    specs += [spec.model for spec in suite.defaults.scorers if isinstance(spec, JudgeSpec)]
    paths = [
        cassette_path(spec.partition(":")[2], suite.path)
        for spec in specs
        if spec.startswith("replay:") and spec.partition(":")[2]
    ]
    return list(dict.fromkeys(paths))
