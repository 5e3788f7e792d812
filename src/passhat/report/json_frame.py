"""`report --json`'s frame: the experiment, the figures and cases (shape by shape:
`passhat.report.summary_json`), the adaptive rounds and the accounting before the
items (`json_head`); the errored, limited and retried runs and the tokens billed unseen
after the usage (`json_tail`). Here, apart from the terminal report's tables
(`passhat.report.experiment`), so that a streamed `report --json`
(`passhat.report.json_stream`) loads no rich: 20-25 ms of its start; nor numpy and
`passhat.stats` when the store keeps the figures and cases (`summary_pieces`' text,
`Store.kept_summary`): 60-120 ms more of a `report --json` of 100,000 runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from passhat.accounting import Accounting
from passhat.plain import named
from passhat.records import COMMAND_AGENT, ExperimentRecord, RunRecord, RunSummary
from passhat.report.summary import case_dict, run_counts_dict

if TYPE_CHECKING:
    from passhat.stats import Uncertainty

ReportRun = RunRecord | RunSummary


def experiment_uncertainty(
    accounting: Accounting, forecast_m: int, only: set[str] | None = None
) -> Uncertainty:
    """Intervals and forecasts with the defaults of `passhat metrics` (seeded: reproducible)."""
    from passhat.stats import uncertainty  # numpy's: not for a report whose store keeps them

    return uncertainty(accounting, m=forecast_m, seed=0, only=only)


def isolation_of(e: ExperimentRecord) -> dict[str, Any] | None:
    """How sealed the runs of an experiment passhat ran were (None for runs it imported or
    audited): a command agent at its level, an in-process agent not at all."""
    if e.kind != "run":
        return None
    if not e.agent.startswith(COMMAND_AGENT):
        return {"level": "in-process", "sealed": False}
    level = str(e.params.get("isolation", "namespace"))
    return {"level": level, "sealed": level == "namespace"}


def _experiment_head(experiment: ExperimentRecord) -> dict[str, Any]:
    return {
        **named(experiment, ("id", "name", "created_at")),
        "suite": experiment.suite_name,
        **named(experiment, _HEAD_FIELDS),
        "case_k": dict(experiment.case_k),
        **named(experiment, ("fingerprint", "harness_version", "kind", "source")),
        "isolation": isolation_of(experiment),
    }


_HEAD_FIELDS = (
    "suite_hash",
    "agent",
    "model",
    "model_config",
    "params",
    "prompt_version",
    "k_requested",
)


def _accounting_dict(accounting: Accounting, replayed: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "k_requested": accounting.k_requested,
        **run_counts_dict(accounting),
        "runs_replayed": replayed,
    }
    if accounting.k_varies:  # an adaptive rule asked cases for different k
        out["k_least"] = accounting.k_least
        out["k_per_case"] = {str(k): n for k, n in accounting.held().items()}
    return out


def _error(r: ReportRun) -> dict[str, Any]:
    """What the report says of an errored run, in its line and in --json (which adds the
    traceback)."""
    return {"case": r.case_id, "run": r.run_index, "type": r.error_type, "message": r.error_message}


def errored_dicts(errored: Iterable[ReportRun]) -> list[dict[str, Any]]:
    """`report --json`'s `errored`: each errored run's line (`_error`) and traceback."""
    return [{**_error(r), "traceback": r.traceback} for r in errored]


def json_bytes(value: Any) -> bytes:
    """Compact JSON, NaN and infinities as null: how `report --json` writes a part."""
    from pydantic_core import to_json

    return to_json(value, inf_nan_mode="null")


def json_head(
    experiment: ExperimentRecord,
    accounting: Accounting,
    forecast_m: int,
    replayed: int,
    kept: Iterable[str] | None = None,
) -> Iterator[bytes]:
    """`report --json` up to its items: the experiment, the figures and cases (shape by
    shape: `passhat.report.summary_json`; `kept`: their text as `summary_pieces` made it,
    kept in the store for this accounting: `Store.kept_summary`), the adaptive rounds
    and the accounting."""
    yield b'{"experiment":' + json_bytes(_experiment_head(experiment))
    if accounting.runs_counted:
        for piece in summary_pieces(accounting, forecast_m) if kept is None else kept:
            yield piece.encode()
    else:
        yield b',"dataset":null,"cases":' + json_bytes([case_dict(c) for c in accounting.cases])
    yield b',"adaptive":' + json_bytes([dict(r) for r in experiment.adaptive])
    yield b',"accounting":' + json_bytes(_accounting_dict(accounting, replayed))


KEPT_FORECAST_M = 10
"""The forecast's horizon of a kept summary: the report's default (`--forecast-m`)."""

KEPT_FORMAT = 2
"""The text `summary_pieces` makes, kept in stores (`Store.fill_summary`) with this,
passhat's version and numpy's (`kept_summary_format`): a kept text of another is made
again. A change to what the figures and cases say must add one, or a report would show
the old text. 2: the share forecast and the bootstrap of the mean of per-case rates
read the dataset bootstrap's resampled cases (`_case_record_draws`)."""


def kept_summary_format() -> str:
    """What a kept summary's text is told apart by: passhat's version, `KEPT_FORMAT` and
    numpy's version (its generators' draws, the bootstrap's, may change with a release:
    NEP 19), read without importing numpy."""
    from passhat import __version__
    from passhat._lazy import installed_version

    return f"{__version__}/{KEPT_FORMAT}/numpy {installed_version('numpy')}"


def summary_pieces(accounting: Accounting, forecast_m: int) -> Iterator[str]:
    """The figures and cases of `report --json` (`,"dataset":...,"cases":[...]` and any
    plans, shape by shape: `passhat.report.summary_json`) of an accounting with a
    counted run: the text `json_head` writes and the store keeps."""
    from passhat.report.summary_json import representatives, summary_json_chunks

    u = experiment_uncertainty(accounting, forecast_m, representatives(accounting))
    # one object {"dataset": ..., "cases": [...]}: its keys go into the report's
    pieces = summary_json_chunks(accounting, u)
    previous = "," + next(pieces).removeprefix("{")
    for piece in pieces:
        yield previous
        previous = piece
    yield previous.removesuffix("}")


ERRORED_CHUNK = 4096
"""Errored runs made into JSON at a time (50,000 at 1,000,000 runs: 25 MB as dicts)."""


def json_tail(
    errored: Sequence[ReportRun],
    limit: list[dict[str, Any]],
    retried: dict[str, Any] | None,
    unseen: Mapping[str, Any] | None,
) -> Iterator[bytes]:
    """`report --json` after its usage: the errored runs (`errored_dicts`, a few thousand
    at a time), the runs a limit stopped, the runs tried again and the tokens billed
    unseen (when given); the closing brace."""
    opening = b',"errored":['
    for start in range(0, len(errored), ERRORED_CHUNK):
        yield opening + json_bytes(errored_dicts(errored[start : start + ERRORED_CHUNK]))[1:-1]
        opening = b","
    yield opening + b"]" if opening != b"," else b"]"
    yield b',"limit":' + json_bytes(limit)
    yield b',"retried":' + json_bytes(retried)
    yield (b"" if unseen is None else b',"unseen":' + json_bytes(dict(unseen))) + b"}"
