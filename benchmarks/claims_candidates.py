"""The candidates of the rule reader for each development text (learn48b, issue 34): every
claim read and every number set aside by `passhat audit --strict --json` in the seed layout of
claims_corpora.py, with its rule, quote and the lines around it, cached by text.

    .venv/bin/python benchmarks/claims_candidates.py CACHE.json [corpus.yaml ...]

Run with another commit's src on PYTHONPATH to get the candidates of that commit's reader
(claims_cand_loco.py --blind-era does so for each fold's first blind commit). Never reads
claim_wordings_external9.yaml nor claim_wordings_heldout.yaml (claims_corpora.load refuses them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claims_corpora import DEVELOPMENT, cached, corpus_options, key_of, load, strict_audit


def explained(entry: dict[str, Any]) -> dict[str, Any]:
    """The exit code and the candidates (claims and set-asides, each with its window: the
    line before, its own and the line after) of the strict audit of `entry`."""
    code, printed, text = strict_audit(entry)
    try:
        report = json.loads(printed)
    except ValueError:
        report = {}
    lines = text.split("\n")
    found = []
    for kind in ("claims", "set_aside"):
        for item in report.get(kind) or []:
            source = str(item.get("source", ""))
            at = source.rsplit(":", 1)[-1]
            line = int(at) if at.isdigit() else 0
            window = "\n".join(lines[max(line - 2, 0) : line + 1]) if line else ""
            found.append(
                {
                    "kind": kind,
                    "rule": str(item.get("rule", "")),
                    "quote": str(item.get("quote", "")),
                    "k": item.get("k"),
                    "attached": str(item.get("attached") or ""),
                    "window": window,
                }
            )
    return {"code": code, "candidates": found}


def candidates(entries: list[dict[str, Any]], cache: Path) -> dict[str, dict[str, Any]]:
    return cached(entries, cache, explained)


if __name__ == "__main__":
    given = corpus_options(__doc__)
    every = [e for name in given.corpora or DEVELOPMENT for e in load(name)]
    got = candidates(every, given.cache)
    none = sum(not got[key_of(e)]["candidates"] for e in every if e["label"] == 1)
    print(len(every), "entries,", none, "positives with no candidate")
