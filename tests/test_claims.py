"""The claim reader against the wording corpus (tests/claim_wordings.yaml): every way
people write "we ran it k times" is read, with its file and line, and `audit --strict`
fails a folder holding fewer runs than any of them claims. tests/claim_wordings_heldout.yaml
holds wordings the reader was never developed against: its rate is measured, not tuned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import run_cli
from passhat.sources.claims import (
    MAX_CLAIM,
    claims_in,
    find_json_claims,
    governing,
    number,
    read_text,
)

HERE = Path(__file__).parent
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def wordings(name: str) -> Any:
    """The wording corpus tests/`name`, read with libyaml where PyYAML has it: the same data
    as `yaml.safe_load` (checked on every corpus), ten times cheaper, and every xdist worker
    reads the corpora as it collects."""
    return yaml.load((HERE / name).read_text("utf-8"), Loader=_LOADER)


CORPUS = wordings("claim_wordings.yaml")
HELD_OUT = wordings("claim_wordings_heldout.yaml")


def _entries(raw: list[Any]) -> list[dict[str, Any]]:
    return [e if isinstance(e, dict) else {"text": e} for e in raw]


POSITIVE = _entries(CORPUS["positive"])
NEGATIVE = _entries(CORPUS["negative"])


def _id(entry: dict[str, Any]) -> str:
    return (entry.get("file", "") + ":" + entry["text"].splitlines()[0])[:48]


@pytest.mark.parametrize("entry", POSITIVE, ids=[_id(e) for e in POSITIVE])
def test_every_positive_wording_is_read_with_its_count(entry: dict[str, Any]) -> None:
    name = entry.get("file", "README.md")
    claims = claims_in(entry["text"], name)
    claim = governing(claims)
    assert claim is not None, entry["text"]
    assert claim.k == entry["k"], claim
    assert claim.at_least == entry.get("at_least", False), claim
    assert claim.scope == entry.get("scope"), claim
    assert claim.source.startswith(name + ":") and claim.quote and claim.rule


@pytest.mark.parametrize("entry", NEGATIVE, ids=[_id(e) for e in NEGATIVE])
def test_no_negative_wording_is_read_as_a_claim_of_more_than_one_run(
    entry: dict[str, Any],
) -> None:
    """A claim of one run (\"run once due to cost\", pass@1) cannot fail a folder with one."""
    claims = claims_in(entry["text"], entry.get("file", "README.md"))
    assert [c for c in claims if c.k > 1] == []


LAYOUTS = {
    "seed": ("outputs/{config}/run-1", ()),
    "terminal-bench": ("run1/{config}", ("--layout", "run{run}/{task}")),
}
"""The two layouts the issue names: the seed's `outputs/<config>/run-N` and terminal-bench's
`runN/<task>`, each holding one run per configuration."""


def _strict(
    capsys: pytest.CaptureFixture[str], root: Path, entry: dict[str, Any], layout: str
) -> tuple[int, dict[str, Any]]:
    """`audit --strict --json` on a folder with one graded run of one configuration and
    the entry's text in its file (after a heading and a blank line when it is markdown)."""
    where, args = LAYOUTS[layout]
    run = root / where.format(config=entry.get("scope") or "a")
    run.mkdir(parents=True)
    (run / "grade.json").write_text('{"passed": true}')
    name = entry.get("file", "README.md")
    text = entry["text"]
    if name.endswith(".md"):
        text = "# Results\n\n" + text
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text + "\n", encoding="utf-8")
    (root / "benchmark.json").write_text('{"k": 1}')
    r = run_cli(capsys, "audit", str(root), "--strict", "--json", *args)
    return r.code, (json.loads(r.out) if r.out.strip() else {})


STRICT = [e for e in POSITIVE if e["k"] >= 2]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("entry", STRICT, ids=[_id(e) for e in STRICT])
def test_strict_fails_a_folder_with_fewer_runs_than_any_wording_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: dict[str, Any], layout: str
) -> None:
    """One run per configuration on disk, a file claiming k >= 2: exit 1, the claim quoted
    with its file and line."""
    code, data = _strict(capsys, tmp_path, entry, layout)
    assert code == 1, data
    assert data["claimed"]["k"] == entry["k"]
    name = entry.get("file", "README.md")
    assert data["claimed"]["source"].startswith(name + ":")
    assert any(f.startswith("claimed ") for f in data["findings"])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("entry", NEGATIVE, ids=[_id(e) for e in NEGATIVE])
