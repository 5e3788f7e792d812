"""The README agrees with the code: its links exist, every option it names is an
option of a command, its agent examples run, and the make targets it names exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from cli_helpers import CLARIFY, ROOT, SEED, run_cli
from passhat.cli import app

README = (ROOT / "README.md").read_text(encoding="utf-8")
GROUP = typer.main.get_command(app)


def _all_options() -> set[str]:
    names = {"--version", "-h", "--help"}
    commands = list(GROUP.commands.values())  # type: ignore[attr-defined]
    while commands:
        command = commands.pop()
        commands.extend(getattr(command, "commands", {}).values())  # `import inspect` ...
        for param in command.params:
            names.update(getattr(param, "opts", ()))
    return names


def test_every_link_points_to_a_file_in_the_repo() -> None:
    """Was: a pointer to a DESIGN.md that is not in the repo."""
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links
    for link in links:
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link
    assert "docs/design.md" in links


def test_every_option_named_is_an_option_of_some_command() -> None:
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", README))
    assert {"--html", "--lang", "--concurrency", "--timeout", "--price"} <= named
    plugin = {n for n in named if n.startswith("--passhat-")}  # pytest's options, not passhat's
    assert plugin == {"--passhat-k", "--passhat-db"}
    source = (ROOT / "src" / "passhat" / "pytest_plugin.py").read_text(encoding="utf-8")
    assert all(f'"{option}"' in source for option in plugin)
    assert named - plugin - _all_options() == set()


def test_every_command_named_exists() -> None:
    named = set(re.findall(r"^passhat (\w+)", README, re.M))
    assert named and named <= set(GROUP.commands)  # type: ignore[attr-defined]


def test_make_targets_named_exist() -> None:
    """Was: no way from a checkout to the model SDKs."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    targets = set(re.findall(r"`make ([\w-]+)`", README))
    assert {"install-openai", "install-anthropic"} <= targets
    for target in targets:
        done = subprocess.run(
            [make, "-n", "-C", str(ROOT), target], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
    dry = subprocess.run(
        [make, "-n", "-C", str(ROOT), "install-openai"], capture_output=True, text=True, check=True
    ).stdout
    assert "pip install -q -e '.[openai]'" in dry


def test_the_agent_examples_run_on_the_seed_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The "Your own agent" code, as printed, run against the seed's replayed answers."""
    block = README.split("### Your own agent")[1].split("```python\n")[1].split("```")[0]
    (tmp_path / "readme_agents.py").write_text(block, encoding="utf-8")
    db = str(tmp_path / "p.db")
    for name in ("my_agent", "by_hand"):
        agent = f"{tmp_path / 'readme_agents.py'}:{name}"
        r = run_cli(
            capsys, "run", str(CLARIFY), "--case", SEED, "--agent", agent, "-k", "1", "--db", db
        )
        assert r.code == 0, r.err
        assert "counted 1" in r.out, r.out


def _block(section: str) -> str:
    return README.split(section)[1].split("```python\n")[1].split("```")[0]


def _beside_examples(tmp_path: Path) -> Path:
    """A folder where `examples/clarify` is the repository's, for code that names it so."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


def test_the_from_python_example_runs_and_prints_what_it_says(tmp_path: Path) -> None:
    here = _beside_examples(tmp_path)
    (here / "example.py").write_text(_block("## From Python"), encoding="utf-8")
    env = {**os.environ, "PASSHAT_DB": str(here / "p.db")}
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=here, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    said = [line[2:] for line in _block("## From Python").splitlines() if line.startswith("# ")]
    assert len(said) == 7
    for line in said:  # the id is the experiment's own
        pattern = re.escape(line).replace("1f3c0a9e", "[0-9a-f]{8}")
        assert any(re.fullmatch(pattern, out) for out in printed), (line, printed)
    assert "0.5 0.5 0.5" in printed
    assert (here / "report.html").is_file()


def test_the_under_pytest_example_runs(tmp_path: Path) -> None:
    here = _beside_examples(tmp_path)
    (here / "test_example.py").write_text(_block("## Under pytest"), encoding="utf-8")
    store = ("--passhat-db", str(here / "p.db"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "test_example.py", "-p", "no:cacheprovider", *store],
        cwd=here,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert done.stdout.count("runs requested 3, counted 3, errored 0, missing 0") == 2
