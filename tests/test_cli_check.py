"""`passhat check`: a summary for a valid suite, every problem and exit 2 for an invalid one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cli_helpers import run_cli
from passhat.suite import load_suite

if TYPE_CHECKING:
    from conftest import SuiteWriter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_check_summarises_the_clarify_suite(capsys: pytest.CaptureFixture[str]) -> None:
    suite = load_suite(EXAMPLES / "clarify")
    r = run_cli(capsys, "check", str(EXAMPLES / "clarify"))
    assert r.code == 0, r.err
    assert r.err == ""
    out = r.out
    assert "conflict, inconsistent_with_description, unverifiable" in out
    assert suite.hash in out
    for case in suite.cases:
        assert case.id in out and case.hash[:12] in out
    assert "AC3:inconsistent_with_description" in out
    assert "query_background ×2" in out
    assert f"valid: {len(suite.cases)} cases" in out


def test_check_summarises_the_trello_suite(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "check", str(EXAMPLES / "trello"))
    assert r.code == 0, r.err
    assert "custom rules.py:card_follows_guide" in r.out
    assert "get_guide ×1" in r.out
    assert "valid: 3 cases" in r.out


def test_check_lists_every_problem_and_exits_2(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    writer.case["goal"]["ticket"]["annotations"][0]["label"] = "unverfiable"
    writer.cases["other.yaml"] = dict(writer.case, id="other-002", golas={})
    root = writer.write()
    r = run_cli(capsys, "check", str(root))
    assert r.code == 2
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 3, r.err
    assert all(line.startswith(f"error: {root}") for line in lines)
    assert sum("did you mean 'unverifiable'?" in line for line in lines) == 2
    assert sum("unknown key 'golas'" in line for line in lines) == 1
    assert "Traceback" not in r.err


def test_check_of_a_large_suite_lists_30_cases_unless_all(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    """Regression (issue 15): check printed every case, 46,000 lines for 10,000 cases."""
    from passhat.cli.check import CASES_LISTED
    from passhat.report.terminal import ROWS_SHOWN

    assert CASES_LISTED == ROWS_SHOWN  # one bound for every terminal list of cases
    for i in range(1, 36):
        writer.cases[f"c{i:02d}.yaml"] = dict(writer.case, id=f"case-{i:02d}")
    root = writer.write()
    r = run_cli(capsys, "check", str(root))
    assert r.code == 0, r.err
    listed = [line for line in r.out.splitlines() if line.startswith(("case-", "tiny"))]
    assert len(listed) == CASES_LISTED
    assert "case-30 " in r.out and "case-31 " not in r.out  # in file name order
    assert "... and 6 more cases (--all lists every case)" in r.out
    assert "valid: 36 cases" in r.out
    everything = run_cli(capsys, "check", str(root), "--all")
    assert "case-35" in everything.out and "more cases" not in everything.out
    assert "valid: 36 cases" in everything.out


def test_check_of_a_missing_folder_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r = run_cli(capsys, "check", str(tmp_path / "nope"))
    assert r.code == 2
    assert r.err.strip() == (
        f"error: {tmp_path / 'nope'}: no such folder; give a suite folder holding suite.yaml "
        "and cases/"
    )


def test_user_strings_are_printed_as_written_not_as_markup(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    assert isinstance(writer.suite, dict)
    writer.suite["name"] = "[red]tiny[/red]"
    writer.case["tags"] = ["[bold]x[/bold]", "[link=http://e.vil]y"]
    r = run_cli(capsys, "check", str(writer.write()))
    assert r.code == 0, r.err
    assert "[red]tiny[/red]" in r.out
    assert "[bold]x[/bold], [link=http://e.vil]y" in r.out


def test_check_has_help_text(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "check", "--help")
    assert r.code == 0
    assert "Validate a suite" in r.out


# The replay cassette format (docs/cassettes.md): `check` validates the cassettes a suite names.


def _cassette(root: Path, *lines: str) -> None:
    (root / "cassettes").mkdir(parents=True, exist_ok=True)
    (root / "cassettes" / "none.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


ANSWER = (
    '{"case": "tiny-001", "run": 1, "turn": 0, '
    '"message": {"role": "assistant", "content": "done"}, "usage": {"input_tokens": 3}}'
)
CALLS = (
    '{"case": "tiny-001", "run": 1, "turn": 0, "message": {"role": "assistant", '
    '"tool_calls": [{"id": "c1", "name": "TOOL", "arguments": {}}]}}'
)


def test_check_says_what_the_bundled_cassette_covers(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "check", str(EXAMPLES / "clarify"))
    assert r.code == 0, r.err
    assert "cassette seed.jsonl: 6 answers covering 1 of 9 cases (3 runs)" in r.out


@pytest.mark.parametrize("example", ["clarify", "sql", "trello"])
def test_every_bundled_cassette_fits_the_schema(example: str) -> None:
    from passhat.preflight import preflight

    found = preflight(load_suite(EXAMPLES / example))  # its tools and cases included
    assert found.cassettes, "the example replays a cassette"
    assert found.problems == ()
    assert all(c.answers > 0 and not c.missing for c in found.cassettes)


@pytest.mark.parametrize(
    ("lines", "wanted"),
    [
        pytest.param(
            ['{"cassette": 1}', '{"case": "tiny-001", "run": 1, "message": {"role": "assistant"}}'],
            ":2: turn: missing; add it",
            id="answer-without-turn",
        ),
        pytest.param(
            ['{"cassette": 1}', ANSWER, ANSWER],
            ":3: a second answer for case 'tiny-001', run 1, turn 0",
            id="same-key-twice",
        ),
        pytest.param(
            [ANSWER, '{"cassette": 1}'], ":2: a header line after the first", id="late-header"
        ),
        pytest.param(['{"cassette": 1}', "{not json"], ":2: not JSON", id="not-json"),
        pytest.param(
            ['{"cassette": 1}', ANSWER.replace('"turn"', '"tunr"')],
            "unknown key 'tunr'",
            id="misspelt-key",
        ),
        pytest.param(
            ['{"cassette": 1}', ANSWER.replace('"assistant"', '"user"')],
            "message.role",
            id="not-an-assistant",
        ),
        pytest.param(['{"cassette": 2}'], ":1: cassette", id="unknown-version"),
        pytest.param(
            ['{"cassette": 1}', ANSWER.replace('"run": 1', '"run": 0')],
            ":2: run",
            id="run-index-from-1",
        ),
        pytest.param([""], "none.jsonl: the cassette is empty", id="empty"),
        pytest.param(
            ['{"model": "gpt-test", "note": "n"}', ANSWER],
            ':1: a header without "cassette": 1 (it has model, note)',
            id="header-without-version",
        ),
        pytest.param(
            ['{"cassette": 1}', CALLS.replace("TOOL", "delete_everything")],
            ":2: message.tool_calls[0].name: calls tool 'delete_everything', which the suite "
            "does not have; its tools are get_ticket, query_background, update_ticket",
            id="unknown-tool",
        ),
        pytest.param(
            ['{"cassette": 1}', ANSWER.replace("tiny-001", "tiny-01")],
            ":2: case: 'tiny-01' is not a case of the suite; did you mean 'tiny-001'?",
            id="unknown-case",
        ),
    ],
)
def test_check_names_the_line_and_field_of_a_bad_cassette(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter, lines: list[str], wanted: str
) -> None:
    root = writer.write()
    _cassette(root, *lines)
    r = run_cli(capsys, "check", str(root))
    assert r.code == 2, r.out
    assert r.out == ""
    assert wanted in r.err
    assert "none.jsonl" in r.err and "docs/cassettes.md" in r.err
    assert "Traceback" not in r.err


def test_a_valid_cassette_is_summarised(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    root = writer.write()
    _cassette(
        root,
        '{"cassette": 1, "prompt_version": null}',
        ANSWER,
        ANSWER.replace('"run": 1', '"run": 2'),
    )
    r = run_cli(capsys, "check", str(root))
    assert r.code == 0, r.err
    assert "cassette none.jsonl: 2 answers covering 1 of 1 case (2 runs)" in r.out


def test_check_and_run_validate_a_model_cassette_given_on_the_command_line_alike(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter, tmp_path: Path
) -> None:
    """Was: `run --model replay:bad.jsonl` printed Python exceptions (KeyError: 'turn')
    and `check` had no way to look at that cassette."""
    root = writer.write()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "m"}\n{"case": "tiny-001", "run": 1}\n', encoding="utf-8")
    checked = run_cli(capsys, "check", str(root), "--model", f"replay:{bad}")
    db = tmp_path / "p.db"
    ran = run_cli(capsys, "run", str(root), "--model", f"replay:{bad}", "--db", str(db))
    assert checked.code == ran.code == 2
    header = f'error: {bad}:1: a header without "cassette": 1 (it has model); write {{"cassette": 1'
    for err in (checked.err, ran.err):
        first, second = err.splitlines()
        assert first.startswith(header)
        assert second.startswith(f"error: {bad}:2: turn: missing") and "message: missing" in second
    assert "Traceback" not in ran.err and "KeyError" not in ran.err
    assert not db.exists()


def test_a_missing_cassette_is_a_warning_not_an_error(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    r = run_cli(capsys, "check", str(writer.write()))
    assert r.code == 0, r.err
    assert "cassettes/none.jsonl: not found" in r.out


def test_problems_are_capped_and_counted(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    root = writer.write()
    _cassette(root, '{"cassette": 1}', *(["[1]"] * 50))
    r = run_cli(capsys, "check", str(root))
    assert r.code == 2
    lines = r.err.strip().splitlines()
    assert len(lines) == 21, r.err
    assert "and 30 more problems" in lines[-1]


def test_a_cassette_that_is_a_folder_is_one_line(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    root = writer.write()
    (root / "cassettes" / "none.jsonl").mkdir(parents=True)
    r = run_cli(capsys, "check", str(root))
    assert r.code == 2
    assert r.err.count("\n") == 1 and "not a regular file" in r.err


def test_the_cassette_doc_examples_fit_the_schema() -> None:
    """docs/cassettes.md's JSON examples are lines the schema accepts (a multi-line
    example is one object written over several lines)."""
    import json
    import re

    from passhat.models.replay import _described, cassette_schema

    doc = (EXAMPLES.parent / "docs" / "cassettes.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", doc, flags=re.S)
    assert len(blocks) == 3
    schema = cassette_schema()
    entries = []
    for block in blocks:
        try:
            entries.append(json.loads(block))
        except ValueError:
            entries.extend(json.loads(line) for line in block.splitlines() if line.strip())
    assert len(entries) == 4
    assert [_described(schema, entry) for entry in entries] == [""] * 4


@pytest.mark.parametrize(
    ("agent", "wanted"),
    [
        pytest.param("clarifer", "did you mean 'clarifier'?", id="builtin"),
        pytest.param("agent.py:anwser", "has no 'anwser'; did you mean 'answer'?", id="function"),
    ],
)
def test_check_loads_the_agent_and_suggests_a_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, agent: str, wanted: str
) -> None:
    import shutil

    root = tmp_path / "sql"
    shutil.copytree(EXAMPLES / "sql", root)
    text = (root / "suite.yaml").read_text(encoding="utf-8")
    (root / "suite.yaml").write_text(text.replace("agent.py:answer", agent), encoding="utf-8")
    r = run_cli(capsys, "check", str(root))
    assert r.code == 2, r.out
    assert r.err.count("\n") == 1, r.err
    assert f"suite.yaml: defaults.agent: agent '{agent}'" in r.err
    assert wanted in r.err


def test_goal_items_are_listed_once_when_two_set_scorers_read_one_path(
    capsys: pytest.CaptureFixture[str], writer: SuiteWriter
) -> None:
    """#29: subset and superset on one path listed every goal item twice."""
    assert isinstance(writer.suite, dict)
    item = "AC{ac}:{label}"
    writer.suite["defaults"]["scorers"] = [
        {"subset": "ticket.annotations", "item": item},
        {"superset": "ticket.annotations", "item": item},
    ]
    r = run_cli(capsys, "check", str(writer.write()))
    assert r.code == 0, r.err
    assert r.out.count("AC2:unverifiable") == 1, r.out


