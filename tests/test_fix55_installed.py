"""The look for answers goes into installations (sandbox.PACKAGES) too, bounded: a store
or report copied into a folder named node_modules or site-packages is covered; their
secret-looking names stay exempt (certifi's cacert.pem), their code is not read, and
past WALK_LIMIT entries in installations the rest is left unlooked, not refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from passhat.agents import lookout
from passhat.agents.lookout import Lookout
from passhat.store import Store
from test_lookout import CSV_HEAD, _reads

SMALL = 50


def test_a_report_in_an_installation_is_found_its_secret_names_and_code_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lib" / "site-packages" / "pkg"
    package.mkdir(parents=True)
    (package / "runs.csv").write_text(CSV_HEAD)
    (package / "cacert.pem").write_text("certificates, not a secret")
    (package / "__init__.py").write_text("")
    (package / "index.js").write_text("")
    with Store(package / "results.db"):
        pass
    read = _reads(monkeypatch)
    found = sorted(Lookout(str(tmp_path)).found())
    assert str(package / "runs.csv") in found and str(package / "results.db") in found
    assert str(package / "cacert.pem") not in found
    assert not [p for p in read if p.endswith((".py", ".js"))], read


def test_past_the_bound_in_installations_the_rest_is_left_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real virtualenv holds 32,000 entries, past WALK_LIMIT: the look stops there (as
    it never looked into installations before), the folder is not refused; the bound is
    the installations' own, so the host's part is still bounded as before."""
    monkeypatch.setattr(lookout, "WALK_LIMIT", SMALL)
    listed: list[str] = []
    scandir = lookout.os.scandir

    def counted(path: str) -> object:
        listed.append(path)
        return scandir(path)

    modules = tmp_path / "node_modules"
    for index in range(SMALL * 2):
        (modules / f"p{index:03}").mkdir(parents=True)
        (modules / f"p{index:03}" / "package.json").write_text("{}")
    (tmp_path / "runs.csv").write_text(CSV_HEAD)
    monkeypatch.setattr(lookout.os, "scandir", counted)
    found = Lookout(str(tmp_path)).found()
    assert found == [str(tmp_path / "runs.csv")]
    assert len(listed) <= 3, ("looked into the packages past the bound", len(listed))


def test_a_later_look_stats_no_file_of_an_installation_folder_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run's look stat'ed every file a virtualenv's first 20,000 entries hold (15 ms
    of CPU a run); a folder there whose key is the same keeps its files as last read.
    Elsewhere every file is stat'ed again, as before (a store rewritten in place)."""
    monkeypatch.setattr(lookout, "RACY_NS", 0)  # every key trusted: made before the look
    package = tmp_path / "node_modules" / "pkg"
    package.mkdir(parents=True)
    (package / "package.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("notes")
    look = Lookout(str(tmp_path))
    look.found()
    stated: list[str] = []
    stat = lookout.os.stat

    def counted(path: str, *args: object, **kwargs: object) -> object:
        stated.append(str(path))
        return stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lookout.os, "stat", counted)
    look.found()
    assert str(tmp_path / "notes.txt") in stated
    assert str(package / "package.json") not in stated
    (package / "results.db").write_bytes(b"")  # the folder changed: looked at again
    with Store(package / "results.db"):
        pass
    assert str(package / "results.db") in look.found()
