"""review50: defects found reviewing round 50's merged code (and the lead's code of round
49 its reviewer did not see), each shown by a test that failed on main before its fix
(or marked xfail, strict, where it is not fixed here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import passhat
from conftest import SuiteWriter
from passhat.suite import load_suite
from test_review49 import editing, suite_without_model


def test_a_touch_of_a_suite_loaded_with_its_scorers_given_is_not_a_change(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """load_suite(path, scorers=...) handed to evaluate as a loaded Suite."""
    suite = suite_without_model(writer)
    toucher = editing(suite, lambda text: text + "\n# a comment\n")
    loaded = load_suite(suite, scorers=[{"custom": "library_parts:always_passes"}])
    done = passhat.evaluate(
        loaded, agent=toucher, k=2, db=tmp_path / "p.db", concurrency=1, model=""
    )
    assert [r.status for r in done.runs()] == ["passed", "passed"], [
        r.error_message for r in done.runs()
    ]


def test_export_to_parquet_names_a_token_column_holding_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """c14bdfc and b645dd4 made text in a run's token column one line naming the run in
    report, view, compare, why, show and diff; `export --format parquet` still ended in
    pyarrow's ArrowInvalid traceback ("Could not convert 'many' with type str")."""
    pytest.importorskip("pyarrow")
    from cli_helpers import CLARIFY, SEED, run_cli
    from test_fuzz49 import damaged, one_line

    db = tmp_path / "p.db"
    assert (
        run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "-k", "2", "--db", str(db)).code == 0
    )
    copy = damaged(db, tmp_path, "input_tokens = 'many'")
    out = tmp_path / "runs.parquet"
    r = run_cli(capsys, "export", "latest", "-o", str(out), "--db", copy)
    one_line(r.code, r.err, "damaged: input_tokens", f"run 1 of case {SEED!r} is 'many'")
    assert not out.exists() and not list(tmp_path.glob(".runs.parquet.*"))


def test_an_experiment_with_its_scorers_given_runs_on_dask_workers(tmp_path: Path) -> None:
    """evaluate(path, scorers=[...], executor=<Dask>): the library's own call, refused by
    each worker as if another suite had been shipped (seen on main)."""
    pytest.importorskip("distributed")
    from cli_helpers import CLARIFY, SEED
    from dask_cluster import TESTS, started
    from library_parts import always_passes
    from passhat.executors.dask import DaskExecutor

    (tmp_path / "dask").mkdir()
    with started(tmp_path / "dask", {"PYTHONPATH": str(TESTS)}, workers=1) as cluster:
        done = passhat.evaluate(
            CLARIFY,
            cases=[SEED],
            k=2,
            db=tmp_path / "p.db",
            executor=DaskExecutor(cluster.address),
            scorers=[always_passes],
            concurrency=2,
        )
    assert [r.status for r in done.runs()] == ["passed", "passed"]
    assert all(r.ran_on for r in done.runs())


def test_check_and_the_docs_say_the_budget_of_requests_refused_for_their_size() -> None:
    """fix50b (d49f41b) made a run's fourth model request refused for its size (413) spend
    the run (agent_flood); `passhat check` (preflight.limits) and docs/command-agents.md's
    **holds** row, which say every budget a run is held to (3f3250b), did not say it: an
    agent's author read that a request past the caps is answered 413, and no more."""
    from passhat.preflight import limits
    from passhat.serve.endpoints import REFUSED

    said = f"{REFUSED} model requests refused for their size"
    assert said in limits()
    docs = Path(__file__).resolve().parents[1] / "docs" / "command-agents.md"
    holds = next(x for x in docs.read_text("utf-8").splitlines() if x.startswith("| **holds**"))
    assert said in holds


def test_a_look_out_of_descriptors_before_the_first_run_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """attack50 (95fb48a) made a look for answers that runs out of descriptors raise
    AgentProcessError('isolation') from CommandAgent.view: the run's error. The same view
    is made before anything runs (check_view, evaluation's _guard), where that error is
    no PasshatError: `passhat run` ended in its traceback."""
    import errno

    from cli_helpers import run_cli
    from passhat.agents import command, isolation

    if isolation.unavailable("namespace") is not None:
        pytest.skip("the namespace level cannot be had here")

    def scarce(*args: Any, **kwargs: Any) -> list[str]:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(command, "covered", scarce)
    monkeypatch.delenv("PASSHAT_ISOLATION", raising=False)
    writer = SuiteWriter(tmp_path / "suite")
    del writer.suite["defaults"]["model"]  # type: ignore[union-attr]
    writer.suite["defaults"]["agent"] = {"command": ["true"]}  # type: ignore[index]
    db = tmp_path / "p.db"
    r = run_cli(capsys, "run", str(writer.write()), "--db", str(db), "--isolation", "namespace")
    assert r.code != 0 and "Traceback" not in r.err, r.err[-1500:]
    assert len(r.err.strip().splitlines()) == 1 and "Too many open files" in r.err, r.err


def test_a_case_insensitive_match_decides_as_re_did() -> None:
    """`re.search("(?i)kapali", "Sipariş kapalı")` finds it (re takes i and ı as one letter
    when ignoring case); the regex engine does not, so the run's verdict changes."""
    import re

    from passhat.scoring import Matches

    state = {"ticket": {"note": "Sipariş kapalı"}}
    assert re.search("(?i)kapali", state["ticket"]["note"]) is not None
    detail = Matches("ticket.note", "(?i)kapali")(state, {})
    assert detail["passed"] is True, detail
