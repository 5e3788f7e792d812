"""The agent cannot see the answers: at --isolation namespace a command agent's run sees
only its own files and reaches only its own endpoints (issue 32).

Each attack of tests/attack_agent.py is tried with passhat run as root and as an
unprivileged user (nobody through setpriv when the tests run as root), and each has
a control at --isolation process that shows the attack works there, so every check
here can fail. The layout is the unkind one: the store, the suite and a .env sit in
the agent's own folder, and a secret ~/.netrc in passhat's HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_python import PYTHON, TESTS
from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.agents import command, folders, isolation, netns
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS


@pytest.fixture
def host_port() -> Iterator[int]:
    """A loopback service of the host (as a Dask scheduler or the provider would be)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    server.close()


def _layout(folder: Path, level: str, port: int, leak: str) -> dict[str, Path]:
    """The agent's folder holding the suite, the store and a .env; a HOME with .netrc."""
    work = folder / f"work-{level}"
    work.mkdir()
    agent = work / "attack.py"
    shutil.copyfile(TESTS / "attack_agent.py", agent)
    (work / ".env").write_text("OPENAI_API_KEY=sk-from-a-dotenv\n")
    home = folder / "home"
    home.mkdir(exist_ok=True)
    (home / ".netrc").write_text("machine api.example.com password hunter2\n")
    db = work / "p.db"
    writer = SuiteWriter(work / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(agent)],
        "env": {
            "ATTACK_SUITE": str(work / "suite"),
            "ATTACK_DB": str(db),
            "ATTACK_FILES": f"{work / '.env'},{home / '.netrc'}",
            "ATTACK_PORTS": str(port),
            "ATTACK_LEAK": leak,
            "ATTACK_WAIT": "1.5",
        },
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    return {"suite": suite, "db": db, "home": home}


def _attack(user: str, folder: Path, level: str, port: int) -> tuple[list[Any], str]:
    leak = f"passhat-leak-{uuid.uuid4().hex}"
    paths = _layout(folder, level, port, leak)
    # an earlier experiment in the same store, which the agent would like to rewrite
    args = ["-k", "2", "--concurrency", "2", "--timeout", "60", "--isolation", level]
    args += ["--db", str(paths["db"]), "-q", "--no-report"]
    done = passhat_as(user, folder, "run", str(paths["suite"]), *args, home=paths["home"])
    assert done.returncode in (0, 1), done.stderr
    with Store(paths["db"], create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    assert len(runs) == 2 and all(r.output is not None for r in runs), [
        r.error_message for r in runs
    ]
    return runs, leak


def _left(leak: str) -> list[str]:
    return [p for p in (f"/tmp/{leak}", f"/dev/shm/{leak}") if os.path.exists(p)]


def test_a_sandboxed_agent_reads_no_goal_writes_no_suite_or_store_and_reaches_only_its_endpoints(
    user: str, open_tmp: Path, host_port: int
) -> None:
    runs, leak = _attack(user, open_tmp, "namespace", host_port)
    for run in runs:
        seen = run.output
        assert seen["read_goal"] is False, "the goal was readable"
        assert (seen["wrote_suite"], seen["wrote_case"]) == (False, False)
        assert seen["store"] == {"read": False, "write": False}, "the store was open"
        assert seen["secrets"] == [], "a secret file was readable"
        assert seen["connected"] == [], "a loopback service of the host answered"
        assert seen["other_runs"] == [], "another run's folder was readable"
        assert seen["answered"] is True, "the run's own MCP endpoint must stay reachable"
        assert run.status == "failed"  # it had to guess, and guessed wrong
    assert _left(leak) == [], "files the agent left in /tmp or /dev/shm outlived the run"

    # the control: at --isolation process every attack above works
    control, leak = _attack(user, open_tmp, "process", host_port)
    try:
        for run in control:
            seen = run.output
            assert seen["read_goal"] and seen["wrote_suite"] and seen["wrote_case"]
            assert seen["store"]["read"] and seen["store"]["write"]
            assert len(seen["secrets"]) == 2 and seen["connected"] == [host_port]
            assert run.status == "passed"  # it read the answer
        assert any(run.output["other_runs"] for run in control)
        assert _left(leak), "the control's leftovers should be in the host's /tmp"
    finally:
        for path in _left(leak):
            os.remove(path)


def test_an_agent_beside_suite_yaml_sees_its_own_files_but_not_the_suites(
    user: str, open_tmp: Path, host_port: int
) -> None:
    """The agent's script in the suite folder itself: the folder is in view, its suite.yaml,
    cases and cassettes are not."""
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), "attack.py"],
        "env": {"ATTACK_SUITE": str(open_tmp / "suite"), "ATTACK_PORTS": str(host_port)},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    writer.files["attack.py"] = (TESTS / "attack_agent.py").read_text()
    writer.files["answers.json"] = '{"goal": "AC2:unverifiable"}'
    suite = writer.write()
    for name in (".git/objects", "sub"):
        (suite / name).mkdir(parents=True)
    (suite / ".git" / "objects" / "goal").write_text("goal: AC2")
    (suite / "sub" / ".env.local").write_text("TOKEN=x")
    (open_tmp / "link").symlink_to(suite)  # the command names the suite through a symlink
    writer.suite["defaults"]["agent"]["command"][1] = str(open_tmp / "link" / "attack.py")  # type: ignore[index]
    files = [suite / "answers.json", suite / ".git/objects/goal", suite / "sub/.env.local"]
    writer.suite["defaults"]["agent"]["env"]["ATTACK_FILES"] = ",".join(map(str, files))  # type: ignore[index]
    writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        if not item.is_symlink():
            item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", "60", "--db", str(db), "-q", "--no-report"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    assert run.output["read_goal"] is False and run.output["wrote_suite"] is False
    assert run.output["secrets"] == [], "the suite's other files, .git or a .env were read"
    assert run.status == "failed"
    assert "the agent was here" not in (suite / "suite.yaml").read_text()


