"""passhat.usage: token totals per case, the same whichever way they are summed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from passhat.usage import Prices, usage_by_case, usage_of, usage_row, usage_total

RUN = st.tuples(st.sampled_from("abcd"), st.integers(0, 10**6), st.integers(0, 10**6))


@given(
    st.lists(RUN, max_size=40), st.none() | st.builds(Prices, st.floats(0, 10), st.floats(0, 10))
)
def test_usage_by_case_is_usage_of_each_case(
    runs: list[tuple[str, int, int]], prices: Prices | None
) -> None:
    """Guards the running totals of `usage_by_case`: per case (first-seen order) the
    same TokenUsage as `usage_of` over that case's runs, cost included."""
    want = {
        case: usage_of([(i, o) for c, i, o in runs if c == case], prices)
        for case in dict.fromkeys(c for c, _, _ in runs)
    }
    got = usage_by_case(runs, prices)
    assert got == want
    assert list(got) == list(want)


@given(
    st.lists(RUN, max_size=40), st.none() | st.builds(Prices, st.floats(0, 10), st.floats(0, 10))
)
def test_usage_total_of_the_cases_is_usage_of_every_run(
    runs: list[tuple[str, int, int]], prices: Prices | None
) -> None:
    """Guards the report's total from its per-case totals (one pass over the runs)."""
    total = usage_total(usage_by_case(runs, prices).values(), prices)
    assert total == usage_of([(i, o) for _, i, o in runs], prices)


@given(
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=12),
    st.none() | st.builds(Prices, st.floats(0, 10), st.floats(0, 10)),
)
def test_usage_row_is_usage_of_as_a_dict(
    runs: list[tuple[int, int]], prices: Prices | None
) -> None:
    """Guards `usage_row` (report --json's per-case rows without a TokenUsage each):
    the same dict as `usage_of(...).to_dict()`, no run at all included."""
    i, o = sum(i for i, _ in runs), sum(o for _, o in runs)
    assert usage_row(len(runs), i, o, prices) == usage_of(runs, prices).to_dict()


def test_usage_table_lists_limit_cases_and_totals_every_run() -> None:
    """Guards the report's usage table, which sums every run in C and totals per case
    only the cases it lists: listed rows as with no limit, the total over all runs."""
    import io
    import re

    from rich.console import Console

    from passhat.records import RunSummary
    from passhat.report.parts import usage_table

    runs = [
        RunSummary(f"c{c:02d}", i, "passed", None, None, 0.1, 100 * c + i, c, None, 1, None, [], {})
        for c in range(12)
        for i in (1, 2, 3)
    ]
    runs = runs[5:] + runs[:5]  # cases listed in first-seen order, wherever they are

    def text(limit: int | None) -> list[str]:
        out = io.StringIO()
        table = usage_table(runs, Prices(1.0, 2.0), limit=limit)
        assert table is not None
        Console(file=out, width=200, color_system=None).print(table)
        return out.getvalue().splitlines()

    every, few = text(None), text(4)
    total = [line for line in every if line.lstrip().startswith("total")]
    assert total and total == [line for line in few if line.lstrip().startswith("total")]
    inputs = sum(r.input_tokens for r in runs)
    assert f"{inputs:,}" in total[0]
    rows = [line.split()[0] for line in few if re.match(r"c\d\d ", line.lstrip())]
    assert rows == ["c01", "c02", "c03", "c04"]
    assert [line for line in few if line.split()[:1] == ["c02"]] == [
        line for line in every if line.split()[:1] == ["c02"]
    ]
