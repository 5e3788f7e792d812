"""A run cannot make passhat hold memory without bound through its model requests
(round 10's outside attack; fixed: the run's budget counts what the model proxy keeps).

The tool budget (tests/test_sandbox_flood.py) bounds what a run's MCP calls make passhat
keep, but the model proxy keeps, in the run's transcript, every message a request brings
after its last assistant answer, and takes requests of up to 32 MiB. With a cassette that
answers (a replayed experiment, a regrade, CI), ten requests of 30 MB took passhat to
1.37 GB of peak memory and wrote a 300 MB store for one run; max_turns bounds the count,
not the size, and --concurrency multiplies it. Now the messages the proxy keeps count
against the run's budget (serve/endpoints.MESSAGE_BYTES, 32 MiB in all, as the tools'
answers): the request that crosses it is answered 429 and neither sent to the model nor
kept, the agent is stopped, and the run is errored `agent_flood`. As root and as nobody;
the level does not matter (the memory is passhat's), so the test runs `namespace`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agent_python import PYTHON, TESTS
from conftest import SuiteWriter
from passhat.records import RunRecord
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS

BUDGET = 32 << 20
"""The run's budget of kept model-request messages (serve/endpoints.MESSAGE_BYTES)."""


def talking_suite(work: Path, talk: str, turns: int) -> Path:
    """A suite whose agent (tests/attack48_agent.py) sends the model proxy the requests
    ATTACK_TALK says, and a cassette answering `turns` of them: the suite's folder."""
    work.mkdir()
    shutil.copyfile(TESTS / "attack48_agent.py", work / "agent.py")
    writer = SuiteWriter(work / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "agent.py")],
        "env": {"ATTACK_TALK": talk},
    }
    lines = [{"cassette": 1, "model": "t", "note": "t"}]
    message = {"role": "assistant", "content": "ok"}
    usage = {"input_tokens": 0, "output_tokens": 0}
    for turn in range(turns):
        lines.append(
            {"case": "tiny-001", "run": 1, "turn": turn, "message": message, "usage": usage}
        )
    writer.files["tape.jsonl"] = "".join(json.dumps(line) + "\n" for line in lines)
    return writer.write()


def _run(user: str, folder: Path, suite: Path) -> tuple[RunRecord, int]:
    """The one run of `passhat run SUITE` as `user`, and the characters of the messages its
    transcript kept."""
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = folder / "p.db"
    args = ["-k", "1", "--timeout", "120", "--isolation", "namespace", "--db", str(db), "-q"]
    done = passhat_as(user, folder, "run", str(suite), *args, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return run, sum(len(m.get("content") or "") for m in run.transcript)


def test_large_model_requests_spend_the_runs_budget(user: str, open_tmp: Path) -> None:
    # three requests bringing 15 million characters each: the third crosses 32 MiB
    suite = talking_suite(open_tmp / "work", "3,15000000", turns=3)
    run, kept = _run(user, open_tmp, suite)
    assert (run.status, run.error_type) == ("errored", "agent_flood"), run.error_message
    assert "model-request messages past 32 MiB" in (run.error_message or "")
    assert kept <= BUDGET, f"passhat kept {kept:,} characters of messages"


def test_an_ordinary_conversation_is_kept_whole(user: str, open_tmp: Path) -> None:
    suite = talking_suite(open_tmp / "work", "3,1000", turns=3)
    run, kept = _run(user, open_tmp, suite)
    assert run.output == {"talked": [200, 200, 200], "read": {}}
    assert run.status == "failed" and kept > 3000


def test_the_message_budget_refuses_the_request_that_crosses_it_and_every_one_after() -> None:
    from passhat.serve.endpoints import MESSAGE_BYTES, RESULT_BYTES, ToolBudget

    assert MESSAGE_BYTES == BUDGET
    budget = ToolBudget()
    assert budget.admit_messages(MESSAGE_BYTES - 10) and budget.admit_messages(10)
    assert budget.spent is None and not budget.stop.is_set()
    assert not budget.admit_messages(1)
    assert budget.stop.is_set() and "brought 1 bytes to" in (budget.spent or "")
    assert not budget.admit_messages(0) and not budget.admit(0), "a spent budget admits nothing"
    tools = ToolBudget()
    tools.answered(RESULT_BYTES + 1)  # spent by the tools: the model proxy takes nothing more
    assert not tools.admit_messages(0)
