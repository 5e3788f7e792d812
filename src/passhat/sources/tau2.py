"""τ²-bench results (a `results.json`, or a results folder in its "dir" format) as
passhat experiments.

τ²-bench is not published on PyPI, so its file is read as JSON, following the
pydantic models of its public code (sierra-research/tau2-bench,
`src/tau2/data_model/simulation.py`: `Results`, `Info`, `SimulationRun`,
`RewardInfo`, `TerminationReason`). Only the fields below are read, and each is
checked with a message naming it:

    info.num_trials                 requested k
    info.agent_info.llm             the model; info.user_info.llm the user simulator
    info.environment_info.domain_name, info.git_commit
    tasks[].id                      the planned cases
    simulations[]                   task_id, trial (0-based), termination_reason,
                                    reward_info.reward, duration, agent_cost, messages

Each simulation is checked as τ²-bench's `SimulationRun` model checks it, for the
fields read: one its loader would refuse (no `task_id`, a `duration` that is no
number, ...) is refused in one line naming `simulations[i].field`. `trial` is
optional in that model (`Optional[int]`), so a simulation without one is
numbered in file order after the numbered ones, and a note says so.

Each simulation is a run (index = trial + 1). Reward 1 (within τ²'s own 1e-6)
passes, any other reward in 0..1 fails; `infrastructure_error` (the simulation
never ran: an API disconnect) and a simulation without a reward are errored: τ²-bench
drops these from its denominators with a logged warning, passhat keeps them in
the plan and names them. A reward that is NaN, ±Infinity or outside 0..1 is no
score (τ²'s model would keep it as a float and count it in its average): that
run is errored with the value, and left out of τ²'s average as an error is. An
empty or blank `task_id` is refused like a missing one. A trial that has no
simulation is missing.

A results.json above STREAM_ABOVE is read as a stream (ijson), one simulation at a
time, and read again as the runs are stored; one the stream cannot read as `json`
would is read whole.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from passhat.accounting import MAX_K
from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import Figure, Imported, file_sha256, new_id, now, short_hash
from passhat.sources._files import load_json, regular_size, streamable
from passhat.sources._runs import Outcome, imported_run
from passhat.sources._stream import NotStreamable, stored_runs

INFRA = "infrastructure_error"
TOLERANCE = 1e-6
"""τ²-bench's `is_successful`: reward within 1e-6 of 1."""


def _load(path: Path, what: str) -> Any:
    if not path.exists() and not path.is_symlink():
        raise InputError(
            f"{path}: no such file; give a τ²-bench results.json or its results folder"
        )
    return load_json(path, what)


STREAM_ABOVE = 32 * 1024 * 1024
"""A results.json larger than this is read as a stream (ijson), one simulation at a time:
a 300 MB file read whole held 936 MB. Its simulations are read twice: once for the runs
without their messages (what the accounting, the checks and the figures need), once more
as the runs are stored, messages and all."""

Simulations = Callable[[], Iterator[Any]]
"""The simulations of a results file, read again from the start at each call."""


def _results_path(path: Path) -> Path:
    if not path.is_dir():
        return path
    meta_path = path / "results.json"
    if not meta_path.is_file():
        raise InputError(
            f"{path}: no results.json in this folder; give a τ²-bench results file or folder"
        )
    return meta_path


def read_results(
    path: Path, *, stream: bool = True
) -> tuple[Path, dict[str, Any], Simulations, bool]:
    """The results' header (a dict with `info` and `tasks`), a way to read their
    simulations one at a time, and whether that reads a stream: from a results.json (read
    whole, or above STREAM_ABOVE as a stream unless `stream` is False) or a "dir"-format
    folder (one file per simulation, each read when its turn comes)."""
    meta_path = _results_path(path)
    streamed = _streamed(meta_path) if stream else None
    if streamed is not None:
        return meta_path, streamed[0], streamed[1], True
    data = _load(meta_path, "τ²-bench results")
    _check_results(data, meta_path)
    sims = data.pop("simulations", None)
    sims_dir = meta_path.parent / "simulations"
    if not sims and sims_dir.is_dir():
        files = sorted(sims_dir.glob("*.json"))
        return meta_path, data, lambda: (_load(f, "simulation file") for f in files), False
    sims = sims or []
    if not isinstance(sims, list):
        raise InputError(f"{meta_path}: field simulations is not a list of objects")
    return meta_path, data, lambda: iter(sims), False


