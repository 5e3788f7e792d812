"""An experiment's figures and cases of `report --json` kept in the store
(`kept_summaries`, `Store.fill_summary`, `Store.kept_summary`): the kept text is the text
the report makes, any write to the experiment's runs, row or case_k deletes it, a
lease's end fills it (not an import's or a regrade's), and a report that takes it writes
the very bytes of one that computes the intervals, without importing numpy."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from passhat.records import RunRecord
from passhat.report import json_frame
from passhat.report.digest import tallied
from passhat.report.json_frame import KEPT_FORECAST_M, kept_summary_format, summary_pieces
from passhat.store import Store, case_items
from records_for_tests import experiment_record
from test_case_items import import_and_regrade, odd_store, reports, sql
from test_report_json import stored_runs


@pytest.fixture(autouse=True)
def kept_from_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A summary kept for an experiment of any size (the stores here are small)."""
    monkeypatch.setattr(case_items, "KEPT_SUMMARY_RUNS", 1)


def kept(db: Path, experiment_id: str = "e1") -> str | None:
    with Store(db) as store:
        pieces = store.kept_summary(experiment_id, kept_summary_format())
        return None if pieces is None else "".join(pieces)


def made(db: Path, experiment_id: str = "e1") -> str:
    """The summary text made now from the runs counted in SQL, as the report makes it."""
    with Store(db) as store:
        tallies = store.tallies(experiment_id, parts=False)
        assert tallies is not None
        counted = tallied(tallies, store.experiment(experiment_id), 0)
        assert counted is not None
        return "".join(summary_pieces(counted[1], KEPT_FORECAST_M))


def fill(db: Path, experiment_id: str = "e1") -> int:
    with Store(db) as store:
        return store.fill_summary(experiment_id)


def same_report(db: Path) -> None:
    plain, whole, streamed = reports(db)
    assert whole == plain == streamed


def test_the_kept_summary_is_the_reports_text(tmp_path: Path) -> None:
    """Guards the fill: the text kept is the one the streamed report makes (odd items,
    errored, missing and retried runs, a case with every run errored), in pieces, once;
    the report taking it writes the bytes of the plain one."""
    stored_runs(tmp_path, 1)
    odd_store(tmp_path / "odd.db")
    for db in (tmp_path / "p.db", tmp_path / "odd.db"):
        before = reports(db)
        assert kept(db) is None
        assert fill(db) >= 1
        assert kept(db) == made(db)
        assert kept(db).startswith(',"dataset":{')  # type: ignore[union-attr]
        assert fill(db) == 0  # kept already: nothing made again
        assert reports(db) == before
        same_report(db)


def test_the_fill_keeps_none_below_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An experiment of fewer runs than `KEPT_SUMMARY_RUNS` keeps none (its report
    computes it), nor one with no counted run."""
    stored_runs(tmp_path, 2)
    db = tmp_path / "p.db"
    monkeypatch.setattr(case_items, "KEPT_SUMMARY_RUNS", 10**6)
    assert fill(db) == 0 and kept(db) is None
    monkeypatch.setattr(case_items, "KEPT_SUMMARY_RUNS", 1)
    sql(db, "UPDATE runs SET status = 'errored', error_type = 'x'")
    assert fill(db) == 0 and kept(db) is None
    same_report(db)


def test_a_report_takes_the_kept_summary_without_numpy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Guards the reading: `report --json` for a pipe writes the kept text as it is (here
    planted by hand) and imports neither numpy nor passhat.stats; a report at another
    horizon computes its own, and a store that keeps none is reported as before."""
    stored_runs(tmp_path, 3)
    db = tmp_path / "p.db"
    args = ("report", "e1", "--json", "--db", str(db))
    want = run_cli(capsys, *args)
    assert want.code == 0
    assert imports(db) == {"numpy": True, "passhat.stats": True}  # none kept: computed
    fill(db)
    assert run_cli(capsys, *args).out == want.out
    assert imports(db) == {"numpy": False, "passhat.stats": False}
    text = kept(db)
    assert text is not None
    planted = text.replace('"pass_rate":', '"pass_rate_planted":', 1)
    sql(db, "UPDATE kept_summaries SET text = ? WHERE part = 0", planted.split(',"cases":[')[0])
    assert "pass_rate_planted" in run_cli(capsys, *args).out
    other = run_cli(capsys, *args, "--forecast", "5").out
    assert "pass_rate_planted" not in other and '"pass_rate":' in other


