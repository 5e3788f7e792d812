"""passhat as a library: `evaluate`, `resume` and `open` answer what the CLI answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import passhat
from agents_for_tests import crashes_on_run_2, odd_runs_pass
from cli_helpers import CLARIFY, SEED, run_cli
from passhat.records import ExperimentRecord, RunRecord

OTHER = "clean-order-tracking-002"
"""A second case of the clarify suite (a comparison pairs at least 2)."""


def test_the_seed_from_python(tmp_path: Path) -> None:
    """The done-when of issue 27: the seed's figures from one call."""
    e = passhat.evaluate(CLARIFY, cases=[SEED], db=tmp_path / "p.db")
    text = str(e)
    assert f"{SEED}: 0/3 passes, pass@3 no, pass^3 no" in text
    assert "requested 3, completed 3, counted 3, errored 0, missing 0" in text
    assert e.pass_rate == 0.0 and e.pass_at_k == 0.0 and e.pass_hat_k == 0.0
    dataset = e.dataset
    assert dataset is not None and (dataset.label_at, dataset.label_hat) == ("pass@3", "pass^3")
    assert e.uncertainty is not None
    (interval,) = e.uncertainty.cases
    assert (interval.runs, interval.passes, interval.low) == (3, 0, 0.0)
    # the seed's item stability: AC3 inconsistent always missed, AC7 missed once (run 2)
    verdicts = {(s.item, s.verdict, s.misses) for s in e.items if s.expected}
    assert ("AC3:inconsistent_with_description", "always missed", (1, 2, 3)) in verdicts
    assert ("AC7:unverifiable", "sometimes missed", (2,)) in verdicts
    assert e.outcome is not None and e.outcome.planned == 3
    assert e.exit_code() == 0


def test_to_dict_is_report_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "p.db"
    e = passhat.evaluate(CLARIFY, cases=[SEED], db=db)
    r = run_cli(capsys, "report", e.id, "--json", "--db", str(db))
    assert r.code == 0, r.err
    assert json.loads(json.dumps(e.to_dict())) == json.loads(r.out)


def test_an_agent_as_a_python_object(tmp_path: Path) -> None:
    """A function passed as the agent runs like one named by import path, and the
    experiment records where it lives: `resume` finds it again."""
    db = tmp_path / "p.db"
    e = passhat.evaluate(CLARIFY, agent=odd_runs_pass, model="", k=2, cases=[SEED], db=db)
    assert e.record.agent == "agents_for_tests:odd_runs_pass"
    assert e.record.agent_hash is not None
    (case,) = e.cases
    assert (case.counted, case.passes) == (2, 1)  # run 1 passes, run 2 fails
    more = passhat.resume(e.id, db=db, k=4)
    assert more.outcome is not None and more.outcome.planned == 2
    (case,) = more.cases
    assert (case.counted, case.passes) == (4, 2)


def test_errored_runs_are_named_and_counted_apart(tmp_path: Path) -> None:
    e = passhat.evaluate(CLARIFY, agent=crashes_on_run_2, k=3, cases=[SEED], db=tmp_path / "p.db")
    (case,) = e.cases
    assert (case.completed, case.counted, case.errored) == (3, 2, (2,))
    assert "errored runs 2" in str(e)
    assert e.exit_code() == 0 and e.exit_code(strict=True) == 1


def test_events_hear_every_recorded_run(tmp_path: Path) -> None:
    heard: list[tuple[str, Any]] = []

    class Listen(passhat.Events):
        def started(self, experiment: ExperimentRecord, runs: int, store: Path) -> None:
            heard.append(("started", runs))

        def recorded(self, run: RunRecord) -> None:
            heard.append(("run", (run.case_id, run.run_index, run.status)))

    passhat.evaluate(
        CLARIFY, agent=odd_runs_pass, k=2, cases=[SEED], db=tmp_path / "p.db", events=Listen()
    )
    assert heard[0] == ("started", 2)
    assert sorted(h[1] for h in heard[1:]) == [(SEED, 1, "passed"), (SEED, 2, "failed")]


def test_bad_input_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    with pytest.raises(passhat.PasshatError, match="ask for at least 1 run"):
        passhat.evaluate(CLARIFY, k=0, cases=[SEED], db=db)
    with pytest.raises(passhat.PasshatError, match="does not take three arguments"):
        passhat.evaluate(CLARIFY, agent=lambda x: x, cases=[SEED], db=db)
    with pytest.raises(passhat.PasshatError, match="give a list of case ids"):
        passhat.evaluate(CLARIFY, cases=SEED, db=db)  # type: ignore[arg-type]
    assert not db.exists()


