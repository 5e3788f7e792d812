"""Simulated experiments for `passhat why`'s failure signatures, shared by
tests/test_why.py (small, seeded) and benchmarks/bench_why.py (larger).

Each case has its own difficulty (a run misses item `Y` with probability `base`,
from 0.05 to 0.6) and its own share of runs that skip the tool `lookup` (0.2 to 0.7,
higher on harder cases: across cases, skipping goes with missing even when it does
nothing). Planted: a run that skips `lookup` misses item `X` with probability 0.9,
else `base`. Not planted (A/A): `X` is missed with probability `base` whatever the
run did. Decoy features vary at random within case (tools `search` and `notes`, a
`search` error) and tokens grow with difficulty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from passhat.signatures import PASS, Facts, signatures

PLANTED_FEATURE = "did not call lookup"
PLANTED = frozenset({("X", PLANTED_FEATURE), (PASS, PLANTED_FEATURE)})
"""The signatures a planted simulation holds (a missed X fails the run too)."""


def simulate(cases: int, k: int, *, planted: bool, seed: int) -> list[Facts]:
    rng = np.random.default_rng(seed)
    facts = []
    for c in range(cases):
        base = rng.uniform(0.05, 0.6)
        skip_share = 0.2 + 0.5 * (base - 0.05) / 0.55
        for run in range(1, k + 1):
            skipped = rng.random() < skip_share
            p_x = 0.9 if planted and skipped else base
            missed_x = bool(rng.random() < p_x)
            missed_y = bool(rng.random() < base)
            features = {
                "called lookup": not skipped,
                "called search": bool(rng.random() < 0.5),
                "called notes": bool(rng.random() < 0.3),
                "search returned an error": bool(rng.random() < 0.2),
                "tokens": float(rng.normal(1000 + 2000 * base, 200)),
            }
            outcomes = {PASS: missed_x or missed_y, "X": missed_x, "Y": missed_y}
            facts.append(Facts(f"case-{c}", run, outcomes, features))
    return facts


@dataclass(frozen=True)
class Tally:
    simulations: int
    recovered: int
    """Planted signatures found (of `simulations` x len(PLANTED))."""
    false: int
    """Signatures found that were not planted."""
    with_false: int
    """Simulations with at least one false signature."""


def tally(cases: int, k: int, *, planted: bool, simulations: int, seed: int = 0) -> Tally:
    recovered = false = with_false = 0
    for i in range(simulations):
        found, _ = signatures(simulate(cases, k, planted=planted, seed=seed + i), seed=i)
        keys = {(s.test.outcome, s.test.feature) for s in found}
        planted_here = PLANTED if planted else frozenset()
        recovered += len(keys & planted_here)
        wrong = keys - planted_here
        false += len(wrong)
        with_false += bool(wrong)
    return Tally(simulations, recovered, false, with_false)
