"""An experiment's report: header, the three numbers with accounting, item stability,
the tool-use profile; as rich renderables and as JSON-ready data.

Everything that came from a case file, a model or a tool enters as `Text`, never
as markup. Labels come from `passhat.report.i18n` in the `lang` asked for; data
(case ids, items, tools, error messages) is shown as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.accounting import Accounting, Ledger
from passhat.analysis import ItemStability, ToolUse, item_stability, tool_profile
from passhat.records import ExperimentRecord, RunRecord, RunSummary
from passhat.report.i18n import t, verdict_label
from passhat.report.summary import case_dict, summary_with_uncertainty
from passhat.report.terminal import ROWS_SHOWN, print_metrics, shortfall_lines, shown_cases
from passhat.sources import source_figures_line, source_line
from passhat.stats import Uncertainty, uncertainty

ReportRun = RunRecord | RunSummary
"""A report reads `Store.summaries` (fast); whole records work too."""


def experiment_accounting(experiment: ExperimentRecord, runs: Sequence[ReportRun]) -> Accounting:
    """Requested / completed / counted per planned case, from the stored runs."""
    ledger = Ledger()
    for case_id in experiment.case_ids:
        ledger.expect(case_id)
    add = ledger.add
    for run in runs:
        add(run.case_id, run.run_index, run.status)
    return ledger.close(experiment.k_requested)


def header_table(e: ExperimentRecord, *, lang: str = "en") -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    suite = f"{e.suite_name}  {t('suite_hash', lang)} {e.suite_hash[:12]}"
    rows = [
        ("experiment", f"{e.id}" + (f" ({e.name})" if e.name else "")),
        ("suite", suite),
        ("agent", e.agent),
        ("model", e.model),
        ("prompt_version", e.prompt_version or "–"),
        ("requested_k", str(e.k_requested)),
        ("fingerprint", e.fingerprint),
        ("created", e.created_at),
    ]
    recorded = e.model_config.get("recorded") if isinstance(e.model_config, dict) else None
    if isinstance(recorded, dict) and recorded:
        note = ", ".join(f"{k} {v}" for k, v in recorded.items())
        rows.append(("cassette", note))
    origin = source_line(e)
    if origin is not None:
        rows.append(("source", origin))
    figures = source_figures_line(e)
    if figures is not None:
        rows.append(("source_figures", figures))
    for key, value in rows:
        table.add_row(t(key, lang), Text(value))
    return table


def _runs(indices: Sequence[int], lang: str) -> str:
    return t("list_sep", lang).join(str(i) for i in indices) if indices else "–"


def items_table(case: str, items: Sequence[ItemStability], *, lang: str = "en") -> Table:
    """One case's goal items (then extras) across its counted runs."""
    title = Text.assemble(
        t("item_stability", lang) + " · ",
        Text(case, style="bold"),
        t("counted_runs_paren", lang),
    )
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=title,
        title_justify="left",
    )
    table.add_column(t("item", lang), overflow="fold")
    for key in ("found", "missed_in_runs", "verdict"):
        table.add_column(t(key, lang), no_wrap=True)
    for s in items:
        if s.expected:
            found = f"{len(s.hits)}/{len(s.runs)}"
            missed = _runs(s.misses, lang)
            style = {"always found": "green", "always missed": "bold red"}.get(s.verdict, "yellow")
        else:
            found = f"+{len(s.hits)}/{len(s.runs)}"
            missed = t("extra_in", lang, runs=_runs(s.hits, lang))
            style = "magenta"
        # English keeps the analysis' own words ("extra, sometimes"), as before.
        label = s.verdict if lang == "en" else verdict_label(s.verdict, lang)
        verdict = Text(label, style=style)
        table.add_row(Text(s.item), found, missed, verdict)
    return table


def calls_cell(calls: Sequence[int], limit: int | None, lang: str = "en") -> str:
    """Calls in each run, or past `limit` runs (None: no limit) a tally: `1 in 9,500 runs, 0 in 500 runs`."""
    if limit is None or len(calls) <= limit:
        return " ".join(str(n) for n in calls)
    tally = sorted(Counter(calls).items(), key=lambda kv: (-kv[1], kv[0]))
    return t("list_sep", lang).join(
        t("calls_in_runs", lang, calls=n, runs=f"{runs:,}") for n, runs in tally
    )


