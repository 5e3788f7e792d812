"""`audit --strict` on tests/claim_wordings_external.yaml: over-claims and consistent texts
excerpted from public write-ups by a helper who had not read the claim reader, its grammar or
the other wording corpora, committed before the first measurement. Each entry is put in a
folder holding ONE graded run per configuration, in both layouts of tests/test_claims.py; an
over-claim must fail the folder (exit 1), a consistent text must pass it (exit 0).

The issue's target is to catch >= 90 % of the over-claims and pass >= 95 % of the consistent
folders in each layout. THE TARGET IS MISSED: the first scoring (main at a1d3175, before any
change made with this file in view) caught 58 of 74 over-claims (0.784) and passed 45 of 49
consistent folders (0.918), the same in both layouts. Those counts are asserted as floors, so
the reader cannot regress; raise them when it does better, and never tune it to a wording
here (add such a wording to the development corpus instead)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from test_claims import LAYOUTS, _entries, _strict

EXTERNAL = yaml.safe_load(
    (Path(__file__).parent / "claim_wordings_external.yaml").read_text("utf-8")
)
POSITIVE = _entries(EXTERNAL["positive"])
NEGATIVE = _entries(EXTERNAL["negative"])

TARGET_CAUGHT = 0.90
TARGET_PASSED = 0.95
"""Issue 34's bar for a held-out corpus nobody tuned to, in each layout."""

CAUGHT_FLOOR = 58
"""Over-claims failed by `audit --strict` when first scored (of 74): below TARGET_CAUGHT."""
PASSED_FLOOR = 45
"""Consistent folders passed when first scored (of 49): below TARGET_PASSED."""


def test_the_corpus_is_large_enough_and_every_entry_names_its_source() -> None:
    assert len(POSITIVE) >= 60 and len(NEGATIVE) >= 30
    assert all(e["k"] >= 2 for e in POSITIVE)
    assert all(e.get("source") for e in POSITIVE + NEGATIVE)


def external_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> tuple[int, int, list[str]]:
    """(over-claims caught, consistent folders passed, misses) in one layout."""
    caught = passed = 0
    misses = []
    for number, entry in enumerate(POSITIVE + NEGATIVE):
        code, _ = _strict(capsys, tmp_path / str(number), entry, layout)
        wanted = 1 if number < len(POSITIVE) else 0
        caught += wanted == 1 and code == 1
        passed += wanted == 0 and code == 0
        if code != wanted:
            kind = "over-claim passed" if wanted else "consistent folder failed"
            misses.append(f"{kind} ({code}): {entry['text']!r}")
    return caught, passed, misses


@pytest.mark.parametrize("layout", LAYOUTS)
def test_external_wordings_do_not_regress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    """Not the issue's target (see the module docstring): the first measurement, as a floor."""
    caught, passed, misses = external_counts(tmp_path, capsys, layout)
    rates = f"caught {caught}/{len(POSITIVE)} = {caught / len(POSITIVE):.3f}"
    rates += f", passed {passed}/{len(NEGATIVE)} = {passed / len(NEGATIVE):.3f}"
    met = caught >= TARGET_CAUGHT * len(POSITIVE) and passed >= TARGET_PASSED * len(NEGATIVE)
    print(f"external, {layout}: {rates}; target {'met' if met else 'MISSED'}")
    print("\n".join(misses))
    assert caught >= CAUGHT_FLOOR and passed >= PASSED_FLOOR, misses
