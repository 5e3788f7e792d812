"""fix52b: small defects left at round 14, each shown by a test that failed before its fix."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _script(name: str, *args: str, cwd: Path) -> tuple[int, str, str]:
    """benchmarks/NAME.py run with `args` in `cwd`: (exit code, stdout, stderr). In a
    session of its own, killed whole at the end (a simulation may start workers)."""
    proc = subprocess.Popen(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        out, err = "", "still running after 60 s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return proc.returncode, out, err


@pytest.mark.parametrize(
    "name", ["bench_adaptive", "bench_anytime", "bench_compare_after_adaptive"]
)
def test_a_simulation_benchmark_help_prints_its_usage_and_runs_nothing(
    tmp_path: Path, name: str
) -> None:
    """R was read by hand from sys.argv: `--help` ended in an int() traceback; now argparse
    prints the usage (the docstring beside it), and an R that is no number exits 2."""
    code, out, err = _script(name, "--help", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"usage: {name}.py [-h] [R]"), out
    assert "R = " not in out and "|---|" not in out
    code, out, err = _script(name, "x", cwd=tmp_path)
    assert code == 2 and "invalid int value: 'x'" in err and "Traceback" not in err, err
    assert out == ""


@pytest.mark.parametrize("name", ["claims_corpora", "claims_candidates"])
def test_a_claims_script_help_prints_its_usage_and_audits_nothing(
    tmp_path: Path, name: str
) -> None:
    """`--help` became the cache's file name (every corpus audited into ./--help), and no
    argument was an IndexError traceback."""
    code, out, err = _script(name, "--help", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"usage: {name}.py [-h] CACHE.json [corpus.yaml ...]"), out
    assert list(tmp_path.iterdir()) == []
    code, out, err = _script(name, cwd=tmp_path)
    assert code == 2 and "required: CACHE.json" in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
