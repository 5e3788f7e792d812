"""The seed's table as a pytest run: the coupon card ac-conflict-001, three runs
replayed from the bundled cassette, every one of them failing.

    pytest examples/pytest                      # k = 3, as in the seed
    pytest examples/pytest --passhat-k 6        # more runs per case (the cassette
                                                # answers 3: runs 4-6 error, and the
                                                # tests say so instead of counting them)
    passhat report latest                       # the whole report of the last test

The suite path is read from this folder (../clarify is examples/clarify).
"""

from __future__ import annotations

import pytest

from passhat.pytest_plugin import PasshatEval, PasshatResult

SUITE = "../clarify"
CARD = "ac-conflict-001"


@pytest.mark.passhat(SUITE, case=CARD, k=3)
def test_the_seed_table(passhat_result: PasshatResult) -> None:
    """The seed's numbers, with the runs behind them: 0/3 passes, pass@3 no, pass^3 no."""
    assert (passhat_result.requested, passhat_result.counted, passhat_result.errored) == (3, 3, 0)
    assert passhat_result.passes == 0
    assert passhat_result.pass_rate == 0.0
    assert passhat_result.pass_at_k == 0.0  # not once in 3 tries
    assert passhat_result.pass_hat_k == 0.0  # so never 3 in a row


def test_which_items_are_missed(passhat_eval: PasshatEval) -> None:
    """What went wrong, from the same result: AC3's inconsistency is missed every
    time, AC7's unverifiability once (the seed's item stability)."""
    result = passhat_eval(SUITE, case=CARD, k=3)
    missed = {s.item: s.misses for s in result.experiment.items if s.expected and s.misses}
    assert missed["AC3:inconsistent_with_description"] == (1, 2, 3)
    assert missed["AC7:unverifiable"] == (2,)
