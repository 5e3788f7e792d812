"""`audit --strict` on tests/claim_wordings_external2.yaml: a second held-out corpus of
over-claims and consistent texts excerpted from public write-ups (agent- and LLM-evaluation
READMEs and reports, run scripts, configs, LaTeX and markdown tables, English and Chinese
write-ups) by a helper who had not read the claim reader, its grammar, its docs or the other
wording corpora, committed before any measurement on it. Each entry is put in a folder holding
ONE graded run per configuration, in both layouts of tests/test_claims.py; an over-claim must
fail the folder (exit 1), a consistent text must pass it (exit 0).

SCORED BLIND ONCE, DEVELOPMENT MATERIAL SINCE. The first scoring, by the lead on main at
7f61a4d (after a round of claim-reader work that never saw this file), MISSED the target:
72 of 84 over-claims caught (0.857), 38 of 77 consistent folders passed (0.494), the same in
both layouts: the settings, comment and count-alone rules flagged training epochs
(`num_epochs: 3`), retries, schedules ("每天執行三次"), plans and checklists. In issue 34's
fourth round its misses and false alarms were read, and the reader learnt general rules for
the families they named (a line's frame: training and tuning sections, a judge's or retry
policy's keys, files and sections of plans, instructions, options and examples; negations,
instructions, budgets, schedules, data sets' make-up, samples of a data set, configurations
run once each, seeds held back; statistics over runs with no count; scripts read), each
tried on new wordings of the development corpus (tests/claim_wordings.yaml, "fourth round").
It then caught 82 of 84 (0.976) and passed 74 of 77 (0.961) in both layouts. A figure on a
set whose misses were read says little about the next set: a fresh blind set is the measure.
The counts are floors, so the reader cannot regress; raise them when it does better.

RELABELLED on 2026-12-06, as test_claims_external.py tells: 11 of its over-claims are
consistent texts under the stated label rule (two of three labellers) and were moved,
each marked `relabelled:`. The floors are what the reader did on it so: caught 72 of 73,
passed 76 of 88."""

from __future__ import annotations

from test_claims_external import floor_tests

CAUGHT_FLOOR = 73
"""Over-claims failed by `audit --strict` (of 84): 72 when first scored, blind; 82 after
issue 34's fourth round, 83 after the fifth (a script's prose read where its comment
markers were left out, developed on other wordings). Relabelled (module docstring): 72 of 73; 73 after the ninth round (several runs per
scope, claims46b)."""
PASSED_FLOOR = 80
"""Consistent folders passed (of 77) after issue 34's fourth round (38 when first scored). Raised from 74 to 75 in issue 34's sixth round: a claim plans runs only when it is
attached to the folder's own results (claims/attached.py); to 76 in the seventh: what is
repeated is not a run (claims/aside.py). Relabelled (module docstring): 76 of 88. 79 after the ninth round (claims46a). 80 after issue 34's tenth round (claims47a)."""

test_the_corpus_is_large_enough_and_every_entry_names_its_source, test_wordings_do_not_regress = (
    floor_tests("claim_wordings_external2.yaml", (CAUGHT_FLOOR, PASSED_FLOOR), (70, 45))
)
