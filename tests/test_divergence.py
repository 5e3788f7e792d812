"""passhat.divergence: turns, pair diffs, the prefix tree of a case's runs, and who
wrote each item. Runs are built by hand here; tests/test_cli_diff.py runs the seed."""

from __future__ import annotations

from typing import Any

import pytest

from passhat.divergence import (
    SetSpec,
    diff_runs,
    divergence_tree,
    item_evidence,
    parted_at,
    run_calls,
    turns,
)
from passhat.records import RunRecord
from passhat.report.diff import evidence_rows, tree_sentence
from passhat.scoring import item_string

SYSTEM = {"role": "system", "content": "Annotate the ticket."}
USER = {"role": "user", "content": '{"ac": [{"ac": 3, "text": "Fast \\"enough\\" checkout."}]}'}
SPEC = SetSpec(
    "exact_set ticket.annotations", "ticket.annotations", lambda v: item_string(v, "AC{ac}:{label}")
)
GOAL = {
    "ticket": {"annotations": [{"ac": 3, "label": "unverifiable"}, {"ac": 5, "label": "conflict"}]}
}
INPUT = {
    "ac": [{"ac": 3, "text": 'Fast "enough" checkout.'}, {"ac": 5, "text": "One code per order."}]
}


def annotation(ac: int, label: str) -> dict[str, Any]:
    return {"ac": ac, "label": label, "note": f"note {ac}"}


def run(
    index: int,
    annotations: list[dict[str, Any]],
    *,
    answers: tuple[str, ...] = ("done",),
    status: str = "failed",
    call_id: str = "c1",
    transcript: bool = True,
    **fields: Any,
) -> RunRecord:
    """A run that writes `annotations` with one update_ticket call, then answers."""
    arguments = {"annotations": annotations}
    messages: list[dict[str, Any]] = [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": call_id, "name": "update_ticket", "arguments": arguments}],
            "usage": {"input_tokens": index},
        },
        {"role": "tool", "name": "update_ticket", "tool_call_id": call_id, "content": "ok"},
    ]
    messages += [{"role": "assistant", "content": text} for text in answers]
    expected = ["AC3:unverifiable", "AC5:conflict"]
    actual = sorted(item_string(a, "AC{ac}:{label}") for a in annotations)
    score = [
        {
            "scorer": "exact_set",
            "path": "ticket.annotations",
            "passed": actual == expected,
            "expected": expected,
            "actual": actual,
            "missing": [x for x in expected if x not in actual],
            "extra": [x for x in actual if x not in expected],
        }
    ]
    return RunRecord(
        experiment_id="e1",
        case_id="c",
        run_index=index,
        case_hash="h",
        status=status,  # type: ignore[arg-type]
        final_state={"ticket": {"annotations": annotations, "goal": "g"}},
        score=score if status != "errored" else [],
        transcript=messages if transcript else [],
        tool_calls=[
            {"tool": "update_ticket", "arguments": arguments, "result": "ok", "error": None}
        ],
        **fields,
    )


FULL = [annotation(3, "unverifiable"), annotation(5, "conflict")]


def test_turns_start_at_the_input_and_at_each_model_message() -> None:
    t = turns(run(1, FULL, answers=("a", "b")).transcript)
    assert [x.number for x in t] == [0, 1, 2, 3]
    assert [x.messages for x in t] == [(0, 1), (2, 3), (4,), (5,)]


def test_equal_runs_have_no_divergence_and_no_difference() -> None:
    # made-up call ids and token usage are not what was said: they do not count
    d = diff_runs(run(1, FULL), run(2, FULL, call_id="other"))
    assert d.diverged_at is None
    assert all(p.same for p in d.turns)
    assert d.same_state and d.state == ()
    assert [(p.a is not None, p.b is not None, p.same) for p in d.calls] == [(True, True, True)]


def test_an_item_found_in_one_run_only_and_the_turn_that_parted_them() -> None:
    d = diff_runs(run(1, FULL), run(2, FULL[:1]))
    (items,) = d.items
    assert (
        items.only_a == ("AC5:conflict",)
        and items.only_b == ()
        and items.both == ("AC3:unverifiable",)
    )
    assert d.diverged_at == 1
    assert d.divergence[0]["path"] == "0.tool_calls.0.arguments.annotations.1"
    assert [p.same for p in d.turns] == [True, False, True]  # the answer is the same again
    (call,) = d.calls
    assert not call.same and call.a is not None and call.a.turn == 1


def test_runs_of_different_lengths_part_where_the_shorter_ends() -> None:
    d = diff_runs(run(1, FULL, answers=("a",)), run(2, FULL, answers=("a", "b", "c")))
    assert d.diverged_at == 3
    assert len(d.turns) == 5 and d.turns[3].a is None and d.turns[4].b is not None


