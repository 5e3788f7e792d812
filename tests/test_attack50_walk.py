"""A secret or an earlier store past the look's bounds stayed in a run's view (round 12's
outside attack), now covered or refused.

docs/command-agents.md promises that `.env`, `.netrc` and the like are covered "in any
folder in view", and that any other passhat store, report or export in a folder in view
is out of reach. The look that finds them (agents/lookout.py) walked each folder in view
6 levels deep and stopped after WALK_LIMIT (20,000) entries; what lay past either was
neither read nor covered: an agent beside a project whose `results/` tree is seven
folders deep, or whose `data/` folder holds more than 20,000 files, read the `.env` and
the earlier store kept there. Now the look goes as deep as a folder goes and refuses
past WALK_LIMIT (archives.TooMuchToLook: at the experiment's start, or that run errored
`isolation`), counting while it lists (a folder of millions is not listed whole), and
goes into every folder but an installation (sandbox.PACKAGES). The whole run (the deep
tree, as root and as nobody) is kept; the rest are unit tests of the look (a `process`
control showed the attack reads them: 54df541).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passhat.agents import lookout
from passhat.agents.archives import TooMuchToLook
from passhat.agents.lookout import Lookout
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, one_run

SECRET = "OPENAI_API_KEY=sk-the-users-own-key\n"
DEEP = Path(*(f"d{level}" for level in range(7)))
"""Seven folders below the agent's folder (a dated results/ tree): past the old depth."""
SMALL = 50
"""WALK_LIMIT in the unit tests (monkeypatched): the same rule, in a folder of 51 files."""


def _suite(folder: Path, work: Path, env: dict[str, str]) -> Path:
    """A suite in `folder`/suite whose agent, tests/attack49_agent.py, is run from `work`
    (made here; a folder of its own: one holding the suite is narrowed to the program)
    with `env`, its model an empty cassette."""
    return attack_suite(work, env, "attack49_agent.py", suite=folder / "suite")


def _plant(folder: Path, crowd: int = 0) -> None:
    """A `.env` and an earlier experiment's store at `folder` (made), and `crowd` empty
    files beside it."""
    folder.mkdir(parents=True)
    for index in range(crowd):
        os.close(os.open(folder / f"{index:05d}.json", os.O_CREAT | os.O_WRONLY))
    (folder / ".env").write_text(SECRET)
    with Store(folder / "model-a.db"):  # its tables tell a store, whatever its name
        pass


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_secret_and_a_store_seven_folders_deep_are_out_of_reach(
    user: str, open_tmp: Path
) -> None:
    """The whole run (as root and as nobody): both were read at --isolation namespace
    (seen failing with the look's old depth of 6 put back)."""
    work = open_tmp / "work"  # the agent's folder, beside the suite's
    secret, old = (work / DEEP / name for name in (".env", "model-a.db"))
    suite = _suite(open_tmp, work, {"ATTACK_READ": f"{secret},{old}"})
    _plant(work / DEEP)
    run = one_run(user, open_tmp, suite, open_tmp / "p.db", "namespace")
    assert run.output is not None, run.error_message
    assert run.output["read"] == {str(secret): None, str(old): None}, "in view"


def test_a_folder_past_walk_limit_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past WALK_LIMIT entries the look refuses (an `isolation` error in a later run),
    where it stopped and covered nothing past the bound: a `.env` and a store beside
    20,000 files were read by the agent."""
    monkeypatch.setattr(lookout, "WALK_LIMIT", SMALL)
    _plant(tmp_path / "data", crowd=SMALL - 6)  # 50 entries in all: looked at, all found
    _plant(tmp_path / "data" / "later")
    look = Lookout(str(tmp_path))
    assert len(look.found()) == 4
    os.close(os.open(tmp_path / "data" / "one-more", os.O_CREAT | os.O_WRONLY))
    with pytest.raises(TooMuchToLook, match=f"{tmp_path}: .* more than {SMALL:,} files") as err:
        look.found()  # the next run's look
    assert err.value.error_type == "isolation"
    assert "--agent-read" in str(err.value) and "\n" not in str(err.value)


def test_one_folder_is_not_listed_past_walk_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `write:` folder of millions of entries was listed whole before every run: the
    look stops listing at the bound."""
    monkeypatch.setattr(lookout, "WALK_LIMIT", SMALL)
    _plant(tmp_path / "crowd", crowd=SMALL * 4)
    listed = []
    scandir = os.scandir

    class Counted:
        def __init__(self, path: str) -> None:
            self.entries = scandir(path)

        def __enter__(self) -> Counted:
            return self

        def __exit__(self, *_: object) -> None:
            self.entries.close()

        def __iter__(self) -> Counted:
            return self

        def __next__(self) -> os.DirEntry[str]:
            entry = next(self.entries)
            listed.append(entry.name)
            return entry

    monkeypatch.setattr(lookout.os, "scandir", Counted)
    with pytest.raises(TooMuchToLook):
        Lookout(str(tmp_path)).found()
    assert len(listed) <= SMALL + 2, "listed whole"


