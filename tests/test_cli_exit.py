"""A reading command run as its own process ends without the interpreter's teardown,
its output whole and its exit code kept; other commands, and `main` called in-process,
end as usual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from passhat.records import RunRecord
from passhat.store import Store
from records_for_tests import experiment_record

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = "0123abcd"
CASES = 400  # `report --all` prints far more than one buffer's worth

PROCESS = """
import atexit, sys
atexit.register(lambda: print("exit handlers ran", file=sys.stderr))
sys.argv = ["passhat", *{args!r}]
from passhat.cli import main
main()
"""
IN_PROCESS = """
import atexit, sys
atexit.register(lambda: print("exit handlers ran", file=sys.stderr))
from passhat.cli import main
try:
    main({args!r})
except SystemExit as exit_:
    print("main returned", exit_.code, file=sys.stderr)
"""


def store(tmp_path: Path) -> Path:
    path = tmp_path / "p.db"
    with Store(path) as s:
        s.create_experiment(
            experiment_record((f"case-{i:03d}" for i in range(CASES)), 2, id=EXPERIMENT)
        )
        s.record_runs(
            [
                RunRecord(
                    experiment_id=EXPERIMENT,
                    case_id=f"case-{i:03d}",
                    run_index=index,
                    case_hash="h",
                    status="passed" if (i + index) % 3 else "failed",
                )
                for i in range(CASES)
                for index in (1, 2)
            ]
        )
    return path


def run(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script.format(args=args)],
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100", "PASSHAT_DB": str(cwd / "p.db")},
    )


def test_a_reading_command_skips_teardown_and_prints_everything(tmp_path: Path) -> None:
    store(tmp_path)
    args = ["report", EXPERIMENT, "--all"]
    alone = run(PROCESS, args, tmp_path)
    called = run(IN_PROCESS, args, tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "exit handlers ran" not in alone.stderr  # the process ended at once
    assert "main returned 0" in called.stderr and "exit handlers ran" in called.stderr
    assert alone.stdout == called.stdout  # nothing left in a buffer
    assert f"case-{CASES - 1:03d}" in alone.stdout  # the last case, listed by --all
    json_alone = run(PROCESS, ["report", EXPERIMENT, "--json"], tmp_path)
    assert json_alone.stdout == run(IN_PROCESS, ["report", EXPERIMENT, "--json"], tmp_path).stdout
    assert json_alone.stdout.rstrip().endswith("}")


def test_a_failing_reading_command_keeps_its_code_and_message(tmp_path: Path) -> None:
    store(tmp_path)
    done = run(PROCESS, ["report", "nosuch"], tmp_path)
    assert done.returncode == 2
    assert "error:" in done.stderr and "nosuch" in done.stderr
    assert "exit handlers ran" not in done.stderr


def test_other_commands_end_as_usual(tmp_path: Path) -> None:
    done = run(PROCESS, ["check", str(ROOT / "examples" / "clarify")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exit handlers ran" in done.stderr
