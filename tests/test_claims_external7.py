"""`audit --strict` on tests/claim_wordings_external7.yaml: a seventh held-out corpus of 164 over-claims and 239 consistent texts.

Written blind by helper heldout45 (2026-12-06) from real excerpts of public GitHub files found with exact-string
look-ups (77 search strings, eight languages), without opening the claims reader, the audit sources, docs/audit.md,
the other claim tests or the other corpora's texts. Label rule in one sentence: placed in a results folder holding
one run per configuration, a text is an over-claim when it tells a reader that this folder's own results rest on two
or more runs per configuration, and consistent otherwise (single runs, other works' runs, counts of something else,
plans, options, defaults, templates, and tests or logs of unrelated mechanisms). NOT YET SCORED; the lead scores it
once, last.
"""

from __future__ import annotations

from test_claims_external import floor_tests

CAUGHT_FLOOR = 0
"""Over-claims failed by `audit --strict` when first scored, blind (of 164)."""
PASSED_FLOOR = 0
"""Consistent folders passed when first scored, blind (of 239)."""

test_the_corpus_is_large_enough_and_every_entry_names_its_source, test_wordings_do_not_regress = (
    floor_tests("claim_wordings_external7.yaml", (CAUGHT_FLOOR, PASSED_FLOOR), (160, 230))
)
