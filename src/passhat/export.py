"""Export an experiment's runs, or its per-case accounting, as JSON Lines, CSV or Parquet.

One row per run: experiment, case, run index, status, error, verdict details,
tokens, duration, retries, whether its model answers were live or replayed,
and the fingerprint; the per-case table adds requested, completed, counted,
errored and missing runs with the three numbers over the counted runs. Rows are
plain dicts built by pure functions; writing them is the only I/O. Parquet goes
through pyarrow (the optional `passhat[parquet]` extra), imported only when
asked for.

Every row carries the status, so a query can count what the report counts:
the pass rate is `passed / (passed + failed)`; errored runs have no verdict and
are never counted as failures.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from json.encoder import encode_basestring  # the C encoder `_dumps` uses for strings
from pathlib import Path
from typing import Any, Literal, NamedTuple

from passhat.accounting import Accounting
from passhat.errors import ConfigError, InputError, StoreError
from passhat.records import ExperimentRecord

Format = Literal["jsonl", "csv", "parquet"]
FORMATS: tuple[str, ...] = ("jsonl", "csv", "parquet")

RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("experiment", "string"),
    ("experiment_name", "string"),
    ("kind", "string"),
    ("model", "string"),
    ("fingerprint", "string"),
    ("case", "string"),
    ("run", "int64"),
    ("status", "string"),
    ("counted", "bool"),
    ("error_type", "string"),
    ("error_message", "string"),
    ("verdict_details", "string"),
    ("input_tokens", "int64"),
    ("output_tokens", "int64"),
    ("duration_s", "float64"),
    ("retries", "int64"),
    ("answers", "string"),
    ("started_at", "float64"),
)
"""Columns of the per-run table and their types (Parquet's schema)."""

CASE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("experiment", "string"),
    ("case", "string"),
    ("k_requested", "int64"),
    ("completed", "int64"),
    ("counted", "int64"),
    ("passes", "int64"),
    ("errored_runs", "string"),
    ("missing_runs", "string"),
    ("pass_rate", "float64"),
    ("n", "int64"),
    ("pass_at_n", "bool"),
    ("pass_hat_n", "bool"),
)
"""Columns of the per-case table: pass@n / pass^n over that case's n counted runs."""


STORED: tuple[str, ...] = (
    "case_id",
    "run_index",
    "status",
    "error_type",
    "error_message",
    "score",
    "input_tokens",
    "output_tokens",
    "duration_s",
    "retries",
    "model_source",
    "started_at",
)
"""The stored columns a run's row is made of (`Store.columns`, in this order): no
transcript, output, final state or tool call is read."""


_dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""`json.dumps(value, ensure_ascii=False, default=str)`, its encoder made once, not
twice a row."""


class StoredRun(NamedTuple):
    """A run as `Store.columns(STORED)` gives it: the score and retries as JSON text."""

    case_id: str
    run_index: int
    status: str
    error_type: str | None
    error_message: str | None
    score: str
    """The verdict details, JSON text."""
    input_tokens: int
    output_tokens: int
    duration_s: float
    retries: str
    """The retried model errors, JSON text."""
    model_source: str | None
    """`live` or `replayed` model answers (None: not known, or the run asked no model)."""
    started_at: float


def run_row(experiment: ExperimentRecord, r: StoredRun) -> dict[str, Any]:
    """One run's row; verdict details as JSON text."""
    where = f"run {r.run_index} of case {r.case_id!r}"
    return _row(experiment, r, _dumps(_decoded(r.score, f"score of {where}")))


def _row(experiment: ExperimentRecord, r: StoredRun, verdict: str) -> dict[str, Any]:
    """`run_row` with its verdict details (JSON text) given."""
    where = f"run {r.run_index} of case {r.case_id!r}"
    tried = 0 if r.retries == "[]" else _tries(r.retries, f"retries of {where}")
    tin, tout, took, at = r.input_tokens, r.output_tokens, r.duration_s, r.started_at
    if not (  # the usual row pays for these looks, not for two calls
        type(r.run_index) is int
        and type(tin) is int
        and type(tout) is int
        and type(took) in _NUMBERS
        and type(at) in _NUMBERS
    ):
        _check_index(r.case_id, r.run_index)
        _check_numbers(where, tin, tout, took, at)
    return {
        "experiment": experiment.id,
        "experiment_name": experiment.name,
        "kind": experiment.kind,
        "model": experiment.model,
        "fingerprint": experiment.fingerprint,
        "case": r.case_id,
        "run": r.run_index,
        "status": r.status,
        "counted": r.status != "errored",
        "error_type": r.error_type,
        "error_message": r.error_message,
        "verdict_details": verdict,
        "input_tokens": tin,
        "output_tokens": tout,
        "duration_s": took,
        "retries": tried,
        "answers": r.model_source,
        "started_at": at,
    }


