"""Command agents: one process per run, tools over MCP, the model through passhat's proxy.

The agent under test is tests/command_agent.py, a real process that behaves well
or badly per run; passhat serves it real MCP and a real HTTP proxy on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_python import AGENT_SCRIPT, ENV, PYTHON
from cli_helpers import run_cli
from conftest import SuiteWriter
from fakeserver import FakeServer, call
from passhat.agents.command import (
    AgentProcessError,
    CommandSpec,
    from_command_line,
    parse_config,
    parse_output,
    resolve_paths,
)
from passhat.errors import ConfigError
from passhat.store import Store
from sandbox_helpers import NOBODY, unprivileged

pytest_plugins = ["fakeserver"]

SCRIPT = AGENT_SCRIPT  # a copy others may read when the checkout is closed to them
ROOT = Path(__file__).resolve().parents[1]
TAPE_HEAD = {"cassette": 1, "model": "test", "note": "tests"}
GOAL = [{"ac": 2, "label": "unverifiable", "note": "vague"}]


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _holding(text: str) -> list[int]:
    """Pids of the live processes whose environment holds `text` (an agent in a PID
    namespace knows only its pids in there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _alive(int(entry.name)):
            try:
                if text.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _wait_gone(text: str, seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _holding(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _suite(
    writer: SuiteWriter, modes: list[str], tape: list[dict[str, Any]] | None = None, **agent: Any
) -> Path:
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    command = [PYTHON or sys.executable, str(SCRIPT), *modes]
    env = {**ENV, **agent.pop("env", {})}
    # the folders the test agent notes its pids in: in the run's sandbox only when named
    notes = [env[name] for name in ("PID_DIR", "FLAG_DIR") if name in env]
    if notes:
        agent.setdefault("write", notes)
    writer.suite["defaults"]["agent"] = {"command": command, "env": env, **agent}  # type: ignore[index]
    lines = [TAPE_HEAD, *(tape or [])]
    writer.files["tape.jsonl"] = "".join(json.dumps(line) + "\n" for line in lines)
    return writer.write()


def _runs(db: Path) -> dict[int, Any]:
    with Store(db, create=False) as store:
        experiment = store.experiment("latest")
        return {r.run_index: r for r in store.runs(experiment.id)}


def test_crash_non_json_and_flood_each_end_as_one_errored_run(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(writer, ["crash", "nonjson", "flood", "ok"])
    db = tmp_path / "p.db"
    args = ["-k", "4", "--timeout", "120", "--concurrency", "4", "--db", str(db), "-q"]
    result = run_cli(capsys, "run", str(suite), *args)
    assert result.code == 0, result.err
    runs = _runs(db)
    assert [runs[i].status for i in range(1, 5)] == ["errored"] * 3 + ["passed"]
    crash, nonjson, flood, ok = (runs[i] for i in range(1, 5))
    assert crash.error_type == "agent_exit"
    assert "exited with code 3" in (crash.error_message or "")
    assert "boom: the agent could not parse the ticket" in (crash.error_message or "")
    assert "boom" in (crash.stderr or "")
    shown = run_cli(capsys, "show", "latest", "tiny-001", "1", "--db", str(db))
    assert "stderr (tail)" in shown.out and "boom: the agent could not" in shown.out
    assert nonjson.error_type == "agent_output"
    message = nonjson.error_message or ""
    assert "not JSON" in message and "hello, this is" in message
    assert flood.error_type == "agent_output"
    assert "more than 16 MiB on stdout" in (flood.error_message or "")
    assert flood.duration_s < 60, "a flood is stopped when it passes the limit, not at the timeout"
    # the good run went on: its MCP call is recorded like an in-process call, and graded
    assert ok.output["same_input"] is True
    assert [c["tool"] for c in ok.tool_calls] == ["update_ticket"]
    assert ok.final_state["ticket"]["annotations"][0]["label"] == "unverifiable"
    assert "wrote the ticket" in (ok.stderr or "")


def test_a_hang_is_killed_with_its_process_group_at_the_timeout_and_the_next_run_goes_on(
    writer: SuiteWriter, tmp_path: Path, open_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pids = open_tmp  # the agent may run as a uid of its own

    suite = _suite(writer, ["hang", "crash"], env={"PID_DIR": str(pids)})
    db = tmp_path / "p.db"
    args = ["-k", "2", "--timeout", "3", "--concurrency", "1", "--db", str(db), "-q"]
    assert run_cli(capsys, "run", str(suite), *args).code == 1  # nothing counted
    hang, crash = _runs(db)[1], _runs(db)[2]
    assert (hang.status, hang.error_type) == ("errored", "timeout")
    assert "hanging" in (hang.stderr or "")
    assert (crash.status, crash.error_type) == ("errored", "agent_exit")
    # the hanging run's whole process group died with its run, and its folder is gone
    noted = json.loads((pids / "run-1.json").read_text())
    assert _wait_gone(f"PID_DIR={pids}") == []
    assert not Path(noted["cwd"]).exists()


def test_model_calls_go_through_the_proxy_live_and_the_real_key_stays_in_passhat(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key-never-leaves")
    args = {
        "key": "T-1",
        "goal": "g",
        "scope_in": ["s"],
        "scope_out": [],
        "annotations": [{"ac": 2, "label": "unverifiable", "note": "v"}],
    }
    fake_server.fail(503, times=1)  # retried by passhat, invisible to the agent
    fake_server.reply(tool_calls=[call("update_ticket", args, id="c1")], usage=(120, 30))
    suite = _suite(writer, ["model"])
    db = tmp_path / "p.db"
    result = run_cli(
        capsys,
        "run",
        str(suite),
        "-k",
        "1",
        "--model",
        "openai:gpt-test",
        "--base-url",
        fake_server.openai_url,
        "--db",
        str(db),
        "-q",
    )
    assert result.code == 0, result.err
    run = _runs(db)[1]
    assert run.status == "passed", run.error_message
    assert run.model_source == "live"
    assert (run.input_tokens, run.output_tokens) == (120, 30)
    assert len(run.retries) == 1
    seen = run.output["env"]
    assert "sk-real-key-never-leaves" not in json.dumps(seen)
    assert seen["OPENAI_API_KEY"] == seen["PASSHAT_MCP_TOKEN"]
    # the real key went to the real endpoint only, and nowhere into the store
    assert fake_server.requests[-1].headers["authorization"] == "Bearer sk-real-key-never-leaves"
    assert b"sk-real-key-never-leaves" not in db.read_bytes()
    roles = [m["role"] for m in run.transcript]
    assert roles == ["system", "user", "assistant"]
    assert run.transcript[-1]["tool_calls"][0]["name"] == "update_ticket"


def test_a_replay_gap_behind_the_proxy_errors_the_run_as_a_model_error(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(writer, ["model"])  # the tape has no answer at all
    db = tmp_path / "p.db"
    run_cli(capsys, "run", str(suite), "-k", "1", "--db", str(db), "-q")
    run = _runs(db)[1]
    assert run.status == "errored"
    assert run.error_type == "model_error"
    assert "no answer for case 'tiny-001', run 1, turn 0" in (run.error_message or "")


def test_kill_9_of_passhat_leaves_no_agent_process_and_resume_completes(
    writer: SuiteWriter, tmp_path: Path, open_tmp: Path
) -> None:
    pids, flags = open_tmp / "pids", open_tmp / "flags"
    for folder in (pids, flags):
        folder.mkdir()
        folder.chmod(0o777)
    (flags / "hang").touch()
    suite = _suite(writer, ["hang-if-flag"], env={"PID_DIR": str(pids), "FLAG_DIR": str(flags)})
    db = tmp_path / "p.db"
    argv = [
        sys.executable,
        "-m",
        "passhat",
        "run",
        str(suite),
        "-k",
        "3",
        "--name",
        "killed",
        "--db",
        str(db),
        "-q",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(list(pids.glob("run-*.json"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        noted = [json.loads(p.read_text()) for p in sorted(pids.glob("run-*.json"))]
        assert len(noted) == 3, "every run's agent must be up before the kill"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert _wait_gone(f"PID_DIR={pids}") == [], "agent processes outlived passhat"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    for n in noted:
        deadline = time.monotonic() + 5
        while Path(n["cwd"]).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(n["cwd"]).exists(), "the watchdog removes a killed run's folder"
    deadline = time.monotonic() + 5  # the watchdog removes a folder's inside, then it
    while (left := list(Path(tempfile.gettempdir()).glob(f"passhat-run-{proc.pid}-*"))) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert left == [], "a killed passhat's run folders (the case input) were left behind"
    (flags / "hang").unlink()
    done = subprocess.run(
        [sys.executable, "-m", "passhat", "resume", "killed", "--db", str(db), "-q", "--strict"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    runs = _runs(db)
    assert sorted(runs) == [1, 2, 3]
    assert {r.status for r in runs.values()} == {"passed"}


def test_folders_a_killed_passhat_left_are_swept_at_the_next_start(tmp_path: Path) -> None:
    """A kill -9 that beat the watchdog (killed too) leaves a run folder with the case's
    input: the next passhat removes it, and keeps the folders of a passhat still alive,
    and those made in another PID namespace (a container sharing /tmp), whose pids say
    nothing here."""
    from passhat.agents import folders

    gone = subprocess.Popen(["true"])
    gone.wait()
    base = Path(tempfile.gettempdir())
    dead = base / f"{folders.prefix(gone.pid)}test"
    alive = base / f"{folders.prefix(os.getppid())}test"
    elsewhere = base / f"passhat-run-{gone.pid}-{folders._namespace() + 1}-test"
    older = base / f"passhat-run-{gone.pid}-k3j2h1g0"  # an older passhat's name
    for folder in (dead, alive, elsewhere, older):
        (folder / "work").mkdir(parents=True)
        (folder / "work" / "input.json").write_text("{}")
    try:
        folders._SWEPT.discard(os.getpid())
        folders.sweep_folders()
        assert not dead.exists(), "a dead passhat's run folder was left"
        assert alive.exists(), "a live passhat's run folder was removed"
        assert elsewhere.exists(), "a run folder of another PID namespace was removed"
        assert not older.exists(), "an older passhat's run folder (no namespace) was left"
    finally:
        for folder in (dead, alive, elsewhere, older):
            shutil.rmtree(folder, ignore_errors=True)


def test_a_symlink_named_like_a_run_folder_is_removed_not_followed(tmp_path: Path) -> None:
    """Anyone may make /tmp/passhat-run-<dead pid>-x -> /etc: the sweep at the next start
    (as root, too) removes the link and leaves the folder it names, and its modes, alone."""
    from passhat.agents import folders

    gone = subprocess.Popen(["true"])
    gone.wait()
    target = tmp_path / "etc"
    (target / "inner").mkdir(parents=True)
    (target / "inner" / "file").write_text("kept")
    for folder in (target, target / "inner"):
        folder.chmod(0o755)
    lure = Path(tempfile.gettempdir()) / f"{folders.prefix(gone.pid)}lure"
    lure.symlink_to(target)
    try:
        folders._SWEPT.discard(os.getpid())
        folders.sweep_folders()
        assert not os.path.lexists(lure), "the link was left"
        assert (target / "inner" / "file").read_text() == "kept"
        modes = [stat.S_IMODE(f.stat().st_mode) for f in (target, target / "inner")]
        assert modes == [0o755, 0o755], "the sweep changed the modes of what the link names"
    finally:
        with contextlib.suppress(FileNotFoundError):
            lure.unlink()


def test_the_watchdog_removes_every_run_folder_of_its_passhat_and_no_other(
    tmp_path: Path,
) -> None:
    """Run folders are named for their passhat's pid and PID namespace, and its watchdog,
    when the pipe closes, removes every one of them without having been told of each: also
    one its agent locked (the folder 0500, a subfolder 000). It leaves another passhat's
    folder, also one of the same pid in another PID namespace sharing /tmp, and a link
    named like one of its own is neither followed nor removed."""
    from passhat.agents import folders
    from passhat.agents.watchdog import Watchdog

    base = Path(tempfile.gettempdir())
    ours = base / f"{folders.prefix()}watchdog-test"
    theirs = base / f"{folders.prefix(os.getppid())}watchdog-test"
    twin = base / f"passhat-run-{os.getpid()}-{folders._namespace() + 1}-watchdog-test"
    lure = base / f"{folders.prefix()}watchdog-lure"
    target = tmp_path / "target"
    target.mkdir()
    (target / "file").write_text("kept")
    for folder in (ours, theirs, twin):
        (folder / "locked").mkdir(parents=True)
        (folder / "input.json").write_text("{}")
    lure.symlink_to(target)
    (ours / "locked").chmod(0)
    ours.chmod(0o500)
    try:
        guard = Watchdog()
        guard.close()
        assert not os.path.lexists(ours), "its passhat's run folder was left"
        assert theirs.exists(), "another passhat's run folder was removed"
        assert twin.exists(), "a run folder of its pid in another PID namespace was removed"
        assert lure.is_symlink() and (target / "file").read_text() == "kept"
    finally:
        for folder in (ours, theirs, twin):
            with contextlib.suppress(OSError):
                folder.chmod(0o700)
                (folder / "locked").chmod(0o700)
            shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            lure.unlink()


def test_the_watchdog_never_chmods_through_a_link_in_a_folder_it_removes() -> None:
    """A run folder the first removal cannot empty (a 0500 subfolder) is opened up by
    chmods; a link in it to somebody's folder elsewhere is not followed (os.chmod would:
    the folder it names was made 0700)."""
    from passhat.agents.watchdog import _PROGRAM

    if PYTHON is None:
        pytest.skip("needs a Python interpreter nobody can run")
    top = Path(tempfile.mkdtemp())  # under /tmp: pytest's tmp_path is root's alone
    base, victim = top / "tmp", top / "victim"
    folder = base / "passhat-run-4242-planted"
    locked = folder / "locked"
    locked.mkdir(parents=True)
    victim.mkdir()
    (locked / "link").symlink_to(victim)
    owner = NOBODY if os.geteuid() == 0 else os.geteuid()
    for path in (top, base, victim, folder, locked):
        os.chown(path, owner, owner)
        os.chmod(path, 0o755)
    os.lchown(locked / "link", owner, owner)
    os.chmod(locked, 0o500)
    try:
        subprocess.run(
            [*unprivileged(), str(PYTHON), "-c", _PROGRAM, str(base), "passhat-run-4242-"],
            stdin=subprocess.DEVNULL,
            check=True,
            timeout=60,
        )
        assert stat.S_IMODE(victim.stat().st_mode) == 0o755, "a link's target was chmodded"
    finally:
        with contextlib.suppress(OSError):
            os.chmod(locked, 0o700)
        shutil.rmtree(top, ignore_errors=True)


def test_another_users_folder_named_like_a_run_folder_is_left_alone() -> None:
    """The watchdog and the next start's sweep remove run folders of their own user only:
    a folder another user named passhat-run-<pid>-x in the shared /tmp (where they, not
    passhat, may swap it for a link) is left, as root too."""
    from passhat.agents import folders
    from passhat.agents.watchdog import _PROGRAM

    if os.geteuid() != 0:
        pytest.skip("making another user's folder needs root")
    gone = subprocess.Popen(["true"])
    gone.wait()
    base = Path(tempfile.gettempdir())
    planted = [base / f"{folders.prefix(gone.pid)}planted", base / "passhat-run-4243-planted"]
    for folder in planted:
        folder.mkdir()
        (folder / "file").write_text("theirs")
        os.chown(folder, NOBODY, NOBODY)
    try:
        folders._SWEPT.discard(os.getpid())
        folders.sweep_folders()
        subprocess.run(
            [sys.executable, "-c", _PROGRAM, str(base), "passhat-run-4243-"],
            stdin=subprocess.DEVNULL,
            check=True,
            timeout=60,
        )
        assert all((folder / "file").read_text() == "theirs" for folder in planted)
    finally:
        for folder in planted:
            shutil.rmtree(folder, ignore_errors=True)


def test_the_fingerprint_covers_the_agent_file_bytes(writer: SuiteWriter, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("print(1)\n")
    spec = from_command_line(f"{sys.executable} agent.py", tmp_path)
    argv, files = resolve_paths(spec, tmp_path)
    assert argv[1] == str(agent) and files == [agent]
    from passhat.agents import resolve_agent

    before = resolve_agent(spec.spec()).source_hash
    agent.write_text("print(2)\n")
    after = resolve_agent(spec.spec()).source_hash
    assert before and after and before != after


def test_stdout_is_json_or_text_as_configured() -> None:
    assert parse_output(b'{"a": 1}\n', "json") == {"a": 1}
    assert parse_output(b"  \n", "json") is None
    assert parse_output(b"plain words\n", "text") == "plain words\n"
    with pytest.raises(AgentProcessError, match="not UTF-8"):
        parse_output(b"\xff\xfe", "json")
    with pytest.raises(AgentProcessError, match="not JSON"):
        parse_output(b"plain words", "json")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"command": []}, "list of strings"),
        ({"command": ["x"], "env": {"OPENAI_API_KEY": "sk"}}, "looks like a secret"),
        ({"command": ["x"], "output": "xml"}, "use json or text"),
        ({"command": ["x"], "shell": True}, "unknown key"),
    ],
    ids=["empty-command", "secret-in-env", "bad-output", "unknown-key"],
)
def test_bad_command_configs_are_one_line_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(config, "suite.yaml: defaults.agent")


def test_a_missing_program_is_refused_before_anything_runs(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(writer, [])
    result = run_cli(
        capsys,
        "run",
        str(suite),
        "--agent-cmd",
        "no-such-program-xyz a.js",
        "--db",
        str(tmp_path / "p.db"),
    )
    assert result.code == 2
    assert "'no-such-program-xyz' is not on PATH" in result.err
    assert "Traceback" not in result.err


def test_the_agent_process_gets_a_small_environment() -> None:
    from passhat.agents.command import process_environ

    spec = CommandSpec(command=("x",), env={"A": "1"}, pass_env=("SERP_KEY",))
    parent = {
        "PATH": "/bin",
        "OPENAI_API_KEY": "sk",
        "ANTHROPIC_API_KEY": "sk",
        "SERP_KEY": "s",
        "LC_ALL": "C",
    }
    env = process_environ(spec, {"PASSHAT_MCP_URL": "u"}, parent)
    assert env == {"PATH": "/bin", "LC_ALL": "C", "SERP_KEY": "s", "A": "1", "PASSHAT_MCP_URL": "u"}


def test_every_report_says_when_runs_were_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_helpers import run_seed
    from passhat.report.html import render_html

    db = tmp_path / "p.db"
    assert run_seed(capsys, "--db", str(db), "-q").code == 0  # the in-process clarifier
    with Store(db, create=False) as store:
        experiment = store.experiment("latest")
        runs = store.runs(experiment.id)
    assert {r.model_source for r in runs} == {"replayed"}
    page = render_html(experiment, runs)
    assert 'data-replayed="3"' in page
    assert "3 runs replayed from a cassette" in page
    live = [replace(r, model_source="live") for r in runs]
    assert "data-replayed" not in render_html(experiment, live)
    out = " ".join(
        run_cli(capsys, "report", "latest", "--db", str(db), "--lang", "zh-TW").out.split()
    )
    assert "3 次執行的模型回應重播自錄製檔" in out


def test_suite_yaml_names_a_command_agent_or_says_which_field_is_wrong(
    writer: SuiteWriter,
) -> None:
    from passhat.errors import SuiteError
    from passhat.suite import load_suite

    writer.suite["defaults"]["agent"] = {"command": ["node", "agent.js"], "env": {"A": 1}}  # type: ignore[index]
    spec = load_suite(writer.write()).defaults.agent
    assert spec.startswith("command:")
    assert parse_config(json.loads(spec.removeprefix("command:")), "x") == CommandSpec(
        ("node", "agent.js"), cwd=".", env={"A": "1"}
    )
    writer.suite["defaults"]["agent"] = {"command": [], "shell": True}  # type: ignore[index]
    with pytest.raises(SuiteError) as raised:
        load_suite(writer.write())
    problems = "\n".join(raised.value.problems)
    assert "suite.yaml: defaults.agent.command: is empty" in problems
    assert "defaults.agent.shell: unknown key 'shell'" in problems


def test_stderr_quoted_in_a_reason_cannot_drive_the_terminal() -> None:
    from passhat.agents.streams import with_tail

    reason = with_tail("the agent process exited with code 1", "bad\x1b]0;owned\x07\x1b[2J\n")
    assert "\x1b" not in reason and "\x07" not in reason
    assert "bad\\x1b]0;owned\\x07\\x1b[2J" in reason


def test_the_anthropic_endpoint_replays_a_tool_loop(
    writer: SuiteWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = {"key": "T-1", "goal": "g", "scope_in": ["s"], "scope_out": [], "annotations": GOAL}
    tape = [
        {
            "case": "tiny-001",
            "run": 1,
            "turn": 0,
            "message": {
                "role": "assistant",
                "content": "writing",
                "tool_calls": [{"id": "t1", "name": "update_ticket", "arguments": args}],
            },
            "usage": {"input_tokens": 50, "output_tokens": 20},
        },
        {
            "case": "tiny-001",
            "run": 1,
            "turn": 1,
            "message": {"role": "assistant", "content": "done"},
            "usage": {"input_tokens": 80, "output_tokens": 2},
        },
    ]
    suite = _suite(writer, ["anthropic"], tape)
    db = tmp_path / "p.db"
    run_cli(capsys, "run", str(suite), "-k", "1", "--db", str(db), "-q")
    run = _runs(db)[1]
    assert run.status == "passed", run.error_message
    assert run.output == {"final": "done", "stop": "end_turn"}
    assert [m["role"] for m in run.transcript] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert run.transcript[3]["name"] == "update_ticket"
    assert (run.input_tokens, run.output_tokens) == (130, 22)
    assert run.model_source == "replayed"


async def test_the_run_server_wants_its_token_and_streams_whole_answers(tmp_path: Path) -> None:
    import httpx2
    from openai import AsyncOpenAI

    from passhat.agents.base import RunContext
    from passhat.env import make_environment
    from passhat.models.replay import ReplayModel
    from passhat.serve import serve_run
    from passhat.suite import load_suite

    suite = load_suite(ROOT / "examples" / "clarify")
    case = suite.case("ac-conflict-001")
    model = ReplayModel(ROOT / "examples" / "clarify" / "cassettes" / "seed.jsonl")
    ctx = RunContext(case_id=case.id, run_index=2, seed=1, model=model)
    async with serve_run(make_environment(suite, case), ctx) as endpoints:
        async with httpx2.AsyncClient() as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                denied = await http.post(endpoints.mcp_url, json={}, headers=headers)
                assert denied.status_code == 401
                denied = await http.post(
                    endpoints.openai_base_url + "/chat/completions", json={}, headers=headers
                )
                assert denied.status_code == 401
        client = AsyncOpenAI(
            base_url=endpoints.openai_base_url, api_key=endpoints.token, max_retries=0
        )
        stream = await client.chat.completions.create(
            model="x",
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
        await client.close()
    calls = chunks[0].choices[0].delta.tool_calls or []
    assert [c.function.name for c in calls] == ["update_ticket"]
    annotations = json.loads(calls[0].function.arguments or "{}")["annotations"]
    assert len(annotations) == 2  # the seed's run 2 at turn 0
    assert chunks[1].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 1912
    assert ctx.turns == 1 and ctx.model_source() == "replayed"


def test_the_transcript_gets_only_what_is_new_in_each_request() -> None:
    from passhat.serve.proxy import new_in_request, parse_messages

    request = parse_messages(
        [
            {"role": "developer", "content": [{"type": "text", "text": "rules"}]},
            {"role": "user", "content": "ticket"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_ticket", "arguments": '{"key": "T-1"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "{...}"},
        ]
    )
    assert request[0].role == "system" and request[0].content == "rules"
    assert request[2].tool_calls[0].arguments == {"key": "T-1"}
    new = new_in_request(request)
    assert [(m.role, m.name) for m in new] == [("tool", "get_ticket")]
    assert [m.role for m in new_in_request(request[:2])] == ["system", "user"]


def test_anthropic_requests_read_like_openai_ones() -> None:
    from passhat.serve.anthropic_proxy import openai_shaped
    from passhat.serve.proxy import RequestError, parse_messages

    body = {
        "system": [{"type": "text", "text": "rules"}],
        "messages": [
            {"role": "user", "content": "ticket"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "looking"},
                    {"type": "tool_use", "id": "t1", "name": "get_ticket", "input": {"key": "T-1"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "the ticket"}],
                    }
                ],
            },
        ],
        "tools": [{"name": "get_ticket", "input_schema": {"type": "object"}}],
    }
    messages = parse_messages(openai_shaped(body)["messages"])
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[3].content == "the ticket" and messages[3].name == "get_ticket"
    with pytest.raises(RequestError, match="does not stream"):
        openai_shaped({**body, "stream": True})


def test_reports_show_a_command_agent_as_its_command_line() -> None:
    from passhat.records import agent_label

    spec = CommandSpec(("node", "my agent.js"), cwd="/x", env={"A": "1"}).spec()
    assert agent_label(spec) == "command: node 'my agent.js'"
    assert agent_label("clarifier") == "clarifier"


async def test_mcp_calls_are_recorded_as_in_process_calls_and_fixtures_answer_look_ups() -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from passhat.agents.base import RunContext
    from passhat.env import make_environment
    from passhat.serve import serve_run
    from passhat.suite import load_suite

    suite = load_suite(ROOT / "examples" / "clarify")
    case = suite.case("ac-conflict-001")
    env = make_environment(suite, case)
    ctx = RunContext(case_id=case.id, run_index=1, seed=1, model=None)
    async with serve_run(env, ctx) as endpoints:
        auth = {"Authorization": f"Bearer {endpoints.token}"}
        async with httpx2.AsyncClient(headers=auth) as http:
            transport = streamable_http_client(endpoints.mcp_url, http_client=http)
            async with Client(transport) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
                hit = await client.call_tool(
                    "query_background", {"query": "優惠碼可以和會員折扣一起用嗎"}
                )
                miss = await client.call_tool("query_background", {"query": "shipping fees"})
                unknown = await client.call_tool("delete_everything", {})
    assert set(listed) == {t.name for t in env.tools}
    assert listed["update_ticket"].input_schema == next(
        t.parameters for t in env.tools if t.name == "update_ticket"
    )
    assert not hit.is_error and "第 4 條" in hit.content[0].text  # type: ignore[union-attr]
    assert miss.is_error and "no recorded answer" in miss.content[0].text  # type: ignore[union-attr]
    assert unknown.is_error
    recorded = [(c.tool, c.fixture_miss, c.error is None) for c in env.calls]
    assert recorded == [
        ("query_background", False, True),
        ("query_background", True, False),
        ("delete_everything", False, False),
    ]


@pytest.mark.parametrize(
    ("limit", "let_through", "named"),
    [
        (["--max-turns", "3"], 3, "past the run's limit of 3 (--max-turns 3)"),
        (
            ["--max-turns", "10", "--token-budget", "200"],
            2,
            "its budget is 200 (--token-budget 200)",
        ),
    ],
    ids=["max-turns", "token-budget"],
)
def test_the_proxy_lets_no_call_past_the_runs_limits_reach_the_provider_and_the_run_counts(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    limit: list[str],
    let_through: int,
    named: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-limits-test-key-000000")
    fake_server.reply("hello", usage=(100, 20), times=30)
    suite = _suite(writer, ["turns"], env={"TURNS": "30"})
    db = tmp_path / "p.db"
    model = ["--model", "openai:gpt-test", "--base-url", fake_server.openai_url]
    result = run_cli(capsys, "run", str(suite), "-k", "1", *model, *limit, "--db", str(db), "-q")
    assert result.code == 0, result.err  # the run is counted: a limit is the agent's result
    assert len(fake_server.requests) == let_through, "a call past the limit reached the provider"
    run = _runs(db)[1]
    assert (run.status, run.error_type) == ("failed", "limit")
    assert named in (run.error_message or "")
    codes = json.loads((run.stderr or "").strip().splitlines()[-1])["codes"]
    assert codes == [200] * let_through + [403] * (30 - let_through)
    assert (run.input_tokens, run.output_tokens) == (100 * let_through, 20 * let_through)


def test_past_limit_names_the_first_limit_a_call_would_pass() -> None:
    from passhat.limits import past_limit

    assert past_limit(2, 10_000, 3, None) is None
    assert "--max-turns 3" in (past_limit(3, 0, 3, None) or "")
    assert past_limit(1, 199, 3, 200) is None
    assert "the run spent 200 tokens" in (past_limit(1, 200, 3, 200) or "")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_with_agents_in_flight_prints_one_line_and_no_traceback(
    writer: SuiteWriter, tmp_path: Path, open_tmp: Path, sig: signal.Signals
) -> None:
    suite = _suite(writer, ["hang"], env={"PID_DIR": str(open_tmp)})
    db = tmp_path / "p.db"
    argv = [sys.executable, "-m", "passhat", "run", str(suite), "-k", "3", "--db", str(db), "-q"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(list(open_tmp.glob("run-*.json"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(list(open_tmp.glob("run-*.json"))) == 3, "every run's agent must be up"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 128 + sig
    assert "Traceback" not in err and "CancelledError" not in err and "ERROR" not in err
    assert err.strip().splitlines()[0].startswith("interrupted: 0 runs recorded")
    assert _wait_gone(f"PID_DIR={open_tmp}") == []


def test_a_run_given_up_while_the_proxy_retries_keeps_its_retries(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-retries-test-key-0000")
    fake_server.fail(503, times=1000)
    # one request over raw HTTP: the openai SDK's import alone took the 3 s at load 13
    # (no request made), and the proxy's retries are what is under test
    suite = _suite(writer, ["turns"], env={"TURNS": "1"})
    db = tmp_path / "p.db"
    model = ["--model", "openai:gpt-test", "--base-url", fake_server.openai_url]
    # 5 s: at load 20 and more the agent's start took most of 3 s and fewer than 3 requests
    # were made (earlier sessions' flake; its requests now made with urllib, not httpx,
    # whose import was a third of that start's CPU); 1000 retries are not spent before
    # the deadline, which the test waits for
    args = ["-k", "1", "--timeout", "5", "--retries", "1000", "--retry-max-wait", "0.2"]
    result = run_cli(capsys, "run", str(suite), *model, *args, "--db", str(db), "-q")
    assert result.code == 1, result.err
    run = _runs(db)[1]
    assert run.error_type == "timeout"
    sent = len(fake_server.requests)
    assert sent >= 3, "the provider should have been asked several times"
    # every request that failed and was waited on is a retry on the run (the last may
    # have been in flight at the deadline)
    assert sent - 1 <= len(run.retries) <= sent
    assert {r["turn"] for r in run.retries} == {0}
    assert all(r["error"] == "TransientModelError" for r in run.retries)


def test_passhat_isolation_sets_the_level_when_no_option_does(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """$PASSHAT_ISOLATION is a machine's default level; --isolation still wins, and the
    level is recorded with the experiment."""
    suite = _suite(writer, ["crash"])
    monkeypatch.setenv("PASSHAT_ISOLATION", "jail")
    bad = run_cli(capsys, "run", str(suite), "-k", "1", "--db", str(tmp_path / "a.db"))
    assert bad.code == 2 and "jail" in bad.err and "Traceback" not in bad.err
    monkeypatch.setenv("PASSHAT_ISOLATION", "process")
    db = tmp_path / "b.db"
    assert run_cli(capsys, "run", str(suite), "-k", "1", "--db", str(db), "-q").code in (0, 1)
    with Store(db, create=False) as store:
        assert store.experiment("latest").params["isolation"] == "process"


HEAVY_AT_THE_END = """
import sys
from passhat.cli import main
try:
    main({args!r})
except SystemExit as end:
    print("exit", end.code, file=sys.stderr)
print(sorted(m for m in ("mcp", "pydantic", "passhat.suite.validation") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("mode", "status", "imported"),
    [
        ("crash", "errored", []),
        ("turns", "errored", ["mcp", "pydantic"]),
    ],
)
def test_the_mcp_sdk_and_pydantic_wait_for_the_first_request_for_a_tool(
    tmp_path: Path, mode: str, status: str, imported: list[str]
) -> None:
    """Importing the mcp SDK is about a second of CPU, most of a one-run `passhat run`,
    and pydantic with the suite's models (a command agent's `agent:` was read by its
    model) 0.13 s more: a run whose agent asks for no tool (`crash`) imports neither
    (serve/lazy_mcp.py, suite/shapes.py); one that asks its model (`turns`) starts the
    import beside it (its tool calls would come next). A tool called over MCP is served
    as before: the `ok` runs of the other tests here pass."""
    suite = _suite(SuiteWriter(tmp_path / "suite"), [mode], env={"TURNS": "1"})
    db = tmp_path / "p.db"
    args = ["run", str(suite), "-k", "1", "--timeout", "120", "--isolation", "process"]
    args += ["--db", str(db), "-q", "--no-report"]
    done = subprocess.run(
        [sys.executable, "-c", HEAVY_AT_THE_END.format(args=args)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == str(imported), done.stderr
    assert [run.status for run in _runs(db).values()] == [status]
