"""`report --json`'s items, tools and tokens made as text (`passhat.report.parts_json`):
the very bytes of the dicts they stand for, across piece boundaries, from summaries
whose items are still undecoded (`LazyItems`, as the command reads them), for odd
case ids, items and tools, and when the fast path must give way."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from passhat.analysis import item_dicts, run_columns, tool_dicts
from passhat.errors import StoreError
from passhat.records import RunSummary
from passhat.report import parts_json
from passhat.report.experiment import experiment_dict, experiment_json
from passhat.report.parts import usage_dict
from passhat.store import LazyItems, Store, json_safe
from test_report_json import plain_experiment_dict, stored_runs

ODD = 'ç "quoted" \\ tab\t 猫 🐈 \x01'


def parts(runs: list[Any], tools: tuple[str, ...]) -> tuple[bytes, bytes, bytes]:
    columns = run_columns(runs)
    usage = parts_json.usage_json(runs, columns)  # None: the caller takes the dict
    return (
        "".join(parts_json.item_json(runs, columns)).encode(),
        "".join(parts_json.tool_json(runs, tools, columns)).encode(),
        to_json(usage_dict(runs, None, columns)) if usage is None else "".join(usage).encode(),
    )


def dicts(runs: list[Any], tools: tuple[str, ...]) -> tuple[bytes, bytes, bytes]:
    columns = run_columns(runs)
    return (
        to_json(item_dicts(runs, columns)),
        to_json(tool_dicts(runs, tools, columns)),
        to_json(usage_dict(runs, None, columns)),
    )


@pytest.mark.parametrize("chunk", [1, 3, 4096])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_command_writes_the_plain_reports_bytes_from_undecoded_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int
) -> None:
    """Pieces of 1, 3 and many entries; items read from `LazyItems` (each case's decoded
    when written, then let go): the JSON of the report built the plain way."""
    monkeypatch.setattr(parts_json, "CHUNK", chunk)
    stored_runs(tmp_path, seed)
    with Store(tmp_path / "p.db") as store:
        e = store.experiment("e1")
        lazy = store.summaries("e1", decode_items=False)
        decoded = store.summaries("e1")
    assert any(isinstance(r.graded_items, LazyItems) for r in lazy)
    assert parts_json.usage_json(lazy, run_columns(lazy)) is not None  # the text path
    plain = to_json(plain_experiment_dict(e, decoded))
    for runs in (lazy, decoded):
        _, pieces = experiment_json(e, runs)
        assert b"".join(pieces) == plain
    # at a terminal, `report --json` (indented) builds the dicts from the same summaries
    assert to_json(experiment_dict(e, store_summaries(tmp_path))) == plain
    # the command's reading lets each value go: only the values of case 3 (an extra given
    # as 1 and "1": not plain, read the long way) were kept decoded
    values = [r.graded_items for r in lazy if isinstance(r.graded_items, LazyItems)]
    kept = {id(v) for v in values if v._items is not None}
    assert kept <= {id(r.graded_items) for r in lazy if r.case_id == "case-03"}
    assert len(kept) < len({id(v) for v in values}) / 2


def store_summaries(folder: Path) -> list[RunSummary]:
    """The summaries as `passhat report --json` reads them (items undecoded)."""
    with Store(folder / "p.db") as store:
        return store.summaries("e1", decode_items=False)


def summary(case: str, index: int, status: str, items: Any, tools: Any, **more: Any) -> RunSummary:
    fields = {
        "case_id": case,
        "run_index": index,
        "status": status,
        "error_type": None,
        "error_message": None,
        "duration_s": 0.5,
        "input_tokens": 10 * index,
        "output_tokens": index,
        "model_source": None,
        "attempt": 1,
        "traceback": None,
        "graded_items": items,
        "tool_counts": tools,
    } | more
    return RunSummary(**fields)


def detail(expected: list[Any], missing: list[Any], extra: list[Any], path: Any = ODD) -> Any:
    return {"scorer": ODD, "path": path, "expected": expected, "missing": missing, "extra": extra}


def test_odd_values_and_shapes_give_the_dicts_bytes() -> None:
    """Unicode and escapes in case ids, scorers, items and tools; items that are not text;
    a case whose runs differ in goal (not one column table); repeated items and labels;
    a case with no counted run; errors in tool counts; numbers that are not ints."""
    same = [detail([ODD, 1, "x"], [1], ["e", 2])]
    runs = [
        summary(ODD, 1, "passed", same, {ODD: (1, 0), "b": (2, 1)}),
        summary(ODD, 2, "failed", same, {ODD: (0, 0)}),
        summary(ODD, 3, "errored", [], {}),
        summary("b", 1, "passed", [detail(["a"], [], [])], {"b": (1, 0)}),
        summary("b", 2, "failed", [detail(["a", "c"], ["c"], ["z"])], {}),  # goals differ
        summary("c", 1, "passed", [detail(["a", "a"], [], [])], {}),  # an item twice
        summary("c", 2, "passed", [detail(["a"], [], []), detail(["a"], [], [])], {}),
        summary("d", 1, "errored", [], {"b": (1, 1)}),  # no counted run
        summary("e", 1, "passed", [detail(["q"], [], ["1", 1])], {"b": (1.5, 0)}),
        summary("e", 2, "passed", [detail(["q"], ["q"], [], None)], {}, input_tokens=True),
        summary("f", 1, "passed", [], {}, input_tokens=2.5),
    ]
    tools = ("never called", ODD)
    for some in (runs, runs[:3], runs[3:8], runs[8:], runs[10:]):
        assert parts(some, tools) == dicts(some, tools)
        assert parts(some, ()) == dicts(some, ())
    assert parts([], tools) == dicts([], tools)
    shuffled = list(runs)
    random.Random(4).shuffle(shuffled)  # not by case: the dicts' own path, whole
    assert parts(shuffled, tools) == dicts(shuffled, tools)


def test_cases_sharing_count_values_share_rows_and_equal_values_of_two_types_do_not() -> None:
    """Tool rows are made once per sequence of count values (the objects a store shares
    between runs): 1 and 1.0 are equal but written differently."""
    one, one_float, none = {"t": (1, 0)}, {"t": (1.0, 0)}, {}
    runs = [
        summary(case, index, "passed", [], counts)
        for case, values in (("a", (one, none)), ("b", (one, none)), ("c", (one_float, none)))
        for index, counts in enumerate(values, 1)
    ]
    assert parts(runs, ("t",)) == dicts(runs, ("t",))
    assert b'"calls_per_run":[1.0,0]' in parts(runs, ("t",))[1]


def test_the_tests_store_has_every_kind_of_item(tmp_path: Path) -> None:
    """What the comparison above relies on: extras of one and of several values, a
    second scorer, a case with no run, errors in tool counts."""
    stored_runs(tmp_path, 1)
    with Store(tmp_path / "p.db") as store:
        data = json.loads(
            b"".join(experiment_json(store.experiment("e1"), store.summaries("e1"))[1])
        )
    assert any(not i["expected"] for i in data["items"])
    assert any(t["errors"] for t in data["tools"])
    assert {t["tool"] for t in data["tools"]} >= {"get_ticket", "query_background"}


@pytest.mark.parametrize(
    "text",
    [
        '[{"expected": ["\\ud800 lone", "\\ud83d\\udc08"], "missing": [], '
        '"n": 123456789012345678901234567890}]',
        '[{"expected": [], "missing": [], "f": [0.1, -0.0, 1e400, 1E5], "s": "tab\\t \\u00e9 猫"}]',
        "[]",
    ],
)
def test_lazy_items_decoded_reads_as_json_loads_and_keeps_nothing(text: str) -> None:
    """As json.loads reads them, a lone surrogate's escape kept as that escape (no UTF-8
    holds it: json_safe), a pair's as its character."""
    items = LazyItems(text, "items of run 1 of 'c'")
    read = json_safe(json.loads(text))
    assert items.decoded() == read
    assert items._items is None  # let go: read again, decoded again
    assert list(items) == read  # iterating keeps them, as before


