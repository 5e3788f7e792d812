"""The one exception tree of passhat.

Every error a user can cause by what they wrote or asked for is a
`PasshatError`; the CLI prints its message in one line and exits non-zero.
Anything else keeps its traceback: it is a bug.

    PasshatError
     ├── InputError              bad input: a file, a field, an argument (exit 2)
     │    ├── VerdictFileError   a line of a verdict JSONL file
     │    ├── SuiteError         a suite folder, suite.yaml or a case file
     │    └── ConfigError        an agent, model, scorer or option that cannot be used
     ├── MetricsError            a statistic asked of numbers that cannot give it
     │    └── NoRunsError        no run at all: pass@k cannot be computed
     ├── StoreError              the SQLite store: unknown experiment, bad schema
     │    └── FingerprintMismatch  resume refused: the configuration changed
     ├── ExecutorError           the cluster running the runs failed (exit 1)
     │    ├── WorkerRefused      a worker cannot run this experiment as the driver would
     │    └── StopRuns           passhat cannot start another run as it should
     └── ModelError              a model provider failed
          ├── TransientModelError  worth retrying (429, 5xx, timeouts, resets)
          └── PermanentModelError  not worth retrying (400, 401, missing replay)
"""

from __future__ import annotations

from typing import Any


class PasshatError(Exception):
    """Base class of every error passhat raises on purpose."""

    exit_code: int = 2


class InputError(PasshatError, ValueError):
    """Something the user wrote or asked for cannot be used as it is."""


class VerdictFileError(InputError):
    """A verdict file (JSONL) is malformed; the message names the line."""


class SuiteError(InputError):
    """A suite is invalid. `problems` lists every problem found, one line each."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems: list[str] = problems or [message]


class ConfigError(InputError):
    """An agent, model, scorer or option cannot be used."""


class MetricsError(PasshatError, ValueError):
    """A statistic was asked of numbers that cannot give it (e.g. j > n)."""


class NoRunsError(MetricsError):
    """No run at all: pass@k cannot be computed (never reported as zero)."""


class StoreError(PasshatError):
    """The store cannot do what was asked (unknown experiment, newer schema...)."""


class FingerprintMismatch(StoreError):
    """Resume refused: the experiment's configuration is not the one stored."""


class ExecutorError(PasshatError):
    """The executor could not go on: the Dask scheduler was lost or unreachable.

    Not the user's input: finished runs are kept and `passhat resume` runs the rest."""

    exit_code = 1


class WorkerRefused(ExecutorError):
    """A worker's passhat, agent source, suite or model differs from the driver's."""


class StopRuns(ExecutorError):
    """passhat can start no more runs as it should (its own limits lowered under it: an
    agent at --isolation process, agents/own_limits.py). Raised out of a run, past its
    agent's failures, to the executor, which stops: the finished runs are kept, the rest
    stay missing for `passhat resume`."""

    def __init__(self, message: str, records: list[Any] | None = None) -> None:
        super().__init__(message)
        self.records: list[Any] = records or []
        """The RunRecords of a Dask worker's batch finished before the stop: its caller's
        to hand on (pickled with it, as the batch's result would have been)."""


class ModelError(PasshatError):
    """A model provider failed to answer."""


class TransientModelError(ModelError):
    """A failure worth retrying: rate limit, server error, timeout, reset."""

    def __init__(
        self,
        message: str,
        retry_after: float | None = None,
        *,
        unreachable: bool = False,
        abandoned: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable
        """The server could not be reached (refused, reset): it may be restarting."""
        self.abandoned = abandoned
        """The call was given up at --call-timeout: the server may finish it and bill its
        tokens, which passhat never sees."""


class PermanentModelError(ModelError):
    """A failure not worth retrying: bad request, bad key, no recorded answer."""