def test_strict_passes_a_whole_folder_whose_files_claim_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: dict[str, Any], layout: str
) -> None:
    code, data = _strict(capsys, tmp_path, entry, layout)
    assert code == 0, data
    assert [c for c in data["claims"] if c["k"] > 1] == []


HELD_OUT_CAUGHT = 0.95
"""Share of the held-out over-claims `audit --strict` fails, both layouts: a floor, so the
reader cannot regress. First measured at 0.936 (issue 34: 44 of 47 in each layout; the old
reader caught 0.468); 0.957 (45 of 47) after the third round's general rules, which were
developed on tests/claim_wordings.yaml without reading this file's wordings or misses."""
HELD_OUT_PASSED = 1.0
"""Share of the held-out consistent folders `audit --strict` passes, measured likewise
(issue 34: 34 of 34 in each layout; the old reader passed 0.941)."""


def held_out_rates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[float, float, list[str]]:
    """(over-claims caught, consistent folders passed, misses) over the held-out wordings
    in both layouts."""
    positives = [e for e in _entries(HELD_OUT["positive"]) if e["k"] >= 2]
    negatives = _entries(HELD_OUT["negative"])
    caught = passed = 0
    misses = []
    for number_, entry in enumerate(positives + negatives):
        for layout in LAYOUTS:
            code, _ = _strict(capsys, tmp_path / f"{number_}-{layout}", entry, layout)
            wanted = 1 if entry in positives else 0
            caught += wanted == 1 and code == 1
            passed += wanted == 0 and code == 0
            if code != wanted:
                misses.append(f"{layout}: {entry['text']!r}")
    return caught / (2 * len(positives)), passed / (2 * len(negatives)), misses


def test_held_out_wordings_do_not_regress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Measured on wordings the reader was not developed against (a quarter of the issue 34
    pool, split by hash before the reader changed): not 100 %, and not to be tuned to."""
    caught, passed, misses = held_out_rates(tmp_path, capsys)
    print(f"held-out: caught {caught:.3f}, passed {passed:.3f}; {len(misses)} misses")
    assert caught >= HELD_OUT_CAUGHT and passed >= HELD_OUT_PASSED, misses


def _folder(root: Path, text: str, configuration: str = "a") -> Path:
    run = root / "outputs" / configuration / "run-1"
    run.mkdir(parents=True)
    (run / "grade.json").write_text('{"passed": true}')
    (root / "README.md").write_text("# Results\n\n" + text + "\n", encoding="utf-8")
    return root


def test_the_seeds_failure_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (issue 26): "We ran every configuration 5 times and report pass^5." beside
    3 runs per configuration printed `claimed –` and exited 0 under --strict."""
    for config in ("baseline", "guide"):
        for i in (1, 2, 3):
            run = tmp_path / "outputs" / config / f"run-{i}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text('{"passed": true}')
    (tmp_path / "README.md").write_text(
        "We ran every configuration 5 times and report pass^5.\n", encoding="utf-8"
    )
    r = run_cli(capsys, "audit", str(tmp_path), "--strict")
    assert r.code == 1
    assert 'claimed   5  (README.md:1: "We ran every configuration 5 times' in r.out
    assert "baseline: 3 of 5 planned runs graded (missing run 4, 5)" in r.out


