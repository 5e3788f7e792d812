"""Agents: the protocol, the built-in ones, and loading a user's by import path."""

from __future__ import annotations

import importlib.util
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.agents.base import Agent, RetryPolicy, RunContext
from passhat.errors import ConfigError
from passhat.imports import load_module, module_source_hash
from passhat.plain import did_you_mean
from passhat.records import COMMAND_AGENT

__all__ = ["Agent", "LoadedAgent", "RetryPolicy", "RunContext", "resolve_agent"]

BUILTIN = ("clarifier",)


@dataclass(frozen=True)
class LoadedAgent:
    """An agent ready to run, with what the experiment records about it."""

    spec: str
    """How it was named: a built-in name, `package.module:name` or `file.py:name`."""
    agent: Agent
    """The async callable itself."""
    prompt_version: str | None
    """The prompt template's version, when the agent has one."""
    source_hash: str | None = None
    """SHA-256 of the user's agent source file: editing the agent changes the fingerprint."""


def is_command_spec(spec: str) -> bool:
    """A command agent's stored spec (`command:`, then its config's canonical JSON). Here,
    not in agents/command.py: an in-process agent's run never imports that module."""
    return spec.startswith(COMMAND_AGENT)


def resolve_agent(
    spec: str, *, prompt: str | Path | None = None, suite_dir: Path | None = None
) -> LoadedAgent:
    """A built-in agent by name, or a user's, checked now.

    A user's agent is `package.module:name` (importable from PYTHONPATH) or
    `file.py:name` (a file beside suite.yaml, or a path).
    """
    if spec == "clarifier":
        from passhat.agents.clarifier import Clarifier, read_template

        clarifier = Clarifier(read_template(prompt))
        return LoadedAgent(spec, clarifier, clarifier.prompt_version)
    if prompt is not None:
        raise ConfigError(f"--prompt is for the clarifier agent; agent {spec!r} has no template")
    if is_command_spec(spec):
        return load_command_agent(spec, suite_dir)
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(
            f"agent {spec!r} is neither built in ({', '.join(BUILTIN)}) nor an import path; "
            f"write package.module:name{did_you_mean(spec, list(BUILTIN))}"
        )
    module = load_module(module_name, f"agent {spec!r}", suite_dir)
    try:
        obj = getattr(module, attr)
    except AttributeError:
        public = [name for name in vars(module) if not name.startswith("_")]
        raise ConfigError(
            f"agent {spec!r}: {module_name!r} has no {attr!r}{did_you_mean(attr, public)}"
        ) from None
    check_agent(spec, obj)
    return LoadedAgent(spec, obj, getattr(obj, "prompt_version", None), module_source_hash(module))


def load_command_agent(spec: str, suite_dir: Path | None) -> LoadedAgent:
    """A command agent from its stored spec; needs the `agents` extra."""
    from passhat.agents.command import CommandAgent, from_spec

    try:
        # imported now, not in the first run: it would spend that run's timeout on imports
        # (the mcp SDK's second of CPU waits for the first request for a tool: lazy_mcp.py)
        import passhat.serve.app  # noqa: F401

        if importlib.util.find_spec("mcp") is None:
            raise ImportError("No module named 'mcp'")
    except ImportError as error:
        raise ConfigError(
            f"command agents need the agents extra: pip install 'passhat[agents]' ({error})"
        ) from None
    agent = CommandAgent(from_spec(spec), suite_dir)
    return LoadedAgent(spec, agent, None, agent.source_hash)


def check_agent(spec: str, obj: Any) -> None:
    """An agent is a callable taking (input, env, ctx): `async def`, or a plain `def`
    that passhat runs in a worker thread (so blocking code never stalls other runs)."""
    if not callable(obj):
        raise ConfigError(
            f"agent {spec!r} is not callable; write `async def` (or `def`) taking (input, env, ctx)"
        )
    try:
        inspect.signature(obj).bind(None, None, None)
    except TypeError:
        raise ConfigError(
            f"agent {spec!r} does not take three arguments (input, env, ctx)"
        ) from None
    except ValueError:
        return  # no signature to check (a builtin): trust it
