"""A run's own text holds passhat's event loop, and its grading, past --timeout (round
12's outside attack).

The built-in scorers are run inline on the event loop every run shares, with no timer,
"they cannot be interrupted anyway: they never wait" (execution._grade). `matches`
runs the suite's pattern (re.search) over text the agent wrote, and Python's `re`
backtracks: `coupon.*expir`, an ordinary pattern, over "coupon " written 30,000 times
(210 KB) took 1.7 s (chrt -f 20), and the time grows with the square of the text (a run
may write 4 MiB: about 11 minutes). Run 1 writes it 200,000 times through update_ticket
(about 77 s to grade, unloaded); at --timeout 20 its record says it lasted far past it
(166 s for 100,000 times on the loaded machine), graded all that time with passhat's
event loop (every other run's model proxy, tools and timers) held; the same text under
the pattern `expir` (the control) is graded at once. As root and as nobody.

Not fixed: a thread does not help (`re` keeps the GIL), and the choices (a bound on
the text `matches` reads, a pattern engine without backtracking, grading in a process
of its own) are the lead's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS

TIMEOUT_S = 20
SLACK_S = 5
"""What a run may last past --timeout as its record says (run_once's duration_s): the
cancel's clean-up (execution.CLEANUP_S) and grading's floor (GRADE_FLOOR_S), with room."""


def _suite(folder: Path, pattern: str) -> Path:
    work = folder / "work"
    work.mkdir()
    shutil.copyfile(TESTS / "attack50_agent.py", work / "attack.py")
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["scorers"] = [  # type: ignore[index]
        {"matches": "ticket.goal", "pattern": pattern}
    ]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": {"ATTACK_WRITE": "200000"},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(
            "coupon.*expir",
            marks=pytest.mark.xfail(
                strict=True,
                # past passhat_as's own 180 s on a loaded machine
                raises=(AssertionError, subprocess.TimeoutExpired),
                reason="the built-in scorers run inline on the event loop with no deadline, "
                "and `matches` backtracks over the agent's text (execution._grade)",
            ),
        ),
        "expir",  # the control: the same text, a pattern without backtracking
    ],
)
def test_a_runs_text_does_not_hold_its_grading_past_the_timeout(
    user: str, open_tmp: Path, pattern: str
) -> None:
    suite = _suite(open_tmp, pattern)
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", str(TIMEOUT_S), "--db", str(db), "-q", "--no-report"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output == {"written": True}, run.error_message
    took = run.duration_s
    assert took < TIMEOUT_S + SLACK_S, f"the run lasted {took:.0f} s at --timeout {TIMEOUT_S}"
