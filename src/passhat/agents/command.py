"""Command agents: an agent in any language, one OS process per run.

    agent: {command: [node, dist/agent.js], cwd: ., env: {FOO: bar}, pass_env: [SERP_KEY]}

or `--agent-cmd "node dist/agent.js"`. For each run passhat

- makes a fresh temporary folder, the process's working directory (and TMPDIR),
  removed when the run ends: nothing of a run survives into the next;
- serves the run's tools over MCP and its model through an OpenAI-compatible
  proxy on one loopback port with a per-run token (passhat/serve);
- starts the command in its own process group, with the case input as JSON on
  stdin and in the file named by PASSHAT_INPUT, and a small environment: PATH,
  HOME, locale, the PASSHAT_* variables, `env` and the `pass_env` names; never
  passhat's own provider keys;
- takes what the process prints on stdout as the run's output: one JSON value
  (`output: json`, the default; nothing at all is null) or text (`output: text`);
- keeps the tail of stderr (at most 64 KiB) on the run.

The run is errored, with a reason, when the process exits with a non-zero code or a
signal (the stderr tail quoted), prints more than 16 MiB on stdout or what is not JSON
(json mode), or outlives the run's timeout (its whole process group killed). A watchdog
kills the groups of live runs if passhat itself dies (even by SIGKILL).

Relative paths in `command` naming files under `cwd` (default: the suite's folder; for
--agent-cmd, the folder it was given in) are made absolute, since the process runs in its
temporary folder; those files' bytes are part of the experiment's fingerprint.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from passhat import _orphans as orphans
from passhat.agents import netns, own_limits, writes
from passhat.agents.archives import TooMuchToLook, check_covers, whole_look
from passhat.agents.folders import (
    closed_to_others,
    make_folder,
    remove_tree,
    sandbox_folder,
)
from passhat.agents.installed import installations
from passhat.agents.isolation import (
    DEFAULT,
    Level,
    check_level,
    launcher,
    run_uid,
    seal_this_process,
    unavailable,
)
from passhat.agents.lookout import Looks, in_time
from passhat.agents.relay import relay_argv
from passhat.agents.sandbox import (
    View,
    bwrap_argv,
    covered,
    is_script,
    outermost,
    process_cap,
    program_paths,
    protected,
    real,
    seal_keyring,
    symlinks,
    under,
)
from passhat.agents.streams import OUTPUT_DEPTH as OUTPUT_DEPTH  # its old home: re-exported
from passhat.agents.streams import (
    AgentProcessError,
    Tail,
    bounded_output,
    close_pipe,
    cut_secrets,
    drain,
    drain_for,
    exit_reason,
    exited,
    feed,
    kill_group,
    kill_sandbox,
    parse_output,
    passhats_failure,
    passhats_own,
    read_capped,
    spawn,
    with_tail,
)
from passhat.errors import ConfigError
from passhat.records import COMMAND_AGENT
from passhat.serve.endpoints import EGRESS_PORT, proxy_environ

if TYPE_CHECKING:
    from passhat.agents.base import RunContext
    from passhat.agents.watchdog import Watchdog
    from passhat.env import Environment
    from passhat.serve.endpoints import Listen, RunEndpoints

PREFIX = COMMAND_AGENT
"""Agent specs of command agents start with this, then the canonical JSON of the spec."""
STDOUT_LIMIT = 16 * 1024 * 1024
"""Bytes of stdout kept: past this the process is killed and the run errored."""
STDERR_TAIL = 64 * 1024
"""Bytes of stderr kept on the run (its end)."""
PIPE_GRACE_S = 5.0
"""Seconds to read a killed group's pipes to their end (a setsid child may hold them open)."""
EXIT_GRACE_S = 0.5
"""Seconds the pipes are read after the agent exited: what a child that outlives it
(isolation process) still holds open is not waited for longer."""
INHERITED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "SYSTEMROOT")
"""Variables of passhat's environment every agent process gets (and LC_*)."""
_SCARCE = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)
"""Errors starting the agent that say passhat lacked descriptors or memory."""
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


