"""`report --json`: the fast builders give the very JSON of the straightforward ones.

`experiment_dict` builds item stability, tool use and tokens column by column (and
shares what runs share); `plain_experiment_dict` below is the report built the
plain way, one object per item, tool and case, as it was before. On a realistic
store (missing, errored and retried runs, a case held at a smaller k, extras,
several scorers, unequal tool use, prices) both must write the same bytes."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from passhat.analysis import item_dict, item_stability, tool_dict, tool_profile
from passhat.records import ExperimentRecord, RunRecord
from passhat.report.experiment import (
    experiment_accounting,
    experiment_dict,
    experiment_json,
    experiment_uncertainty,
    replayed_runs,
    retry_summary,
)
from passhat.report.parts import ReportRun, isolation_of
from passhat.report.summary import case_dict, summary_with_uncertainty
from passhat.store import Store
from passhat.usage import Prices, Unseen, usage_by_case, usage_total
from records_for_tests import experiment_record

K = 6
HELD = "case-07"  # an adaptive rule asked this case for 3 runs only
GOAL = ["AC1: conflict", "AC3: unverifiable", "AC7: unverifiable"]
TOOLS = ("get_ticket", "query_background", "update_ticket")


def plain_experiment_dict(
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    *,
    forecast_m: int = 10,
    prices: Prices | None = None,
) -> dict[str, Any]:
    """The report as JSON-ready data, built one object at a time (the reference)."""
    accounting = experiment_accounting(experiment, runs)
    data: dict[str, Any] = {
        "experiment": {
            "id": experiment.id,
            "name": experiment.name,
            "created_at": experiment.created_at,
            "suite": experiment.suite_name,
            "suite_hash": experiment.suite_hash,
            "agent": experiment.agent,
            "model": experiment.model,
            "model_config": experiment.model_config,
            "params": experiment.params,
            "prompt_version": experiment.prompt_version,
            "k_requested": experiment.k_requested,
            "case_k": dict(experiment.case_k),
            "fingerprint": experiment.fingerprint,
            "harness_version": experiment.harness_version,
            "kind": experiment.kind,
            "source": experiment.source,
            "isolation": isolation_of(experiment),
        }
    }
    if accounting.runs_counted:
        u = experiment_uncertainty(accounting, forecast_m)
        data.update(summary_with_uncertainty(accounting, u))
    else:
        data["dataset"] = None
        data["cases"] = [case_dict(c) for c in accounting.cases]
    data["adaptive"] = [dict(r) for r in experiment.adaptive]
    data["accounting"] = {
        "k_requested": accounting.k_requested,
        "complete": accounting.complete,
        "runs_requested": accounting.runs_requested,
        "runs_completed": accounting.runs_completed,
        "runs_counted": accounting.runs_counted,
        "runs_errored": accounting.runs_errored,
        "runs_missing": accounting.runs_missing,
        "runs_replayed": replayed_runs(runs),
    }
    if accounting.k_varies:
        data["accounting"]["k_least"] = accounting.k_least
        data["accounting"]["k_per_case"] = {str(k): n for k, n in accounting.held().items()}
    data["items"] = [item_dict(s) for s in item_stability(runs)]
    data["tools"] = [tool_dict(u) for u in tool_profile(runs, experiment.tools)]
    by_case = usage_by_case(((r.case_id, r.input_tokens, r.output_tokens) for r in runs), prices)
    data["usage"] = {
        "prices_per_million": (
            {"input": prices.input, "output": prices.output} if prices else None
        ),
        "experiment": usage_total(by_case.values(), prices).to_dict(),
        "cases": [{"case": case, **u.to_dict()} for case, u in by_case.items()],
        "runs": [
            {
                "case": r.case_id,
                "run": r.run_index,
                "input_tokens": r.input_tokens,
                "output_tokens": r.output_tokens,
                "cost": prices.cost(r.input_tokens, r.output_tokens) if prices else None,
            }
            for r in runs
        ],
    }
    data["errored"] = [
        {
            "case": r.case_id,
            "run": r.run_index,
            "type": r.error_type,
            "message": r.error_message,
            "traceback": r.traceback,
        }
        for r in runs
        if r.status == "errored"
    ]
    limited: dict[str, list[int]] = {}
    for r in runs:
        if r.status != "errored" and r.error_type == "limit":
            limited.setdefault(r.case_id, []).append(r.run_index)
    data["limit"] = [{"case": c, "runs": len(i), "indices": i} for c, i in limited.items()]
    data["retried"] = retry_summary(runs)
    return data


def experiment(cases: int) -> ExperimentRecord:
    return experiment_record(
        (f"case-{i:02d}" for i in range(cases)), K, name="json-check", tools=TOOLS, case_k={HELD: 3}
    )


def score(rng: random.Random, case: int) -> list[dict[str, Any]]:
    """Exact-set details as a grader writes them: now and then a missed item or an extra;
    some cases have a second scorer, one case a goal of its own, one a repeated extra."""
    goal = GOAL if case % 5 else [*GOAL, f"AC{case}: own"]
    missing = [item for item in goal if rng.random() < 0.15]
    extra: list[Any] = [e for e in ("AC5: conflict", "AC9: vague") if rng.random() < 0.12]
    if case == 3 and rng.random() < 0.5:
        extra += [1, "1"]  # two extras that read the same as text
    details = [
        {
            "scorer": "exact_set",
            "path": "ticket.annotations",
            "passed": not missing and not extra,
            "expected": goal,
            "missing": missing,
            "extra": extra,
        }
    ]
    if case % 4 == 0:
        details.append(
            {
                "scorer": "present",
                "passed": True,
                "expected": ["Goal"],
                "missing": ["Goal"] if rng.random() < 0.2 else [],
            }
        )
    return details


def tool_calls(rng: random.Random) -> list[dict[str, Any]]:
    calls = [{"tool": "get_ticket", "error": None}] * rng.choice([1, 1, 1, 2])
    if rng.random() < 0.2:
        calls = [*calls, {"tool": "query_background", "error": "no fixture"}]
    return [*calls, {"tool": "update_ticket", "error": None}]


def record(rng: random.Random, case: int, index: int, **changes: Any) -> RunRecord:
    details = score(rng, case)
    passed = all(d["passed"] for d in details)
    fields: dict[str, Any] = {
        "experiment_id": "e1",
        "case_id": f"case-{case:02d}",
        "run_index": index,
        "case_hash": "h",
        "status": "passed" if passed else "failed",
        "score": details,
        "tool_calls": tool_calls(rng),
        "input_tokens": rng.choice([0, 0, 900, 1200]),
        "output_tokens": rng.choice([0, 80, 150]),
        "model_source": rng.choice([None, "live", "replayed"]),
    }
    if rng.random() < 0.08:
        fields.update(
            status="errored",
            error_type="agent_error",
            error_message=f"boom in run {index}",
            traceback="Traceback: agent.py line 3" if rng.random() < 0.5 else None,
            score=[],
        )
    elif rng.random() < 0.05:  # a limit stopped it: counted, marked
        fields.update(error_type="limit", error_message=f"past the limit in run {index}")
    fields.update(changes)
    return RunRecord(**fields)


RETRIED = {(1, 3), (2, 1)}
"""(case, run) whose first attempt crashed and `resume --errored` ran again."""


def stored_runs(tmp_path: Path, seed: int, cases: int = 24) -> None:
    """Every case's runs into a store: some missing, some errored, two run again."""
    rng = random.Random(seed)
    first, again = [], []
    for case in range(cases):
        k = 3 if f"case-{case:02d}" == HELD else K
        for index in range(1, k + 1):
            if case == cases - 1 or (case % 6 == 5 and index in (2, 5)):
                continue  # the last case has no run at all; others miss runs 2 and 5
            if (case, index) in RETRIED and seed != 3:  # seed 3: no run was tried again
                first.append(record(rng, case, index, status="errored", error_type="timeout"))
                again.append(record(rng, case, index, attempt=2))
            else:
                first.append(record(rng, case, index))
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment(cases))
        store.record_runs(first)
        for run in again:
            store.record_run(run)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("prices", [None, Prices(0.15, 0.6)], ids=["tokens", "prices"])
