"""`report --json` of a large experiment written as its runs are read
(`passhat.report.json_stream`): the very bytes of `experiment_json`, which holds every
run, on realistic stores (missing, errored, retried, limited and unplanned runs, a case
held at a smaller k) and on unkind text; read in small stretches here, so that every
part crosses stretch boundaries."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from cli_helpers import run_cli
from passhat.records import RunRecord
from passhat.report import json_frame, json_stream
from passhat.report.digest import tallied
from passhat.report.experiment import experiment_dict, experiment_json
from passhat.report.json_stream import streamed_json, stretches
from passhat.store import Store
from records_for_tests import experiment_record
from test_report_json import stored_runs

UNSEEN = {"attempts": 2, "input_tokens": 10, "output_tokens": 3, "note": 'a "quoted" note'}


@pytest.fixture(autouse=True)
def small_stretches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stretches of a few runs and cases: the store's runs come in many of them."""
    monkeypatch.setattr(json_stream, "STRETCH_RUNS", 7)
    monkeypatch.setattr(json_stream, "STRETCH_CASES", 3)
    monkeypatch.setattr(json_frame, "ERRORED_CHUNK", 2)  # the errored runs too


def both(db: Path, unseen: dict[str, Any] | None = None) -> tuple[bytes, bytes]:
    """`experiment_json` of every run (the whole report serialised at once), and
    `streamed_json` of the same store."""
    with Store(db) as store:
        e = store.experiment("e1")
        whole = b"".join(experiment_json(e, store.summaries("e1"), unseen=unseen)[1])
        at_once = experiment_dict(e, store.summaries("e1"), unseen=unseen)
        assert whole == to_json(at_once, inf_nan_mode="null")
        tallies = store.tallies("e1", parts=False)
        assert tallies is not None
        counted = tallied(tallies, e, 0)
        assert counted is not None
        runs = [(case, n) for case, (n, _, _) in (counted[0].case_usage or {}).items()]
        with store.snapshot():
            numbers = store.run_numbers("e1", runs)
            assert numbers is not None
            streamed = b"".join(streamed_json(store, e, counted, numbers, unseen=unseen))
    return whole, streamed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_streamed_json_equals_the_whole_report(tmp_path: Path, seed: int) -> None:
    """Guards the stretches' seams: items, tools (a tool first called in a later
    stretch, errors in some), usage, errored, limited and retried runs, and the
    accounting of missing runs and a held case, byte for byte."""
    stored_runs(tmp_path, seed)
    whole, streamed = both(tmp_path / "p.db", UNSEEN)
    assert streamed == whole
    data = json.loads(streamed)
    assert data["accounting"]["runs_missing"] and data["errored"] and data["limit"]
    assert (data["retried"] is None) if seed == 3 else data["retried"]["runs_retried"] == 2
    assert len(data["usage"]["runs"]) > 2 * json_stream.STRETCH_RUNS
    assert data["unseen"] == UNSEEN


def unkind(eid: str, case: str, index: int, status: str, **changes: Any) -> RunRecord:
    fields: dict[str, Any] = {
        "score": [
            {
                "scorer": 'exact "set"',
                "path": "t\\u",
                "passed": status == "passed",
                "expected": ["naïve\n", "a\x00b", "</script>"],
                "missing": ["a\x00b"] if index % 2 else [],
                "extra": ["\u2028"] if index == 3 else [],
            }
        ],
        "tool_calls": [{"tool": 'get "it"', "arguments": {}}] * index
        + ([{"tool": "ünï", "arguments": {}, "error": "boom"}] if index == 2 else []),
        "input_tokens": 10**12 + index,
        "output_tokens": index,
    }
    fields.update(changes)
    return RunRecord(eid, case, index, "h", status, **fields)


def test_streamed_json_of_unkind_text(tmp_path: Path) -> None:
    """Case ids, scorers, items and tools with quotes, backslashes, control characters,
    NUL and non-ASCII; a case with every run errored; a case the plan never named; token
    counts past the 4 bytes a run `streamed_json` keeps them in when they fit (10**12)."""
    cases = ['c "1"', "c\\2", "c\t3", "čaj", "e-all-errored"]
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment_record(cases, 4, tools=("get_ticket",)))
        runs = [
            unkind("e1", case, index, "passed" if (n + index) % 3 else "failed")
            for n, case in enumerate(cases[:-1])
            for index in range(1, 5)
        ]
        runs += [
            unkind("e1", "e-all-errored", i, "errored", score=[], error_type="x", error_message="m")
            for i in (1, 2)
        ]
        runs.append(unkind("e1", "zz-unplanned", 1, "passed"))
        store.record_runs(runs)
    whole, streamed = both(tmp_path / "p.db")
    assert streamed == whole
    data = json.loads(streamed)
    assert {t["tool"] for t in data["tools"]} == {"get_ticket", 'get "it"', "ünï"}
    assert "zz-unplanned" in {c["case"] for c in data["cases"]}