@dataclass(frozen=True)
class CommandSpec:
    """How to start a command agent, as the experiment records it."""

    command: tuple[str, ...]
    """Program and arguments, as written (no shell)."""
    cwd: str = "."
    """Folder relative paths in `command` are read from (relative: to the suite folder)."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables, as written (recorded: never put a secret here)."""
    pass_env: tuple[str, ...] = ()
    """Names of passhat's environment variables handed through (only the names are recorded)."""
    output: Literal["json", "text"] = "json"
    """How stdout is read: one JSON value, or text."""
    read: tuple[str, ...] = ()
    """Extra paths the run's sandbox shows read-only (relative: to `cwd`)."""
    write: tuple[str, ...] = ()
    """Extra folders the run's sandbox shows writable (relative: to `cwd`)."""
    hosts: tuple[str, ...] = ()
    """Hosts (`name` or `name:port`) a sandboxed run may reach, through its proxy."""

    def spec(self) -> str:
        """The agent spec string stored on the experiment (resume rebuilds from it)."""
        data: dict[str, Any] = {"command": list(self.command), "cwd": self.cwd}
        if self.env:
            data["env"] = dict(sorted(self.env.items()))
        if self.pass_env:
            data["pass_env"] = list(self.pass_env)
        if self.output != "json":
            data["output"] = self.output
        for name in ("read", "write", "hosts"):
            if getattr(self, name):
                data[name] = list(getattr(self, name))
        return PREFIX + json.dumps(data, ensure_ascii=False, sort_keys=True)


def parse_config(value: Any, where: str) -> CommandSpec:
    """suite.yaml's `agent: {command: [...], ...}` (or a stored spec's JSON), checked."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: write agent: {{command: [program, args...]}}")
    unknown = sorted(set(value) - {*KEYS})
    if unknown:
        raise ConfigError(
            f"{where}.{unknown[0]}: unknown key; a command agent takes {', '.join(KEYS[:-1])} "
            f"and {KEYS[-1]}"
        )
    command = value.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) and a for a in command)
    ):
        raise ConfigError(
            f"{where}.command: give the program and its arguments as a list of strings, "
            "e.g. command: [node, dist/agent.js]"
        )
    cwd = value.get("cwd", ".")
    if not isinstance(cwd, str) or not cwd:
        raise ConfigError(f"{where}.cwd: give a folder, e.g. cwd: .")
    env = value.get("env") or {}
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float | bool) for k, v in env.items()
    ):
        raise ConfigError(f"{where}.env: give NAME: value pairs, e.g. env: {{LOG_LEVEL: info}}")
    for name in env:
        if _SECRET.search(name):
            raise ConfigError(
                f"{where}.env.{name}: looks like a secret, and env is recorded with the "
                f"experiment; list it under pass_env: [{name}] to hand it through from "
                "passhat's environment unrecorded"
            )
    pass_env = value.get("pass_env") or []
    if not isinstance(pass_env, list) or not all(isinstance(n, str) and n for n in pass_env):
        raise ConfigError(f"{where}.pass_env: give a list of variable names, e.g. [SERP_API_KEY]")
    output = value.get("output", "json")
    if output not in ("json", "text"):
        raise ConfigError(f"{where}.output: is {output!r}; use json or text")
    extra = {name: _paths(value.get(name), f"{where}.{name}") for name in ("read", "write")}
    extra["hosts"] = check_hosts(value.get("hosts"), f"{where}.hosts")
    return CommandSpec(
        command=tuple(command),
        cwd=cwd,
        env={str(k): _env_value(v) for k, v in env.items()},
        pass_env=tuple(pass_env),
        output=output,
        **extra,
    )


KEYS = ("command", "cwd", "env", "pass_env", "output", "read", "write", "hosts")
"""What a command agent's config takes."""


