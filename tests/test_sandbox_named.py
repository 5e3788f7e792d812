"""A command that names the suite's answers does not show them to the run (round 9's
outside attack).

The files a command names are shown to its run even inside the covered suite folder
(an agent beside suite.yaml sees its own files). So a command that named a case file or
the cassette (`python agent.py cases/tiny.yaml`, as an agent's README might ask) bound
the goal into every run's view. Such a command is now refused before anything runs,
with one line naming the file. As root and as nobody; `process` is the control.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS


def _experiment(user: str, folder: Path, level: str) -> tuple[int, str, object]:
    suite = folder / f"suite-{level}"
    writer = SuiteWriter(suite)
    shutil.copyfile(TESTS / "attack_agent.py", folder / f"attack-{level}.py")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(folder / f"attack-{level}.py"), "cases/tiny.yaml"],
        "cwd": ".",  # the suite folder: the argument names its case file
        "env": {"ATTACK_SUITE": str(suite)},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    writer.write()
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = folder / f"{level}.db"
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    done = passhat_as(user, folder, "run", str(suite), *args, "--no-report")
    if done.returncode not in (0, 1):
        return done.returncode, done.stderr, None
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return done.returncode, done.stderr, (run.output or {}).get("read_goal")


def test_a_command_naming_a_case_file_is_refused(user: str, open_tmp: Path) -> None:
    code, stderr, read_goal = _experiment(user, open_tmp, "namespace")
    assert read_goal is None, "the run ran and read its goal" if read_goal else stderr
    assert code == 2 and "a file of the suite" in stderr and "Traceback" not in stderr
    assert "cases/tiny.yaml" in stderr and len(stderr.strip().splitlines()) == 1
    # the control: at --isolation process the agent reads the goal it was pointed at
    code, stderr, read_goal = _experiment(user, open_tmp, "process")
    assert code in (0, 1) and read_goal is True, stderr
