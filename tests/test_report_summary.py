"""passhat.report.summary: the JSON-ready accounting, built per case shape for speed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.accounting import Ledger
from passhat.report.summary import case_dict, case_dicts

STATUS = st.sampled_from(["passed", "failed", "errored", None])  # None: no record (missing)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.lists(st.lists(STATUS, min_size=6, max_size=6), max_size=25))
def test_case_dicts_equal_case_dict_of_each_case_and_share_no_list(
    k: int, plans: list[list[str | None]]
) -> None:
    """Guards `case_dicts`' per-shape copies: the same dicts as `case_dict` one by one,
    and no two cases share a list (a caller may edit one case's data)."""
    ledger = Ledger()
    for number, statuses in enumerate(plans):
        case = f"case-{number}"
        ledger.expect(case)
        for index, status in enumerate(statuses[:k], start=1):
            if status is not None:
                ledger.add(case, index, status)
    cases = ledger.close(k).cases
    got = case_dicts(cases)
    assert got == [case_dict(c) for c in cases]
    assert [list(d) for d in got] == [list(case_dict(c)) for c in cases]  # key order too
    lists = [id(v) for d in got for v in d.values() if isinstance(v, list)]
    lists += [id(pair) for d in got for pair in d["missing_ranges"]]
    assert len(lists) == len(set(lists))
