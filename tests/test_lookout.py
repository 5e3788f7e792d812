"""The look for answers kept up to date between runs (agents/lookout.py): what appears,
changes or goes in a folder in view after a look is seen by the next, and what did not
change is not read again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passhat.agents import lookout
from passhat.agents.lookout import Lookout, Looks
from passhat.store import Store

CSV_HEAD = "experiment,experiment_name,kind,model,fingerprint,case,run,status,verdict\n"


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the look reads by their content from now on (lookout.kind, still run)."""
    read: list[str] = []
    real_kind = lookout.kind

    def kind(path: str, archives: bool = True) -> str:
        read.append(path)
        return real_kind(path, archives)

    monkeypatch.setattr(lookout, "kind", kind)
    return read


def test_what_appears_changes_or_goes_after_a_look_is_seen_by_the_next(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("print('hi')\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("my own notes\n")
    looks = Looks()
    assert looks.found(str(tmp_path)) == []
    store = tmp_path / "sub" / "later"  # a store under no store's name, in a new folder
    store.parent.mkdir()
    with Store(store):
        pass
    (tmp_path / ".env").write_text("KEY=1\n")
    notes.write_text(CSV_HEAD)  # an export written over the agent's own file, in place
    found = looks.found(str(tmp_path))
    assert sorted(found) == sorted([str(store), str(tmp_path / ".env"), str(notes)])
    store.unlink()  # gone: no longer covered (bwrap would make a file to cover it)
    notes.write_text("my own notes again\n")
    assert looks.found(str(tmp_path)) == [str(tmp_path / ".env")]


def test_what_did_not_change_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look before each run stats what it saw; only what changed is read again."""
    for index in range(20):
        (tmp_path / f"f{index}.txt").write_text(f"file {index}\n")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "g.txt").write_text("g\n")
    monkeypatch.setattr(lookout, "RACY_NS", 0)  # every time on disk trusted at once
    read = _reads(monkeypatch)
    look = Lookout(str(tmp_path))
    assert look.found() == []
    assert len(read) == 21
    read.clear()
    assert look.found() == []
    assert read == [], "files that did not change were read again"
    (tmp_path / "deep" / "g.txt").write_text(CSV_HEAD)
    assert look.found() == [str(tmp_path / "deep" / "g.txt")]
    assert read == [str(tmp_path / "deep" / "g.txt")]


def test_a_file_changed_just_before_a_look_is_read_again_at_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system stamps times from a coarse clock: a file written twice within one
    tick (before and after the look read it) can keep the same size and times, so a key
    taken within RACY_NS of the look is not trusted and the file is read again."""
    path = tmp_path / "results.txt"
    path.write_text("x" * len(CSV_HEAD))
    read = _reads(monkeypatch)
    look = Lookout(str(tmp_path))
    assert look.found() == []
    assert look.found() == []
    assert read == [str(path), str(path)], "a file written just now was trusted"
    os.utime(path, ns=(0, 0))  # its times aside, its ctime is still within RACY_NS
    read.clear()
    monkeypatch.setattr(lookout, "RACY_NS", 0)
    assert look.found() == []
    assert look.found() == []
    assert read == [str(path)]


def test_the_walk_goes_where_a_single_look_went(tmp_path: Path) -> None:
    """As deep as the folder goes (round 12: past 6 levels was not looked at), not into
    links to folders or secret-named folders, as before; into installations for answers
    (a report there is found: test_review51)."""
    deep = tmp_path
    for level in range(8):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "runs.csv").write_text(CSV_HEAD)
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "runs.csv").write_text(CSV_HEAD)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "runs.csv").write_text(CSV_HEAD)
    (tmp_path / "shallow.csv").write_text(CSV_HEAD)
    (tmp_path / "link").symlink_to(tmp_path / "node_modules")
    found = Lookout(str(tmp_path)).found()
    assert sorted(found) == sorted(
        str(p)
        for p in (
            tmp_path / ".git",
            tmp_path / "shallow.csv",
            deep / "runs.csv",
            tmp_path / "node_modules" / "runs.csv",
        )
    )


def test_the_experiments_own_store_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store an experiment writes (protected: covered whatever it holds) changes with
    every run; the look before each run does not open it again and again."""
    store = tmp_path / "passhat.db"
    with Store(store):
        pass
    (tmp_path / "agent.py").write_text("print(1)\n")
    read = _reads(monkeypatch)
    looks = Looks([str(store), f"{store}-wal"])
    assert looks.found(str(tmp_path)) == []
    assert str(store) not in read and str(tmp_path / "agent.py") in read


def test_what_was_found_stays_found_unread_while_it_is_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store another experiment keeps writing changes before every run: found once,
    it is not opened again while it is the same file; a new file at its name is read."""
    store = tmp_path / "later.db"
    with Store(store):
        pass
    monkeypatch.setattr(lookout, "RACY_NS", 0)
    read = _reads(monkeypatch)
    look = Lookout(str(tmp_path))
    assert str(store) in look.found()
    with store.open("ab") as more:  # the other experiment writes on
        more.write(b"\0" * 4096)
    read.clear()
    assert str(store) in look.found()
    assert read == [], "a store found was read again"
    store.unlink()
    store.write_text("my notes\n")  # another file at its name
    assert look.found() == [] and read == [str(store)]
