"""Labels of the reports in English and Traditional Chinese (zh-TW).

One catalog serves the HTML report and, later, the terminal report: a label is
looked up by a stable key, never by its English text. Metric names (pass@1,
pass@k, pass^k) are not translated: they are names, not words. A label may hold
`{placeholders}`; `t(key, lang, name=value)` fills them.

The Chinese labels follow the seed's own wording (單次通過率, 至少一次通過,
全部通過, 偶爾漏掉, 實際完成的次數, 參與計算的次數...).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from passhat.errors import InputError

__all__ = ["LABELS", "LANGS", "check_lang", "default_lang", "t", "verdict_key", "verdict_label"]

_EN: dict[str, str] = {
    # header
    "report_title": "passhat report",
    "experiment": "experiment",
    "suite": "suite",
    "suite_hash": "hash",
    "agent": "agent",
    "model": "model",
    "prompt_version": "prompt version",
    "requested_k": "requested k",
    "fingerprint": "fingerprint",
    "created": "created",
    "harness_version": "harness version",
    "cassette": "cassette",
    "none": "–",
    "colon": ": ",
    # accounting
    "accounting": "accounting",
    "runs": "runs",
    "run": "run",
    "run_n": "run {n}",
    "requested": "requested",
    "completed": "completed",
    "counted": "counted",
    "errored": "errored",
    "missing": "missing",
    "plan_met": "plan met",
    "plan_not_met": "plan NOT met",
    "plan_met_line": "Plan met: every case has {k} counted runs.",
    "plan_not_met_line": "Plan NOT met: dataset figures are {at} / {hat}, not pass@{k} / pass^{k}.",
    "shortfall_line": "{counted} of {k} requested runs counted",
    "missing_runs": "missing runs (no record)",
    "errored_runs": "errored runs (no verdict)",
    "left_out": "left out (no counted run)",
    "no_counted_run": "no counted run yet: pass@k cannot be computed",
    # dataset figures
    "dataset": "dataset",
    "pass_rate": "pass rate",
    "estimates_pass_at_1": "estimates pass@1",
    "at_least_once": "share of cases with at least one pass (j = {j})",
    "every_time": "share of cases passing every time (j = {j})",
    "dataset_counts": "cases {cases} · counted runs {runs} · passes {passes}",
    "runs_passed": "passes / counted runs: {passes}/{runs}",
    "j_note": "j = {j}: the most counted runs every included case reaches.",
    "j_short_note": "The plan asked for k = {k}; figures use j = {j}, not k.",
    "ci": "{level}% CI",
    "ci_pending": "confidence interval: not computed",
    "ci_needs_cases": "needs at least 2 cases with counted runs",
    "ci_method_robust": "cluster-robust standard error over {cases} cases",
    "ci_method_bootstrap": "cluster bootstrap over {cases} cases",
    "ci_method_exact": "exact bound: every case at the same value",
    "items_overview": "items",
    # per-case table
    "cases": "cases",
    "case": "case",
    "passes": "passes",
    "rate": "rate",
    "sort_hint": "Click a column header to sort.",
    "n_note": "n = each case's counted runs.",
    "yes": "yes",
    "no": "no",
    # item stability
    "item_stability": "item stability",
    "runs_by_items": "runs × items",
    "item": "item",
    "found": "found",
    "missed": "missed",
    "extra": "extra",
    "not_produced": "not produced",
    "no_verdict": "no verdict",
    "verdict": "verdict",
    "missed_in_runs": "missed in runs",
    "always_found": "always found",
    "sometimes_missed": "sometimes missed",
    "always_missed": "always missed",
    "extra_every_run": "extra every run",
    "extra_sometimes": "extra sometimes",
    "found_count": "found {hits}/{runs}",
    "extra_count": "extra in {hits}/{runs}",
    "in_runs": "runs {runs}",
    "no_items": "No set-valued scorer: nothing to show item by item.",
    "legend": "legend",
    "expected_items": "expected items",
    "extra_items": "extra items",
    "passed": "passed",
    "failed": "failed",
    # tool use
    "tool_use": "tool use",
    "tool": "tool",
    "runs_calling": "runs calling",
    "runs_calling_of": "{calling} of {runs}",
    "calls_per_run": "calls per run",
    "calls": "calls",
    "errors": "errors",
    "never_called": "never called",
    "all_cases": "all cases",
    # curves
    "curves": "pass@j and pass^j over j",
    "curves_note": "Mean over the {cases} included cases of the unbiased estimators, "
    "for j = 1 to {n}, the fewest counted runs of any case.",
    "curve_single": "Some case has only 1 counted run: the curves have a single point.",
    "j_axis": "j (runs)",
    "value": "value",
    # runs and transcripts
    "runs_section": "runs",
    "transcript": "transcript",
    "tool_calls": "tool calls",
    "final_state": "final state",
    "score": "score",
    "output": "output",
    "arguments": "arguments",
    "result": "result",
    "error": "error",
    "duration": "duration",
    "tokens": "tokens in / out",
    "seed": "seed",
    "retries": "retries",
    "expected": "expected",
    "actual": "actual",
    "details": "details",
    "role_system": "system",
    "role_user": "user",
    "role_assistant": "assistant",
    "role_tool": "tool",
    "no_record": "no record: this run never finished",
    "no_transcript": "No transcript in this record.",
    "needs_js": "Transcripts are unpacked by JavaScript: enable it, or print one run "
    "with `passhat show`.",
    "unpacking": "unpacking…",
    "cannot_unpack": "This browser cannot unpack the transcripts (no DecompressionStream).",
    "back_to_grid": "back to the grid",
}

_ZH_TW: dict[str, str] = {
    # header
    "report_title": "passhat 報告",
    "experiment": "實驗",
    "suite": "測試集",
    "suite_hash": "雜湊",
    "agent": "代理程式",
    "model": "模型",
    "prompt_version": "prompt 版本",
    "requested_k": "要求的 k",
    "fingerprint": "指紋",
    "created": "建立時間",
    "harness_version": "harness 版本",
    "cassette": "錄製的回應",
    "none": "–",
    "colon": "：",
    # accounting
    "accounting": "執行次數核對",
    "runs": "執行次數",
    "run": "執行",
    "run_n": "第 {n} 次",
    "requested": "要求",
    "completed": "完成",
    "counted": "計入",
    "errored": "出錯",
    "missing": "缺少",
    "plan_met": "已達計畫",
    "plan_not_met": "未達計畫",
    "plan_met_line": "已達計畫：每個案例都有 {k} 次計入的執行。",
    "plan_not_met_line": "未達計畫：資料集指標是 {at} / {hat}，不是 pass@{k} / pass^{k}。",
    "shortfall_line": "要求 {k} 次，計入 {counted} 次",
    "missing_runs": "缺少的執行（沒有紀錄）",
    "errored_runs": "出錯的執行（沒有判定）",
    "left_out": "未納入（沒有計入的執行）",
    "no_counted_run": "尚無計入的執行：算不出 pass@k",
    # dataset figures
    "dataset": "資料集",
    "pass_rate": "單次通過率",
    "estimates_pass_at_1": "估計 pass@1",
    "at_least_once": "至少通過一次的案例比例（j = {j}）",
    "every_time": "每次都通過的案例比例（j = {j}）",
    "dataset_counts": "案例 {cases} 個 · 計入 {runs} 次執行 · 通過 {passes} 次",
    "runs_passed": "通過次數／計入次數：{passes}/{runs}",
    "j_note": "j = {j}：每個納入的案例都達到的最多計入次數。",
    "j_short_note": "計畫要求 k = {k}；指標使用 j = {j}，而不是 k。",
    "ci": "{level}% 信賴區間",
    "ci_pending": "信賴區間：未計算",
    "ci_needs_cases": "至少需要 2 個有計入執行的案例",
    "ci_method_robust": "以案例為群集的穩健標準誤（{cases} 個案例）",
    "ci_method_bootstrap": "以案例為群集的 bootstrap（{cases} 個案例）",
    "ci_method_exact": "精確界限：每個案例的值都相同",
    "items_overview": "項目",
    # per-case table
    "cases": "案例",
    "case": "案例",
    "passes": "通過次數",
    "rate": "通過率",
    "sort_hint": "點選欄位標題即可排序。",
    "n_note": "n = 各案例計入的執行次數。",
    "yes": "是",
    "no": "否",
    # item stability
    "item_stability": "項目穩定度",
    "runs_by_items": "執行 × 項目",
    "item": "項目",
    "found": "找到",
    "missed": "漏掉",
    "extra": "多標",
    "not_produced": "未產出",
    "no_verdict": "沒有判定",
    "verdict": "判定",
    "missed_in_runs": "漏掉的執行",
    "always_found": "每次都找到",
    "sometimes_missed": "偶爾漏掉",
    "always_missed": "每次都漏掉",
    "extra_every_run": "每次都多標",
    "extra_sometimes": "偶爾多標",
    "found_count": "找到 {hits}/{runs}",
    "extra_count": "多標 {hits}/{runs}",
    "in_runs": "第 {runs} 次",
    "no_items": "沒有比對集合的 scorer：無法逐項顯示。",
    "legend": "圖例",
    "expected_items": "期望的項目",
    "extra_items": "多標的項目",
    "passed": "通過",
    "failed": "未通過",
    # tool use
    "tool_use": "工具使用",
    "tool": "工具",
    "runs_calling": "有呼叫的執行",
    "runs_calling_of": "{runs} 次中 {calling} 次",
    "calls_per_run": "每次執行的呼叫數",
    "calls": "呼叫數",
    "errors": "錯誤",
    "never_called": "從未呼叫",
    "all_cases": "全部案例",
    # curves
    "curves": "pass@j 與 pass^j 隨 j 的變化",
    "curves_note": "{cases} 個納入案例的無偏估計值平均，j 從 1 到 {n}（各案例計入次數的最小值）。",
    "curve_single": "有案例只計入 1 次執行：曲線只有一個點。",
    "j_axis": "j（執行次數）",
    "value": "數值",
    # runs and transcripts
    "runs_section": "執行紀錄",
    "transcript": "對話紀錄",
    "tool_calls": "工具呼叫",
    "final_state": "最終狀態",
    "score": "評分",
    "output": "產出",
    "arguments": "參數",
    "result": "結果",
    "error": "錯誤",
    "duration": "耗時",
    "tokens": "輸入／輸出 token",
    "seed": "種子",
    "retries": "重試",
    "expected": "期望",
    "actual": "實際",
    "details": "細節",
    "role_system": "系統",
    "role_user": "使用者",
    "role_assistant": "助理",
    "role_tool": "工具",
    "no_record": "沒有紀錄：這次執行沒有完成",
    "no_transcript": "這筆紀錄沒有對話內容。",
    "needs_js": "對話紀錄由 JavaScript 解開：請啟用 JavaScript，或用 `passhat show` 印出單次執行。",
    "unpacking": "解開中…",
    "cannot_unpack": "這個瀏覽器無法解開對話紀錄（不支援 DecompressionStream）。",
    "back_to_grid": "回到表格",
}

LABELS: dict[str, dict[str, str]] = {"en": _EN, "zh-TW": _ZH_TW}
"""Language -> label key -> label. Every language has every key."""

LANGS: tuple[str, ...] = tuple(LABELS)
"""The languages a report can be written in."""

_LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")
"""POSIX precedence: the first one set decides."""


def check_lang(lang: str) -> str:
    """The catalog's spelling of `lang` (`zh_tw` -> `zh-TW`); an unknown one is an InputError."""
    wanted = lang.strip().replace("_", "-").lower()
    for known in LANGS:
        if known.lower() == wanted:
            return known
    raise InputError(f"unknown language {lang!r}; choose one of: {', '.join(LANGS)}")


def t(key: str, lang: str, **values: object) -> str:
    """The label `key` in `lang`, with `{placeholders}` filled from `values`."""
    labels = LABELS.get(lang) or LABELS[check_lang(lang)]
    text = labels[key]
    return text.format(**values) if values else text


def verdict_key(verdict: str) -> str:
    """The label key of an item-stability verdict: `always missed` -> `always_missed`,
    `extra, every run` -> `extra_every_run`."""
    return re.sub(r"[^a-z]+", "_", verdict.lower()).strip("_")


def verdict_label(verdict: str, lang: str) -> str:
    """An item-stability verdict in `lang`; a verdict the catalog does not know stays as it is."""
    labels = LABELS.get(lang) or LABELS[check_lang(lang)]
    return labels.get(verdict_key(verdict), verdict)


def default_lang(environ: Mapping[str, str] | None = None) -> str:
    """zh-TW when the locale is Traditional Chinese (zh_TW, zh_Hant), else en."""
    env = os.environ if environ is None else environ
    for name in _LOCALE_VARS:
        value = env.get(name)
        if value:
            return "zh-TW" if value.startswith(("zh_TW", "zh-TW", "zh_Hant", "zh-Hant")) else "en"
    return "en"