def test_a_table_row_claims_runs_of_its_own_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for config, runs in (("baseline", 3), ("guide", 1)):
        for i in range(1, runs + 1):
            run = tmp_path / "outputs" / config / f"run-{i}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text('{"passed": false}')
    (tmp_path / "REPORT.md").write_text(
        "| configuration | runs | pass rate |\n|---|---|---|\n"
        "| baseline | 3 | 0.0 |\n| guide | 3 | 0.0 |\n",
        encoding="utf-8",
    )
    (tmp_path / "benchmark.json").write_text('{"k": 1}')
    r = run_cli(capsys, "audit", str(tmp_path), "--json")
    data = json.loads(r.out)
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert by_name["baseline"]["planned"] == 3 and by_name["baseline"]["missing"] == []
    assert by_name["guide"]["planned"] == 3 and by_name["guide"]["missing"] == [2, 3]
    assert "claimed 3 runs of guide (REPORT.md:4) but it has 1 run directory" in data["findings"]
    assert not any("of baseline (REPORT.md:3)" in f for f in data["findings"])


def test_a_json_summary_claims_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path, "Results below.")
    (root / "summary.json").write_text(
        '{\n  "model": "m",\n  "num_trials": 4,\n  "pass^4": 0.25,\n  "ratio": 0.5\n}\n'
    )
    r = run_cli(capsys, "audit", str(root), "--json", "--strict")
    assert r.code == 1
    data = json.loads(r.out)
    assert data["claimed"]["source"] == "summary.json:3" and data["claimed"]["k"] == 4
    assert {(c["source"], c["at_least"]) for c in data["claims"]} == {
        ("summary.json:3", False),
        ("summary.json:4", True),
    }


def test_json_summary_values_that_are_no_count() -> None:
    assert find_json_claims('{"k": 0.5, "epochs": -1, "tasks": 3}', "s.json") == []


# ------------------------------------------------------------------- bounded


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("We ran it 100000000 times.", "100000000"),
        ("We ran it " + "9" * 5000 + " times.", "a 5,000-digit number"),
        ("k = " + "7" * 5000, "a 5,000-digit number"),
    ],
    ids=["hundred-million", "5000-digits", "k-5000-digits"],
)
def test_a_claim_too_large_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, shown: str
) -> None:
    """Regression (issue 26): "ran 100000000 times" allocated until MemoryError and a
    5,000-digit claim raised ValueError."""
    root = _folder(tmp_path, text)
    r = run_cli(capsys, "audit", str(root))
    assert r.code == 2
    assert r.err.startswith("error: README.md:3: claims " + shown + " runs")
    assert f"more than {MAX_CLAIM:,} per configuration" in r.err
    assert "--claimed K" in r.err and len(r.err.strip().splitlines()) == 1
    # --claimed is the fix: the report is not read at all then
    assert run_cli(capsys, "audit", str(root), "--claimed", "1").code == 0


def test_numbers_in_words_and_digits() -> None:
    assert [number(w) for w in ("five", "Twenty-five", "a dozen", "thrice", "1,000", "0")] == [
        5,
        25,
        12,
        3,
        1000,
        None,
    ]
    assert number("9" * 5000) == MAX_CLAIM + 1


def test_the_text_lists_the_other_claims_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path, "We ran it 3 times.\n\nWe report pass^2 and k=2.")
    r = run_cli(capsys, "audit", str(root))
    assert 'claimed   3  (README.md:3: "We ran it 3 times.")' in r.out
    assert "also claimed: 2+ (README.md:5), 2 (README.md:5)" in r.out  # in reading order


def test_a_row_planning_more_runs_of_one_configuration_is_stored_as_its_own_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for config in ("baseline", "guide"):
        for i in (1, 2, 3):
            run = tmp_path / "outputs" / config / f"run-{i}"
            run.mkdir(parents=True)
            (run / "grade.json").write_text('{"passed": true}')
    (tmp_path / "README.md").write_text("| configuration | runs |\n|---|---|\n| baseline | 5 |\n")
    db = tmp_path / "p.db"
    data = json.loads(run_cli(capsys, "audit", str(tmp_path), "--json").out)
    assert data["totals"]["requested"] == 8 and data["totals"]["missing"] == 2
    r = run_cli(capsys, "audit", str(tmp_path), "--into-store", "--db", str(db), "--name", "a")
    assert r.code == 0, r.err
    report = json.loads(run_cli(capsys, "report", "a", "--db", str(db), "--json").out)
    assert report["accounting"]["runs_requested"] == 8
    assert report["accounting"]["runs_missing"] == 2


