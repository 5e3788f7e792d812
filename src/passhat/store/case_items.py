"""Each case's items of `report --json` kept as text (the table `case_items`), and an
experiment's figures and cases (`kept_summaries`): filled when a writer finishes
(`Store.fill_case_items`: the end of a run, resume, round or Dask run, which all hold
the experiment's lease, and of an import or regrade, and for a case once a runner's
writer thread has written its last planned run; `Store.fill_summary`: at a lease's
end, for an experiment of many runs), read by the report (`Store.kept_items`,
`Store.kept_summary`). A write to a case's run summaries deletes its row and the
experiment's summary, as does a write to the experiment's row or case_k (the triggers
of the migrations that made the tables), so a row present is always right and a row
missing is computed as before; a read-only store is never written.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from itertools import chain
from typing import Any

from passhat.errors import StoreError
from passhat.store.tallies import _Tallies

FILLED_AT_ONCE = 100
"""Cases whose counted runs' items are read at a time (each is a bound value): at 1,000
the stretch held 6 MB more at the end of a regrade of 100,000 runs (72 against 66 MB,
past `report --json`'s 69), for no less CPU (0.49 against 0.48 s)."""

_MISSING = """
    SELECT case_id, counted FROM (
        SELECT case_id, sum(status != 'errored') AS counted
        FROM run_summaries INDEXED BY run_summaries_cases
        WHERE experiment_id = ? GROUP BY case_id
    ) AS cases WHERE NOT EXISTS (
        SELECT 1 FROM case_items AS kept WHERE kept.experiment_id = ? AND kept.case_id = cases.case_id
    ) ORDER BY case_id
"""
"""Each case of an experiment's runs with no kept text, and its count of counted runs."""


_MISSING_OF = _MISSING.replace(
    "WHERE experiment_id = ?", "WHERE experiment_id = ? AND case_id IN ({})"
)
"""`_MISSING` of some cases (their ids bound after the experiment's)."""

CASES_AT_ONCE = 500
"""Case ids bound in one `_MISSING_OF` (SQLite allows 999 values a statement at least)."""

_KEEP = "INSERT OR REPLACE INTO case_items VALUES (?, ?, ?)"


def _utf8(text: str) -> bool:
    """Whether SQLite can take `text`: a lone surrogate is not UTF-8 (the report then
    makes the case's items, and says what it says of them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _keep(db: sqlite3.Connection, rows: list[tuple[str, str, str]]) -> int:
    """Write `rows` (experiment, case, text) but those SQLite cannot take; how many."""
    try:
        db.executemany(_KEEP, rows)
    except UnicodeEncodeError:  # a lone surrogate (escaped in the stored JSON)
        rows = [row for row in rows if _utf8(row[2])]
        db.executemany(_KEEP, rows)
    return len(rows)


KEPT_SUMMARY_RUNS = 10_000
"""Runs an experiment has from which a writer's end keeps its summary (`fill_summary`):
below, a report computes it in a few milliseconds (the kept text would cost a writer
more than it spares), numpy's import aside."""


_MARK = "INSERT INTO kept_summaries VALUES (?, -1, '', ?)"
"""A fill's mark (part -1, read first: its format '' is no passhat's), its text the
fill's own token."""
_PIECE = "INSERT INTO kept_summaries VALUES (?, ?, '', ?)"
"""A piece of a summary being made: unfinished (format '') until `_MADE`."""
_MADE = "UPDATE kept_summaries SET format = ? WHERE experiment_id = ? AND part >= 0"
"""The pieces of a summary made whole: its format set."""
_UNMARK = "DELETE FROM kept_summaries WHERE experiment_id = ? AND part = -1"


class _NotKept(Exception):
    """A summary that cannot be kept: its transaction is undone."""


class _CaseItems(_Tallies):
    """The kept text of each case's items and of an experiment's summary: read, and
    filled where missing."""

    def kept_items(
        self, experiment_id: str, first: str | None = None, last: str | None = None
    ) -> dict[str, str]:
        """The kept items text of the experiment's cases (from `first` to `last`, both
        included, when given): case id -> its entries of the items list ('' for none)."""
        where, args = "experiment_id = ?", [experiment_id]
        if first is not None and last is not None:
            where += " AND case_id BETWEEN ? AND ?"
            args += [first, last]
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(f"SELECT case_id, items FROM case_items WHERE {where}", args)
        return dict(rows.fetchall())

    def fill_case_items(self, experiment_id: str, cases: Collection[str] | None = None) -> int:
        """Keep the items text of every case of the experiment (of `cases`, when given)
        that has runs and no kept text, made by the code `report --json` makes it with
        (`report.parts_json`), from the same summaries, in one transaction (no run is
        written between the read and the write). A case whose items cannot be made (a
        damaged store) is left without: the report then says what is wrong. Returns the
        rows written."""
        from passhat.report.parts_json import ItemText

        maker = ItemText()
        with self.atomic() as db:
            missing = self._missing_items(db, experiment_id, cases)
            written = _keep(db, [(experiment_id, case, "") for case, n in missing if not n])
            counted = [(case, n) for case, n in missing if n]
            for start in range(0, len(counted), FILLED_AT_ONCE):
                stretch = counted[start : start + FILLED_AT_ONCE]
                wanted = dict(stretch)
                rows = []  # a stretch at a time: at 1,000,000 runs the texts are 100 MB
                for case, runs, values in self._counted_of(experiment_id, stretch):
                    if case not in wanted:  # a case kept already, between two missing
                        continue
                    try:
                        rows.append((experiment_id, case, maker.text(case, runs, values)))
                    except Exception:  # the report's own making says it
                        continue
                written += _keep(db, rows)
        return written

    def keep_case_items(self, experiment_id: str, cases: Collection[str] | None = None) -> None:
        """`fill_case_items` where a writer finishes (or, for `cases` whose planned runs
        are all written, as it goes): the kept text only spares a report work, so a
        store that cannot take it now (locked past the busy timeout, full) leaves the
        cases to be made by the report, and the runs just written stand."""
        with contextlib.suppress(StoreError):
            self.fill_case_items(experiment_id, cases)

    @staticmethod
    def _missing_items(
        db: sqlite3.Connection, experiment_id: str, cases: Collection[str] | None
    ) -> list[tuple[str, int]]:
        """(case, counted runs) of the experiment's cases (of `cases`) with runs and no
        kept text, by case id."""
        if cases is None:
            found: list[tuple[str, int]] = db.execute(
                _MISSING, (experiment_id, experiment_id)
            ).fetchall()
            return found
        ids, found = sorted(cases), []
        for start in range(0, len(ids), CASES_AT_ONCE):
            some = ids[start : start + CASES_AT_ONCE]
            query = _MISSING_OF.format(", ".join("?" * len(some)))
            found += db.execute(query, (experiment_id, *some, experiment_id)).fetchall()
        return found

    def keep_summary(self, experiment_id: str) -> None:
        """`fill_summary` where a run, resume, round or Dask run finishes (its lease's
        end), as `keep_case_items`: a store that cannot take it leaves it to the report.
        Not at an import's or regrade's end: their peak memory stays what it was
        (numpy is not imported for it; bench_commands holds them to `report --json`'s)."""
        with contextlib.suppress(StoreError):
            self.fill_summary(experiment_id)

    def kept_summary(self, experiment_id: str, made_by: str) -> Iterator[str] | None:
        """The experiment's kept summary text in its pieces (read as they are taken),
        or None when none is kept, a fill is making it (its mark, format '', is read
        first), or another passhat or format made it (`made_by`:
        `report.json_frame.kept_summary_format()`)."""
        cursor = self._db.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT format, text FROM kept_summaries WHERE experiment_id = ? ORDER BY part",
            (experiment_id,),
        )
        first = rows.fetchone()
        if first is None or first[0] != made_by:
            return None
        return chain((first[1],), (text for _, text in rows))

    def fill_summary(self, experiment_id: str) -> int:
        """Keep the figures and cases of the experiment's `report --json` (its intervals
        at the report's default horizon) as the streamed report makes them
        (`report.json_frame.summary_pieces` of the runs counted per case in SQL), when it
        has `KEPT_SUMMARY_RUNS` runs or more and a counted one. Made without the store's
        write lock (at 1,000,000 runs 3 s of CPU: every other writer of the store waited
        on it): a mark is written first, which any write to the experiment's runs, row
        or case_k deletes (the triggers), the runs are read in one snapshot after it,
        and the text, written as made, counts only if the mark is still there once it
        is all written. Kept already, or not to be made (a damaged store, text SQLite
        cannot take, a write meanwhile): nothing kept. Returns the pieces written."""
        (runs,) = self._db.execute(  # a small experiment's end: one count, no transaction
            "SELECT count(*) FROM run_summaries INDEXED BY run_summaries_cases "
            "WHERE experiment_id = ?",
            (experiment_id,),
        ).fetchone()
        if runs < KEPT_SUMMARY_RUNS:
            return 0
        from passhat.report.json_frame import kept_summary_format

        made_by, mark = kept_summary_format(), secrets.token_hex(8)
        with self.atomic() as db:
            if self.kept_summary(experiment_id, made_by) is not None:
                return 0
            db.execute("DELETE FROM kept_summaries WHERE experiment_id = ?", (experiment_id,))
            db.execute(_MARK, (experiment_id, mark))
        try:
            written = self._summary_under(experiment_id, mark)
            with self.atomic() as db:
                if written and self._marked(experiment_id, mark):
                    db.execute(_MADE, (made_by, experiment_id))
                    db.execute(_UNMARK, (experiment_id,))
                    return written
        except StoreError:  # the store's state (locked, full): said to the caller
            self._unmark(experiment_id, mark)
            raise
        except Exception:  # not to be made (a damaged run): the report's own making says it
            pass
        self._unmark(experiment_id, mark)
        return 0

    def _summary_under(self, experiment_id: str, mark: str) -> int:
        """The summary's pieces written unfinished (format ''), a transaction each, while
        the fill's `mark` stands; the pieces written (0: none to make, or a write came)."""
        from passhat.report.digest import tallied
        from passhat.report.json_frame import KEPT_FORECAST_M, summary_pieces

        with self.snapshot():
            tallies = self.tallies(experiment_id, parts=False, errored_runs=False)
            counted = tallied(tallies, self.experiment(experiment_id), 0) if tallies else None
        if counted is None or not counted[1].runs_counted:
            return 0
        written = 0
        for part, text in enumerate(summary_pieces(counted[1], KEPT_FORECAST_M)):
            if not _utf8(text):  # a lone surrogate: SQLite cannot take it
                raise _NotKept
            with self.atomic() as db:
                if not self._marked(experiment_id, mark):
                    return 0
                db.execute(_PIECE, (experiment_id, part, text))
            written += 1
        return written

    def _marked(self, experiment_id: str, mark: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM kept_summaries WHERE experiment_id = ? AND part = -1 AND text = ?",
            (experiment_id, mark),
        ).fetchone()
        return row is not None

    def _unmark(self, experiment_id: str, mark: str) -> None:
        """The fill's mark and unfinished pieces deleted, while its mark stands (another
        fill's are its own); a store that cannot take it now leaves them, never read."""
        with contextlib.suppress(StoreError), self.atomic() as db:
            if self._marked(experiment_id, mark):
                db.execute("DELETE FROM kept_summaries WHERE experiment_id = ?", (experiment_id,))

    def _counted_of(
        self, experiment_id: str, stretch: Sequence[tuple[str, int]]
    ) -> Iterator[tuple[str, list[int], list[Sequence[dict[str, Any]]]]]:
        """`counted_items` of a stretch of cases. Damaged text (not a list) is said
        before any case of its stretch is given: the stretch is then read case by case,
        and the damaged case alone is left unkept."""
        try:
            read = list(self.counted_items(experiment_id, stretch))
        except StoreError:
            for one in stretch:
                try:
                    read = list(self.counted_items(experiment_id, [one]))
                except StoreError:
                    continue
                yield from read
            return
        yield from read
