"""Regrade: score a stored experiment's final states again, under a suite's current
goals and scorers. No agent runs, no model is called.

The result is a new experiment of kind `regrade`, linked to its source: same
agent, model, parameters, k and run indices, so `compare SOURCE REGRADE` pairs
the same runs under the two gradings. What changed is recorded where pooling
looks: the fingerprint hashes the source's fingerprint with the new goal and
scorer hashes, so a regrade never pools with its source or with a regrade under
other goals.

A run that errored before it reached grading (a crash, a timeout, a model
error) has no finished final state: it stays errored with its reason. A run
the old scorer could not grade (`scorer_error`) is graded again. Cases the
suite no longer has are left out, and named.

Its `suite_hash` stays the source's: the runs were made on that suite, and
`compare` refuses to pair runs of different suites. The new suite's hash is
kept in `source.suite_hash_now`.

The suite's hash is checked again before anything is regraded: a suite whose content
is not the one the source was graded under is refused, naming the case files that
differ, unless the caller says the change is theirs (`accept_changes`, the CLI's
`--accept-changes`). An agent that rewrote a goal outside a sandbox would otherwise
decide the regrade's verdicts; a person who fixed a goal says so once. The files
changed are recorded (`source.changed`). From the suite's load on (`tamper.load`), its
files are watched as a run's are (tamper.py): a run graded after they changed is errored
`suite_changed`, never given a verdict.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any

from passhat import tamper
from passhat.errors import InputError
from passhat.limits import LIMIT
from passhat.records import ExperimentRecord, RunRecord
from passhat.scoring import Score, ScorerError, forget_goal, grading, score_run
from passhat.sources import new_id, now, short_hash
from passhat.suite import Case, Suite, spec_dict


@dataclass(frozen=True)
class Change:
    """One run whose verdict changed."""

    case: str
    run: int
    before: str
    after: str


class Changes:
    """The verdicts a regrade changed, as `regrade_runs` appends them: how many, the first
    `shown`, and every one only when `keep_all` (`regrade --json` lists them all). A
    regrade of 100,000 runs that moved 56,000 verdicts held a `Change` and its case id
    for each (6 MB, spread over the heap while it copied) for a terminal that prints 20."""

    def __init__(self, shown: int, *, keep_all: bool = False) -> None:
        self.shown = shown
        self.keep_all = keep_all
        self._first: list[Change] = []
        self._rest: list[tuple[str, int, str, str]] = []
        self._count = 0

    def append(self, change: Change) -> None:
        self._count += 1
        if len(self._first) < self.shown:
            self._first.append(change)
        elif self.keep_all:  # a tuple of the same strings: no object and dict of its own
            self._rest.append((change.case, change.run, change.before, change.after))

    def __len__(self) -> int:
        return self._count

    def first(self) -> list[Change]:
        """The first `shown` changes, in the order they came."""
        return list(self._first)

    def __iter__(self) -> Iterator[Change]:
        """Every change, in order (only when `keep_all`)."""
        if not self.keep_all and self._count > len(self._first):
            raise ValueError("only the first changes were kept (Changes(keep_all=False))")
        yield from self._first
        for rest in self._rest:
            yield Change(*rest)


def scorer_hash(suite: Suite) -> str:
    """Hash of the suite's scorer specs (a scorer file's bytes are in the suite hash)."""
    # spec_dict writes the older kinds exactly as before, so their hashes are unchanged
    specs: list[dict[str, Any]] = [spec_dict(spec) for spec in suite.defaults.scorers]
    return short_hash({"scorers": specs, "suite_hash": suite.hash})


def goal_hashes(cases: Sequence[Case]) -> dict[str, str]:
    return {c.id: short_hash(c.goal) for c in cases}


DEFAULT_TIMEOUT_S = 300.0
"""Seconds a user's scorer may take on one run when the source recorded no run timeout."""


class _ScorerTimeout(ScorerError):
    """A user's scorer did not return within the timeout."""


def scorer_timeout(source: ExperimentRecord) -> float:
    """The source's own run timeout (`params.timeout_s`), else DEFAULT_TIMEOUT_S."""
    value = source.params.get("timeout_s") if isinstance(source.params, dict) else None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok else DEFAULT_TIMEOUT_S  # type: ignore[arg-type]


Scored = dict[int, tuple[Any, Score]]
"""A case's scores so far when only the built-in scorers grade (`regrade_runs`): by the
id of the final state scored, held with it (so that the id is not reused)."""