def test_each_configuration_shows_its_own_rows_claim_not_anothers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 34): task-b showed task-a's 4 as claimed; its own row says 2."""
    for config in ("task-a", "task-b"):
        run = tmp_path / "outputs" / config / "run-1"
        run.mkdir(parents=True)
        (run / "grade.json").write_text('{"passed": true}')
    (tmp_path / "REPORT.md").write_text(
        "| task | runs |\n|---|---|\n| task-a | 4 |\n| task-b | 2 |\n", encoding="utf-8"
    )
    data = json.loads(run_cli(capsys, "audit", str(tmp_path), "--json").out)
    by_name = {c["configuration"]: c for c in data["configurations"]}
    assert (by_name["task-a"]["claimed"], by_name["task-a"]["claim_source"]) == (4, "REPORT.md:3")
    assert (by_name["task-b"]["claimed"], by_name["task-b"]["claim_source"]) == (2, "REPORT.md:4")
    text = run_cli(capsys, "audit", str(tmp_path)).out
    rows = {line.split()[0]: line.split() for line in text.splitlines() if "task-" in line[:8]}
    assert rows["task-a"][2] == "4" and rows["task-b"][2] == "2"


def test_explain_quotes_every_claim_and_every_number_set_aside_with_its_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(
        tmp_path,
        "We ran every configuration 3 times.\n\nThe agent may make up to 5 attempts per tool call.",
    )
    r = run_cli(capsys, "audit", str(root), "--explain")
    assert '  README.md:3  [verb + N times]  3  "We ran every configuration 3 times."' in r.out
    assert (
        "  README.md:5  [a limit, not a count of runs]  5  "
        '"The agent may make up to 5 attempts per tool call."' in r.out
    )
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert [c["rule"] for c in data["claims"]] == ["verb + N times"]
    assert data["set_aside"] == [
        {
            "source": "README.md:5",
            "quote": "The agent may make up to 5 attempts per tool call.",
            "rule": "a limit, not a count of runs",
        }
    ]


def _one_run_folder(root: Path, files: dict[str, str]) -> Path:
    """A folder holding one graded run of one configuration, and `files` (path: text)."""
    (root / "outputs" / "a" / "run-1").mkdir(parents=True)
    (root / "outputs" / "a" / "run-1" / "grade.json").write_text('{"passed": true}')
    (root / "benchmark.json").write_text('{"k": 1}')
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_claim_not_attached_to_results_is_shown_but_fails_no_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run command in a code block of docs/ that nothing around tells was run: read,
    shown with the reason, and no plan (exit 0 with --strict over one run)."""
    root = _one_run_folder(
        tmp_path,
        {"docs/ci.md": "The gate, from the shell:\n\n```bash\npython eval.py --num-runs 3\n```\n"},
    )
    r = run_cli(capsys, "audit", str(root), "--strict")
    assert r.code == 0, r.out
    assert "read, not attached to results (plans nothing; --explain): 3 (docs/ci.md:4)" in r.out
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert data["claims"] == [] and data["k_plan"] == 1
    assert data["set_aside"] == [
        {
            "source": "docs/ci.md:4",
            "quote": "python eval.py --num-runs 3",
            "rule": "not attached to results: a code block in a write-up, not told as run",
        }
    ]


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        (
            "docs/ci.md",
            "We ran:\n\n```bash\npython eval.py --num-runs 3\n```\n",
            "a code block told as run",
        ),
        ("docs/tasks.md", "同任务跑 3 次。\n\n准确率 82%。\n", "results reported"),
        ("docs/tasks.md", "Held-out pass^3 for the base model.\n", "results named"),
        ("docs/tasks.md", "Each task was run 3 times.\n", "told as done"),
        ("README.md", "- Trials: 3\n", "the folder's own report"),
    ],
)
def test_a_claim_attached_to_results_fails_strict_and_explain_names_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, why: str
) -> None:
    root = _one_run_folder(tmp_path, {name: text})
    assert run_cli(capsys, "audit", str(root), "--strict").code == 1
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert [c["k"] for c in data["claims"]] == [3]
    assert data["claims"][0]["attached"].startswith(why)
    out = run_cli(capsys, "audit", str(root), "--explain").out
    assert f"(attached: {why}" in out


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("docs/tasks.md", "可重复性——同任务跑 3 次字节稳定。\n", "no result reported near it"),
        ("run_ablation.py", "python run_ablation.py --seeds 0 1 2\n", "a command shown"),
        ("sweep.py", '"""\nnum_seeds: 3\n"""\n', "shown in a docstring"),
    ],
)
def test_claims_far_from_results_are_set_aside_as_not_attached(
    name: str, text: str, why: str
) -> None:
    reading = read_text(text, name)
    assert reading.claims == [] and reading.set_aside
    assert all(a.rule.startswith("not attached to results: " + why) for a in reading.set_aside)


def test_claims_are_read_in_subfolders_but_never_inside_run_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model's transcript saying "I ran the tests 9 times" is no report; docs/ is one."""
    root = _folder(tmp_path, "Results below.")
    (root / "outputs" / "a" / "run-1" / "transcript.md").write_text("We ran it 9 times.")
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "deep" / "results.md").write_text("Each task was run 3 times.\n")
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert [(c["k"], c["source"]) for c in data["claims"]] == [(3, "docs/deep/results.md:1")]


