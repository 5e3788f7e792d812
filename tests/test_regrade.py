"""`passhat regrade`: stored final states scored again under a suite's current goals
and scorers; no agent, no model."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import ROOT, run_cli, run_seed


def json_out(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    r = run_cli(capsys, *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.fixture
def trello(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A copy of the trello suite, run once for real (replayed answers): 9 runs."""
    suite = tmp_path / "trello"
    shutil.copytree(ROOT / "examples" / "trello", suite)
    db = tmp_path / "p.db"
    r = run_cli(capsys, "run", str(suite), "--db", str(db), "--name", "cards", "-q")
    assert r.code == 0, r.err
    return suite, db


def edit_yaml(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def test_a_new_goal_regrades_the_stored_runs_without_a_model(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, db = trello
    before = json_out(capsys, "report", "cards", "--db", str(db))
    # the goal of one case changes; the cassette is gone: a model call would fail
    case = suite / "cases" / "export-orders-csv.yaml"
    edit_yaml(case, lambda d: d["goal"]["cards"][0].update(labels=["feature"]))
    (suite / "cassettes" / "cards.jsonl").unlink()
    out = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "relabelled", "--accept-changes"
    )
    assert out["runs"] == 9
    changed = {(c["case"], c["run"]) for c in out["changes"]}
    assert changed and {case for case, _ in changed} == {"export-orders-csv"}
    assert all(c["before"] == "passed" and c["after"] == "failed" for c in out["changes"])
    source = out["source"]
    assert source["experiment"] == before["experiment"]["id"]
    assert source["fingerprint"] == before["experiment"]["fingerprint"]
    assert set(source["goal_hashes"]) == {
        "checkout-card-timeout",
        "export-orders-csv",
        "rotate-payment-keys",
    }
    assert out["fingerprint"] != before["experiment"]["fingerprint"]
    after = json_out(capsys, "report", "relabelled", "--db", str(db))
    cases = {c["case"]: c for c in after["cases"]}
    assert cases["export-orders-csv"]["passes"] == 0
    assert after["dataset"]["passes"] == before["dataset"]["passes"] - len(changed)
    # the runs are the stored ones: same transcripts, same final states
    a = run_cli(capsys, "show", "cards", "export-orders-csv", "1", "--db", str(db)).out
    b = run_cli(capsys, "show", "relabelled", "export-orders-csv", "1", "--db", str(db)).out
    assert a.split("final state")[0].splitlines()[1:] == b.split("final state")[0].splitlines()[1:]
    # compare pairs the two gradings case by case
    cmp = json_out(capsys, "compare", "cards", "relabelled", "--db", str(db), "-B", "200")
    assert cmp["verdict"]["outcome"]


def test_a_stricter_scorer_regrades_and_the_same_grading_gives_the_same_fingerprint(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, db = trello
    same = json_out(capsys, "regrade", "cards", "--db", str(db))
    assert same["changes"] == []
    again = json_out(capsys, "regrade", "cards", "--db", str(db))
    assert again["fingerprint"] == same["fingerprint"]
    edit_yaml(
        suite / "suite.yaml",
        lambda d: d["defaults"]["scorers"][0]["params"].update(max_title=10),
    )
    strict = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--suite", str(suite), "--accept-changes"
    )
    assert strict["fingerprint"] != same["fingerprint"]
    assert strict["source"]["scorer_hash"] != same["source"]["scorer_hash"]
    assert strict["changes"] and all(c["after"] == "failed" for c in strict["changes"])


def test_errored_runs_stay_errored_and_resume_refuses_a_regrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--agent",
        "agents_for_tests:crashes_on_run_2",
        "--db",
        str(db),
        "--name",
        "src",
        "-q",
        "-k",
        "3",
    )
    assert r.code == 0, r.err
    out = json_out(capsys, "regrade", "src", "--db", str(db), "--name", "again")
    data = json_out(capsys, "report", "again", "--db", str(db))
    tracebacks = [e.pop("traceback") for e in data["errored"]]
    assert data["errored"] == [
        {
            "case": "ac-conflict-001",
            "run": 2,
            "type": "agent_error",
            "message": "RuntimeError: the agent fell over in run 2",
        }
    ]
    assert "in crashes_on_run_2" in tracebacks[0]  # the source run's crash, kept
    assert out["runs"] == 3 and out["changes"] == []
    assert [c["passes"] for c in data["cases"]] == [2]
    r = run_cli(capsys, "resume", "again", "--db", str(db))
    assert r.code == 2 and "is of kind 'regrade', not a run" in r.err