def test_caches_are_looked_into_installations_are_not(tmp_path: Path) -> None:
    """Only an installation (sandbox.PACKAGES: site-packages, dist-packages, node_modules,
    installed.py's rule) is not looked into: a `.env` and a store in __pycache__ or
    .mypy_cache are covered (they were not)."""
    for cache in ("__pycache__", ".mypy_cache"):
        _plant(tmp_path / "src" / cache)
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / ".env").write_text("certificates, not a secret")
    found = sorted(Lookout(str(tmp_path)).found())
    caches = [tmp_path / "src" / cache for cache in ("__pycache__", ".mypy_cache")]
    assert found == sorted(str(c / name) for c in caches for name in (".env", "model-a.db"))


def test_what_the_look_does_not_reach_is_not_shipped_to_dask_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --executor dask the agent's program folder is shipped to every worker, less
    what the look covers; the walk that ships it went deeper than the look and had no
    bound. Now a deep `.env` is covered, and a program folder past WALK_LIMIT is refused."""
    from passhat.agents import sandbox
    from passhat.agents.command import CommandAgent, CommandSpec
    from passhat.executors.program import program_files

    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.sh").write_text("#!/bin/sh\necho '{}'\n")
    (work / ".env").write_text(SECRET)  # the control: covered, not shipped
    _plant(work / DEEP)
    agent = CommandAgent(CommandSpec(("/bin/sh", str(work / "agent.sh")), cwd=str(work)), None)
    shipped = [name for name in program_files(agent)[0] if name.endswith((".env", ".db"))]
    assert shipped == [], "shipped to every worker"
    monkeypatch.setattr(lookout, "WALK_LIMIT", 10_000)  # the look passes, the walk does not
    monkeypatch.setattr(sandbox, "WALK_LIMIT", SMALL)
    (work / "node_modules" / "pkg").mkdir(parents=True)
    for index in range(SMALL * 2):  # an installation: shipped, not counted
        (work / "node_modules" / "pkg" / f"{index}.js").write_text("")
    assert len(program_files(agent)[0]) == 1 + SMALL * 2  # agent.sh and the packages
    _plant(work / "data", crowd=SMALL)
    with pytest.raises(TooMuchToLook, match="more than 50 files"):
        program_files(agent)


def test_a_file_sqlite_cannot_answer_for_in_time_is_covered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When SQLite cannot say in time whether a file is a store (its thread still asking
    at the deadline), the head-only fallback's "not a store" was kept with a trusted stat
    key, the file shown to every later run. Now a regular file that still starts as
    SQLite is taken for a store (fails closed); a FIFO swapped in is not (test_review47)."""
    import time

    import passhat.store.schema as schema
    from passhat.agents import sandbox

    path = tmp_path / "packed.db"
    path.write_bytes(sandbox.SQLITE_MAGIC + bytes(4096))  # no table text on its first page
    monkeypatch.setattr(sandbox, "STORE_LOOK_S", 0.05)

    def slow(at: str, seconds: float, *, live: bool) -> bool | None:
        time.sleep(0.5)  # SQLite busy past the deadline (a schema at the end of a huge file)
        return True

    monkeypatch.setattr(schema, "holds_passhat_tables", slow)
    monkeypatch.setattr(lookout, "RACY_NS", 0)  # its key trusted at once
    look = Lookout(str(tmp_path))
    assert look.found() == [str(path)]
    assert look.found() == [str(path)]