def test_claims_beyond_the_depth_bound_are_left_out_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path, "Results below.")
    deep = root / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "notes.md").write_text("We ran it 7 times.\n")
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert data["claims"] == []
    assert any("folders below DIR were not read" in n for n in data["notes"])


def test_a_fifo_among_the_text_files_is_never_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    root = _folder(tmp_path, "We ran it 2 times.")
    os.mkfifo(root / "notes.txt")
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert [c["k"] for c in data["claims"]] == [2]


def test_a_file_with_more_candidates_than_the_bound_is_read_in_part_with_a_note() -> None:
    from passhat.sources.claims import MAX_CANDIDATES, read_text

    text = "\n".join(f'"n_trials": {2 + i % 3},' for i in range(MAX_CANDIDATES + 500))
    reading = read_text(text, "big.json")
    assert len(reading.claims) == MAX_CANDIDATES
    assert reading.notes == [
        f"big.json: more than {MAX_CANDIDATES:,} numbers read as possible claims; "
        f"the rest of it (from line {MAX_CANDIDATES + 1}) was not read"
    ]


def test_files_past_the_byte_budget_are_left_out_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from passhat.sources.audit import walk

    monkeypatch.setattr(walk, "MAX_CLAIM_BYTES", 30)
    root = _folder(tmp_path, "We ran it 2 times, as the table shows.")
    (root / "zz.md").write_text("We ran it 5 times.\n")
    data = json.loads(run_cli(capsys, "audit", str(root), "--json").out)
    assert [c["k"] for c in data["claims"]] == [2]
    assert "zz.md and the files after it were not read for claims" in " ".join(data["notes"])


