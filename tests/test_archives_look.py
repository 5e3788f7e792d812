"""One whole look into the archives in view is bounded (archives.whole_look: LOOK_BYTES,
LOOK_S across every archive it reads), not only each archive: past the bound the
experiment is refused with one line naming the folder, never started with archives not
looked into."""

from __future__ import annotations

import gzip
import io
import json
import sys
import tarfile
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.agents import archives, lookout
from passhat.agents.archives import TooMuchToLook, whole_look
from passhat.agents.lookout import Lookout, Looks
from passhat.store import Store

MIB = 1 << 20


def _large_archives(folder: Path, count: int) -> list[Path]:
    """`count` .tar.gz archives, each a 1 MiB member of nothing of passhat's followed by a
    small text: the look reads through each (about 1 MiB) and finds nothing."""
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for n in range(count):
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            for name, data in (("data.bin", bytes(MIB)), ("notes.txt", b"notes\n")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        path = folder / f"data{n:03}.tar.gz"
        path.write_bytes(gzip.compress(out.getvalue(), 1))
        made.append(path)
    return made


@pytest.mark.parametrize("bound", ["bytes", "seconds"])
def test_a_look_past_the_whole_bound_is_refused_naming_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str
) -> None:
    """Ten archives of about 1 MiB read each, under a whole look of 3 MiB (or of no time
    at all): each archive alone is within its own bound, together they are not. Before,
    nothing bounded them together (300 such archives of 64 MiB took ~36 s)."""
    view = tmp_path / "view"
    _large_archives(view, 10)
    if bound == "bytes":
        monkeypatch.setattr(archives, "LOOK_BYTES", 3 * MIB)
    else:
        monkeypatch.setattr(archives, "LOOK_S", 0.0)
    with whole_look(), pytest.raises(TooMuchToLook) as refused:
        Lookout(str(view)).found()
    message = str(refused.value)
    assert message.startswith(f"{view}: the archives in the agent's view")
    assert "move archives out of the folders the agent sees" in message
    assert "\n" not in message
    # each archive's own bound alone (a look outside whole_look) reads them all
    assert Lookout(str(view)).found() == []


def test_within_the_whole_bound_the_archives_are_looked_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same archives and an archive holding a store, under a whole look
    that holds them all: the store's archive is found, nothing is refused; a second look
    (nothing changed: nothing read again) spends nothing."""
    view = tmp_path / "view"
    _large_archives(view, 10)
    made = tmp_path / "made.db"
    with Store(made):
        pass
    (view / "old.db.gz").write_bytes(gzip.compress(made.read_bytes()))
    monkeypatch.setattr(archives, "LOOK_BYTES", 40 * MIB)
    monkeypatch.setattr(lookout, "RACY_NS", 0)  # the files just made: trusted unchanged
    looks = Looks()
    with whole_look():
        assert looks.found(str(view)) == [str(view / "old.db.gz")]
    monkeypatch.setattr(archives, "LOOK_BYTES", 0)
    with whole_look():
        assert looks.found(str(view)) == [str(view / "old.db.gz")]


def test_an_experiment_whose_agent_sees_too_many_archives_does_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command agent whose folder holds the archives, at --isolation namespace: the
    look before the first run crosses the whole bound, and `passhat run` ends with one
    line naming the folder; no run is recorded."""
    agent = tmp_path / "agent"
    _large_archives(agent, 10)
    (agent / "agent.py").write_text("print('{}')\n", encoding="utf-8")
    writer = SuiteWriter(tmp_path / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [sys.executable, str(agent / "agent.py")]
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    monkeypatch.setattr(archives, "LOOK_BYTES", 3 * MIB)
    db = tmp_path / "p.db"
    r = run_cli(
        capsys, "run", str(suite), "-k", "1", "--isolation", "namespace", "--db", str(db),
        "-q", "--no-report",
    )  # fmt: skip
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert f"{agent.resolve()}: the archives in the agent's view" in r.err
    if db.exists():
        with Store(db, create=False) as store:
            assert all(not store.runs(e.id) for e in store.experiments())
