"""A stored experiment read back as objects: what `passhat report --json` answers.

`Experiment` is what `passhat.evaluate()` and `passhat.resume()` return and what
`passhat.open(db)` reads. It holds the experiment's record and where its store is;
every part (accounting, intervals, item stability, tool use) is read from the store
the first time it is asked for, by the same code `passhat report` uses, and kept:
an `Experiment` is a snapshot, and `passhat.open(db).experiment(ref)` reads afresh.
`Outcome` (what the call did) lives here too, so passhat.evaluation imports this
module and nothing here names passhat.evaluation, not even for types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.records import ExperimentRecord, RunJson, RunRecord
from passhat.store import Store, default_db_path

if TYPE_CHECKING:
    from rich.console import Console

    from passhat.accounting import Accounting, CaseAccount, DatasetSummary
    from passhat.adaptive import Adaptive
    from passhat.analysis import ItemStability, ToolUse
    from passhat.divergence import RunDiff
    from passhat.gate import Gate, Requirement
    from passhat.records import RunSummary
    from passhat.signatures import Why
    from passhat.stats import Comparison, Metric, Uncertainty


WorkItem = tuple[str, int]
"""(case id, 1-based run index): one planned run."""


@dataclass(frozen=True)
class Outcome:
    """What one `evaluate` or `resume` call did (the store says what the experiment holds)."""

    planned: int
    """Runs the call set out to make in its first round (0: nothing was left to do)."""
    rounds: Adaptive | None = None
    """The adaptive rounds' record (rule, looks, stop reason, runs spent), when asked for."""
    left_missing: tuple[WorkItem, ...] = ()
    """Runs an executor gave up on: missing, never counted; `resume` runs them again."""
    require: tuple[Requirement, ...] = ()
    """The call's requirements (`require=`): `Experiment.gate()` judges them."""


