"""Harbor job folders as passhat experiments.

Harbor (the `harbor` package on PyPI; it needs Python 3.12, passhat runs on
3.11) writes one folder per job:

    jobs/<job_name>/config.json          JobConfig: n_attempts, agents, datasets
    jobs/<job_name>/result.json          JobResult: stats.evals[<agent>__<model>__<dataset>]
    jobs/<job_name>/<trial_name>/result.json   TrialResult, one per attempt

Each trial's result.json is read through Harbor's own `TrialResult` where the
`harbor` package can be imported, and otherwise as JSON after Harbor's pydantic
models (harbor 0.26.0: `models/job/config.py`, `models/trial/result.py`,
`utils/pass_at_k.py`), the fields passhat reads converted by pydantic as those
models type them: reward "1" is 1 and reward_valid "yes" is true, as Harbor reads
them; started_at "not a date" is refused, as Harbor refuses it. Each
trial is a run. Trials of different agents, models or datasets never pool: each
(agent, model, dataset) is its own experiment, as Harbor keys its own stats.

- `reward_valid` (Harbor's own verdict on whether the reward can be trusted;
  recomputed as "rewards present, no exception" when absent) false: errored,
  with the exception's type and message;
- a reward that is NaN or ±Infinity: errored (Harbor's model keeps it as a
  float; it is no score);
- else the reward (`rewards.reward`, or the only reward) equal to 1 passes,
  anything else fails;
- a trial folder without a readable result.json never finished: missing.

Trial names carry no attempt number, so a task's trials are numbered 1..n by
start time. Requested k is `n_attempts`.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from passhat.accounting import MAX_K
from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import Figure, Imported, file_sha256, new_id, now, short_hash
from passhat.sources._files import load_json
from passhat.sources._runs import Outcome, imported_run


def _load(path: Path) -> Any:
    return load_json(path, "Harbor file")


def _optional(value: Any, kind: type | tuple[type, ...]) -> bool:
    return value is None or (isinstance(value, kind) and not isinstance(value, bool))


@functools.cache
def harbor_model() -> Any:
    """Harbor's own `TrialResult` model when the `harbor` package is importable here (it
    needs Python 3.12), else None: then `as_harbor_reads` mirrors it."""
    try:
        from harbor.models.trial.result import TrialResult  # type: ignore[import-not-found]
    except Exception:  # not installed, or not importable on this Python
        return None
    return TrialResult


@functools.cache
def _lax() -> dict[str, Any]:
    """pydantic adapters for the fields passhat reads, typed as Harbor's models type them
    (so "1" is a reward and "yes" a reward_valid, as Harbor's lax validation reads them)."""
    from datetime import datetime

    from pydantic import TypeAdapter

    return {
        "reward_valid": TypeAdapter(bool | None),
        "started_at": TypeAdapter(datetime | None),
        "rewards": TypeAdapter(dict[str, float | int] | None),
    }


def as_harbor_reads(data: Any) -> tuple[Any, str | None]:
    """The result.json as Harbor's `TrialResult` reads it: through Harbor's model where it
    is installed, else with the fields passhat reads converted as its pydantic types do
    (reward "1" is 1, reward_valid "yes" is true, started_at "not a date" is refused);
    (data, None), or (data, why Harbor refuses it)."""
    model = harbor_model()
    if model is not None and isinstance(data, dict):
        from pydantic import ValidationError

        try:
            model.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            return data, f"field {where}: {first['msg']}"
    problem = trial_problem(data)
    if problem is not None:
        return data, problem
    from pydantic import ValidationError

    data = dict(data)
    verifier = dict(data.get("verifier_result") or {})
    for field, holder in (
        ("reward_valid", data),
        ("started_at", data),
        ("rewards", verifier),
    ):
        try:
            value = _lax()[field].validate_python(holder.get(field))
        except ValidationError as error:
            return data, f"field {field} is not {_WANTED[field]} ({error.errors()[0]['msg']})"
        if field == "rewards" and verifier:
            verifier["rewards"] = value
        elif field == "reward_valid":
            data[field] = value
    if verifier:
        data["verifier_result"] = verifier
    return data, None


_WANTED = {
    "reward_valid": "true, false or null",
    "started_at": "a time or null",
    "rewards": "an object of numbers or null",
}


def trial_problem(data: Any) -> str | None:
    """Why Harbor's `TrialResult` model would refuse this result.json (the types of the
    fields passhat reads, before pydantic's conversions: see `as_harbor_reads`), or None
    when it would not; pure."""
    if not isinstance(data, dict):
        return "it is not a JSON object"
    if not isinstance(data.get("task_name"), str):
        return "field task_name is not a string"
    checks = (
        ("agent_info", _optional(data.get("agent_info"), dict), "an object"),
        ("verifier_result", _optional(data.get("verifier_result"), dict), "an object or null"),
        ("exception_info", _optional(data.get("exception_info"), dict), "an object or null"),
        ("agent_result", _optional(data.get("agent_result"), dict), "an object or null"),
    )
    for field, ok, wanted in checks:
        if not ok:
            return f"field {field} is not {wanted}"
    info = data.get("agent_info") or {}
    if not _optional(info.get("model_info"), dict):
        return "field agent_info.model_info is not an object or null"
    # the three name what is compared (agent, model, dataset), so they must be text
    if not _optional(info.get("name"), str):
        return "field agent_info.name is not text"
    if not _optional((info.get("model_info") or {}).get("name"), str):
        return "field agent_info.model_info.name is not text"
    if not _optional(data.get("source"), str):
        return "field source is not text or null"
    rewards = (data.get("verifier_result") or {}).get("rewards")
    if not _optional(rewards, dict):
        return "field verifier_result.rewards is not an object or null"
    for key, value in (rewards or {}).items():
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
            return f"field verifier_result.rewards.{key} is not a number"
    for key in ("n_input_tokens", "n_output_tokens"):
        value = (data.get("agent_result") or {}).get(key)
        if not _optional(value, int) or (isinstance(value, int) and not 0 <= value < 2**63):
            return f"field agent_result.{key} is not a token count"
    exception = data.get("exception_info") or {}
    for key in ("exception_type", "exception_message"):
        if not _optional(exception.get(key), str):
            return f"field exception_info.{key} is not text"
    return None


def _reward(trial: dict[str, Any]) -> float | None:
    rewards = (trial.get("verifier_result") or {}).get("rewards")
    if not isinstance(rewards, dict) or not rewards:
        return None
    value = rewards.get("reward") if "reward" in rewards else None
    if value is None and len(rewards) == 1:
        value = next(iter(rewards.values()))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _nan_reward(trial: dict[str, Any]) -> bool:
    """A reward that is NaN or ±Infinity: no score (Harbor's model keeps it as a float)."""
    rewards = (trial.get("verifier_result") or {}).get("rewards") or {}
    return any(isinstance(v, float) and not math.isfinite(v) for v in rewards.values())


def _valid(trial: dict[str, Any]) -> bool:
    stated = trial.get("reward_valid")
    if isinstance(stated, bool):
        return stated
    return _reward(trial) is not None and trial.get("exception_info") is None


def trial_run(experiment_id: str, trial: dict[str, Any], index: int, case_hash: str) -> RunRecord:
    """One Harbor trial as a run; pure."""
    exception = trial.get("exception_info") or {}
    reward = _reward(trial)
    outcome: Outcome
    if not _valid(trial) or reward is None:
        kind = exception.get("exception_type") or (
            "nan_reward" if _nan_reward(trial) else "no_reward"
        )
        rewards = (trial.get("verifier_result") or {}).get("rewards") or {}
        odd = next(
            (v for v in rewards.values() if isinstance(v, float) and not math.isfinite(v)), 0
        )
        message = exception.get("exception_message") or (
            ("the reward is NaN" if math.isnan(odd) else f"the reward is {odd!r}, no score")
            if _nan_reward(trial)
            else "no valid reward"
        )
        outcome = (str(kind), f"Harbor: {kind}: {message}" if exception else f"Harbor: {message}")
    else:
        outcome = {
            "scorer": "harbor verifier",
            "passed": reward == 1.0,
            "rewards": (trial.get("verifier_result") or {}).get("rewards"),
            "exception": exception.get("exception_type"),
        }
    agent_result = trial.get("agent_result") or {}
    return imported_run(
        experiment_id,
        str(trial.get("task_name")),
        index,
        case_hash,
        outcome,
        final_state={"trial_name": trial.get("trial_name"), "trial_uri": trial.get("trial_uri")},
        input_tokens=int(agent_result.get("n_input_tokens") or 0),
        output_tokens=int(agent_result.get("n_output_tokens") or 0),
    )


def read_trials(job_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every trial's result in the job folder; a trial folder that cannot be listed, or
    whose result.json cannot be read or is one Harbor's model would refuse, is noted
    (that trial counts as missing), never dropped silently."""
    trials, notes = [], []
    try:
        subs = sorted(p for p in job_dir.iterdir() if p.is_dir())
    except OSError as error:
        raise InputError(f"{job_dir}: cannot be listed ({error.strerror})") from None
    for sub in subs:
        path = sub / "result.json"
        try:
            with os.scandir(sub) as entries:
                held = any(e.name == "result.json" for e in entries)
        except OSError as error:
            notes.append(
                f"{sub.name}: cannot be read ({error.strerror}); that trial counts as missing"
            )
            continue
        if not held:
            continue
        try:
            data = load_json(path, "trial result")
        except InputError as error:
            reason = str(error).split(": ", 1)[-1]
            notes.append(
                f"{sub.name}: result.json cannot be read ({reason}); that trial counts as missing"
            )
            continue
        data, problem = as_harbor_reads(data)
        if problem is not None:
            notes.append(
                f"{sub.name}/result.json: {problem} (Harbor's TrialResult refuses it); "
                "that trial counts as missing"
            )
            continue
        trials.append(data)
    return trials, notes


def _group_key(trial: dict[str, Any]) -> tuple[str, str | None, str]:
    info = trial.get("agent_info") or {}
    model = (info.get("model_info") or {}).get("name")
    return str(info.get("name") or "unknown"), model, str(trial.get("source") or "adhoc")


def harbor_figures(job_result: Any, key: tuple[str, str | None, str]) -> tuple[Figure, ...]:
    """Harbor's own stats for one (agent, model, dataset), from the job's result.json."""
    agent, model, dataset = key
    evals_key = f"{agent}__{model}__{dataset}" if model else f"{agent}__{dataset}"
    stats_all = job_result.get("stats") if isinstance(job_result, dict) else None
    evals = stats_all.get("evals") if isinstance(stats_all, dict) else None
    stats = evals.get(evals_key) if isinstance(evals, dict) else None
    if not isinstance(stats, dict):
        return ()
    weighs = "trials with a valid reward; pass@k over tasks, each task's valid trials"
    figures = []
    metrics = stats.get("metrics")
    for metric in metrics if isinstance(metrics, list) else []:
        if isinstance(metric, dict):
            for name, value in metric.items():
                if _fraction(value):
                    figures.append(Figure(f"Harbor {name}", float(value), weighs))
    pass_at_k = stats.get("pass_at_k")
    pairs = pass_at_k.items() if isinstance(pass_at_k, dict) else []
    for k, value in sorted(
        ((k, v) for k, v in pairs if k.isdigit() and len(k) < 7 and _fraction(v)),
        key=lambda kv: int(kv[0]),
    ):
        figures.append(Figure(f"Harbor pass@{k}", float(value), weighs))
    return tuple(figures)


def _fraction(value: Any) -> bool:
    """A figure Harbor could have written: a finite number a float holds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, float) or abs(value) < 2**53


def import_job(job_dir: Path, *, name: str | None = None) -> list[Imported]:
    """A Harbor job folder as one experiment per (agent, model, dataset)."""
    from passhat import __version__

    config_path = job_dir / "config.json"
    if not job_dir.is_dir() or not config_path.is_file():
        raise InputError(
            f"{job_dir}: not a Harbor job folder (no config.json); give jobs/<job_name>"
        )
    config = _load(config_path)
    n_attempts = config.get("n_attempts", 1) if isinstance(config, dict) else None
    if (
        isinstance(n_attempts, bool)
        or not isinstance(n_attempts, int)
        or not 1 <= n_attempts <= MAX_K
    ):
        shown = (
            json.dumps(n_attempts)[:40]
            if not isinstance(n_attempts, int)
            else (f"{n_attempts:,}" if n_attempts.bit_length() < 96 else "a huge number")
        )
        raise InputError(
            f"{config_path}: field n_attempts is {shown}; Harbor writes a whole number "
            f"from 1 to {MAX_K:,} there"
        )
    job_result = _load(job_dir / "result.json") if (job_dir / "result.json").is_file() else None
    trials, notes = read_trials(job_dir)
    if not trials:
        raise InputError(f"{job_dir}: no trial with a readable result.json; nothing to import")
    groups: dict[tuple[str, str | None, str], list[dict[str, Any]]] = defaultdict(list)
    for trial in trials:
        groups[_group_key(trial)].append(trial)
    if name is not None and len(groups) > 1:
        raise InputError(
            f"--name names one experiment, but {job_dir} holds {len(groups)} agent/model/"
            "dataset combinations"
        )
    out = []
    for key, members in groups.items():
        out.append(
            _experiment(
                job_dir, config_path, n_attempts, key, members, job_result, name, notes, __version__
            )
        )
    return out


def _experiment(
    job_dir: Path,
    config_path: Path,
    n_attempts: int,
    key: tuple[str, str | None, str],
    trials: list[dict[str, Any]],
    job_result: Any,
    name: str | None,
    notes: list[str],
    version: str,
) -> Imported:
    agent, model, dataset = key
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for trial in trials:
        by_task[str(trial["task_name"])].append(trial)
    k = max(n_attempts, max(len(v) for v in by_task.values()))
    extra = list(notes)
    if k > n_attempts:
        extra.append(
            f"a task has {k} trials but n_attempts is {n_attempts}; requested k taken as {k}"
        )
    checksums = {t: str(v[0].get("task_checksum")) for t, v in by_task.items()}
    case_ids = tuple(sorted(by_task))
    suite_hash = short_hash({"dataset": dataset, "tasks": checksums})
    experiment = ExperimentRecord(
        id=new_id(),
        name=name,
        created_at=now(),
        suite_name=dataset,
        suite_path=str(job_dir.resolve()),
        suite_hash=suite_hash,
        agent=f"harbor:{agent}",
        model=model or "unknown",
        model_config={},
        params={"n_attempts": n_attempts},
        prompt_version=None,
        k_requested=k,
        seed=0,
        harness_version=version,
        fingerprint=short_hash(
            {"tool": "harbor", "suite": suite_hash, "agent": agent, "model": model}
        ),
        case_ids=case_ids,
        case_hashes={c: short_hash(checksums[c]) for c in case_ids},
        kind="imported",
        source={
            "tool": "harbor",
            "path": str(job_dir.resolve()),
            "sha256": file_sha256(config_path),
            "task": dataset,
            "model": model,
            "job_name": config_path.parent.name,
        },
    )
    runs = []
    for task, members in by_task.items():
        members.sort(key=lambda t: (str(t.get("started_at") or ""), str(t.get("trial_name"))))
        for index, trial in enumerate(members, start=1):
            runs.append(trial_run(experiment.id, trial, index, experiment.case_hashes[task]))
    return Imported(
        experiment,
        tuple(runs),
        harbor_figures(job_result, key),
        tuple(extra),
        ("task", "attempt", 0),
    )
