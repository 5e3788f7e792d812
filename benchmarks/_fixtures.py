"""Shared by the benchmarks: suites of many cases, and a store of many realistic runs.

A store of 100,000 runs is not made by running 100,000 runs (minutes): a template
of `TEMPLATE_CASES` cases × k runs goes through the real runner (seed ticket, an
agent that passes, fails on a missed or extra annotation, or crashes, by the
run's seed), then its rows are copied under new case ids. Every row is what
`passhat run` writes, transcript and all (~5 KB). Each copy's graded items are
named after its case (`case-00042/AC3:conflict`), as real cases each have their own
goal: a report then decodes and groups the items of every case, not one set shared
by 10,000 copies of the seed. Shared items flattered the report benchmarks: with
them `passhat report` of 100,000 runs took 0.57 s and `report --json` 1.17 s, with
each case's own 0.75 s and 1.54 s (items are decoded once per distinct value).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from passhat.agents import LoadedAgent
from passhat.runner import RunOptions, new_experiment, run_experiment
from passhat.store import Store
from passhat.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
SEED_CASE = ROOT / "examples" / "clarify" / "cases" / "ac-conflict-001.yaml"
ANNOTATIONS = [
    {"ac": 3, "label": "conflict", "note": "AC 3 allows several coupons; AC 5 refuses a second"},
    {"ac": 3, "label": "inconsistent_with_description", "note": "the description says one"},
    {"ac": 4, "label": "unverifiable", "note": "'simple and intuitive' has no measurable bar"},
    {"ac": 7, "label": "unverifiable", "note": "'fast enough' has no response-time threshold"},
]
TEMPLATE_CASES = 100


def case_name(i: int) -> str:
    return f"case-{i:05d}"


def make_suite(folder: Path, cases: int) -> Path:
    """The clarify suite with `cases` copies of the seed ticket (case-00000, ...). Its
    cassette keeps the header alone: the seed's answers are ac-conflict-001's, a case the
    copies are not, and `passhat check` refuses a cassette naming a case the suite lacks."""
    shutil.copytree(ROOT / "examples" / "clarify", folder, ignore=shutil.ignore_patterns("cases"))
    (folder / "cases").mkdir()
    cassette = folder / "cassettes" / "seed.jsonl"
    header = cassette.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    cassette.write_text(header, encoding="utf-8")
    text = SEED_CASE.read_text(encoding="utf-8")
    for i in range(cases):
        name = case_name(i)
        (folder / "cases" / f"{name}.yaml").write_text(
            text.replace("id: ac-conflict-001", f"id: {name}"), encoding="utf-8"
        )
    return folder


NUMBERED = ("title", "description", "text", "note", "response")
"""The free-text fields `make_distinct_suite` numbers in each copy."""


def make_distinct_suite(folder: Path, cases: int) -> Path:
    """The clarify suite with `cases` cases of which no two are equal: the suite's own
    tickets in turn (English and Chinese, 1.0-2.3 KB pickled), each copy's free texts
    (titles, descriptions, criteria, notes, fixture responses) ending in its number, so
    nothing that compares or shares equal values can find two cases alike."""
    import copy

    import yaml

    source = ROOT / "examples" / "clarify" / "cases"
    shutil.copytree(ROOT / "examples" / "clarify", folder, ignore=shutil.ignore_patterns("cases"))
    (folder / "cases").mkdir()
    tickets = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(source.glob("*.yaml"))]
    for i in range(cases):
        name = case_name(i)
        data = _numbered(copy.deepcopy(tickets[i % len(tickets)]), f" [#{i}]")
        data["id"] = name
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
        (folder / "cases" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


def _numbered(value: Any, mark: str, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _numbered(v, mark, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbered(v, mark, key) for v in value]
    return value + mark if isinstance(value, str) and key in NUMBERED else value


async def mixed(input: Any, env: Any, ctx: Any) -> str:
    """Like a clarifier run: reads the ticket, writes Goal, Scope and annotations.

    By the run's seed: ~70 % exact, ~20 % miss one annotation or add one, ~5 %
    crash (errored)."""
    roll = ctx.seed % 100
    if roll < 5:
        raise RuntimeError("the agent crashed (benchmark)")
    await env.call("get_ticket", {"key": "SHOP-1042"})
    annotations = list(ANNOTATIONS)
    if roll < 15:
        annotations = annotations[:-1]
    elif roll < 25:
        annotations.append({"ac": 5, "label": "conflict", "note": "an extra one"})
    await env.call(
        "update_ticket",
        {
            "key": "SHOP-1042",
            "goal": "Customers enter one coupon code at checkout and see the discount.",
            "scope_in": ["coupon field", "validation", "order summary"],
            "scope_out": ["member discounts"],
            "annotations": annotations,
        },
    )
    return "The ticket is annotated: " + "; ".join(a["note"] for a in annotations)


def make_store(tmp: Path, cases: int, k: int) -> tuple[Path, str]:
    """A store with one experiment of `cases` × `k` recorded runs; (db path, experiment id)."""
    template = min(TEMPLATE_CASES, cases)
    folder = make_suite(tmp / f"suite-{cases}x{k}", template)
    db = tmp / f"store-{cases}x{k}.db"
    suite = load_suite(folder)
    agent = LoadedAgent("bench:mixed", mixed, None)
    experiment = new_experiment(suite, agent, "", None, k=k, params={"max_turns": 1}, seed=1)
    with Store(db) as store:
        store.create_experiment(experiment)
        asyncio.run(
            run_experiment(store, experiment, suite, agent, None, RunOptions(concurrency=8))
        )
    _replicate(db, experiment.id, template, cases)
    finished(db, experiment.id)
    return db, experiment.id


def finished(db: Path, experiment_id: str) -> None:
    """The store as passhat leaves it after a finished experiment: the rows copied in
    SQL (no writer's end), each case's items of `report --json` are kept now by the
    same public fill a writer calls (`Store.fill_case_items`), and its figures and cases
    as a run's end keeps them (`Store.fill_summary`); a no-op when kept."""
    with Store(db) as store:
        store.fill_case_items(experiment_id)
        store.fill_summary(experiment_id)


def unkept_copy(db: Path, experiment_id: str) -> Path:
    """A copy of `db` beside it without the kept items text of `experiment_id` (its
    `case_items` rows) nor its kept summary (`kept_summaries`), as an older passhat or a run stopped before its end leaves a
    store: `report --json` of it reads and builds every run's items. That is the
    yardstick the rows beside `report --json` (export, compare, regrade, cassette, why:
    #12, #15, #29) were set against, "both read every run"; #38's kept text made the
    report itself cheaper, not those commands dearer, so they keep that yardstick."""
    copy = db.with_name(f"{db.stem}-unkept.db")
    copy.unlink(missing_ok=True)
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    try:
        source.backup(target)
        target.execute("DELETE FROM case_items WHERE experiment_id = ?", (experiment_id,))
        target.execute("DELETE FROM kept_summaries WHERE experiment_id = ?", (experiment_id,))
        target.commit()
    finally:
        source.close()
        target.close()
    return copy


def _replicate(db: Path, experiment_id: str, template: int, cases: int) -> None:
    """Copy the template's rows under case ids template.. cases-1; plan them all."""
    import json

    con = sqlite3.connect(db, isolation_level=None)
    columns = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    for block in range(1, -(-cases // template)):
        offset = block * template
        case = f"printf('case-%05d', CAST(substr(case_id, 6) AS INTEGER) + {offset})"
        select = ", ".join(
            case if c == "case_id" else _own_items(c, case) if c == "score" else c for c in columns
        )
        con.execute(
            f"INSERT INTO runs ({', '.join(columns)}) SELECT {select} FROM runs "
            f"WHERE experiment_id = ? AND CAST(substr(case_id, 6) AS INTEGER) < ? "
            f"AND CAST(substr(case_id, 6) AS INTEGER) + ? < ?",
            (experiment_id, template, offset, cases),
        )
    con.execute(  # the template's own cases, once copied: their items named after them too
        f"UPDATE runs SET score = {_own_items('score', 'case_id')} WHERE experiment_id = ? "
        "AND CAST(substr(case_id, 6) AS INTEGER) < ?",
        (experiment_id, template),
    )
    hashes = json.loads(
        con.execute(
            "SELECT case_hashes FROM experiments WHERE id = ?", (experiment_id,)
        ).fetchone()[0]
    )
    some = next(iter(hashes.values()))
    names = [case_name(i) for i in range(cases)]
    con.execute(
        "UPDATE experiments SET case_ids = ?, case_hashes = ? WHERE id = ?",
        (json.dumps(names), json.dumps(dict.fromkeys(names, some)), experiment_id),
    )
    con.close()


def _own_items(column: str, case: str) -> str:
    """SQL: the score `column` with each graded item named after the case (`case`, SQL)."""
    return f"""replace({column}, '"AC', '"' || {case} || '/AC')"""


def kept_store(folder: Path, cases: int, k: int) -> tuple[Path, str]:
    """`make_store(folder, cases, k)`, or the one an earlier call kept in `folder` (a
    benchmark's `--stores DIR`: a store of 1,000,000 runs takes minutes to build)."""
    kept = folder / f"store-{cases}x{k}.id"
    db = folder / f"store-{cases}x{k}.db"
    if kept.is_file() and db.is_file():
        experiment_id = kept.read_text(encoding="utf-8").strip()
        finished(db, experiment_id)  # kept by an older passhat: as a writer leaves it now
        return db, experiment_id
    folder.mkdir(parents=True, exist_ok=True)
    db, eid = make_store(folder, cases, k)
    kept.write_text(eid, encoding="utf-8")
    return db, eid
