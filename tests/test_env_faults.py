"""A user's environment that fails at run time errors that run, and the experiment
goes on: setup(), final_state() and close() that raise, call sys.exit or block,
each bounded by --timeout.

The environment (faulty.py, written beside suite.yaml) takes its fault for each
instance from a plan, once the first run's agent has armed it: loading and
checking the suite build instances too, and those must stay clean.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import yaml

from cli_helpers import run_cli
from passhat.store import Store

FAULTY = '''
import time
from pathlib import Path
from typing import Any

from passhat import Environment, tool

STATE = Path(__file__).with_name("state")


def _next_fault() -> str:
    if not (STATE / "armed").exists():
        return "none"
    cursor = STATE / "cursor"
    n = int(cursor.read_text()) if cursor.exists() else 0
    cursor.write_text(str(n + 1))
    plan = (STATE / "plan").read_text().split(",")
    return plan[n] if n < len(plan) else "none"


def _act(fault: str, where: str) -> None:
    if fault == where + "-raise":
        raise RuntimeError(where + " broke")
    if fault == where + "-exit":
        raise SystemExit(7)
    if fault == where + "-block":  # until the test releases it (60 s at most)
        deadline = time.monotonic() + 60
        while not (STATE / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (STATE / (where + "-woke")).touch()


class Faulty(Environment):
    def setup(self, input: dict[str, Any]) -> None:
        self.fault = _next_fault()
        _act(self.fault, "setup")

    @tool
    def arm(self) -> str:
        """Arm the faults."""
        (STATE / "armed").touch()
        return "armed"

    def final_state(self) -> dict[str, Any]:
        _act(self.fault, "final")
        return {"ok": True}

    def close(self) -> None:
        _act(self.fault, "close")
'''

AGENT = """
async def agent(input, env, ctx):
    await env.call("arm", {})
    return "done"
"""

PLAN = [
    "setup-raise",
    "setup-exit",
    "setup-block",
    "final-raise",
    "final-exit",
    "final-block",
    "close-raise",
    "close-exit",
    "close-block",
]


def test_each_environment_fault_is_one_errored_run_and_the_experiment_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    (root / "state").mkdir()
    (root / "state" / "plan").write_text(",".join(PLAN))
    (root / "faulty.py").write_text(FAULTY)
    (root / "agent.py").write_text(AGENT)
    suite = {
        "name": "faulty",
        "environment": "faulty.py:Faulty",
        "defaults": {"agent": "agent.py:agent", "scorers": [{"equals": "."}]},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    case = {"id": "c1", "input": {}, "goal": {"ok": True}}
    (root / "cases" / "c1.yaml").write_text(yaml.safe_dump(case))
    db = tmp_path / "p.db"
    k = str(len(PLAN) + 2)
    args = ["-k", k, "--concurrency", "1", "--timeout", "1", "--db", str(db), "-q"]
    try:
        result = run_cli(capsys, "run", str(root), *args)
        woke = sorted(p.name for p in (root / "state").glob("*-woke"))
    finally:
        (root / "state" / "release").touch()
    assert result.code == 0, result.err
    assert "Traceback" not in result.err
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    got = [(r.status, r.error_type, r.error_message) for r in runs]
    wanted = [
        ("passed", None, None),
        ("errored", "environment_error", "setup() raised RuntimeError: setup broke"),
        ("errored", "environment_error", "setup() called sys.exit(7)"),
        ("errored", "timeout", "the environment's setup() did not finish within 1 s"),
        ("errored", "environment_error", "final_state() raised RuntimeError: final broke"),
        ("errored", "environment_error", "final_state() called sys.exit(7)"),
        ("errored", "timeout", "the environment's final_state() or close() did not finish in time"),
        ("errored", "environment_error", "close() raised RuntimeError: close broke"),
        ("errored", "environment_error", "close() called sys.exit(7)"),
        ("errored", "timeout", "the environment's final_state() or close() did not finish in time"),
        ("passed", None, None),
    ]
    assert got == wanted
    # the experiment ended while every blocked call was still blocked: bounded by --timeout
    assert woke == [], f"the runs waited for {woke}"


THREADED = '''
import sqlite3
import threading
from typing import Any

from passhat import Environment, tool


class Threaded(Environment):
    """Holds what belongs to the thread that made it: sqlite3 refuses any other."""

    def setup(self, input: dict[str, Any]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("create table t (x)")
        self.threads = {"setup": threading.get_ident()}

    @tool
    def put(self, x: int) -> str:
        """Write a row."""
        self.db.execute("insert into t values (?)", (x,))
        self.threads["put"] = threading.get_ident()
        return "ok"

    def final_state(self) -> dict[str, Any]:
        rows = [row[0] for row in self.db.execute("select x from t")]
        same = set(self.threads.values()) == {threading.get_ident()}
        return {"rows": rows, "one_thread": same}

    def close(self) -> None:
        self.db.close()
'''


def test_a_users_world_lives_in_one_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: with setup() and final_state() moved to worker threads (so that a
    blocking one is bounded by --timeout), a world holding a sqlite3 connection made in
    setup() failed on its first tool call, called from the event loop (the sql example
    broke). setup, tools, final_state and close now share the run's own thread."""
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    (root / "threaded.py").write_text(THREADED)
    (root / "agent.py").write_text(
        "async def agent(input, env, ctx):\n"
        "    for x in (1, 2):\n"
        "        assert not (await env.call('put', {'x': x})).is_error\n"
    )
    suite = {
        "name": "threaded",
        "environment": "threaded.py:Threaded",
        "defaults": {"agent": "agent.py:agent", "scorers": [{"equals": "."}]},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    case = {"id": "c1", "input": {}, "goal": {"rows": [1, 2], "one_thread": True}}
    (root / "cases" / "c1.yaml").write_text(yaml.safe_dump(case))
    db = tmp_path / "p.db"
    before = set(threading.enumerate())  # an earlier test's blocked worlds stay blocked
    result = run_cli(capsys, "run", str(root), "-k", "3", "--db", str(db), "-q")
    assert result.code == 0, result.err
    with Store(db, create=False) as store:
        runs = store.runs(store.experiment("latest").id)
    assert [(r.status, r.error_message) for r in runs] == [("passed", None)] * 3
    # each run's world thread ends with its run
    deadline = time.monotonic() + 5
    while any(t.name == "passhat-world" and t not in before for t in threading.enumerate()):
        assert time.monotonic() < deadline, "a world thread outlived its run"
        time.sleep(0.01)
