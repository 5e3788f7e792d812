"""review49: defects found reviewing round 49's merged code, each shown by a test that
failed on main before its fix (or marked xfail, strict, where it is not fixed here)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import passhat
from conftest import SuiteWriter
from passhat.store import Store

ANSWER = {"key": "T-1", "goal": "g", "scope_in": ["s"], "scope_out": []}


def suite_without_model(writer: SuiteWriter) -> Path:
    del writer.suite["defaults"]["model"]  # type: ignore[union-attr]
    return writer.write()


def editing(suite: Path, edit: Callable[[str], str]) -> Callable[..., Awaitable[str]]:
    """An agent that rewrites the suite's case file by `edit` in its run, then answers."""
    case_file = suite / "cases" / "tiny.yaml"

    async def agent(input: Any, env: Any, ctx: Any) -> str:
        case_file.write_text(edit(case_file.read_text()))
        await env.call("update_ticket", {**ANSWER, "annotations": []})
        return "done"

    return agent


def test_a_touch_of_a_suite_run_with_its_scorers_given_is_not_a_change(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """evaluate(scorers=...) loads the suite with them in place of suite.yaml's; a file of
    it touched (its mtime moved, its content the same) made the guard load the suite again
    without them, find another hash and error every later run suite_changed."""
    from library_parts import always_passes

    suite = suite_without_model(writer)
    done = passhat.evaluate(
        suite,
        agent=editing(suite, lambda text: text + "\n# a comment\n"),
        k=2,
        db=tmp_path / "p.db",
        concurrency=1,
        model="",
        scorers=[always_passes],
    )
    assert [r.status for r in done.runs()] == ["passed", "passed"], [
        r.error_message for r in done.runs()
    ]


def test_a_goal_rewritten_under_given_scorers_is_still_a_change(
    writer: SuiteWriter, tmp_path: Path
) -> None:
    """The control: loaded again with the same scorers, a goal rewritten is still seen."""
    from library_parts import always_passes

    suite = suite_without_model(writer)
    done = passhat.evaluate(
        suite,
        agent=editing(suite, lambda text: text.replace("vague", "changed")),
        k=2,
        db=tmp_path / "p.db",
        concurrency=1,
        model="",
        scorers=[always_passes],
    )
    assert [r.error_type for r in done.runs()] == ["suite_changed", "suite_changed"]


def test_packages_installed_to_a_target_folder_on_pythonpath_keep_their_certificates(
    tmp_path: Path,
) -> None:
    """`pip install --target /opt/pylibs certifi` then PYTHONPATH=/opt/pylibs: the
    packages lie in that folder itself (no site-packages below it). Before attack49 every
    PYTHONPATH entry was an installation, its cacert.pem no secret (sandbox.covered's
    docstring: covering it breaks TLS); now it is covered."""
    import sys

    from passhat.agents.installed import installations
    from passhat.agents.lookout import secret_files
    from passhat.agents.sandbox import covered, real

    target = tmp_path / "pylibs"
    (target / "certifi").mkdir(parents=True)
    (target / "certifi" / "__init__.py").write_text("from .core import where\n")
    (target / "certifi" / "cacert.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    (target / "certifi-2024.2.2.dist-info").mkdir()
    (target / "certifi-2024.2.2.dist-info" / "RECORD").write_text("certifi/cacert.pem,,\n")
    env = {"PYTHONPATH": str(target)}
    runtimes = installations([sys.executable, "agent.py"], env, [])
    hidden = covered([real(target)], [], None, runtimes, look=secret_files)
    assert real(target / "certifi" / "cacert.pem") not in hidden


def test_compares_junit_shows_direction_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare --junit-xml` names each paired case in a suite property `case <id>`:
    that name was written raw (ci.py's _x only on values), so a case id's direction
    characters reached the CI's page obeyed, where the testcase beside it showed them
    as escapes (fix49b's report/ci.py docstring: "in both", JUnit and Markdown)."""
    from dataclasses import replace

    from cli_helpers import run_cli
    from test_direction_characters import ANY, CASE, hostile, shown
    from view_stores import write_store

    e, runs = hostile(["plain-case"])
    other = replace(e, id="4a3b2c1d", name="other", created_at="2026-05-05T09:30:00Z")
    db = write_store(
        tmp_path / "passhat.db",
        [(e, runs), (other, [replace(r, experiment_id=other.id) for r in runs])],
    )
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    args = ["--db", str(db), "--junit-xml", str(junit), "--summary", str(summary)]
    result = run_cli(capsys, "compare", e.id, other.id, *args)
    assert result.code in (0, 1), result.err
    written = junit.read_text(encoding="utf-8")
    assert shown(CASE) in written
    assert ANY.findall(written) == []
    assert ANY.findall(summary.read_text(encoding="utf-8")) == []


def _migrated_store(path: Path) -> None:
    """A store made by a passhat of 8 migrations, which held experiments before the
    later migrations ran (as an old store opened by a newer passhat): SQLite put the
    later tables' texts, and the first ones' again, on pages at the end of the file."""
    import sqlite3

    from passhat.store import Store
    from passhat.store.schema import MIGRATIONS, _statements

    db = sqlite3.connect(path, isolation_level=None)
    db.execute(
        "CREATE TABLE migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for version, (name, sql) in enumerate(MIGRATIONS[:8], start=1):
        for statement in _statements(sql):
            db.execute(statement)
        db.execute("INSERT INTO migrations VALUES (?, ?, 'then')", (version, name))
    columns = db.execute("PRAGMA table_info(experiments)").fetchall()
    names = [c[1] for c in columns]
    db.execute("BEGIN")
    for i in range(600):
        values: list[object] = []
        for _, name, kind, *_ in columns:
            if name in ("id", "name"):
                values.append(f"e{i}")
            elif kind.upper().startswith("INT") or kind.upper() == "REAL":
                values.append(1)
            else:
                values.append("x" * 4000 if name == "params" else "[]")
        marks = ",".join("?" * len(names))
        db.execute(f"INSERT INTO experiments ({','.join(names)}) VALUES ({marks})", values)
    db.execute("COMMIT")
    db.close()
    Store(path).close()  # migrated to this passhat's schema


@pytest.mark.parametrize("packed", ["tar.gz", "zip"])
def test_an_archive_of_a_store_migrated_after_it_held_runs_is_covered(
    tmp_path: Path, packed: str
) -> None:
    """The store alone is one (sandbox.is_store asks SQLite); packed, it was not looked
    into far enough: a run could unpack an earlier experiment's answers from it."""
    import tarfile
    import zipfile

    from passhat.agents.archives import holds_answers
    from passhat.agents.sandbox import STORE_HEAD, STORE_MARKS, is_store

    store = tmp_path / "old.db"
    _migrated_store(store)
    assert is_store(str(store))
    head = store.read_bytes()[:STORE_HEAD]
    assert not all(mark in head for mark in STORE_MARKS)  # what the archive look reads
    archive = tmp_path / f"backup.{packed}"
    if packed == "zip":
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            z.write(store, "old.db")
    else:
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(store, "old.db")
    assert holds_answers(str(archive))


def test_a_runs_look_for_answers_is_made_off_the_event_loop(
    open_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """xfix49 makes the look for answers again before each run (CommandAgent.view): a
    stat of every entry in view (20,000 of /usr/share: 0.1 s) and a read of each file
    new or changed since (an archive up to ARCHIVE_LOOK_S). It ran on the event loop,
    in the run's `__call__`, so every run's start held the other runs' timers, model
    proxy and tool server still for that long (once an experiment before xfix49). The
    look is made on a worker thread now; what it finds is the same."""
    import asyncio

    from passhat.agents import isolation, resolve_agent
    from passhat.agents.command import CommandAgent, CommandSpec
    from passhat.runner import RunOptions, new_experiment, run_experiment
    from passhat.suite import load_suite

    if isolation.unavailable("namespace") is not None:
        pytest.skip(str(isolation.unavailable("namespace")))
    on_loop: list[bool] = []
    view = CommandAgent.view

    def looked(self: CommandAgent, *args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            on_loop.append(False)
        else:
            on_loop.append(True)
        return view(self, *args, **kwargs)

    monkeypatch.setattr(CommandAgent, "view", looked)
    agent = open_tmp / "agent.sh"
    agent.write_text("#!/bin/sh\necho '{\"done\": true}'\n")
    agent.chmod(0o755)
    spec = CommandSpec(("/bin/sh", str(agent)), cwd=str(open_tmp), output="json")
    loaded = resolve_agent(spec.spec())
    suite = load_suite(Path(__file__).resolve().parent.parent / "examples" / "clarify")
    suite = type(suite)(**{**suite.__dict__, "cases": (suite.case("ac-conflict-001"),)})
    params = {"max_turns": 1, "isolation": "namespace"}
    experiment = new_experiment(suite, loaded, "", None, k=2, params=params)
    with Store(open_tmp / "p.db") as store:
        store.create_experiment(experiment)
        asyncio.run(run_experiment(store, experiment, suite, loaded, None, RunOptions()))
        runs = store.runs(experiment.id)
    assert [r.status != "errored" for r in runs] == [True, True], [r.error_message for r in runs]
    assert on_loop and not any(on_loop), on_loop


def test_a_zip_naming_an_offset_past_any_file_is_looked_at_no_further(tmp_path: Path) -> None:
    """A zip64 record's offsets are 64-bit: one past 2**63 made os.pread raise
    OverflowError, which holds_answers let through (its except names OSError, ValueError,
    ...): the look before each run raised, and every run of an experiment with that
    200-byte file anywhere in view was errored `agent_error` (a run can leave it in a
    `write:` folder). Such an archive is not what it seemed: looked at no further."""
    import struct

    from passhat.agents.archives import holds_answers
    from passhat.agents.lookout import Lookout

    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, 2**63 + 5, 1)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, 46, 0, 0)
    (tmp_path / "odd.zip").write_bytes(b"PK\x03\x04" + b"\0" * 100 + locator + end)
    (tmp_path / ".env").write_text("KEY=1\n")
    assert holds_answers(str(tmp_path / "odd.zip")) is False
    assert Lookout(str(tmp_path)).found() == [str(tmp_path / ".env")]


@pytest.mark.parametrize(
    "before",
    ['prefs={"theme":"dark"}', "ui=a b", "path=C:\\temp", 'q="x'],
)
def test_the_views_cookie_is_read_after_another_apps_odd_one(before: str) -> None:
    """A browser sends every cookie of 127.0.0.1 (any port, any app) in one header, oldest
    first. http.cookies.SimpleCookie stops reading the header at the first value it finds
    illegal (JSON, a space, a backslash, an open quote: browsers keep them), so the view's
    own token cookie after it was not seen: since view49 every page on loopback needs it,
    and each link of a page opened with the printed URL answered 403. The header is read
    cookie by cookie now."""
    import asyncio

    from passhat.view.security import Guard, token_cookie, token_of

    name = token_cookie(8765)
    header = f"{before}; {name}=the-token".encode("latin-1")
    scope: dict[str, Any] = {"type": "http", "query_string": b"", "headers": [(b"cookie", header)]}
    assert token_of(scope, name) == ("the-token", False)

    answered: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.append(message["status"])

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    guard = Guard(app, token="the-token", loopback=True, port=8765)
    request = {
        **scope,
        "method": "GET",
        "path": "/e/p3",
        "headers": [(b"host", b"127.0.0.1:8765"), (b"cookie", header)],
    }
    asyncio.run(guard(request, receive, send))
    assert answered == [200]


@pytest.mark.parametrize(
    ("query", "cookie"),
    [(b"token=%C3%A9", b""), (b"", "passhat_view_token_8765=\u00e9t\u00e9".encode("latin-1"))],
)
def test_a_token_with_a_character_past_ascii_is_refused_not_raised(
    query: bytes, cookie: bytes
) -> None:
    """hmac.compare_digest takes str of ASCII only: a request whose token held any other
    character raised TypeError in the Guard, uvicorn answered 500 and logged the
    traceback on the view's stderr. Since view49 the token guards loopback too, so any
    local user or process-level agent could do it by the request. It is refused (403)."""
    import asyncio

    from passhat.view.security import Guard

    answered: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        answered.append(0)  # never reached

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.append(message["status"])

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    headers = [(b"host", b"127.0.0.1:8765"), *([(b"cookie", cookie)] if cookie else [])]
    request = {"type": "http", "method": "GET", "path": "/", "query_string": query}
    guard = Guard(app, token="the-token", loopback=True, port=8765)
    asyncio.run(guard({**request, "headers": headers}, receive, send))
    assert answered == [403]


async def test_requests_refused_for_their_size_count_against_the_runs_read_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """serve49's READ_BYTES bounds "model requests one run may send passhat, all requests
    together (refused ones too)": a request refused past MAX_BODY was read up to it (sent
    chunked, without a Content-Length) and counted nowhere, so a run resending such
    requests was never stopped (here MAX_BODY 256 KiB, READ_BYTES 1 MiB: six 300 KiB
    requests read 1.5 MiB, every one 413, the run never spent)."""
    import httpx2

    from passhat.agents.base import RunContext
    from passhat.env import make_environment
    from passhat.serve import app, endpoints, hub_scope, serve_run
    from passhat.suite import load_suite

    monkeypatch.setattr(endpoints, "READ_BYTES", 1 << 20)
    monkeypatch.setattr(app, "MAX_BODY", 256 << 10)
    suite = load_suite(Path(__file__).resolve().parent.parent / "examples" / "clarify")
    env = make_environment(suite, suite.case("ac-conflict-001"))
    ctx = RunContext(case_id="ac-conflict-001", run_index=1, seed=1, model=None)

    async def chunked() -> Any:
        for _ in range(30):
            yield b" " * (10 << 10)

    async with hub_scope(), serve_run(env, ctx) as run, httpx2.AsyncClient(timeout=60) as http:
        statuses = []
        for _ in range(6):
            answer = await http.post(
                f"http://127.0.0.1:{run.port}/v1/chat/completions",
                content=chunked() if run.tools.spent is None else b"{}",
                headers={"Authorization": f"Bearer {run.token}"},
            )
            statuses.append(answer.status_code)
        spent = run.tools.spent
    assert spent is not None and statuses[-1] == 429, statuses
