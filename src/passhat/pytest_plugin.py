"""passhat under pytest: run a case k times in a test and assert on pass^k.

Loaded by pytest through the `pytest11` entry point (`pip install 'passhat[pytest]'`).
Two doors to the same `passhat.evaluate()` call:

    @pytest.mark.passhat("examples/clarify", case="ac-conflict-001", k=3)
    def test_coupon_card(passhat_result):
        assert passhat_result.pass_hat_k >= 0.8

    def test_coupon_card_again(passhat_eval):
        result = passhat_eval("examples/clarify", case="ac-conflict-001", k=3)
        assert result.pass_rate >= 0.5

An errored run (the agent crashed, timed out, the model failed) is no verdict, so
it is never counted as a failure: unless the test passes `allow_errored=True`, a
result with an errored or missing run raises `RunsNotCounted` naming those runs
(the test errors when the marker ran it, fails when the fixture was called in its
body). With `allow_errored=True` the figures are over the counted runs only, and
their labels say so (pass^2 of 3 requested).

`require=["pass^k>=0.8"]` (marker or fixture) is the same gate as `passhat run
--require` (`passhat.Requirement`): a shortfall fails the test, naming the figure,
its interval, the cases behind it, their failed runs and missed goal items. Every
result's figures and accounting go into the test's JUnit `<properties>` (as
`record_property` does), the same names `passhat run --junit-xml` writes.

`--passhat-k K` overrides every test's k; `--passhat-db PATH` is the store
(default: $PASSHAT_DB, else ./passhat.db), so `passhat report` reads the runs
afterwards. The terminal summary lists, per test, the runs requested, counted,
errored and missing beside the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import pytest

if TYPE_CHECKING:
    from passhat.accounting import Accounting, DatasetSummary
    from passhat.gate import Requirement
    from passhat.results import Experiment

_RESULTS = pytest.StashKey[list["PasshatResult"]]()
_GATE = pytest.StashKey["PasshatResult"]()

MARKER = (
    "passhat(suite, *, case=None, cases=None, k=None, agent=None, model=None, "
    "allow_errored=False, require=None, **options): run the case(s) k times with "
    "passhat.evaluate(); the test gets the result as the `passhat_result` fixture"
)


class RunsNotCounted(Exception):
    """Some requested runs have no verdict (errored) or no record (missing): figures
    over the others would count them as neither passes nor failures without saying so."""


class _Count:
    """A count of a result's runs, read off its experiment's accounting when asked."""

    def __init__(self, read: Callable[[Accounting], int], doc: str | None = None) -> None:
        self._read = read
        self.__doc__ = doc

    @overload
    def __get__(self, result: None, owner: type[PasshatResult]) -> _Count: ...
    @overload
    def __get__(self, result: PasshatResult, owner: type[PasshatResult]) -> int: ...
    def __get__(self, result: PasshatResult | None, owner: type[PasshatResult]) -> int | _Count:
        return self if result is None else self._read(result.experiment.accounting)


@dataclass(frozen=True, repr=False)
class PasshatResult:
    """The runs of one test's evaluation and the three numbers over its counted runs."""

    experiment: Experiment
    """The stored experiment (`passhat report ID` shows it whole)."""
    nodeid: str
    """The test that made it."""

    requested = _Count(attrgetter("runs_requested"))
    completed = _Count(attrgetter("runs_completed"))
    counted = _Count(
        attrgetter("runs_counted"),
        "Runs with a verdict (passed or failed): the figures' denominator.",
    )
    errored = _Count(attrgetter("runs_errored"))
    missing = _Count(attrgetter("runs_missing"))
    passes = _Count(lambda accounting: sum(c.passes for c in accounting.cases))

    @property
    def errored_runs(self) -> tuple[tuple[str, int], ...]:
        return tuple((c.case, i) for c in self.experiment.accounting.cases for i in c.errored)

    @property
    def missing_runs(self) -> tuple[tuple[str, int], ...]:
        return tuple((c.case, i) for c in self.experiment.accounting.cases for i in c.missing)

    @property
    def k(self) -> int:
        """The j of pass@j and pass^j: counted runs every included case reaches."""
        return self._dataset().metrics.j

    @property
    def pass_rate(self) -> float:
        """The headline pass rate (pass@1): passes / counted runs when every case counted the
        same runs, else the mean of per-case rates (`DatasetMetrics.pass_rate`)."""
        return self._dataset().metrics.pass_rate

    @property
    def pass_at_k(self) -> float:
        """Share of cases that passed at least once in k runs (one case: 1.0 or 0.0)."""
        return self._dataset().metrics.pass_at_j

    @property
    def pass_hat_k(self) -> float:
        """Share of cases that passed all k runs (one case: 1.0 or 0.0)."""
        return self._dataset().metrics.pass_hat_j

    def _dataset(self) -> DatasetSummary:
        dataset = self.experiment.dataset
        if dataset is None:
            raise RunsNotCounted(
                f"no run of experiment {self.experiment.id} was counted: pass@k cannot be computed"
            )
        return dataset

    def line(self) -> str:
        """The accounting and the figures on one line."""
        counts = (
            f"runs requested {self.requested}, counted {self.counted}, "
            f"errored {self.errored}, missing {self.missing}"
        )
        if self.counted == 0:
            return f"{counts}; no figures (nothing counted)"
        d = self._dataset()
        m = d.metrics
        return (
            f"{counts}; pass rate {m.passes}/{m.runs} ({m.pass_at_1:.0%}), "
            f"{d.label_at} {m.pass_at_j:.0%}, {d.label_hat} {m.pass_hat_j:.0%}"
        )

    def short_cases(self) -> list[str]:
        """Each case short of passing every counted run: its failed runs and missed items."""
        from passhat.analysis import item_stability
        from passhat.gate import case_shorts

        accounting = self.experiment.accounting
        short = [c.case for c in accounting.cases if c.counted and c.passes < c.counted]
        if not short:
            return []
        runs = [r for r in self.experiment.summaries() if r.case_id in set(short)]
        cases = case_shorts(accounting, runs, item_stability(runs))
        return [cases[case].text() for case in short]

    def __str__(self) -> str:
        return self.line()

    def __repr__(self) -> str:  # what pytest shows beside a failed assert
        return f"<PasshatResult of {self.experiment.id}: {self.line()}>"