def test_regrade_refuses_imports_and_a_suite_without_the_cases(
    trello: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, db = trello
    r = run_cli(
        capsys,
        "audit",
        str(ROOT / "examples" / "audit" / "trello"),
        "--into-store",
        "--db",
        str(db),
        "--name",
        "aud",
    )
    assert r.code == 0
    r = run_cli(capsys, "regrade", "aud", "--db", str(db))
    assert r.code == 2 and "is audited (audit)" in r.err
    r = run_cli(
        capsys, "regrade", "cards", "--db", str(db), "--suite", str(ROOT / "examples" / "clarify")
    )
    assert r.code == 2 and "has none of the cases" in r.err


def test_regrade_reads_the_runs_a_few_cases_at_a_time(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 15): regrade read every run whole, then held every regraded run
    too, before writing one: 2.2 GB at 100,000 runs. It now reads CASES_READ cases at a
    time, writes their runs as they are scored, and stores the same runs."""
    import passhat.cli.regrade
    from passhat.store import Store

    suite, db = trello
    edit_yaml(
        suite / "cases" / "export-orders-csv.yaml",
        lambda d: d["goal"]["cards"][0].update(labels=["feature"]),
    )
    whole = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "whole", "--accept-changes"
    )
    reads: list[tuple[str, ...]] = []
    apart: list[bool] = []  # read through a store of their own (copied on the other)
    graded = Store.graded

    def spied(self: Store, experiment_id: str, cases: Any) -> Any:
        reads.append(tuple(cases))
        apart.append(self.read_only)
        return graded(self, experiment_id, cases)

    monkeypatch.setattr(Store, "graded", spied)
    monkeypatch.setattr(passhat.cli.regrade, "CASES_READ", 2)
    parts = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "parts", "--accept-changes"
    )
    assert reads == [("checkout-card-timeout", "export-orders-csv"), ("rotate-payment-keys",)]
    assert apart == [True, True]
    assert parts["runs"] == whole["runs"] == 9
    assert parts["changes"] == whole["changes"] and parts["changes"]
    a, b = (json_out(capsys, "report", ref, "--db", str(db)) for ref in ("whole", "parts"))
    assert a["cases"] == b["cases"]


def test_the_stored_regrade_equals_each_run_scored_again_whole(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regrade reads only what grading needs and has SQLite copy the rest of each run
    (transcripts are never decoded and encoded again): every stored run equals the
    source's run, whole, scored again in memory (`regrade_run`). One run errored in
    the agent stays as it was; one a scorer failed on is scored again."""
    from dataclasses import replace

    from passhat.regrade import regrade_run
    from passhat.store import Store
    from passhat.suite import load_suite

    suite, db = trello
    with Store(db) as store:  # an agent crash and a scorer failure among the source's runs
        source = store.experiment("cards")
        store._db.execute(
            "UPDATE runs SET status = 'errored', error_type = 'agent_error', "
            "error_message = 'boom', traceback = 'Traceback: x', score = '[]' "
            "WHERE experiment_id = ? AND case_id = 'rotate-payment-keys' AND run_index = 2",
            (source.id,),
        )
        store._db.execute(
            "UPDATE runs SET status = 'errored', error_type = 'scorer_error', "
            "error_message = 'was broken', score = '[]' "
            "WHERE experiment_id = ? AND case_id = 'export-orders-csv' AND run_index = 3",
            (source.id,),
        )
        store._db.commit()
    edit_yaml(
        suite / "cases" / "export-orders-csv.yaml",
        lambda d: d["goal"]["cards"][0].update(labels=["feature"]),
    )
    import passhat.store.reads

    decoded: list[str] = []
    decode = passhat.store.reads._decode

    def spied(value: str, what: str) -> Any:
        decoded.append(what.split()[0])
        return decode(value, what)

    monkeypatch.setattr(passhat.store.reads, "_decode", spied)
    out = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "again", "--accept-changes"
    )
    # what grading reads, and the experiment: no transcript, output, tool call or retry
    assert {"final_state", "score"} <= set(decoded)
    assert not {"transcript", "output", "tool_calls", "retries"} & set(decoded)
    monkeypatch.undo()
    loaded = load_suite(suite)
    cases = {c.id: c for c in loaded.cases}
    with Store(db) as store:
        before = store.runs(source.id)
        after = store.runs(out["experiment"])
    assert len(after) == len(before) == 9
    expected = [regrade_run(loaded, cases[r.case_id], r, out["experiment"]) for r in before]
    assert after == expected
    assert any(r.transcript for r in after)  # the copies carry the transcripts
    crashed = next(r for r in after if r.error_type == "agent_error")
    assert crashed == replace(
        next(r for r in before if r.error_type == "agent_error"),
        experiment_id=out["experiment"],
        case_hash=crashed.case_hash,
    )
    assert not any(r.error_type == "scorer_error" for r in after)