def test_errored_run_is_diffed_by_state_and_turns_without_items() -> None:
    broken = run(
        2, FULL[:1], answers=(), status="errored", error_type="agent_error", error_message="boom"
    )
    d = diff_runs(run(1, FULL), broken)
    assert d.items == ()  # no score: no item diff is claimed
    assert {row["path"] for row in d.state} == {"ticket.annotations.1"}
    assert d.diverged_at == 1


def test_a_run_without_transcript_is_said_and_not_aligned() -> None:
    d = diff_runs(run(1, FULL), run(2, FULL, transcript=False))
    assert d.no_transcript == ("b",) and d.diverged_at is None


def test_tool_calls_align_on_tool_and_arguments() -> None:
    a = run(1, FULL)
    extra_call = {"tool": "get_ticket", "arguments": {}, "result": {}, "error": None}
    b = run(2, FULL)
    b = RunRecord(**{**b.__dict__, "tool_calls": [extra_call, *b.tool_calls]})
    pairs = diff_runs(a, b).calls
    assert [(p.a and p.a.tool, p.b and p.b.tool, p.same) for p in pairs] == [
        (None, "get_ticket", False),
        ("update_ticket", "update_ticket", True),
    ]


def test_calls_read_from_the_transcript_when_the_environment_recorded_none() -> None:
    r = run(1, FULL)
    bare = RunRecord(**{**r.__dict__, "tool_calls": []})
    (call,) = run_calls(bare)
    assert (call.tool, call.turn, call.recorded) == ("update_ticket", 1, False)


def test_the_tree_shows_shared_prefixes_and_branches() -> None:
    runs = {1: ["i", "x", "y"], 2: ["i", "z"], 3: ["i", "x", "y"]}
    tree = divergence_tree(runs)
    assert (tree.runs, tree.first, tree.last) == ((1, 2, 3), 0, 0)
    first, second = tree.children
    assert (first.runs, first.first, first.last, first.ended) == ((1, 3), 1, 2, (1, 3))
    assert (second.runs, second.first, second.last) == ((2,), 1, 1)
    assert tree_sentence(tree) == (
        "runs 1, 2 and 3 agree until turn 0 (the input); run 2 branched at turn 1; "
        "runs 1 and 3 agree to the end"
    )
    assert parted_at(tree, 1, 3) is None and parted_at(tree, 1, 2) == 1


def test_a_run_that_stops_early_ends_inside_its_branch() -> None:
    tree = divergence_tree({1: ["i", "x"], 2: ["i", "x", "y"]})
    assert tree.last == 1 and tree.ended == (1,) and tree.children[0].runs == (2,)
    assert parted_at(tree, 1, 2) == 2


@pytest.mark.parametrize("sent", [True, False], ids=["sent", "never-sent"])
def test_evidence_names_the_writing_call_and_searches_the_input(sent: bool) -> None:
    runs = [
        run(1, FULL if sent else FULL[:1]),
        run(2, FULL[:1]),
        run(3, [*FULL[:1], annotation(7, "conflict")]),
    ]
    if not sent:  # no run found AC 5, and no model was sent the input (the user message)
        runs = [
            RunRecord(**{**r.__dict__, "transcript": [SYSTEM, *r.transcript[2:]]}) for r in runs
        ]
    evidence = {e.item: e for e in item_evidence("c", runs, [SPEC], goal=GOAL, case_input=INPUT)}
    assert list(evidence) == ["AC3:unverifiable", "AC5:conflict", "AC7:conflict"]
    ac3 = evidence["AC3:unverifiable"]
    assert [(w.run, w.turn, w.call, w.tool) for w in ac3.writes] == [
        (1, 1, 1, "update_ticket"),
        (2, 1, 1, "update_ticket"),
        (3, 1, 1, "update_ticket"),
    ]
    assert evidence_rows(ac3) == ["runs 1, 2 and 3: turn 1, update_ticket call 1"]
    extra = evidence["AC7:conflict"]
    assert not extra.expected and extra.present == (3,)
    ac5 = evidence["AC5:conflict"]
    if sent:
        assert ac5.present == (1,) and ac5.sources == ()  # found once: no search needed
    else:
        assert ac5.present == () and ac5.writes == ()
        (source,) = ac5.sources
        assert source.path == "ac.1.text" and source.text == "One code per order."
        assert source.unsent == (1, 2, 3) and dict(source.sent) == {}
        assert evidence_rows(ac5) == []


def test_an_input_text_is_found_as_json_writes_it() -> None:
    runs = [run(1, [])]
    (ac3, ac5) = item_evidence("c", runs, [SPEC], goal=GOAL, case_input=INPUT)
    # AC 3's text holds quotes: the prompt has it JSON-escaped, and it still counts as sent
    assert ac3.sources[0].sent == {1: 1}
    assert ac5.sources[0].unsent == (1,)
