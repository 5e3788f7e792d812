"""`passhat regrade EXPERIMENT`: the stored final states scored again, no agent, no model."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from passhat.cli._app import app, console, write_json
from passhat.cli._help import examples
from passhat.cli._options import JsonOption
from passhat.cli._store import DbOption, ExperimentArg, open_store
from passhat.plain import plural

if TYPE_CHECKING:
    from passhat.records import RunRecord
    from passhat.store import Store

MAX_CHANGES_SHOWN = 20
CASES_READ = 100
"""Cases whose runs are read at once: a regrade of 100,000 runs held them all, whole
(2.2 GB); now about a thousand at a time, with what grading reads of them."""
CACHE_KIB = 512
"""SQLite's page cache of each of the regrade's two connections (and their temporary
tables), in KiB: each page is read or written about once, in order, so its default
2,000 KiB each held 4 MB more at 100,000 runs for no speed (9.6 s either way)."""


def _stored_runs(store: Store, experiment_id: str, cases: Sequence[str]) -> Iterator[RunRecord]:
    """The runs of `cases` by case and index, with what grading reads of them
    (`Store.graded`), CASES_READ cases at a time."""
    ordered = sorted(cases)
    for start in range(0, len(ordered), CASES_READ):
        yield from store.graded(experiment_id, ordered[start : start + CASES_READ])


@app.command(
    epilog=examples(
        "passhat regrade latest",
        "passhat regrade mine-1 --suite my-suite --name mine-1-regraded --accept-changes",
    )
)
def regrade(
    experiment_ref: ExperimentArg,
    suite_dir: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            metavar="DIR",
            help="Suite whose current goals and scorers grade the runs. Default: the "
            "folder the experiment ran on.",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="A unique name for the regrade experiment.")
    ] = None,
    accept_changes: Annotated[
        bool,
        typer.Option(
            "--accept-changes",
            help="The suite changed since the experiment was graded, and the change is "
            "yours: grade under it. Without it such a suite is refused, naming the files.",
        ),
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            help="Seconds a scorer may take on one run. Default: the experiment's run timeout.",
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Score a stored experiment's final states again under the suite's current goals and
    scorers, as a new experiment linked to it: no agent runs, no model is called."""
    from passhat.errors import InputError
    from passhat.regrade import (
        Changes,
        check_regradable,
        regrade_experiment,
        regrade_runs,
        scorer_timeout,
    )
    from passhat.tamper import load

    if timeout is not None and not timeout > 0:
        raise InputError(f"--timeout is {timeout:g}; give a scorer more than 0 seconds")
    # the runs are read through a connection of their own: SQLite copies the regraded
    # ones on the store's own, on a thread of its own, while the next ones are graded
    with open_store(db) as store, open_store(db, read_only=True) as reader:
        store.cache_at_most(CACHE_KIB)
        reader.cache_at_most(CACHE_KIB)
        source = store.experiment(experiment_ref)
        check_regradable(source)
        # its files watched from the load on: a change before the first run read is seen
        suite, guard = load(suite_dir or source.suite_path)
        try:
            e, notes = regrade_experiment(source, suite, name=name, accept_changes=accept_changes)
            changes = Changes(MAX_CHANGES_SHOWN, keep_all=as_json)
            limit = timeout if timeout is not None else scorer_timeout(source)
            stored = _stored_runs(reader, source.id, e.case_ids)
            runs = regrade_runs(suite, e, stored, changes, limit, guard)
            # in one transaction, as read; transcripts and the rest copied by SQLite
            written = store.add_experiment_with_copies(e, source.id, runs, overlapped=True)
        finally:
            if guard is not None:
                guard.close()
    if as_json:
        write_json(
            {
                "experiment": e.id,
                "name": e.name,
                "source": e.source,
                "fingerprint": e.fingerprint,
                "runs": written,
                "changes": [
                    {"case": c.case, "run": c.run, "before": c.before, "after": c.after}
                    for c in changes
                ],
                "notes": list(notes),
            }
        )
        return
    was = source.name or source.id
    console.print(
        Text(
            f"regraded {plural(written, 'run')} of experiment {was} under suite {suite.name} "
            f"({suite.path}) → experiment {e.id}" + (f" ({e.name})" if e.name else ""),
            style="bold",
        ),
        soft_wrap=True,
    )
    console.print(
        Text(f"  no agent ran, no model was called; fingerprint {e.fingerprint}"), soft_wrap=True
    )
    if changes:
        console.print(Text(f"  {len(changes)} verdicts changed:"))
        for c in changes.first():
            console.print(Text(f"    {c.case} run {c.run}: {c.before} → {c.after}"))
        if len(changes) > MAX_CHANGES_SHOWN:
            console.print(Text(f"    … and {len(changes) - MAX_CHANGES_SHOWN} more"))
    else:
        console.print(Text("  no verdict changed"))
    for note in notes:
        console.print(Text("  note: " + note, style="yellow"), soft_wrap=True)
    if len(e.case_ids) >= 2:  # compare needs two cases to say anything
        console.print(
            Text(
                f"  `passhat compare {source.command_ref} {e.command_ref}` sets the two "
                "gradings side by side"
            ),
            soft_wrap=True,
        )