def _not_counted(result: PasshatResult) -> str | None:
    """Why the result's figures would hide runs; None when every requested run counts."""
    if not result.errored and not result.missing:
        return None
    runs = result.experiment.summaries(decode_items=False)
    errors = [
        f"{r.case_id} run {r.run_index}: {r.error_type}: {r.error_message}"
        for r in runs
        if r.status == "errored"
    ]
    parts = []
    if errors:
        shown = "; ".join(errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
        parts.append(f"{result.errored} of {result.requested} runs errored ({shown})")
    if result.missing:
        shown = ", ".join(f"{case} run {i}" for case, i in result.missing_runs[:5])
        parts.append(f"{result.missing} missing ({shown})")
    return (
        "; ".join(parts)
        + ". An errored run has no verdict and is not a failure: fix its cause, or pass "
        "allow_errored=True to judge the counted runs alone "
        f"(see `passhat report {result.experiment.id}`)"
    )


class PasshatEval:
    """`passhat_eval(suite, case=..., k=...)`: one `passhat.evaluate()` call per use."""

    def __init__(self, node: pytest.Item, here: Path | None, *, defer_gate: bool = False) -> None:
        self._config = node.config
        self._node = node
        self._nodeid = node.nodeid
        self._here = here
        self._defer_gate = defer_gate
        """The marker's call (fixture set-up): the gate fails the test's call, not its set-up."""

    def __call__(
        self,
        suite: str | Path,
        *,
        case: str | None = None,
        cases: Sequence[str] | None = None,
        k: int | None = None,
        allow_errored: bool = False,
        require: Sequence[str | Requirement] | str | None = None,
        **options: Any,
    ) -> PasshatResult:
        """Run `case` (or `cases`; default: every case) k times; `options` are
        `passhat.evaluate()`'s (agent, model, concurrency, timeout...). `require`
        ("pass^k>=0.8"...) fails the test when a figure falls short."""
        __tracebackhide__ = True  # a failure shows the test's line, not the plugin's
        from passhat.evaluation import evaluate

        if isinstance(cases, str):
            cases = [cases]
        chosen = list(cases or []) + ([case] if case is not None else [])
        override = self._config.getoption("passhat_k")
        db = self._config.getoption("passhat_db")
        experiment = evaluate(
            self._suite(suite),
            cases=chosen,
            k=override if override is not None else k,
            db=db,
            require=require,
            **options,
        )
        result = PasshatResult(experiment, self._nodeid)
        self._config.stash[_RESULTS].append(result)
        self._record_properties(result)
        why = _not_counted(result)
        if why is not None and not allow_errored:
            raise RunsNotCounted(why)
        if self._defer_gate:
            self._node.stash[_GATE] = result
        else:
            _fail_short(result)
        return result

    def _record_properties(self, result: PasshatResult) -> None:
        """The figures and accounting as the test's JUnit properties (`record_property`)."""
        from passhat.report.ci import experiment_properties

        e = result.experiment
        for name, value in experiment_properties(e.record, e.accounting):
            if value is not None:
                self._node.user_properties.append((f"passhat.{name}", value))

    def _suite(self, suite: str | Path) -> Path:
        """A relative suite path is read from the test file's folder when it is there."""
        path = Path(suite)
        if not path.is_absolute() and self._here is not None and (self._here / path).is_dir():
            return self._here / path
        return path


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("passhat", "passhat: run cases k times")
    group.addoption(
        "--passhat-k",
        dest="passhat_k",
        type=int,
        default=None,
        metavar="K",
        help="Runs per case for every passhat test (overrides the test's k).",
    )
    group.addoption(
        "--passhat-db",
        dest="passhat_db",
        default=None,
        metavar="PATH",
        help="The passhat store the runs are written to. Default: $PASSHAT_DB, else ./passhat.db.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    config.stash[_RESULTS] = []
    k = config.getoption("passhat_k", None)
    if k is not None:  # else every passhat test errored with "-k is 0", naming no option
        from passhat.accounting import MAX_K

        if not 1 <= k <= MAX_K:
            raise pytest.UsageError(
                f"--passhat-k is {k:,}; give from 1 to {MAX_K:,} runs per case, e.g. 3"
            )


def _fail_short(result: PasshatResult) -> None:
    """Fail the test when a requirement falls short, naming the cases behind it."""
    __tracebackhide__ = True
    gate = result.experiment.gate()
    if not gate.passed:
        pytest.fail(f"passhat: {gate.text()}\n(see `passhat report {result.experiment.id}`)", False)


def _eval(request: pytest.FixtureRequest, *, defer_gate: bool = False) -> PasshatEval:
    path = getattr(request.node, "path", None)
    here = path.parent if isinstance(path, Path) else None
    return PasshatEval(request.node, here, defer_gate=defer_gate)


@pytest.fixture
def passhat_eval(request: pytest.FixtureRequest) -> PasshatEval:
    """A callable that runs a suite's case(s) k times and returns a `PasshatResult`."""
    return _eval(request)


@pytest.fixture
def passhat_result(request: pytest.FixtureRequest) -> PasshatResult:
    """The result of the test's `@pytest.mark.passhat(...)`, run before the test."""
    __tracebackhide__ = True
    marker = request.node.get_closest_marker("passhat")
    if marker is None:
        raise pytest.UsageError(
            f"{request.node.nodeid} uses passhat_result but has no marker; add "
            '@pytest.mark.passhat("SUITE", case="CASE", k=3), or call passhat_eval instead'
        )
    return _eval(request, defer_gate=True)(*marker.args, **marker.kwargs)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """The marker's requirements are judged as the test's call: a shortfall is a failure."""
    __tracebackhide__ = True
    result = item.stash.get(_GATE, None)
    if result is not None:
        _fail_short(result)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test that ran passhat gets a section naming the cases short of a pass,
    their failed runs and the goal items they missed (an assert on a figure says only
    the figure)."""
    outcome: Any = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    lines = []
    said = str(report.longrepr)
    for result in results(item.config):
        gate_said = f"`passhat report {result.experiment.id}`" in said  # the gate named them
        if result.nodeid == item.nodeid and not gate_said:
            short = result.short_cases()
            lines += [f"experiment {result.experiment.id}: {result.line()}"]
            lines += [f"  {text}" for text in short[:20]]
            if len(short) > 20:
                lines.append(
                    f"  and {len(short) - 20} more cases (passhat report {result.experiment.id})"
                )
    if lines:
        report.sections.append(("passhat: cases short of a pass", "\n".join(lines)))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    write: Callable[[str], None] = terminalreporter.write_line
    terminalreporter.section("passhat")
    for result in results:
        write(f"{result.nodeid}: experiment {result.experiment.id}")
        write(f"  {result.line()}")
    stores = dict.fromkeys(str(r.experiment.path) for r in results)
    for store in stores:
        write(f"store: {store} (passhat report ID --db {store})")


def results(config: pytest.Config) -> Iterator[PasshatResult]:
    """The results of this session so far (for a conftest's own hooks)."""
    found: list[PasshatResult] = config.stash.get(_RESULTS, [])
    return iter(found)
