"""A secret or an earlier store past the look's bounds stays in a run's view (round 12's
outside attack).

docs/command-agents.md promises that `.env`, `.netrc` and the like are covered "in any
folder in view", and that any other passhat store, report or export in a folder in view
is out of reach. The look that finds them (agents/lookout.py) walks each folder in view
WALK_DEPTH (6) levels deep and stops after WALK_LIMIT (20,000) entries; what lies past
either is neither read nor covered, and the docs do not say so. An agent beside a
project whose `results/` tree is seven folders deep, or whose `data/` folder holds more
than 20,000 files, reads the `.env` and the earlier store kept there (every score in it
names the goal's items). As root and as nobody; `process` is the control.

Not fixed here: covering what the look did not reach would hide an agent's own deep
files (a Node project's `src/` seven levels down) and break its runs, and looking
without bound costs every run a stat of every entry in view; the lead chooses.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.agents.sandbox import WALK_DEPTH, WALK_LIMIT
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, one_run

pytestmark = ATTACK_MARKS

SECRET = "OPENAI_API_KEY=sk-the-users-own-key\n"


PLACES = {
    # one folder past WALK_DEPTH below the agent's folder (a dated results/ tree)
    "deep": Path(*(f"d{level}" for level in range(WALK_DEPTH + 1))),
    # below a folder of more than WALK_LIMIT files (a data set, a build's output)
    "crowded": Path("data", "later"),
}


def _suite(folder: Path, work: Path, env: dict[str, str]) -> Path:
    """A suite in `folder`/suite whose agent, tests/attack49_agent.py, is run from `work`
    (made here; a folder of its own: one holding the suite is narrowed to the program)
    with `env`, its model an empty cassette."""
    work.mkdir()
    shutil.copyfile(TESTS / "attack49_agent.py", work / "attack.py")
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": env,
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


def _plant(work: Path, place: Path) -> None:
    """A `.env` and an earlier experiment's store at `work`/`place`, and what puts that
    folder past the look's bounds."""
    if place.parts[0] == "data":
        (work / "data").mkdir()
        for index in range(WALK_LIMIT + 1):
            os.close(os.open(work / "data" / f"{index:05d}.json", os.O_CREAT | os.O_WRONLY))
    (work / place).mkdir(parents=True)
    (work / place / ".env").write_text(SECRET)
    with Store(work / place / "model-a.db"):  # its tables tell a store, whatever its name
        pass


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize(
    "level",
    [
        pytest.param(
            "namespace",
            marks=pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason="the look for answers stops at WALK_DEPTH and WALK_LIMIT and covers "
                "nothing past them (agents/lookout.py Lookout._look)",
            ),
        ),
        "process",
    ],
)
def test_a_secret_and_a_store_past_the_looks_bounds_are_out_of_reach(
    user: str, open_tmp: Path, level: str, place: str
) -> None:
    work = open_tmp / "work"  # the agent's folder, beside the suite's
    secret, old = (work / PLACES[place] / name for name in (".env", "model-a.db"))
    suite = _suite(open_tmp, work, {"ATTACK_READ": f"{secret},{old}"})
    _plant(work, PLACES[place])
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", level)
    assert run.output is not None, run.error_message
    read = run.output["read"]
    if level == "process":  # the control: nothing is hidden there
        assert read[str(secret)] == SECRET
        assert read[str(old)].startswith("SQLite format 3")
    else:
        assert read == {str(secret): None, str(old): None}, "past the look's bounds, in view"


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="the shipment hides what the bounded look found (executors/program.py "
    "program_files) and walks the program's folders without that bound",
)
def test_a_secret_past_the_looks_depth_is_not_shipped_to_dask_workers(tmp_path: Path) -> None:
    """With --executor dask the agent's program folder is shipped to every worker, less
    what the look covers; the walk that ships it goes deeper than the look."""
    from passhat.agents.command import CommandAgent, CommandSpec
    from passhat.executors.program import program_files

    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    (work / ".env").write_text(SECRET)  # the control: covered, not shipped
    _plant(work, PLACES["deep"])
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    shipped = [name for name in program_files(agent)[0] if name.endswith((".env", ".db"))]
    assert shipped == [], "shipped to every worker"
