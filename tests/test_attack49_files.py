"""Neither a virtualenv made from a Python installed in HOME nor a PYTHONPATH entry puts
HOME in a run's view, and the secrets beside a script agent are covered (round 11's
outside attack).

A run sees its program's virtualenv and "the Python it was made from": the folder above
the `bin/` that the virtualenv's pyvenv.cfg names as `home`. For a Python built with
`./configure --prefix=$HOME` (a classic where there is no root), that `bin/` is ~/bin
and the folder above it HOME itself: every file there was in the run's view (its notes,
the projects under it, their answers), although a view is never to be widened to HOME
(sandbox.too_wide, which the other rules of the program's folders go through). Now the
base Python's prefix goes through too_wide as well; where it is too wide, the run sees
its `bin/` and its `lib/python3*` (and `lib/libpython3*`) alone. A PYTHONPATH entry
of the agent's `env` that is HOME (or above it, or /tmp) put it in view the same way;
it is left out now.

Secret-looking files (.env, .netrc, ...) and earlier answers are covered in every folder
in view but the program's installation (a virtualenv's certifi/cacert.pem is no secret),
and "installation" took in a script's own folder and every PYTHONPATH entry: an agent
named as `./agent.py` (a `#!` script, the usual way) or given `PYTHONPATH: <its own
folder>` read the .env and .netrc beside it. Now only installations are spared
(installed.installations: a virtualenv, its base Python, a binary's prefix, a
site-packages / node_modules entry; a site-packages entry's cacert.pem stays readable,
the control of the exemption). As root and as nobody; `process` is the control.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from agent_python import PYTHON, SITE, TESTS, skip_if_closed
from conftest import SuiteWriter
from passhat.store import Store
from sandbox_helpers import ATTACK_MARKS, passhat_as

pytestmark = ATTACK_MARKS


def _suite(folder: Path, home: Path, reads: list[Path]) -> Path:
    """A suite whose agent (tests/attack49_agent.py) runs under a virtualenv made, as its
    pyvenv.cfg says, from a Python in `home`/bin, and reads `reads`."""
    venv = folder / "venv"
    (venv / "bin").mkdir(parents=True)
    version = ".".join(str(n) for n in sys.version_info[:3])
    (venv / "pyvenv.cfg").write_text(
        f"home = {home / 'bin'}\ninclude-system-site-packages = false\nversion = {version}\n"
    )
    os.symlink(str(PYTHON), venv / "bin" / "python")
    (folder / "work").mkdir()
    shutil.copyfile(TESTS / "attack49_agent.py", folder / "work" / "agent.py")
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {  # type: ignore[index]
        "command": [str(venv / "bin" / "python"), str(folder / "work" / "agent.py")],
        "env": {"ATTACK_READ": ",".join(str(p) for p in reads)},
    }
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


@pytest.mark.parametrize("level", ["namespace", "process"])
def test_a_virtualenv_of_a_python_in_home_keeps_home_out_of_view(
    user: str, open_tmp: Path, level: str
) -> None:
    home = open_tmp / "home"
    (home / "bin").mkdir(parents=True)
    (home / "project").mkdir()
    notes, goal = home / "notes.txt", home / "project" / "answers.yaml"
    notes.write_text("the user's own notes\n")
    goal.write_text("goal: AC 3 inconsistent_with_description\n")
    suite = _suite(open_tmp, home, [notes, goal])
    for item in [open_tmp, *open_tmp.rglob("*")]:
        if not item.is_symlink():
            item.chmod(0o777 if item.is_dir() else 0o666)
    db = open_tmp / "p.db"
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    done = passhat_as(user, open_tmp, "run", str(suite), *args, "--no-report", home=home)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    read = run.output["read"]
    if level == "process":  # the control: nothing is hidden there
        assert read == {str(notes): "the user's own notes\n", str(goal): goal.read_text()}
    else:
        assert read == {str(notes): None, str(goal): None}, "HOME was in the run's view"


def test_the_view_of_a_python_in_home_is_its_bin_and_its_standard_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passhat.agents.sandbox import runtime_paths

    home = tmp_path / "home"
    stdlib = home / "lib" / "python3.11"
    stdlib.mkdir(parents=True)
    (stdlib / "os.py").write_text("")
    (home / "lib" / "libpython3.11.so.1.0").write_text("")
    (home / "lib" / "other.so").write_text("")
    (home / "bin").mkdir()
    (home / "bin" / "python3.11").write_text("")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {home / 'bin'}\n")
    os.symlink("/usr/bin/python3", venv / "bin" / "python")
    monkeypatch.setenv("HOME", str(home))
    wanted = runtime_paths([str(venv / "bin" / "python")], {}, [])
    assert sorted(wanted) == sorted(
        str(p.resolve())
        for p in [venv, home / "bin", stdlib, home / "lib" / "libpython3.11.so.1.0"]
    )
    # the same Python under a prefix of its own: the prefix, as before
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    assert sorted(runtime_paths([str(venv / "bin" / "python")], {}, [])) == sorted(
        str(p.resolve()) for p in [venv, home]
    )


def _agent_suite(folder: Path, command: list[str], env: dict[str, str]) -> Path:
    writer = SuiteWriter(folder / "suite")
    writer.suite["defaults"]["model"] = "replay:tape.jsonl"  # type: ignore[index]
    writer.suite["defaults"]["agent"] = {"command": command, "env": env}  # type: ignore[index]
    writer.files["tape.jsonl"] = json.dumps({"cassette": 1, "model": "t", "note": "t"}) + "\n"
    return writer.write()


def _reads(user: str, folder: Path, suite: Path, level: str, home: Path) -> dict[str, str]:
    for item in [folder, *folder.rglob("*")]:
        item.chmod(0o777)  # the script agent runs as another uid under a root passhat
    db = folder / "p.db"
    args = ["-k", "1", "--timeout", "60", "--isolation", level, "--db", str(db), "-q"]
    done = passhat_as(user, folder, "run", str(suite), *args, "--no-report", home=home)
    assert done.returncode in (0, 1), done.stderr
    with Store(db, create=False) as store:
        (run,) = store.runs(store.experiment("latest").id)
    assert run.output is not None, run.error_message
    read: dict[str, str] = run.output["read"]
    return read


@pytest.mark.parametrize("how", ["./agent.py", "PYTHONPATH=its folder", "PYTHONPATH=HOME"])
@pytest.mark.parametrize("level", ["namespace", "process"])
def test_what_lies_beside_a_script_agent_or_on_its_pythonpath_stays_covered(
    user: str, open_tmp: Path, level: str, how: str
) -> None:
    home, work = open_tmp / "home", open_tmp / "work"
    home.mkdir()
    work.mkdir()
    agent = work / "agent.py"
    agent.write_text(f"#!{PYTHON}\n" + (TESTS / "attack49_agent.py").read_text())
    secrets = {
        work / ".env": "OPENAI_API_KEY=sk-the-users-real-key\n",
        work / ".netrc": "machine api.example.com password hunter2\n",
        home / "notes.txt": "the user's own notes\n",
    }
    for path, text in secrets.items():
        path.write_text(text)
    env = {"ATTACK_READ": ",".join(str(p) for p in secrets)}
    command = [str(agent)] if how == "./agent.py" else [str(PYTHON), str(agent)]
    if how.startswith("PYTHONPATH"):
        env["PYTHONPATH"] = str(work if how.endswith("folder") else home)
    read = _reads(user, open_tmp, _agent_suite(open_tmp, command, env), level, home)
    if level == "process":  # the control: nothing is hidden there
        assert read == {str(p): text for p, text in secrets.items()}
    else:
        assert read == dict.fromkeys(map(str, secrets)), f"{how}: read in the run's view"


def test_the_packages_on_pythonpath_keep_their_certificates(user: str, open_tmp: Path) -> None:
    skip_if_closed()  # the run reads this virtualenv's packages, in the checkout
    certifi = Path(SITE) / "certifi" / "cacert.pem"
    if not certifi.is_file():
        pytest.skip("no certifi in this virtualenv")
    (open_tmp / "work").mkdir()
    agent = open_tmp / "work" / "agent.py"
    shutil.copyfile(TESTS / "attack49_agent.py", agent)
    env = {"ATTACK_READ": str(certifi), "PYTHONPATH": SITE}
    suite = _agent_suite(open_tmp, [str(PYTHON), str(agent)], env)
    read = _reads(user, open_tmp, suite, "namespace", open_tmp)
    assert read[str(certifi)] is not None, "a package's certificates were covered"
