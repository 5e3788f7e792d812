"""Each case's items of `report --json` kept in the store (`case_items`,
`Store.fill_case_items`, `Store.kept_items`): the kept text is the text the report
makes, a write to a case's runs deletes it, every writer's end fills it, and a report
that takes it writes the very bytes of one that makes every case's items again."""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from cli_helpers import run_cli
from passhat.errors import StoreError
from passhat.records import RunRecord
from passhat.report import json_stream
from passhat.report.digest import tallied
from passhat.report.experiment import experiment_json
from passhat.report.json_stream import streamed_json
from passhat.report.parts_json import ItemText
from passhat.store import MIGRATIONS, Store
from records_for_tests import experiment_record
from test_adaptive import cards  # noqa: F401  # the fixture
from test_report_json import plain_experiment_dict, stored_runs
from test_report_json_stream import unkind

ODD = 'ç "quoted" \\ tab\t 猫 🐈 \x01'


@pytest.fixture(autouse=True)
def small_stretches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stretches of a few runs and cases, so that kept and unkept cases meet at seams."""
    monkeypatch.setattr(json_stream, "STRETCH_RUNS", 7)
    monkeypatch.setattr(json_stream, "STRETCH_CASES", 3)


def kept(db: Path) -> dict[str, str]:
    with Store(db) as store:
        return store.kept_items("e1")


def made(db: Path) -> dict[str, str]:
    """Each case's items text made now from its summaries, as the fill makes it."""
    maker = ItemText()
    with Store(db) as store:
        runs = store.summaries("e1", decode_items=False)
    texts: dict[str, str] = {}
    for run in runs:
        texts.setdefault(run.case_id, "")
    for case in texts:
        counted = [r for r in runs if r.case_id == case and r.status != "errored"]
        texts[case] = maker.text(
            case, [r.run_index for r in counted], [r.graded_items for r in counted]
        )
    return texts


def reports(db: Path, experiment_id: str = "e1") -> tuple[bytes, bytes, bytes]:
    """The report made without the kept text (`plain_experiment_dict`), and the two ways
    `report --json` writes it taking the kept text: whole (`experiment_json`) and
    streamed (`streamed_json`), both in one snapshot."""
    with Store(db, create=False, read_only=True) as store, store.snapshot():
        e = store.experiment(experiment_id)
        runs = store.summaries(experiment_id, decode_items=False)
        plain = to_json(plain_experiment_dict(e, store.summaries(experiment_id)))
        texts = store.kept_items(experiment_id)
        whole = b"".join(experiment_json(e, runs, kept_items=texts)[1])
        tallies = store.tallies(experiment_id, parts=False)
        streamed = b""
        if tallies is not None:
            counted = tallied(tallies, e, 0)
            assert counted is not None
            sizes = [(c, n) for c, (n, _, _) in (counted[0].case_usage or {}).items()]
            numbers = store.run_numbers(experiment_id, sizes)
            assert numbers is not None
            streamed = b"".join(streamed_json(store, e, counted, numbers))
    return plain, whole, streamed


def same_report(db: Path) -> None:
    plain, whole, streamed = reports(db)
    assert whole == plain
    assert streamed in (plain, b"")


def fill(db: Path) -> int:
    with Store(db) as store:
        return store.fill_case_items("e1")


def odd_store(db: Path) -> None:
    """Items with non-ASCII, quotes, escapes and control characters; items that are not
    text; an item expected twice; a label twice in one run; extras of one value and of
    two (1 and "1"); runs of a case with different goals; errored runs; a case with
    every run errored."""

    def detail(expected: list[Any], missing: list[Any], extra: list[Any]) -> dict[str, Any]:
        passed = not missing
        return {"scorer": ODD, "path": ODD, "passed": passed, "expected": expected} | {
            "missing": missing,
            "extra": extra,
        }

    scores = {
        ODD: [[detail([ODD, 1, "x"], [1], ["e", 2])]] * 2,
        "b": [[detail(["a"], [], [])], [detail(["a", "c"], ["c"], ["z"])]],
        "c": [[detail(["a", "a"], [], [])], [detail(["a"], [], []), detail(["a"], [], [])]],
        "e": [[detail(["q"], [], ["1", 1])], [detail(["q"], ["q"], [1])]],
    }
    runs = [
        RunRecord("e1", case, i, "h", "passed", score=score)
        for case, per_run in scores.items()
        for i, score in enumerate(per_run, start=1)
    ]
    runs.append(RunRecord("e1", "b", 3, "h", "errored", error_type="x", error_message="m"))
    runs += [
        RunRecord("e1", "d", i, "h", "errored", error_type="x", error_message="m") for i in (1, 2)
    ]
    with Store(db) as store:
        store.create_experiment(experiment_record([*scores, "d"], 3))
        store.record_runs(runs)


