"""An interpreter that command agents started by the tests can run.

Under `--isolation namespace` a root passhat runs each agent as an unprivileged
uid of its own, which cannot run a Python under a closed folder (a pyenv in
/root). PYTHON is this interpreter when any user may run it, else the system's
Python of the same version; its agents get this virtualenv's packages through
PYTHONPATH (ENV). Where there is none, PYTHON is None.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from passhat.agents.command import closed_to_others

TESTS = Path(__file__).resolve().parent

SITE = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
"""This virtualenv's packages (passhat's dependencies, the agents' SDKs)."""


def _python_for_others() -> str | None:
    for candidate in (sys.executable, "/usr/bin/python3"):
        if not Path(candidate).exists() or closed_to_others(Path(candidate), 0o001) is not None:
            continue
        version = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if version == str(sys.version_info[:2]):
            return candidate
    return None


PYTHON = _python_for_others()
ENV = {"PYTHONPATH": SITE} if sys.executable != PYTHON else {}
"""What an agent run by PYTHON needs in its environment."""


CHECKOUT_CLOSED = os.geteuid() == 0 and closed_to_others(TESTS, 0o001) is not None
"""A root passhat runs each agent as a uid of its own (--isolation namespace), which
cannot reach a checkout under a folder closed to other users (`mktemp -d`, /root)."""
CLOSED_REASON = (
    "the checkout is under a folder closed to other users, so passhat cannot be run "
    "from it as another user; clone it where any user may read it"
)


def skip_if_closed(level: str = "namespace") -> None:
    """Skip a test whose `level` runs reach into the checkout (this virtualenv's packages,
    an example's program) as a uid of their own, where the checkout is closed to it."""
    import pytest

    if level == "namespace" and CHECKOUT_CLOSED:
        pytest.skip(CLOSED_REASON)


def _staged_agent() -> Path:
    """tests/command_agent.py where the runs' own uids can read it: the checkout's copy,
    or, in a closed checkout, a copy in a folder of its own that any user may read (the
    agent needs only the standard library)."""
    script = TESTS / "command_agent.py"
    if not CHECKOUT_CLOSED:
        return script
    folder = Path(tempfile.mkdtemp(prefix="passhat-test-agent-"))
    folder.chmod(0o755)
    atexit.register(shutil.rmtree, folder, True)
    staged = folder / script.name
    shutil.copyfile(script, staged)
    staged.chmod(0o644)
    return staged


AGENT_SCRIPT = _staged_agent()
"""The test agent's script, for `--agent-cmd` or a suite's `command:`."""

SEALED_ARGS: list[str] = ["--isolation", "process"] if CHECKOUT_CLOSED else []
"""For an agent that must run from the checkout (an example with its own packages):
the process level when the runs' own uids could not reach it."""
