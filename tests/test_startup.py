"""Start-up: commands that compute no statistic do not import numpy."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from passhat.cli import main
try:
    main({args!r})
except SystemExit:
    pass
# numpy may be in sys.modules as a lazy module; its code ran only if its core did
print("numpy._core" in sys.modules or "numpy.core" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["list", "--db", "x.db"]])
def test_commands_without_statistics_do_not_import_numpy(args: list[str], tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == "False"


def test_statistics_still_work_once_numpy_is_needed() -> None:
    from passhat.accounting import account
    from passhat.stats import uncertainty

    u = uncertainty(account([("a", 1, "passed"), ("b", 1, "failed")], 1), m=2, seed=0)
    assert u.dataset is not None and 0 <= u.dataset.pass_at_1.low <= 0.5


HEAVY = (
    "passhat.cli.run",
    "passhat.store",
    "passhat.stats",
    "asyncio",
    "rich.console",
    "rich.progress",
)
# what `passhat list` and `passhat report` need: not the runner's module (cli/run.py),
# its event loop or progress bar
REPORTING = ["passhat.stats", "passhat.store", "rich.console"]

IMPORTS = """
import sys
from passhat.cli import main
try:
    main({args!r})
except SystemExit:
    pass
print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "imported"),
    [
        pytest.param(["--help"], [], id="--help"),
        pytest.param([], [], id="no-args"),
        pytest.param(["--version"], ["rich.console"], id="--version"),
        pytest.param(["check", "--help"], ["rich.console"], id="check"),
        pytest.param(["metrics", "--help"], ["passhat.stats", "rich.console"], id="metrics"),
        pytest.param(["list", "--help"], REPORTING, id="list"),
        pytest.param(["report", "--help"], REPORTING, id="report"),
    ],
)
def test_a_command_imports_only_its_own_module(
    args: list[str], imported: list[str], tmp_path: object
) -> None:
    """`passhat --help` lists the commands from a table and imports none of them;
    `passhat NAME` imports NAME's module (what it needs), not every command's."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS.format(args=args, heavy=HEAVY)],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == str(sorted(imported))
