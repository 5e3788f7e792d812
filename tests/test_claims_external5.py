"""`audit --strict` on tests/claim_wordings_external5.yaml: a fifth held-out corpus of 142
over-claims and 168 consistent texts excerpted from public write-ups (agent- and
LLM-evaluation READMEs and reports, paper sections and reading notes, run scripts, option
lists, configs, LaTeX and markdown tables; English, simplified and traditional Chinese,
Japanese, Korean and a few other languages) by a helper (branch heldout34e) who had not read
the claim reader, its grammar, its docs or the other wording corpora, committed before any
measurement on it, while the reader was being worked on by somebody who never saw it.

SCORED BLIND ONCE, by the lead on main at 7393f40 after issue 34's fifth round of reader
work (two new development corpora's misses learnt as general rules): THE TARGET IS MISSED.
Caught 123 of 142 over-claims (0.866), passed 110 of 168 consistent folders (0.655), the
same in both layouts. A second helper labelled the same 310 texts, shuffled and unlabelled,
without the reader or the first labels: the two labellings agree on 285 (119 over-claims,
166 consistent; the writer's over-claim was the second labeller's consistent text 22 times,
mostly notes on another work's runs, and 3 texts were unsure). On those 285 the reader
caught 101 of 119 (0.849) and passed 110 of 166 (0.663). Most consistent folders failed
over 'repeated N times' / 'N 次取平均' / a seeds flag written in code comments, usage
blocks, plans and notes far from a result. The counts are floors, so the reader cannot
regress; raise them when it does better, never tune it to a wording here (add such a
wording to the development corpus instead).

RELABELLED on 2026-12-06, as test_claims_external.py tells: 19 of its over-claims are
consistent texts under the stated label rule (two of three labellers) and were moved,
each marked `relabelled:`. The floors are what the reader did on it so: caught 115 of 123,
passed 144 of 187."""

from __future__ import annotations

from test_claims_external import floor_tests

CAUGHT_FLOOR = 116
"""Over-claims failed by `audit --strict` (of 142): 123 when first scored, blind (below the
target); 133 after issue 34's seventh round read counts in Korean, French, Spanish,
Portuguese, German and Russian, CJK sentences in scripts, counts coordinated after a
preposition (developed on wordings of its own, claims45b). Relabelled (module docstring): 115 of 123; 116 after the ninth round (a LaTeX column
group of seeds in the script writing it, claims46b)."""
PASSED_FLOOR = 163
"""Consistent folders passed when first scored, blind (of 168): below the target. Raised from 110 to 133 in issue 34's sixth round: a claim plans runs only when it is
attached to the folder's own results (claims/attached.py); to 136 in the seventh: what is
repeated or sampled is not a run (a genotype, a bit, a code pattern; claims/aside.py);
to 138 with a polling rate, a condition after the count, a next step's lead-in and a
count in parentheses after a count per configuration set aside; to 143 in the eighth
(claims45a): alternatives across a write-up's code blocks, a Chinese negation in bold,
"we train" and a PRM, a file of deliverables, each on wordings of its own. Relabelled (module docstring): 144 of 187. 160 after the ninth round (claims46a). 163 after issue 34's tenth round (claims47a)."""

test_the_corpus_is_large_enough_and_every_entry_names_its_source, test_wordings_do_not_regress = (
    floor_tests("claim_wordings_external5.yaml", (CAUGHT_FLOOR, PASSED_FLOOR), (120, 150))
)
