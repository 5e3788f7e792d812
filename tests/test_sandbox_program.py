"""A run cannot rewrite its own program for the runs after it (round 9's outside attack).

The bytes of the files an agent's command names are in the experiment's fingerprint:
editing the agent makes another configuration, and runs of two are never pooled. A suite
that gave its agent a writable folder holding that program (`write: [.]` beside
agent.py, or --agent-write of a folder above it) let each run rewrite the program, so the
experiment's later runs ran other code under the one fingerprint. Such a write: path is
now refused before anything runs, with one line naming it, as one holding the suite or
the store is. (A read-only mount over the file would not do: a run can rename the
folder above it, as extra_paths says of the suite.) As root and as nobody; `process`,
where nothing is sealed, is the control.
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


def _experiment(user: str, folder: Path, level: str) -> tuple[int, str, list[object]]:
    """k=2 at `level`, the agent in folder/LEVEL/agent and folder/LEVEL writable."""
    agent = folder / level / "agent"
    agent.mkdir(parents=True)
    shutil.copyfile(TESTS / "attack_agent.py", agent / "attack.py")
    writer = SuiteWriter(folder / f"suite-{level}")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(agent / "attack.py")],
        "env": {"ATTACK_SELF": "1"},
        "write": [str(folder / level)],  # the folder above the agent's: a rename away
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = folder / f"{level}.db"
    args = ["-k", "2", "--concurrency", "1", "--timeout", "60", "--isolation", level]
    done = passhat_as(user, folder, "run", str(suite), *args, "--db", str(db), "-q", "--no-report")
    if done.returncode not in (0, 1):
        return done.returncode, done.stderr, []
    with Store(db, create=False) as store:
        runs = sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)
    return done.returncode, done.stderr, [r.output["self"] if r.output else None for r in runs]


def test_a_writable_path_holding_the_agents_own_program_is_refused(
    user: str, open_tmp: Path
) -> None:
    code, stderr, seen = _experiment(user, open_tmp, "namespace")
    assert seen == [], f"the runs ran, rewriting their program: {seen}"
    assert code == 2 and "holds its own program" in stderr and "Traceback" not in stderr
    assert str((open_tmp / "namespace").resolve()) in stderr
    assert len(stderr.strip().splitlines()) == 1
    # the control: at --isolation process the second run finds the first one's rewrite
    code, stderr, seen = _experiment(user, open_tmp, "process")
    assert code in (0, 1) and seen == [[0, True], [1, True]], (stderr, seen)
