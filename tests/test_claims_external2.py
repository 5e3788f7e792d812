"""`audit --strict` on tests/claim_wordings_external2.yaml: a second held-out corpus of
over-claims and consistent texts excerpted from public write-ups (agent- and LLM-evaluation
READMEs and reports, run scripts, configs, LaTeX and markdown tables, English and Chinese
write-ups) by a helper who had not read the claim reader, its grammar, its docs or the other
wording corpora, committed before any measurement on it. Each entry is put in a folder holding
ONE graded run per configuration, in both layouts of tests/test_claims.py; an over-claim must
fail the folder (exit 1), a consistent text must pass it (exit 0).

THE TARGET IS MISSED. The first scoring, by the lead on main at 7f61a4d (after this round's
claim-reader work, which never saw this file), caught 72 of 84 over-claims (0.857) and passed
38 of 77 consistent folders (0.494), the same in both layouts: the reader's new settings,
comment and count-alone rules flag training epochs (`num_epochs: 3`), retries, schedules
("每天執行三次"), plans and checklists. Those counts are asserted as floors, so the reader
cannot regress; raise them when it does better, never tune it to a wording here (add such a
wording to the development corpus instead)"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from test_claims import LAYOUTS, _entries
from test_claims_external import external_counts, held_to_floors

CAUGHT_FLOOR = 72
"""Over-claims failed by `audit --strict` when first scored (of 84): below TARGET_CAUGHT."""
PASSED_FLOOR = 38
"""Consistent folders passed when first scored (of 77): below TARGET_PASSED."""

EXTERNAL2 = yaml.safe_load(
    (Path(__file__).parent / "claim_wordings_external2.yaml").read_text("utf-8")
)
POSITIVE = _entries(EXTERNAL2["positive"])
NEGATIVE = _entries(EXTERNAL2["negative"])


def test_the_corpus_is_large_enough_and_every_entry_names_its_source() -> None:
    assert len(POSITIVE) >= 80 and len(NEGATIVE) >= 45
    assert all(isinstance(e["k"], int) and e["k"] >= 2 for e in POSITIVE)
    assert all(e.get("source") and e.get("text") for e in POSITIVE + NEGATIVE)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_second_external_wordings_do_not_regress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    found = external_counts(tmp_path, capsys, layout, POSITIVE, NEGATIVE)
    held_to_floors(f"external2, {layout}", found, (len(POSITIVE), len(NEGATIVE)))
    assert found[0] >= CAUGHT_FLOOR and found[1] >= PASSED_FLOOR, found[2]
