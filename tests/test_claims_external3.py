"""`audit --strict` on tests/claim_wordings_external3.yaml: a third held-out corpus of
over-claims and consistent texts excerpted from public write-ups (agent- and LLM-evaluation
READMEs and reports, run scripts, configs, LaTeX and markdown tables; English, Chinese,
Japanese and a few other languages) by a helper (branch heldout34c) who had not read the
claim reader, its grammar, its docs or the other wording corpora, committed before any
measurement on it, while the reader was being worked on by somebody who never saw it.

SCORED BLIND ONCE, DEVELOPMENT MATERIAL SINCE issue 34's fifth round. The first scoring, by
the lead on main at 6f13b1c after that round's claim-reader work, MISSED the target: caught
105 of 129 over-claims (0.814), passed 94 of 118 consistent folders (0.797), the same in
both layouts. In the fifth round its misses were read and grouped into classes of wording
(a script's prose whose comment or docstring markers an excerpt left out; a setting named
by the comment above it; Japanese counts; markdown bold around a count; sub-headings under
a heading of plans, and comments in code fences that are no headings; usage printed by a
script; exercises, examples and preregistrations; k-nearest neighbours named before k;
counts denied after them; configurations named after the count; statements about
determinism; another work's runs; figures in formulas; seed prompts; a model's trace), each
learnt as a general rule and pinned by new wordings of the development corpus
(tests/claim_wordings.yaml, "fifth round"), not by the wordings here. It then caught 126 of
129 (0.977) and passed 116 of 118 (0.983) in both layouts. A figure on a set whose misses
were read says little about the next set: a fresh blind set is the measure. The counts are
floors, so the reader cannot regress; raise them when it does better, and never tune it to
a wording here (add such a wording to the development corpus instead).

RELABELLED on 2026-12-06, as test_claims_external.py tells: 19 of its over-claims are
consistent texts under the stated label rule (two of three labellers) and were moved,
each marked `relabelled:`. The floors are what the reader did on it so: caught 109 of 110,
passed 118 of 137."""

from __future__ import annotations

from test_claims_external import floor_tests

CAUGHT_FLOOR = 110
"""Over-claims failed by `audit --strict` (of 129): 105 when first scored, blind; 126 after
issue 34's fifth round. Relabelled (module docstring): 109 of 110; 110 after the ninth round (several runs per
scope, claims46b)."""
PASSED_FLOOR = 126
"""Consistent folders passed (of 118): 94 when first scored, blind; 116 after issue 34's
fifth round. Relabelled (module docstring): 118 of 137. 126 after the ninth round (claims46a)."""

test_the_corpus_is_large_enough_and_every_entry_names_its_source, test_wordings_do_not_regress = (
    floor_tests("claim_wordings_external3.yaml", (CAUGHT_FLOOR, PASSED_FLOOR), (105, 110))
)