def check_hosts(value: Any, where: str) -> tuple[str, ...]:
    """A list of `host` / `host:port` entries, checked."""
    from passhat.serve.egress import parse_hosts

    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(h, str) and h for h in value):
        raise ConfigError(f"{where}: give a list of hosts, e.g. hosts: [api.example.com:443]")
    try:
        parse_hosts(value)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None
    return tuple(value)


def _paths(value: Any, where: str) -> tuple[str, ...]:
    """A list of paths for the sandbox (read: / write:), checked for shape."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise ConfigError(
            f"{where}: give a list of paths, e.g. {where.rsplit('.', 1)[-1]}: [data/]"
        )
    return tuple(value)


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def from_spec(spec: str) -> CommandSpec:
    """A stored `command:{...}` spec back to a CommandSpec."""
    try:
        data = json.loads(spec[len(PREFIX) :])
    except ValueError:
        raise ConfigError(f"agent {spec!r}: not a command agent spec (bad JSON)") from None
    return parse_config(data, "agent")


def from_command_line(text: str, cwd: Path) -> CommandSpec:
    """`--agent-cmd "node agent.js"`: split like a shell would, paths read from `cwd`."""
    try:
        command = shlex.split(text)
    except ValueError as error:
        raise ConfigError(f"--agent-cmd {text!r}: cannot split it ({error})") from None
    if not command:
        raise ConfigError("--agent-cmd is empty; give the program and its arguments")
    return CommandSpec(command=tuple(command), cwd=str(cwd.resolve()))


def resolve_paths(spec: CommandSpec, base: Path) -> tuple[tuple[str, ...], list[Path]]:
    """The command with relative file paths made absolute, and the files it names."""
    files: list[Path] = []
    out: list[str] = []
    for index, arg in enumerate(spec.command):
        path = Path(arg) if Path(arg).is_absolute() else base / arg
        looks_like_path = index > 0 or "/" in arg or os.sep in arg
        if looks_like_path and not arg.startswith("-") and path.is_file():
            # absolute, but symlinks kept: a venv's bin/python must stay the venv's
            absolute = Path(os.path.abspath(path))
            # the program itself counts when it is a script, not an interpreter's binary
            if index > 0 or is_script(absolute):
                files.append(absolute)
            out.append(str(absolute))
        else:
            out.append(arg)
    return tuple(out), files


def files_hash(files: list[Path], mirror: Path | None = None) -> str | None:
    """SHA-256 over the named files' paths and bytes (None when the command names none).
    Files unpacked under `mirror` (a Dask worker's copy of the driver's, at the driver's
    paths below it) are hashed by the driver's path: the same hash for the same bytes."""
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        name = str(path) if mirror is None else "/" + path.relative_to(mirror).as_posix()
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def base_dir(spec: CommandSpec, suite_dir: Path | None) -> Path:
    cwd = Path(spec.cwd)
    if cwd.is_absolute():
        return cwd
    return (suite_dir or Path.cwd()) / cwd


def check_program(program: str, path_var: str | None) -> None:
    if os.sep in program or "/" in program:
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise ConfigError(f"agent command: {program!r} is not an executable file")
        return
    if shutil.which(program, path=path_var) is None:
        raise ConfigError(
            f"agent command: {program!r} is not on PATH; install it or give its full path"
        )


def process_environ(
    spec: CommandSpec, extra: Mapping[str, str], parent: Mapping[str, str]
) -> dict[str, str]:
    """The agent process's environment: a few inherited variables, the spec's, passhat's."""
    # the names only, then the few values kept: os.environ decodes each one it is asked
    # for (11 against 37 us a run, with 35 variables set)
    env = {k: parent[k] for k in parent if k in INHERITED or k.startswith("LC_")}
    env.update({n: parent[n] for n in spec.pass_env if n in parent})
    env.update(spec.env)
    env.update(extra)
    return env


SUITE_PARTS = ("cases", "cassettes", "fixtures")
"""The suite's folders that hold its answers and recordings (with suite.yaml and *.jsonl)."""