def run_rows(
    experiment: ExperimentRecord, runs: Iterable[Sequence[Any]]
) -> Iterator[dict[str, Any]]:
    """One row per recorded run, from `Store.columns(id, STORED)`: made one at a time,
    as they are written. Each distinct score of a case is decoded and encoded once."""
    case: Any = _UNSET
    details: dict[Any, str] = {}
    for values in runs:
        r = StoredRun(*values)
        if r.case_id != case:
            case = r.case_id
            details = {}  # a case's distinct scores: memory bounded by one case
        verdict = details.get(r.score)
        if verdict is None:
            where = f"run {r.run_index} of case {r.case_id!r}"
            verdict = details[r.score] = _dumps(_decoded(r.score, f"score of {where}"))
        yield _row(experiment, r, verdict)


def run_lines(experiment: ExperimentRecord, runs: Iterable[Sequence[Any]]) -> Iterator[str]:
    """`_dumps(run_row(experiment, r)) + "\\n"` of every run of `Store.columns(id, STORED)`,
    the same text made without a dict or an encoder call per row (JSON encoding was 61 %
    of an export): the experiment's fields are encoded once, a case's id once, and each
    distinct score of a case decoded and encoded once (a case's runs mostly share one).
    Values of an unexpected type (a BLOB, a NaN) take `_dumps` itself.
    tests/test_export_lines.py compares the two on odd values."""
    head = _dumps(
        {
            "experiment": experiment.id,
            "experiment_name": experiment.name,
            "kind": experiment.kind,
            "model": experiment.model,
            "fingerprint": experiment.fingerprint,
        }
    )
    head = head[:-1] + ', "case": '
    statuses: dict[Any, str] = {}
    case: Any = _UNSET
    case_head = ""
    details: dict[Any, str] = {}
    for row in runs:
        case_id, index, status, error_type, message, score, tin, tout, took, retries, src, at = row
        if case_id != case:
            case = case_id
            case_head = head + _scalar(case_id) + ', "run": '
            details = {}  # a case's distinct scores: memory bounded by one case
        verdict = details.get(score)
        if verdict is None:
            where = f"run {index} of case {case_id!r}"
            verdict = details[score] = encode_basestring(
                _dumps(_decoded(score, f"score of {where}"))
            )
        said = statuses.get(status)
        if said is None:
            said = statuses[status] = (
                f'{_scalar(status)}, "counted": {"true" if status != "errored" else "false"}'
            )
        if retries == "[]":
            tried = "0"
        else:
            tried = str(_tries(retries, f"retries of run {index} of case {case_id!r}"))
        try:
            line = (
                f'{case_head}{_whole(index)}, "status": {said}, '
                f'"error_type": {"null" if error_type is None else _scalar(error_type)}, '
                f'"error_message": {"null" if message is None else _scalar(message)}, '
                f'"verdict_details": {verdict}, "input_tokens": {_whole(tin)}, '
                f'"output_tokens": {_whole(tout)}, "duration_s": {_number(took)}, '
                f'"retries": {tried}, "answers": {"null" if src is None else _scalar(src)}, '
                f'"started_at": {_number(at)}}}\n'
            )
        except _NotNumber:
            _check_index(case_id, index)
            _check_numbers(f"run {index} of case {case_id!r}", tin, tout, took, at)
            raise
        yield line


_UNSET: Any = object()
_INFINITY = float("inf")


def _scalar(value: Any) -> str:
    """A value as `_dumps` writes it (a string by the same C function it uses)."""
    return encode_basestring(value) if type(value) is str else _dumps(value)


def _number(value: Any) -> str:
    """A stored number as `_dumps` writes it: an int or a finite float is its repr (what
    the C encoder writes); NaN, infinity and null go through `_dumps`; anything else
    (text written by hand into a number column: SQLite keeps it) raises _NotNumber."""
    if type(value) is int or (type(value) is float and -_INFINITY < value < _INFINITY):
        return repr(value)
    if value is not None and type(value) not in _NUMBERS:
        raise _NotNumber
    return _dumps(value)


def _whole(value: Any) -> str:
    """A stored run index or token count as `_dumps` writes it: a whole number, or null;
    anything else (a fraction, which an INTEGER column keeps as REAL, or text) raises
    _NotNumber, as Parquet's int64 column cannot hold it (it truncated 12.5 to 12)."""
    if type(value) is int:
        return repr(value)
    if value is None:
        return "null"
    raise _NotNumber


