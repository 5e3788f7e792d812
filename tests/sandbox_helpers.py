"""passhat run as root and as an unprivileged user, for the tests of what an agent can reach.

The `user` fixture (conftest.py) gives "root" (when the tests run as root) and
"unprivileged" (nobody through setpriv when the tests run as root; the tests' own
user otherwise); `passhat_as` runs the real `passhat` command as that user, with a provider key in
its environment, from a folder of the test's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_python import PYTHON, SITE, TESTS
from conftest import SuiteWriter
from passhat.agents import isolation
from passhat.records import RunRecord
from passhat.store import Store

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-passhat-isolation-test-" + "k" * 24
NOBODY = 65534
ATTACK_MARKS = [
    pytest.mark.skipif(
        isolation.unavailable("namespace") is not None,
        reason=f"no sandbox for agents here: {isolation.unavailable('namespace')}",
    ),
    pytest.mark.skipif(PYTHON is None, reason="no Python that other users may run"),
]
"""What every attack test needs: a sandbox to attack, and a Python every user may run."""


def unprivileged() -> list[str]:
    """The command line's head that runs the rest as nobody when the tests run as root
    (setpriv); nothing when they run as an ordinary user already."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def passhat_as(
    user: str,
    folder: Path,
    *args: str,
    home: Path | None = None,
    key: str = KEY,
    head: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """`passhat ARGS` as `user`, with the provider key `key` in its environment; `head`, a
    command line that execs the rest, runs in between (to start passhat in a given state)."""
    prefix = unprivileged() if user == "unprivileged" else []
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home or folder),
        "OPENAI_API_KEY": key,
        # passhat and its dependencies, for an interpreter outside the virtualenv
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), SITE]),
    }
    argv = [*prefix, *head, str(PYTHON), "-m", "passhat", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=180, cwd=folder)


def lowered(module: str, name: str, value: float) -> list[str]:
    """A `head` for passhat_as: `passhat ARGS` with `module`.`name` set to `value` (a bound
    of passhat's that its attack would spend whole, in CPU, at its own size): run as
    `PYTHON -c SCRIPT PYTHON -m passhat ARGS`, the second PYTHON never started."""
    script = (
        f"import importlib, runpy, sys; importlib.import_module({module!r}).{name} = {value!r}; "
        "sys.argv = ['passhat', *sys.argv[sys.argv.index('-m') + 2 :]]; "
        "runpy.run_module('passhat', run_name='__main__', alter_sys=True)"
    )
    return [str(PYTHON), "-c", script]


def open_to_all(folder: Path) -> None:
    """Every path under `folder` opened to every user: a root passhat runs each agent as a
    uid of its own, an unprivileged one as nobody."""
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777 if item.is_dir() else 0o666)


def one_run(user: str, folder: Path, suite: Path, db: Path, level: str, *extra: str) -> RunRecord:
    """`passhat run SUITE -k 1` as `user` at `level` into `db` (the folder first opened to
    every user); its one run."""
    open_to_all(folder)
    args = ["-k", "1", "--timeout", "120", "--isolation", level, "--db", str(db), "-q"]
    done = passhat_as(user, folder, "run", str(suite), *args, *extra, "--no-report")
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    return run


def runs_at(
    user: str, folder: Path, suite: Path, level: str, *extra: str, k: int = 2
) -> list[RunRecord]:
    """`passhat run SUITE -k K --concurrency K` as `user` at `level` into `folder`/p.db
    (the caller opened `folder` to every user); its runs, in order."""
    db = folder / "p.db"
    args = ["-k", str(k), "--concurrency", str(k), "--timeout", "120", "--isolation", level]
    done = passhat_as(user, folder, "run", str(suite), *args, "--db", str(db), "-q", *extra)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        return sorted(store.runs(store.experiment("latest").id), key=lambda r: r.run_index)


def attack_suite(
    work: Path, env: dict[str, str], agent: str = "attack_agent.py", suite: Path | None = None
) -> Path:
    """A suite in `suite` (default `work`/suite; `work` made here) whose agent is
    tests/`agent`, copied to `work`/attack.py and run with `env` (its ATTACK_* variables
    say what it tries), its model an empty cassette: the suite's folder."""
    work.mkdir()
    shutil.copyfile(TESTS / agent, work / "attack.py")
    writer = SuiteWriter(suite or work / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(PYTHON), str(work / "attack.py")],
        "env": env,
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


def attack_in(
    folder: Path, variable: str, arg: str = "", agent: str = "attack51_agent.py"
) -> tuple[Path, Path]:
    """`folder`/out made, and a suite whose agent (tests/`agent`) is given `variable`=`out`
    (`out`,`arg` with an `arg`); `folder` opened to every user. (suite, out)"""
    out = folder / "out"
    out.mkdir()
    value = f"{out},{arg}" if arg else str(out)
    suite = attack_suite(folder / "work", {variable: value}, agent)
    open_to_all(folder)
    return suite, out


async def holds_first(port: int, held: int, flood: int) -> None:
    """`flood` connections to the proxy listening at `port`: the first `held` are held
    and served (a request for a host not allowed answered 403), the rest closed as they
    come (accepted in the order they were made)."""
    opened = [await asyncio.open_connection("127.0.0.1", port) for _ in range(flood)]
    try:
        for reader, _ in opened[held:]:
            with contextlib.suppress(ConnectionError):
                assert await asyncio.wait_for(reader.read(), 30) == b""
        for reader, writer in opened[:held]:
            writer.write(b"GET http://other.invalid/ HTTP/1.1\r\n\r\n")
            assert (await reader.readline()).startswith(b"HTTP/1.1 403")
    finally:
        for _, writer in opened:
            writer.close()