def tools_table(
    uses: Sequence[ToolUse], *, limit: int | None = ROWS_SHOWN, lang: str = "en"
) -> Table:
    """Per tool: how many runs called it and how often; one section per case.

    Past `limit` runs (None: no limit) the calls per run are tallied."""
    cases = list(dict.fromkeys(u.case for u in uses))
    single = len(cases) == 1
    title = Text(t("tool_use", lang) + t("completed_runs_paren", lang))
    if single and cases[0]:
        title.append(" · ").append(cases[0], style="bold")
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=title,
        title_justify="left",
    )
    columns = ["tool", "runs_calling", "calls_per_run", "errors"]
    for key in columns if single else ["case", *columns]:
        table.add_column(t(key, lang))
    previous: str | None = None
    for u in uses:
        if not single and previous is not None and u.case != previous:
            table.add_section()
        previous = u.case
        row: list[Text | str] = [
            Text(u.tool),
            t("runs_calling_of", lang, calling=u.runs_calling, runs=u.runs),
            calls_cell(u.calls_per_run, limit, lang),
            str(u.errors),
        ]
        table.add_row(*(row if single else [Text(u.case or t("all", lang)), *row]))
    return table


MAX_ERRORED_LINES = 20


def experiment_uncertainty(
    accounting: Accounting, forecast_m: int, only: set[str] | None = None
) -> Uncertainty:
    """Intervals and forecasts with the defaults of `passhat metrics` (seeded: reproducible)."""
    return uncertainty(accounting, m=forecast_m, seed=0, only=only)


def replayed_runs(runs: Sequence[ReportRun]) -> int:
    """Runs whose model answers came from a cassette: re-plays, not independent trials."""
    return sum(1 for r in runs if r.model_source == "replayed")


def print_experiment_report(
    console: Console,
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    *,
    forecast_m: int = 10,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
) -> Accounting:
    """Print the whole report in `lang`; return the accounting (for --strict).

    At most `limit` cases are listed in each table (None: all); figures cover all."""
    accounting = experiment_accounting(experiment, runs)
    print_figures(
        console,
        experiment,
        accounting,
        forecast_m=forecast_m,
        limit=limit,
        lang=lang,
        replayed=replayed_runs(runs),
    )
    print_details(console, experiment, runs, accounting, limit=limit, lang=lang)
    return accounting


def print_figures(
    console: Console,
    experiment: ExperimentRecord,
    accounting: Accounting,
    *,
    forecast_m: int = 10,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
    replayed: int = 0,
) -> None:
    """The header, the three numbers with intervals and forecasts, and the accounting:
    all of it from the accounting and the count of `replayed` runs (a summary needs
    no run loaded)."""
    console.print(header_table(experiment, lang=lang))
    console.print()
    if accounting.runs_counted:
        shown = {c.case for c in shown_cases(accounting, limit)}
        u = experiment_uncertainty(accounting, forecast_m, None if limit is None else shown)
        print_metrics(
            console,
            accounting,
            uncertainty=u,
            limit=limit,
            lang=lang,
            replayed=replayed,
        )
    else:
        console.print(Text(t("no_counted_run", lang), style="bold red"))
        for line in shortfall_lines(accounting, lang):
            console.print(Text("  " + line))
        if replayed:
            console.print(Text(t("replayed_line", lang, n=replayed), "yellow"))


def print_details(
    console: Console,
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    accounting: Accounting,
    *,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
) -> None:
    """Item stability, tool use and the errored runs, `limit` cases at most each."""
    # item stability of the first `limit` cases that have graded items: only their runs
    graded = list(dict.fromkeys(r.case_id for r in runs if r.counted and r.graded_items))
    listed = set(graded if limit is None else graded[:limit])
    by_case: dict[str, list[ItemStability]] = {}
    for item in item_stability(r for r in runs if r.case_id in listed):
        by_case.setdefault(item.case, []).append(item)
    for case, items in by_case.items():
        console.print(items_table(case, items, lang=lang))
    if len(listed) < len(graded):
        more = f"{len(graded) - len(listed):,}"
        console.print(Text(t("more_item_cases", lang, n=more)))
    per_case = limit is None or len(accounting.cases) <= limit
    uses = tool_profile(runs, experiment.tools, per_case=per_case)
    if uses:
        console.print(tools_table(uses, limit=limit, lang=lang))
    errored = [r for r in runs if r.status == "errored"]
    for r in errored[:MAX_ERRORED_LINES]:
        line = t(
            "errored_line",
            lang,
            case=r.case_id,
            run=r.run_index,
            type=r.error_type,
            message=r.error_message,
        )
        console.print(Text(line, "red"))
    if len(errored) > MAX_ERRORED_LINES:
        more = str(len(errored) - MAX_ERRORED_LINES)
        console.print(Text(t("more_errored", lang, n=more)))
    retried = retry_summary(runs)
    if retried is not None:
        line = t(
            "retried_line",
            lang,
            n=retried["runs_retried"],
            earlier=retried["earlier_attempts"],
            retried=_rate(retried["retried"]),
            first=_rate(retried["first_attempt"]),
        )
        console.print(Text(line, "yellow"))