def test_report_json_equals_the_plain_report(
    tmp_path: Path, seed: int, prices: Prices | None
) -> None:
    """Guards every fast path of `report --json` (column-wise items, transposed tool
    counts, per-case token sums): byte for byte the JSON of the plain builders, from a
    store's summaries, from whole records, and from runs in no particular order."""
    stored_runs(tmp_path, seed)
    with Store(tmp_path / "p.db") as store:
        e = store.experiment("e1")
        summaries = store.summaries("e1")
        records = store.runs("e1")
    fast = to_json(experiment_dict(e, summaries, prices=prices))
    plain = to_json(plain_experiment_dict(e, summaries, prices=prices))
    assert fast == plain
    # what the command writes to a pipe, piece by piece
    accounting, pieces = experiment_json(e, summaries, prices=prices)
    assert b"".join(pieces) == plain
    assert accounting == experiment_accounting(e, summaries)
    data = json.loads(fast)
    # the store is as realistic as meant: every shortfall and every kind of item is there
    assert data["accounting"]["runs_missing"] and data["accounting"]["runs_errored"]
    assert data["accounting"]["k_per_case"] == {"3": 1, "6": 23}
    assert (data["retried"] is None) if seed == 3 else data["retried"]["runs_retried"] == 2
    verdicts = {i["verdict"] for i in data["items"]}
    assert {"always found", "sometimes missed", "extra, sometimes"} <= verdicts
    assert {i["scorer"] for i in data["items"]} == {"exact_set ticket.annotations", "present"}
    assert len({tuple(t["calls_per_run"]) for t in data["tools"]}) > 3
    assert to_json(experiment_dict(e, records, prices=prices)) == fast
    shuffled = list(summaries)
    random.Random(seed).shuffle(shuffled)
    want = to_json(plain_experiment_dict(e, shuffled, prices=prices))
    assert to_json(experiment_dict(e, shuffled, prices=prices)) == want


