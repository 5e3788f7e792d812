"""fix51: defects left at round 12's stop, each shown by a test that failed before its fix."""

from __future__ import annotations

import asyncio
import resource
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

import passhat
from conftest import SuiteWriter
from passhat.agents.lookout import in_time
from passhat.store import Store
from test_review49 import suite_without_model


def _statuses(suite: Path, agent: Any, db: Path) -> list[tuple[str, str | None, str | None]]:
    done = passhat.evaluate(suite, agent=agent, k=1, db=db, concurrency=1, model="", timeout=0.5)
    return [(r.status, r.error_type, r.error_message) for r in done.runs()]


def test_a_deadline_during_the_look_for_answers_is_the_looks_error(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """A look for answers (bounded at 10 s at --isolation namespace) counts against the
    run's --timeout; a run whose deadline came during it was errored `timeout`, which
    reads as the agent's. Now `isolation`, naming the look and the fix."""
    suite = suite_without_model(writer)

    async def looking(input: Any, env: Any, ctx: Any) -> str:
        await in_time(time.sleep, 2.0)  # the look, as CommandAgent makes it, a slow one
        return "started"

    ((status, kind, message),) = _statuses(suite, looking, tmp_path / "a.db")
    assert (status, kind) == ("errored", "isolation"), message
    assert message is not None and "--timeout ended during its look for answers" in message


def test_a_command_agents_run_whose_look_outlasts_its_timeout_is_errored_isolation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through a real command agent at --isolation namespace: its look (made
    slow here: 3 s, as 300 archives in view make it) under --timeout 1."""
    from agent_python import ENV, PYTHON, skip_if_closed
    from cli_helpers import CLARIFY, ROOT, SEED
    from passhat.agents import isolation
    from passhat.agents.command import CommandAgent, CommandSpec

    skip_if_closed("namespace")
    reason = isolation.unavailable("namespace")
    if reason is not None or PYTHON is None:
        pytest.skip(f"no sandbox for agents here: {reason or 'no Python any user may run'}")
    looked = CommandAgent.view

    def slow_view(self: Any, *args: Any) -> Any:
        time.sleep(3.0)
        return looked(self, *args)

    spec = CommandSpec(
        command=(PYTHON, str(ROOT / "examples" / "command-agent" / "agent.py")), env=ENV
    ).spec()
    # the experiment's start looks once, at its own pace; each run's look is slow
    monkeypatch.setattr(CommandAgent, "check_view", lambda self, params: looked(self, params))
    monkeypatch.setattr(CommandAgent, "view", slow_view)
    done = passhat.evaluate(
        CLARIFY, agent=spec, cases=[SEED], k=1, db=tmp_path / "p.db", timeout=1.0
    )
    ((status, kind, message),) = [(r.status, r.error_type, r.error_message) for r in done.runs()]
    assert (status, kind) == ("errored", "isolation"), message
    assert message is not None and "--timeout ended during its look for answers" in message


def test_a_deadline_in_the_agents_own_time_is_still_a_timeout(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """The control: the look done, the agent itself too slow."""
    suite = suite_without_model(writer)

    async def slow(input: Any, env: Any, ctx: Any) -> str:
        await in_time(time.sleep, 0.01)
        await asyncio.sleep(2.0)
        return "late"

    ((status, kind, message),) = _statuses(suite, slow, tmp_path / "b.db")
    assert (status, kind) == ("errored", "timeout"), message


def _command_suite(writer: SuiteWriter) -> Path:
    del writer.suite["defaults"]["model"]  # type: ignore[union-attr]
    writer.suite["defaults"]["agent"] = {"command": ["/bin/true"]}  # type: ignore[index]
    return writer.write()


def test_more_runs_at_once_than_the_descriptors_hold_is_refused_at_start(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Each run's connections are capped from passhat's open-file limit and --concurrency
    down to a floor of 8 (serve/endpoints.connections_for); past what the limit holds at
    that floor, runs were started and errored for want of a descriptor. Now one line at
    start naming --concurrency, the limit and the fix; nothing stored."""
    from cli_helpers import run_cli
    from passhat.serve import endpoints

    suite = _command_suite(writer)
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (160, 160))
    assert endpoints.most_at_once(160) == 2
    db = tmp_path / "p.db"
    args = ["run", str(suite), "-k", "1", "--db", str(db), "--isolation", "process", "--no-report"]
    r = run_cli(capsys, *args, "--concurrency", "3")
    assert r.code != 0
    assert r.err.strip().count("\n") == 0, r.err
    assert "--concurrency 3" in r.err and "160 open files" in r.err, r.err
    assert "lower --concurrency to 2" in r.err and "ulimit -n" in r.err, r.err
    assert not db.exists(), "refused before the store was made"
    ok = run_cli(capsys, *args, "--concurrency", "2")
    assert ok.code == 0, ok.err
    with pytest.raises(passhat.PasshatError, match="--concurrency 3 is more"):  # resume too
        passhat.resume("latest", db=db, k=2, concurrency=3)
    with Store(db, create=False) as store:
        assert len(list(store.runs(store.experiment("latest").id))) == 1