def test_the_kept_text_is_the_reports_on_odd_stores(tmp_path: Path) -> None:
    """Guards the fill: every case with runs gets a row, '' for none counted, each the
    text the report makes; and the report taking them writes the bytes of the plain one."""
    odd_store(tmp_path / "odd.db")
    stored_runs(tmp_path, 1)
    with Store(tmp_path / "unkind.db") as store:
        store.create_experiment(experiment_record(['c "1"', "c\\2", "čaj", "all-errored"], 4))
        store.record_runs(
            [unkind("e1", c, i, "passed" if i % 3 else "failed") for c in ('c "1"', "c\\2", "čaj")
             for i in range(1, 5)]
            + [unkind("e1", "all-errored", 1, "errored", score=[], error_type="x")]
        )  # fmt: skip
    for db in (tmp_path / "odd.db", tmp_path / "p.db", tmp_path / "unkind.db"):
        assert kept(db) == {}
        before = reports(db)
        cases = len(made(db))
        assert fill(db) == cases > 3
        assert kept(db) == made(db)
        assert fill(db) == 0  # nothing missing: nothing made again
        assert reports(db) == before
        same_report(db)
    odd = kept(tmp_path / "odd.db")
    assert odd["d"] == "" and '"item":"1"' in odd["e"] and '\\"quoted\\"' in odd[ODD]


def test_a_lone_surrogate_is_kept_as_the_escape_the_report_shows(tmp_path: Path) -> None:
    """JSON text Python would not write (a lone surrogate, escaped) is read as its escape
    (attack52b: SQLite cannot hold a lone surrogate), so its case's text is kept like any
    other, as the report makes it."""
    db = tmp_path / "p.db"
    stored_runs(tmp_path, 1)
    sql(db, "UPDATE runs SET score = replace(score, 'AC1', '\\ud800') WHERE case_id = 'case-02'")
    texts = made(db)
    assert "\ud800" not in texts["case-02"] and '"\\\\ud800: conflict"' in texts["case-02"]
    fill(db)
    assert kept(db) == texts


def test_a_report_takes_the_kept_text_and_never_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards the reading: the command's `--json` (streamed, and whole for prices)
    writes a case's kept text as it is (here one set by hand, not through a run), and
    reads a store with no kept text without writing any."""
    import passhat.cli.report as read

    stored_runs(tmp_path, 2)
    db = tmp_path / "p.db"
    args = ("report", "e1", "--json", "--db", str(db))
    want = run_cli(capsys, *args)
    assert want.code == 0 and kept(db) == {}  # read-only: nothing filled
    fill(db)
    assert run_cli(capsys, *args).out == want.out
    mark = '{"case":"case-02","scorer":"planted","item":"x"}'
    with sqlite3.connect(db) as con:
        con.execute("UPDATE case_items SET items = ? WHERE case_id = 'case-02'", (mark,))
    assert mark in run_cli(capsys, *args).out
    priced = run_cli(capsys, *args, "--price", "in=1,out=2")
    assert mark in priced.out
    monkeypatch.setattr(read, "STREAMED_RUNS", 10**9)  # the whole report, not streamed
    assert mark in run_cli(capsys, *args).out


def sql(db: Path, statement: str, *args: Any) -> None:
    with sqlite3.connect(db) as con:
        con.execute(statement, args)


def test_every_write_to_a_case_deletes_its_kept_text(tmp_path: Path) -> None:
    """Guards the triggers: a new run, a run run again (resume --errored: the earlier
    attempt retired), an update of a run or of its summary, a deleted run, a case's id
    changed: the case's row is gone (the others stay, and stay right)."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    sql(db, "UPDATE runs SET status = 'errored' WHERE case_id = 'case-01' AND run_index = 1")
    writes = [
        ("case-05", lambda s: s.record_run(RunRecord("e1", "case-05", 2, "h", "passed"))),
        ("case-01", lambda s: s.record_run(RunRecord("e1", "case-01", 1, "h", "failed", attempt=2))),
        ("case-03", lambda s: sql(db, "UPDATE runs SET status = 'failed' WHERE case_id = 'case-03'")),
        ("case-04", lambda s: sql(db, "UPDATE run_summaries SET items = '[]' WHERE case_id = 'case-04'")),
        ("case-06", lambda s: sql(db, "DELETE FROM runs WHERE case_id = 'case-06' AND run_index = 1")),
        ("case-07", lambda s: sql(db, "UPDATE runs SET case_id = 'case-7b' WHERE case_id = 'case-07'")),
    ]  # fmt: skip
    for case, write in writes:
        fill(db)
        before = kept(db)
        assert case in before
        with Store(db) as store:
            write(store)
        after = kept(db)
        assert case not in after
        gone = {case}
        assert after == {c: t for c, t in before.items() if c not in gone}
        assert after.items() <= made(db).items()
        same_report(db)


