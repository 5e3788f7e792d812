"""No import circle in src/: the layers run one way (DESIGN: suite -> environment /
agent / model -> runner / executor -> store -> analysis / statistics -> report / CLI).

Every import counts, those inside functions too (a lazy import is still a
dependency: runner.py imported executors/local.py, which imported runner.py back,
until the run itself moved to execution.py); only `if TYPE_CHECKING:` blocks are left
out, since they never run."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in SRC.rglob("*.py")}


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _known(name: str) -> str | None:
    """The module of ours `name` is, or lies in (an attribute of a module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> set[str]:
    """The modules of passhat that `module` imports, anywhere but under TYPE_CHECKING."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if _type_checking(node) for n in ast.walk(node)}
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str | None] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(_known(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in MODULES else _known(source))
    return {m for m in found if m is not None and m != module}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_finder_sees_a_circle() -> None:
    """The check can fail: the circle it was written for, drawn again."""
    graph = {"runner": {"executors.local"}, "executors.local": {"runner"}, "store": set()}
    assert cycles(graph) == [["executors.local", "runner"]]


def test_imports_are_read_from_functions_and_relative_forms() -> None:
    assert "passhat.execution" in imports("passhat.executors.local")  # inside run()
    assert "passhat.executors.base" in imports("passhat.runner")
    assert "passhat.runner" not in imports("passhat.executors.local")


def test_no_module_of_passhat_imports_itself_back() -> None:
    assert len(MODULES) > 50
    graph = {module: imports(module) for module in MODULES}
    assert cycles(graph) == []


def _named(package: str) -> set[str]:
    """The modules of passhat that `package` (or any module in it) names anywhere,
    `if TYPE_CHECKING:` included."""
    found: set[str | None] = set()
    for module, path in MODULES.items():
        if module == package or module.startswith(package + "."):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found |= {
                _known(n.module)
                for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.module
            }
    return {m for m in found if m is not None}


def test_results_and_evaluation_are_not_a_circle_even_for_types() -> None:
    """passhat.evaluation returns results.Experiment; results.py holds Outcome, so it
    names nothing of passhat.evaluation (it once imported Outcome back under
    TYPE_CHECKING)."""
    assert "passhat.results" in _named("passhat.evaluation")
    assert not any(m.startswith("passhat.evaluation") for m in _named("passhat.results"))