class _NotNumber(Exception):
    """A number column holds something else (`_number`, `_whole`; `run_lines` names it)."""


_NUMBERS = (int, float)
_NUMBER_COLUMNS = ("input_tokens", "output_tokens", "duration_s", "started_at")
_COUNT_COLUMNS = ("input_tokens", "output_tokens")
"""The number columns that hold whole numbers only (int64 in Parquet)."""


def _check_index(case_id: Any, index: Any) -> None:
    """StoreError for a run index that is no whole number (null aside)."""
    if index is not None and type(index) is not int:
        raise StoreError(f"the store is damaged: case {case_id!r} has a run {index!r}, no number")


def _check_numbers(where: str, *values: Any) -> None:
    """StoreError naming the first of a run's _NUMBER_COLUMNS (`values`, in that order)
    that holds neither a number nor null (a token column: a fraction either), as report,
    show, diff and Parquet say it."""
    for name, value in zip(_NUMBER_COLUMNS, values, strict=True):
        if type(value) is float and name in _COUNT_COLUMNS:  # in every format alike
            raise StoreError(
                f"the store is damaged: {name} of {where} is {value!r}, no whole number"
            )
        if value is not None and type(value) not in _NUMBERS:
            raise StoreError(f"the store is damaged: {name} of {where} is {value!r}, no number")


def _decoded(text: str, what: str) -> Any:
    """A JSON column's value, read as the store reads it (columns.decode: a damaged
    text one line, a lone surrogate's escape kept as that escape)."""
    from passhat.store.columns import decode

    return decode(text, what)


def _tries(text: str, what: str) -> int:
    """How many retries a run's stored list holds (a store's `7` is damaged, no count)."""
    tries = _decoded(text, what)
    if type(tries) is not list:
        raise StoreError(f"the store is damaged: {what} is {tries!r}, not a JSON list")
    return len(tries)


def _join(indices: Sequence[int]) -> str:
    return " ".join(str(i) for i in indices)


def case_rows(experiment: ExperimentRecord, accounting: Accounting) -> list[dict[str, Any]]:
    """One row per planned case: its accounting and the three numbers over its counted runs."""
    rows = []
    for c in accounting.cases:
        m = c.metrics
        rows.append(
            {
                "experiment": experiment.id,
                "case": c.case,
                "k_requested": c.k_requested,
                "completed": c.completed,
                "counted": c.counted,
                "passes": c.passes,
                "errored_runs": _join(c.errored),
                "missing_runs": _join(c.missing),
                "pass_rate": m.pass_rate if m else None,
                "n": c.counted,
                "pass_at_n": m.pass_at_k if m else None,
                "pass_hat_n": m.pass_hat_k if m else None,
            }
        )
    return rows


def format_for(path: Path, given: str | None) -> Format:
    """The format asked for, else the one the file name says."""
    if given is not None:
        if given not in FORMATS:
            raise InputError(f"--format {given!r}; use one of {', '.join(FORMATS)}")
        return given  # type: ignore[return-value]
    suffix = path.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix  # type: ignore[return-value]
    if suffix in ("json", "ndjson"):
        return "jsonl"
    raise InputError(
        f"-o {path}: cannot tell the format from the name; give --format jsonl, csv or parquet"
    )


def export_target(path: Path) -> tuple[Path, bool]:
    """Where `-o path` writes, and whether it is written through in place.

    A regular file or a new name is replaced whole (through a temporary file beside
    it); a symlink is followed, so the link stays and its target is written; a device
    or a FIFO (`-o /dev/stdout`, a named pipe) is written through, never replaced by a
    regular file (as root, replacing /dev/stdout destroyed it). A folder, a socket or
    a link loop is refused."""
    link = path.is_symlink()
    try:
        mode = path.stat().st_mode  # follows a link: what a write would reach
    except FileNotFoundError:
        return (_resolved(path) if link else path), False
    except OSError as error:
        raise InputError(
            f"-o {path}: cannot be written ({error.strerror}); give a file name"
        ) from None
    if stat.S_ISREG(mode):
        return (_resolved(path) if link else path), False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode):
        return path, True
    kind = "a folder" if stat.S_ISDIR(mode) else "not a file, a device or a FIFO"
    raise InputError(f"-o {path}: is {kind}; give a file name to write")


def _resolved(path: Path) -> Path:
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError):
        raise InputError(
            f"-o {path}: a symlink that cannot be followed; give a file name"
        ) from None


