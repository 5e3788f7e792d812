"""`audit --strict` on tests/claim_wordings_external6.yaml: a sixth held-out corpus of 169
over-claims and 192 consistent texts excerpted from public files (agent- and
LLM-evaluation READMEs, reports, notes and paper sections, run and benchmark scripts,
report and plotting code, tests and logs; English, Chinese, Japanese, German, Korean,
French, Russian, Portuguese, Spanish) by a helper (branch heldout34f) who had not read the
claim reader, its docs or the other wording corpora, under a label rule stated before it
was written (a text is an over-claim only when it says this folder's own results rest on
two or more runs per configuration; notes on other works' runs are consistent texts), and
committed before any measurement on it, while the reader was worked on by helpers who never
saw it.

SCORED BLIND ONCE, by the lead on main at cb5c6ce after issue 34's sixth round (claims
attached to results): THE TARGET IS MISSED.
Caught 131 of 169 over-claims (0.775), passed 133 of 192 consistent folders (0.693), the
same in both layouts.
A second helper labelled the same 361 texts, shuffled and unlabelled, by the same rule,
without the reader or the first labels: the two labellings agree on 354 (167 over-claims,
187 consistent; Cohen's kappa about 0.97), disagree on 6 and one was unsure.
On the 354 both labellings agree on, the reader caught 129 of 167 (0.772) and passed 132
of 187 (0.706).
The counts are floors, so the reader cannot regress; raise them when it does better,
never tune it to a wording here (add such a wording to the development corpus instead)."""

from __future__ import annotations

from test_claims_external import floor_tests

CAUGHT_FLOOR = 162
"""Over-claims failed by `audit --strict` (of 169): 131 when first scored, blind; 162 after
issue 34's seventh round, whose grammar was developed on wordings of its own written after
this set's misses were read (counts in Korean, French, Spanish, Portuguese, German and
Russian; files and comments of more languages; CJK sentences in strings; qualifiers with a
comma, a count of runs that gave results: claims45b). THIS SET IS NO LONGER BLIND."""
PASSED_FLOOR = 175
"""Consistent folders passed (of 192): 133 when first scored, blind; 160 after issue 34's
eighth round (claims45a: a quoted flag denied, a hedge, the latest records, an example, a
tool described, a dry run, alternatives offered in a code block, a file of improvements or
a demo, a command in a program's text, a number word after "Run", a demo script, a test
function or a loop over tests, a function's calls, a generator's seeds, lead-ins of
defaults and requirements, notes on a paper, a learning rate, each character repeated, what
a tool displays, variants "at X and at Y", figures said not to be this work's own, a
clause restating a plan ("that is"), a code block's comment telling the reader to
submit; each rule developed on wordings of its own in
tests/claim_wordings.yaml). 175 after the ninth round (claims46a)."""

test_the_corpus_is_large_enough_and_every_entry_names_its_source, test_wordings_do_not_regress = (
    floor_tests("claim_wordings_external6.yaml", (CAUGHT_FLOOR, PASSED_FLOOR), (160, 180))
)