def _check_results(data: Any, meta_path: Path) -> None:
    if not isinstance(data, dict) or "info" not in data:
        raise InputError(
            f"{meta_path}: not τ²-bench results (no 'info' object); give the results.json "
            "that `tau2 run` saved"
        )


def _streamed(meta_path: Path) -> tuple[dict[str, Any], Simulations] | None:
    """The header and simulations of a results.json above STREAM_ABOVE, read as a stream;
    None to read it whole: a smaller file, or one whose header the stream cannot read.
    Its simulations raise NotStreamable where the stream cannot read them as `json`
    would (NaN or Infinity, a number past a double, a surrogate escape, a damaged file):
    the file is then read whole, and says exactly what it says read whole."""
    try:
        if regular_size(meta_path, "τ²-bench results") <= STREAM_ABOVE:
            return None
    except InputError:
        return None  # the whole read names it
    if not streamable(meta_path, "simulations"):
        return None
    import ijson  # type: ignore[import-untyped]  # no stubs

    def first(prefix: str) -> Any:
        with meta_path.open("rb") as handle:
            return next(iter(ijson.items(handle, prefix, use_float=True)), _ABSENT)

    def simulations() -> Iterator[Any]:
        try:
            with meta_path.open("rb") as handle:
                yield from ijson.items(handle, "simulations.item", use_float=True)
        except (ijson.JSONError, ValueError, OSError) as error:  # UnicodeDecodeError too
            raise NotStreamable(str(error)) from None

    try:
        info, tasks = first("info"), first("tasks")
        if info is _ABSENT or next(simulations(), _ABSENT) is _ABSENT:
            return None  # no simulations: the whole read looks for the "dir" format
    except (ijson.JSONError, ValueError, OSError, NotStreamable):
        return None
    return {"info": info, "tasks": [] if tasks is _ABSENT else tasks}, simulations


def _field(data: Any, dotted: str, path: Path, kind: type | tuple[type, ...]) -> Any:
    value = data
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InputError(
            f"{path}: field {dotted} is {json.dumps(value, default=str)[:60]}; τ²-bench writes "
            f"a {names} there (is this a results file of tau2-bench?)"
        )
    return value


_NUMBER = (int, float)


