"""One run's output cannot take the experiment down (round 9's outside attack).

A command agent's stdout is parsed as JSON (json.loads takes nesting up to about 1,000
levels). The store cuts a structure deeper than 200 levels as its repr, and repr of a list
nested 950 levels deep recursed past Python's limit: the writer raised RecursionError,
`passhat run` ended with a traceback, and every run of the experiment, the others
included, had no row (missing). An agent could so choose to turn its runs missing
(bounded, not counted as failed) instead of failed, and `resume` met it again. Now an
output nested deeper than command.OUTPUT_DEPTH makes its run errored (agent_output) with
one line, and the other runs are counted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from passhat.agents.command import OUTPUT_DEPTH, parse_output
from passhat.agents.streams import AgentProcessError
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, attack_suite, passhat_as

pytestmark = ATTACK_MARKS


def test_an_output_nested_past_the_stores_depth_errors_its_run_and_loses_no_other(
    open_tmp: Path,
) -> None:
    user = "root" if os.geteuid() == 0 else "unprivileged"
    work = open_tmp / "work"
    suite = attack_suite(
        work, {"ATTACK_DEEP": "950"}
    )  # json.loads takes it; the store's repr did not
    for item in [open_tmp, *open_tmp.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)
    db = work / "p.db"
    args = ["-k", "3", "--concurrency", "1", "--timeout", "60", "--isolation", "namespace"]
    done = passhat_as(
        user, open_tmp, "run", str(suite), *args, "--db", str(db), "-q", "--no-report"
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    with Store(db, create=False) as store:
        runs = {r.run_index: r for r in store.runs(store.experiment("latest").id)}
    assert sorted(runs) == [1, 2, 3], "a run of the experiment was lost"
    assert runs[1].status == "errored" and runs[1].error_type == "agent_output"
    assert f"nested deeper than {OUTPUT_DEPTH} levels" in (runs[1].error_message or "")
    assert [runs[2].status, runs[3].status] == ["failed", "failed"]  # counted: {} answers nothing


def test_an_output_is_taken_up_to_its_depth_and_refused_past_it() -> None:
    at = "[" * OUTPUT_DEPTH + "]" * OUTPUT_DEPTH
    assert parse_output(at.encode(), "json") is not None
    assert parse_output(b'{"a": [1, {"b": []}], "c": 2}', "json") == {"a": [1, {"b": []}], "c": 2}
    with pytest.raises(AgentProcessError, match="nested deeper than"):
        parse_output(f'{{"a": {at}}}'.encode(), "json")
    with pytest.raises(AgentProcessError, match="not JSON"):  # past json.loads's own limit
        parse_output(b"[" * 100_000 + b"]" * 100_000, "json")


@pytest.mark.parametrize("depth", [950, 5_000, 200_000])
def test_the_stores_cut_of_a_deep_value_does_not_recurse(depth: int) -> None:
    # the cut was repr(value), which recursed through what was left: RecursionError at 950
    from passhat.store.columns import _encode

    deep: list[object] = []
    for _ in range(depth):
        deep = [deep]
    kept = json.loads(_encode({"deep": deep}))["deep"]
    levels = 0
    while isinstance(kept, list):
        (kept,) = kept
        levels += 1
    assert (levels, kept) == (200, "<list nested deeper than 200 levels, cut>")
