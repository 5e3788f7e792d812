"""Secrets stay out of the store whatever they are called, and a store something else
changed is refused (issue 32).

- every value handed to an agent through `pass_env` is blanked by value in every stored
  column, whatever the variable's name (DB_PASSWORD, GITHUB_PAT, AWS_SECRET_ACCESS_KEY),
  also when the 64 KiB stderr tail starts inside one;
- a store holding a trigger or view passhat did not make is refused with one line.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from agent_python import PYTHON, TESTS
from cli_helpers import run_cli
from conftest import SuiteWriter
from passhat.agents.command import STDERR_TAIL
from passhat.agents.streams import cut_secrets
from passhat.errors import StoreError
from passhat.store import Store

SECRETS = {
    "DB_PASSWORD": "correct-horse-battery-staple-1",
    "GITHUB_PAT": "ghp_" + "A1b2C3d4" * 4,
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}


def _echo_suite(writer: SuiteWriter, names: list[str], pad: int) -> Path:
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [PYTHON or sys.executable, str(TESTS / "attack_agent.py")],
        "env": {"ATTACK_ECHO": ",".join(names), "ATTACK_PAD": str(pad)},
        "pass_env": names,
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


@pytest.mark.parametrize("cut", [False, True], ids=["whole", "tail-cut-inside-a-secret"])
def test_pass_env_values_are_blanked_by_value_whatever_their_name(
    writer: SuiteWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cut: bool,
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    names = list(SECRETS)
    first = SECRETS[names[0]]
    # the tail keeps the last STDERR_TAIL bytes: all but the secret's first 10 characters
    pad = STDERR_TAIL - (len(first) - 10) if cut else 10
    suite = _echo_suite(writer, names, pad)
    db = tmp_path / "p.db"
    args = ["-k", "1", "--isolation", "process", "--db", str(db), "-q", "--no-report"]
    result = run_cli(capsys, "run", str(suite), *args)
    assert result.code in (0, 1), result.err
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("p.db*"))
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output == {"echo": dict.fromkeys(names, "***")}
    assert run.stderr is not None and run.stderr.startswith("***")
    for value in SECRETS.values():
        assert value.encode() not in stored
        assert value[10:].encode() not in stored, "a piece of a secret was stored"


def test_cut_secrets_removes_only_a_secrets_end() -> None:
    secret = "sk-0123456789abcdef"
    assert cut_secrets(secret[7:] + " rest", (secret,)) == "*** rest"
    assert cut_secrets("plain text", (secret,)) == "plain text"
    assert cut_secrets("def rest", (secret,)) == "def rest"  # shorter than 4: kept


def test_a_store_with_a_trigger_passhat_did_not_make_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    Store(db).close()
    raw = sqlite3.connect(db)
    raw.execute(
        "CREATE TRIGGER all_pass AFTER INSERT ON runs BEGIN "
        "UPDATE runs SET status = 'passed' WHERE rowid = new.rowid; END"
    )
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="trigger all_pass, which passhat did not make"):
        Store(db, create=False)
    result = run_cli(capsys, "list", "--db", str(db))
    assert result.code != 0
    assert "trigger all_pass" in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    # the control: the store passhat made opens
    fresh = tmp_path / "fresh.db"
    Store(fresh).close()
    Store(fresh, create=False, read_only=True).close()
