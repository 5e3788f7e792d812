"""A run's own text held passhat's event loop, and its grading, past --timeout (round
12's outside attack), and what holds it now.

The built-in scorers ran inline on the event loop every run shares, with no timer.
`matches` ran the suite's pattern (re.search) over text the agent wrote, and Python's
`re` backtracks: `coupon.*expir`, an ordinary pattern, over "coupon " written 30,000
times (210 KB) took 1.7 s (chrt -f 20), growing with the square of the text (a run may
write 4 MiB: about 11 minutes), every other run's model proxy, tools and timers held.

Now (scoring.MATCH_TIMEOUT_S) the pattern runs on the `regex` engine, which stops at a
time limit and releases the GIL, in a thread (execution._grade); a search out of time
fails the run with a `problem`: the agent's text caused it, so it stays counted.
The units below prove each part in seconds; one whole run, as root and as nobody,
proves the record.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat import execution, scoring, searching
from passhat.scoring import Matches, Score
from passhat.store import Store
from passhat.suite import Suite, load_suite
from sandbox_helpers import ATTACK_MARKS, lowered, passhat_as
from test_scorers_more import RUBRIC, _judge_line, write_suite

TIMEOUT_S = 20
SLACK_S = 5
"""What a run may last past --timeout as its record says (run_once's duration_s): the
cancel's clean-up (_leftovers.CLEANUP_S) and grading's floor (GRADE_FLOOR_S), with room."""

TEXT = "coupon " * 60_000
"""420 KB: `re` takes about 7 s over it with `coupon.*expir` (1.7 s at 30,000, squared)."""


def test_a_search_over_the_agents_text_stops_at_its_bound_and_fails_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scoring, "MATCH_TIMEOUT_S", 0.2, raising=False)
    searching._rare()  # asked once a process (about 1 s under load): not the search's time
    started = time.perf_counter()
    detail = Matches("ticket.goal", "coupon.*expir")({"ticket": {"goal": TEXT}}, {})
    took = time.perf_counter() - started
    assert detail["passed"] is False
    assert "ran past 0.2 s over the 420,000 characters" in detail.get("problem", ""), detail
    assert took < 3, f"the search took {took:.1f} s"


@pytest.mark.parametrize(
    ("text", "passed"),
    [
        pytest.param(TEXT + "expir", True, id="found"),
        pytest.param(TEXT, False, id="absent-linear"),
    ],
)
def test_a_search_within_its_bound_decides_as_re_does(text: str, passed: bool) -> None:
    # the control: the same text under patterns that do not backtrack over it
    for pattern in ("expir", "coupon +expir$"):
        detail = Matches("ticket.goal", pattern)({"ticket": {"goal": text}}, {})
        assert detail["passed"] is passed and "problem" not in detail, (pattern, detail)


def _grade_beside_a_ticker(suite: Suite, state: dict[str, Any]) -> tuple[Score | None, Any, int]:
    (case,) = suite.cases
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def grade() -> tuple[Score | None, Any, int]:
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0)
        score, error = await execution._grade(suite, case, state, 20, 20, run_index=1, seed=0)
        ticker.cancel()
        return score, error, ticks

    return asyncio.run(grade())


SEARCH_S = 0.3
"""The search's bound in the tests below (the last one's passhat: sandbox_helpers.lowered):
a search held the whole time (by TEXT, 7 s of `re`) burns it in CPU, so it is short; a
loop held for it ticks never, a free one (every 10 ms) about 30 times."""


def test_grading_a_search_leaves_the_event_loop_free(
    writer: SuiteWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "MATCH_TIMEOUT_S", SEARCH_S, raising=False)
    writer.suite["defaults"]["scorers"] = [  # type: ignore[index]
        {"matches": "ticket.goal", "pattern": "coupon.*expir"}
    ]
    suite = load_suite(writer.write())
    score, error, ticks = _grade_beside_a_ticker(suite, {"ticket": {"goal": TEXT}})
    assert error is None and score is not None and not score.passed
    assert "ran past" in score.details[0].get("problem", ""), score.details
    # a loop held for the whole search ticks never; a free one about 30 times
    assert ticks >= 5, f"the event loop ticked {ticks} times in {SEARCH_S} s of grading"


def test_beside_a_judge_a_search_leaves_the_event_loop_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a judge grades on the loop (score_run_async): the search beside it goes to a thread
    monkeypatch.setattr(scoring, "MATCH_TIMEOUT_S", SEARCH_S, raising=False)
    scorers = [
        {"matches": "answer.text", "pattern": "coupon.*expir"},
        {"judge": RUBRIC, "model": "replay:judge.jsonl", "paths": ["answer.text"]},
    ]
    suite = load_suite(write_suite(tmp_path / "s", scorers, [_judge_line(1, "VERDICT: PASS")]))
    score, error, ticks = _grade_beside_a_ticker(suite, {"answer": {"text": TEXT}})
    assert error is None and score is not None and not score.passed
    assert "ran past" in score.details[0].get("problem", ""), score.details
    assert score.details[1]["verdict"] == "pass"
    assert ticks >= 5, f"the event loop ticked {ticks} times in {SEARCH_S} s of grading"


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
        "env": {"ATTACK_WRITE": "60000"},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


@ATTACK_MARKS[0]
@ATTACK_MARKS[1]
def test_a_runs_text_does_not_hold_its_grading_past_the_timeout(user: str, open_tmp: Path) -> None:
    suite = _suite(open_tmp, "coupon.*expir")
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", str(TIMEOUT_S), "--db", str(db), "-q", "--no-report"]
    # the passhat under attack searches for SEARCH_S, not MATCH_TIMEOUT_S (2 s of CPU
    # spent whole): the record does not hang on the bound's size, which stays below
    # --timeout
    assert SEARCH_S < scoring.MATCH_TIMEOUT_S < TIMEOUT_S
    head = lowered("passhat.scoring", "MATCH_TIMEOUT_S", SEARCH_S)
    try:
        done = passhat_as(user, open_tmp, "run", str(suite), *args, head=head)
    except subprocess.TimeoutExpired:
        pytest.fail("passhat ran past passhat_as's own bound")
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output == {"written": True}, run.error_message
    # counted, and failed by the search's own bound: the agent's text caused it
    assert run.status == "failed", (run.status, run.error_type, run.error_message)
    assert f"ran past {SEARCH_S:g} s" in run.score[0].get("problem", ""), run.score
    took = run.duration_s
    assert took < TIMEOUT_S + SLACK_S, f"the run lasted {took:.0f} s at --timeout {TIMEOUT_S}"