def _finite(value: Any) -> bool:
    """A JSON number a float can hold (a 400-digit integer cannot)."""
    if isinstance(value, bool) or not isinstance(value, _NUMBER):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def check_simulation(sim: Any, at: int, path: Path) -> dict[str, Any]:
    """One simulation, checked as τ²-bench's `SimulationRun` model checks it (the fields
    passhat reads): an InputError naming `simulations[at].field` for one it would refuse."""

    def refuse(field: str, value: Any, wanted: str) -> InputError:
        shown = "missing" if value is _ABSENT else f"{json.dumps(value, default=str)[:60]}"
        return InputError(
            f"{path}: field simulations[{at}].{field} is {shown}; τ²-bench's loader "
            f"refuses that ({wanted}); fix or drop that simulation"
        )

    if not isinstance(sim, dict):
        raise refuse("", sim, "a simulation is an object")
    checks: tuple[tuple[str, bool, str], ...] = (
        (
            "task_id",
            isinstance(sim.get("task_id", _ABSENT), str) and bool(sim["task_id"].strip()),
            "a task id is a string that is not empty",
        ),
        (
            "trial",
            sim.get("trial") is None
            or (
                isinstance(sim.get("trial"), int)
                and not isinstance(sim.get("trial"), bool)
                and 0 <= sim["trial"] <= MAX_K
            ),
            f"a trial number is 0 .. {MAX_K:,}, or absent",
        ),
        (
            "termination_reason",
            isinstance(sim.get("termination_reason", _ABSENT), str),
            "a termination reason is a string",
        ),
        (
            "duration",
            _finite(sim.get("duration", 0.0)),
            "a duration is a number of seconds",
        ),
        (
            "reward_info",
            sim.get("reward_info") is None or isinstance(sim.get("reward_info"), dict),
            "reward_info is an object or null",
        ),
        (
            "messages",
            sim.get("messages") is None  # full-duplex simulations keep ticks instead
            or (
                isinstance(sim["messages"], list)
                and all(isinstance(m, dict) for m in sim["messages"])
            ),
            "messages is a list of objects, or null",
        ),
        (
            "seed",
            sim.get("seed") is None
            or (isinstance(sim.get("seed"), int) and not isinstance(sim.get("seed"), bool)),
            "a seed is a whole number or null",
        ),
    )
    for field, ok, wanted in checks:
        if not ok:
            raise refuse(field, sim.get(field, _ABSENT), wanted)
    info = sim.get("reward_info")
    if isinstance(info, dict) and info.get("reward") is not None and not _finite(info["reward"]):
        raise refuse("reward_info.reward", info["reward"], "a reward is a number")
    return sim


_ABSENT = object()