def test_the_command_streams_a_large_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards the choice in `passhat report --json`: an experiment of `STREAMED_RUNS`
    runs or more is streamed and prints what the whole report prints, --strict judged
    from the same accounting; with prices, or a run whose token count is not an
    integer, the whole report is written; a damaged tool count is said before any JSON."""
    import passhat.cli.report as read

    stored_runs(tmp_path, 1)
    db = str(tmp_path / "p.db")
    monkeypatch.setattr(read, "STREAMED_RUNS", 10**9)
    want = run_cli(capsys, "report", "e1", "--json", "--strict", "--db", db)
    priced = run_cli(capsys, "report", "e1", "--json", "--price", "in=1,out=2", "--db", db)
    monkeypatch.setattr(read, "STREAMED_RUNS", 1)
    streamed: list[object] = []
    real = json_stream.streamed_json

    def spy(*args: Any, **kwargs: Any) -> Any:
        streamed.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(json_stream, "streamed_json", spy)
    got = run_cli(capsys, "report", "e1", "--json", "--strict", "--db", db)
    assert (got.code, got.out) == (want.code, want.out) == (1, want.out) and streamed
    streamed.clear()
    got = run_cli(capsys, "report", "e1", "--json", "--price", "in=1,out=2", "--db", db)
    assert got.out == priced.out and not streamed
    with sqlite3.connect(db) as con:  # a hand-edited token count: a float
        con.execute("UPDATE runs SET input_tokens = 2.5 WHERE case_id = 'case-01'")
    with Store(tmp_path / "p.db") as store:  # not streamed: not as `passhat run` writes it
        runs = Counter(r.case_id for r in store.summaries("e1"))
        assert store.run_numbers("e1", list(runs.items())) is None
    got = run_cli(capsys, "report", "e1", "--json", "--db", db)
    assert got.code == 0 and not streamed and '"input_tokens":2.5' in got.out
    with sqlite3.connect(db) as con:  # tool calls that are not JSON: a damaged store
        con.execute("UPDATE runs SET tool_calls = 'nope' WHERE case_id = 'case-02'")
    got = run_cli(capsys, "report", "e1", "--json", "--db", db)
    assert got.code != 0 and got.out == "" and "damaged" in got.err and not streamed


def test_stretches_hold_whole_cases() -> None:
    """At most `STRETCH_RUNS` runs and `STRETCH_CASES` cases a stretch, a larger case
    alone, every case once and in order."""
    runs_of = {f"c{n}": (n % 5 + 1, 0, 0) for n in range(20)} | {"big": (30, 0, 0)}
    got = list(stretches(runs_of))
    assert [case for stretch in got for case in stretch] == list(runs_of)
    assert ["big"] in got
    for stretch in got:
        runs = sum(runs_of[case][0] for case in stretch)
        assert len(stretch) <= 3 and (runs <= 7 or len(stretch) == 1)
    assert list(stretches({})) == []


def test_tallies_without_parts_count_the_same(tmp_path: Path) -> None:
    """`Store.tallies(parts=False)` leaves out the tool-count values and the graded
    cases, and counts everything else as the whole tallies do."""
    stored_runs(tmp_path, 2)
    with Store(tmp_path / "p.db") as store:
        whole = store.tallies("e1")
        light = store.tallies("e1", parts=False)
    assert whole is not None and light is not None
    assert whole.tool_counts and whole.graded and not light.tool_counts and not light.graded
    assert (light.cases, light.errored, light.limited, light.retried) == (
        whole.cases,
        whole.errored,
        whole.limited,
        whole.retried,
    )


def test_a_snapshot_reads_one_state_of_the_store(tmp_path: Path) -> None:
    """Within `Store.snapshot` a run another connection records meanwhile is not seen;
    after it, it is."""
    stored_runs(tmp_path, 1)
    with Store(tmp_path / "p.db", create=False, read_only=True) as reader:
        with reader.snapshot():
            before = reader.recorded_total("e1")
            with Store(tmp_path / "p.db") as writer:
                writer.record_run(RunRecord("e1", "case-23", 1, "h", "passed"))
            assert reader.recorded_total("e1") == before
        assert reader.recorded_total("e1") == before + 1


def test_the_columns_streamed_json_reads_are_the_summaries(tmp_path: Path) -> None:
    """`Store.counted_items` gives the counted runs of the cases from the first it is
    given to the last in the store's order, both included, case by case, their per-item
    results equal to the summaries' and shared where their text is; `Store.run_numbers`
    every run's index, tokens and tool counts, by case and index, each distinct tool-count
    value once, in the order runs first have it."""
    stored_runs(tmp_path, 1)
    with Store(tmp_path / "p.db") as store:
        summaries = store.summaries("e1", decode_items=False)
        cases = sorted({run.case_id for run in summaries})
        inner = cases[2:9]
        counts = Counter(r.case_id for r in summaries if r.status != "errored")
        got = list(store.counted_items("e1", [(c, counts[c]) for c in inner if counts[c]]))
        # counts that do not add up (not what tallies give): the case ids are read
        assert list(store.counted_items("e1", [(inner[0], 1), (inner[-1], 1)])) == got
        numbers = store.run_numbers("e1", list(Counter(r.case_id for r in summaries).items()))
    counted = [r for r in summaries if r.case_id in inner and r.status != "errored"]
    assert [case for case, _, _ in got] == sorted({r.case_id for r in counted})
    assert [(case, i) for case, indices, _ in got for i in indices] == [
        (r.case_id, r.run_index) for r in counted
    ]
    values = [value for _, _, case_values in got for value in case_values]
    assert values == [r.graded_items for r in counted]
    texts = {json.dumps(list(v)) for v in values}
    assert len({id(v) for v in values}) == len(texts) < len(values)  # one object a text
    assert any(r.status == "errored" for r in summaries if r.case_id in inner)
    assert list(numbers.indices) == [r.run_index for r in summaries]
    assert list(numbers.tokens_in) == [r.input_tokens for r in summaries]
    assert list(numbers.tokens_out) == [r.output_tokens for r in summaries]
    assert [numbers.counts[key] for key in numbers.keys] == [r.tool_counts for r in summaries]
    distinct = {json.dumps(r.tool_counts): r.tool_counts for r in summaries}
    assert list(numbers.counts.values()) == list(distinct.values()) and len(distinct) > 1


def test_a_damaged_text_of_counted_items_names_its_first_run(tmp_path: Path) -> None:
    """`Store.counted_items` names a text of per-item results only when it is found
    damaged (on decoding): the first counted run of the stretch that has it, as
    `Store.summaries` names it; a text that is not a list at all is said at once."""
    from passhat.errors import StoreError

    stored_runs(tmp_path, 1)
    with Store(tmp_path / "p.db") as store:
        summaries = store.summaries("e1", decode_items=False)
    counts = Counter(r.case_id for r in summaries if r.status != "errored")
    counted = [r for r in summaries if r.status != "errored"]
    case = "case-07"
    first, later = [r.run_index for r in counted if r.case_id == case][1:3]
    with sqlite3.connect(tmp_path / "p.db") as con:  # runs 2 and 3 of the case: one text
        con.execute(
            "UPDATE run_summaries SET items = '[{\"scorer\"' "
            "WHERE case_id = ? AND run_index IN (?, ?)",
            (case, first, later),
        )
    stretch = [(c, counts[c]) for c in ("case-06", case, "case-08")]
    with Store(tmp_path / "p.db") as store:
        got = {c: values for c, _, values in store.counted_items("e1", stretch)}
        assert got["case-06"][0] == store.summaries("e1", cases=["case-06"])[0].graded_items
        with pytest.raises(StoreError, match=rf"items of run {first} of '{case}' is not JSON"):
            list(got[case][[r.run_index for r in counted if r.case_id == case].index(later)])
        with sqlite3.connect(tmp_path / "p.db") as con:
            con.execute("UPDATE run_summaries SET items = 'nope' WHERE case_id = 'case-08'")
        with pytest.raises(StoreError, match=r"items of run \d+ of 'case-08' is not JSON"):
            list(store.counted_items("e1", stretch))
