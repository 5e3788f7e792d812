"""The declarative `tools` environment: a world written in suite.yaml, no Python."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import ROOT, SEED, run_cli
from passhat.analysis import item_stability
from passhat.env import make_environment
from passhat.errors import SuiteError
from passhat.plain import MISSING
from passhat.scoring import Present
from passhat.store import Store
from passhat.suite import Suite, load_suite

BOARD: dict[str, Any] = {
    "name": "desk",
    "environment": "tools",
    "state": {"tickets": {}},
    "tools": [
        {
            "name": "open_ticket",
            "description": "Open a support ticket.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["id", "summary"],
                "additionalProperties": False,
            },
            "writes": "tickets.{id}",
        },
        {
            "name": "close_ticket",
            "description": "Close a ticket.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "status": {"const": "closed"}},
                "required": ["id", "status"],
            },
            "writes": "tickets.{id}",
        },
        {
            "name": "read_ticket",
            "description": "Read a ticket.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
            },
            "reads": "tickets.{id}",
        },
        {"name": "note", "description": "Leave a note.", "appends": "notes"},
        {
            "name": "faq",
            "description": "Search the FAQ.",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
            "fixtures": "terms",
        },
    ],
    "defaults": {"model": "replay:none.jsonl", "scorers": [{"exact_set": "notes"}]},
}
CASE: dict[str, Any] = {
    "id": "desk-1",
    "input": {"customer": "Ada"},
    "fixtures": {"faq": [{"args": {"q": "refund window"}, "response": "30 days."}]},
    "goal": {"notes": []},
}


def write(root: Path, suite: dict[str, Any], case: dict[str, Any] = CASE) -> Path:
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    (root / "cases" / "case.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")
    return root


@pytest.fixture
def desk(tmp_path: Path) -> Suite:
    return load_suite(write(tmp_path / "desk", BOARD))


async def test_writes_reads_appends_and_look_ups_act_on_the_state(desk: Suite) -> None:
    env = make_environment(desk, desk.cases[0])
    assert [t.name for t in env.tools] == [
        "open_ticket",
        "close_ticket",
        "read_ticket",
        "note",
        "faq",
    ]
    assert (await env.call("open_ticket", {"id": "T-7", "summary": "late"})).content == {
        "written": "tickets.T-7"
    }
    await env.call("close_ticket", {"id": "T-7", "status": "closed"})
    read = await env.call("read_ticket", {"id": "T-7"})
    assert read.content == {"id": "T-7", "summary": "late", "status": "closed"}
    assert (await env.call("note", {})).content == {"appended": "notes", "index": 0}
    assert (await env.call("faq", {"q": "What is the refund window?"})).content == "30 days."
    assert env.final_state() == {
        "customer": "Ada",
        "tickets": {"T-7": {"id": "T-7", "summary": "late", "status": "closed"}},
        "notes": [{}],
    }


async def test_mistakes_are_outcomes_that_change_nothing(desk: Suite) -> None:
    env = make_environment(desk, desk.cases[0])
    before = env.final_state()
    missing = await env.call("read_ticket", {"id": "T-9"})
    assert missing.is_error and missing.text() == "read_ticket: nothing at 'tickets.T-9'"
    bad = await env.call("close_ticket", {"id": "T-7", "status": "open"})
    assert bad.text() == "invalid arguments for close_ticket: status: 'open' is not one of closed"
    miss = await env.call("faq", {"q": "shipping"})
    assert miss.is_error and env.calls[-1].fixture_miss
    assert env.final_state() == before


async def test_runs_never_share_the_declared_state(desk: Suite) -> None:
    first = make_environment(desk, desk.cases[0])
    await first.call("open_ticket", {"id": "T-1", "summary": "x"})
    second = make_environment(desk, desk.cases[0])
    assert second.final_state()["tickets"] == {}


def _broken(path: str, value: Any) -> dict[str, Any]:
    suite = copy.deepcopy(BOARD)
    node: Any = suite
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is None:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return suite


@pytest.mark.parametrize(
    ("suite", "expected"),
    [
        pytest.param(
            _broken("tools.3.writes", "x"),
            "suite.yaml: tools[3]: names writes and appends of reads, writes, appends, "
            "fixtures; give exactly one",
            id="two-actions",
        ),
        pytest.param(
            _broken("tools.0.writes", "tickets.{ticket_id}"),
            "suite.yaml: tools[0].writes: {ticket_id} is not a required argument of "
            "open_ticket; name one of its required parameters (id, summary)",
            id="template-names-no-argument",
        ),
        pytest.param(
            _broken("tools.1.name", "open_ticket"),
            "suite.yaml: tools[1].name: 'open_ticket' is already tools[0]; give each tool "
            "its own name",
            id="same-name-twice",
        ),
        pytest.param(
            _broken("tools.0.parameters.properties.id.type", "text"),
            "suite.yaml: tools[0].parameters: tool open_ticket: parameters are not a valid JSON "
            "Schema: properties/id/type: 'text' is not valid",
            id="schema-not-json-schema",
        ),
        pytest.param(
            _broken("tools.4.fixtures", "fuzzy"),
            "suite.yaml: tools[4].fixtures: 'fuzzy' is not one of exact, terms, True",
            id="unknown-fixture-mode",
        ),
        pytest.param(
            _broken("tools.0.desc", "typo"),
            "suite.yaml: tools[0].desc: unknown key 'desc'",
            id="unknown-key",
        ),
        pytest.param(
            _broken("tools", None),
            "suite.yaml: tools: missing; the tools environment needs its tools",
            id="no-tools",
        ),
        pytest.param(
            {**_broken("environment", "ticket"), "labels": ["x"]},
            "suite.yaml: tools: only the tools environment reads it",
            id="tools-for-another-environment",
        ),
    ],
)
def test_a_broken_declaration_is_refused_naming_the_field(
    tmp_path: Path, suite: dict[str, Any], expected: str
) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(write(tmp_path / "desk", suite))
    assert any(expected in p for p in caught.value.problems), caught.value.problems


def test_fixtures_are_checked_against_the_look_up_parameters(tmp_path: Path) -> None:
    case = {**CASE, "fixtures": {"faq": [{"args": {"query": "refund"}, "response": "x"}]}}
    with pytest.raises(SuiteError) as caught:
        load_suite(write(tmp_path / "desk", BOARD, case))
    assert any("fixtures.faq[0].args.q: missing; add it" in p for p in caught.value.problems)


# ------------------------------------------- the seed's ticket world, in YAML alone


def _run(capsys: pytest.CaptureFixture[str], suite: Path, db: Path) -> list[Any]:
    r = run_cli(capsys, "run", str(suite), "--case", SEED, "--db", str(db), "-q")
    assert r.code == 0, r.err
    with Store(db) as store:
        return store.runs(store.experiment("latest").id)


def test_the_yaml_ticket_world_gives_the_built_in_verdicts_on_the_seed_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builtin = _run(capsys, ROOT / "examples" / "clarify", tmp_path / "builtin.db")
    declared = _run(capsys, ROOT / "examples" / "clarify-tools", tmp_path / "declared.db")
    assert load_suite(ROOT / "examples" / "clarify-tools").environment == "tools"
    # the seed: three runs, three different annotation sets, all failed
    assert [r.status for r in builtin] == ["failed"] * 3
    assert [(r.run_index, r.status, r.score) for r in declared] == [
        (r.run_index, r.status, r.score) for r in builtin
    ]
    assert [r.final_state for r in declared] == [r.final_state for r in builtin]
    assert item_stability(declared) == item_stability(builtin)
    stability = {s.item: s.verdict for s in item_stability(builtin) if s.expected}
    assert stability["AC3:inconsistent_with_description"] == "always missed"
    assert stability["AC7:unverifiable"] == "sometimes missed"


# ------------------------------------------------ docs/environments.md says what tools give (#29)

DOC_SECTION = "### What each tool gives the agent"
_DOC_ROW = re.compile(r"^\| `(\w+)` \| `(\{.*\})` \| (error: )?`(.*)` \|$", re.M)


def _doc_section() -> str:
    text = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    start = text.index(DOC_SECTION)
    return text[start : text.index("\n## ", start)]


async def test_the_documented_returns_are_what_the_tools_return(tmp_path: Path) -> None:
    """Was: what `appends` returns ({"appended": ..., "index": ...}) was written
    nowhere; an agent written for a class world errored on the YAML one."""
    section = _doc_section()
    world, case = [
        yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)
    ]
    suite = {"name": "rooms", **world, "defaults": {"model": "replay:none.jsonl"}}
    suite["defaults"]["scorers"] = [{"present": ["bookings"]}]
    loaded = load_suite(write(tmp_path / "rooms", suite, case))
    env = make_environment(loaded, loaded.cases[0])
    rows = _DOC_ROW.findall(section)
    assert len(rows) == 10
    assert {"written", "appended", "index"} <= set(re.findall(r'"(\w+)":', section))
    for tool, arguments, error, shown in rows:
        outcome = await env.call(tool, json.loads(arguments))
        assert outcome.is_error == bool(error), (tool, arguments, outcome)
        got = outcome.text() if error else outcome.content
        assert got == (shown if error else json.loads(shown)), (tool, arguments)
    final = re.search(r"leave the final state\n`(.*)`", section)
    assert final is not None and env.final_state() == json.loads(final.group(1))


@pytest.mark.parametrize(
    ("value", "present"),
    [
        pytest.param(MISSING, False, id="missing"),
        pytest.param(None, False, id="null"),
        pytest.param("", False, id="empty-text"),
        pytest.param(" \u3000\n", False, id="blank-text-full-width-space"),
        pytest.param([], False, id="empty-list"),
        pytest.param({}, False, id="empty-object"),
        pytest.param(0, True, id="zero"),
        pytest.param(False, True, id="false"),
        pytest.param(" x ", True, id="text"),
        pytest.param([""], True, id="list-of-empty-text"),
        pytest.param([{}], True, id="list-of-empty-object"),
    ],
)
def test_present_means_what_the_docs_say(value: Any, present: bool) -> None:
    """docs/environments.md's "`present`, precisely", value by value."""
    doc = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    said = " ".join(doc.split("**`present`, precisely.**")[1].split("\n\n")[0].split())
    assert "`[]` or an empty object `{}`" in said and "`0`, `false`" in said
    state = {} if value is MISSING else {"bookings": value}
    assert Present(("bookings",))(state, {})["passed"] is present
