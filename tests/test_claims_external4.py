"""`audit --strict` on tests/claim_wordings_external4.yaml: a fourth held-out corpus of
over-claims and consistent texts excerpted from public write-ups (agent- and LLM-evaluation
READMEs, reports and notes, papers' setup sections and reviews, run scripts, configs, CLI
invocations, LaTeX and markdown tables, plot titles; mostly English, with Chinese, Japanese,
Korean, German, French, Russian and Vietnamese) by a helper (branch heldout34d) who had not
read the claim reader, its grammar, its docs or the other wording corpora, committed before
any measurement on it.

SCORED BLIND ONCE, DEVELOPMENT MATERIAL SINCE. The first scoring, by claims34 in issue 34's
fifth round on its branch (main f2299a7 with that round's rules learnt from external3: the
commits before the one adding this file; before any text here was read), MISSED the target: caught 98 of 114 over-claims
(0.860), passed 61 of 104 consistent folders (0.587), the same in both layouts. (Main's
reader at f2299a7, scored the same way at the same time: 92 of 114, 63 of 104.) Its misses
were then read, in the same round, and grouped into classes of wording (files and folders
of plans, requirements, briefs, guides and examples; lead-ins and headings opening with a
verb told to the reader; conditions, questions, worked rates, hedges, modal contractions,
futures in Chinese and plans in Japanese; generations made for training or a data set;
samples of a data set in a setting; retries in Japanese and a comment above a retry call;
Bayesian optimisation's trials; an ensemble's seeds; CI runs; a tuning class and a const of
defaults; tests of the code; a labelled number in another unit; "in triplicate" without a
verb of running; and, for over-claims, counts in German, French, Spanish and Japanese seeds,
best-of-N, a count and a participle, runs reproduced or run several times, a different
random initialization, a statistic over trials in a sweep, C++ and sbatch scripts), each
learnt as a general rule and pinned by new wordings of the development corpus
(tests/claim_wordings.yaml, "rules learnt from external4's misses"), not by the wordings
here. It then caught 110 of 114 (0.965) and passed 95 of 104 (0.913) in both layouts. A
figure on a set whose misses were read says little about the next set. The counts are
floors, so the reader cannot regress; raise them when it does better, and never tune it to
a wording here (add such a wording to the development corpus instead).

RELABELLED on 2026-12-06, as test_claims_external.py tells: 17 of its over-claims are
consistent texts under the stated label rule (two of three labellers) and were moved,
each marked `relabelled:`. The floors are what the reader did on it so: caught 93 of 97,
passed 99 of 121."""

from __future__ import annotations

from test_claims_external import floor_tests

CAUGHT_FLOOR = 94
"""Over-claims failed by `audit --strict` (of 114): 98 when first scored, blind; 110 after
its misses were read (issue 34's fifth round). Relabelled (module docstring): 93 of 97; 94 after the ninth round ("in triplicate" after
a verb of measuring and a parenthesised protocol, claims46b)."""
PASSED_FLOOR = 114
"""Consistent folders passed (of 104): 61 when first scored, blind; 95 after its misses
were read (issue 34's fifth round). Raised from 95 to 98 in issue 34's sixth round: a claim plans runs only when it is
attached to the folder's own results (claims/attached.py); to 99 in the seventh: what is
repeated is not a run (claims/aside.py). Relabelled (module docstring): 99 of 121. 113 after the ninth round (claims46a). 114 after issue 34's tenth round (claims47a)."""

test_the_corpus_is_large_enough_and_every_entry_names_its_source, test_wordings_do_not_regress = (
    floor_tests("claim_wordings_external4.yaml", (CAUGHT_FLOOR, PASSED_FLOOR), (95, 100))
)
