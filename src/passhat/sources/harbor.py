"""Harbor job folders as passhat experiments.

Harbor (the `harbor` package on PyPI; it needs Python 3.12, passhat runs on
3.11, so its models cannot be imported here) writes one folder per job:

    jobs/<job_name>/config.json          JobConfig: n_attempts, agents, datasets
    jobs/<job_name>/result.json          JobResult: stats.evals[<agent>__<model>__<dataset>]
    jobs/<job_name>/<trial_name>/result.json   TrialResult, one per attempt

Read as JSON after Harbor's pydantic models (harbor 0.26.0:
`models/job/config.py`, `models/trial/result.py`, `utils/pass_at_k.py`). Each
trial is a run. Trials of different agents, models or datasets never pool: each
(agent, model, dataset) is its own experiment, as Harbor keys its own stats.

- `reward_valid` (Harbor's own verdict on whether the reward can be trusted;
  recomputed as "rewards present, no exception" when absent) false: errored,
  with the exception's type and message;
- else the reward (`rewards.reward`, or the only reward) equal to 1 passes,
  anything else fails;
- a trial folder without a readable result.json never finished: missing.

Trial names carry no attempt number, so a task's trials are numbered 1..n by
start time. Requested k is `n_attempts`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from passhat.errors import InputError
from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import Figure, Imported, file_sha256, new_id, now, short_hash


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path}: cannot be read as JSON ({error}); is it truncated?") from None


def _reward(trial: dict[str, Any]) -> float | None:
    rewards = (trial.get("verifier_result") or {}).get("rewards")
    if not isinstance(rewards, dict) or not rewards:
        return None
    value = rewards.get("reward") if "reward" in rewards else None
    if value is None and len(rewards) == 1:
        value = next(iter(rewards.values()))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _valid(trial: dict[str, Any]) -> bool:
    stated = trial.get("reward_valid")
    if isinstance(stated, bool):
        return stated
    return _reward(trial) is not None and trial.get("exception_info") is None


def trial_run(experiment_id: str, trial: dict[str, Any], index: int, case_hash: str) -> RunRecord:
    """One Harbor trial as a run; pure."""
    exception = trial.get("exception_info") or {}
    reward = _reward(trial)
    error: tuple[str, str] | None = None
    details: list[dict[str, Any]] = []
    if not _valid(trial) or reward is None:
        kind = exception.get("exception_type") or "no_reward"
        message = exception.get("exception_message") or "no valid reward"
        error = (str(kind), f"Harbor: {kind}: {message}" if exception else f"Harbor: {message}")
        status = "errored"
    else:
        passed = reward == 1.0
        status = "passed" if passed else "failed"
        details.append(
            {
                "scorer": "harbor verifier",
                "passed": passed,
                "rewards": (trial.get("verifier_result") or {}).get("rewards"),
                "exception": exception.get("exception_type"),
            }
        )
    agent_result = trial.get("agent_result") or {}
    return RunRecord(
        experiment_id=experiment_id,
        case_id=str(trial.get("task_name")),
        run_index=index,
        case_hash=case_hash,
        status=status,  # type: ignore[arg-type]
        error_type=error[0] if error else None,
        error_message=error[1] if error else None,
        final_state={"trial_name": trial.get("trial_name"), "trial_uri": trial.get("trial_uri")},
        score=details,
        input_tokens=int(agent_result.get("n_input_tokens") or 0),
        output_tokens=int(agent_result.get("n_output_tokens") or 0),
    )


def read_trials(job_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every trial's result in the job folder; unreadable ones are noted (they are missing)."""
    trials, notes = [], []
    for sub in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        path = sub / "result.json"
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            notes.append(f"{sub.name}: result.json cannot be read; that trial counts as missing")
            continue
        if isinstance(data, dict) and isinstance(data.get("task_name"), str):
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
    evals = ((job_result or {}).get("stats") or {}).get("evals") or {}
    stats = evals.get(evals_key) if isinstance(evals, dict) else None
    if not isinstance(stats, dict):
        return ()
    weighs = "trials with a valid reward; pass@k over tasks, each task's valid trials"
    figures = []
    for metric in stats.get("metrics") or []:
        if isinstance(metric, dict):
            for name, value in metric.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    figures.append(Figure(f"Harbor {name}", float(value), weighs))
    for k, value in sorted((stats.get("pass_at_k") or {}).items(), key=lambda kv: int(kv[0])):
        if isinstance(value, int | float):
            figures.append(Figure(f"Harbor pass@{k}", float(value), weighs))
    return tuple(figures)


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
    if isinstance(n_attempts, bool) or not isinstance(n_attempts, int) or n_attempts < 1:
        raise InputError(
            f"{config_path}: field n_attempts is {json.dumps(n_attempts)}; Harbor writes a "
            "whole number >= 1"
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
