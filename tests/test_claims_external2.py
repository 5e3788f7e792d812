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
from typing import Any

import pytest
import yaml

from test_claims import LAYOUTS, _entries, _strict
from test_claims_external import TARGET_CAUGHT, TARGET_PASSED

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


def strict_codes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    layout: str,
    entries: list[dict[str, Any]],
) -> list[int]:
    """The exit code of `audit --strict` on a one-run-per-configuration folder per entry."""
    return [
        _strict(capsys, tmp_path / str(number), entry, layout)[0]
        for number, entry in enumerate(entries)
    ]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_second_external_wordings_do_not_regress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    codes = strict_codes(tmp_path, capsys, layout, POSITIVE + NEGATIVE)
    over, consistent = codes[: len(POSITIVE)], codes[len(POSITIVE) :]
    caught, passed = over.count(1), consistent.count(0)
    misses = [
        f"over-claim passed ({c}): {e['text']!r}"
        for e, c in zip(POSITIVE, over, strict=True)
        if c != 1
    ]
    misses += [
        f"consistent folder failed ({c}): {e['text']!r}"
        for e, c in zip(NEGATIVE, consistent, strict=True)
        if c != 0
    ]
    rates = f"caught {caught}/{len(POSITIVE)} = {caught / len(POSITIVE):.3f}"
    rates += f", passed {passed}/{len(NEGATIVE)} = {passed / len(NEGATIVE):.3f}"
    met = caught >= TARGET_CAUGHT * len(POSITIVE) and passed >= TARGET_PASSED * len(NEGATIVE)
    print(f"external2, {layout}: {rates}; target {'met' if met else 'MISSED'}")
    print("\n".join(misses))
    assert caught >= CAUGHT_FLOOR and passed >= PASSED_FLOOR, misses