def test_the_explain_output_docs_audit_shows_is_what_audit_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/audit.md shows `--explain` over a README with a sentence, a table, a limit and
    a docs/eval.yaml: every line it shows is a line audit prints for that folder."""
    docs = (HERE.parent / "docs" / "audit.md").read_text(encoding="utf-8")
    shown = docs.split("`--explain` lists, after the audit,")[1].split("```")[1]
    (tmp_path / "README.md").write_text(
        "# Results\n\nSetup.\nWe ran every configuration three times.\n\n"
        "| config | runs | score |\n|---|---|---|\n| baseline | 3 | 0.6 |\n| guide | 2 | 0.5 |\n\n"
        "The agent may make up to 5 attempts per tool call.\n"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "eval.yaml").write_text("model: x\nepochs: 3\n")
    (tmp_path / "docs" / "notes.md").write_text(
        "The runner, from the shell:\n\n```bash\npython eval.py --num-trials 5\n```\n"
    )
    for config, passed in (("baseline", "true"), ("guide", "false")):
        (tmp_path / config / "run-1").mkdir(parents=True)
        (tmp_path / config / "run-1" / "grade.json").write_text(f'{{"passed": {passed}}}')
    out = run_cli(capsys, "audit", str(tmp_path), "--explain").out
    lines = [line for line in shown.strip().splitlines() if line.strip()]
    assert len(lines) == 8
    for line in lines:
        assert line in out.splitlines(), line


@pytest.mark.parametrize(
    ("text", "name", "rule"),
    [
        (
            "Total runs: 10",
            "README.md",
            "a total over configurations, not a count per configuration",
        ),
        (
            "We ran 12 trials in total.",
            "README.md",
            "a total over configurations, not a count per configuration",
        ),
        (
            "If you run it 5 times, it varies.",
            "README.md",
            "a condition or recommendation, not a result",
        ),
        (
            "Users can pass --runs 5 to repeat.",
            "README.md",
            "a condition or recommendation, not a result",
        ),
        ("Failed runs were re-run 3 times.", "README.md", "retries of failures, not runs"),
        ("pytest -n 4 tests/", "README.md", "a flag the tool uses for something else"),
        ("for task in 1 2 3; do run $task; done", "go.sh", "a loop over something other than runs"),
        ("batches of 32 samples", "README.md", "a batch size"),
        ("### Training\n\n- Epochs: 4", "README.md", "training or tuning, not evaluation runs"),
        (
            "judge:\n  repeats: 3",
            "c.yaml",
            "a setting of something else (a judge, retries, training, a schedule)",
        ),
        (
            "## Next steps\n\nRun each task 5 times.",
            "README.md",
            "a section of plans, instructions, options or examples",
        ),
        ("It is not three independent runs.", "README.md", "a negation, not a claim"),
        ("For a smoke test use --num-trials 2 first.", "README.md", "an instruction, not a result"),
        ("Three attempts per task, then stop.", "README.md", "a limit, not a count of runs"),
        ("The job runs three times a day.", "README.md", "a schedule, not a count of runs"),
        (
            "The dataset contains 9 tasks, each performed 5 times by volunteers.",
            "README.md",
            "a data set's make-up, not runs",
        ),
        ("We scored 200 samples per task.", "README.md", "samples of a data set, not generations"),
        (
            "It runs each task twice: first without the tool, then with it.",
            "README.md",
            "different configurations, one run each",
        ),
        ("Seeds 0, 1 and 2 are held out.", "README.md", "held back, not run"),
        (
            "Proposed defaults: three random seeds.",
            "README.md",
            "an example, default or suggestion, not a result",
        ),
        ("它被稱為「跑三次取平均」。", "README.md", "a phrase quoted, not a claim"),
        (
            'p.add_argument("--n", help="Run each prompt 4 times.")',
            "eval.py",
            "an option's help or default, not a result",
        ),
        ("Note that avg@4 ≈ avg@k here.", "README.md", "a figure in a formula, not a result"),
        (
            "(the original paper reports the mean over 4 runs)",
            "README.md",
            "another work's runs, not this one's",
        ),
        (
            'sed -i "s/n_runs: 5/x/" c.yaml',
            "go.sh",
            "a text substitution's pattern, not a setting",
        ),
        (
            "seed_prompts: []\nnum_seeds: 5",
            "gen.yaml",
            "seeds that are inputs or an ensemble's members, not runs",
        ),
        (
            'echo "  $0 --num-trials 5"',
            "go.sh",
            "an option's help or default, not a result",
        ),
        ("Three runs per task were not performed.", "README.md", "a negation, not a claim"),
        ("Run 3-5 trials per task first.", "README.md", "an instruction, not a result"),
        (
            "The judge is queried 3 times per answer.",
            "README.md",
            "a judge's or annotator's repeats, not runs",
        ),
        ("Which one varies less over 3 seeds?", "README.md", "a question, not a claim"),
        ("## CI run ledger (4 runs)", "README.md", "CI or build runs, not evaluation runs"),
        (
            "During RL training we sample 8 responses per prompt.",
            "README.md",
            "generations for training or a data set, not evaluation runs",
        ),
        (
            "Each serial bit is sampled 16 times.",
            "README.md",
            "what is repeated is not a run",
        ),
    ],
    ids=[
        *("total", "in-total", "condition", "can", "retries", "tool-flag", "task-loop", "batch"),
        *("training", "judge", "next-steps", "negation", "instruction", "budget", "schedule"),
        *("dataset", "data-samples", "variants", "held-back", "suggested", "quoted", "help"),
        *("formula", "other-work", "sed", "seed-inputs", "usage", "negated-after", "run-told"),
        *("judge", "question", "ci", "rl-generations", "repeated-thing"),
    ],
)
def test_each_new_context_sets_a_number_aside_by_its_named_rule(
    text: str, name: str, rule: str
) -> None:
    """Issue 34: every number set aside names the rule that did it (`audit --explain`)."""
    from passhat.sources.claims import read_text

    reading = read_text(text, name)
    assert reading.claims == []
    assert [a.rule for a in reading.set_aside] == [rule]


def test_a_frame_holds_every_enclosing_heading_and_a_fence_comment_is_no_heading() -> None:
    """Issue 34, fifth round: a sub-heading under "## Improvements" is still a section of
    plans; "# Illustrative config" inside a code fence is no heading but adds to the
    lead-in above the fence; "## Results" after it starts a new section."""
    from passhat.sources.claims import read_text

    improvements = "## Improvements\n\n### Stability\n\nRuns per task: 5\n"
    assert read_text(improvements, "README.md").claims == []
    fence = "**Config:**\n\n```yaml\n# Illustrative config\nn_runs: 4\n```\n"
    assert read_text(fence, "README.md").claims == []
    results = improvements + "\n## Results\n\nRuns per task: 3\n"
    assert [c.k for c in read_text(results, "README.md").claims] == [3]


def test_a_scripts_prose_without_its_markers_and_a_setting_named_by_its_comment() -> None:
    """Issue 34, fifth round: a line of a script that is prose, not code, is read by the
    prose rules; a setting whose comment says it counts runs is read with that count."""
    docstring = "Evaluate it.\n\nEach task is attempted four times\nand averaged.\n"
    (claim,) = claims_in(docstring, "eval.py")
    assert (claim.k, claim.source, claim.rule) == (4, "eval.py:3", "verb + N times")
    assert claims_in("x = foo(3)\nfor i in range(3):\n    run(i)\n", "eval.py") == []
    (claim,) = claims_in("# how many times we repeat each task\nnloops=3\n", "go.sh")
    assert (claim.k, claim.source, claim.rule) == (3, "go.sh:2", "setting described by its comment")
    assert claims_in("# how many times to retry a request\nn=3\n", "go.sh") == []


def test_a_total_with_a_scope_of_its_own_is_still_a_claim() -> None:
    assert [c.k for c in claims_in("A total of 3 runs for each model.", "R.md")] == [3]
    assert [c.k for c in claims_in("Total runs: 45 (9 tests × 5 runs)", "R.md")] == [5]


def test_comments_docstrings_and_strings_of_data_files_are_read_as_prose_at_their_line() -> None:
    script = "#!/bin/bash\nset -e\n# run each task 4 times\npython eval.py\n"
    (claim,) = claims_in(script, "eval.sh")
    assert (claim.k, claim.source, claim.rule) == (4, "eval.sh:3", "verb + N times")
    summary = '{\n  "model": "m",\n  "notes": "mean over three seeds per task"\n}'
    (claim,) = claims_in(summary, "summary.json")
    assert (claim.k, claim.source) == (3, "summary.json:3")


def test_a_flag_in_a_comment_is_read_as_prose_and_a_continued_command_as_one() -> None:
    """A commented-out `--num-trials 5` is not run; `-n 8` three lines below `harbor run \\`
    is harbor's concurrency, not a count of runs."""
    assert claims_in("# python eval.py --num-trials 5\npython eval.py\n", "run.sh") == []
    command = "harbor run \\\n  --dataset tb \\\n  -n 8 \\\n  --n-attempts 1\n"
    reading = read_text(command, "run.sh")
    assert [c.k for c in reading.claims] == [1]
    assert [(a.source, a.rule) for a in reading.set_aside] == [
        ("run.sh:3", "a flag the tool uses for something else")
    ]