def retry_summary(runs: Sequence[ReportRun]) -> dict[str, Any] | None:
    """How many runs `resume --errored` ran again, and the pass rates of retried runs and
    of first attempts (retrying only failures can bias figures); None when none was."""
    retried = [r for r in runs if r.attempt > 1]
    if not retried:
        return None
    return {
        "runs_retried": len(retried),
        "earlier_attempts": sum(r.attempt - 1 for r in retried),
        "retried": _pass_rate(retried),
        "first_attempt": _pass_rate([r for r in runs if r.attempt == 1]),
    }


def _pass_rate(runs: Sequence[ReportRun]) -> dict[str, Any]:
    counted = sum(1 for r in runs if r.counted)
    passed = sum(1 for r in runs if r.status == "passed")
    return {
        "runs": len(runs),
        "counted": counted,
        "passed": passed,
        "pass_rate": passed / counted if counted else None,
    }


def _rate(rate: dict[str, Any]) -> str:
    if not rate["counted"]:
        return f"–/{rate['runs']}"
    return f"{rate['passed']}/{rate['counted']} ({rate['pass_rate']:.0%})"


def experiment_dict(
    experiment: ExperimentRecord, runs: Sequence[ReportRun], *, forecast_m: int = 10
) -> dict[str, Any]:
    """The report as JSON-ready data, intervals and forecasts included."""
    accounting = experiment_accounting(experiment, runs)
    data: dict[str, Any] = {
        "experiment": {
            "id": experiment.id,
            "name": experiment.name,
            "created_at": experiment.created_at,
            "suite": experiment.suite_name,
            "suite_hash": experiment.suite_hash,
            "agent": experiment.agent,
            "model": experiment.model,
            "model_config": experiment.model_config,
            "params": experiment.params,
            "prompt_version": experiment.prompt_version,
            "k_requested": experiment.k_requested,
            "fingerprint": experiment.fingerprint,
            "harness_version": experiment.harness_version,
            "kind": experiment.kind,
            "source": experiment.source,
        }
    }
    if accounting.runs_counted:
        u = experiment_uncertainty(accounting, forecast_m)
        data.update(summary_with_uncertainty(accounting, u))
    else:  # no figures yet, but the accounting still says which runs are missing
        data["dataset"] = None
        data["cases"] = [case_dict(c) for c in accounting.cases]
    data["accounting"] = {
        "k_requested": accounting.k_requested,
        "complete": accounting.complete,
        "runs_requested": accounting.runs_requested,
        "runs_completed": accounting.runs_completed,
        "runs_counted": accounting.runs_counted,
        "runs_errored": accounting.runs_errored,
        "runs_missing": accounting.runs_missing,
        "runs_replayed": replayed_runs(runs),
    }
    data["items"] = [
        {
            "case": s.case,
            "scorer": s.scorer,
            "item": s.item,
            "expected": s.expected,
            "runs": list(s.runs),
            "hits": list(s.hits),
            "misses": list(s.misses),
            "verdict": s.verdict,
        }
        for s in item_stability(runs)
    ]
    data["tools"] = [
        {
            "case": u.case,
            "tool": u.tool,
            "runs": u.runs,
            "runs_calling": u.runs_calling,
            "calls_per_run": list(u.calls_per_run),
            "errors": u.errors,
        }
        for u in tool_profile(runs, experiment.tools)
    ]
    data["errored"] = [
        {"case": r.case_id, "run": r.run_index, "type": r.error_type, "message": r.error_message}
        for r in runs
        if r.status == "errored"
    ]
    data["retried"] = retry_summary(runs)
    return data
