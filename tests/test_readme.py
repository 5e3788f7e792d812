"""The README agrees with the code: its links exist, every option it names is an
option of a command, its agent examples run, and the make targets it names exist."""

from __future__ import annotations

import re
import shutil
import subprocess
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
    assert named - _all_options() == set()


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