def test_each_writer_fills_at_its_end(tmp_path: Path) -> None:
    """Guards where the fill is called: a lease's end (run, resume, rounds and Dask all
    write under one), not a lease given up on an error; an import's or a regrade's
    experiment (`add_experiment_with_runs`, `add_experiment_with_copies`)."""
    stored_runs(tmp_path, 3)
    db = tmp_path / "p.db"
    with Store(db) as store:
        with store.lease("e1"):
            store.record_run(RunRecord("e1", "case-05", 2, "h", "passed"))
        assert store.kept_items("e1") == made(db)
        with pytest.raises(KeyboardInterrupt), store.lease("e1"):
            store.record_run(RunRecord("e1", "case-05", 5, "h", "passed"))
            raise KeyboardInterrupt
        assert "case-05" not in store.kept_items("e1")
        import_and_regrade(store)
        assert len(store.kept_items("e2")) == 4 and len(store.kept_items("e3")) == 2
    for experiment_id in ("e2", "e3"):
        plain, whole, streamed = reports(db, experiment_id)
        assert whole == plain == streamed


def test_a_case_whose_last_run_is_written_is_kept_as_the_runs_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer thread keeps a case's items once it has written the case's last planned
    run (runner._items_kept), before the lease's end; a case kept before another run of
    it is written (its run 2 done first here) loses the text to the trigger then, and
    the lease's end keeps it again, as the report makes it."""
    import asyncio
    import threading

    from cli_helpers import CLARIFY
    from passhat.agents import LoadedAgent
    from passhat.runner import RunOptions, new_experiment, run_experiment
    from passhat.suite import load_suite

    calls: list[tuple[str, object]] = []
    keep = Store.keep_case_items

    def spy(self: Store, experiment_id: str, cases: object = None) -> None:
        calls.append((threading.current_thread().name, cases))
        keep(self, experiment_id, cases)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "keep_case_items", spy)
    suite = load_suite(CLARIFY)
    suite = dataclasses.replace(suite, cases=(suite.case("ac-conflict-001"),))
    second: asyncio.Event | None = None

    async def agent_fn(input: Any, env: Any, ctx: Any) -> str:
        assert second is not None
        if ctx.run_index == 1:
            await second.wait()
            await asyncio.sleep(0.2)  # the run 2's commit and its case's text first
        else:
            second.set()
        return "done"

    agent = LoadedAgent("t:second_first", agent_fn, None)
    experiment = new_experiment(suite, agent, "", None, k=2, params={"max_turns": 1})

    async def main() -> None:
        nonlocal second
        second = asyncio.Event()
        with Store(tmp_path / "p.db") as store:
            store.create_experiment(experiment)
            await run_experiment(store, experiment, suite, agent, None, RunOptions(concurrency=2))

    asyncio.run(main())
    early = [cases for thread, cases in calls if thread.startswith("passhat-store")]
    assert early == [{"ac-conflict-001"}], calls
    assert calls[-1] == ("MainThread", None)
    with Store(tmp_path / "p.db") as store:
        texts = store.kept_items(experiment.id)
        store._db.execute("DELETE FROM case_items")
        store.fill_case_items(experiment.id)
        assert texts == store.kept_items(experiment.id) and len(texts) == 1


