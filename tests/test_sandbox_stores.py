"""An older store beside the agent is an answer key, and is covered like the store being
written (round 9's outside attack).

Every run's score in a passhat store names the goal's items (`expected`, `missing`), so
the store of any earlier experiment on the suite holds the answers. Only the store of
the experiment running was covered; a store kept beside the agent under another name
(runs/model-a.db after `--db elsewhere/model-b.db`, the default passhat.db after a --db
elsewhere) was readable by every run. Now every passhat store (a file named *.db,
*.sqlite, *.sqlite3 or *.db3, or passhat*, that is SQLite with passhat's tables) in a
folder in view is covered, with its -wal, -shm and -journal; and so is a report passhat
wrote (`report --json` kept as a file, `report --html`), told by its first bytes
(sandbox.is_report), not by its name. As root and as nobody; `process` is the control.
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


def _run(user: str, folder: Path, suite: Path, db: Path, level: str) -> dict[str, object]:
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    done = passhat_as(user, folder, "run", str(suite), *args, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    for item in [folder, *folder.rglob("*")]:  # the next passhat's user may be another
        item.chmod(0o777 if item.is_dir() else 0o666)
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    return dict(run.output)


def test_an_earlier_experiments_store_beside_the_agent_is_out_of_reach(
    user: str, open_tmp: Path
) -> None:
    work = open_tmp / "work"
    (work / "runs").mkdir(parents=True)
    shutil.copyfile(TESTS / "attack_agent.py", work / "attack.py")
    old = work / "runs" / "model-a.db"
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": {"ATTACK_DB": str(old)},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    _run(user, open_tmp, suite, old, "process")  # the earlier experiment, into model-a.db
    with Store(old, create=False) as store:  # what it holds: the goal's items
        (earlier,) = store.runs(store.experiment("latest").id)
    assert "AC2:unverifiable" in json.dumps(earlier.score, default=str)

    seen = _run(user, open_tmp, suite, open_tmp / "model-b.db", "namespace")
    assert seen["store"] == {"read": False, "write": False}, "the earlier store was open"
    control = _run(user, open_tmp, suite, open_tmp / "model-c.db", "process")
    assert control["store"] == {"read": True, "write": True}


def test_an_earlier_experiments_report_beside_the_agent_is_out_of_reach(
    user: str, open_tmp: Path
) -> None:
    work = open_tmp / "work"
    (work / "out").mkdir(parents=True)
    shutil.copyfile(TESTS / "attack_agent.py", work / "attack.py")
    report, page = work / "report.json", work / "out" / "report.html"
    own = [work / "data.json", work / "notes.html"]  # the agent's own: not passhat's
    own[0].write_text('{"experiment": "mine", "id": "x"}')
    own[1].write_text('<html><head><meta name="generator" content="hugo"></head></html>')
    names = [report, page, *own]
    writer = SuiteWriter(open_tmp / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": {"ATTACK_FILES": ",".join(str(n) for n in names)},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    suite = writer.write()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    old = open_tmp / "model-a.db"
    _run(user, open_tmp, suite, old, "process")
    done = passhat_as(user, open_tmp, "report", "latest", "--db", str(old), "--json")
    report.write_text(done.stdout)
    assert "AC2:unverifiable" in done.stdout  # the goal's item, as the store holds it
    html = passhat_as(user, open_tmp, "report", "latest", "--db", str(old), "--html", str(page))
    assert html.returncode == 0, html.stderr
    assert "AC2:unverifiable" in page.read_text()
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    seen = _run(user, open_tmp, suite, open_tmp / "model-b.db", "namespace")
    assert seen["secrets"] == [str(n) for n in own], "an earlier experiment's report was readable"
    control = _run(user, open_tmp, suite, open_tmp / "model-c.db", "process")
    assert control["secrets"] == [str(n) for n in names]


def test_a_fifo_or_a_device_under_a_store_or_report_name_does_not_hold_the_look(
    tmp_path: Path,
) -> None:
    """The look for earlier stores and reports opens only regular files: a FIFO named
    passhat.db (its open and read would block passhat before any run starts) and a
    link to /dev/zero named report.json are passed over; a real store is still found."""
    import os
    import threading

    from passhat.agents.lookout import secret_files

    os.mkfifo(tmp_path / "passhat.db")
    os.mkfifo(tmp_path / "report.json")
    (tmp_path / "zero.html").symlink_to("/dev/zero")
    with Store(tmp_path / "old.db"):
        pass
    found: list[list[str]] = []
    look = threading.Thread(target=lambda: found.append(secret_files(str(tmp_path))), daemon=True)
    look.start()
    look.join(timeout=30)  # not a speed goal: without the fix the look never ends
    assert not look.is_alive(), "the look blocked on a FIFO"
    names = {os.path.basename(p) for p in found[0]}
    assert "old.db" in names
    assert not {"passhat.db", "report.json", "zero.html"} & names