def test_a_copy_of_a_run_the_source_lacks_writes_nothing(trello: tuple[Path, Path]) -> None:
    from dataclasses import replace

    from passhat.errors import StoreError
    from passhat.regrade import regrade_experiment
    from passhat.store import Store
    from passhat.suite import load_suite

    suite, db = trello
    with Store(db) as store:
        source = store.experiment("cards")
        e, _ = regrade_experiment(source, load_suite(suite), name="copies")
        runs = store.graded(source.id, source.case_ids)
        moved = [replace(r, experiment_id=e.id) for r in runs]
        strays = [*moved[:2], replace(moved[2], run_index=99)]
        with pytest.raises(StoreError, match=r"run 99 of case .* is not in experiment"):
            store.add_experiment_with_copies(e, source.id, strays)
        assert [x.name for x in store.experiments()].count("copies") == 0
        with pytest.raises(StoreError, match=f"belongs to experiment {source.id}, not {e.id}"):
            store.add_experiment_with_copies(e, source.id, runs)  # not moved
        assert store.add_experiment_with_copies(e, source.id, moved) == 9
        assert store.runs(e.id, full=False) == [
            replace(r, experiment_id=e.id) for r in store.runs(source.id, full=False)
        ]


def _copy_threads(store: Any) -> list[str]:
    """The names of the threads that run the store's copying statements, as they run
    (SQLite traces such a statement again for each row its triggers act on)."""
    import threading

    names: list[str] = []

    def traced(sql: str) -> None:
        if sql.startswith("INSERT INTO runs (experiment_id, case_hash"):  # a copy
            names.append(threading.current_thread().name)

    store._db.set_trace_callback(traced)
    return names


@pytest.mark.parametrize("overlapped", [False, True])
def test_regraded_runs_are_copied_a_batch_at_a_time_on_a_thread_of_their_own_if_asked(
    trello: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, overlapped: bool
) -> None:
    """`passhat regrade` reads its runs through a connection of its own, and SQLite copies
    them on the store's, `COPIED_AT_ONCE` at a time on a thread of its own, while the
    next ones are graded (a copy was one statement after all the grading, about half of
    a regrade's wall: 16.4 s of 100,000 runs). The runs stored are the same."""
    from dataclasses import replace

    import passhat.store.writes
    from passhat.regrade import regrade_experiment
    from passhat.store import Store
    from passhat.suite import load_suite

    monkeypatch.setattr(passhat.store.writes, "COPIED_AT_ONCE", 2)
    suite, db = trello
    with Store(db) as store:
        source = store.experiment("cards")
        e, _ = regrade_experiment(source, load_suite(suite), name="copies")
        moved = [replace(r, experiment_id=e.id) for r in store.graded(source.id, source.case_ids)]
        threads = _copy_threads(store)
        assert store.add_experiment_with_copies(e, source.id, moved, overlapped=overlapped) == 9
        store._db.set_trace_callback(None)
        assert store.runs(e.id, full=False) == [
            replace(r, experiment_id=e.id) for r in store.runs(source.id, full=False)
        ]
    assert threads and set(threads) == {"passhat-copy" if overlapped else "MainThread"}


