"""Keys never reach the store: every column of a run and of an experiment passes one
redaction on its way in (Store._sealed), so `show`, reports and exports print none.

A key can come back in any text a run keeps: a traceback (an in-process agent
that printed its client's config), a command agent's stderr, its output, the
transcript, a tool call's arguments, the final state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_cli
from passhat.records import RunRecord
from passhat.store import Store
from records_for_tests import experiment_record

KEY = "sk-redaction-test-0123456789abcdef"
PROVIDER_KEY = "provider-key-only-the-model-knows"


def _leaky_run(experiment_id: str, index: int, status: str) -> RunRecord:
    return RunRecord(
        experiment_id=experiment_id,
        case_id="c1",
        run_index=index,
        case_hash="h",
        status=status,  # type: ignore[arg-type]
        error_type="agent_error" if status == "errored" else None,
        error_message=f"RuntimeError: auth failed with {KEY}" if status == "errored" else None,
        output={"said": f"my key is {KEY}", "other": PROVIDER_KEY},
        final_state={"ticket": {"goal": KEY}},
        transcript=[{"role": "user", "content": f"use {PROVIDER_KEY}"}],
        tool_calls=[{"tool": "t", "arguments": {"key": KEY}, "result": "ok", "error": None}],
        retries=[{"error": f"HTTP 401 for {KEY}"}],
        stderr=f"client config: api_key={KEY}\n",
        traceback=f'Traceback:\n  File "agent.py", line 3\nRuntimeError: {PROVIDER_KEY}',
    )


def _leaky_store(db: Path) -> None:
    with Store(db, create=True) as store:
        store.add_secrets([PROVIDER_KEY])
        store.create_experiment(experiment_record(["c1"], 2, params={"note": KEY}))
        store.record_run(_leaky_run("e1", 1, "errored"))
        store.record_run(_leaky_run("e1", 2, "failed"))
        # the door imports and audits take
        other = experiment_record(["c1"], 1, id="e2", name=f"leak-{KEY}", fingerprint="g")
        store.add_experiment_with_runs(other, [_leaky_run("e2", 1, "failed")])


def _bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_no_key_reaches_any_column_or_anything_printed_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SOME_API_KEY", KEY)  # read from passhat's environment
    db = tmp_path / "p.db"
    _leaky_store(db)
    stored = _bytes(db)
    assert KEY.encode() not in stored and PROVIDER_KEY.encode() not in stored
    assert b"api_key=***" in stored  # the text around a key is kept
    monkeypatch.delenv("SOME_API_KEY")  # the readers do not need to know the key
    printed = []
    for args in (
        ["show", "e1", "c1", "1"],
        ["show", "e1", "c1", "2", "--json"],
        ["report", "e1", "--json"],
        ["report", "e2"],
    ):
        result = run_cli(capsys, *args, "--db", str(db))
        assert result.code in (0, 1), result.err
        printed.append(result.out + result.err)
    for suffix in ("jsonl", "csv"):
        out = tmp_path / f"runs.{suffix}"
        assert run_cli(capsys, "export", "e1", "-o", str(out), "--db", str(db)).code == 0
        printed.append(out.read_text())
    everything = "\n".join(printed)
    assert KEY not in everything and PROVIDER_KEY not in everything
    assert "api_key=***" in printed[0] and "RuntimeError: ***" in printed[0]
