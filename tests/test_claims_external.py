"""`audit --strict` on tests/claim_wordings_external.yaml: over-claims and consistent texts
excerpted from public write-ups by a helper who had not read the claim reader, its grammar or
the other wording corpora, committed before the first measurement. Each entry is put in a
folder holding ONE graded run per configuration, in both layouts of tests/test_claims.py; an
over-claim must fail the folder (exit 1), a consistent text must pass it (exit 0).

The issue's target is to catch >= 90 % of the over-claims and pass >= 95 % of the consistent
folders in each layout. The first scoring (main at a1d3175, before any change made with this
file in view) MISSED it: 58 of 74 over-claims caught (0.784), 45 of 49 consistent folders
passed (0.918), the same in both layouts.

THIS SET IS NO LONGER UNTUNED. In issue 34's third round its misses were read: they named the
families the grammar then learnt (ranges of counts, successes over attempts, settings rows and
environment variables, short flags, qualifiers between count and unit, comments and string
values in data files; totals, conditions and recommendations set aside), each built as a
general rule and developed on new wordings in tests/claim_wordings.yaml, not on the wordings
here; while developing, the misses printed below were seen after each change. It then scored
70 of 74 caught (0.946) and 47 of 49 passed (0.959) in both layouts: the target is met here,
but a figure measured on a set whose misses were read says little about the next set. A fresh
held-out set is the measure. The counts are asserted as floors, so the reader cannot regress;
raise them when it does better, and never tune it to a wording here (add such a wording to the
development corpus instead).

RELABELLED on 2026-12-06. This corpus was written before the label rule of
claim_wordings_external6.yaml was stated (an over-claim says THIS folder's own results rest on
two or more runs per configuration; another work's runs, plans and usage examples are
consistent texts). A second labeller (the rule given, all 1,059 texts of external..external5
shuffled and unlabelled) and a third (the same rule, the disputed texts mixed with as many
agreed ones) both called 8 of its over-claims consistent texts: they were moved to the
consistent texts, each marked `relabelled:`. The floors below are what the reader did on the
corpus so relabelled (main at 8dc675e): caught 64 of 66, passed 47 of 57."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from test_claims import LAYOUTS, _entries, _strict, wordings

Corpus = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def corpus(name: str) -> Corpus:
    """(over-claims, consistent texts) of the wording corpus `name` beside this file."""
    loaded = wordings(name)
    return _entries(loaded["positive"]), _entries(loaded["negative"])


def well_formed(positive: list[dict[str, Any]], negative: list[dict[str, Any]]) -> bool:
    """Every over-claim claims k >= 2, and every entry has its text and names its source."""
    claims = all(isinstance(e["k"], int) and e["k"] >= 2 for e in positive)
    return claims and all(e.get("source") and e.get("text") for e in positive + negative)


POSITIVE, NEGATIVE = corpus("claim_wordings_external.yaml")

TARGET_CAUGHT = 0.90
TARGET_PASSED = 0.95
"""Issue 34's bar for a held-out corpus nobody tuned to, in each layout."""

CAUGHT_FLOOR = 65
"""Over-claims failed by `audit --strict` (of 74): 58 when first scored, 70 after issue 34's
third round (when the set's misses were read, see the module docstring), 71 after the fourth
(a statistic over runs with no count, developed on other wordings), 72 after the seventh
(counts coordinated after a preposition). Relabelled (module docstring): 64 of 66; 65 after the ninth round (a mean written out over
its runs, "(a + b) / 2", developed on wordings of its own, claims46b)."""
PASSED_FLOOR = 51
"""Consistent folders passed (of 49) after issue 34's third round (45 when first scored). Relabelled (module docstring): 47 of 57. 51 after the ninth round (claims46a)."""


def test_the_corpus_is_large_enough_and_every_entry_names_its_source() -> None:
    assert len(POSITIVE) >= 60 and len(NEGATIVE) >= 30
    assert all(e["k"] >= 2 for e in POSITIVE)
    assert all(e.get("source") for e in POSITIVE + NEGATIVE)


def external_counts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    layout: str,
    positive: list[dict[str, Any]] = POSITIVE,
    negative: list[dict[str, Any]] = NEGATIVE,
) -> tuple[int, int, list[str]]:
    """(over-claims caught, consistent folders passed, misses) in one layout."""
    caught = passed = 0
    misses = []
    for number, entry in enumerate(positive + negative):
        code, _ = _strict(capsys, tmp_path / str(number), entry, layout)
        wanted = 1 if number < len(positive) else 0
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
    """Not the issue's measure (see the module docstring): the last measurement, as a floor."""
    found = external_counts(tmp_path, capsys, layout)
    held_to_floors(f"external, {layout}", found, (len(POSITIVE), len(NEGATIVE)))
    assert found[0] >= CAUGHT_FLOOR and found[1] >= PASSED_FLOOR, found[2]


def held_to_floors(name: str, found: tuple[int, int, list[str]], sizes: tuple[int, int]) -> None:
    """Print the rates against issue 34's target and every miss (the floors are asserted
    by the caller)."""
    (caught, passed, misses), (positives, negatives) = found, sizes
    rates = f"caught {caught}/{positives} = {caught / positives:.3f}"
    rates += f", passed {passed}/{negatives} = {passed / negatives:.3f}"
    met = caught >= TARGET_CAUGHT * positives and passed >= TARGET_PASSED * negatives
    print(f"{name}: {rates}; target {'met' if met else 'MISSED'}")
    print("\n".join(misses))


Test = Callable[..., None]


def floor_tests(file: str, floors: tuple[int, int], least: tuple[int, int]) -> tuple[Test, Test]:
    """A later external corpus's two tests, for its module to name: it is large enough and
    every entry names its source (at least `least` over-claims and consistent texts), and
    `audit --strict` holds to `floors` (over-claims caught, consistent folders passed) in
    each layout, printing the rates and every miss."""
    positive, negative = corpus(file)
    name = file.removeprefix("claim_wordings_").removesuffix(".yaml")

    def sized() -> None:
        assert len(positive) >= least[0] and len(negative) >= least[1]
        assert well_formed(positive, negative)

    @pytest.mark.parametrize("layout", LAYOUTS)
    def held(tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str) -> None:
        found = external_counts(tmp_path, capsys, layout, positive, negative)
        held_to_floors(f"{name}, {layout}", found, (len(positive), len(negative)))
        assert found[0] >= floors[0] and found[1] >= floors[1], found[2]

    return sized, held
