"""passhat.report.terminal.shown_cases: the bounded tables list the short cases first,
then the rest, in the accounting's order; the scan stops as soon as it can."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from cli_helpers import run_cli, run_seed
from passhat.accounting import Accounting, CaseAccount
from passhat.report.terminal import shown_cases


def by_definition(accounting: Accounting, limit: int | None) -> list[CaseAccount]:
    """The rule as first written: short cases first, then the rest, up to `limit`."""
    if limit is None or len(accounting.cases) <= limit:
        return list(accounting.cases)
    short = [c for c in accounting.cases if not c.complete]
    rest = [c for c in accounting.cases if c.complete]
    chosen = {id(c) for c in (short + rest)[:limit]}
    return [c for c in accounting.cases if id(c) in chosen]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), max_size=40),
    st.one_of(st.none(), st.integers(0, 45)),
)
def test_shown_cases_are_the_short_then_the_rest_in_order(
    cases: list[tuple[int, int]], limit: int | None
) -> None:
    accounting = Accounting(
        3,
        tuple(
            CaseAccount(f"c{i}", k, min(counted, k), min(counted, k), 0, (), ())
            for i, (counted, k) in enumerate(cases)
        ),
    )
    assert shown_cases(accounting, limit) == by_definition(accounting, limit)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab :[]/-\n😀"), max_size=12))
def test_a_panel_title_renders_as_rich_renders_the_str(title: str) -> None:
    """Guards `panel_title`: given as `Text` only when rich's markup and emoji codes
    would leave the str as it is, so every title prints the same either way."""
    import io

    from rich.console import Console
    from rich.errors import MarkupError
    from rich.panel import Panel

    from passhat.report.terminal import panel_title

    def printed(value: object) -> str:
        out = io.StringIO()
        try:
            Console(file=out, width=40, color_system=None).print(Panel("x", title=value))  # type: ignore[arg-type]
        except MarkupError as error:  # a str title that is bad markup fails alike
            return f"error: {error}"
        return out.getvalue()

    assert printed(panel_title(title)) == printed(title)


def test_the_command_shows_an_emoji_code_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Guards the CLI consoles' emoji=False: a path holding `:smile:` is printed as
    the user wrote it, not turned into a picture."""
    db = tmp_path / "p.db"
    assert run_seed(capsys, "--db", str(db), "-k", "1", "--no-report").code == 0
    html = tmp_path / "a:smile:b.html"
    r = run_cli(capsys, "report", "latest", "--db", str(db), "--html", str(html))
    assert r.code == 0, r.err
    assert "a:smile:b.html" in r.err.replace("\n", "")


def test_report_html_prints_the_path_alone_unless_verbose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#29: report --html FILE also printed the whole terminal report."""
    db = tmp_path / "p.db"
    # a 4th run has no answer in the cassette: errored, so 3 of 4 runs are counted
    assert run_seed(capsys, "--db", str(db), "-k", "4", "--no-report").code == 0
    page = tmp_path / "page.html"
    r = run_cli(capsys, "report", "latest", "--db", str(db), "--html", str(page))
    assert r.code == 0, r.err
    assert r.out == ""
    assert str(page) in r.err.replace("\n", "") and page.is_file()
    # --strict still judges the accounting without printing it
    assert (
        run_cli(capsys, "report", "latest", "--db", str(db), "--html", str(page), "--strict").code
        == 1
    )
    r = run_cli(capsys, "report", "latest", "--db", str(db), "--html", str(page), "-v")
    assert r.code == 0 and "pass^3" in r.out


def test_list_takes_two_lines_an_experiment_at_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#29: `list` took four lines an experiment (date and time on two, a blank line
    between experiments) at 80 columns."""
    from passhat.report.parts import experiments_table
    from passhat.store import Store

    db = tmp_path / "p.db"
    for _ in range(3):
        assert run_seed(capsys, "--db", str(db), "-k", "1", "--no-report").code == 0
    with Store(db) as store:
        experiments = store.experiments()
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(
        experiments_table(experiments, {}, title=str(db))
    )
    lines = out.getvalue().splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("──"))
    body = lines[rule + 1 : -1]  # title and header above the rule, the caption last
    assert len(body) == 2 * len(experiments), out.getvalue()
    assert all(len(line.rstrip()) <= 80 for line in lines)
    assert "clarify · clarifier" in body[0] and "replay:cassettes/seed.jsonl" in body[1]


def test_the_usage_line_of_a_comparison_says_each_side_and_the_change() -> None:
    """Guards `usage_line`: cost per run when both sides have prices, else tokens per run,
    each side and B - A with its relative change (none beside a zero)."""
    from passhat.report.terminal import usage_line
    from passhat.usage import TokenUsage

    a, b = TokenUsage(10, 1_000, 500, 0.02), TokenUsage(5, 1_500, 250, 0.015)
    assert usage_line(a, b) == "cost per run: A 0.002, B 0.003; B − A +0.001 (+50%)"
    a, b = TokenUsage(10, 12_000, 0, None), TokenUsage(10, 1_000, 0, None)
    assert usage_line(a, b) == "tokens per run: A 1,200, B 100; B − A -1,100 (-92%)"
    zero = TokenUsage(10, 0, 0, 0.0)
    assert (
        usage_line(zero, TokenUsage(10, 10, 0, 0.01)) == "cost per run: A 0, B 0.001; B − A +0.001"
    )