def test_lazy_items_decoded_names_a_damaged_value() -> None:
    from passhat.errors import StoreError

    for damaged in ("[{", "[1,]", "nope"):
        with pytest.raises(StoreError, match=r"items of run 4 of 'c' is not JSON \(") as got:
            LazyItems(damaged, "items of run 4 of 'c'").decoded()
        with pytest.raises(StoreError) as before:
            LazyItems(damaged, "items of run 4 of 'c'")[0]
        assert str(got.value) == str(before.value)


def test_sound_items_are_decoded_without_naming_their_first_run() -> None:
    """The name of a shared items text (its first run, found by searching every run's
    text: `reads._FirstRun`) is made only for damaged text: made for each of 22,400
    texts it was 0.5 s of 1.5 s of `report --json` at 100,000 runs (attack52b's shape
    check asked it eagerly)."""

    def never(text: str) -> str:
        raise AssertionError(f"named {text!r}")

    sound = LazyItems('[{"scorer": "s", "expected": ["a"], "missing": []}]', never)  # type: ignore[arg-type]
    assert sound.decoded() == [{"scorer": "s", "expected": ["a"], "missing": []}]
    damaged = LazyItems('{"not": "a list"}', lambda text: "items of run 3 of 'c'")  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="items of run 3 of 'c'"):
        damaged.decoded()