def test_text_a_model_wrote_or_was_given_in_a_data_file_is_never_read() -> None:
    """A reply saying "I ran the tests 3 times" or a task prompt is data, not the write-up."""
    assert claims_in('{"role": "assistant", "content": "I ran the tests 3 times."}', "a.json") == []
    assert claims_in("prompt: Run the script 5 times and report.", "task.yaml") == []


@pytest.mark.parametrize(
    "text",
    [
        "Der Test wurde 3mal wiederholt.",
        "Jede Konfiguration wurde 3-mal ausgeführt.",
        "Die Messung wurde wiederholt dreimal.",
    ],
)
def test_german_counts_of_times_are_read_in_digits_and_after_their_verb(text: str) -> None:
    """'3mal' is a count of 3 (it was matched and lost: no claim, nothing set aside), and
    'wiederholt dreimal' is read (it stopped the reader with a StopIteration)."""
    assert [c.k for c in read_text(text, "REPORT.md").claims] == [3]


def test_a_run_of_spaces_within_a_line_is_cut_and_lines_keep_their_numbers() -> None:
    """The readers see at most SPACE_RUN spaces in a row (of any width: tabs, NBSP, U+3000);
    line breaks (\\r too) are never touched, so every claim keeps its line."""
    from passhat.sources.claims.reader import SPACE_RUN, bounded_spaces

    long = "x" + " \t\u00a0\u3000" * SPACE_RUN + "y"
    assert bounded_spaces(long) == "x" + (" \t\u00a0\u3000" * SPACE_RUN)[:SPACE_RUN] + "y"
    kept = "a" + " " * SPACE_RUN + "b\n" + "\r" * 200 + "\n" * 200 + "c"
    assert bounded_spaces(kept) == kept
    claims = claims_in(" " * 5000 + "?=\n\nWe ran each configuration 3 times.\n", "REPORT.md")
    assert [(c.k, c.source) for c in claims] == [(3, "REPORT.md:3")]


