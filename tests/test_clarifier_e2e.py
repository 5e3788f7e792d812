"""The clarifier end to end over real HTTP: both SDKs, keys kept out, cassettes that replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import SEED, run_cli, run_seed
from fakeserver import FakeServer, call
from passhat.agents.clarifier import Clarifier, builtin_template, prompt_version
from passhat.records import RunRecord
from passhat.store import Store

pytest_plugins = ["fakeserver"]

SECRET = "sk-test-PASSHAT-DO-NOT-LEAK-7f3a9c"
GOAL = [
    {"ac": 3, "label": "conflict", "note": "AC 3 與 AC 5 矛盾"},
    {"ac": 3, "label": "inconsistent_with_description", "note": "與描述相反"},
    {"ac": 4, "label": "unverifiable", "note": "無標準"},
    {"ac": 7, "label": "unverifiable", "note": "無門檻"},
]


def update(annotations: list[dict[str, object]]) -> dict[str, object]:
    return {
        "key": "SHOP-1042",
        "goal": "優惠碼折抵",
        "scope_in": ["輸入欄"],
        "scope_out": ["發放"],
        "annotations": annotations,
    }


def script_two_runs(server: FakeServer) -> None:
    """Run 1 writes the goal state; run 2 misses AC 7 after a background look-up."""
    server.reply(tool_calls=[call("update_ticket", update(GOAL), id="a1")], usage=(900, 120))
    server.reply("已更新", usage=(1000, 5))
    server.reply(
        tool_calls=[call("query_background", {"query": "優惠碼 會員折扣"}, id="b1")],
        usage=(900, 20),
    )
    server.reply(tool_calls=[call("update_ticket", update(GOAL[:3]), id="b2")], usage=(1100, 110))
    server.reply("已更新", usage=(1200, 5))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_clarifier_end_to_end_over_both_sdks(
    provider: str,
    fake_server: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", SECRET)
    script_two_runs(fake_server)
    url = fake_server.openai_url if provider == "openai" else fake_server.anthropic_url
    db = tmp_path / "p.db"
    r = run_seed(
        capsys,
        "--model",
        f"{provider}:test-model",
        "--base-url",
        url,
        "-k",
        "2",
        "--concurrency",
        "1",
        "--db",
        str(db),
        "--name",
        "live",
        "--temperature",
        "0",
    )
    assert r.code == 0, r.err
    logs = r.out + r.err
    with Store(db) as store:
        experiment = store.experiment("live")
        runs = store.runs(experiment.id)
    assert [run.status for run in runs] == ["passed", "failed"]
    assert runs[1].score[0]["missing"] == ["AC7:unverifiable"]
    assert [c["tool"] for c in runs[1].tool_calls] == ["query_background", "update_ticket"]
    assert "促銷折扣規則" in json.dumps(
        runs[1].transcript, ensure_ascii=False
    )  # the fixture answered
    assert (runs[0].input_tokens, runs[0].output_tokens) == (1900, 125)
    assert experiment.prompt_version == prompt_version(builtin_template())
    assert experiment.params["temperature"] == 0

    first = fake_server.requests[0]
    assert SECRET in json.dumps(first.headers)  # the key was used...
    body = json.dumps(first.body, ensure_ascii=False)
    assert (
        "update_ticket" in body and "inconsistent_with_description" in body and "SHOP-1042" in body
    )

    show = run_cli(capsys, "show", "live", SEED, "2", "--db", str(db))
    report = run_cli(capsys, "report", "live", "--json", "--db", str(db))
    logs += show.out + show.err + report.out
    assert "query_background" in show.out
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("p.db*"))
    assert SECRET.encode() not in stored  # ...and is nowhere in the store, logs or reports
    assert SECRET not in logs


def test_a_live_experiment_replays_from_its_cassette(
    fake_server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script_two_runs(fake_server)
    db = str(tmp_path / "p.db")
    r = run_seed(
        capsys,
        "--model",
        "openai:test-model",
        "--base-url",
        fake_server.openai_url,
        "-k",
        "2",
        "--concurrency",
        "1",
        "--db",
        db,
        "-q",
        "--name",
        "live",
    )
    assert r.code == 0, r.err
    tape = tmp_path / "tape.jsonl"
    r = run_cli(capsys, "cassette", "live", "-o", str(tape), "--db", db)
    assert r.code == 0 and "5 model answers from 2 runs" in r.out
    requests_before = len(fake_server.requests)
    r = run_seed(
        capsys,
        "--model",
        f"replay:{tape}",
        "-k",
        "2",
        "--db",
        db,
        "-q",
        "--name",
        "again",
    )
    assert r.code == 0, r.err
    assert len(fake_server.requests) == requests_before  # not a single call
    with Store(db) as store:
        live = store.runs(store.experiment("live").id)
        again = store.runs(store.experiment("again").id)
    assert [(r.status, r.score) for r in again] == [(r.status, r.score) for r in live]
    assert [r.final_state for r in again] == [r.final_state for r in live]
    assert [(r.input_tokens, r.output_tokens) for r in again] == [
        (r.input_tokens, r.output_tokens) for r in live
    ]


def one_live_run(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> RunRecord:
    """Run the seed card once against the scripted server; the stored run."""
    db = str(tmp_path / "p.db")
    args = ["--model", "openai:m", "--base-url", server.openai_url, "-k", "1", "--db", db, "-q"]
    r = run_seed(capsys, *args)
    assert r.code in (0, 1), r.err  # 1: the run errored, so nothing was counted
    with Store(db) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return run


def test_a_run_that_never_updates_the_ticket_is_failed_not_errored(
    fake_server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.reply("這張票看起來沒有問題。")
    run = one_live_run(fake_server, tmp_path, capsys)
    assert run.status == "failed" and run.final_state["ticket"]["annotations"] == []


def test_permanent_errors_end_the_run_at_once_with_the_providers_message(
    fake_server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.fail(401, message="Incorrect API key provided")
    run = one_live_run(fake_server, tmp_path, capsys)
    assert run.status == "errored" and run.error_type == "model_error"
    assert "Incorrect API key provided" in (run.error_message or "") and run.retries == []
    assert len(fake_server.requests) == 1


def test_prompt_version_follows_the_template_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = builtin_template()
    assert Clarifier(template).prompt_version == Clarifier(bytes(template)).prompt_version
    changed = template[:-1] + (b" " if template[-1:] != b" " else b"\t")
    assert Clarifier(changed).prompt_version != Clarifier(template).prompt_version
    assert len(prompt_version(template)) == 12

    mine = tmp_path / "prompt.md"
    mine.write_bytes(changed)
    db = str(tmp_path / "p.db")
    r = run_seed(
        capsys,
        "--prompt",
        str(mine),
        "--db",
        db,
        "-q",
        "-k",
        "1",
    )
    assert r.code == 0, r.err
    with Store(db) as store:
        assert store.experiment("latest").prompt_version == prompt_version(changed)
    r = run_seed(
        capsys,
        "--prompt",
        str(tmp_path / "none.md"),
        "--db",
        db,
    )
    assert r.code == 2 and "cannot read the prompt template" in r.err
