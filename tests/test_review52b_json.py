"""review52b's findings on json52's kept items text (`case_items`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from passhat.records import RunRecord
from passhat.store import Store
from test_report_json import stored_runs


def junit_report(db: Path, junit: Path) -> tuple[str, ...]:
    """`report --json` with a JUnit file beside it: its JSON is not read in one snapshot."""
    return ("report", "e1", "--json", "--db", str(db), "--junit-xml", str(junit))


def test_a_report_not_in_one_snapshot_takes_no_text_kept_after_its_runs_were_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report --json --junit-xml F` (or --summary, --html) for a pipe reads its runs
    outside one snapshot: a `passhat run` that records a run of a case and fills the
    kept text between the runs' read and the kept text's read must not put that run
    into the items while the counts, usage and tools leave it out. The report is the
    one of the store as its runs were read (a copy of it then, reported alone)."""
    stored_runs(tmp_path, 1)
    db = tmp_path / "p.db"
    with Store(db) as store:
        store.fill_case_items("e1")
    before = tmp_path / "before.db"
    shutil.copy(db, before)
    expected = run_cli(capsys, *junit_report(before, tmp_path / "a.xml"))
    assert expected.code == 0, expected.err

    original = Store.summaries
    written: list[bool] = []

    def read_then_a_run_lands(self: Store, *args: Any, **kwargs: Any) -> Any:
        runs = original(self, *args, **kwargs)
        if not written:  # another process's run of case-05 lands, and its lease's end fills
            written.append(True)
            with Store(db) as other, other.lease("e1"):
                other.record_run(RunRecord("e1", "case-05", 2, "h", "passed"))
        return runs

    monkeypatch.setattr(Store, "summaries", read_then_a_run_lands)
    raced = run_cli(capsys, *junit_report(db, tmp_path / "b.xml"))
    assert written and raced.code == 0, raced.err
    assert raced.out == expected.out


def test_a_really_full_store_ends_a_lease_with_its_runs_written_and_the_lease_let_go(
    tmp_path: Path,
) -> None:
    """The fill at a lease's end on a store that may grow by no page (SQLite's
    max_page_count: a full disk, not a stand-in for the fill): the lease ends without
    an error, is let go, and no kept text is written (the report makes the items)."""
    stored_runs(tmp_path, 1)
    with Store(tmp_path / "p.db") as store:
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")
        with store.lease("e1"):
            pass
        assert store.kept_items("e1") == {}
        assert store.lease_holder("e1") is None
        store._db.execute("PRAGMA max_page_count = 1073741823")
        assert store.fill_case_items("e1") > 0  # the room was all it lacked