@pytest.mark.parametrize("overlapped", [False, True])
def test_a_failure_on_either_side_of_an_overlapped_copy_writes_nothing(
    trello: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, overlapped: bool
) -> None:
    """Batches already copied are rolled back when a later one fails: a run the source
    lacks (found while copying), a run given twice in two batches, or grading that
    raises or is interrupted (in the calling thread) after copies began."""
    from dataclasses import replace

    import passhat.store.writes
    from passhat.errors import StoreError
    from passhat.regrade import regrade_experiment
    from passhat.store import Store
    from passhat.suite import load_suite

    monkeypatch.setattr(passhat.store.writes, "COPIED_AT_ONCE", 2)
    suite, db = trello
    with Store(db) as store:
        source = store.experiment("cards")
        e, _ = regrade_experiment(source, load_suite(suite), name="copies")
        moved = [replace(r, experiment_id=e.id) for r in store.graded(source.id, source.case_ids)]

        def failing(error: BaseException) -> Any:
            yield from moved[:7]
            raise error

        tries: list[tuple[Any, type[BaseException], str]] = [
            ([*moved[:6], replace(moved[6], run_index=99)], StoreError, "run 99 of case"),
            ([*moved[:5], moved[0]], StoreError, "could not be stored"),
            (failing(RuntimeError("grading failed")), RuntimeError, "grading failed"),
            (failing(KeyboardInterrupt("Ctrl-C")), KeyboardInterrupt, "Ctrl-C"),
        ]
        for runs, error, match in tries:
            with pytest.raises(error, match=match):
                store.add_experiment_with_copies(e, source.id, runs, overlapped=overlapped)
            assert [x.name for x in store.experiments()].count("copies") == 0
            assert store.runs(e.id, full=False) == []
        assert store.add_experiment_with_copies(e, source.id, moved, overlapped=overlapped) == 9


def _scorer_body(suite: Path, body: str) -> None:
    rules = suite / "rules.py"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(
        text.replace(
            '    """Accept the run\'s one card, or list every rule it breaks."""', body, 1
        ),
        encoding="utf-8",
    )


def test_a_scorer_calling_sys_exit_errors_its_runs_instead_of_ending_the_regrade(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): a scorer calling sys.exit(9) ended `regrade` silently, rc 9."""
    suite, db = trello
    _scorer_body(suite, "    import sys\n\n    sys.exit(9)")
    out = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "exits", "--accept-changes"
    )
    assert out["runs"] == 9 and len(out["changes"]) == 9
    report = json_out(capsys, "report", "exits", "--db", str(db))
    assert report["accounting"]["runs_errored"] == 9
    r = run_cli(capsys, "show", "exits", "export-orders-csv", "1", "--db", str(db))
    assert "the scorer called sys.exit(9)" in r.out


def test_a_scorer_that_blocks_is_bounded_by_the_timeout(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 26): a blocking scorer ran 36 s past a 2 s timeout. The first
    call blocks; that run alone is errored (timeout), the others are graded."""
    import time

    suite, db = trello
    _scorer_body(
        suite,
        "    import time\n\n"
        "    if not _CALLS:\n"
        "        _CALLS.append(1)\n"
        "        time.sleep(120)\n"
        "    _CALLS.append(1)",
    )
    rules = suite / "rules.py"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n_CALLS: list[int] = []\n")
    started = time.monotonic()
    out = json_out(
        capsys,
        "regrade",
        "cards",
        "--db",
        str(db),
        "--name",
        "blocks",
        "--timeout",
        "1",
        "--accept-changes",
    )
    assert time.monotonic() - started < 60
    report = json_out(capsys, "report", "blocks", "--db", str(db))
    assert report["accounting"]["runs_errored"] == 1 and out["runs"] == 9
    r = run_cli(capsys, "regrade", "cards", "--db", str(db), "--timeout", "0")
    assert r.code == 2 and "--timeout is 0" in r.err


def _relabel(suite: Path) -> None:
    """What an agent outside a sandbox could do to the answer key: one goal rewritten."""
    edit_yaml(
        suite / "cases" / "export-orders-csv.yaml",
        lambda d: d["goal"]["cards"][0].update(labels=["feature"]),
    )


