"""Running an experiment: the one library call behind `passhat run`, `passhat resume`,
the pytest plugin and a notebook.

    evaluate / resume   check everything, build the experiment (or read it back), take
                        its lease, then the rounds (one, or adaptive ones)
    _round              one event loop: the runner makes the missing runs and writes
                        each in one transaction; SIGTERM ends it as Ctrl-C does
    Experiment          what was stored, read back (passhat.results)

Nothing here prints. What a caller may want to show while runs are made (the plan,
each finished run, a cassette that lacks answers) comes through `Events`; what the
call did comes back as data (`Experiment.outcome`); an interrupted call raises
`Interrupted`, a `KeyboardInterrupt` that says how many runs were recorded.

The rooms: events.py (Events, CassetteGaps, Interrupted), checks.py (values and
keywords refused before anything runs), planning.py (what an experiment is made of:
`_Made`, `_Setup`), running.py (the rounds on their own loop), calls.py (evaluate,
resume).
"""

from __future__ import annotations

from passhat.evaluation.calls import evaluate, evaluate_async, resume, resume_async
from passhat.evaluation.checks import check_k, check_retry, checked
from passhat.evaluation.events import CassetteGaps, Events, Interrupted
from passhat.evaluation.planning import ISOLATION_ENV, AgentLike, ModelLike, cassette_gaps

__all__ = [
    "ISOLATION_ENV",
    "AgentLike",
    "CassetteGaps",
    "Events",
    "Interrupted",
    "ModelLike",
    "cassette_gaps",
    "check_k",
    "check_retry",
    "checked",
    "evaluate",
    "evaluate_async",
    "resume",
    "resume_async",
]
