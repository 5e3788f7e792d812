"""The development wording corpora of issue 34, labelled for a one-run-per-configuration folder,
and the rule reader's verdict on each (`passhat audit --strict --json`, in-process, the seed
layout of tests/test_claims.py), cached by text.

The blind corpora are never read: only the files named in DEVELOPMENT are opened, and the
names of claim_wordings_external9.yaml, claim_wordings_heldout.yaml and any later external
corpus are refused by `load`."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from passhat.cli import main

T = TypeVar("T")

TESTS = Path(__file__).resolve().parents[1] / "tests"
DEVELOPMENT = (
    "claim_wordings.yaml",
    "claim_wordings_external.yaml",
    *(f"claim_wordings_external{n}.yaml" for n in range(2, 9)),
)
BLIND = ("claim_wordings_heldout.yaml", "claim_wordings_external9.yaml")


def load(name: str) -> list[dict[str, Any]]:
    """The entries of one development corpus, each with `label` 1 (an over-claim in a folder of
    one run per configuration: a positive with k >= 2) or 0, and `corpus` its file name."""
    if name not in DEVELOPMENT or name in BLIND:
        raise SystemExit(f"{name}: not a development corpus (blind corpora are never read)")
    data = yaml.safe_load((TESTS / name).read_text("utf-8"))
    entries = []
    for key in ("positive", "negative"):
        for raw in data[key]:
            entry = dict(raw) if isinstance(raw, dict) else {"text": raw}
            over = key == "positive" and isinstance(entry.get("k"), int) and entry["k"] >= 2
            entry["label"] = int(over)
            entry["corpus"] = name
            entries.append(entry)
    return entries


def key_of(entry: dict[str, Any]) -> str:
    what = json.dumps([entry.get("file", "README.md"), entry.get("scope"), entry["text"]])
    return hashlib.sha1(what.encode()).hexdigest()


def strict_audit(entry: dict[str, Any]) -> tuple[int, str, str]:
    """`passhat audit --strict --json` on the seed layout holding one run, with `entry`'s
    text in its file: the exit code, what it printed, and the text as written."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = root / "outputs" / (entry.get("scope") or "a") / "run-1"
        run.mkdir(parents=True)
        (run / "grade.json").write_text('{"passed": true}')
        name = entry.get("file", "README.md")
        text = entry["text"]
        if name.endswith(".md"):
            text = "# Results\n\n" + text
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text + "\n", encoding="utf-8")
        (root / "benchmark.json").write_text('{"k": 1}')
        out = io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                main(["audit", str(root), "--strict", "--json"])
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        return code, out.getvalue(), text


def strict_code(entry: dict[str, Any]) -> int:
    """The exit code of `passhat audit --strict --json` on the seed layout holding one run."""
    return strict_audit(entry)[0]


def cached(
    entries: list[dict[str, Any]], cache: Path, compute: Callable[[dict[str, Any]], T]
) -> dict[str, T]:
    """key -> `compute(entry)` for every entry, kept in `cache` (a JSON file) as it goes."""
    known: dict[str, T] = json.loads(cache.read_text()) if cache.exists() else {}
    for number, entry in enumerate(entries):
        key = key_of(entry)
        if key not in known:
            known[key] = compute(entry)
            if number % 200 == 0:
                cache.write_text(json.dumps(known))
    cache.write_text(json.dumps(known))
    return known


def rule_verdicts(entries: list[dict[str, Any]], cache: Path) -> dict[str, int]:
    """key -> 1 when the rule reader fails the folder, cached in `cache` (a JSON file)."""
    return cached(entries, cache, lambda entry: int(strict_code(entry) == 1))


def corpus_options(doc: str | None, argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of this script and of claims_candidates.py: CACHE [corpus.yaml ...],
    `doc` as the help. It was read by hand from sys.argv: `--help` became the cache's file
    name (the whole corpus audited into ./--help), no argument an IndexError traceback."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cache", type=Path, metavar="CACHE.json", help="the cache, by text")
    parser.add_argument(
        "corpora", nargs="*", default=[], metavar="corpus.yaml",
        help="development corpora of tests/ (default: every one in DEVELOPMENT)",
    )  # fmt: skip
    return parser.parse_args(argv)


if __name__ == "__main__":
    given = corpus_options(__doc__)
    every = [e for name in given.corpora or DEVELOPMENT for e in load(name)]
    verdicts = rule_verdicts(every, given.cache)
    print(len(every), "entries,", sum(verdicts[key_of(e)] for e in every), "failed")