class Experiment:
    """One stored experiment: its record, accounting, figures with their labels and
    intervals, item stability and tool use, as `passhat report` computes them."""

    def __init__(
        self, path: str | Path, record: ExperimentRecord, outcome: Outcome | None = None
    ) -> None:
        self.path = Path(path)
        """The SQLite store it lives in."""
        self.record = record
        """The experiment's record: suite, agent, model, parameters, k, fingerprint."""
        self.outcome = outcome
        """What the `evaluate` / `resume` call that returned it did (None when read by `open`)."""

    # --- reading the store

    def _store(self) -> Store:
        return Store(self.path, create=False, read_only=True)

    def summaries(self, *, decode_items: bool = True) -> list[RunSummary]:
        """What a report reads of every run (status, error, tokens, items), by case and index."""
        with self._store() as store:
            return store.summaries(self.record.id, decode_items=decode_items)

    def runs(self, cases: Sequence[str] | None = None) -> list[RunRecord]:
        """Every run whole (transcript, tool calls, final state, score), by case and index."""
        with self._store() as store:
            return store.runs(self.record.id, cases=cases)

    # --- what `report --json` answers

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def name(self) -> str | None:
        return self.record.name

    @cached_property
    def accounting(self) -> Accounting:
        """Requested / completed / counted / errored / missing runs, per case and in all
        (from each run's status alone, streamed)."""
        from passhat.accounting import account

        r = self.record
        with self._store() as store:
            return account(store.statuses(r.id), r.k_requested, r.case_ids, r.case_k)

    @property
    def cases(self) -> tuple[CaseAccount, ...]:
        """Per case: counts, the missing and errored runs, and `metrics` (pass rate,
        pass@n, pass^n over its n counted runs; None with no counted run)."""
        return self.accounting.cases

    @property
    def dataset(self) -> DatasetSummary | None:
        """The dataset figures, labelled pass@j / pass^j for a j every included case
        reaches, with the cases left out named; None when no run was counted."""
        if self.accounting.runs_counted == 0:
            return None
        return self.accounting.dataset()

    @cached_property
    def uncertainty(self) -> Uncertainty | None:
        """Intervals (per case and for the dataset) and the forecast of the next 10 runs,
        as `passhat report` shows them; None when no run was counted."""
        from passhat.report.experiment import experiment_uncertainty

        if self.accounting.runs_counted == 0:
            return None
        return experiment_uncertainty(self.accounting, 10)

    @cached_property
    def items(self) -> tuple[ItemStability, ...]:
        """Item stability: each goal item (and each extra) of each case over its counted runs."""
        from passhat.analysis import item_stability

        return tuple(item_stability(self.summaries()))

    @cached_property
    def tools(self) -> tuple[ToolUse, ...]:
        """Tool use per case: runs calling each tool, calls per run, errors."""
        from passhat.analysis import tool_profile

        return tuple(tool_profile(self.summaries(decode_items=False), self.record.tools))

    @property
    def pass_rate(self) -> float | None:
        """The headline pass rate of the included cases (None: nothing counted): all passes /
        all counted runs when every case counted the same runs, else the mean of per-case
        rates, each case once (`DatasetMetrics.pass_rate`; over runs: `metrics.pass_at_1`)."""
        d = self.dataset
        return None if d is None else d.metrics.pass_rate

    @property
    def pass_at_k(self) -> float | None:
        """Share of cases passing at least once in j runs (j: `dataset.j`)."""
        d = self.dataset
        return None if d is None else d.metrics.pass_at_j

    @property
    def pass_hat_k(self) -> float | None:
        """Share of cases passing all j of j runs (j: `dataset.j`)."""
        d = self.dataset
        return None if d is None else d.metrics.pass_hat_j

    def gate(self, require: Iterable[str | Requirement] | str | None = None) -> Gate:
        """The requirements judged on the figures (`--require`; default: those given to the
        `evaluate` / `resume` call that returned it): each shortfall names the figure, its
        value and interval, and the cases behind it with their failed runs and missed items."""
        from passhat.gate import judge, requirements

        rules = requirements(require)
        if require is None and self.outcome is not None:
            rules = self.outcome.require
        if not rules:
            return judge((), self.accounting, None)
        runs = self.summaries()
        from passhat.analysis import item_stability

        return judge(rules, self.accounting, self.uncertainty, runs, item_stability(runs))

    def exit_code(
        self, *, strict: bool = False, require: Iterable[str | Requirement] | str | None = None
    ) -> int:
        """What `passhat run` exits with: 1 when no run was counted (never a success),
        with `strict` when any requested run was not counted, and when a requirement
        (`require`, else the call's) falls short; else 0."""
        a = self.accounting
        if a.runs_counted == 0 or (strict and not a.complete):
            return 1
        return 0 if self.gate(require).passed else 1

    def to_dict(self, *, forecast_m: int = 10) -> dict[str, Any]:
        """`passhat report --json`, as a dict."""
        from passhat.report.experiment import experiment_dict
        from passhat.usage import Unseen

        runs = self.summaries()
        with self._store() as store:
            unseen = Unseen(tuple(store.attempt_tokens(self.id)), store.abandoned_calls(self.id))
        counted = (sum(r.input_tokens for r in runs), sum(r.output_tokens for r in runs))
        return experiment_dict(
            self.record, runs, forecast_m=forecast_m, unseen=unseen.to_dict(*counted, None)
        )

    # --- shown

    def report(self, console: Console | None = None, *, lang: str = "en") -> None:
        """Print the terminal report to `console` (default: stdout), as `passhat run`
        ends with it: `passhat report` adds why runs differ (see `diff`, `why`)."""
        from passhat.report.console import SafeConsole
        from passhat.report.experiment import print_experiment_report

        out = console if console is not None else SafeConsole()
        print_experiment_report(out, self.record, self.summaries(decode_items=False), lang=lang)

    def html(self, path: str | Path, *, lang: str = "en") -> Path:
        """Write the self-contained HTML report (`passhat report --html`); return its path."""
        from passhat.report.html import write_html

        with self._store() as store:
            runs = store.summaries(self.record.id, decode_items=False)

            def load(cases: Sequence[str]) -> list[RunJson]:
                return store.runs_json(self.record.id, cases)

            return write_html(path, self.record, runs, lang=lang, load=load)

    def compare(
        self,
        baseline: Experiment,
        *,
        metric: Metric = "pass@1",
        confidence: float = 0.95,
        seed: int = 0,
        allow_different_suites: bool = False,
    ) -> Comparison:
        """`passhat compare baseline self`: this experiment is B, `baseline` is A; the
        differences with intervals, p-values and a verdict, paired by case."""
        from passhat.adaptive import varied_k_notes
        from passhat.stats import check_suites, compare

        notes = check_suites(
            baseline.record.suite_hash,
            self.record.suite_hash,
            allow_different=allow_different_suites,
        )
        notes += varied_k_notes((("A", baseline.accounting), ("B", self.accounting)))
        return compare(
            baseline.accounting,
            self.accounting,
            metric=metric,
            confidence=confidence,
            seed=seed,
            notes=notes,
        )

    # --- why runs differ

    def diff(self, case: str, a: int, b: int, *, other: Experiment | None = None) -> RunDiff:
        """Run `a` beside run `b` of `case` (`passhat diff`): items, output and final state
        diffed, tool calls aligned, and where they part (turns, else tool calls, else
        outputs). `other`: run `b` is of that experiment."""
        from passhat.divergence import diff_runs

        with self._store() as store:
            run_a = store.run(self.record.id, case, a)
        target = other if other is not None else self
        with target._store() as store:
            run_b = store.run(target.record.id, case, b)
        return diff_runs(run_a, run_b)

    def why(
        self,
        *,
        item: str | None = None,
        adjust: str = "bh",
        alpha: float = 0.05,
        features: Mapping[str, Callable[[RunRecord], Any]] | None = None,
        whole_runs: bool | None = None,
        seed: int = 0,
    ) -> Why:
        """What goes with a miss (`passhat why`): for each goal item (or only `item`, or
        `pass` for pass/fail), the run features found within case to go with missing it,
        adjusted for every test (`adjust`: bh or holm), ranked by effect with an interval.
        `features`: the user's own, name -> function of a run (bool, number or text).
        `whole_runs`: read every run whole for argument, turn and first-divergence
        features (default: up to `passhat.signatures.WHOLE_RUNS` runs; user features
        need it)."""
        from passhat.signatures import WHOLE_RUNS, explain

        summaries = self.summaries()
        whole = (
            (len(summaries) <= WHOLE_RUNS or bool(features)) if whole_runs is None else whole_runs
        )

        def load(cases: Sequence[str]) -> list[RunRecord]:
            with self._store() as store:
                return store.runs(self.record.id, cases=cases)

        return explain(
            self.record,
            summaries,
            load if whole else None,
            item=item,
            adjust=adjust,
            alpha=alpha,
            features=features,
            seed=seed,
        )

    def __repr__(self) -> str:
        return f"<Experiment {self.name or self.id} of {self.record.suite_name} in {self.path}>"

    def __str__(self) -> str:
        return "\n".join(summary_lines(self.record, self.accounting))


