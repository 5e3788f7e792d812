"""A run's agent cannot read an earlier experiment's answers through a running `passhat
view` on loopback (round 11's outside attack).

`passhat view` bound 127.0.0.1 and, there, served every page to whoever connected: no
token. The store it reads is 0600 and the user's own, but any local user, and any command
agent at `--isolation process` (it reaches the host's loopback), could fetch the view's
pages instead: every run and every goal item an earlier experiment graded, an answer key
for the next. Now a token guards every request on loopback too, as beyond it: the printed
URL carries it and a request without it is refused (403). The agent here runs as the
test's user or as nobody (`user`), the view as the test's user over a store in a folder
of its own; the agent given the printed URL finds the items (the control: the page is
the one that holds them). What a same-user agent at `process` can read on disk (the
store itself, the view's beacon) `process` never hid: docs/command-agents.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from agent_python import PYTHON
from conftest import SuiteWriter
from sandbox_helpers import ATTACK_MARKS, one_run
from view_stores import ITEMS, served, trend_store

pytestmark = ATTACK_MARKS

AGENT = """
import http.client, json, os, urllib.parse
url = urllib.parse.urlsplit(os.environ["ATTACK_VIEW"])
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
connection.request("GET", url.path + ("?" + url.query if url.query else ""))
answer = connection.getresponse()
body = answer.read().decode("utf-8", "replace")
items = [i for i in os.environ["ATTACK_ITEMS"].split(",") if i in body]
print(json.dumps({"status": answer.status, "items": items, "head": body[:200]}))
"""
"""Fetches ATTACK_VIEW straight over TCP (no proxy) and says which of ATTACK_ITEMS the
page holds."""


@pytest.mark.parametrize("given", ["bare", "printed"])
def test_an_agent_at_process_level_reads_no_answers_from_a_running_view(
    user: str, open_tmp: Path, tmp_path: Path, given: str
) -> None:
    (tmp_path / "view").mkdir(mode=0o700)
    db = trend_store(tmp_path / "view" / "passhat.db")  # the earlier experiments, 0700 away
    work = open_tmp / "work"
    work.mkdir()
    (work / "agent.py").write_text(AGENT)
    with served(db) as printed:
        parts = urlsplit(printed)
        page = f"http://{parts.netloc}/e/p1/report"
        writer = SuiteWriter(open_tmp / "suite")
        writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
        writer.suite["defaults"]["agent"] = {  # type: ignore[index]
            "command": [str(PYTHON), str(work / "agent.py")],
            "env": {
                "ATTACK_VIEW": page + (f"?{parts.query}" if given == "printed" else ""),
                "ATTACK_ITEMS": ",".join(ITEMS),
            },
        }
        writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
        run = one_run(user, open_tmp, writer.write(), open_tmp / "p.db", "process")
    assert run.output is not None, run.error_message
    if given == "printed":  # the control: the page holds the goal's items
        assert run.output["status"] == 200 and run.output["items"] == ITEMS, run.output
    else:
        assert run.output["status"] == 403, f"the view answered an agent: {run.output}"
        assert run.output["items"] == [] and "open the URL" in run.output["head"]
    assert os.stat(db).st_mode & 0o077 == 0  # the store was never the agent's to read