def _whole(value: Any) -> int:
    """A seed as the store keeps it (a 64-bit integer); 0 for anything else."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
        return value
    return 0


def _obj(value: Any) -> dict[str, Any]:
    """An optional object of the file: {} when it is absent or not an object."""
    return value if isinstance(value, dict) else {}


def _raw_reward(sim: dict[str, Any]) -> float | None:
    info = sim.get("reward_info")
    reward = info.get("reward") if isinstance(info, dict) else None
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        return None
    return float(reward)


def _reward(sim: dict[str, Any]) -> float | None:
    """The reward when it is a score (0..1); None for none, NaN, ±Infinity or one outside
    0..1 (τ²-bench's rewards are products of 0..1 checks)."""
    reward = _raw_reward(sim)
    return reward if reward is not None and 0 <= reward <= 1 else None


def _transcript(sim: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for message in sim.get("messages") or []:
        if isinstance(message, dict):
            entry: dict[str, Any] = {
                "role": message.get("role"),
                "content": message.get("content") or "",
            }
            if isinstance(message.get("tool_calls"), list):
                entry["tool_calls"] = [
                    {"name": c.get("name"), "arguments": c.get("arguments")}
                    for c in message["tool_calls"]
                    if isinstance(c, dict)
                ]
            out.append(entry)
    return out


def simulation_run(
    experiment_id: str, sim: dict[str, Any], index: int, case_hash: str
) -> RunRecord:
    """One simulation as a run; pure."""
    reason = str(sim.get("termination_reason") or "")
    reward = _reward(sim)
    outcome: Outcome
    if reason == INFRA:
        outcome = ("infrastructure_error", "τ²-bench: the simulation hit an infrastructure error")
    elif reward is None and (raw := _raw_reward(sim)) is not None:
        outcome = (
            "reward_not_a_score",
            f"τ²-bench: reward {raw!r} is no score in 0..1 (termination: {reason or 'unknown'})",
        )
    elif reward is None:
        outcome = ("no_reward", f"τ²-bench: no reward (termination: {reason or 'unknown'})")
    else:
        info = sim.get("reward_info") or {}
        outcome = {
            "scorer": "tau2 reward",
            "passed": abs(reward - 1.0) <= TOLERANCE,
            "reward": reward,
            "reward_basis": info.get("reward_basis"),
            "reward_breakdown": info.get("reward_breakdown"),
            "termination_reason": reason,
        }
    return imported_run(
        experiment_id,
        str(sim.get("task_id")),
        index,
        case_hash,
        outcome,
        final_state={
            "termination_reason": reason,
            "reward_info": sim.get("reward_info"),
            "simulation_id": sim.get("id"),
        },
        transcript=_transcript(sim),
        duration_s=float(sim.get("duration") or 0.0),
        seed=_whole(sim.get("seed")),
    )


def _indices(
    sims: list[dict[str, Any]], path: Path
) -> tuple[list[tuple[dict[str, Any], int]], list[str]]:
    """Each simulation's run index (trial + 1); simulations without a trial number are
    numbered in file order after the numbered ones, and the note says so."""
    taken: dict[str, set[int]] = defaultdict(set)
    out: list[tuple[dict[str, Any], int]] = []
    unnumbered: list[dict[str, Any]] = []
    for sim in sims:
        trial = sim.get("trial")
        if trial is None:
            unnumbered.append(sim)
            continue
        if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
            raise InputError(f"{path}: field simulations[].trial is {trial!r}; expected 0, 1, ...")
        task = str(sim.get("task_id"))
        if trial + 1 in taken[task]:
            raise InputError(
                f"{path}: task {task!r} has two simulations of trial {trial}; "
                "a run is never counted twice: keep one"
            )
        taken[task].add(trial + 1)
        out.append((sim, trial + 1))
    notes = []
    for sim in unnumbered:
        task = str(sim.get("task_id"))
        index = 1
        while index in taken[task]:
            index += 1
        taken[task].add(index)
        out.append((sim, index))
    if unnumbered:
        notes.append(f"{len(unnumbered)} simulations have no trial number; numbered in file order")
    return out, notes


def tau2_figures(sims: list[dict[str, Any]], num_trials: int) -> tuple[Figure, ...]:
    """τ²-bench's own average reward and pass^k, recomputed as its metrics code does:
    infrastructure errors dropped, k up to the fewest simulations of any task."""
    kept = [s for s in sims if s.get("termination_reason") != INFRA]
    rewards = [r for r in (_reward(s) for s in kept) if r is not None]
    if not rewards:
        return ()
    figures = [
        Figure(
            "τ²-bench avg_reward",
            sum(rewards) / len(rewards),
            "simulations (partial rewards included); infrastructure errors dropped; "
            "recomputed from the file as τ²-bench's metrics code does",
        )
    ]
    by_task: dict[str, list[bool]] = defaultdict(list)
    for sim in kept:
        reward = _reward(sim)
        by_task[str(sim.get("task_id"))].append(reward is not None and abs(reward - 1) <= TOLERANCE)
    max_k = min(num_trials, min(len(v) for v in by_task.values()))
    for k in range(1, max_k + 1):
        values = [math.comb(sum(v), k) / math.comb(len(v), k) for v in by_task.values()]
        figures.append(
            Figure(
                f"τ²-bench pass^{k}",
                sum(values) / len(values),
                "tasks, each over its simulations left after dropping infrastructure "
                "errors; k up to the fewest of any task",
            )
        )
    return tuple(figures)


def import_results(path: Path, *, name: str | None = None) -> Imported:
    """τ²-bench results as an experiment of kind `imported`; a results.json above
    STREAM_ABOVE is read as a stream (its runs then keep no transcript, and `stored`
    reads them again, transcripts and all, as they are stored)."""
    try:
        return _import(path, name, stream=True)
    except NotStreamable:
        return _import(path, name, stream=False)


def _import(path: Path, name: str | None, *, stream: bool) -> Imported:
    from passhat import __version__

    meta_path, data, simulations, streamed = read_results(path, stream=stream)
    num_trials = _field(data, "info.num_trials", meta_path, int)
    if not 1 <= num_trials <= MAX_K:
        shown = f"{num_trials:,}" if num_trials.bit_length() < 96 else "a huge number"
        raise InputError(f"{meta_path}: field info.num_trials is {shown}; expected 1 .. {MAX_K:,}")
    sims = [
        _without_messages(check_simulation(sim, at, meta_path))
        if streamed
        else check_simulation(sim, at, meta_path)
        for at, sim in enumerate(simulations())
    ]
    tasks = data.get("tasks") or []
    if not isinstance(tasks, list):
        raise InputError(f"{meta_path}: field tasks is not a list of objects")
    planned = [str(t.get("id")) for t in tasks if isinstance(t, dict) and "id" in t]
    seen = [str(s.get("task_id")) for s in sims]
    case_ids = tuple(dict.fromkeys([*planned, *seen]))
    if not case_ids:
        raise InputError(f"{meta_path}: no tasks and no simulations; nothing to import")
    info = data["info"]
    model = _field(data, "info.agent_info.llm", meta_path, str)
    domain = str(_obj(info.get("environment_info")).get("domain_name") or "unknown")
    task_by_id = {str(t.get("id")): t for t in tasks if isinstance(t, dict)}
    case_hashes = {c: short_hash(task_by_id.get(c) or {"id": c}) for c in case_ids}
    suite_hash = short_hash({"domain": domain, "tasks": [task_by_id.get(c) for c in case_ids]})
    agent = f"tau2:{_obj(info.get('agent_info')).get('implementation', 'unknown')}"
    user = _obj(info.get("user_info"))
    model_config = {
        "llm_args": _obj(info.get("agent_info")).get("llm_args"),
        "user_simulator": {"llm": user.get("llm"), "llm_args": user.get("llm_args")},
    }
    source = {
        "tool": "tau2",
        "path": str(meta_path.resolve()),
        "sha256": file_sha256(meta_path),
        "task": f"tau2/{domain}",
        "model": model,
        "tau2_version": info.get("git_commit"),
    }
    experiment = ExperimentRecord(
        id=new_id(),
        name=name,
        created_at=now(),
        suite_name=f"tau2/{domain}",
        suite_path=str(meta_path.resolve()),
        suite_hash=suite_hash,
        agent=agent,
        model=model,
        model_config=model_config,
        params={"max_steps": info.get("max_steps"), "max_errors": info.get("max_errors")},
        prompt_version=None,
        k_requested=num_trials,
        seed=_whole(info.get("seed")),
        harness_version=__version__,
        fingerprint=short_hash(
            {"tool": "tau2", "suite": suite_hash, "agent": agent, "model": model, **model_config}
        ),
        case_ids=case_ids,
        case_hashes=case_hashes,
        kind="imported",
        source=source,
    )
    numbered, notes = _indices(sims, meta_path)
    beyond = [(str(s.get("task_id")), i) for s, i in numbered if i > num_trials]
    if beyond:
        raise InputError(
            f"{meta_path}: task {beyond[0][0]!r} has trial {beyond[0][1] - 1} but "
            f"info.num_trials is {num_trials}; the file is inconsistent"
        )
    runs = tuple(
        simulation_run(experiment.id, sim, index, case_hashes[str(sim.get("task_id"))])
        for sim, index in numbered
    )
    stored = None
    if streamed:
        index_of = {id(sim): index for sim, index in numbered}
        light = [
            simulation_run(experiment.id, sim, index_of[id(sim)], case_hashes[str(sim["task_id"])])
            for sim in sims
        ]
        stored = stored_runs(
            meta_path,
            simulations,
            light,
            lambda at, sim, was: simulation_run(
                was.experiment_id,
                check_simulation(sim, at, meta_path),
                was.run_index,
                was.case_hash,
            ),
        )
    return Imported(
        experiment,
        runs,
        tau2_figures(sims, num_trials),
        tuple(notes),
        ("task", "trial", -1),
        stored=stored,
    )


def _without_messages(sim: dict[str, Any]) -> dict[str, Any]:
    """A checked simulation without its messages (the bulk of a results file)."""
    return {key: value for key, value in sim.items() if key != "messages"}