def test_no_two_items_tools_or_cases_share_a_list(tmp_path: Path) -> None:
    """Runs share their hits and calls, cases of equal counts their interval and forecast;
    the JSON-ready data shares no list or dict (a caller may edit one item's lists)."""
    stored_runs(tmp_path, 4)
    with Store(tmp_path / "p.db") as store:
        data = experiment_dict(store.experiment("e1"), store.summaries("e1"))
    values = [v for key in ("items", "tools", "cases") for d in data[key] for v in d.values()]
    ids = [id(v) for v in values if isinstance(v, (list, dict))]
    assert len(ids) == len(set(ids)) and len(ids) > 100
    assert sum(1 for v in values if isinstance(v, dict)) > 20  # cases' intervals, forecasts


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_json_goes_out_whole_and_after_earlier_text(
    monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """Guards writing the JSON bytes straight to stdout's buffer (no decode and encode of
    27 MB): text printed before comes first, and a stdout that is not UTF-8 still gets
    the JSON as text in its own encoding."""
    import io

    from passhat.cli._app import write_json

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding=encoding)
    monkeypatch.setattr("sys.stdout", out)
    out.write("before\n")
    write_json({"case": "café", "runs": [1, 2], "rate": float("nan")})
    out.flush()
    text = raw.getvalue().decode(encoding)
    assert text == 'before\n{"case":"café","runs":[1,2],"rate":null}\n'


