"""Labels of the reports in English and Traditional Chinese (zh-TW).

One catalog serves the HTML report and the terminal reports: a label is
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
    "isolation": "isolation",
    "isolation_in-process": "agent ran in-process: not sealed (trusted code)",
    "isolation_namespace": "namespace: each run in a sandbox of its own",
    "isolation_process": "process: not sealed (the agent saw what passhat's user sees)",
    "cassette": "cassette",
    "source": "source",
    "source_figures": "its own figures",
    "no_model": "none (the agent calls no model)",
    "cassette_unused": "not used: no run asked the model",
    "experiments_in": "experiments in {path}",
    "configuration": "suite / agent / model",
    "list_caption": "counted = runs with a verdict / runs planned; errored runs have none",
    # tokens and cost
    "usage_title": "tokens and cost (completed runs)",
    "usage_title_tokens": "tokens (completed runs)",
    "tokens_in": "tokens in",
    "tokens_out": "tokens out",
    "tokens_per_run": "per run",
    "cost": "cost",
    "cost_per_run": "cost/run",
    "usage_all": "total",
    "price_note": "cost at {prices} per million tokens",
    "price_hint": "cost: give --price in=PRICE,out=PRICE (per million tokens) or --prices FILE",
    "cost_compare": "cost per run: A {a}, B {b}; B − A {diff}",
    "tokens_compare": "tokens per run: A {a}, B {b}; B − A {diff}",
    "cassette_model": "model",
    "cassette_prompt_version": "prompt version",
    "cassette_note": "note",
    "cassette_replayed_from": "replayed from",
    "cassette_experiment": "experiment",
    "cassette_suite_hash": "suite hash",
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
    "plan_met_line": "Plan met: every case has {runs}.",
    "replayed_line": "{runs} replayed from a cassette: re-plays of one recording, not independent trials of the model.",
    "requested_k_varied": "requested k = {least} to {most}, per case",
    "k_range": "{least} to {most}, per case",
    "plan_met_varied": "Plan met: every case has the counted runs asked of it ({held}).",
    "held_k": "k = {k} for {cases}",
    "k_varies_note": "An adaptive rule asked cases for different k: the pass rate over runs "
    "weighs the cases it ran further more, the mean of per-case rates weighs each case "
    "once; pass@j / pass^j are at the fewest runs asked of a case.",
    "adaptive_rounds": "adaptive rounds",
    "plan_not_met_line": "Plan NOT met: dataset figures are {at} / {hat}, not pass@{k} / pass^{k}.",
    "plan_not_met_left_out": "Plan NOT met: {left} of {cases} cases have no counted run and are "
    "left out; the dataset figures cover the other {included}.",
    "plan_not_met_left_out_one": "Plan NOT met: {left} of {cases} cases has no counted run and is "
    "left out; the dataset figures cover the other {included}.",
    "shortfall_line": "{counted} of {k} requested runs counted",
    "shortfall_line_one": "{counted} of {k} requested run counted",
    "missing_runs": "missing runs (no record)",
    "errored_runs": "errored runs (no verdict)",
    "limit_runs": "runs stopped by a limit (--max-turns, --token-budget): counted, graded on "
    "the state they reached",
    "left_out": "left out (no counted run)",
    "no_counted_run": "no counted run yet: pass@k cannot be computed",
    # dataset figures
    "dataset": "dataset",
    "pass_rate": "pass rate (over runs)",
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
    "ci_method_floor": "Wilson on all runs: the cluster SE was below the binomial floor",
    "ci_method_score": "Wilson score at the effective number of trials over {cases} cases",
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
    "for j = 1 to {n}, the fewest counted runs of any case. At j = 1 both curves are "
    "the mean of per-case rates, not the pass rate over runs.",
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
    "traceback": "traceback",
    "see_traceback": "the agent's traceback: passhat show {ref} CASE RUN",
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
    "page_of": "page {page} of {pages}",
    "previous": "previous",
    "next": "next",
    "not_embedded": "This run's detail is not in the page (see the note above the grid); "
    "print it with:",
    "detail_left_out": "Transcripts, tool calls and final states are in this page for the "
    "runs of cases 1 to {last} only, of {cases}. Any other run: `passhat show {ref} CASE RUN` "
    "prints it whole, and `passhat view` serves every run in a browser.",
    "cannot_unpack": "This browser cannot unpack the transcripts (no DecompressionStream).",
    "back_to_grid": "back to the grid",
    # terminal: the metrics table and the accounting panel
    "table_caption": "n = each case's counted runs; the dataset row uses j = {j}, "
    "which every included case reaches; its rate is the pass rate over runs "
    "(all passes / all counted runs)",
    "table_caption_cases": "n = each case's counted runs; the dataset row uses j = {j}, "
    "which every included case reaches; cases counted different runs, so its rate is "
    "the mean of per-case rates, each case once (over runs: {over})",
    "more_cases_hidden": "; {more} not listed (--all lists every case, --json has all)",
    "dataset_row": "dataset\n({cases})",
    "requested_k_is": "requested k = {k}",
    "k_inferred_hint": " (inferred from the largest run index; pass --k to state it)",
    "k_inferred": " (inferred from the largest run index)",
    "run_counts": "runs requested {requested}, completed {completed}, counted {counted}, "
    "errored {errored}, missing {missing}",
    "shortfall_case": "{case}: {counted} of {k} requested runs counted ({detail})",
    "shortfall_case_one": "{case}: {counted} of {k} requested run counted ({detail})",
    "missing_run_list": "missing run {runs}",
    "errored_run_list": "errored run {runs}",
    "more_short": "... and {more} short of the plan",
    "more_short_all": "... and {more} short of the plan (--all lists them, --json has all)",
    "and_more": " and {n} more",
    "sep": "; ",
    "list_sep": ", ",
    "period": ".",
    # terminal: intervals
    "intervals_note": "intervals: {note}",
    "ci_one_case": "one case with counted runs: a dataset interval needs 2 or more cases",
    "intervals_title": "How sure? {conf} intervals over {cases} cases",
    "intervals_caption": "Intervals describe a new draw of cases like these, each run as often; "
    "the runs of one case stay together.",
    "intervals_rough": " With under 10 cases they are rough.",
    "figure": "figure",
    "estimate": "estimate",
    "interval": "{conf} interval",
    "method": "method",
    "method_robust": "cluster-robust SE, t({df})",
    "method_bootstrap": "cluster bootstrap, B = {resamples}",
    "method_exact": "exact bound, every case at {value}",
    "share_of": "share: {label}",
    "next_all_pass": "next {m} all pass",
    "credible_method": "credible; {method}",
    "share_method": "{prior} prior, moment-matched Beta",
    "prior_jeffreys": "Jeffreys Beta(1/2, 1/2)",
    "prior_uniform": "uniform Beta(1, 1)",
    "prior_fitted": "fitted {beta}",
    # statistics (issue 13): names, methods, ledger, per-case tests
    "label_rate": "pass rate (over runs)",
    "label_case_rate": "pass rate (mean of per-case rates)",
    "label_at_1": "pass@1 (mean of per-case rates)",
    "label_hat_1": "pass^1 (mean of per-case rates)",
    "rate_over_runs_note": "pass rate (over runs) = all passes / all counted runs; "
    "the mean of per-case rates is {mean}",
    "case_rate_note": "cases counted different runs, so the pass rate is the mean of "
    "per-case rates (each case once); the pass rate over runs (all passes / all counted "
    "runs) is {over}",
    "method_bootstrap_widened": "cluster bootstrap, B = {resamples}, widened to the binomial floor",
    "method_at_k_bounds": "bounds of what full runs would have shown (runs not counted as "
    "failures, as passes), each with its score interval",
    "method_floor": "Wilson on all {runs} runs, t({df}): cluster SE below the binomial floor",
    "method_score": "Wilson score (continuity-corrected) at effective n = {n}, t({df})",
    "method_score_floor": "Wilson score (continuity-corrected) at effective n = {n}, "
    "binomial floor, t({df})",
    "share_fitted": "fitted Beta({a}, {b}) across cases, cluster bootstrap refitting it, "
    "B = {resamples}",
    "share_per_case": "{prior} prior, per case",
    "share_fitted_one_p": "fitted Beta({a}, {b}) across cases, cluster bootstrap refitting it, "
    "B = {resamples}, or one p for all cases (no spread beyond the runs' own)",
    "share_basis_fitted": "fitted Beta({a}, {b}) across cases",
    "share_few_cases": "no interval: {n} cases; a calibrated dataset forecast needs at least {min}",
    "share_one_case": "no interval: {n} case; a calibrated dataset forecast needs at least {min}",
    "share_no_spread": "no interval: every counted run passed (or every one failed), "
    "nothing to fit",
    "share_no_pairs": "no interval: no case has 2 counted runs to tell cases apart from runs",
    "no_interval": "no interval",
    "at_requested": "{label} over the {cases} that reached k = {k} ({left} left out)",
    "at_requested_every": "{label} at k = {k} over every case ({cases} reached k, {left} "
    "short of it)",
    "method_loss_bounds": "worst-case bounds: runs not counted (errored or missing) as "
    "failures, as passes, each with its score interval",
    "loss_row": "{label}, whatever the runs not counted hide",
    "loss_line": "{label} {estimate} [{low}–{high}] if the {lost} are unrelated to the "
    "outcome; {bound_low}–{bound_high} whatever they hide{unseen}.",
    "loss_unseen": " (counting {cases} with no counted run, at 0 and 1)",
    "n_lost_run": "{n} run not counted",
    "n_lost_runs": "{n} runs not counted",
    "ledger_title": "runs not counted: how far could they move the figures?",
    "ledger_head": "{errored} in {cases}. Each figure with the runs not counted "
    "left out (as above), counted as failures, and counted as passes:",
    "ledger_and_missing": "{errored} and {missing}",
    "n_missing_run": "{n} missing run",
    "n_missing_runs": "{n} missing runs",
    "ledger_excluded": "left out",
    "ledger_failures": "as failures",
    "ledger_passes": "as passes",
    "ledger_warning": "Warning: errored runs concentrate in low-pass cases: they fell in cases "
    "passing {where} of their counted runs, against {overall} where runs completed (z = {z}). "
    "Leaving errors out likely overstates {figures}, which weighs cases by their counted runs; "
    "read the range above.",
    "case_tests_caption": "Per case (q column): Fisher exact test, {correction} adjusted "
    "over the paired cases; a case is marked * at q < {alpha}.",
    "case_q": "q",
    # terminal: per-case forecast
    "forecast_title": "Per case: rate interval and forecast of the next {m} runs",
    "forecast_title_one": "Per case: rate interval and forecast of the next {m} run",
    "forecast_caption": "P(next {m} all pass) = E[p^{m}] under a {prior} prior. "
    "n of n passed: the failure rate is below 1 - {alpha}^(1/n), "
    "one-sided (the rule of three: about 3/n at 95 %).",
    "rate_wilson": "rate {conf} (Wilson)",
    "p_next_pass": "P(next {m} pass)",
    "credible": "{conf} credible",
    "nn_bound": "n/n bound",
    "bound_fail": "fail < {pct}",
    "bound_pass": "pass < {pct}",
    "expected_share": "expected share",
    # terminal: plans (--plan)
    "plan_title": "plan",
    "plan_head": "{label}: about ±{now} pts now ({cases} cases, {runs} runs each); "
    "for ±{target} pts at {conf}:",
    "plan_runs": "{runs} runs per case on these {cases} cases, or",
    "plan_runs_one": "{runs} run per case on these {cases} cases, or",
    "plan_no_runs": "no number of runs on these {cases} cases gets there;",
    "plan_cases": "{needed} cases at the current runs (at least {floor} cases, however many runs)",
    "plan_few_cases": "planning needs at least 2 cases with counted runs; have {cases}",
    "plan_no_repeat": "planning needs a case with 2+ counted runs to see within-case spread",
    "plan_no_spread": "every counted run passed (or every one failed): there is no spread to plan "
    "from; the interval is then the exact bound over cases, which shrinks like 3.7 / cases",
    "plan_no_spread_hat": "every case has pass^{j} = {value}: there is no spread to plan from; "
    "the interval is the exact bound over cases, which shrinks like 3.7 / cases",
    "plan_no_within": "a case with 2+ counted runs is needed to tell within-case "
    "from between-case spread",
    # terminal: comparison
    "experiment_source": "experiment {name} (agent {agent}, model {model})",
    "paired": "paired: {n} cases with counted runs on both sides",
    "only_in_a": "only in A (left out)",
    "only_in_b": "only in B (left out)",
    "one_side_uncounted": "no counted run on one side (left out)",
    "note_no_suite_hash": "{side} has no suite hash (a verdict file): "
    "cannot check both ran the same suite",
    "note_suites_differ": "suites differ: A ran suite {a}, B ran suite {b}; "
    "only the cases both contain are compared",
    "diff_title": "B − A over {cases} paired cases",
    "diff_caption": "pass@{j} / pass^{j}: the largest j every paired case reaches on both sides "
    "(A requested {ka}, B requested {kb}). p: two-sided sign-flip permutation test, "
    "B = {resamples}{flips} (pass rate: per-case rate differences weighted by each case's "
    "share of runs). Interval: {method}; it excludes 0 exactly when B is declared better "
    "or worse",
    "method_for": "{labels}: {method}",
    "cmp_method_flip": "inverted sign-flip test: the shifts it does not reject",
    "cmp_method_case_rate": "inverted sign-flip test and the paired t test, each case once: "
    "the shifts neither rejects",
    "cmp_method_floor": "inverted sign-flip test, widened to the binomial floor: "
    "every paired case moved by the same amount",
    "cmp_method_disagree": "inverted sign-flip test, widened to hold the pass rate over runs: "
    "the run-weighted case differences point the other way, so no verdict",
    "mde_none": "; MDE –: no difference is detectable with this many cases",
    "mde_no_test": "the sign-flip test cannot reach p < {alpha} with so few",
    "mde_over_100": "the MDE would be above 100 pts",
    "verdict_undetectable": "No difference detectable with {cases} paired cases ({why}): "
    "{evidence}.",
    "every_flip": " (every flip enumerated)",
    "mde_at_power": "; MDE at {power} power.",
    "pts": "{value} pts",
    "range": "{low} to {high}",
    "no_case_moved": "No paired case changed its pass rate.",
    "passes_over_counted": "passes / counted runs",
    "more_in_json": "; {n} more in --json",
    "moved_title": "Moved: {moved} of {cases} cases",
    "delta_rate": "Δ rate",
    "verdict_evidence": "{label} {diff} ({conf} interval {low} to {high}, p = {p}) "
    "over {cases} paired cases",
    "verdict_better": "B is better: {evidence}.",
    "verdict_worse": "B is worse: {evidence}.",
    "verdict_none": "No difference detectable at this size (MDE = {mde} at {power} power): "
    "{evidence}.",
    "verdict_to_detect": " To detect {diff} at {power} power: about {needed} cases "
    "at {runs_n} each",
    "verdict_or_runs": ", or {runs_n} per case on these {cases} cases",
    "n_run": "{n} run",
    "n_runs": "{n} runs",
    "verdict_runs_cannot": "; more runs on these cases cannot get there",
    # terminal: the experiment report
    "counted_runs_paren": " (counted runs)",
    "completed_runs_paren": " (completed runs)",
    "extra_in": "extra in {runs}",
    "all": "all",
    "more_item_cases": "item stability of {more}: --all or --json",
    "calls_in_runs": "{calls} in {runs}",
    "errored_line": "errored: {case} run {run}: {type}: {message}",
    "limit_line": "limit: {case}: {n} counted runs stopped by --max-turns or --token-budget "
    "(runs {runs}), graded on the state they reached",
    "more_errored": "... and {more} (--json lists them all)",
    "retried_line": "retried: {again} after an error ({earlier} earlier "
    "attempts kept); retried runs passed {retried}, first attempts {first}. Retrying only "
    "errored runs can bias the figures: compare the two.",
    # terminal: run and resume
    "run_start": "experiment {id}: {cases} × k={k} = {runs} → {path}",
    "runs_to_do": "experiment {id}: {runs} to do",
    "watch_live": "watch it live: {url}",
    "nothing_to_do": "experiment {id}: nothing to do, every requested run is recorded "
    "({runs}: passed {passed}, failed {failed}, errored {errored})",
    "nothing_to_do_errored": "; `passhat resume {ref} --errored` runs the errored ones again",
    "nothing_to_do_more": "; `passhat resume {ref} -k {k}` asks for more runs per case",
    "n_case": "{n} case",
    "n_cases": "{n} cases",
    "n_counted_run": "{n} counted run",
    "n_counted_runs": "{n} counted runs",
    "n_more_case": "{n} more case",
    "n_more_cases": "{n} more cases",
    "n_more_errored": "{n} more errored run",
    "n_more_erroreds": "{n} more errored runs",
    "n_run_again": "{n} run was run again",
    "n_run_agains": "{n} runs were run again",
    "n_errored_run": "{n} errored run",
    "n_errored_runs": "{n} errored runs",
    "summary_only": "{runs}: figures and accounting only; item stability and tool use: "
    "passhat report {ref}",
    "report_skipped": "{runs} recorded; the report: passhat report {ref}",
    "interrupted": "interrupted: {done} recorded, runs in flight were dropped (they count "
    "as missing); `passhat resume {ref}` runs the rest",
    "tally": "passed {passed} · failed {failed} · errored {errored}",
    "wrote": "wrote {path}",
    "cassette_gaps": "warning: the cassette {cassette} has no answer for {n} of {total} "
    "(cases: {cases}); those runs will end errored. Choose covered cases with --case.",
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
    "isolation": "隔離",
    "isolation_in-process": "代理程式在本程式的行程內執行：未隔離（受信任的程式碼）",
    "isolation_namespace": "namespace：每次執行各有自己的沙箱",
    "isolation_process": "process：未隔離（代理程式看得到執行帳號看得到的一切）",
    "cassette": "錄製的回應",
    "source": "來源",
    "source_figures": "來源自己的數字",
    "no_model": "無（代理不呼叫模型）",
    "cassette_unused": "未使用：沒有任何執行呼叫模型",
    "experiments_in": "{path} 中的實驗",
    "configuration": "測試集 / 代理 / 模型",
    "list_caption": "計入 = 有判定的執行 / 計畫的執行；出錯的執行沒有判定",
    "usage_title": "token 用量與成本（完成的執行）",
    "usage_title_tokens": "token 用量（完成的執行）",
    "tokens_in": "輸入 token",
    "tokens_out": "輸出 token",
    "tokens_per_run": "每次執行",
    "cost": "成本",
    "cost_per_run": "成本/次",
    "usage_all": "合計",
    "price_note": "成本以每百萬 token {prices} 計",
    "price_hint": "成本：請給 --price in=價格,out=價格（每百萬 token）或 --prices 檔案",
    "cost_compare": "每次執行成本：A {a}，B {b}；B − A {diff}",
    "tokens_compare": "每次執行 token：A {a}，B {b}；B − A {diff}",
    "cassette_model": "模型",
    "cassette_prompt_version": "prompt 版本",
    "cassette_note": "備註",
    "cassette_replayed_from": "重播自",
    "cassette_experiment": "實驗",
    "cassette_suite_hash": "套件雜湊",
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
    "plan_met_line": "已達計畫：每個案例都有 {runs}。",
    "replayed_line": "{runs}執行的模型回應重播自錄製檔：是同一份紀錄的重播，不是模型的獨立試驗。",
    "requested_k_varied": "要求的 k = {least} 到 {most}，依案例而定",
    "k_range": "{least} 到 {most}，依案例而定",
    "plan_met_varied": "已達計畫：每個案例都有要求它的計入次數（{held}）。",
    "held_k": "{cases}要求 k = {k}",
    "k_varies_note": "自適應規則對不同案例要求了不同的 k：以執行次數計的通過率較看重多跑的案例，"
    "各案例通過率的平均則每個案例同等計；pass@j / pass^j 取案例被要求的最少次數。",
    "adaptive_rounds": "自適應回合",
    "plan_not_met_line": "未達計畫：資料集指標是 {at} / {hat}，不是 pass@{k} / pass^{k}。",
    "plan_not_met_left_out": "未達計畫：{cases} 個案例中有 {left} 個沒有計入的執行，不列入計算；資料集指標只涵蓋其餘 {included} 個案例。",
    "plan_not_met_left_out_one": "未達計畫：{cases} 個案例中有 {left} 個沒有計入的執行，不列入計算；資料集指標只涵蓋其餘 {included} 個案例。",
    "shortfall_line": "要求 {k} 次，計入 {counted} 次",
    "shortfall_line_one": "要求 {k} 次，計入 {counted} 次",
    "missing_runs": "缺少的執行（沒有紀錄）",
    "errored_runs": "出錯的執行（沒有判定）",
    "limit_runs": "因上限停止的執行（--max-turns、--token-budget）：計入，依其達到的狀態評分",
    "left_out": "未納入（沒有計入的執行）",
    "no_counted_run": "尚無計入的執行：算不出 pass@k",
    # dataset figures
    "dataset": "資料集",
    "pass_rate": "單次通過率（以執行次數計）",
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
    "ci_method_floor": "以全部執行算 Wilson 區間：群集標準誤低於二項下限",
    "ci_method_score": "以 {cases} 個案例的有效試驗次數計算的 Wilson 分數區間",
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
    "curves_note": "{cases} 個納入案例的無偏估計值平均，j 從 1 到 {n}（各案例計入次數的最小值）。"
    "j = 1 時兩條曲線都是各案例通過率的平均，不是以執行次數計的通過率。",
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
    "traceback": "追蹤紀錄（traceback）",
    "see_traceback": "代理的追蹤紀錄：passhat show {ref} 案例 次數",
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
    "page_of": "第 {page} 頁，共 {pages} 頁",
    "previous": "上一頁",
    "next": "下一頁",
    "not_embedded": "這次執行的細節不在頁面裡（見表格上方的說明）；請用此指令列出：",
    "detail_left_out": "本頁只收錄第 1 到第 {last} 個案例（共 {cases} 個）各次執行的對話紀錄、"
    "工具呼叫與最終狀態。其他執行：`passhat show {ref} CASE RUN` 印出整筆紀錄，"
    "`passhat view` 在瀏覽器中提供每次執行。",
    "cannot_unpack": "這個瀏覽器無法解開對話紀錄（不支援 DecompressionStream）。",
    "back_to_grid": "回到表格",
    # terminal: the metrics table and the accounting panel
    "table_caption": "n = 各案例計入的執行次數；資料集列使用 j = {j}，每個納入的案例都達到；"
    " 資料集列的通過率以執行次數計（全部通過／全部計入）",
    "table_caption_cases": "n = 各案例計入的執行次數；資料集列使用 j = {j}，每個納入的案例都達到；"
    "各案例計入的執行次數不同，資料集列的通過率取各案例通過率的平均，每個案例算一次"
    "（以執行次數計：{over}）",
    "more_cases_hidden": "；另有 {more}未列出（--all 列出每個案例，--json 含全部）",
    "dataset_row": "資料集\n（{cases}）",
    "requested_k_is": "要求的 k = {k}",
    "k_inferred_hint": "（由最大的執行編號推斷；用 --k 明確指定）",
    "k_inferred": "（由最大的執行編號推斷）",
    "run_counts": "執行次數：要求 {requested}、完成 {completed}、計入 {counted}、"
    "出錯 {errored}、缺少 {missing}",
    "shortfall_case": "{case}：要求 {k} 次，計入 {counted} 次（{detail}）",
    "shortfall_case_one": "{case}：要求 {k} 次，計入 {counted} 次（{detail}）",
    "missing_run_list": "缺少第 {runs} 次",
    "errored_run_list": "第 {runs} 次出錯",
    "more_short": "……另有 {more}未達計畫",
    "more_short_all": "……另有 {more}未達計畫（--all 列出全部，--json 含全部）",
    "and_more": "，另有 {n} 個",
    "sep": "；",
    "list_sep": "、",
    "period": "。",
    # terminal: intervals
    "intervals_note": "信賴區間：{note}",
    "ci_one_case": "只有一個案例有計入的執行：資料集的區間需要 2 個以上的案例",
    "intervals_title": "有多確定？{cases} 個案例的 {conf} 區間",
    "intervals_caption": "區間描述的是重新抽出一批同類案例、每個案例執行同樣次數時的情形；"
    "同一案例的各次執行一起抽取。",
    "intervals_rough": "案例少於 10 個時，區間只是粗估。",
    "figure": "指標",
    "estimate": "估計值",
    "interval": "{conf} 區間",
    "method": "方法",
    "method_robust": "群集穩健標準誤，t({df})",
    "method_bootstrap": "群集 bootstrap，B = {resamples}",
    "method_exact": "精確界限，每個案例都是 {value}",
    "share_of": "比例：{label}",
    "next_all_pass": "接下來 {m} 次全部通過",
    "credible_method": "可信區間；{method}",
    "share_method": "{prior}，以動差配適的 Beta 分布",
    "prior_jeffreys": "Jeffreys 先驗 Beta(1/2, 1/2)",
    "prior_uniform": "均勻先驗 Beta(1, 1)",
    "prior_fitted": "配適的先驗 {beta}",
    # statistics (issue 13): names, methods, ledger, per-case tests
    "label_rate": "單次通過率（以執行次數計）",
    "label_case_rate": "單次通過率（各案例通過率的平均）",
    "label_at_1": "pass@1（各案例通過率的平均）",
    "label_hat_1": "pass^1（各案例通過率的平均）",
    "rate_over_runs_note": "單次通過率（以執行次數計）= 全部通過次數／全部計入次數；"
    "各案例通過率的平均是 {mean}",
    "case_rate_note": "各案例計入的執行次數不同，所以單次通過率取各案例通過率的平均（每個案例算一次）；"
    "以執行次數計的通過率（全部通過次數／全部計入次數）是 {over}",
    "method_bootstrap_widened": "群集 bootstrap，B = {resamples}，放寬到二項下限",
    "method_at_k_bounds": "完整執行可能得到的範圍（未計入的執行算失敗、算通過），各附分數區間",
    "method_floor": "以全部 {runs} 次執行算 Wilson 區間，t({df})：群集標準誤低於二項下限",
    "method_score": "有連續性校正的 Wilson 分數區間，有效樣本數 n = {n}，t({df})",
    "method_score_floor": "有連續性校正的 Wilson 分數區間，有效樣本數 n = {n}，採二項下限，t({df})",
    "share_fitted": "跨案例配適的 Beta({a}, {b})，群集 bootstrap 每次重新配適，B = {resamples}",
    "share_per_case": "{prior}，逐案例",
    "share_fitted_one_p": "跨案例配適的 Beta({a}, {b})，群集 bootstrap 每次重新配適，B = {resamples}，"
    "或所有案例同一個 p（案例間沒有超出執行本身的變異）",
    "share_basis_fitted": "跨案例配適的 Beta({a}, {b})",
    "share_few_cases": "無區間：只有 {n} 個案例；校準的資料集預測至少需要 {min} 個",
    "share_one_case": "無區間：只有 {n} 個案例；校準的資料集預測至少需要 {min} 個",
    "share_no_spread": "無區間：每次計入的執行都通過（或都失敗），沒有可配適的變異",
    "share_no_pairs": "無區間：沒有案例有 2 次計入的執行，無法區分案例間與執行間的變異",
    "no_interval": "無區間",
    "at_requested": "{label}：達到 k = {k} 的 {cases}（未納入 {left} 個）",
    "at_requested_every": "{label}：k = {k}，全部案例（{cases}達到 k，{left} 個未達）",
    "method_loss_bounds": "最壞情況的界限：未計入的執行（出錯或缺少）算失敗、算通過，各附分數區間",
    "loss_row": "{label}：不論未計入的執行隱藏了什麼",
    "loss_line": "若 {lost}與結果無關，{label} 為 {estimate} [{low}–{high}]；"
    "不論它們隱藏了什麼，為 {bound_low}–{bound_high}{unseen}。",
    "loss_unseen": "（沒有計入執行的 {cases}仍算在內，以 0 與 1 計）",
    "n_lost_run": "{n} 次未計入的執行",
    "n_lost_runs": "{n} 次未計入的執行",
    "ledger_title": "未計入的執行：最多會讓指標變動多少？",
    "ledger_head": "{cases}中有 {errored}。每個指標分別以"
    "排除未計入的執行（如上）、算失敗、算通過計算：",
    "ledger_and_missing": "{errored}與 {missing}",
    "n_missing_run": "{n} 次缺少的執行",
    "n_missing_runs": "{n} 次缺少的執行",
    "ledger_excluded": "排除",
    "ledger_failures": "算失敗",
    "ledger_passes": "算通過",
    "ledger_warning": "警告：出錯的執行集中在通過率低的案例：它們所在案例的計入執行通過 {where}，"
    "而完成的執行所在案例是 {overall}（z = {z}）。排除出錯可能高估以計入次數加權的{figures}；請看上面的範圍。",
    "case_tests_caption": "逐案例（q 值欄）：Fisher 精確檢定，對所有配對案例以 {correction} 校正；"
    "q < {alpha} 的案例標上 *。",
    "case_q": "q 值",
    # terminal: per-case forecast
    "forecast_title": "各案例：通過率區間與接下來 {m} 次執行的預測",
    "forecast_title_one": "各案例：通過率區間與接下來 {m} 次執行的預測",
    "forecast_caption": "P(接下來 {m} 次全部通過) = E[p^{m}]，採用 {prior}。"
    "n 次全部通過時，失敗率低於 1 - {alpha}^(1/n)（單尾；即「三法則」：95 % 時約為 3/n）。",
    "rate_wilson": "通過率 {conf}（Wilson）",
    "p_next_pass": "P(接下來 {m} 次通過)",
    "credible": "{conf} 可信區間",
    "nn_bound": "n/n 界限",
    "bound_fail": "失敗率 < {pct}",
    "bound_pass": "通過率 < {pct}",
    "expected_share": "預期比例",
    # terminal: plans (--plan)
    "plan_title": "規劃",
    "plan_head": "{label}：目前約 ±{now} 個百分點（{cases} 個案例，每個 {runs} 次執行）；"
    "要在 {conf} 下達到 ±{target} 個百分點：",
    "plan_runs": "這 {cases} 個案例每個執行 {runs} 次，或",
    "plan_runs_one": "這 {cases} 個案例每個執行 {runs} 次，或",
    "plan_no_runs": "這 {cases} 個案例不論執行幾次都達不到；",
    "plan_cases": "以目前的執行次數需要 {needed} 個案例（不論執行幾次，至少 {floor} 個案例）",
    "plan_few_cases": "規劃至少需要 2 個有計入執行的案例；目前只有 {cases} 個",
    "plan_no_repeat": "規劃需要至少一個案例有 2 次以上計入的執行，才看得出案例內的變異",
    "plan_no_spread": "每次計入的執行都通過（或都未通過）：沒有變異可供規劃；"
    "此時區間是跨案例的精確界限，大約以 3.7 / 案例數 縮小",
    "plan_no_spread_hat": "每個案例的 pass^{j} 都是 {value}：沒有變異可供規劃；"
    "區間是跨案例的精確界限，大約以 3.7 / 案例數 縮小",
    "plan_no_within": "需要至少一個案例有 2 次以上計入的執行，才能區分案例內與案例間的變異",
    # terminal: comparison
    "experiment_source": "實驗 {name}（代理 {agent}，模型 {model}）",
    "paired": "配對：{n} 個案例兩邊都有計入的執行",
    "only_in_a": "只在 A 中（未納入）",
    "only_in_b": "只在 B 中（未納入）",
    "one_side_uncounted": "其中一邊沒有計入的執行（未納入）",
    "note_no_suite_hash": "{side} 沒有測試集雜湊（是判定檔）：無法確認兩邊跑的是同一個測試集",
    "note_suites_differ": "測試集不同：A 跑的是測試集 {a}，B 跑的是測試集 {b}；只比較兩邊都有的案例",
    "diff_title": "{cases} 個配對案例的 B − A",
    "diff_caption": "pass@{j} / pass^{j}：每個配對案例在兩邊都達到的最大 j"
    "（A 要求 {ka} 次，B 要求 {kb} 次）。p：雙尾符號翻轉置換檢定，B = {resamples}{flips}"
    "（通過率：各案例通過率差以該案例的執行次數占比加權）。區間：{method}；"
    "區間不含 0 恰好就是判定 B 較好或較差的時候",
    "method_for": "{labels}的區間：{method}",
    "cmp_method_flip": "反轉符號翻轉檢定：檢定不拒絕的所有平移",
    "cmp_method_case_rate": "反轉符號翻轉檢定與成對 t 檢定，每個案例算一次：兩者都不拒絕的所有平移",
    "cmp_method_floor": "反轉符號翻轉檢定，並放寬到二項下限：每個配對案例的變動都相同",
    "cmp_method_disagree": "反轉符號翻轉檢定，並放寬到包含以執行計的通過率："
    "以執行次數加權的案例差方向相反，因此不下判定",
    "mde_none": "；MDE –：以這麼少的案例偵測不到任何差異",
    "mde_no_test": "案例這麼少，符號翻轉檢定無法達到 p < {alpha}",
    "mde_over_100": "MDE 會超過 100 個百分點",
    "verdict_undetectable": "以 {cases} 個配對案例偵測不到差異（{why}）：{evidence}。",
    "every_flip": "（列舉了每一種翻轉）",
    "mde_at_power": "；MDE 以 {power} 檢定力計算。",
    "pts": "{value} 個百分點",
    "range": "{low} 至 {high}",
    "no_case_moved": "沒有任何配對案例的通過率改變。",
    "passes_over_counted": "通過次數／計入次數",
    "more_in_json": "；另有 {n} 個在 --json 中",
    "moved_title": "有變化：{cases} 個案例中的 {moved} 個",
    "delta_rate": "Δ 通過率",
    "verdict_evidence": "{label} {diff}（{conf} 區間 {low} 至 {high}，p = {p}），"
    "共 {cases} 個配對案例",
    "verdict_better": "B 比較好：{evidence}。",
    "verdict_worse": "B 比較差：{evidence}。",
    "verdict_none": "以目前的規模偵測不到差異（檢定力 {power} 下 MDE = {mde}）：{evidence}。",
    "verdict_to_detect": "要在 {power} 檢定力下偵測到 {diff}：約需 {needed} 個案例、"
    "每個執行 {runs_n}",
    "verdict_or_runs": "，或這 {cases} 個案例每個執行 {runs_n}",
    "n_run": "{n} 次",
    "n_runs": "{n} 次",
    "verdict_runs_cannot": "；在這些案例上多執行幾次也達不到",
    # terminal: the experiment report
    "counted_runs_paren": "（計入的執行）",
    "completed_runs_paren": "（完成的執行）",
    "extra_in": "多標於第 {runs} 次",
    "all": "全部",
    "more_item_cases": "另有 {more}的項目穩定度：請用 --all 或 --json",
    "calls_in_runs": "{runs}執行各呼叫 {calls} 次",
    "errored_line": "出錯：{case} 第 {run} 次：{type}: {message}",
    "limit_line": "上限：{case}：{n} 次計入的執行因 --max-turns 或 --token-budget 而停止"
    "（第 {runs} 次），依其達到的狀態評分",
    "more_errored": "……另有 {more}（--json 會全部列出）",
    "retried_line": "重試：{again}在出錯後重新執行（保留了 {earlier} 次先前的嘗試）；"
    "重試的執行通過 {retried}，首次嘗試通過 {first}。只重試出錯的執行可能使數字偏差：請比較兩者。",
    # terminal: run and resume
    "run_start": "實驗 {id}：{cases} × k={k} = {runs}執行 → {path}",
    "runs_to_do": "實驗 {id}：還要做 {runs}執行",
    "watch_live": "即時觀看：{url}",
    "nothing_to_do": "實驗 {id}：沒有要做的，要求的執行都已記錄"
    "（{runs}執行：通過 {passed}、未通過 {failed}、出錯 {errored}）",
    "nothing_to_do_errored": "；`passhat resume {ref} --errored` 會重新執行出錯的執行",
    "nothing_to_do_more": "；`passhat resume {ref} -k {k}` 會為每個案例要求更多次執行",
    "n_case": "{n} 個案例",
    "n_cases": "{n} 個案例",
    "n_counted_run": "{n} 次計入的執行",
    "n_counted_runs": "{n} 次計入的執行",
    "n_more_case": "{n} 個案例",
    "n_more_cases": "{n} 個案例",
    "n_more_errored": "{n} 次出錯的執行",
    "n_more_erroreds": "{n} 次出錯的執行",
    "n_run_again": "{n} 次執行",
    "n_run_agains": "{n} 次執行",
    "n_errored_run": "{n} 次出錯的執行",
    "n_errored_runs": "{n} 次出錯的執行",
    "summary_only": "{runs}執行：只列數字與帳目；項目穩定度與工具使用：passhat report {ref}",
    "report_skipped": "已記錄 {runs}執行；報告：passhat report {ref}",
    "interrupted": "已中斷：記錄了 {done}執行，進行中的執行已捨棄（算作缺少）；"
    "`passhat resume {ref}` 會執行其餘的部分",
    "tally": "通過 {passed} · 未通過 {failed} · 出錯 {errored}",
    "wrote": "已寫入 {path}",
    "cassette_gaps": "警告：錄製檔 {cassette} 在 {total}執行中有 {n} 次沒有回答（案例：{cases}），這些執行將以錯誤結束。請用 --case 選擇有錄製的案例。",
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


def tn(key: str, lang: str, n: int) -> str:
    """A count with its noun in `lang`: `n_run` for 1 and `n_runs` otherwise (English has
    a plural; the Chinese entries are the same for both)."""
    return t(key if n == 1 else key + "s", lang, n=f"{n:,}")


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


# Why runs differ (passhat.report.diff): the divergence tree and the item evidence of a
# case section. Kept together at the end so the two catalogs gain them side by side.
_EN.update(
    {
        "why_run": "run {runs}",
        "why_runs": "runs {runs}",
        "why_and": " and ",
        "why_turn": "turn {n}",
        "why_turns": "turns {first}–{last}",
        "why_same": "the same",
        "why_branched_at": "branched at turn {n}: ",
        "why_ended": "{runs} ended there",
        "why_identical": "identical to the end",
        "why_more_branches": "… {n} more branches ({runs})",
        "why_tree_title": "divergence · {case} (turns of each run)",
        "why_agree_until": "{runs} agree until turn {n}",
        "why_the_input": " (the input)",
        "why_agree_end": "{runs} agree to the end",
        "why_branched_one": "{runs} branched at turn {n}",
        "why_branched_each": "{runs} each branched at turn {n}",
        "why_sep": "; ",
        "why_turn_call": "call #{n}",
        "why_turns_call": "calls #{first}–#{last}",
        "why_branched_at_call": "branched at call #{n}: ",
        "why_tree_title_call": "divergence · {case} (tool calls of each run: no transcript)",
        "why_agree_until_call": "{runs} agree until call #{n}",
        "why_branched_one_call": "{runs} branched at call #{n}",
        "why_branched_each_call": "{runs} each branched at call #{n}",
        "why_graded": "graded differently: {runs} did the same (steps, output and final "
        "state), yet {verdicts} ({scorers} differed: a nondeterministic scorer or judge)",
        "why_the_verdict": "the verdict",
        "why_no_turns": "divergence · {case}: {runs} hold no transcript, so there are no turns "
        "to compare",
        "why_no_transcript": "{runs}: no transcript",
        "ev_title": "item evidence · {case} (which turn wrote it)",
        "ev_held": "held by",
        "ev_written": "written by",
        "ev_extra": " (extra)",
        "ev_write": "turn {turn}, {tool} call {call}",
        "ev_write_no_turn": "{tool} call {call}",
        "ev_absent": " (absent from the final state)",
        "ev_no_call": "in the final state, but no tool call carried it",
        "ev_none": "written by no run",
        "ev_source": "source",
        "ev_sent": "sent to {runs} ({where})",
        "ev_message": "message {n}",
        "ev_unsent": "never sent to {runs}",
        "ev_no_search": "{runs}: no transcript to search",
        "ev_no_suite": "item evidence needs the suite's scorers, and the suite at {path} cannot "
        "be read ({reason})",
        "ev_not_run_here": "item evidence needs the suite's scorers; experiment {ref} was "
        "{kind}, so there is none",
        "ev_no_case": "item evidence: the suite at {path} no longer has case {case}",
        "ev_case_changed": "the case file of {case} changed since these runs: the evidence "
        "reads its goal and input as they are now",
        "pair_title": "compare two runs",
        "sig_title": "what goes with a miss (within case, across the experiment)",
        "sig_pair": "e.g.",
        "sig_more": "all of them, with the runs behind each:",
        "pair_first": "first diverge at turn {n}",
        "pair_same": "the same, turn by turn",
        "pair_no_transcript": "{runs} hold no transcript: nothing to align",
        "pair_only_in": "only in {run}",
        "pair_in_both": "in both",
        "pair_state": "other differences in the final state",
        "pair_turns": "turns",
        "pair_calls": "tool calls, aligned",
        "pair_no_turn": "(no such turn)",
        "pair_same_turn": "(the same in both)",
        "pair_too_many": "{n} runs: compare two with passhat diff {ref} {case} A B",
        "pair_pick_same": "pick two different runs",
        "pair_first_call": "no transcript: the tool calls first diverge at call #{n}",
        "pair_same_calls": "no transcript: the same tool calls, call by call",
        "pair_error": "error",
        "pair_output": "output",
        "pair_graded": "graded differently: the same steps, output and final state ({scorers} differed: a nondeterministic scorer or judge)",
        "why_skipped": "divergence and item evidence: shown for the first {n} cases of the "
        "page (passhat diff compares any two runs)",
    }
)
_ZH_TW.update(
    {
        "why_run": "第 {runs} 次",
        "why_runs": "第 {runs} 次",
        "why_and": " 和 ",
        "why_turn": "第 {n} 回合",
        "why_turns": "第 {first}–{last} 回合",
        "why_same": "相同",
        "why_branched_at": "於第 {n} 回合分岔：",
        "why_ended": "{runs}在此結束",
        "why_identical": "直到結束都相同",
        "why_more_branches": "……另有 {n} 個分支（{runs}）",
        "why_tree_title": "分歧 · {case}（各次執行的回合）",
        "why_agree_until": "{runs}到第 {n} 回合為止都相同",
        "why_the_input": "（輸入）",
        "why_agree_end": "{runs}直到結束都相同",
        "why_branched_one": "{runs}在第 {n} 回合分岔",
        "why_branched_each": "{runs}各自在第 {n} 回合分岔",
        "why_sep": "；",
        "why_turn_call": "第 {n} 次工具呼叫",
        "why_turns_call": "第 {first}–{last} 次工具呼叫",
        "why_branched_at_call": "於第 {n} 次工具呼叫分岔：",
        "why_tree_title_call": "分歧 · {case}（各次執行的工具呼叫：沒有對話紀錄）",
        "why_agree_until_call": "{runs}到第 {n} 次工具呼叫為止都相同",
        "why_branched_one_call": "{runs}在第 {n} 次工具呼叫分岔",
        "why_branched_each_call": "{runs}各自在第 {n} 次工具呼叫分岔",
        "why_graded": "評分不一致：{runs}做的完全相同（步驟、輸出與最終狀態），結果卻是"
        "{verdicts}（{scorers} 不同：評分器或評審不確定）",
        "why_the_verdict": "判定",
        "why_no_turns": "分歧 · {case}：{runs}沒有對話紀錄，無從比較回合",
        "why_no_transcript": "{runs}：沒有對話紀錄",
        "ev_title": "項目證據 · {case}（由哪一回合寫入）",
        "ev_held": "出現於",
        "ev_written": "寫入者",
        "ev_extra": "（多標）",
        "ev_write": "第 {turn} 回合，{tool} 第 {call} 次呼叫",
        "ev_write_no_turn": "{tool} 第 {call} 次呼叫",
        "ev_absent": "（最終狀態中沒有）",
        "ev_no_call": "在最終狀態中，但沒有工具呼叫帶有它",
        "ev_none": "沒有任何一次執行寫入",
        "ev_source": "來源",
        "ev_sent": "已送給{runs}（{where}）",
        "ev_message": "第 {n} 則訊息",
        "ev_unsent": "從未送給{runs}",
        "ev_no_search": "{runs}：沒有對話紀錄可搜尋",
        "ev_no_suite": "項目證據需要測試集的評分器，但 {path} 的測試集無法讀取（{reason}）",
        "ev_not_run_here": "項目證據需要測試集的評分器；實驗 {ref} 是{kind}的，沒有測試集",
        "ev_no_case": "項目證據：{path} 的測試集已沒有案例 {case}",
        "ev_case_changed": "{case} 的案例檔在這些執行之後改過：證據依它現在的目標與輸入判讀",
        "pair_title": "比較兩次執行",
        "sig_title": "與漏掉相關的特徵（同一案例內比較，跨整個實驗）",
        "sig_pair": "例如",
        "sig_more": "全部及各自背後的執行：",
        "pair_first": "從第 {n} 回合開始分歧",
        "pair_same": "每一回合都相同",
        "pair_no_transcript": "{runs}沒有對話紀錄：無從對齊",
        "pair_only_in": "只在{run}",
        "pair_in_both": "兩者都有",
        "pair_state": "最終狀態的其他差異",
        "pair_turns": "回合",
        "pair_calls": "工具呼叫（對齊）",
        "pair_no_turn": "（沒有這一回合）",
        "pair_same_turn": "（兩者相同）",
        "pair_too_many": "{n} 次執行：用 passhat diff {ref} {case} A B 比較兩次",
        "pair_pick_same": "請選兩次不同的執行",
        "pair_first_call": "沒有對話紀錄：工具呼叫從第 {n} 次開始分歧",
        "pair_same_calls": "沒有對話紀錄：每一次工具呼叫都相同",
        "pair_error": "錯誤",
        "pair_output": "輸出",
        "pair_graded": "評分不一致：步驟、輸出與最終狀態都相同（{scorers} 不同：評分器或評審不確定）",
        "why_skipped": "分歧與項目證據只列出本頁前 {n} 個案例（passhat diff 可比較任兩次執行）",
    }
)
