"""A suite at a glance: cases, labels, goal items, fixtures and hashes (`passhat check`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.plain import plural
from passhat.scoring import get_path, item_string, sorted_items
from passhat.suite import Case, ExactSetSpec, Suite

if TYPE_CHECKING:
    from passhat.models.replay import CassetteCheck


def _goal_items(suite: Suite, case: Case) -> list[str]:
    """The goal's items of every set scorer (prefixed by path when there are several);
    scorers that read the same path with the same item template list them once
    (`subset: X` beside `superset: X` is one set of goal items, judged two ways)."""
    specs = list(
        {
            (s.path, s.item): s for s in suite.defaults.scorers if isinstance(s, ExactSetSpec)
        }.values()
    )
    out: list[str] = []
    for spec in specs:
        value = get_path(case.goal, spec.path)
        items = sorted_items(item_string(i, spec.item) for i in value)
        prefix = f"{spec.path}: " if len(specs) > 1 else ""
        out += [prefix + item for item in items] or [prefix + "none"]
    return out


def tool_signature(name: str, parameters: dict[str, object]) -> str:
    """`update_ticket(key, goal, scope_in, ...)`: a tool as an agent calls it; an
    optional argument in brackets. The whole schema is `env.tools[i].parameters`."""
    properties = parameters.get("properties")
    required = parameters.get("required")
    names = list(properties) if isinstance(properties, dict) else []
    needed = set(required) if isinstance(required, list) else set()
    args = [n if n in needed else f"[{n}]" for n in names]
    return f"{name}({', '.join(args)})"


def _tools(suite: Suite) -> list[str]:
    from passhat.env import make_environment

    if not suite.cases:
        return []
    env = make_environment(suite, suite.cases[0])
    return [tool_signature(t.name, t.parameters) for t in env.tools]


def _grid() -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


MAX_SUMMARY = 400
"""Characters of the description's first paragraph `check` shows: rich folds a long line
in a table cell in time that grows with the square of its length (an 8 MB description
on one line took 38 s)."""


def _summary(text: str) -> str:
    """The description's first paragraph on one line, at most MAX_SUMMARY characters
    (a longer one ends with how long it is: suite.yaml holds the rest)."""
    paragraph = text.strip().split("\n\n", 1)[0]
    shown = " ".join(line.strip() for line in paragraph[: MAX_SUMMARY + 1].splitlines())
    if len(paragraph) <= MAX_SUMMARY:
        return shown
    return f"{shown[:MAX_SUMMARY].rstrip()}… ({len(paragraph):,} characters: suite.yaml has it all)"


def print_suite(out: Console, suite: Suite, *, limit: int | None = None) -> None:
    """The summary `passhat check` prints, listing the first `limit` cases (None: all).
    Every user string enters as Text, never markup."""
    d = suite.defaults
    out.print(Text.assemble(("suite ", "bold"), (suite.name, "bold cyan")))
    head = _grid()
    head.add_row("path", Text(str(suite.path)))
    if suite.description:
        head.add_row("about", Text(_summary(suite.description)))
    head.add_row("environment", Text(suite.environment))
    head.add_row("labels", Text(", ".join(suite.labels) or "none"))
    head.add_row(
        "defaults",
        Text(f"agent {d.agent}, model {d.model or 'none'}, k {d.k}, max_turns {d.max_turns}"),
    )
    for signature in _tools(suite):
        head.add_row("tool", Text(signature))
    for spec in d.scorers:
        head.add_row("scorer", Text(spec.described()))
    head.add_row("hash", Text(suite.hash))
    out.print(head)

    fixtures_total = sum(len(items) for case in suite.cases for items in case.fixtures.values())
    listed = suite.cases if limit is None else suite.cases[:limit]
    for case in listed:
        out.print()
        title = Text.assemble((case.id, "bold"), "  ", (case.hash[:12], "dim"))
        if case.tags:
            title.append("  " + ", ".join(case.tags), style="dim")
        out.print(title)
        fixtures = [f"{tool} ×{len(items)}" for tool, items in sorted(case.fixtures.items())]
        body = _grid()
        body.add_row("  goal", Text(", ".join(_goal_items(suite, case))))
        body.add_row("  fixtures", Text(", ".join(fixtures) or "none"))
        out.print(body)
    out.print()
    count = len(suite.cases)
    if len(listed) < count:
        more = count - len(listed)
        line = f"... and {more:,} more case{'s' if more != 1 else ''} (--all lists every case)"
        out.print(Text(line))
        out.print()
    out.print(
        Text(
            f"valid: {count} case{'s' if count != 1 else ''}, {fixtures_total} recorded "
            f"fixture response{'s' if fixtures_total != 1 else ''}",
            style="green",
        )
    )


def print_cassettes(out: Console, suite: Suite, checks: Sequence[CassetteCheck]) -> None:
    """One line per cassette that fits the format: the answers, cases and runs it
    covers (an answer for a case the suite lacks is a problem `check` stops at)."""
    case_ids = {case.id for case in suite.cases}
    for check in checks:
        if check.missing:
            out.print(
                Text(
                    f"cassette {check.path}: not found (a relative path starts beside "
                    "suite.yaml); run needs it unless --model names another model",
                    style="yellow",
                )
            )
            continue
        covered = sorted(case_ids & check.runs.keys())
        runs = sum(len(check.runs[case]) for case in covered)
        out.print(
            Text(
                f"cassette {check.path.name}: {plural(check.answers, 'answer')} covering "
                f"{len(covered)} of {plural(len(case_ids), 'case')} "
                f"({plural(runs, 'run')})",
                style="green",
            )
        )