def write_rows(
    path: Path, rows: Iterable[dict[str, Any]], columns: Sequence[tuple[str, str]], fmt: Format
) -> int:
    """Write the rows in `fmt` as they come; the number written. An InputError names
    the file when it cannot be written.

    The rows go to a temporary file beside `path`, renamed onto it once the last is
    written: an export stopped half way (a damaged run, a full disk, Ctrl-C) leaves
    neither half a file nor a clobbered earlier one. A device or a FIFO is written
    through instead, and a symlink's target is written (`export_target`)."""
    return _written(path, lambda to: _write(to, rows, columns, fmt), parquet=fmt == "parquet")


def write_runs(
    path: Path, experiment: ExperimentRecord, runs: Iterable[Sequence[Any]], fmt: Format
) -> int:
    """`write_rows` of `run_rows(experiment, runs)`, JSON Lines made as text (`run_lines`).
    `runs` is closed when it ends early (a damaged row): the store's cursor with it."""
    try:
        if fmt == "jsonl":
            return _written(path, lambda to: _write_lines(to, run_lines(experiment, runs)))
        return write_rows(path, run_rows(experiment, runs), RUN_COLUMNS, fmt)
    finally:
        close = getattr(runs, "close", None)
        if callable(close):
            close()


def _written(path: Path, write: Callable[[Path], int], *, parquet: bool = False) -> int:
    """`write(file)` into a temporary file renamed onto `path` once done, or through a
    device or a FIFO (`write_rows`); the number of rows written."""
    target, through = export_target(path)
    if through and parquet:
        raise InputError(
            f"-o {path}: Parquet needs a file it can seek in, not a device or a FIFO; "
            "give a file name, or --format jsonl/csv to stream"
        )
    try:
        if through:
            return write(target)
        # made by the writer as any file it writes (mode from the umask), then renamed
        partial = target.with_name(f".{target.name}.{os.getpid()}.part")
        try:
            written = write(partial)
            os.replace(partial, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
    except OSError as error:
        raise InputError(f"-o {path}: cannot write ({error.strerror or error})") from None
    return written


def _write(
    path: Path, rows: Iterable[dict[str, Any]], columns: Sequence[tuple[str, str]], fmt: Format
) -> int:
    if fmt == "jsonl":
        return _write_jsonl(path, rows)
    if fmt == "csv":
        return _write_csv(path, rows, [name for name, _ in columns])
    return _write_parquet(path, rows, columns)


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    return _write_lines(path, (_dumps(row) + "\n" for row in rows))


LINES_AT_ONCE = 1024
"""JSON lines joined into one write (one write a line cost a fifth of an export)."""


def _write_lines(path: Path, lines: Iterable[str]) -> int:
    written = 0
    lines = iter(lines)
    with path.open("w", encoding="utf-8") as handle:
        while batch := list(islice(lines, LINES_AT_ONCE)):
            handle.write("".join(batch))
            written += len(batch)
    return written


def _write_csv(path: Path, rows: Iterable[dict[str, Any]], names: Sequence[str]) -> int:
    written = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(names))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(v) for k, v in row.items()})
            written += 1
    return written


def _csv_cell(value: Any) -> Any:
    """CSV has no types: empty for None, and true/false (not Python's True) as DuckDB,
    polars and spreadsheets read them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


PARQUET_BATCH = 65_536
"""Rows held at once while writing Parquet (one row group each)."""


def _write_parquet(
    path: Path, rows: Iterable[dict[str, Any]], columns: Sequence[tuple[str, str]]
) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            "--format parquet needs pyarrow: pip install 'passhat[parquet]' "
            "(or export --format jsonl or csv)"
        ) from None
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
    }
    schema = pa.schema([(name, types[kind]) for name, kind in columns])
    written = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == PARQUET_BATCH:
                writer.write_table(_table(pa, batch, schema, columns))
                written += len(batch)
                batch = []
        if batch or not written:  # no run at all: a file with the columns and no row
            writer.write_table(_table(pa, batch, schema, columns))
            written += len(batch)
    return written


_FITS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "int64": (int,),
    "float64": (int, float),
    "bool": (bool,),
}
"""The Python values each Parquet column type takes (None aside)."""


def _table(pa: Any, batch: list[dict[str, Any]], schema: Any, columns: Any) -> Any:
    """`batch` as an Arrow table; a value its column cannot hold (text written by hand into
    a run's token column: pyarrow's ArrowInvalid was a traceback) a StoreError naming it."""
    try:
        return pa.Table.from_pylist(batch, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        for row in batch:
            for name, kind in columns:
                value = row.get(name)
                if value is not None and not isinstance(value, _FITS[kind]):
                    where = f"run {row.get('run')} of case {row.get('case')!r}"
                    what = "no number" if kind in ("int64", "float64") else f"not {kind}"
                    raise StoreError(
                        f"the store is damaged: {name} of {where} is {value!r}, {what}"
                    ) from None
        raise
