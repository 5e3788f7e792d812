"""Reading a store runs none of the code its suite names (round 14's attack on what a
store someone else made can make passhat do).

An experiment records where its suite was (`suite_path`); a report reads that suite's
scorers and the listed cases' goals for the item evidence. A case whose file is not
`cases/<id>.yaml` was looked for by a whole `load_suite`, which imports the suite's
environment and its `custom: file.py:fn` scorers: `passhat report --db their.db` (or
`passhat view`, or `report --html`) over a store and a suite folder sent together ran
the sender's Python. Now every case file is read as the single case is (`CaseReader`):
the evidence is the same, nothing imported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cli_helpers import run_cli
from test_report_html import experiment, run
from view_stores import write_store

GOAL = ["AC1:conflict", "AC2:unverifiable"]
CASE = "card-7"
PLANTED = """
import pathlib
pathlib.Path(__file__).with_name("ran").write_text("the suite's code ran")

def fn(final_state, goal, **params):
    return {"passed": True}
"""


def planted_suite(root: Path) -> Path:
    """A suite whose custom scorer's module writes `ran` beside it when imported, and
    whose one case lives in a file not named after its id."""
    (root / "cases").mkdir(parents=True)
    (root / "scorer.py").write_text(PLANTED, encoding="utf-8")
    suite = {
        "name": "planted",
        "environment": "ticket",
        "labels": ["conflict", "unverifiable"],
        "defaults": {
            "agent": "clarifier",
            "model": "replay:none.jsonl",
            "k": 2,
            "scorers": [{"exact_set": "ticket.annotations"}, {"custom": "scorer.py:fn"}],
        },
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    case = {
        "id": CASE,
        "input": {"ticket": {"key": CASE}},
        "goal": {"ticket": {"annotations": GOAL}},
    }
    (root / "cases" / "renamed.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")
    return root


@pytest.mark.parametrize("how", [[], ["--html", "page.html"]], ids=["terminal", "html"])
def test_a_report_reads_the_suite_a_store_names_without_running_its_code(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: list[str],
) -> None:
    suite = planted_suite(tmp_path / "theirs")
    e = experiment([CASE], k=2, suite_path=str(suite))
    db = write_store(
        tmp_path / "their.db", [(e, [run(CASE, 1, GOAL, GOAL), run(CASE, 2, GOAL, GOAL[:1])])]
    )
    monkeypatch.chdir(tmp_path)
    result = run_cli(capsys, "report", e.id, "--db", str(db), *how)
    assert result.code == 0, result.err
    assert not (suite / "ran").exists(), "the report imported the suite's scorer"
    shown = (tmp_path / "page.html").read_text(encoding="utf-8") if how else result.out
    assert f"item evidence · {CASE} (which turn wrote it)" in shown  # its file was read