def test_an_in_process_agent_holds_no_connections_and_is_not_refused(
    writer: SuiteWriter, tmp_path: Path, monkeypatch: Any
) -> None:
    """The control: the descriptors are for command agents' connections."""
    suite = suite_without_model(writer)
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (160, 160))

    async def quick(input: Any, env: Any, ctx: Any) -> str:
        return "done"

    done = passhat.evaluate(suite, agent=quick, k=1, db=tmp_path / "c.db", concurrency=50)
    assert len(done.runs()) == 1


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="no prlimit (util-linux) here")
def test_a_dask_worker_shares_its_descriptors_among_the_runs_it_makes_at_once(
    tmp_path: Path,
) -> None:
    """A worker running 4 runs at once kept 128 connections per run, whatever its own open
    file limit: runs on a worker under a low one were errored for want of a descriptor
    as runs on the driver had been. Now each worker takes its share as the driver does,
    of its own limit among its own threads. A real cluster on 127.0.0.1, the worker under
    `prlimit --nofile=400:400`, a real command agent run on it."""
    pytest.importorskip("distributed")
    from distributed import Client

    from cli_helpers import CLARIFY, SEED
    from dask_cluster import limited
    from passhat.executors.dask import DaskExecutor
    from passhat.serve import endpoints

    with limited(tmp_path, nthreads=4, nofile=400) as (cluster, spec):
        # two experiments shipped to one long-lived worker: its cap is its threads' share
        # for both, not lowered by each shipment (review51: the scopes add up)
        for name in ("first", "second"):
            done = passhat.evaluate(
                CLARIFY,
                agent=spec,
                cases=[SEED],
                k=1,
                db=tmp_path / f"{name}.db",
                isolation="process",
                concurrency=4,
                executor=DaskExecutor(cluster.address),
            )
            statuses = [r.status for r in done.runs()]
            assert statuses == ["failed"], [r.error_message for r in done.runs()]
            with Client(cluster.address, timeout=30, set_as_default=False) as client:
                got = client.run(
                    lambda: __import__("passhat.serve.endpoints", fromlist=["_"]).connections()
                )
            assert list(got.values()) == [endpoints.connections_for(400, 4)] == [20], got


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("column", ["input_tokens", "output_tokens"])
def test_every_export_format_refuses_text_in_a_token_column_alike(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str, column: str
) -> None:
    """A damaged or hand-edited store: `export --format parquet` refused text in a token
    column in one line; JSONL and CSV copied it through as stored ("many" where a count
    belongs). Now all three refuse it alike, naming the run and the column; no file left."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    from cli_helpers import CLARIFY, SEED, run_cli
    from test_fuzz49 import damaged, one_line

    db = tmp_path / "p.db"
    r = run_cli(capsys, "run", str(CLARIFY), "--case", SEED, "-k", "2", "--db", str(db))
    assert r.code == 0, r.err
    copy = damaged(db, tmp_path, f"{column} = 'many'")
    out = tmp_path / f"runs.{fmt}"
    r = run_cli(capsys, "export", "latest", "-o", str(out), "--db", copy)
    one_line(r.code, r.err, f"damaged: {column}", f"run 1 of case {SEED!r} is 'many', no number")
    assert not out.exists() and not list(tmp_path.glob(f".runs.{fmt}.*"))
