"""Terminal reports in English and Traditional Chinese (`--lang en|zh-TW`).

Labels are translated; data (case ids, items, tools, paths, recorded messages) and
metric names (pass@1, pass@k, pass^k) are not. English output is the one the
other test modules pin phrase by phrase.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType

from cli_helpers import CLARIFY, SEED, run_cli, run_seed
from passhat import stats
from passhat.accounting import account
from passhat.report.i18n import LABELS, LANGS, t
from passhat.report.terminal import (
    dataset_intervals_table,
    plans_panel,
    shortfall_lines,
    verdict_sentence,
)

ROOT = Path(__file__).resolve().parents[1]
COUPON = str(ROOT / "examples" / "verdicts" / "coupon.jsonl")

Rows = list[tuple[str, int, str]]

ALLOWED_ASCII = {
    # metric names and the letters of formulas: pass@1, pass^3, n/n, E[p^m], t(1), B = 2000
    *("pass", "n", "j", "k", "p", "q", "P", "E", "t", "A", "B", "MDE", "z"),
    # names kept as they are in Taiwan usage
    *("Wilson", "Beta", "Jeffreys", "bootstrap", "prompt", "Fisher", "Benjamini", "Hochberg"),
    # command-line options, kept as typed: --price in=...,out=... or --prices FILE
    *("price", "prices", "in", "out", "token"),
}

LABEL_KEYS = {"pass rate (over runs)": "label_rate"}
"""Dataset labels that are words (translated), not metric names."""

ENGLISH_LABELS = (
    "requested",
    "completed",
    "counted",
    "passes",
    "dataset",
    "accounting",
    "Plan met",
    "Plan NOT met",
    "How sure",
    "intervals",
    "interval",
    "estimate",
    "method",
    "credible",
    "expected share",
    "Per case",
    "item stability",
    "tool use",
    "always missed",
    "sometimes missed",
    "always found",
    "missed in runs",
    "runs calling",
    "calls per run",
    "errors",
    "verdict",
    "experiment",
    "fingerprint",
    "created",
    "prompt version",
    "requested k",
    "inferred",
    "left out",
)


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A console wide enough that no data string wraps, so each can be found whole."""
    # `run`, `report`, `list` and `show` print on the console cli/_out.py makes when they
    # first print (rich stays unloaded before runs); _app's `console` is that one
    from passhat.cli import _out

    for module in ("metrics", "compare"):
        monkeypatch.setattr(f"passhat.cli.{module}.console", Console(highlight=False, width=400))
    monkeypatch.setitem(_out._CONSOLES, "console", Console(highlight=False, width=400))


