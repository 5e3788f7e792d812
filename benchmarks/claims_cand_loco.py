"""Leave-one-corpus-out of a learned decision per CANDIDATE count (learn48b, issue 34).

The rule reader finds candidates (each claim read and each number set aside, with its rule and
sentence: claims_candidates.py). A logistic regression (numpy only) scores each candidate "is
this a run-count claim about this folder's own runs"; a text fails when its best candidate's
score passes a threshold. Trained multiple-instance on the text labels: a consistent text's
candidates are all negative; an over-claim's are all positive at first, then only its
top-scoring one (two more rounds). Texts with no candidate are read by learn48's text model
(the fallback), with its own threshold.

Features of a candidate: word 1-2-grams and char 3-5-grams of its sentence, the words of the
lines around it, the file's suffix (text only); with --rule-features also its rule name,
claim or set aside, its count (1 or more) and the first word of why it was attached (rule
outputs: they leak the rules' tuning on the fold, so both are reported).

For each external corpus N (claims_loco.py's folds): trained on today's reader's candidates of
every other development corpus; scored on corpus N's candidates read by (a) today's reader
(tuned on N: leaky) and (b) the reader of the commit N was first scored blind on (fair).
Thresholds come from the training corpora only (their own leave-one-corpus-out predictions,
on their own blind-era candidates in (b)). Printed per fold, caught/positives and
passed/negatives: the blind-era rules; the model alone; the blind-era rules overruled by the
model when it is sure (lo, hi from the training corpora); and the coverage ceiling (the
over-claims with no candidate at all, which only the fallback can catch).

With --fold-era, fold N is trained AND scored on the candidates of N's first blind reader run
over every development corpus (eraall-COMMIT.json), and the veto overrules that reader's
verdicts: nothing in the candidates, their rule names or the rules' verdicts saw the fold, so
--rule-features is fair there too.

    .venv/bin/python benchmarks/claims_cand_loco.py [--rule-features] [--fold-era]
        [--folds NAME ...] [--cache DIR]   (DIR holds the candidate caches; made when missing)

Never reads claim_wordings_external9.yaml nor claim_wordings_heldout.yaml."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claims_corpora import DEVELOPMENT, key_of, load
from claims_loco import (
    BITS,
    FIRST_BLIND,
    FIRST_COMMIT,
    WORD,
    Rows,
    cell,
    combined,
    goal,
    grams,
    hash_of,
    hashed,
    probability,
    rates,
    subset,
    train,
    veto_thresholds,
)

HERE = Path(__file__).resolve().parent


def corpus_name(n: str) -> str:
    return f"claim_wordings_external{'' if n == '1' else n}.yaml"


def candidate_grams(cand: dict[str, Any], file: str, rule_features: bool) -> list[str]:
    """The text model's features of the candidate's quote (claims_loco.grams: a set, so
    their order is no matter), the words around it, and its rule's where asked."""
    found = grams(cand["quote"], file)
    around = re.sub(r"\d+", "0", cand["window"].lower())
    found += ["x:" + w for w in WORD.findall(around)]
    if rule_features:
        found.append("r:" + cand["rule"])
        found.append("kind:" + cand["kind"])
        k = cand.get("k")
        found.append("k:" + ("none" if not isinstance(k, int) else "1" if k <= 1 else "2+"))
        found.append("a:" + (cand["attached"].split(":", 1)[0] if cand["attached"] else "-"))
    return found


def candidate_rows(
    entries: list[dict[str, Any]], reads: list[dict[str, Any]], rule_features: bool
) -> tuple[Rows, np.ndarray]:
    """The hashed rows of every candidate of every entry (entry order), and each row's entry."""
    indices: list[np.ndarray] = []
    starts = [0]
    owner: list[int] = []
    for number, (entry, read) in enumerate(zip(entries, reads, strict=True)):
        for cand in read["candidates"]:
            feats = candidate_grams(cand, entry.get("file", "README.md"), rule_features)
            ids = np.unique(np.fromiter((hash_of(f) for f in feats), dtype=np.int64))
            indices.append(ids)
            starts.append(starts[-1] + len(ids))
            owner.append(number)
    index = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)
    lengths = np.diff(starts)
    value = np.repeat(1.0 / np.sqrt(np.maximum(lengths, 1)), lengths)
    return (index, value, np.asarray(starts)), np.asarray(owner, dtype=np.int64)


