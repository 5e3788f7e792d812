"""Importing the same input twice, for every source (Inspect, τ²-bench, Harbor).

The same input again, without --name, is a no-op that names the experiment holding
it (a folder of logs can be imported again as logs are added); the same source with
other runs (a job that went on, a log rewritten) is refused in one line naming the
experiment and --name; --name stores a second copy on purpose. Harbor used to store a
duplicate experiment every time, like the other two.
"""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import run_cli
from inspect_logs import trimmed_json_log
from test_import_harbor import TRIALS, trial, write_job
from test_import_tau2 import RESULTS, sim, write

Source = tuple[str, Path, Callable[[], None]]
"""The import subcommand, the input path, and how to change that input in place."""


def _harbor(tmp_path: Path) -> Source:
    job = write_job(tmp_path, TRIALS)

    def more() -> None:
        t = trial("fix", 9, 0.0)
        (job / t["trial_name"]).mkdir()
        (job / t["trial_name"] / "result.json").write_text(json.dumps(t))

    return "harbor", job, more


def _tau2(tmp_path: Path) -> Source:
    path = write(tmp_path / "results.json", RESULTS)

    def more() -> None:
        data = copy.deepcopy(RESULTS)
        data["simulations"].append(sim("2", 2, 0.0))
        write(path, data)

    return "tau2", path, more


def inspect_source(tmp_path: Path, log: Path) -> Source:
    """An Inspect log (test_import_inspect's, made once there) as a source to import again."""
    path = trimmed_json_log(log, tmp_path / "log.json", ("s1", 3))

    def more() -> None:
        shutil.copy(trimmed_json_log(log, tmp_path / "other.json", ("s2", 1)), path)

    return "inspect", path, more


@pytest.fixture(params=["tau2", "harbor"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Source:
    """Inspect's turn is in test_import_inspect (its log takes a real eval to make)."""
    return {"tau2": _tau2, "harbor": _harbor}[request.param](tmp_path)


def _experiments(db: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT id, name FROM experiments ORDER BY rowid").fetchall()


def _import_once(source: Source, db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Import `source` into an empty store; the id of the one experiment it stored."""
    kind, path, _ = source
    r = run_cli(capsys, "import", kind, str(path), "--db", str(db))
    assert r.code == 0, r.err
    ((first, _),) = _experiments(db)
    return first


def test_the_same_input_twice_is_stored_once_and_the_second_names_it(
    source: Source, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check_same_input_twice(source, tmp_path, capsys)


def check_same_input_twice(
    source: Source, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kind, path, _ = source
    db = tmp_path / "p.db"
    first = _import_once(source, db, capsys)
    r = run_cli(capsys, "import", kind, str(path), "--db", str(db))
    assert r.code == 0, r.err
    assert _experiments(db) == [(first, None)]
    assert r.out.strip() == (
        f"already imported: {path.resolve()} is experiment {first} with the same runs; "
        "nothing written (--name NAME stores a second copy)"
    )
    r = run_cli(capsys, "import", kind, str(path), "--db", str(db), "--json")
    (item,) = json.loads(r.out)
    assert item["already_imported"] is True and item["experiment"] == first
    # on purpose, under a name: a second copy
    r = run_cli(capsys, "import", kind, str(path), "--db", str(db), "--name", "copy")
    assert r.code == 0, r.err
    assert [name for _, name in _experiments(db)] == [None, "copy"]


def test_the_same_source_with_other_runs_is_refused_in_one_line(
    source: Source, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check_other_runs_refused(source, tmp_path, capsys)


def check_other_runs_refused(
    source: Source, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kind, path, change = source
    db = tmp_path / "p.db"
    first = _import_once(source, db, capsys)
    change()
    r = run_cli(capsys, "import", kind, str(path), "--db", str(db))
    assert r.code == 2 and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert f"imported before as experiment {first} on " in r.err
    assert "its runs differ now; give --name NAME to store this import beside it" in r.err
    assert len(_experiments(db)) == 1
    r = run_cli(capsys, "import", kind, str(path), "--db", str(db), "--name", "later")
    assert r.code == 0, r.err
    assert [name for _, name in _experiments(db)] == [None, "later"]


def test_one_input_given_twice_in_one_command_is_stored_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path, _ = _tau2(tmp_path)
    db = tmp_path / "p.db"
    r = run_cli(capsys, "import", "tau2", str(path), str(path), "--db", str(db), "--json")
    assert r.code == 0, r.err
    assert [x["already_imported"] for x in json.loads(r.out)] == [False, True]
    assert len(_experiments(db)) == 1