def imports(db: Path) -> dict[str, bool]:
    """Whether `passhat report e1 --json` of `db` (for a pipe, in a process of its own)
    imported numpy and passhat.stats."""
    code = (
        "import sys\n"
        "from passhat.cli import main\n"
        "try:\n"
        f"    main(['report', 'e1', '--json', '--db', {str(db)!r}])\n"
        "except SystemExit as exit_:\n"
        "    assert exit_.code == 0, exit_.code\n"
        "print(file=sys.stderr)\n"
        "print('numpy' in sys.modules, 'passhat.stats' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    numpy, stats = done.stderr.split()[-2:]
    return {"numpy": numpy == "True", "passhat.stats": stats == "True"}


def test_a_kept_summary_of_another_format_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept by another passhat or text format (`kept_summary_format`): not read, and the
    next fill replaces it."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    fill(db)
    sql(db, "UPDATE kept_summaries SET text = 'planted' WHERE part = 0")
    monkeypatch.setattr(json_frame, "KEPT_FORMAT", json_frame.KEPT_FORMAT + 1)
    assert kept(db) is None
    same_report(db)
    assert fill(db) >= 1 and kept(db) == made(db)


def test_a_kept_summary_made_under_another_numpy_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bootstrap's draws are numpy's generators', which a numpy release may change
    (NEP 19): a text kept under another numpy is not read, and the next fill replaces it."""
    import passhat._lazy

    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    fill(db)
    sql(db, "UPDATE kept_summaries SET text = 'planted' WHERE part = 0")
    real = passhat._lazy.installed_version
    monkeypatch.setattr(passhat._lazy, "installed_version", lambda name: real(name) + ".post1")
    assert kept(db) is None
    same_report(db)
    assert fill(db) >= 1 and kept(db) == made(db)


def test_numpys_version_is_read_without_importing_it() -> None:
    """`installed_version` gives numpy's own `__version__` and leaves numpy unimported."""
    code = (
        "import sys; from passhat._lazy import installed_version; "
        "v = installed_version('numpy'); seen = 'numpy' in sys.modules; "
        "import numpy; print(v == numpy.__version__, seen)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"], done.stdout


WRITES: list[tuple[str, Callable[[Store, Path], Any]]] = [
    ("a new run", lambda s, db: s.record_run(RunRecord("e1", "case-05", 2, "h", "passed"))),
    ("a run run again", lambda s, db: s.record_run(RunRecord("e1", "case-01", 1, "h", "failed", attempt=2))),
    ("a run's status", lambda s, db: sql(db, "UPDATE runs SET status = 'failed' WHERE case_id = 'case-03'")),
    ("a summary", lambda s, db: sql(db, "UPDATE run_summaries SET status = 'failed' WHERE case_id = 'case-04'")),
    ("a run deleted", lambda s, db: sql(db, "DELETE FROM runs WHERE case_id = 'case-06' AND run_index = 1")),
    ("the plan's k", lambda s, db: sql(db, "UPDATE experiments SET k_requested = 9 WHERE id = 'e1'")),
    ("the cases", lambda s, db: sql(db, "UPDATE experiments SET case_ids = '[\"case-00\", \"new\"]' WHERE id = 'e1'")),
    ("a case's k", lambda s, db: sql(db, "INSERT INTO case_k VALUES ('e1', 'case-02', 7)")),
    ("a case's k changed", lambda s, db: sql(db, "UPDATE case_k SET k_requested = 8")),
    ("a case's k dropped", lambda s, db: sql(db, "DELETE FROM case_k")),
]  # fmt: skip


@pytest.mark.parametrize("write", [w for _, w in WRITES], ids=[name for name, _ in WRITES])
def test_every_write_to_the_experiment_deletes_its_kept_summary(
    tmp_path: Path, write: Callable[[Store, Path], Any]
) -> None:
    """Guards the triggers: whatever changes the accounting (a run, its summary, the
    experiment's row, a case's k) deletes the kept text, and the report computes it
    again; another experiment's stays."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    sql(db, "UPDATE runs SET status = 'errored' WHERE case_id = 'case-01' AND run_index = 1")
    with Store(db) as store:
        store.add_experiment_with_runs(
            experiment_record(["case-00"], 3, id="e2"),
            [RunRecord("e2", "case-00", 1, "h", "passed")],
        )
        store._db.execute("INSERT INTO case_k VALUES ('e1', 'case-01', 6)")
    fill(db)
    fill(db, "e2")
    other = kept(db, "e2")
    assert kept(db) is not None and other is not None
    with Store(db) as store:
        write(store, db)
    assert kept(db) is None
    assert kept(db, "e2") == other
    same_report(db)
    fill(db)
    assert kept(db) == made(db)


def test_a_leases_end_keeps_it_not_an_import_nor_a_regrade(tmp_path: Path) -> None:
    """Guards where the fill is called: a lease's end (run, resume, rounds and Dask all
    write under one), not a lease given up on an error, nor an import's or a regrade's
    end (`add_experiment_with_runs`, `add_experiment_with_copies`: their peak memory
    stays without numpy)."""
    stored_runs(tmp_path, 2)
    db = tmp_path / "p.db"
    with Store(db) as store:
        with store.lease("e1"):
            store.record_run(RunRecord("e1", "case-05", 2, "h", "passed"))
        assert kept(db) == made(db)
        with pytest.raises(KeyboardInterrupt), store.lease("e1"):
            store.record_run(RunRecord("e1", "case-05", 5, "h", "passed"))
            raise KeyboardInterrupt
        assert kept(db) is None
        import_and_regrade(store)
    assert kept(db, "e2") is None and kept(db, "e3") is None


def test_a_store_it_cannot_be_made_of_keeps_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged run (its items not a list), or text SQLite cannot hold (a lone
    surrogate, which the store's own reads never give: made here by hand): no text
    kept, no error, no piece of it written."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    with sqlite3.connect(db) as con:
        con.execute("DROP TRIGGER kept_summaries_run_summaries_update")  # the damage kept apart
        con.execute("UPDATE run_summaries SET items = 'x' WHERE case_id = 'case-02'")
    assert fill(db) == 0 and kept(db) is None
    (tmp_path / "p.db").unlink()
    stored_runs(tmp_path, 2)
    monkeypatch.setattr(json_frame, "summary_pieces", lambda *_: iter(["ok", "\ud800"]))
    assert fill(db) == 0 and kept(db) is None
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM kept_summaries").fetchone() == (0,)


def test_the_kept_summarys_text_is_pinned() -> None:
    """Stores keep this text, told apart by `kept_summary_format`: should this test fail
    because the figures or cases of `report --json` changed, add one to
    `json_frame.KEPT_FORMAT` (older stores' text is then made again, not shown), then
    pin the new text's digest and format here."""
    import hashlib

    from passhat.accounting import account

    runs = [
        (f"c{c}", i, ("passed", "failed", "errored")[(c * i) % 3])
        for c in range(5)
        for i in (1, 2, 3)
    ]
    text = "".join(summary_pieces(account(runs, 4, ["c5"]), KEPT_FORECAST_M))
    assert json_frame.KEPT_FORMAT == 2
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "199a2ea117400e78"


def test_the_kept_summarys_text_of_an_adaptive_experiment_is_pinned() -> None:
    """review54: as `test_the_kept_summarys_text_is_pinned`, for what that accounting of
    one k never writes: an adaptive rule's cases asked fewer runs (`case_k`: `k_least`,
    `at_requested_k` and its cases left out), a case never run, runs missing between.
    A change there alone left the pin as it was, and stores showed the older text."""
    import hashlib

    from passhat.accounting import account

    cases = [f"c{c:02d}" for c in range(30)]
    case_k = {c: 2 for c in cases[::3]}
    runs = [
        (c, i, ("passed", "failed", "errored", "passed")[(n * i) % 4])
        for n, c in enumerate(cases)
        for i in range(1, case_k.get(c, 5) + 1)
        if (n + i) % 7
    ]
    accounting = account(runs, 5, [*cases, "never"], case_k)
    assert accounting.k_varies
    text = "".join(summary_pieces(accounting, KEPT_FORECAST_M))
    assert '"at_requested_k":{' in text and '"left_out":[' in text
    assert json_frame.KEPT_FORMAT == 2
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "7e071714d145a208"


def _writing_meanwhile(monkeypatch: pytest.MonkeyPatch, db: Path, statement: str) -> list[str]:
    """`summary_pieces` that, before its first piece (the intervals being made), has
    another connection run `statement` with a short busy timeout: what it met, in the
    list returned ("written" or SQLite's error)."""
    met: list[str] = []
    real = json_frame.summary_pieces

    def pieces(*args: Any) -> Any:
        try:
            with sqlite3.connect(db, timeout=0.2) as con:
                con.execute(statement)
            met.append("written")
        except sqlite3.OperationalError as error:
            met.append(str(error))
        yield from real(*args)

    monkeypatch.setattr(json_frame, "summary_pieces", pieces)
    return met


def test_a_fill_holds_no_write_lock_while_it_makes_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review54: the fill made the text (numpy imported, the bootstrap drawn: 3 s of CPU
    at 1,000,000 runs, 9-10 s of wall at load 18) inside BEGIN IMMEDIATE, so every other
    writer of the store (another experiment's run, its lease's heartbeat) waited that
    long at a lease's end, and one whose busy timeout is shorter failed "database is
    locked". Now it reads in a snapshot and writes once the text is made."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    with Store(db) as store:
        store.create_experiment(experiment_record(["x"], 1, id="e2"))
    met = _writing_meanwhile(
        monkeypatch,
        db,
        "INSERT INTO runs (experiment_id, case_id, run_index, case_hash, "
        "status, output, final_state, score, transcript, tool_calls, started_at, duration_s, "
        "input_tokens, output_tokens, seed, retries) "
        "VALUES ('e2', 'x', 1, 'h', 'passed', '1', '{}', '[]', '[]', '[]', 0, 0, 0, 0, 0, '[]')",
    )
    assert fill(db) >= 1
    assert met == ["written"]
    monkeypatch.undo()
    monkeypatch.setattr(case_items, "KEPT_SUMMARY_RUNS", 1)
    assert kept(db) == made(db)
    same_report(db)


def test_a_write_to_the_experiment_while_the_text_is_made_keeps_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review54: with the text made outside the write lock, a run of the experiment
    written meanwhile (its trigger deletes the fill's mark) leaves no text kept: the
    text was made of the runs before it."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    met = _writing_meanwhile(
        monkeypatch, db, "UPDATE runs SET status = 'failed' WHERE case_id = 'case-03'"
    )
    assert fill(db) == 0
    assert met == ["written"]
    monkeypatch.undo()
    monkeypatch.setattr(case_items, "KEPT_SUMMARY_RUNS", 1)
    assert kept(db) is None
    with sqlite3.connect(db) as con:  # nothing of the fill left behind
        assert con.execute("SELECT count(*) FROM kept_summaries").fetchone() == (0,)
    assert fill(db) >= 1 and kept(db) == made(db)


def test_a_fill_cut_short_is_not_read_and_the_next_replaces_it(tmp_path: Path) -> None:
    """review54: a fill killed while it wrote (kill -9) leaves its mark and unfinished
    pieces: the report takes none of them, and the next fill makes the text anew."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    before = reports(db)
    sql(db, "INSERT INTO kept_summaries VALUES ('e1', -1, '', 'token')")
    sql(db, "INSERT INTO kept_summaries VALUES ('e1', 0, '', ',\"dataset\":planted')")
    assert kept(db) is None
    assert reports(db) == before
    assert fill(db) >= 1 and kept(db) == made(db)