def mil_train(
    rows: Rows, owner: np.ndarray, y_text: np.ndarray, rounds: int = 3
) -> tuple[np.ndarray, float]:
    """Multiple-instance: every candidate takes its text's label; after the first round an
    over-claim keeps only its top-scoring candidate as a positive."""
    y = y_text[owner]
    per_text = np.bincount(owner, minlength=len(y_text))[owner]
    weight = 1.0 / per_text
    keep = np.ones(len(owner), dtype=bool)
    w, b = np.zeros(1 << BITS), 0.0
    for round_ in range(rounds):
        if round_:
            p = probability(w, b, rows)
            best = np.full(len(y_text), -1.0)
            np.maximum.at(best, owner, p)
            keep = (y == 0) | (p >= best[owner])
            weight = np.where(y == 1, 1.0, 1.0 / per_text)
        w, b = train(subset(rows, keep), y[keep], weight=weight[keep])
    return w, b


def text_max(p: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Each text's best candidate score (-1 when it has none)."""
    best = np.full(n, -1.0)
    if len(p):
        np.maximum.at(best, owner, p)
    return best


class Reads:
    """Entries and their candidates, per source (today's reader, or each fold's blind-era one)."""

    def __init__(
        self, entries: list[dict[str, Any]], reads: list[dict[str, Any]], rule_features: bool
    ):
        self.entries = entries
        self.reads = reads
        self.rows, self.owner = candidate_rows(entries, reads, rule_features)
        self.has = np.zeros(len(entries), dtype=bool)
        self.has[self.owner] = True

    def part(self, keep: np.ndarray) -> tuple[Rows, np.ndarray]:
        """The candidate rows of the kept entries, owners renumbered among the kept."""
        at = keep[self.owner]
        renumber = np.cumsum(keep) - 1
        return subset(self.rows, at), renumber[self.owner[at]]


def decide(
    best: np.ndarray, fallback: np.ndarray, has: np.ndarray, t: float, tf: float
) -> np.ndarray:
    return np.where(has, best > t, fallback > tf)


def fold_scores(
    train_reads: Reads,
    text_rows: Rows,
    y: np.ndarray,
    fit: np.ndarray,
    out_reads: Reads,
    out: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trained on the `fit` entries (today's candidates), the `out` entries' best candidate
    score (their candidates from `out_reads`), fallback text score, and whether they have one."""
    rows, owner = train_reads.part(fit)
    w, b = mil_train(rows, owner, y[fit])
    orows, oowner = out_reads.part(out)
    best = text_max(probability(w, b, orows), oowner, int(out.sum()))
    tw, tb = train(subset(text_rows, fit), y[fit])
    fallback = probability(tw, tb, subset(text_rows, out))
    return best, fallback, out_reads.has[out]


def make_era(commit: str, target: Path, names: list[str]) -> None:
    """The candidates of `commit`'s reader (git archive of its src) on `names` (every
    development corpus when empty), cached in `target`."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(HERE.parent), "archive", commit, "src"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {"PYTHONPATH": str(Path(tmp) / "src"), "PATH": "/usr/bin:/bin"}
        script = str(HERE / "claims_candidates.py")
        subprocess.run([sys.executable, script, str(target), *names], env=env, check=True)


def make_caches(cache: Path) -> None:
    """today.json (this tree's reader) and era-COMMIT.json (each fold's first blind reader)."""
    cache.mkdir(parents=True, exist_ok=True)
    if not (cache / "today.json").exists():
        script = str(HERE / "claims_candidates.py")
        subprocess.run([sys.executable, script, str(cache / "today.json")], check=True)
    for n, commit in FIRST_COMMIT.items():
        target = cache / f"era-{commit}.json"
        if not target.exists():
            make_era(commit, target, [corpus_name(n)])


def fold_era(
    args: argparse.Namespace, entries: list[dict[str, Any]], y: np.ndarray, corpus: np.ndarray
) -> int:
    """--fold-era: fold N trained AND scored on the candidates of the reader of the commit N
    was first scored blind on (that reader over every development corpus), so that neither the
    candidates, nor their rule names, nor the rules' verdict have seen the fold."""
    cache = Path(args.cache)
    text_rows = hashed(entries)
    folds = args.folds or [n for n in DEVELOPMENT if n != "claim_wordings.yaml"]
    totals: dict[str, np.ndarray] = {}
    print("fold | fold-era rules | no candidate | model | veto of fold-era rules | t, tf, lo, hi")
    for name in folds:
        n = name.removeprefix("claim_wordings_external").removesuffix(".yaml") or "1"
        commit = FIRST_COMMIT[n]
        target = cache / f"eraall-{commit}.json"
        if not target.exists():
            make_era(commit, target, [])
        known = json.loads(target.read_text())
        reads = Reads(entries, [known[key_of(e)] for e in entries], args.rule_features)
        rule = np.array([known[key_of(e)]["code"] == 1 for e in entries])
        test = corpus == name
        trained = ~test
        best_in, fall_in = np.zeros(len(y)), np.zeros(len(y))
        for held in [m for m in DEVELOPMENT if m != name]:
            out = corpus == held
            best, fallback, _ = fold_scores(reads, text_rows, y, trained & ~out, reads, out)
            best_in[out], fall_in[out] = best, fallback
        has = reads.has[trained]
        grid = np.linspace(0.05, 0.95, 46)
        t, tf = max(
            ((a, f) for a in grid for f in grid),
            key=lambda tt: goal(decide(best_in[trained], fall_in[trained], has, *tt), y[trained]),
        )
        score_in = np.where(reads.has, best_in, fall_in)
        ext = trained & (corpus != "claim_wordings.yaml")
        tv = veto_thresholds(score_in[ext], rule[ext], y[ext])
        best, fallback, has_t = fold_scores(reads, text_rows, y, trained, reads, test)
        yt = y[test]
        row = {
            "fold-era rules": rates(rule[test], yt),
            "no candidate": rates(~has_t, yt),
            "model": rates(decide(best, fallback, has_t, t, tf), yt),
            "veto": rates(combined(np.where(has_t, best, fallback), rule[test], tv), yt),
            "rules, texts with a candidate": rates(rule[test][has_t], yt[has_t]),
            "model, texts with a candidate": rates(best[has_t] > t, yt[has_t]),
            "fallback, texts with none": rates(fallback[~has_t] > tf, yt[~has_t]),
        }
        c, p, _, _ = row["no candidate"]
        line = [name.removeprefix("claim_wordings_").removesuffix(".yaml")]
        line += [cell(*row["fold-era rules"]), f"{c}/{p}", cell(*row["model"]), cell(*row["veto"])]
        line.append(f"{t:.2f}, {tf:.2f}, {tv[0]:.2f}, {tv[1]:.2f}")
        print(" | ".join(line), flush=True)
        for k, v in row.items():
            totals[k] = totals.get(k, np.zeros(4, dtype=int)) + np.array(v)
    for k, v in totals.items():
        print(f"all {k}: {cell(*v)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", default="/tmp/claims_candidates")
    parser.add_argument("--rule-features", action="store_true")
    parser.add_argument("--folds", nargs="*", default=None)
    parser.add_argument("--fold-era", action="store_true")
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    entries = [e for name in DEVELOPMENT for e in load(name)]
    y = np.array([e["label"] for e in entries])
    corpus = np.array([e["corpus"] for e in entries])
    if args.fold_era:
        return fold_era(args, entries, y, corpus)
    make_caches(cache)
    today_cache = json.loads((cache / "today.json").read_text())
    today = Reads(entries, [today_cache[key_of(e)] for e in entries], args.rule_features)
    era_reads = list(today.reads)
    for n, commit in FIRST_COMMIT.items():
        era_cache = json.loads((cache / f"era-{commit}.json").read_text())
        for at in np.flatnonzero(corpus == corpus_name(n)):
            era_reads[at] = era_cache[key_of(entries[at])]
    era = Reads(entries, era_reads, args.rule_features)
    old = np.array([r["code"] == 1 for r in era_reads])
    text_rows = hashed(entries)
    folds = args.folds or [n for n in DEVELOPMENT if n != "claim_wordings.yaml"]
    totals: dict[str, np.ndarray] = {}
    print(
        "fold | blind-era rules | no candidate (era / today) | model, today's candidates (leaky) | "
        "model, era candidates | veto of era rules by model | model + veto thresholds"
    )
    for name in folds:
        test = corpus == name
        trained = ~test
        # thresholds: each training corpus scored by a model trained on the other training corpora
        inner = {src: (np.zeros(len(y)), np.zeros(len(y))) for src in ("today", "era")}
        for held in [n for n in DEVELOPMENT if n != name]:
            out = corpus == held
            fit = trained & ~out
            for src, reads in (("today", today), ("era", era)):
                best, fallback, _ = fold_scores(today, text_rows, y, fit, reads, out)
                inner[src][0][out] = best
                inner[src][1][out] = fallback
        picked = {}
        for src, reads in (("today", today), ("era", era)):
            best, fallback = inner[src][0][trained], inner[src][1][trained]
            has = reads.has[trained]
            grid = np.linspace(0.05, 0.95, 46)
            picked[src] = max(
                ((a, f) for a in grid for f in grid),
                key=lambda tt: goal(decide(best, fallback, has, *tt), y[trained]),
            )
        ext = trained & (corpus != "claim_wordings.yaml")
        score_era = np.where(era.has, inner["era"][0], inner["era"][1])
        tv = veto_thresholds(score_era[ext], old[ext], y[ext])
        row = {"era rules": rates(old[test], y[test])}
        row["no cand era"] = rates(~era.has[test], y[test])
        row["no cand today"] = rates(~today.has[test], y[test])
        results = {}
        for src, reads in (("today", today), ("era", era)):
            best, fallback, has = fold_scores(today, text_rows, y, trained, reads, test)
            results[src] = (best, fallback, has)
            row["model " + src] = rates(decide(best, fallback, has, *picked[src]), y[test])
        best, fallback, has = results["era"]
        s = np.where(has, best, fallback)
        row["veto"] = rates(combined(s, old[test], tv), y[test])
        c, p, _, _ = row["no cand era"]
        ct, _, _, _ = row["no cand today"]
        line = [name.removeprefix("claim_wordings_").removesuffix(".yaml"), cell(*row["era rules"])]
        line.append(f"{c}/{p} / {ct}/{p}")
        line += [cell(*row[k]) for k in ("model today", "model era", "veto")]
        line.append(
            f"t {picked['today'][0]:.2f}/{picked['today'][1]:.2f} era {picked['era'][0]:.2f}/"
            f"{picked['era'][1]:.2f} lo,hi {tv[0]:.2f},{tv[1]:.2f}"
        )
        print(" | ".join(line), flush=True)
        for k, v in row.items():
            totals[k] = totals.get(k, np.zeros(4, dtype=int)) + np.array(v)
        (bc, bp), (bs, bn) = FIRST_BLIND[name]
        totals["first blind"] = totals.get("first blind", np.zeros(4, dtype=int)) + np.array(
            [bc, bp, bs, bn]
        )
    for k, v in totals.items():
        print(f"all {k}: {cell(*v)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
