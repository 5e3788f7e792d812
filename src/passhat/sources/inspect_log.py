"""Inspect AI eval logs (.eval and .json) as passhat experiments.

Logs are read through `inspect_ai.log.read_eval_log` (the optional
`passhat[inspect]` extra): the format is versioned but not frozen, so it is
never parsed by hand. A .json log above STREAM_ABOVE is read as a stream: its
header through Inspect's own header reader, its samples one at a time through
Inspect's `EvalSample` model (what its whole read does to each), and read again
as the runs are stored. Each sample × epoch is a run:

- scored: passed when the scorer's value passes (`--pass-if`; default: `C`,
  `1` or `True`), else failed;
- sample error: errored, with Inspect's message (its retries kept with the run);
  a sample Inspect marks invalidated is errored too;
- an epoch with no sample at all (a cancelled eval, a trimmed log): missing.

Requested k is the task's epochs. Inspect's own figures are kept beside
passhat's, labelled: Inspect first reduces each sample's scored epochs to one
value (mean by default; errored epochs drop out) and then averages samples, so
it weighs samples; passhat's pass rate weighs runs and never lets an errored
run leave the plan unseen.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.errors import ConfigError, InputError
from passhat.plain import plural
from passhat.records import ExperimentRecord, RunRecord
from passhat.sources import Figure, Imported, file_sha256, new_id, now, short_hash
from passhat.sources._files import MAX_JSON_BYTES, regular_size, streamable
from passhat.sources._runs import Outcome, imported_run
from passhat.sources._stream import NotStreamable, stored_runs

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

DEFAULT_PASS = ("C", "1", "1.0", "True", "true")
"""Score values that pass unless --pass-if says otherwise (Inspect's CORRECT is `C`)."""
_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
"""Inspect's letter values as numbers (its `value_to_float`), for numeric --pass-if."""


@dataclass(frozen=True)
class PassRule:
    """When a score value passes: one of a set of values, or a numeric comparison."""

    values: tuple[str, ...] = DEFAULT_PASS
    """Values (as text) that pass, when no comparison is given."""
    comparison: tuple[str, float] | None = None
    """(operator, threshold), e.g. ('>=', 0.8)."""

    def passes(self, value: Any) -> bool | None:
        """True / False, or None when the value cannot be judged (a dict, a list, text
        a numeric rule cannot read)."""
        if isinstance(value, dict | list):
            return None
        if self.comparison is None:
            return str(value) in self.values
        number = _number(value)
        if number is None:
            return None
        op, threshold = self.comparison
        return _COMPARISONS[op](number, threshold)

    def describe(self) -> str:
        if self.comparison is not None:
            return f"value {self.comparison[0]} {self.comparison[1]:g}"
        return "value in " + "/".join(dict.fromkeys(self.values))


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        try:
            return float(value)
        except ValueError:
            return None
    return None


def pass_rule(specs: Sequence[str]) -> PassRule:
    """--pass-if: `>=0.8` (a threshold), or values that pass (`C`, `P`; repeatable)."""
    if not specs:
        return PassRule()
    if len(specs) == 1:
        spec = specs[0].strip()
        for op in (">=", "<=", "==", ">", "<"):
            if spec.startswith(op):
                try:
                    threshold = float(spec[len(op) :])
                except ValueError:
                    raise InputError(
                        f"--pass-if {spec!r}: {spec[len(op) :]!r} is not a number; "
                        "write e.g. '>=0.8' or a value such as C"
                    ) from None
                if math.isnan(threshold):
                    raise InputError(f"--pass-if {spec!r}: give a number, not NaN")
                return PassRule(comparison=(op, threshold))
    return PassRule(values=tuple(s.strip() for s in specs))


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise ConfigError(
            "reading Inspect logs needs inspect-ai: pip install 'passhat[inspect]'"
        ) from None


def log_paths(paths: Iterable[Path]) -> list[Path]:
    """The log files named, with each directory's logs (Inspect's own listing)."""
    _require_inspect()
    from inspect_ai.log import list_eval_logs

    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            infos = list_eval_logs(str(path), recursive=True, descending=False)
            logs = [Path(info.name.removeprefix("file://")) for info in infos]
            if not logs:
                raise InputError(
                    f"{path}: no Inspect logs (.eval or .json) in this folder; "
                    "give a log file or the folder Inspect wrote them to"
                )
            found.extend(sorted(logs))
        elif path.exists():
            regular_size(path, "Inspect log")  # a FIFO or a device is refused, never opened
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder; give an Inspect log (.eval/.json)")
    return found


def read_log(path: Path) -> EvalLog:
    """The log through Inspect's reader; one InputError line when it cannot be read."""
    _require_inspect()
    from inspect_ai.log import read_eval_log

    size = regular_size(path, "Inspect log")
    if path.suffix != ".eval" and size > MAX_JSON_BYTES:
        raise InputError(
            f"{path}: the Inspect log is {size:,} bytes, more than the {MAX_JSON_BYTES:,} "
            "passhat reads as JSON; write it as .eval (inspect log convert --to eval)"
        )
    if path.suffix == ".eval":
        _check_parts(path)
    try:
        # events and store are the bulk of a log and never become part of a run here
        return read_eval_log(str(path), exclude_fields={"events", "store"})
    except Exception as error:  # Inspect raises many kinds for a damaged file
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InputError(
            f"{path}: not a readable Inspect log ({type(error).__name__}"
            + (f": {reason[:200]}" if reason else "")
            + "); is it truncated, or not written by Inspect?"
        ) from None


def _check_parts(path: Path) -> None:
    """An .eval log (a zip) whose part unpacks to more than MAX_JSON_BYTES is refused by
    the sizes its directory declares, before anything is unpacked: a sample of 1.5 GB
    of text packed into 1.5 MB kept Inspect's reader busy for minutes, a header so
    packed ran out of memory. A file that is no zip is left to Inspect's reader."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return
    big = max(parts, key=lambda part: part.file_size, default=None)
    if big is not None and big.file_size > MAX_JSON_BYTES:
        raise InputError(
            f"{path}: its part {big.filename} unpacks to {big.file_size:,} bytes, more than "
            f"the {MAX_JSON_BYTES:,} passhat reads of one part; is it the right file?"
        )


STREAM_ABOVE = 32 * 1024 * 1024
"""A .json log larger than this is read as a stream: its header through Inspect's own
header reader (which stops at the samples), its samples one at a time, each validated
by Inspect's `EvalSample` model as Inspect's reader validates them. Read whole, a
.json log is held in memory at several times its size."""

Samples = Callable[[], Iterator["EvalSample"]]
"""A log's samples, read again from the start at each call."""


def stream_log(path: Path) -> tuple[EvalLog, Samples] | None:
    """The header and the samples of a .json log above STREAM_ABOVE, read as a stream;
    None to read it whole (a smaller log, an .eval log, one whose header the stream
    cannot read). The samples raise NotStreamable where the stream cannot read them."""
    _require_inspect()
    if path.suffix != ".json" or regular_size(path, "Inspect log") <= STREAM_ABOVE:
        return None
    if not streamable(path, "samples"):
        return None
    import ijson  # type: ignore[import-untyped]  # no stubs; Inspect reads headers with it
    from inspect_ai.log import EvalLog as Log
    from inspect_ai.log import EvalSample, read_eval_log

    try:  # what Inspect's whole read validates samples with: private, so a version of
        # Inspect that moved it, or the validator, has its logs read whole
        from inspect_ai._util.constants import get_deserializing_context
    except ImportError:
        return None
    if not callable(getattr(Log, "populate_scorer_name_for_samples", None)):
        return None

    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception:  # the whole read words what is wrong
        return None

    def samples() -> Iterator[EvalSample]:
        try:
            with path.open("rb") as handle:
                for raw in ijson.items(handle, "samples.item", use_float=True):
                    sample = EvalSample.model_validate(raw, context=get_deserializing_context())
                    # what EvalLog's own validator does to each sample of a whole read
                    one = header.model_copy(update={"samples": [sample]})
                    one.populate_scorer_name_for_samples()
                    yield sample
        except (ijson.JSONError, ValueError, OSError) as error:  # pydantic's errors too
            raise NotStreamable(str(error)) from None

    return header, samples


def _light(sample: EvalSample) -> EvalSample:
    """A sample without what a run keeps only in its transcript (and what a run never
    keeps: events, store, attachments)."""
    return sample.model_copy(update={"messages": [], "events": [], "attachments": {}, "store": {}})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _usage(sample: EvalSample) -> tuple[int, int]:
    inputs = outputs = 0
    for usage in (sample.model_usage or {}).values():
        inputs += int(getattr(usage, "input_tokens", 0) or 0)
        outputs += int(getattr(usage, "output_tokens", 0) or 0)
    return inputs, outputs


def _transcript(sample: EvalSample) -> list[dict[str, Any]]:
    out = []
    for message in sample.messages or []:
        entry: dict[str, Any] = {"role": message.role, "content": message.text}
        calls = getattr(message, "tool_calls", None)
        if calls:
            entry["tool_calls"] = [{"name": c.function, "arguments": c.arguments} for c in calls]
        out.append(entry)
    return out


def _scorer_name(log: EvalLog, sample: EvalSample, wanted: str | None) -> str | None:
    names = list((sample.scores or {}).keys())
    if wanted is not None:
        return wanted if wanted in names else None
    if log.results and log.results.scores:
        for score in log.results.scores:
            if score.name in names:
                found: str = score.name
                return found
    return names[0] if names else None


def sample_run(
    experiment_id: str,
    log: EvalLog,
    sample: EvalSample,
    rule: PassRule,
    scorer: str | None,
    case_hash: str,
) -> RunRecord:
    """One sample × epoch as a run record; pure."""
    input_tokens, output_tokens = _usage(sample)
    retries = [{"error": e.message} for e in (sample.error_retries or [])]
    outcome: Outcome
    final_state: dict[str, Any] = {
        "completion": sample.output.completion if sample.output else None,
        "target": sample.target,
    }
    invalidation = getattr(sample, "invalidation", None)
    if sample.error is not None:
        outcome = ("sample_error", sample.error.message)
    elif invalidation is not None:
        reason = getattr(invalidation, "reason", None) or "no reason given"
        outcome = ("invalidated", f"the sample was invalidated in Inspect ({reason})")
    else:
        name = _scorer_name(log, sample, scorer)
        if name is None:
            if scorer is not None:
                have = ", ".join(sample.scores or {}) or "none"
                outcome = ("no_score", f"no score from scorer {scorer!r} (scorers: {have})")
            else:
                outcome = ("no_score", "the sample has no score")
        else:
            score = (sample.scores or {})[name]
            verdict = rule.passes(score.value)
            if isinstance(score.value, float) and not math.isfinite(score.value):
                # Inspect keeps a NaN or infinite value; no rule can call it a verdict
                outcome = ("not_a_score", f"score {score.value!r} of {name} is no score")
            elif verdict is None:
                outcome = (
                    "unjudged_score",
                    f"score {score.value!r} of {name} is not pass/fail under {rule.describe()}; "
                    "give --pass-if (e.g. '>=0.5') or --scorer",
                )
            else:
                final_state["answer"] = score.answer
                outcome = {
                    "scorer": name,
                    "passed": verdict,
                    "value": score.value,
                    "answer": score.answer,
                    "explanation": score.explanation,
                    "rule": rule.describe(),
                }
    return imported_run(
        experiment_id,
        str(sample.id),
        int(sample.epoch),
        case_hash,
        outcome,
        output=sample.output.completion if sample.output else None,
        final_state=final_state,
        transcript=_transcript(sample),
        started_at=0.0,
        duration_s=float(sample.total_time or 0.0),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        retries=retries,
    )


def requested_epochs(recorded: int | None, samples: Sequence[EvalSample]) -> tuple[int, str]:
    """Requested k: the task's epochs as the log records them; when it records none
    (`eval.config` `{}`), the highest epoch the log holds, and a note that says so
    (1 only when it holds no sample either). Pure."""
    if recorded is not None:
        return int(recorded), ""
    held = max((int(s.epoch) for s in samples), default=0)
    if held == 0:
        return (
            1,
            "the log records no epochs (eval.config has none) and holds no sample: k taken as 1",
        )
    return held, (
        f"the log records no epochs (eval.config has none): requested k taken as {held}, "
        "the highest epoch it holds"
    )


def unheld_note(status: str, samples: Sequence[EvalSample], cases: int, epochs: int) -> str:
    """What a log that did not finish says about the runs it lacks: only that it does
    not hold them (a header-only log holds no sample at all), never that they never ran."""
    if not samples:
        return (
            f"the log's status is {status!r} and it holds no sample (a header-only log): its "
            f"{plural(cases * epochs, 'run')} are not held here, which says nothing about "
            "whether they ran; they are missing, not failed"
        )
    return (
        f"the log's status is {status!r}: sample × epochs it does not hold are missing, "
        "not failed (not run, or not kept in the log)"
    )


def inspect_figures(log: EvalLog) -> tuple[Figure, ...]:
    """Inspect's own metrics, labelled with what they weigh."""
    figures = []
    reducer = log.eval.config.epochs_reducer
    reduced = ", ".join(reducer) if reducer else "mean"
    scores = log.results.scores if log.results else []
    names = [score.name for score in scores]
    for score in scores:
        own = getattr(score, "reducer", None)
        # two reducers of one scorer are two figures: each label names its reducer
        label = f"{score.name}, {own}" if own and names.count(score.name) > 1 else score.name
        for metric in score.metrics.values():
            figures.append(
                Figure(
                    label=f"Inspect {metric.name} ({label})",
                    value=float(metric.value) if metric.value is not None else None,
                    weighs=f"samples: each sample's scored epochs reduced by {own or reduced} "
                    "first; errored epochs left out",
                )
            )
    return tuple(figures)


def import_log(
    path: Path,
    *,
    rule: PassRule | None = None,
    scorer: str | None = None,
    name: str | None = None,
) -> Imported:
    """One Inspect log as an experiment of kind `imported`; a .json log above
    STREAM_ABOVE is read as a stream (its runs then keep no transcript, and `stored`
    reads them again, transcripts and all, as they are stored)."""
    rule = rule or PassRule()
    streamed = stream_log(path)
    if streamed is not None:
        try:
            return _import(path, rule, scorer, name, streamed[0], streamed[1])
        except NotStreamable:
            pass
    log = read_log(path)
    return _import(path, rule, scorer, name, log, None)


def _import(
    path: Path,
    rule: PassRule,
    scorer: str | None,
    name: str | None,
    log: EvalLog,
    stream: Samples | None,
) -> Imported:
    from passhat import __version__

    samples = list(log.samples or []) if stream is None else [_light(s) for s in stream()]
    epochs, inferred = requested_epochs(log.eval.config.epochs, samples)
    planned = [str(i) for i in (log.eval.dataset.sample_ids or [])]
    seen = list(dict.fromkeys(str(s.id) for s in samples))
    case_ids = tuple(dict.fromkeys([*planned, *seen]))
    if not case_ids:
        raise InputError(
            f"{path}: the log holds no sample (status {log.status}); nothing to import"
        )
    targets = {str(s.id): s.target for s in samples}
    case_hashes = {c: short_hash({"sample": c, "target": targets.get(c)}) for c in case_ids}
    suite_hash = short_hash(
        {
            "task": log.eval.task,
            "task_version": log.eval.task_version,
            "dataset": log.eval.dataset.model_dump(mode="json"),
        }
    )
    inspect_version = (log.eval.packages or {}).get("inspect_ai")
    solver = log.eval.solver or (
        "+".join(step.solver for step in log.plan.steps) if log.plan else None
    )
    generate = log.eval.model_generate_config.model_dump(mode="json", exclude_none=True)
    source = {
        "tool": "inspect",
        "path": str(path.resolve()),
        "sha256": file_sha256(path),
        "task": log.eval.task,
        "task_id": log.eval.task_id,
        "eval_id": log.eval.eval_id,
        "model": log.eval.model,
        "inspect_version": inspect_version,
        "log_version": log.version,
        "log_status": log.status,
        "pass_if": rule.describe(),
        "scorer": scorer,
    }
    fingerprint = short_hash(
        {
            "tool": "inspect",
            "suite_hash": suite_hash,
            "solver": solver,
            "model": log.eval.model,
            "model_args": log.eval.model_args,
            "generate": generate,
            "pass_if": rule.describe(),
            "scorer": scorer,
        }
    )
    experiment = ExperimentRecord(
        id=new_id(),
        name=name,
        created_at=now(),
        suite_name=log.eval.task,
        suite_path=str(path.resolve()),
        suite_hash=suite_hash,
        agent=f"inspect:{solver or 'unknown'}",
        model=log.eval.model,
        model_config={"generate_config": generate, "base_url": log.eval.model_base_url},
        params={"epochs": epochs, "pass_if": rule.describe(), "scorer": scorer},
        prompt_version=None,
        k_requested=epochs,
        seed=0,
        harness_version=__version__,
        fingerprint=fingerprint,
        case_ids=case_ids,
        case_hashes=case_hashes,
        kind="imported",
        source=source,
    )
    runs = tuple(
        sample_run(experiment.id, log, s, rule, scorer, case_hashes[str(s.id)]) for s in samples
    )
    notes = []
    if inferred:
        notes.append(inferred)
    if log.status != "success":
        notes.append(unheld_note(log.status, samples, len(case_ids), epochs))
    beyond = sorted({r.run_index for r in runs if r.run_index > epochs})
    if beyond:
        raise InputError(
            f"{path}: samples of epoch {beyond[0]} but the task asked for {plural(epochs, 'epoch')}; "
            "the log is inconsistent"
        )
    stored = None
    if stream is not None:
        stored = stored_runs(
            path,
            stream,
            runs,
            lambda _, s, was: sample_run(was.experiment_id, log, s, rule, scorer, was.case_hash),
        )
    return Imported(
        experiment,
        runs,
        inspect_figures(log),
        tuple(notes),
        ("sample", "epoch", 0),
        stored=stored,
    )