def test_open_reads_what_evaluate_stored(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    cases = [SEED, OTHER]
    a = passhat.evaluate(CLARIFY, agent=crashes_on_run_2, cases=cases, db=db, name="a")
    b = passhat.evaluate(CLARIFY, agent=odd_runs_pass, cases=cases, db=db, name="b")
    store = passhat.open(db)
    assert [x.id for x in store] == [a.id, b.id] and len(store) == 2
    again = store.experiment("a")
    assert again.record == a.record and again.outcome is None
    assert str(again) == str(a)
    comparison = b.compare(a)  # as `passhat compare a b`
    assert (comparison.pass_at_1.a, comparison.pass_at_1.b) == (a.pass_rate, b.pass_rate)
    assert a.pass_rate != b.pass_rate  # run 2 errored in a, failed in b: not counted alike
    with pytest.raises(passhat.PasshatError):
        passhat.open(tmp_path / "none.db")


def test_html_writes_the_report(tmp_path: Path) -> None:
    e = passhat.evaluate(CLARIFY, cases=[SEED], db=tmp_path / "p.db")
    page = e.html(tmp_path / "r.html").read_text(encoding="utf-8")
    assert SEED in page and "<html" in page


def test_from_a_running_event_loop(tmp_path: Path) -> None:
    """A notebook runs a loop: the async twin awaits, the sync call still works."""
    db = tmp_path / "p.db"

    async def main() -> tuple[passhat.Experiment, passhat.Experiment]:
        first = await passhat.evaluate_async(CLARIFY, cases=[SEED], db=db)
        second = passhat.evaluate(CLARIFY, cases=[SEED], db=db)
        return first, second

    first, second = asyncio.run(main())
    assert str(first).splitlines()[1:] == str(second).splitlines()[1:]
    assert first.accounting.runs_counted == 3


def test_adaptive_rounds_from_python(tmp_path: Path) -> None:
    """Rounds until the pass rate's interval is narrow enough, or max_k: the record
    comes back in the outcome and is stored with the experiment."""
    rounds = passhat.Rounds(width=0.05, max_k=4, k_step=2)
    e = passhat.evaluate(
        CLARIFY,
        agent=odd_runs_pass,
        k=2,
        cases=[SEED, OTHER],
        db=tmp_path / "p.db",
        adaptive=rounds,
    )
    assert e.outcome is not None and e.outcome.rounds is not None
    assert [look.k for look in e.outcome.rounds.looks] == [2, 4]  # 0.05 is never reached
    assert e.record.k_requested == 4 and e.accounting.runs_counted == 8
    assert e.record.adaptive and e.record.adaptive[0]["mode"] == "width"
    with pytest.raises(passhat.PasshatError, match="one of them"):
        passhat.Rounds(width=0.1, baseline="a")
    with pytest.raises(passhat.PasshatError, match="between 0 and 1"):
        passhat.Rounds(width=10)


def test_report_prints_the_terminal_report(tmp_path: Path) -> None:
    from io import StringIO

    from rich.console import Console

    e = passhat.evaluate(CLARIFY, cases=[SEED], db=tmp_path / "p.db")
    out = StringIO()
    e.report(Console(file=out, width=120))
    assert "always missed" in out.getvalue() and "Plan met" in out.getvalue()


def test_an_environment_and_a_scorer_as_python_objects(tmp_path: Path) -> None:
    """They replace suite.yaml's environment and scorers, as if it named them: the
    suite's hash says so, and a resume without them is refused."""
    from library_parts import CountingTicket, always_passes

    db = tmp_path / "p.db"
    before = CountingTicket.made
    e = passhat.evaluate(
        CLARIFY, cases=[SEED], db=db, environment=CountingTicket, scorers=[always_passes]
    )
    assert CountingTicket.made - before >= 3  # one world per run (and one to list its tools)
    assert str(e).endswith(f"{SEED}: 3/3 passes, pass@3 yes, pass^3 yes")  # the seed: 0/3
    plain = passhat.load_suite(CLARIFY)
    assert e.record.suite_hash != plain.hash
    with pytest.raises(passhat.PasshatError, match="suite content"):
        passhat.resume(e.id, db=db, k=4)
    again = passhat.resume(e.id, db=db, environment=CountingTicket, scorers=[always_passes])
    assert again.outcome is not None and again.outcome.planned == 0
    with pytest.raises(passhat.PasshatError, match="cannot be named by an import path"):
        passhat.evaluate(CLARIFY, cases=[SEED], db=db, scorers=[lambda state, goal: True])