def import_and_regrade(store: Store) -> None:
    """e1's first four cases imported as e2 (`add_experiment_with_runs`), its first two
    regraded as e3 (`add_experiment_with_copies`): the two writers without a lease."""
    runs = [r for r in store.runs("e1") if r.case_id < "case-04"]
    imported = experiment_record(["case-00", "case-01", "case-02", "case-03"], 6, id="e2")
    store.add_experiment_with_runs(
        imported, [dataclasses.replace(r, experiment_id="e2") for r in runs]
    )
    regraded = experiment_record(["case-00", "case-01"], 6, id="e3", kind="regrade")
    copies = [dataclasses.replace(r, experiment_id="e3") for r in runs if r.case_id < "case-02"]
    store.add_experiment_with_copies(regraded, "e1", copies)


def test_a_run_and_a_resume_leave_every_case_kept(
    cards: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`passhat run`, then `resume --errored`: every case kept, the report unchanged."""
    db = tmp_path / "p.db"
    r = run_cli(
        capsys, "run", str(cards), "--db", str(db), "-q", "-k", "2",
        "--agent", "agents_for_tests:crashes_on_run_2",
    )  # fmt: skip
    assert r.code == 0, r.err
    with Store(db) as store:
        e = store.experiment("latest")
        assert len(store.kept_items(e.id)) == 8
        sql(db, "DELETE FROM case_items WHERE case_id = 'card-3'")
    assert run_cli(capsys, "resume", "latest", "--db", str(db), "-q", "--errored").code == 0
    with Store(db) as store:
        texts = store.kept_items(e.id)
    assert len(texts) == 8 and all(texts.values())
    plain, whole, streamed = reports(db, e.id)
    assert whole == plain == streamed


def test_random_writes_and_fills_never_change_the_report(tmp_path: Path) -> None:
    """Guards the whole: any sequence of runs written, run again, updated and deleted, by
    passhat or by hand, with fills between (some under a lease), and the report taking
    the kept text is the report made without it."""
    db = tmp_path / "p.db"
    cases = ["a", "b", "c", "d", "é"]
    rng = random.Random(7)
    with Store(db) as store:
        store.create_experiment(experiment_record(cases, 4))
    present: set[tuple[str, int]] = set()
    for step in range(60):
        case, index = rng.choice(cases), rng.randint(1, 4)
        status = rng.choice(["passed", "failed", "errored"])
        run = unkind(
            "e1",
            case,
            index,
            status,
            score=rng.choice([[], unkind("e1", case, rng.randint(1, 3), status).score]),
        )
        action = rng.choice(["write", "write", "again", "update", "delete", "fill", "lease"])
        with Store(db) as store:
            if action in ("write", "lease") and (case, index) not in present:
                if action == "lease":
                    with store.lease("e1"):
                        store.record_run(run)
                else:
                    store.record_run(run)
                present.add((case, index))
            elif action == "again" and (case, index) in present:
                sql(
                    db,
                    "UPDATE runs SET status = 'errored' WHERE case_id = ? AND run_index = ?",
                    case,
                    index,
                )
                attempt = store.runs("e1", cases=[case])
                again = next(r for r in attempt if r.run_index == index).attempt + 1
                store.record_run(dataclasses.replace(run, attempt=again))
            elif action == "update":
                sql(
                    db,
                    "UPDATE runs SET score = '[]' WHERE case_id = ? AND run_index = ?",
                    case,
                    index,
                )
            elif action == "delete":
                sql(db, "DELETE FROM runs WHERE case_id = ? AND run_index = ?", case, index)
                present.discard((case, index))
            else:
                store.fill_case_items("e1")
        assert kept(db).items() <= made(db).items(), step
        same_report(db)


def test_an_older_store_migrates_and_reports_the_same(tmp_path: Path) -> None:
    """A store made before the table: opened (read-only, as `report` opens it) it is
    brought up to date with no kept text, and reports what it reported."""
    stored_runs(tmp_path, 2)
    db = tmp_path / "p.db"
    fill(db)
    want = reports(db)
    # the table's migration and those after it (kept_summaries, case_items as rowid) undone
    at = next(n for n, (name, _) in enumerate(MIGRATIONS, 1) if name.startswith("case_items"))
    with sqlite3.connect(db) as con:
        triggers = con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' "
            "AND (name LIKE 'case_items%' OR name LIKE 'kept_summaries%')"
        ).fetchall()
        for (trigger,) in triggers:
            con.execute(f"DROP TRIGGER {trigger}")
        con.execute("DROP TABLE case_items")
        con.execute("DROP TABLE kept_summaries")
        con.execute("DELETE FROM migrations WHERE version >= ?", (at,))
    old = db
    assert [name.split(" ")[0] for name, _ in MIGRATIONS[at:]] == ["kept_summaries:", "case_items"]
    assert reports(old) == want
    with Store(old) as store:
        assert store.kept_items("e1") == {}
        assert store.migrations()[-1] == MIGRATIONS[-1][0]
    fill(old)
    assert reports(old) == want


def test_damaged_items_are_left_to_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Items text that is not a list (said as the stretch is read): the fill keeps not
    that case, raises nothing (a writer's end does not fail on it), and `report --json`
    says what it said without the fill. A detail of another shape (a custom scorer's own
    "expected") is no item since attack52b: its case is kept, with no items."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    args = ("report", "e1", "--json", "--db", str(db))
    sql(db, "UPDATE run_summaries SET items = 'nope' WHERE case_id = 'case-02' AND run_index = 1")
    sql(
        db,
        "UPDATE run_summaries SET items = ? WHERE case_id = 'case-09'",
        '[{"expected": 5, "missing": []}]',
    )
    before = run_cli(capsys, *args)
    assert before.code != 0 and "case-02" in before.err
    fill(db)
    texts = kept(db)
    assert "case-02" not in texts and texts["case-09"] == "" and "case-10" in texts
    after = run_cli(capsys, *args)
    assert (after.code, after.err) == (before.code, before.err)


KEPT_FORMAT = (
    '{"case":"c","scorer":"s p","item":"a","expected":true,"runs":[1,2],"hits":[1,2],'
    '"misses":[],"verdict":"always found"},'
    '{"case":"c","scorer":"s p","item":"b","expected":true,"runs":[1,2],"hits":[2],'
    '"misses":[1],"verdict":"sometimes missed"},'
    '{"case":"c","scorer":"s p","item":"z","expected":false,"runs":[1,2],"hits":[1],'
    '"misses":[2],"verdict":"extra, sometimes"}'
)


def test_the_kept_texts_format_is_pinned() -> None:
    """Stores keep this text: should this test fail because the items of `report --json`
    changed, add a migration that clears case_items (DELETE FROM case_items), or the
    reports of older stores would mix the two formats, then pin the new text here."""
    missed = [{"scorer": "s", "path": "p", "expected": ["a", "b"], "missing": ["b"]}]
    found = [{"scorer": "s", "path": "p", "expected": ["a", "b"], "missing": []}]
    missed[0]["extra"], found[0]["extra"] = ["z"], []
    assert ItemText().text("c", [1, 2], [missed, found]) == KEPT_FORMAT
    assert ItemText().text("c", [], []) == ""


@pytest.mark.parametrize("filled", ["fill_case_items", "fill_summary"])
def test_a_store_that_cannot_take_the_kept_text_leaves_the_runs_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filled: str
) -> None:
    """The fill at a writer's end spares the report work only: a store locked past its
    busy timeout or full then ends no run, import or regrade in an error (review52);
    nor does the kept summary's (`Store.fill_summary`, at a lease's end)."""
    stored_runs(tmp_path, 3)
    db = tmp_path / "p.db"

    def refused(self: Store, experiment_id: str, cases: object = None) -> int:
        raise StoreError("database or disk is full")

    monkeypatch.setattr(Store, filled, refused)
    with Store(db) as store:
        with store.lease("e1"):
            store.record_run(RunRecord("e1", "case-05", 2, "h", "passed"))
        runs = [r for r in store.runs("e1") if r.case_id < "case-02"]
        imported = experiment_record(["case-00", "case-01"], 6, id="e2")
        store.add_experiment_with_runs(
            imported, [dataclasses.replace(r, experiment_id="e2") for r in runs]
        )
        assert {r.case_id for r in store.runs("e2")} == {"case-00", "case-01"}
        assert ("case-05" in store.kept_items("e1")) is (filled != "fill_case_items")
    plain, whole, streamed = reports(db, "e2")
    assert whole == plain == streamed