def _raise_run_error(endpoints: RunEndpoints) -> None:
    """What ends the run whatever its agent did: the model's first failure, passhat's own
    serving it, else its tool budget spent (an `agent_flood`)."""
    if endpoints.proxy.error is not None:
        raise endpoints.proxy.error from None
    if endpoints.tools.failed is not None:  # passhat's own (its MCP server's start)
        raise passhats_failure(endpoints.tools.failed) from None
    if endpoints.tools.spent is not None:
        raise AgentProcessError("agent_flood", endpoints.tools.spent) from None


def _run_environ(ctx: RunContext, input_file: Path, workdir: Path) -> dict[str, str]:
    return {
        "PASSHAT_INPUT": str(input_file),
        "PASSHAT_CASE_ID": ctx.case_id,
        "PASSHAT_RUN_INDEX": str(ctx.run_index),
        "PASSHAT_SEED": str(ctx.seed),
        "PASSHAT_LABELS": json.dumps(list(ctx.labels), ensure_ascii=False),
        "PASSHAT_MAX_TURNS": str(ctx.max_turns),
        "PASSHAT_MODEL": ctx.model.name if ctx.model is not None else "",
        "TMPDIR": str(workdir),
    }


def _plan_key(params: Mapping[str, Any]) -> str:  # a view's folders are found for these
    return json.dumps([params.get("sandbox") or {}, [str(p) for p in protected()]])


_Plan = tuple[list[str], list[str], list[str], list[str], tuple[str, ...], Looks]
"""A view's folders, found once: program, read, write, runtimes, named files, its looks."""