def summary_lines(record: ExperimentRecord, a: Accounting) -> list[str]:
    """The figures in plain text: a header, the accounting, the dataset and each case."""
    from passhat.plain import plural

    lines = [
        f"experiment {record.name + ' (' + record.id + ')' if record.name else record.id}: "
        f"suite {record.suite_name}, "
        f"agent {record.agent}, model {record.model or '-'}, k = {record.k_requested}",
        f"runs: requested {a.runs_requested}, completed {a.runs_completed}, counted "
        f"{a.runs_counted}, errored {a.runs_errored}, missing {a.runs_missing}",
    ]
    if a.runs_counted == 0:
        lines.append("no run was counted: pass@k cannot be computed")
    else:
        d = a.dataset()
        m = d.metrics
        lines.append(
            f"dataset ({plural(m.cases, 'case')}): pass rate {m.passes}/{m.runs} "
            f"({m.pass_at_1:.0%}), {d.label_at} {m.pass_at_j:.0%}, {d.label_hat} "
            f"{m.pass_hat_j:.0%}"
        )
        if d.excluded:
            lines.append(f"left out (no counted run): {', '.join(d.excluded)}")
    for c in a.cases:
        lines.append(_case_line(c))
    return lines


def _case_line(c: CaseAccount) -> str:
    m = c.metrics
    if m is None:
        return f"  {c.case}: no counted run of {c.k_requested}"
    line = (
        f"  {c.case}: {m.passes}/{m.k} passes, pass@{m.k} {'yes' if m.pass_at_k else 'no'}, "
        f"pass^{m.k} {'yes' if m.pass_hat_k else 'no'}"
    )
    if c.errored:
        line += f"; errored runs {', '.join(map(str, c.errored))}"
    if len(c.missing):
        line += f"; missing runs {', '.join(map(str, c.missing[:10]))}"
        line += " ..." if len(c.missing) > 10 else ""
    return line


class Experiments:
    """The experiments of one store, read (`passhat.open(db)`)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        with Store(self.path, create=False, read_only=True):
            pass  # a store that is not there is said now, not at the first read

    def experiment(self, ref: str = "latest") -> Experiment:
        """An experiment by id, unique name, or 'latest'."""
        with Store(self.path, create=False, read_only=True) as store:
            return Experiment(self.path, store.experiment(ref))

    def latest(self) -> Experiment:
        return self.experiment("latest")

    def __iter__(self) -> Iterator[Experiment]:
        with Store(self.path, create=False, read_only=True) as store:
            records = store.experiments()
        return iter([Experiment(self.path, r) for r in records])

    def __len__(self) -> int:
        with Store(self.path, create=False, read_only=True) as store:
            return len(store.experiments())

    def __repr__(self) -> str:
        return f"<Experiments in {self.path}>"


def open_store(db: str | Path | None = None) -> Experiments:
    """The experiments of the store at `db` (default: $PASSHAT_DB, else ./passhat.db)."""
    return Experiments(db)


def why(experiment: str = "latest", *, db: str | Path | None = None, **options: Any) -> Why:
    """`passhat why EXPERIMENT`: `open(db).experiment(experiment).why(**options)`."""
    return open_store(db).experiment(experiment).why(**options)
