"""docs/design.md's module map and the README's layout lines agree with src/passhat:
every module and package is on the map, and every name either names exists.

Was: the map still said evaluation.py, divergence.py and report/terminal.py after
they became packages, and named neither view/ nor signatures.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "passhat"
NAME = re.compile(r"(?<![\w./-])(\w+(?:\.py|/))(?![\w])")


def _block(text: str) -> list[str]:
    """The indented lines of the code block that starts with `src/passhat/` (the lines
    after it that start at the margin, examples/ and tests/, are not in src/)."""
    lines = text.split("src/passhat/\n", 1)[1].splitlines()
    end = next(i for i, line in enumerate(lines) if not line.startswith(" "))
    return lines[:end]


def _entries(lines: list[str]) -> dict[str, str]:
    """Each name of the first column (`  store/  ...`), with its description and the
    indented lines under it, up to the next name."""
    entries: dict[str, str] = {}
    names: list[str] = []
    for line in lines:
        column, _, rest = line.strip().partition("  ")
        if not line.startswith("   "):  # a new entry: its names, then the description
            names = [n for n in column.split() if n.endswith((".py", "/"))]
            entries.update(dict.fromkeys(names, ""))
        else:
            rest = line
        for n in names:
            entries[n] += " " + rest.strip()
    return entries


def _tree() -> set[str]:
    """The modules and packages directly in src/passhat, as the map writes them."""
    found = set()
    for p in SRC.iterdir():
        if p.suffix == ".py" and p.stem not in ("__init__", "__main__"):
            found.add(p.name)
        elif p.is_dir() and (p / "__init__.py").is_file():
            found.add(p.name + "/")
    return found


DESIGN = _entries(_block((ROOT / "docs" / "design.md").read_text(encoding="utf-8")))
README = _entries(_block((ROOT / "README.md").read_text(encoding="utf-8")))


def test_the_reader_finds_the_names_of_a_map() -> None:
    """The check can fail: a map of one line names what it names."""
    lines = ["  store/            SQLite (schema.py, reads.py)", "  gone.py           old"]
    lines += ["                    more of gone.py", "  a.py b/   two"]
    assert _entries(lines) == {
        "store/": " SQLite (schema.py, reads.py)",
        "gone.py": " old more of gone.py",
        "a.py": " two",
        "b/": " two",
    }


def test_every_module_and_package_is_on_the_design_map() -> None:
    assert sorted(_tree() - set(DESIGN)) == []


def test_every_name_on_the_design_map_exists() -> None:
    assert sorted(set(DESIGN) - _tree()) == []


def test_the_files_a_package_entry_names_are_in_that_package() -> None:
    """`report/ ... terminal/ ... phrases.py`: each file or folder an entry names in its
    description is somewhere in the package."""
    stale = []
    for name, description in DESIGN.items():
        if not name.endswith("/"):
            continue
        inside = {p.name for p in (SRC / name).rglob("*.py")}
        inside |= {p.name + "/" for p in (SRC / name).rglob("*") if p.is_dir()}
        for named in NAME.findall(description):
            if named not in inside:
                stale.append(f"{name} {named}")
    assert stale == []


def test_the_readme_layout_names_every_public_module_and_nothing_else() -> None:
    public = {n for n in _tree() if not n.startswith("_")}
    assert sorted(public - set(README)) == []
    assert sorted(set(README) - _tree()) == []


def test_every_module_of_a_package_is_named_in_its_entry() -> None:
    """The map places each module, not only each package: `agents/` named base.py, loop.py
    and clarifier.py nowhere, `cli/` none of its command modules, `envs/` and `sources/`
    their worlds and readers by subject alone."""
    unplaced = []
    for name, description in DESIGN.items():
        if not name.endswith("/"):
            continue
        named = set(NAME.findall(description))
        for path in sorted((SRC / name).rglob("*")):
            if "__pycache__" in path.parts or path.name == "__init__.py":
                continue
            if path.suffix == ".py" or path.is_dir():
                shown = path.name + ("/" if path.is_dir() else "")
                if shown not in named:
                    unplaced.append(str(path.relative_to(SRC)))
    assert unplaced == []
