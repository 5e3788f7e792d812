"""`audit --strict` on tests/claim_wordings_external3.yaml: a third held-out corpus of
over-claims and consistent texts excerpted from public write-ups (agent- and LLM-evaluation
READMEs and reports, run scripts, configs, LaTeX and markdown tables; English, Chinese,
Japanese and a few other languages) by a helper (branch heldout34c) who had not read the
claim reader, its grammar, its docs or the other wording corpora, committed before any
measurement on it, while the reader was being worked on by somebody who never saw it.

THE TARGET IS MISSED. Measured once, by the lead on main at 6f13b1c after that round's
claim-reader work: caught 105 of 129 over-claims (0.814), passed 94 of 118 consistent
folders (0.797), the same in both layouts. Those counts are asserted as floors, so the
reader cannot regress; raise them when it does better, never tune it to a wording here
(add such a wording to the development corpus instead)"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_claims import LAYOUTS
from test_claims_external import corpus, external_counts, held_to_floors, well_formed

CAUGHT_FLOOR = 105
"""Over-claims failed by `audit --strict` when first scored (of 129): below the target."""
PASSED_FLOOR = 94
"""Consistent folders passed when first scored (of 118): below the target."""

POSITIVE, NEGATIVE = corpus("claim_wordings_external3.yaml")


def test_the_corpus_is_large_enough_and_every_entry_names_its_source() -> None:
    assert len(POSITIVE) >= 120 and len(NEGATIVE) >= 110 and well_formed(POSITIVE, NEGATIVE)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_third_external_wordings_do_not_regress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    found = external_counts(tmp_path, capsys, layout, POSITIVE, NEGATIVE)
    held_to_floors(f"external3, {layout}", found, (len(POSITIVE), len(NEGATIVE)))
    assert found[0] >= CAUGHT_FLOOR and found[1] >= PASSED_FLOOR, found[2]