def test_a_hostile_line_of_spaces_is_audited_like_any_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file of the folder holding a line of 200,000 spaces before `?=` (or `x:` and `y`):
    the readers' patterns that let two spaced quantifiers share a run took time quadratic in
    it (20,000 spaces 23 s; this one would have run for half an hour, a 2 MB one for days),
    and `audit` never ended. Now the folder is audited, and the claim after it is read."""
    root = _folder(tmp_path, "x:" + " " * 200_000 + "y\n\na:" + " " * 200_000 + "b:")
    (root / "config.yaml").write_text(" " * 200_000 + "?=\nruns: 5\n")
    r = run_cli(capsys, "audit", str(root), "--strict", "--json")
    data = json.loads(r.out)
    assert r.code == 1 and data["claimed"]["k"] == 5, data
    assert data["claimed"]["source"] == "config.yaml:2"


def test_this_thesis_own_runs_are_not_another_papers() -> None:
    """ "本论文" / "本論文" / "본 논문" is this paper, its own work (a thesis's usual subject):
    its runs are claimed; "论文" alone is another paper's (set aside, as before)."""
    own = [
        "本论文中，每个任务运行 5 次取平均。",
        "本論文では各設定を5回実行した平均を報告する。",
        "본 논문에서는 각 설정을 5회 반복 실험했다.",
    ]
    for text in own:
        assert [c.k for c in claims_in(text + "\n", "REPORT.md")] == [5], text
    assert claims_in("论文正文只说明每个基线运行 5 次取平均。\n", "REPORT.md") == []


def test_a_hostile_line_of_digits_before_a_chinese_unit_is_read_in_linear_time() -> None:
    """A line of 200,000 digits in a file that also holds 次 or 个 (its rules' trigger): the
    Chinese and Japanese counts (`\\d+` before 次, 个 seed, つのシード) were tried from every
    digit of the run, each scanning to its end: time quadratic in it (40,000 digits took
    50-160 s a rule; this one would run for hours). Now a count starts at a run's first digit."""
    text = "1" * 200_000 + " 次\n\n我们每个任务运行了 5 次实验。\n"
    assert [(c.k, c.source) for c in claims_in(text, "REPORT.md")] == [(5, "REPORT.md:3")]