def test_a_case_symlink_loop_is_a_problem_named_with_its_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Regression (issue 26): a case file linking to itself ended in an OSError traceback."""
    import shutil

    suite = tmp_path / "trello"
    shutil.copytree(EXAMPLES / "trello", suite)
    (suite / "cases" / "loop.yaml").symlink_to("loop.yaml")
    r = run_cli(capsys, "check", str(suite))
    assert r.code == 2 and "Traceback" not in r.err
    assert "cases/loop.yaml: cannot be read (Too many levels of symbolic links)" in r.err


def test_the_fast_line_check_never_accepts_what_the_schema_refuses() -> None:
    """`check_cassette` skips the schema for lines it sees are plain answers or headers:
    every line it accepts so, the schema accepts too (a replay of 10,000 answers
    reads its cassette before the first run)."""
    import copy
    import json

    from passhat.models.replay import _described, _plain_answer, _plain_header, cassette_schema

    schema = cassette_schema()
    base = json.loads(CALLS.replace("TOOL", "get_ticket"))
    base["usage"] = {"input_tokens": 3, "output_tokens": 1}
    base["stop_reason"] = "tool_calls"
    changes: list[tuple[tuple[str, ...], object]] = [
        ((), None),
        (("case",), ""),
        (("case",), 7),
        (("run",), 0),
        (("run",), True),
        (("run",), 1.0),
        (("turn",), -1),
        (("message", "role"), "user"),
        (("message", "content"), 3),
        (("message", "content"), None),
        (("message", "extra"), 1),
        (("message", "tool_calls"), {}),
        (("message", "tool_calls", 0, "name"), ""),
        (("message", "tool_calls", 0, "arguments"), "{}"),
        (("message", "tool_calls", 0, "more"), 1),
        (("usage", "input_tokens"), -1),
        (("usage", "cached"), 1),
        (("stop_reason",), None),
        (("tunr",), 0),
    ]
    seen = set()
    for path, value in changes:
        entry = copy.deepcopy(base)
        target = entry
        for key in path[:-1]:
            target = target[key]
        if path:
            target[path[-1]] = value
        plain = _plain_answer(entry)
        seen.add(plain)
        assert not plain or _described(schema, entry) == "", (path, value)
    assert seen == {True, False}
    for header in (
        {"cassette": 1},
        {"cassette": True},
        {"cassette": 1, "note": 5},
        {"cassette": 2},
    ):
        assert not _plain_header(header) or _described(schema, header) == "", header
    assert _plain_header({"cassette": 1, "model": "m", "extra": [1]})


@pytest.mark.parametrize(
    "description",
    [
        "We ran each configuration 3 times, 5 runs per task, k=5; " * 20_000,
        "5 runs per task, 3 seeds each\n" * 30_000,
        "12.5 3 1,000 0.61 " * 60_000,
    ],
    ids=["one line of near-claims", "one paragraph of short lines", "numbers only"],
)
def test_a_huge_description_is_shown_as_its_start_and_its_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], description: str
) -> None:
    """Issue 34: `check` folded a 1 MB first paragraph into a table cell (8 MB: 38 s, in
    time that grew with the square of its length); now it shows MAX_SUMMARY characters
    and how long the paragraph is."""
    import shutil

    from passhat.report.suite import MAX_SUMMARY

    suite = shutil.copytree(EXAMPLES / "clarify", tmp_path / "clarify")
    text = (suite / "suite.yaml").read_text()
    start, end = text.index("description: |"), text.index("environment:")
    block = "".join(f"  {line}\n" for line in description.rstrip("\n").split("\n"))
    (suite / "suite.yaml").write_text(text[:start] + "description: |\n" + block + text[end:])
    r = run_cli(capsys, "check", str(suite))
    assert r.code == 0, r.err
    about = r.out[r.out.index("about") : r.out.index("environment")]
    assert f"({len(description.rstrip()):,} characters: suite.yaml has it all)" in " ".join(
        about.split()
    )
    assert len(about) < 3 * MAX_SUMMARY
