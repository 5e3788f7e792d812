"""passhat.report.terminal.shown_cases: the bounded tables list the short cases first,
then the rest, in the accounting's order; the scan stops as soon as it can."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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
