"""Shared fixtures: where the bundled suites live, and small suites written on the fly."""

from __future__ import annotations

import copy
import fcntl
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings

# make test draws the same examples on every run, so a red CI is a change, not luck;
# `make chaos` (PASSHAT_HYPOTHESIS=explore) draws new ones, many more, to find bugs.
# No example is timed: Hypothesis's default 200 ms deadline (and its too-slow health
# check) fails a test whose one example a loaded machine held up for 250 ms, and the
# same example then passing on replay is reported as flaky: a failure too. Speed goals
# are benchmarks' (benchmarks/), not these tests'.
UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("passhat", derandomize=True, **UNTIMED)
settings.register_profile("explore", derandomize=False, **UNTIMED)
settings.load_profile(os.environ.get("PASSHAT_HYPOTHESIS", "passhat"))

# Tests Ctrl-C a passhat they start. A test run started in the background (nohup, `cmd &`
# in a shell without job control) ignores SIGINT, and every process it starts inherits
# that: the passhat then never sees the Ctrl-C (it ran on to the end, or hung on its agents).
# Python's own handler is not inherited across exec, so children start with the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# A root passhat runs each command agent as a uid of its own (--isolation namespace),
# which cannot reach a checkout under a folder closed to other users (`mktemp -d`,
# /root): nor this virtualenv's SDKs the test agents import. There, runs that do not
# ask for a level run at the process level (tests/agent_python.py says the same).
if os.geteuid() == 0:
    from passhat.agents.command import closed_to_others

    if closed_to_others(Path(__file__).resolve().parent, 0o001) is not None:
        os.environ.setdefault("PASSHAT_ISOLATION", "process")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

TICKET_SUITE: dict[str, Any] = {
    "name": "tiny",
    "description": "A one-case ticket suite for tests.",
    "environment": "ticket",
    "labels": ["conflict", "inconsistent_with_description", "unverifiable"],
    "defaults": {
        "model": "replay:cassettes/none.jsonl",
        "scorers": [
            {"exact_set": "ticket.annotations", "item": "AC{ac}:{label}"},
            {"present": ["ticket.goal", "ticket.scope_in"]},
        ],
    },
}

TICKET_CASE: dict[str, Any] = {
    "id": "tiny-001",
    "tags": ["test"],
    "input": {
        "ticket": {
            "key": "T-1",
            "title": "Coupon field",
            "description": "One coupon per order.",
            "acceptance_criteria": [
                {"ac": 1, "text": "The checkout page has a coupon field."},
                {"ac": 2, "text": "Applying a coupon is quick."},
                {"ac": 3, "text": "A second coupon is refused."},
            ],
        }
    },
    "fixtures": {
        "query_background": [
            {"args": {"query": "coupon policy"}, "response": "One coupon per order."},
        ]
    },
    "goal": {"ticket": {"annotations": [{"ac": 2, "label": "unverifiable", "note": "vague"}]}},
}


class SuiteWriter:
    """A suite as plain data, edited by a test, then written to a folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.suite: dict[str, Any] | str = copy.deepcopy(TICKET_SUITE)
        self.cases: dict[str, dict[str, Any] | str] = {"tiny.yaml": copy.deepcopy(TICKET_CASE)}
        self.files: dict[str, str] = {}

    @property
    def case(self) -> dict[str, Any]:
        """The first case, for editing."""
        case = self.cases["tiny.yaml"]
        assert isinstance(case, dict)
        return case

    def write(self) -> Path:
        (self.root / "cases").mkdir(parents=True, exist_ok=True)
        _dump(self.root / "suite.yaml", self.suite)
        for name, case in self.cases.items():
            _dump(self.root / "cases" / name, case)
        for name, text in self.files.items():
            (self.root / name).write_text(text, encoding="utf-8")
        return self.root


class _NoAliases(yaml.SafeDumper):
    """Suites refuse YAML anchors and aliases, so tests never write them."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _dump(path: Path, data: dict[str, Any] | str) -> None:
    text = data if isinstance(data, str) else yaml.dump(data, Dumper=_NoAliases, allow_unicode=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(autouse=True, scope="module")
def _one_browser_per_module() -> Iterator[None]:
    """A module's pages share one headless Chromium (tests/browser.py), killed after the
    module: an idle one still costs CPU while the worker runs other files."""
    yield
    browser = sys.modules.get("browser")
    if browser is not None:
        browser.discard()


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's tmp_path (a fresh folder of the test's own, mode 0o700, under the session's
    base temp folder, named after the test, kept: pytest's default retention), made by one
    mkdtemp. pytest numbers its folders: each one it makes lists every folder the worker
    made before it and replaces a `-current` link, so a worker's thousandth tmp_path cost
    1.3 ms of CPU, its two-thousandth 1.7 ms (tests/test_claims.py alone makes 2,050)."""
    name = re.sub(r"[\W]", "_", request.node.name)[:30]
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=tmp_path_factory.getbasetemp()))


@pytest.fixture
def writer(tmp_path: Path) -> SuiteWriter:
    """A valid one-case ticket suite in tmp_path/suite, ready to be broken."""
    return SuiteWriter(tmp_path / "suite")


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A fresh folder any user may write: under `--isolation namespace` a root passhat
    runs each agent as a uid of its own, and pytest's tmp_path is root's alone."""
    folder = Path(tempfile.mkdtemp(prefix="passhat-test-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["root", "unprivileged"])
def user(request: pytest.FixtureRequest) -> str:
    """passhat as root (when the tests run as root) and as an unprivileged user (nobody
    through setpriv under root; the tests' own user otherwise): tests/sandbox_helpers.py."""
    from agent_python import CHECKOUT_CLOSED, CLOSED_REASON

    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("the tests do not run as root here, so a root passhat cannot be tried")
    if request.param == "unprivileged" and os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is missing: cannot drop to an unprivileged user")
    if request.param == "unprivileged" and CHECKOUT_CLOSED:
        pytest.skip(CLOSED_REASON)
    return str(request.param)


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> dict[str, Path]:
    """The .eval log of each task of tests/inspect_logs.py (`tiny-math`, `chatty-math`,
    `moody-math`), written by one Inspect process for the whole session: under xdist the
    first worker to ask makes them in the session's shared temp folder, the others wait
    on its lock and read them (a real eval costs seconds of CPU). Read them, never write."""
    pytest.importorskip("inspect_ai")
    from inspect_logs import make_logs

    if worker_id == "master":
        return make_logs(tmp_path_factory.mktemp("inspect"))
    shared = tmp_path_factory.getbasetemp().parent  # this session's, every worker's
    with (shared / "inspect.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        made = shared / "inspect.json"
        if not made.exists():
            logs = make_logs(shared / "inspect")
            made.write_text(json.dumps({task: str(log) for task, log in logs.items()}))
        return {task: Path(log) for task, log in json.loads(made.read_text()).items()}


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, the controller writes the test files' assertion-rewrite cache once,
    before its workers start, so that none of them rewrites them again
    (tests/rewrite_cache.py)."""
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", default=None):
        from rewrite_cache import prewarm

        prewarm(config, Path(__file__).resolve().parent)