def _score_within(
    suite: Suite, case: Case, run: RunRecord, timeout_s: float, scored: Scored | None = None
) -> Score:
    """Score one run; a user's scorer runs in a daemon thread bounded by `timeout_s` (a
    scorer that blocks is left behind, the run errored), and one that calls sys.exit or
    raises any BaseException makes the run errored instead of ending the regrade. With
    `scored` (the built-in scorers alone: a score follows from the case and the final
    state), a final state scored before for this case is not scored again."""

    def grade() -> Score:
        # a judge replays by (case, run index): regrading keeps each run's own
        return score_run(suite, case, run.final_state, run_index=run.run_index, seed=run.seed)

    if scored is not None:
        held = scored.get(id(run.final_state))
        if held is None:
            held = scored[id(run.final_state)] = (run.final_state, grade())
        return held[1]
    if grading(suite) != "blocks":
        return grade()
    outcome: list[Score | BaseException] = []

    def work() -> None:
        try:
            outcome.append(grade())
        except BaseException as error:  # SystemExit too: it must not end the regrade
            outcome.append(error)

    worker = threading.Thread(target=work, name="passhat-regrade-scorer", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive() or not outcome:
        raise _ScorerTimeout(f"the scorer did not finish within {timeout_s:g} s (regrade)")
    result = outcome[0]
    if isinstance(result, ScorerError):
        raise result
    if isinstance(result, SystemExit):
        raise ScorerError(f"the scorer called sys.exit({result.code!r})")
    if isinstance(result, BaseException):
        raise ScorerError(f"the scorer raised {type(result).__name__}")
    return result


_RUN_FIELDS = frozenset(f.name for f in fields(RunRecord))


def _replaced(run: RunRecord, **changes: Any) -> RunRecord:
    """`dataclasses.replace(run, **changes)`: a RunRecord has no `__post_init__` and its
    `__init__` only sets the fields, so they are copied as they are (replace's call of
    `__init__` with 23 arguments was a tenth to a sixth of a regrade's Python time)."""
    unknown = changes.keys() - _RUN_FIELDS
    if unknown:
        raise TypeError(f"RunRecord has no field {sorted(unknown)[0]!r}")
    new = object.__new__(RunRecord)
    held = new.__dict__
    held.update(run.__dict__)
    held.update(changes)
    return new


def regrade_run(
    suite: Suite,
    case: Case,
    run: RunRecord,
    experiment_id: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    scored: Scored | None = None,
    *,
    guard: tamper.SuiteGuard | None = None,
) -> RunRecord:
    """One stored run scored again; an agent-side error stays as it was. `scored`: the
    case's scores so far, when a score follows from the final state (`regrade_runs`).
    `guard`: the regrade's watch on the suite's files (`regrade_runs` makes one); a run
    graded after they changed is errored suite_changed (without one, none is looked at)."""
    moved: dict[str, Any] = {"experiment_id": experiment_id, "case_hash": case.hash}
    if run.status == "errored" and run.error_type != "scorer_error":
        return _replaced(run, **moved)
    reason = tamper.changed(guard, case.file_text)  # its text: `case.file` makes a Path
    if reason is not None:
        return _replaced(
            run,
            **moved,
            status="errored",
            error_type="suite_changed",
            error_message=reason,
            score=[],
        )
    try:
        score = _score_within(suite, case, run, timeout_s, scored)
    except ScorerError as error:
        return _replaced(
            run,
            **moved,
            status="errored",
            error_type="timeout" if isinstance(error, _ScorerTimeout) else "scorer_error",
            error_message=str(error),
            score=[],
        )
    return _replaced(
        run,
        **moved,
        status="passed" if score.passed else "failed",
        # a run a limit stopped stays marked (it reached that state because of it)
        error_type=LIMIT if run.error_type == LIMIT else None,
        error_message=run.error_message if run.error_type == LIMIT else None,
        score=score.details,
    )


def check_regradable(source: ExperimentRecord) -> None:
    """Only runs made on a passhat suite (run, or regraded) have final states to grade."""
    if source.kind in ("imported", "audited"):
        tool = (source.source or {}).get("tool", "elsewhere")
        raise InputError(
            f"experiment {source.name or source.id} is {source.kind} ({tool}): its final "
            "states are not a passhat suite's; regrade works on experiments passhat ran"
        )


def graded_under(source: ExperimentRecord) -> str:
    """The hash of the suite `source`'s verdicts were given under: the one its runs were
    made on, or, for a regrade, the one it regraded them under."""
    now_hash = (source.source or {}).get("suite_hash_now") if source.kind == "regrade" else None
    return str(now_hash) if now_hash else source.suite_hash


def suite_changes(source: ExperimentRecord, suite: Suite) -> tuple[str, ...]:
    """What of `suite` is not what `source` was graded under (empty: nothing): the files
    of its cases whose input, fixtures or goal differ, or else the rest of the suite."""
    if suite.hash == graded_under(source):
        return ()
    root = suite.path
    out = []
    for case in suite.cases:
        recorded = source.case_hashes.get(case.id)
        if recorded is not None and recorded != case.hash:
            try:
                where = case.file.relative_to(root).as_posix()
            except ValueError:
                where = str(case.file)
            out.append(f"{where} (case {case.id})")
    if not out:
        out.append(
            "suite.yaml, a file it names (a scorer's, an environment's) or a case not regraded"
        )
    return tuple(out)


def check_unchanged(source: ExperimentRecord, suite: Suite, changes: tuple[str, ...]) -> None:
    """Refuse a regrade under a suite that changed since `source` was graded, naming what
    changed and the two ways on."""
    if not changes:
        return
    shown = ", ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3 else "")
    raise InputError(
        f"the suite at {suite.path} changed since experiment {source.name or source.id} was "
        f"graded: {shown}; if you changed it, regrade with --accept-changes; if not, "
        "something rewrote it: restore it (e.g. git checkout) and regrade. Nothing was written"
    )


def regrade_experiment(
    source: ExperimentRecord,
    suite: Suite,
    *,
    name: str | None = None,
    accept_changes: bool = False,
) -> tuple[ExperimentRecord, tuple[str, ...]]:
    """The regrade experiment of `source` under `suite` (its runs come from
    `regrade_runs`), and its notes. A suite that changed since `source` was graded is
    refused (InputError naming the files) unless `accept_changes`."""
    check_regradable(source)
    cases = {c.id: c for c in suite.cases}
    kept = tuple(c for c in source.case_ids if c in cases)
    dropped = tuple(c for c in source.case_ids if c not in cases)
    if not kept:
        raise InputError(
            f"suite {suite.name!r} ({suite.path}) has none of the cases of experiment "
            f"{source.name or source.id}; give --suite the folder it ran on"
        )
    changes = suite_changes(source, suite)
    if not accept_changes:
        check_unchanged(source, suite, changes)
    goals = goal_hashes([cases[c] for c in kept])
    scorers = scorer_hash(suite)
    from passhat import __version__

    experiment = ExperimentRecord(
        id=new_id(),
        name=name,
        created_at=now(),
        suite_name=suite.name,
        suite_path=str(suite.path),
        suite_hash=source.suite_hash,
        agent=source.agent,
        model=source.model,
        model_config=source.model_config,
        params=source.params,
        prompt_version=source.prompt_version,
        k_requested=source.k_requested,
        case_k={c: k for c, k in source.case_k.items() if c in kept},
        seed=source.seed,
        harness_version=__version__,
        fingerprint=short_hash(
            {
                "regrade_of": source.fingerprint,
                "goal_hashes": goals,
                "scorer_hash": scorers,
            }
        ),
        case_ids=kept,
        case_hashes={c: cases[c].hash for c in kept},
        tools=source.tools,
        agent_hash=source.agent_hash,
        kind="regrade",
        source={
            "tool": "regrade",
            "experiment": source.id,
            "experiment_name": source.name,
            "fingerprint": source.fingerprint,
            "suite_hash_now": suite.hash,
            "goal_hashes": goals,
            "scorer_hash": scorers,
            "cases_dropped": list(dropped),
            "changed": list(changes),
        },
    )
    notes = [f"cases the suite no longer has, left out: {', '.join(dropped)}"] if dropped else []
    if changes:
        notes.append(f"the suite changed since the source was graded: {', '.join(changes)}")
    return experiment, tuple(notes)


def regrade_runs(
    suite: Suite,
    experiment: ExperimentRecord,
    runs: Iterable[RunRecord],
    changes: list[Change] | Changes,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    guard: tamper.SuiteGuard | None = None,
) -> Iterator[RunRecord]:
    """The source's runs of the regrade's cases scored again, one at a time as `runs`
    gives them (a store writes each before the next is read); every verdict that
    changed is appended to `changes`.

    When the built-in scorers alone grade, a score follows from the case and the final
    state: runs of a case that share one final state value (`Store.graded` gives runs
    stored with the same text one value) are scored once. Each run is still looked at
    for a changed suite before it is given that score, by `guard`: the suite's files
    watched since it was loaded (`tamper.load`, its caller's to close); without one, a
    guard of this regrade's own watches them from the first run read (tamper.py)."""
    cases = {c.id: c for c in suite.cases}
    kept = set(experiment.case_ids)
    scored: Scored | None = {} if grading(suite) in ("reads", "searches") else None
    last: Case | None = None
    own = tamper.watch(suite) if guard is None else None  # its files as they are now
    guard = own or guard
    try:
        for run in runs:
            if run.case_id not in kept:
                continue
            case = cases[run.case_id]
            if case is not last:  # a case's runs come together: each case its own scores
                if scored is not None:
                    scored.clear()
                if last is not None:
                    forget_goal(suite, last)  # and its goal, done with, let go
                last = case
            again = regrade_run(suite, case, run, experiment.id, timeout_s, scored, guard=guard)
            if again.status != run.status:
                # the suite's case id and an interned status: no copy of the row's kept each
                changes.append(Change(case.id, run.run_index, sys.intern(run.status), again.status))
            yield again
        if last is not None:
            forget_goal(suite, last)
    finally:
        if own is not None:
            own.close()
