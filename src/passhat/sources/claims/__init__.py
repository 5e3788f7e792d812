"""Run counts a write-up claims, read the way people write them.

The seed's second experiment is the reason: its REPORT.md said "each group ran
three times" over a folder holding one run per group. A claim can be written in
many ways, and an auditor that misses one passes the folder it exists to catch.
This is a small grammar, not a list of sentences:

- **a count** of runs: a number (digits, words "five", "a dozen", Chinese "五",
  Japanese "各3回", Korean "3회 반복", German "dreimal", "mit drei Seeds", French "trois
  fois", "sur 5 exécutions", Spanish "promedio de 5 ejecuciones", Portuguese "média de 5
  execuções", Russian "по 10 запускам", "in triplicate", a list of seeds "seeds 0, 1 and
  2", a range "seeds 1-5", "50+"), a
  range of counts at its lower bound ("3-5 seeds", "between 3 and 5 runs"), the
  attempts of "passed 4 of 5 trials" or "solved (3/3)", with up to three
  qualifiers before the unit ("three separate seeded trials");
- **a unit** that counts runs: runs, trials, seeds, epochs, attempts, samples,
  completions, rollouts, repetitions, repeats, replicates, trajectories,
  generations, episodes, or "N times" after a verb of running;
- **a scope** or a context that makes it a count of runs: "per / each / for
  every configuration, task, model...", "averaged over", "best of", "(n=4
  runs)", "5-run average", "Three runs were performed";
- **settings** as their own readers: `k=5`, `num_trials: 5`, `"n_epochs": 5`,
  `NUM_TRIALS=5`, `| N_SEEDS | 3 |`, `--n-attempts 5`, `-k 5`, `-n 3`,
  `seeds: [0, 1, 2]`, a shell loop over seeds (`for i in {1..3}`), a setting named by its
  comment (`# how many times we repeat each experiment` then `nloops=3`);
- **prose inside data files and scripts**: comments, docstrings and string values
  read by the prose rules (`# run each task 5 times`, `"notes": "over 3 seeds"`), and
  lines that are prose, not code (a docstring quoted without its quotes), never what a
  model wrote or was given (`content`, `prompt`, ...);
- **figures** that need runs: pass^5, pass@5, pass-hat-5, avg@8, maj@5,
  `k ∈ {1, 3, 5}` (an *at-least* claim: compared with what is present);
- **tables**: markdown (with or without outer pipes, any alignment row) and
  LaTeX `tabular`, whose header names a unit (Seeds, # Runs, Runs (n), n_runs,
  Attempts per task): each row claims its count for its first cell; a pass^k
  header claims at least k.

And the contexts that make a number no claim, each a named rule: a limit ("up
to 5 attempts per tool call", "retried at most twice"), training ("fine-tuned
for 3 epochs"), a batch size, a plan or condition ("we plan to run... in future
work", "would"), a condition or recommendation ("if you run it 5 times", "we
recommend 3 seeds"), a total ("Total runs: 10", "674 trials across 70 tasks"),
retries of failures, a tool's own `-n` (`harbor -n 8`, `pytest -n 4`), a loop
over tasks, a k that counts neighbours or clusters, a ratio ("3 times faster"), a
negation ("not ten independent runs"), an instruction ("use --num-trials 5 first"), a
budget ("three attempts per task, then stop"), a schedule ("three times a day"), a data
set's make-up or samples, configurations run once each ("twice: first without X, then
with X"), seeds held back, another work's runs, a figure in a formula, seed prompts, a
sed pattern, a question, generations made for training or a data set, CI runs, an
ensemble's seeds, a check of the code re-run (idempotence, a flaky test, a build), a
statistical procedure's repeats (permutation importance, repeated cross-validation), a
sentence quoted from elsewhere. And a number's *frame*, what encloses its line (every heading above it): a
training or tuning section sets its epochs and trials aside, a judge's, retry policy's or
model trace's keys their settings, a file, folder or section of plans, requirements,
instructions, options, defaults, examples or exercises everything in it (a lead-in or
heading opening with a verb told to the reader too), a script's usage lines their flags,
a test of the code its numbers.
Every claim keeps its file, line, sentence and the rule that read it; every number set
aside keeps the rule that set it aside (`audit --explain`).

A claim plans runs only when it is *attached* to the folder's own results (attached.py):
told as done ("we ran", "each task was run"), near results reported (a measure with a
value, a figure or table), in the folder's own report, or in the experiment's run
configuration or script; one that is read but not attached is set aside as "not attached
to results: <why>", shown but failing no `--strict`: notes on other works (reviews, reading
notes, notes naming a paper or its authors) and a program's library code are not attached.

Everything here is pure and bounded: no claim is turned into anything sized by
it (a 5,000-digit number is read as "more than MAX_CLAIM" without converting it),
and every pattern is linear in the text's length.

The package's rooms (`from passhat.sources.claims import X` reaches every public name):

    numbers.py     counts as written: digits, words, Chinese numerals, lists, ranges
    vocabulary.py  the nouns a run is counted by, said once (prose, settings, tables)
    found.py       Claim, SetAside and Reading: what the reader finds
    grammar.py     the rules built from the vocabulary (English prose, figures, settings)
    grammar_languages.py  the rules for counts in Chinese, Japanese, Korean, European languages
    aside.py       what sets a number a rule read aside (its sentence)
    framing.py     what sets a number aside by its frame or the lines around it
    attached.py    whether a claim is attached to the folder's own results
    frames.py      what encloses a line: path, heading, lead-in, parent keys
    sentences.py   a match's sentence, and prose lines joined into blocks
    embedded.py    prose inside data files and scripts: comments, docstrings, strings
    tables.py      markdown and LaTeX tables
    reader.py      one file's text read by its kind; governing, the claim a plan follows
"""

from __future__ import annotations

from passhat.sources.claims.attached import NOT_ATTACHED as NOT_ATTACHED
from passhat.sources.claims.found import Claim as Claim
from passhat.sources.claims.found import Reading as Reading
from passhat.sources.claims.found import SetAside as SetAside
from passhat.sources.claims.grammar import Counter as Counter
from passhat.sources.claims.grammar import Rule as Rule
from passhat.sources.claims.numbers import MAX_CLAIM as MAX_CLAIM
from passhat.sources.claims.numbers import MAX_LIST as MAX_LIST
from passhat.sources.claims.numbers import number as number
from passhat.sources.claims.reader import DATA as DATA
from passhat.sources.claims.reader import MAX_CANDIDATES as MAX_CANDIDATES
from passhat.sources.claims.reader import PROSE as PROSE
from passhat.sources.claims.reader import SHELL as SHELL
from passhat.sources.claims.reader import SUFFIXES as SUFFIXES
from passhat.sources.claims.reader import claims_in as claims_in
from passhat.sources.claims.reader import find_claims as find_claims
from passhat.sources.claims.reader import find_json_claims as find_json_claims
from passhat.sources.claims.reader import governing as governing
from passhat.sources.claims.reader import kind_of as kind_of
from passhat.sources.claims.reader import read_text as read_text
from passhat.sources.claims.sentences import MAX_QUOTE as MAX_QUOTE
from passhat.sources.claims.sentences import sentence as sentence
from passhat.sources.claims.sentences import sentence_span as sentence_span