@pytest.fixture
def seed_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A store holding the seed experiment (ac-conflict-001, k = 3, replayed)."""
    db = str(tmp_path / "p.db")
    r = run_seed(capsys, "--db", db, "-q")
    assert r.code == 0, r.err
    return db


def _write(tmp_path: Path, name: str, rows: Rows) -> str:
    path = tmp_path / name
    path.write_text(
        "".join(json.dumps({"case": c, "run": r, "status": s}) + "\n" for c, r, s in rows),
        encoding="utf-8",
    )
    return str(path)


def _rows(passes: dict[str, int], k: int) -> Rows:
    """Each case passes its first `passes[case]` runs of k."""
    return [
        (case, r, "passed" if r <= n else "failed")
        for case, n in passes.items()
        for r in range(1, k + 1)
    ]


def _english_left(text: str, data: Iterable[str]) -> set[str]:
    """ASCII words of `text` once the data strings are taken out, minus the allowed names."""
    for value in sorted(set(data), key=len, reverse=True):
        if value:
            text = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", " ", text)
    return set(re.findall(r"[A-Za-z][A-Za-z_]*", text)) - ALLOWED_ASCII


def _has_label(text: str, label: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", text) is not None


def _render(renderable: RenderableType) -> str:
    out = io.StringIO()
    Console(file=out, width=400, highlight=False).print(renderable)
    return out.getvalue()


def _report_data(capsys: pytest.CaptureFixture[str], db: str) -> list[str]:
    """The strings of the seed report that are data, from its JSON."""
    r = run_cli(capsys, "report", "latest", "--db", db, "--json")
    data: dict[str, Any] = json.loads(r.out)
    e = data["experiment"]
    recorded = e["model_config"].get("recorded") or {}
    return [
        e["id"],
        e["suite"],
        e["suite_hash"][:12],
        e["agent"],
        e["model"],
        e["prompt_version"] or "",
        e["fingerprint"],
        e["created_at"],
        *(str(value) for value in recorded.values()),  # the keys are labels, translated
        *(c["case"] for c in data["cases"]),
        *(i["item"] for i in data["items"]),
        *(u["tool"] for u in data["tools"]),
    ]


# --------------------------------------------------------------------------- the commands


def test_report_in_zh_tw_translates_labels_and_keeps_data(
    seed_db: str, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    r = run_cli(capsys, "report", "latest", "--db", seed_db, "--lang", "zh-TW")
    assert r.code == 0, r.err
    out = r.out
    for label in (
        "實驗",
        "測試集",
        "要求的 k",
        "執行次數核對",
        "已達計畫：每個案例都有 3 次計入的執行。",
        "項目穩定度 · ac-conflict-001（計入的執行）",
        "每次都漏掉",
        "偶爾漏掉",
        "每次都找到",
        "偶爾多標",
        "多標於第 3 次",
        "工具使用（完成的執行）",
        "有呼叫的執行",
        "預期比例",
        "信賴區間：只有一個案例有計入的執行",
    ):
        assert label in out, label
    for name in ("pass@3", "pass^3", "pass@n", "pass^n"):
        assert name in out
    for data in (SEED, "AC3:inconsistent_with_description", "AC5:conflict", "update_ticket"):
        assert data in out
    for label in ENGLISH_LABELS:
        assert not _has_label(out, label), label
    # the item evidence names where in the case file an item's source sits: data too
    data = [*_report_data(capsys, seed_db), *_evidence_paths(seed_db)]
    assert _english_left(out, data) == set()


def _evidence_paths(db: str) -> list[str]:
    from passhat.report.why import Explainer
    from passhat.store import Store

    with Store(db, read_only=True) as store:
        e = store.experiment("latest")
        why = Explainer(e, lambda case: store.runs(e.id, cases=[case]))(SEED)
    return [s.path for item in why.evidence for s in item.sources]


def test_report_in_english_is_unchanged(seed_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "report", "latest", "--db", seed_db, "--lang", "en")
    assert r.code == 0, r.err
    for phrase in (
        "always missed",
        "sometimes missed",
        "extra, sometimes",
        "Plan met",
        "item stability",
    ):
        assert phrase in r.out


def test_metrics_in_zh_tw_translates_labels_and_keeps_data(
    capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    r = run_cli(capsys, "metrics", COUPON, "--lang", "zh-TW")
    assert r.code == 0, r.err
    out = r.out
    for label in (
        "案例",
        "要求",
        "完成",
        "計入",
        "通過次數",
        "通過率",
        "（2 個案例）",
        "n = 各案例計入的執行次數",
        "單次通過率（以執行次數計）",
        "有多確定？2 個案例的 95% 區間",
        "群集 bootstrap，B = 2000",
        "比例：接下來 10 次全部通過",
        "Jeffreys 先驗 Beta(1/2, 1/2)",
        "各案例：通過率區間與接下來 10 次執行的預測",
        "預期比例",
        "要求的 k = 3（由最大的執行編號推斷；用 --k 明確指定）",
        "已達計畫",
    ):
        assert label in out, label
    for name in ("pass@3", "pass^3"):
        assert name in out
    for data in (COUPON, SEED, "illustrative-row"):
        assert data in out
    for label in ENGLISH_LABELS:
        assert not _has_label(out, label), label
    assert _english_left(out, [COUPON, SEED, "illustrative-row"]) == set()


def test_shortfalls_and_plans_in_zh_tw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    rows = _rows({"a": 2, "b": 1, "c": 3}, 3)
    rows.remove(("a", 3, "failed"))  # run 3 of a: missing
    rows = [(c, r, "errored" if (c, r) == ("b", 2) else s) for c, r, s in rows]
    rows.append(("dead", 1, "errored"))
    f = _write(tmp_path, "short.jsonl", rows)
    r = run_cli(capsys, "metrics", f, "--plan", "0.05", "--lang", "zh-TW")
    assert r.code == 0, r.err
    out = r.out
    for line in (
        "未達計畫：資料集指標是 pass@2 / pass^2，不是 pass@3 / pass^3。",
        "a：要求 3 次，計入 2 次（缺少第 3 次）",
        "b：要求 3 次，計入 2 次（第 2 次出錯）",
        "dead：要求 3 次，計入 0 次（缺少第 2、3 次；第 1 次出錯）",
        "未納入（沒有計入的執行）：dead",
        "規劃",
        "個百分點",
    ):
        assert line in out, line
    assert _english_left(out, [f, "a", "b", "c", "dead"]) == set()

    en = run_cli(capsys, "metrics", f, "--plan", "0.05")
    assert "dead: 0 of 3 requested runs counted (missing run 2, 3; errored run 1)" in en.out


def test_compare_in_zh_tw(tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None) -> None:
    cases = [f"c{i}" for i in range(12)]
    a = _rows({c: i % 2 for i, c in enumerate(cases)}, 3)
    b = [row for row in _rows({c: 3 for c in cases}, 3) if row[:2] != ("c4", 3)]
    b = [("renamed" if c == "c7" else c, r, s) for c, r, s in b]
    fa, fb = _write(tmp_path, "a.jsonl", a), _write(tmp_path, "b.jsonl", b)
    r = run_cli(capsys, "compare", fa, fb, "--lang", "zh-TW")
    assert r.code == 0, r.err
    out = r.out
    for label in (
        "執行次數核對",
        "c4：要求 3 次，計入 2 次（缺少第 3 次）",
        "配對：11 個案例兩邊都有計入的執行",
        "只在 A 中（未納入）：1：c7",
        "只在 B 中（未納入）：1：renamed",
        "11 個配對案例的 B − A",
        "有變化：11 個案例中的 11 個",
        "B 比較好：單次通過率（各案例通過率的平均） +",  # c4 counted 2 runs: case-weighted
    ):
        assert label in out, label
    assert "pass@2" in out and "pass^2" in out
    assert _english_left(out, [fa, fb, *cases, "renamed"]) == set()


@pytest.mark.parametrize("command", ["metrics", "report", "run", "resume", "compare"])
def test_an_unknown_language_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    db = str(tmp_path / "p.db")
    args = {
        "metrics": [COUPON],
        "report": ["latest", "--db", db],
        "run": [str(CLARIFY), "--case", SEED, "--db", db, "-q"],
        "resume": ["latest", "--db", db],
        "compare": [COUPON, COUPON],
    }[command]
    r = run_cli(capsys, command, *args, "--lang", "fr")
    assert r.code == 2
    assert r.err == "error: unknown language 'fr'; choose one of: en, zh-TW\n"
    assert r.out == ""
    assert not Path(db).exists(), "the language is checked before anything runs"


def test_the_locale_picks_zh_tw_and_json_stays_english(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    english_json = run_cli(capsys, "metrics", COUPON, "--json").out
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "zh_TW.UTF-8")
    r = run_cli(capsys, "metrics", COUPON)
    assert r.code == 0, r.err
    assert "執行次數核對" in r.out and "accounting" not in r.out
    assert run_cli(capsys, "metrics", COUPON, "--json").out == english_json
    r = run_cli(capsys, "metrics", COUPON, "--lang", "en")
    assert "accounting" in r.out and "執行次數核對" not in r.out


def test_run_prints_its_report_in_zh_tw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "p.db")
    r = run_seed(capsys, "--db", db, "--lang", "zh-TW")
    assert r.code == 0, r.err
    assert "：1 個案例 × k=3 = 3 次執行 →" in r.err
    assert "每次都漏掉" in r.out and "always missed" not in r.out
    r = run_cli(capsys, "resume", "latest", "--db", db, "--lang", "zh-TW")
    assert r.code == 0, r.err
    assert "沒有要做的，要求的執行都已記錄（3 次執行：通過 0、未通過 3、出錯 0）" in r.err
    assert "項目穩定度" in r.out


# --------------------------------------------------------------------------- the catalog


def test_every_label_has_both_languages() -> None:
    assert LANGS == ("en", "zh-TW")
    for key in LABELS["en"].keys() | LABELS["zh-TW"].keys():
        assert LABELS["en"].get(key, "").strip(), key
        assert LABELS["zh-TW"].get(key, "").strip(), key


def test_english_shortfall_lines_are_the_accountings_own() -> None:
    a = account([("x", 1, "passed"), ("y", 2, "errored"), ("z", 1, "failed")], k=3, cases=["w"])
    assert shortfall_lines(a) == a.shortfalls()
    assert shortfall_lines(a, limit=2) == a.shortfalls()[:2]


def _cjk(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


@pytest.mark.parametrize(
    "prior",
    [stats.JEFFREYS, stats.UNIFORM, "fitted"],
    ids=["jeffreys", "uniform", "fitted"],
)
def test_what_stats_writes_in_english_is_said_in_zh_tw(prior: stats.Prior) -> None:
    """Guards the catalog against drift from the wording of passhat.stats: a phrase it
    no longer recognises would be left in English."""
    varied = account(_rows({f"c{i}": i % 4 for i in range(8)}, 3), 3)
    u = stats.uncertainty(varied, prior=prior, target=0.05)
    zh = _render(dataset_intervals_table(u, lang="zh-TW"))
    assert _english_left(zh, []) == set()
    assert _cjk(zh)

    same = account(_rows({f"c{i}": 3 for i in range(4)}, 3), 3)
    u = stats.uncertainty(same, target=0.05)
    panel = plans_panel(u, lang="zh-TW")
    assert panel is not None and u.plan_notes
    for renderable in (dataset_intervals_table(u, lang="zh-TW"), panel):
        assert _english_left(_render(renderable), []) == set()

    one = account(_rows({"only": 1}, 3), 3)
    u = stats.uncertainty(one, target=0.05)
    panel = plans_panel(u, lang="zh-TW")
    assert panel is not None
    for renderable in (dataset_intervals_table(u, lang="zh-TW"), panel):
        assert _english_left(_render(renderable), ["only"]) == set()


def test_plan_notes_without_repeats_are_said_in_zh_tw() -> None:
    singles = account([(f"c{i}", 1, "passed" if i % 2 else "failed") for i in range(6)], 1)
    u = stats.uncertainty(singles, target=0.05)
    panel = plans_panel(u, lang="zh-TW")
    assert panel is not None and len(u.plan_notes) == 2
    assert _english_left(_render(panel), []) == set()


VERDICTS: dict[str, tuple[dict[str, int], dict[str, int], int, str, str]] = {
    # name: (passes of A, passes of B, k, metric, what the English says)
    "better": ({}, {"*": 3}, 3, "pass@1", "B is better"),
    "worse": ({"*": 3}, {}, 3, "pass@k", "B is worse"),
    "no-difference": ({"*": 1}, {"*": 1}, 3, "pass@1", "No difference detectable"),
    "runs-per-case": ({"*": 2}, {"*": 2, "c0": 4, "c1": 4, "c2": 0}, 4, "pass@1", "runs per case"),
    "runs-cannot": (
        {"*": 2},
        {"*": 0, "c0": 4, "c1": 4, "c2": 4, "c3": 4, "c8": 3},
        4,
        "pass@1",
        "more runs on these cases cannot get there",
    ),
    "pass-hat": ({"*": 2}, {"*": 2, "c0": 4, "c1": 4, "c2": 0}, 4, "pass^k", "To detect"),
}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_every_verdict_wording_is_said_in_zh_tw(name: str) -> None:
    spec_a, spec_b, k, metric, english = VERDICTS[name]
    cases = [f"c{i}" for i in range(9)]

    def side(spec: dict[str, int]) -> Any:
        return account(_rows({c: spec.get(c, spec.get("*", 0)) for c in cases}, k), k)

    c = stats.compare(side(spec_a), side(spec_b), metric=metric, resamples=200)  # type: ignore[arg-type]
    assert english in c.verdict.text
    assert verdict_sentence(c) == c.verdict.text
    zh = verdict_sentence(c, "zh-TW")
    assert zh != c.verdict.text and _cjk(zh)
    assert _english_left(zh, []) == set()
    assert (
        t(LABEL_KEYS[c.verdict.metric], "zh-TW") in zh
        if c.verdict.metric in LABEL_KEYS
        else c.verdict.metric in zh
    )