def test_report_json_of_runs_that_all_errored(tmp_path: Path) -> None:
    """No counted run (all errored, or none yet): no dataset, but every case with its
    missing and errored runs, the same from the plain builders, `experiment_dict` and
    the pieces the command writes."""
    rng = random.Random(5)
    runs = [
        record(rng, case, index, status="errored", error_type="timeout", score=[])
        for case in range(3)
        for index in (1, 2)
    ]
    with Store(tmp_path / "p.db") as store:
        store.create_experiment(experiment(4))
        store.record_runs(runs)
        e = store.experiment("e1")
        summaries = store.summaries("e1")
    plain = to_json(plain_experiment_dict(e, summaries))
    assert to_json(experiment_dict(e, summaries)) == plain
    assert b"".join(experiment_json(e, summaries)[1]) == plain
    data = json.loads(plain)
    assert data["dataset"] is None and len(data["cases"]) == 4 and len(data["errored"]) == 6
    # and before any run at all
    for prices in (None, Prices(0.15, 0.6)):
        plain = to_json(plain_experiment_dict(e, [], prices=prices))
        assert to_json(experiment_dict(e, [], prices=prices)) == plain
        assert b"".join(experiment_json(e, [], prices=prices)[1]) == plain


def test_the_command_writes_the_report_json_and_judges_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Guards `passhat report --json` to a pipe, written piece by piece: the same text as
    the whole report serialised at once, and --strict still fails a report with missing
    runs (its verdict now comes from the accounting, not the written data)."""
    from cli_helpers import run_cli

    stored_runs(tmp_path, 1)
    db = str(tmp_path / "p.db")
    with Store(tmp_path / "p.db") as store:
        e = store.experiment("e1")
        runs = store.summaries("e1")
        unseen = Unseen(tuple(store.attempt_tokens("e1")), store.abandoned_calls("e1"))
    counted = (sum(r.input_tokens for r in runs), sum(r.output_tokens for r in runs))
    assert unseen.attempts  # the runs retried: their first attempts' tokens are unseen
    want = to_json(
        experiment_dict(e, runs, unseen=unseen.to_dict(*counted, None)), inf_nan_mode="null"
    )
    r = run_cli(capsys, "report", "e1", "--json", "--db", db, "--price", "in=0.15,out=0.60")
    assert r.code == 0
    prices = Prices(0.15, 0.6)
    priced = experiment_dict(e, runs, prices=prices, unseen=unseen.to_dict(*counted, prices))
    assert r.out == to_json(priced, inf_nan_mode="null").decode() + "\n"
    r = run_cli(capsys, "report", "e1", "--json", "--strict", "--db", db)
    assert r.code == 1 and r.out == want.decode() + "\n"
    # every requested run counted: --strict passes
    rng = random.Random(9)
    whole = replace(experiment(2), case_k={})
    with Store(tmp_path / "q.db") as store:
        store.create_experiment(whole)
        store.record_runs(
            [
                record(rng, case, index, status="failed", error_type=None, error_message=None)
                for case in range(2)
                for index in range(1, K + 1)
            ]
        )
    r = run_cli(capsys, "report", "e1", "--json", "--strict", "--db", str(tmp_path / "q.db"))
    assert r.code == 0 and json.loads(r.out)["dataset"]["complete"] is True


def test_a_misspelt_option_is_refused_not_ignored(tmp_path: Path) -> None:
    """The JSON builders take their options as one JsonOptions: a misspelt one (a
    caller's `forecast=` for `forecast_m=`) is a TypeError naming it, not a report
    made quietly with the default horizon."""
    stored_runs(tmp_path, 4)
    with Store(tmp_path / "p.db") as store:
        e, summaries = store.experiment("e1"), store.summaries("e1")
    for build in (experiment_dict, experiment_json):
        with pytest.raises(TypeError, match="'forecast'"):
            build(e, summaries, forecast=5)  # type: ignore[call-arg]
    horizon = experiment_dict(e, summaries, forecast_m=5)["dataset"]["forecast"]
    assert horizon != experiment_dict(e, summaries)["dataset"]["forecast"]
