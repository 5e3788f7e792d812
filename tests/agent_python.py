"""An interpreter that command agents started by the tests can run.

Under `--isolation namespace` a root passhat runs each agent as an unprivileged
uid of its own, which cannot run a Python under a closed folder (a pyenv in
/root). PYTHON is this interpreter when any user may run it, else the system's
Python of the same version; its agents get this virtualenv's packages through
PYTHONPATH (ENV). Where there is none, PYTHON is None.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from passhat.agents.command import closed_to_others

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