def test_a_suite_rewritten_between_run_and_regrade_is_refused_naming_the_file(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32: an agent rewrote cases/*.yaml, and `regrade` of an honest experiment
    then graded under its goals (100 % -> 0 %). The suite's hash is checked again first:
    a changed suite is refused, naming the case file, and nothing is written; the
    control (--accept-changes, the change declared) shows the rewrite would decide."""
    from passhat.store import Store

    suite, db = trello
    _relabel(suite)
    r = run_cli(capsys, "regrade", "cards", "--db", str(db), "--name", "rg")
    assert r.code == 2 and "Traceback" not in r.err
    said = " ".join(r.err.split())
    assert "changed since experiment cards was graded" in said
    assert "cases/export-orders-csv.yaml (case export-orders-csv)" in said
    assert "checkout-card-timeout" not in said  # only what changed is named
    assert "--accept-changes" in said and "Nothing was written" in said
    with Store(db) as store:
        assert [e.name for e in store.experiments()] == ["cards"]
    control = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "rg", "--accept-changes"
    )
    assert control["changes"] and control["source"]["changed"] == [
        "cases/export-orders-csv.yaml (case export-orders-csv)"
    ]
    assert any("the suite changed since" in note for note in control["notes"])


def test_a_regrade_checks_against_the_suite_it_was_graded_under(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A regrade of a regrade compares with the suite the first regrade graded under
    (its suite_hash stays the run's): the same suite again needs no --accept-changes,
    and a suite.yaml edit is named as the rest of the suite."""
    suite, db = trello
    _relabel(suite)
    json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "rg", "--accept-changes")
    again = json_out(capsys, "regrade", "rg", "--db", str(db))
    assert again["changes"] == [] and again["source"]["changed"] == []
    edit_yaml(
        suite / "suite.yaml", lambda d: d["defaults"]["scorers"][0]["params"].update(max_title=9)
    )
    r = run_cli(capsys, "regrade", "rg", "--db", str(db))
    assert r.code == 2 and "suite.yaml, a file it names" in " ".join(r.err.split())


def test_an_agent_that_rewrites_a_goal_cannot_decide_a_later_regrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's attack whole: an honest experiment, then an agent (in-process, so no
    sandbox stands in its way) that rewrites its case's goal to what it answers. Its own
    runs are errored suite_changed (tamper.py), and the honest experiment's regrade is
    refused instead of taking the rewritten goal."""
    from passhat.store import Store

    db = tmp_path / "p.db"
    suite = tmp_path / "trello"
    shutil.copytree(ROOT / "examples" / "trello", suite)
    r = run_cli(capsys, "run", str(suite), "--db", str(db), "--name", "honest", "-q")
    assert r.code == 0, r.err
    case = suite / "cases" / "export-orders-csv.yaml"
    (suite / "rewriter.py").write_text(
        "from pathlib import Path\n\nimport yaml\n\n\n"
        "async def run(input, env, ctx):\n"
        f"    path = Path({str(case)!r})\n"
        "    data = yaml.safe_load(path.read_text(encoding='utf-8'))\n"
        "    data['goal']['cards'][0]['labels'] = ['feature']\n"
        "    path.write_text(yaml.safe_dump(data), encoding='utf-8')\n"
        "    return 'done'\n",
        encoding="utf-8",
    )
    r = run_cli(
        capsys, "run", str(suite), "--db", str(db), "--name", "attack", "-q", "-k", "1",
        "--agent", "rewriter.py:run", "--case", "export-orders-csv",
    )  # fmt: skip
    with Store(db) as store:
        runs = store.runs(store.experiment("attack").id)
    assert [(run.status, run.error_type) for run in runs] == [("errored", "suite_changed")]
    r = run_cli(capsys, "regrade", "honest", "--db", str(db))
    assert r.code == 2 and "cases/export-orders-csv.yaml" in " ".join(r.err.split())


def test_a_run_graded_after_the_suite_changed_mid_regrade_is_errored_never_a_verdict(
    trello: tuple[Path, Path],
) -> None:
    """The suite is watched while the regrade grades (as during a run): once a case file
    changes, the runs graded after it are errored suite_changed, those before keep their
    verdicts."""
    from passhat.regrade import Change, regrade_experiment, regrade_runs
    from passhat.store import Store
    from passhat.suite import load_suite

    suite, db = trello
    with Store(db) as store:
        source = store.experiment("cards")
        loaded = load_suite(suite)
        e, _ = regrade_experiment(source, loaded, name="watched")
        stored = store.graded(source.id, sorted(source.case_ids))

        def rewritten_after_three() -> Any:
            # the case whose runs come next (by case: checkout-card-timeout's 3 first);
            # its file is looked at before each of its runs, and a change is sticky
            for n, run in enumerate(stored):
                if n == 3:
                    _relabel(suite)
                yield run

        changes: list[Change] = []
        out = list(regrade_runs(loaded, e, rewritten_after_three(), changes))
    assert [r.case_id for r in out[3:6]] == ["export-orders-csv"] * 3
    assert [r.status for r in out[:3]] == [r.status for r in stored[:3]]
    assert {r.status for r in stored[:3]} <= {"passed", "failed"}
    assert [r.error_type for r in out[3:]] == ["suite_changed"] * 6
    assert all("export-orders-csv.yaml" in (r.error_message or "") for r in out[3:])


def test_a_suite_changed_after_its_load_before_the_first_run_read_is_seen(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The regrade's guard took the suite's files as they were at its first run read, not
    as loaded: a goal rewritten in between (here as the regrade experiment is made) was
    its baseline, and the runs were graded as if nothing had changed."""
    from passhat import regrade
    from passhat.store import Store

    suite, db = trello
    make = regrade.regrade_experiment

    def then_rewritten(*args: Any, **kwargs: Any) -> Any:
        made = make(*args, **kwargs)
        _relabel(suite)
        return made

    monkeypatch.setattr(regrade, "regrade_experiment", then_rewritten)
    done = json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "late")
    with Store(db) as store:
        runs = store.runs(store.experiment(done["experiment"]).id)
    rewritten = [r for r in runs if r.case_id == "export-orders-csv"]
    assert [r.error_type for r in rewritten] == ["suite_changed"] * 3
    assert all("export-orders-csv.yaml" in (r.error_message or "") for r in rewritten)


def test_runs_of_a_case_that_end_alike_are_decoded_and_scored_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the built-in scorers alone a score follows from the case and the final state:
    runs stored with the same final state text are decoded once (`Store.graded` gives
    them one value) and scored once, each still given its verdict; a run that ends
    otherwise is decoded and scored on its own."""
    import passhat.regrade
    import passhat.store.reads
    from passhat.store import Store

    db = tmp_path / "p.db"
    assert run_seed(capsys, "--db", str(db), "--name", "src", "-q", "-k", "3").code == 0
    with Store(db) as store:  # runs 1-2 end as run 1 did; run 3 ends otherwise
        source = store.experiment("src")
        store._db.execute(
            "UPDATE runs SET final_state = (SELECT final_state FROM runs WHERE "
            "experiment_id = ?1 AND run_index = 1) WHERE experiment_id = ?1 AND run_index = 2",
            (source.id,),
        )
        store._db.execute(
            "UPDATE runs SET final_state = json_set(final_state, '$.ticket.annotations', json('[]')) "
            "WHERE experiment_id = ? AND run_index = 3",
            (source.id,),
        )
        store._db.commit()
        runs = store.graded(source.id, source.case_ids)
    assert not any(r.status == "errored" for r in runs)
    assert runs[0].final_state is runs[1].final_state
    assert runs[2].final_state is not runs[0].final_state
    assert runs[2].final_state != runs[0].final_state
    decoded: list[str] = []
    decode = passhat.store.reads._decode
    scored: list[int] = []
    score_run = passhat.regrade.score_run

    def decoding(value: str, what: str) -> Any:
        decoded.append(what.split()[0])
        return decode(value, what)

    def scoring(*args: Any, **kwargs: Any) -> Any:
        scored.append(kwargs["run_index"])
        return score_run(*args, **kwargs)

    monkeypatch.setattr(passhat.store.reads, "_decode", decoding)
    monkeypatch.setattr(passhat.regrade, "score_run", scoring)
    out = json_out(capsys, "regrade", "src", "--db", str(db), "--name", "again")
    assert out["runs"] == 3
    assert decoded.count("final_state") == 2
    assert scored == [1, 3]
    monkeypatch.undo()
    with Store(db) as store:
        after = store.runs(out["experiment"], full=False)
    assert after[1].status == after[0].status and after[2].status == "failed"
    assert after[1].score == after[0].score != after[2].score


def test_a_user_scorer_that_writes_into_a_final_state_changes_no_other_run(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A user's scorer is given each run's own final state, even where runs of a case
    ended alike: one that marks the state it saw (and fails a state marked before) fails
    no run (`Store.graded` shares a decoded value between runs only when the built-in
    scorers alone grade)."""
    from passhat.store import Store

    suite, db = trello
    _scorer_body(
        suite,
        '    if final_state.get("seen"):\n'
        '        return {"passed": False, "violations": ["seen before"]}\n'
        '    final_state["seen"] = True',
    )
    out = json_out(
        capsys, "regrade", "cards", "--db", str(db), "--name", "marks", "--accept-changes"
    )
    assert out["runs"] == 9
    with Store(db) as store:
        runs = store.runs(out["experiment"], full=False)
        source = store.runs(store.experiment("cards").id, full=False)
    assert "seen before" not in json.dumps([r.score for r in runs])
    assert [r.status for r in runs] == [r.status for r in source]


def test_a_regraded_run_is_the_source_run_with_its_new_verdict_fields() -> None:
    """`regrade_run` copies a run's fields as `dataclasses.replace` would (it skips the
    call of RunRecord's `__init__`, which does nothing else: no `__post_init__`)."""
    from dataclasses import fields, replace

    from passhat.records import RunRecord
    from passhat.regrade import _replaced

    assert not hasattr(RunRecord, "__post_init__")
    run = RunRecord(
        **{f.name: f"v-{f.name}" for f in fields(RunRecord) if f.name != "run_index"},
        run_index=2,
    )
    changes = {"experiment_id": "e2", "status": "failed", "score": [{"passed": False}]}
    assert _replaced(run, **changes) == replace(run, **changes)
    assert _replaced(run, **changes) is not run and run.experiment_id == "v-experiment_id"
    with pytest.raises(TypeError, match="no field 'nope'"):
        _replaced(run, nope=1)


def test_a_terminal_regrade_keeps_only_the_changes_it_prints() -> None:
    """Regression (issue 38, regrade's peak RSS): every changed verdict was kept as a
    `Change` (56,000 of them, 6 MB, at 100,000 runs) for a terminal that prints 20.
    `Changes` counts them all, keeps the first `shown`, and every one only when asked
    (`--json` lists them all); asking it for all when it kept a few is an error, not a
    short list."""
    from passhat.regrade import Change, Changes

    made = [Change(f"case-{n}", n, "passed", "failed") for n in range(5)]
    few, every = Changes(2), Changes(2, keep_all=True)
    for change in made:
        few.append(change)
        every.append(change)
    assert len(few) == len(every) == 5
    assert few.first() == every.first() == made[:2]
    assert list(every) == made
    with pytest.raises(ValueError, match="only the first"):
        list(few)
    short = Changes(10)
    short.append(made[0])
    assert list(short) == made[:1]  # all of them were kept: nothing is missing


def test_a_terminal_regrade_counts_every_change_and_prints_the_first(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal says how many verdicts changed, lists the first MAX_CHANGES_SHOWN
    and the number left, as `--json` has them all."""
    import passhat.cli.regrade

    suite, db = trello
    edit_yaml(
        suite / "cases" / "export-orders-csv.yaml",
        lambda d: d["goal"]["cards"][0].update(labels=["feature"]),
    )
    every = json_out(capsys, "regrade", "cards", "--db", str(db), "--accept-changes")["changes"]
    assert len(every) >= 2
    monkeypatch.setattr(passhat.cli.regrade, "MAX_CHANGES_SHOWN", 1)
    r = run_cli(capsys, "regrade", "cards", "--db", str(db), "--accept-changes")
    assert r.code == 0, r.err
    first = every[0]
    assert f"{len(every)} verdicts changed" in r.out
    assert f"{first['case']} run {first['run']}: {first['before']} → {first['after']}" in r.out
    assert f"… and {len(every) - 1} more" in r.out
    second = every[1]
    assert f"{second['case']} run {second['run']}:" not in r.out


def test_a_regrade_holds_the_goal_of_one_case_at_a_time(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 38, regrade's peak RSS): scoring keeps the goals of up to
    GOALS_KEPT cases for the runner, and a regrade of 10,000 cases left 1,024 of them
    held (4 MB). A regrade grades each case's runs together, so it lets each case's go
    once it is done: at most one is held while it grades, none after."""
    import passhat.regrade
    import passhat.scoring

    _, db = trello
    goals: dict[Any, Any] = {}  # the run's own goals (this process ran it) set aside
    held: list[int] = []
    score_run = passhat.regrade.score_run

    def scoring(*args: Any, **kwargs: Any) -> Any:
        done = score_run(*args, **kwargs)
        held.append(len(goals))
        return done

    monkeypatch.setattr(passhat.scoring, "_GOALS", goals)
    monkeypatch.setattr(passhat.regrade, "score_run", scoring)
    out = json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "again")
    assert out["runs"] == 9 and len(held) >= 3  # three cases, each scored
    assert max(held) == 1 and not goals


def test_a_regrade_keeps_small_sqlite_caches_on_both_connections(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 38, regrade's peak RSS): the reading and the copying
    connection each kept SQLite's default 2,000 KiB of pages, and of temporary tables,
    for pages read or written about once. Each now keeps CACHE_KIB; what is stored is
    the same."""
    import sqlite3

    import passhat.cli.regrade
    from passhat.store import Store

    _, db = trello
    sizes: list[tuple[bool, int, int]] = []
    close = Store.close

    def closing(self: Store) -> None:
        if self.path == db:
            with contextlib.suppress(sqlite3.ProgrammingError):
                main, temp = (
                    self._db.execute(f"PRAGMA {schema}cache_size").fetchone()[0]
                    for schema in ("", "temp.")
                )
                sizes.append((self.read_only, main, temp))
        close(self)

    monkeypatch.setattr(Store, "close", closing)
    assert json_out(capsys, "regrade", "cards", "--db", str(db), "--name", "small")["runs"] == 9
    kib = -passhat.cli.regrade.CACHE_KIB
    assert sorted(sizes) == [(False, kib, kib), (True, kib, kib)]
    monkeypatch.undo()
    with Store(db) as store:
        a, b = (store.runs(store.experiment(ref).id, full=False) for ref in ("cards", "small"))
    assert [(r.case_id, r.run_index, r.status) for r in a] == [
        (r.case_id, r.run_index, r.status) for r in b
    ]


def test_an_experiment_rows_text_is_let_go_before_its_runs_are_written(tmp_path: Path) -> None:
    """Regression (issue 38, regrade's peak RSS): the experiment's row, its JSON columns
    encoded (a regrade of 10,000 cases: their ids, hashes and goal hashes, 1.4 MB), was
    held while every run was written. It is let go once inserted: while the runs are
    written no block that large made by the encoder is alive."""
    import tracemalloc

    from passhat.store import Store
    from records_for_tests import experiment_record

    cases = [f"case-{n:05d}-{'x' * 40}" for n in range(20_000)]
    experiment = experiment_record(
        cases, 1, id="0a1b2c3d", case_hashes={c: f"{n:012x}" for n, c in enumerate(cases)}
    )
    alive: list[int] = []

    def runs() -> Any:
        snapshot = tracemalloc.take_snapshot()
        alive.extend(s.size for s in snapshot.statistics("traceback") if s.size >= 500_000)
        yield from ()

    with Store(tmp_path / "p.db") as store:
        tracemalloc.start()
        try:
            assert store.add_experiment_with_runs(experiment, runs()) == 0
        finally:
            tracemalloc.stop()
        assert store.experiment("0a1b2c3d").case_hashes == experiment.case_hashes
    assert alive == []


def test_the_compare_command_a_regrade_suggests_quotes_the_names(
    trello: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    name = "again $(touch /tmp/passhat-pwned) it's"
    _, db = trello
    r = run_cli(capsys, "regrade", "cards", "--db", str(db), "--name", name)
    assert r.code == 0, r.err
    said = r.out.split("`passhat compare ", 1)[1].split("` sets", 1)[0]
    assert shlex.split(said) == ["cards", name]
