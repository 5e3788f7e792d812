"""Archives a run leaves in its `write:` folder make the next run's look outlast its
--timeout (round 12's outside attack).

The look for answers before each run opens every archive in view, each bounded (10,000
members, 64 MiB, 1 s: agents/archives.py), but nothing bounds them together, and the look
is made inside the next run's deadline (CommandAgent.__call__, under run_once's
--timeout). Run 1 leaves 80 hard links of one gzipped tar of 10,000 members (163 KiB)
in its `write:` folder: each costs the look about 0.45 s (chrt -f 20, side by side: 10
of them 4.5 s), so run 2 is errored `timeout` before its agent starts, "the run did not
finish within 20 s"; as many plain files of the same size (the control) cost nothing.
A run so chooses which later runs of the experiment get no verdict. As root and as
nobody.

Not fixed: a bound on the whole look must say what is left unlooked at (covered, which
hides a run's own files, or shown, which shows an archive of a store), and whether the
look counts against the run's deadline; the lead chooses.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS

COUNT = 80
TIMEOUT_S = 20


def _suite(folder: Path, scratch: Path, kind: str) -> Path:
    """A suite in `folder`/suite whose agent (tests/attack50_agent.py, in `folder`/work)
    leaves COUNT files of `kind` in `scratch` in its run 1."""
    work = folder / "work"
    work.mkdir()
    shutil.copyfile(TESTS / "attack50_agent.py", work / "attack.py")
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": {"ATTACK_PACK": f"{scratch},{COUNT},{kind}"},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(
            "tgz",
            marks=pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason="each archive's look is bounded, not the look's whole, and the look "
                "is made inside the next run's deadline (agents/lookout.py, archives.py)",
            ),
        ),
        "plain",  # the control: as many files, no archive
    ],
)
def test_archives_a_run_leaves_do_not_time_the_next_run_out(
    user: str, open_tmp: Path, kind: str
) -> None:
    scratch = open_tmp / "scratch"
    scratch.mkdir()
    suite = _suite(open_tmp, scratch, kind)
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "2", "--concurrency", "1", "--timeout", str(TIMEOUT_S), "--db", str(db)]
    args += ["--agent-write", str(scratch), "-q", "--no-report"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        runs = {run.run_index: run for run in store.runs(store.experiment("latest").id)}
    assert runs[1].output == {"packed": COUNT}, runs[1].error_message
    assert runs[2].status != "errored", f"run 2 errored: {runs[2].error_message}"