class CommandAgent:
    """An `Agent` that runs a command per run; see the module docstring for the contract."""

    def __init__(self, spec: CommandSpec, suite_dir: Path | None) -> None:
        if os.name != "posix":
            raise ConfigError(
                "command agents need a POSIX system (Linux, macOS): each run is a process "
                "group, killed whole"
            )
        self.spec = spec
        self.base = base_dir(spec, suite_dir)
        if not self.base.is_dir():
            raise ConfigError(f"agent cwd {spec.cwd!r}: {self.base} is not a folder")
        self.suite_dir = suite_dir
        self._views: dict[str, View] = {}
        self._plans: dict[str, _Plan] = {}
        self.argv, self.files = resolve_paths(spec, self.base)
        check_program(self.argv[0], os.environ.get("PATH"))
        self.source_hash = files_hash(self.files)
        self.prompt_version: str | None = None
        self._reached = False
        """Whether a run's own uid was found to reach the program and its files."""

    def secret_values(self) -> tuple[str, ...]:
        """The values handed through `pass_env`: blanked from all stored, whatever its name."""
        return tuple(os.environ[n] for n in self.spec.pass_env if os.environ.get(n))

    def guarded(self) -> list[str]:
        """What no run may see, as real paths: the suite folder and the store."""
        found = [real(self.suite_dir)] if self.suite_dir is not None else []
        return found + [real(p) for p in protected()]

    def extra_paths(self, params: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """The extra read-only and writable paths of the sandbox (real paths): the spec's
        `read`/`write` (relative to its cwd) and the experiment's --agent-read/--agent-write.
        A writable path that holds the suite or the store, or lies inside the suite, is
        refused: a mount over a child does not stop a rename of its parent."""
        given = params.get("sandbox") or {}
        found: dict[str, list[str]] = {}
        guarded = self.guarded()
        for name in ("read", "write"):
            paths = [*getattr(self.spec, name), *given.get(name, ())]
            found[name] = [real(self.base / p) for p in paths]
            for path in found[name]:
                if not os.path.exists(path):
                    raise ConfigError(
                        f"the agent's {name}: {path} does not exist; fix the path or drop it"
                    )
        programs = [real(f) for f in self.files]
        for path in found["write"]:
            clash = [g for g in guarded if under(g, [path]) or under(path, [g])]
            if clash:
                raise ConfigError(
                    f"the agent's write: {path} holds or lies in {clash[0]} (the suite or the "
                    "store), which a run must never change; give it a folder of its own"
                )
            # a run that rewrote its own program ran the next runs of the experiment as
            # other code under the same fingerprint
            mine = [f for f in programs if under(f, [path])]
            if mine:
                raise ConfigError(
                    f"the agent's write: {path} holds its own program {mine[0]}, whose bytes "
                    "the experiment's fingerprint covers and a run must not change; give "
                    "it a folder of its own"
                )
        return found["read"], found["write"]

    def _refuse_answers(self, named: Sequence[str]) -> None:
        """ConfigError for a named file of the suite (suite.yaml, cases/, cassettes/,
        fixtures/, *.jsonl) or the store: shown even in the covered suite folder."""
        suite = real(self.suite_dir) if self.suite_dir is not None else None
        stores = {real(p) for p in protected()}
        for path in named:
            inside = suite is not None and under(path, [suite])
            parts = Path(os.path.relpath(path, suite)).parts if inside and suite else ()
            answers = bool(parts) and (
                parts[0] in SUITE_PARTS or path.endswith(".jsonl") or parts == ("suite.yaml",)
            )
            if answers or path in stores:
                raise ConfigError(
                    f"the agent's command names {path}, "
                    f"{'a file of the suite' if answers else 'the store'}, which no run may "
                    "see at --isolation namespace; name the agent's own files only"
                )

    def check_view(self, params: Mapping[str, Any], *, later: bool = False) -> None:
        """Raise ConfigError now, before anything runs, for a view that cannot be made.
        `later`: a Dask worker's, after the driver's start look: a stop in the agent's own
        write: folder is left to each run to record (`agent_left`), not the worker's refusal."""
        try:
            self.view(params)
        except TooMuchToLook as error:
            if not later or error.left_in(self.extra_paths(params)[1]) is error:
                raise

    def view(self, params: Mapping[str, Any], sockets: tuple[tuple[int, str], ...] = ()) -> View:
        """What a run of this agent sees at --isolation namespace (agents/sandbox.py): its
        folders found once an experiment; what is covered in them looked for again before
        each run where they changed (agents/lookout.py)."""
        key = _plan_key(params)
        plan = later = self._plans.get(key)  # later: a run's look, not the start's
        if plan is None:
            read, write = self.extra_paths(params)
            env = {"PATH": os.environ.get("PATH", ""), **self.spec.env}
            guarded = self.guarded()
            program = program_paths(self.argv, self.files, env, guarded)
            runtimes = installations(self.argv, env, guarded)
            named = tuple(real(f) for f in self.files)
            self._refuse_answers(named)
            own = [str(p) for p in protected()]  # the store and its companions: covered
            looks = Looks([*own, *(real(f) for f in own)], last=write)
            plan = self._plans.setdefault(key, (program, read, write, runtimes, named, looks))
        program, read, write, runtimes, named, looks = plan
        visible = [*program, *read, *write]
        try:  # no look (answers.SCARCE: out of descriptors or memory) is no run
            with whole_look():  # the archives in view bounded together (archives.LOOK_S)
                found = covered(visible, protected(), self.suite_dir, runtimes, look=looks.found)
                check_covers(found, write)  # bwrap's arguments are bounded
        except TooMuchToLook as error:
            raise (error.left_in(write) if later else error) from None
        except OSError as error:
            why = f"passhat could not look for answers in the run's view ({error})"
            raise AgentProcessError("isolation", why + "; the run was not started") from None
        hide = tuple(found)
        made = self._views.get(key)
        if made is None or made.hide != hide:
            links = symlinks(self.files, visible, hide)
            made = View(tuple(outermost([*program, *read])), tuple(write), hide, named=named)
            made = self._views[key] = replace(made, links=links)
        return replace(made, relays=sockets)

    async def _view(
        self, params: Mapping[str, Any], sockets: tuple[tuple[int, str], ...] = ()
    ) -> View:
        """The run's view: its look for answers off the loop (in_time), but where its view
        holds no folder of the host (a system program, no read: or write:): made on the
        loop then, in microseconds, not handed to a thread and back."""
        plan = self._plans.get(_plan_key(params))  # found at the start (check_view)
        if plan is not None and not (plan[0] or plan[1] or plan[2]):
            return self.view(params, sockets)
        folders = functools.partial(self.extra_paths, params)  # named if late
        return await in_time(self.view, params, sockets, folders=folders)

    async def __call__(self, input: Any, env: Environment, ctx: RunContext) -> Any:
        try:
            return await self._run(input, env, ctx)
        except (Exception, asyncio.CancelledError) as error:
            # the agent raises nothing in passhat: passhat's own, and so is a cancel that
            # no stop asked for (a future of passhat's cancelled under it)
            task = asyncio.current_task()
            if isinstance(error, asyncio.CancelledError) and task and task.cancelling():
                raise  # a stop: the deadline's, or Ctrl-C's
            own = passhats_own(error)
            if own is None:
                raise
            raise own from error

    async def _run(self, input: Any, env: Environment, ctx: RunContext) -> Any:
        level = _level(ctx)
        seal_this_process()  # passhat's environment holds the real keys
        # what its agent leaves (a setsid daemon at process) ends when no run is in flight
        # and passhat's own limits, which prlimit(2) lowers from there, looked at around it
        with orphans.run(level == "process"), own_limits.watched(level == "process"):
            return await self._run_at(level, input, env, ctx)

    async def _run_at(self, level: Level, input: Any, env: Environment, ctx: RunContext) -> Any:
        from passhat.agents.watchdog import watchdog

        uid = run_uid(level)
        payload = json.dumps(input, ensure_ascii=False).encode()
        guard = watchdog()
        if level == "namespace" and netns.direct():
            # nothing of the run on the host's disk: its work folder is a tmpfs made in its
            # sandbox, and its endpoints are listened for there
            workdir = sandbox_folder()
            return await self._run_in(None, workdir, level, uid, payload, env, ctx, guard)
        # a folder of its own per run, named for this process: one a kill -9 left behind
        # is removed by the watchdog, or by the next passhat that starts (sweep_folders).
        # It is the work folder at level process, the relay's sockets' at namespace
        host_input = None if level == "namespace" else payload  # else copied into its tmpfs
        folder = Path(await asyncio.to_thread(make_folder, host_input, uid))
        try:
            workdir = folder if level == "process" else sandbox_folder()
            return await self._run_in(folder, workdir, level, uid, payload, env, ctx, guard)
        finally:
            # off the loop: a run that left 300,000 files does not stall the others
            await asyncio.to_thread(remove_tree, folder)

    async def _run_in(
        self,
        folder: Path | None,
        workdir: Path,
        level: Level,
        uid: int | None,
        payload: bytes,
        env: Environment,
        ctx: RunContext,
        guard: Watchdog,
    ) -> Any:
        from passhat.serve import serve_run

        input_file = workdir / "input.json"  # workdir: the agent's cwd, HOME and TMPDIR
        sandboxed = level == "namespace"
        if uid is not None and not self._reached:  # its own uid must reach what it runs
            _check_others_reach(self.argv[0], self.files)
            self._reached = True  # once: a later change shows as the agent's start error
        # as root, passhat listens inside the run's network namespace itself (agents/netns.py);
        # else a relay started in the sandbox carries the endpoints over Unix sockets, made
        # in the run's host folder
        relay_dir = folder if sandboxed else None
        relayed = relay_dir is not None
        unix = str(relay_dir / "api.sock") if relay_dir is not None else None
        hosts = [*self.spec.hosts, *(ctx.params.get("sandbox") or {}).get("hosts", ())]
        egress = str(relay_dir / "egress.sock") if relay_dir is not None and hosts else None
        async with (
            serve_run(env, ctx, unix) as endpoints,
            _egress(sandboxed and bool(hosts), egress, hosts) as egress_listen,
        ):
            extra = {**_run_environ(ctx, input_file, workdir), **endpoints.environ()}
            argv = [*launcher(level, uid), *self.argv]
            gate = None
            try:  # the gate is closed however far its setting up got
                if sandboxed:  # the gate: the sandbox's limits, and its endpoints where direct
                    ports = [(endpoints.port, unix, endpoints.listen)]
                    if hosts:
                        ports.append((EGRESS_PORT, egress, egress_listen))
                        extra.update(proxy_environ(EGRESS_PORT))
                    if relayed:
                        sockets = tuple((port, str(path)) for port, path, _ in ports)
                        for _, path in sockets:
                            if uid is not None:
                                os.chown(path, uid, uid)
                        # the look for answers (a stat of all in view): off the loop
                        view = await self._view(ctx.params, sockets)
                        relay = relay_argv(view)  # before the gate: it may refuse
                        gate = netns.Gate()
                    else:
                        view = await self._view(ctx.params)
                        gate = netns.Gate([(port, listen) for port, _, listen in ports])
                        relay = process_cap()
                    options = bwrap_argv(view, workdir, gate.file(payload))[1:]
                    argv = [*launcher(level, uid), *gate.bwrap(options), *relay, *self.argv]
                    extra["HOME"] = str(workdir)
                environ = process_environ(self.spec, extra, os.environ)
                # bwrap's own cwd on the host (the agent's is set in its sandbox: --chdir)
                cwd = Path("/") if sandboxed else workdir
                stop = endpoints.tools.stop  # set: the agent is stopped (a flood, its writes)
                async with writes.watched(self, ctx.params, stop) as capped:
                    argv[-len(self.argv) : -len(self.argv)] = capped  # its RLIMIT_FSIZE
                    output = await self._run_process(
                        argv, payload, cwd, environ, ctx, guard, sandboxed, gate, stop
                    )
            except Exception:
                # the model failed first, or the agent flooded its tools (and was stopped):
                # that, not how the agent took it, is the story
                _raise_run_error(endpoints)
                raise
            finally:
                if gate is not None:
                    gate.close()
            _raise_run_error(endpoints)
        return output

    async def _run_process(
        self,
        argv: list[str],
        payload: bytes,
        cwd: Path,
        environ: dict[str, str],
        ctx: RunContext,
        guard: Watchdog,
        sandboxed: bool = False,
        gate: netns.Gate | None = None,
        stop: asyncio.Event | None = None,
    ) -> Any:
        if sandboxed:
            try:  # the thread that starts it: its session keyring is what the run inherits
                seal_keyring()
            except OSError as error:
                if gate is not None:
                    gate.close()
                reason = f"cannot give the run a session keyring of its own: {error.strerror}"
                raise AgentProcessError("isolation", reason) from None
        kill = kill_sandbox if sandboxed else kill_group
        try:
            # no preexec_fn: Python then spawns with vfork instead of copying passhat
            proc = await spawn(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=environ,
                start_new_session=True,  # its own process group: killed as one
                pass_fds=gate.pass_fds if gate is not None else (),
                kill=kill,
            )
        except OSError as error:
            if gate is not None:
                gate.close()
            why = f"cannot start {argv[0]!r}: {error.strerror or error}"
            if error.errno in _SCARCE:  # passhat's pipes or fork, not the agent's program
                raise passhats_failure(why) from None
            raise AgentProcessError("agent_start", why) from None
        guard.add(proc.pid)
        orphans.agent(proc.pid)
        if gate is not None:
            gate.spawned()
        tail, grace = Tail(STDERR_TAIL), EXIT_GRACE_S
        stdout = bytearray()
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        feeder = asyncio.create_task(feed(proc.stdin, payload))
        drainer = asyncio.create_task(drain(proc.stderr, tail))
        reader = asyncio.create_task(read_capped(proc.stdout, STDOUT_LIMIT, stdout))
        waiter = asyncio.create_task(exited(proc))
        # the run's tool budget spent (serve ToolBudget): the agent is stopped then
        stopper = asyncio.create_task((stop or asyncio.Event()).wait())
        try:
            if gate is not None:
                await _open(gate, proc, waiter, tail, self.secret_values())
            # a flood ends the read before the process ends: stop waiting for it then
            await asyncio.wait({reader, waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if stopper.done():
                kill(proc.pid)
            if reader.done() and reader.exception() is not None:
                reader.result()
            await waiter
            # leftovers of the run (background children) go with it; their pipes close
            kill(proc.pid)
            # the run ends with its agent: a child that left the group (setsid) and holds
            # the pipes is not waited for; what was printed until now is the output
            await asyncio.wait({reader, drainer}, timeout=EXIT_GRACE_S)
            grace = 0.0  # read to their end, or held by such a child: not waited on again
            if reader.done():
                reader.result()
        finally:
            if gate is not None:
                gate.close()
            kill(proc.pid)
            for task in (feeder, drainer, reader, waiter, stopper):
                task.cancel()
            with contextlib.suppress(BaseException):
                proc.stdin.close()
                # what is left in the pipes is read for a moment (the group is dead); then
                # they are closed, since a child that left the group may hold them open
                await drain_for(grace, proc.stdout, proc.stderr)
            for stream in (proc.stdout, proc.stderr):
                close_pipe(stream)
            with contextlib.suppress(BaseException):
                await asyncio.wait({asyncio.ensure_future(proc.wait())}, timeout=PIPE_GRACE_S)
            guard.remove(proc.pid)
            kept = tail.text()
            ctx.stderr = (cut_secrets(kept, self.secret_values()) if tail.cut else kept) or None
        if proc.returncode != 0:
            raise AgentProcessError(
                "agent_exit",
                with_tail(
                    exit_reason(proc.returncode or 0, sandboxed),
                    ctx.stderr or "",
                    self.secret_values(),
                ),
            )
        if self.spec.output == "json":
            await bounded_output(stdout)  # its values counted, the event loop turning
        return parse_output(bytes(stdout), self.spec.output)


async def _open(
    gate: netns.Gate,
    proc: asyncio.subprocess.Process,
    waiter: asyncio.Task[int],
    tail: Tail,
    secrets: tuple[str, ...],
) -> None:
    """Serve the run's endpoints inside its sandbox, then let its agent start; a sandbox
    that could not be made is the run's isolation error, with what bwrap said."""
    try:
        await gate.open()
    except OSError as error:
        kill_sandbox(proc.pid)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(waiter), EXIT_GRACE_S)
            await asyncio.sleep(0)  # what bwrap wrote is drained
        reason = f"the run's sandbox was not made ({error.strerror or error})"
        raise AgentProcessError("isolation", with_tail(reason, tail.text(), secrets)) from None


def _egress(
    wanted: bool, path: str | None, hosts: list[str]
) -> contextlib.AbstractAsyncContextManager[Listen | None]:
    """The run's proxy to its allowed hosts, when it has any (on the Unix socket `path`
    for a relayed run): what serves it on a socket made in the sandbox; else None."""
    if not wanted:
        return contextlib.nullcontext(None)
    from passhat.serve.egress import serve_egress

    return serve_egress(path, hosts)


def _check_others_reach(program: str, files: list[Path]) -> None:
    """A root passhat runs each agent as a uid of its own: what it runs must be theirs to run."""
    found = shutil.which(program)
    wanted = [(Path(found), 0o001)] if found else []
    for path, bit in [*wanted, *((f, 0o004) for f in files)]:
        closed = closed_to_others(path, bit)
        if closed is not None:
            raise AgentProcessError(
                "agent_start",
                f"the run's own uid cannot reach {path}: {closed} is closed to other users. "
                "passhat runs as root, so --isolation namespace starts each agent as an "
                "unprivileged uid of its own; put the agent where any user may run it, or "
                "use --isolation process",
            )


def _level(ctx: RunContext) -> Level:
    try:
        level = check_level(str(ctx.params.get("isolation", DEFAULT)))
    except ValueError as error:
        raise AgentProcessError("isolation", str(error)) from None
    reason = unavailable(level)
    if reason is not None:
        raise AgentProcessError("isolation", reason)
    return level
