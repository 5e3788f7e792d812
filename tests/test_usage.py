"""passhat.usage: token totals per case, the same whichever way they are summed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from passhat.usage import Prices, usage_by_case, usage_of, usage_total

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
