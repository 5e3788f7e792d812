"""What a caller of `evaluate` / `resume` hears while runs are made (`Events`, a cassette's
`CassetteGaps`) and `Interrupted`, the `KeyboardInterrupt` that says how many runs were
recorded. Nothing here prints: the CLI's subclass of `Events` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from passhat.records import ExperimentRecord, RunRecord
from passhat.results import WorkItem


@dataclass(frozen=True)
class CassetteGaps:
    """A replay cassette lacks the first answer of runs about to be made: they will error."""

    cassette: str
    """The cassette's file name."""
    gaps: tuple[WorkItem, ...]
    """The runs without a first answer, in plan order."""
    runs: int
    """Runs about to be made."""

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(case for case, _ in self.gaps))


class Events:
    """What a caller hears while an experiment runs. Every method does nothing here;
    the CLI's subclass prints, a notebook's may draw a bar. A method that raises stops
    the experiment (the runs already recorded stay)."""

    def started(self, experiment: ExperimentRecord, runs: int, store: Path) -> None:
        """A new experiment was stored; `runs` are planned."""

    def resuming(self, experiment: ExperimentRecord, runs: int) -> None:
        """`resume` found `runs` to make (missing, new indices, errored ones again)."""

    def cassette_gaps(self, gaps: CassetteGaps) -> None:
        """Some of the runs about to be made have no answer on the replay cassette."""

    def lease_broken(self, experiment: ExperimentRecord, holder: str | None) -> None:
        """`break_lease`: the lease of `holder` (None: there was none) was broken."""

    def rounds_planned(self, lines: Sequence[str]) -> None:
        """Adaptive rounds are about to start: their rule, how a baseline is treated and
        the most runs they can cost, in plain lines."""

    def round_started(self, experiment: ExperimentRecord, runs: int) -> None:
        """A round of `runs` runs begins (one round, or one per adaptive look; the
        baseline's when it is re-run alongside)."""

    def recorded(self, run: RunRecord) -> None:
        """A run was written to the store (its transaction committed)."""

    def round_ended(self, experiment: ExperimentRecord) -> None:
        """The round ended: finished, failed or interrupted."""

    def left_missing(self, runs: Sequence[WorkItem]) -> None:
        """An executor gave up on these runs (their workers kept dying): still missing."""

    def workers_refused(self, refused: Sequence[str]) -> None:
        """An executor refused these workers (each: the worker and what differs); they
        ran none of the runs, which the others made."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the experiment. Every run finished before it is
    recorded; the runs in flight stay missing and `resume` makes them."""

    def __init__(self, experiment: ExperimentRecord, recorded: int, signum: int) -> None:
        super().__init__(f"experiment {experiment.name or experiment.id} interrupted")
        self.experiment = experiment
        self.recorded = recorded
        """Runs of the experiment in the store."""
        self.signum = signum
        """signal.SIGINT (Ctrl-C) or signal.SIGTERM."""