def test_a_writable_path_holding_the_suite_or_the_store_is_refused(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mount over the suite does not stop a rename of its parent: a write: path that
    holds the suite or the store is refused before anything runs."""
    from cli_helpers import run_cli

    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {"command": [str(PYTHON), str(TESTS / "attack_agent.py")]}  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    db = tmp_path / "data" / "p.db"
    db.parent.mkdir()
    for folder in (suite.parent, db.parent, suite / "cases"):
        # the level asked for: a checkout closed to other users sets PASSHAT_ISOLATION=process
        args = ["--agent-write", str(folder), "--isolation", "namespace", "--db", str(db), "-q"]
        result = run_cli(capsys, "run", str(suite), "-k", "1", *args)
        assert result.code == 2, result.err
        assert "which a run must never change" in result.err and "Traceback" not in result.err


def test_a_run_folder_its_agent_locked_is_removed_all_the_same(user: str, open_tmp: Path) -> None:
    marker = f"stuck-{uuid.uuid4().hex}"
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    agent = open_tmp / "agent"
    agent.mkdir()
    shutil.copyfile(TESTS / "attack_agent.py", agent / "attack.py")
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(agent / "attack.py")],
        "env": {"ATTACK_STICK": marker},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    for level in ("namespace", "process"):
        db = open_tmp / f"{level}.db"
        args = ["-k", "2", "--isolation", level, "--db", str(db), "-q", "--no-report"]
        done = passhat_as(user, open_tmp, "run", str(suite), *args)
        assert done.returncode in (0, 1), done.stderr
        left = list(Path(tempfile.gettempdir()).glob(f"passhat-run-*/{marker}"))
        assert left == [], f"a locked run folder outlived its run ({level})"


def test_the_store_is_created_for_its_owner_alone(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with Store(db):
        pass
    assert oct(db.stat().st_mode & 0o777) == oct(0o600)


WHERE = """
import json, os
print(json.dumps({"cwd": os.getcwd(), "input": os.path.exists(os.environ["PASSHAT_INPUT"])}))
"""


def _where_suite(folder: Path) -> Path:
    """A suite whose agent prints where it runs, in `folder` opened to every user."""
    (folder / "where.py").write_text(WHERE)
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(folder / "where.py")],
        "output": "json",
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    return suite


def _where_runs(capsys: pytest.CaptureFixture[str], suite: Path, db: Path, level: str) -> list[Any]:
    """Two runs of the suite in this process at `level`: what each agent printed."""
    args = ["-k", "2", "--isolation", level, "--db", str(db), "-q", "--no-report"]
    result = run_cli(capsys, "run", str(suite), *args)
    assert result.code in (0, 1), result.err
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    assert runs and all(r.output is not None for r in runs), [r.error_message for r in runs]
    return [r.output for r in runs]


@pytest.mark.parametrize("relayed", [False, True], ids=["listened-in", "relayed"])
def test_a_sandboxed_run_keeps_nothing_on_the_hosts_disk(
    relayed: bool,
    open_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its work folder is a tmpfs made in its sandbox, at a run folder's path in the
    sandbox's own /tmp: no folder is made on the host where passhat listens in the
    sandbox itself, and where a relay carries its endpoints the host folder holds only
    the relay's sockets. The control: at level process the host folder is its work folder."""
    if not relayed and not netns.direct():
        pytest.skip("passhat listens in a sandbox itself only as root")
    if relayed:
        monkeypatch.setattr(netns, "direct", lambda: False)
    made: list[list[str]] = []

    def recorded(payload: bytes | None, uid: int | None) -> str:
        folder = folders.make_folder(payload, uid)
        made.append(sorted(p.relative_to(folder).as_posix() for p in Path(folder).rglob("*")))
        return folder

    monkeypatch.setattr(command, "make_folder", recorded)
    suite = _where_suite(open_tmp)
    seen = {}
    for level in ("namespace", "process"):
        made.clear()
        outputs = _where_runs(capsys, suite, open_tmp / f"{level}.db", level)
        seen[level] = (list(made), outputs)
    folders_made, outputs = seen["namespace"]
    assert folders_made == ([[]] * len(outputs) if relayed else [])
    for output in outputs:
        assert output["input"] and output["cwd"].startswith("/tmp/passhat-run-"), output
        assert not os.path.exists(output["cwd"]), "the sandbox's work folder is on the host"
    folders_made, outputs = seen["process"]
    assert folders_made == [["input.json"]] * len(outputs)


def test_a_root_passhat_checks_once_that_a_runs_uid_reaches_the_agent(
    open_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each sandboxed run of a root passhat has a uid of its own, which must reach the
    agent's program and files; that is looked at before the first run, not again for each."""
    if not isolation.is_root():
        pytest.skip("only a root passhat gives runs a uid of their own")
    looked: list[Path] = []

    def counted(path: Path, bit: int) -> Path | None:
        looked.append(path)
        return folders.closed_to_others(path, bit)

    monkeypatch.setattr(command, "closed_to_others", counted)
    outputs = _where_runs(capsys, _where_suite(open_tmp), open_tmp / "p.db", "namespace")
    assert len(outputs) == 2
    assert looked == [Path(shutil.which(str(PYTHON)) or PYTHON), open_tmp / "where.py"]
