"""An experiment's report: header, the three numbers with accounting, item stability,
the tool-use profile; as rich renderables and as JSON-ready data.

Everything that came from a case file, a model or a tool enters as `Text`, never
as markup. Labels come from `passhat.report.i18n` in the `lang` asked for; data
(case ids, items, tools, error messages) is shown as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.accounting import Accounting, Ledger
from passhat.analysis import ItemStability, ToolUse, item_stability, tool_profile
from passhat.records import ExperimentRecord, RunRecord, agent_label
from passhat.report.i18n import t, verdict_label
from passhat.report.summary import case_dict, summary_with_uncertainty
from passhat.report.terminal import ROWS_SHOWN, print_metrics, shortfall_lines, shown_cases
from passhat.sources import source_figures_line, source_line
from passhat.stats import Uncertainty, uncertainty


def experiment_accounting(experiment: ExperimentRecord, runs: Sequence[RunRecord]) -> Accounting:
    """Requested / completed / counted per planned case, from the stored runs."""
    ledger = Ledger()
    for case_id in experiment.case_ids:
        ledger.expect(case_id)
    for run in runs:
        ledger.add(run.case_id, run.run_index, run.status)
    return ledger.close(experiment.k_requested)


def header_table(e: ExperimentRecord, *, lang: str = "en") -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    suite = f"{e.suite_name}  {t('suite_hash', lang)} {e.suite_hash[:12]}"
    rows = [
        ("experiment", f"{e.id}" + (f" ({e.name})" if e.name else "")),
        ("suite", suite),
        ("agent", agent_label(e.agent)),
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


def tools_table(uses: Sequence[ToolUse], *, lang: str = "en") -> Table:
    """Per tool: how many runs called it and how often; one section per case."""
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
            " ".join(str(n) for n in u.calls_per_run),
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


def replayed_runs(runs: Sequence[RunRecord]) -> int:
    """Runs whose model answers came from a cassette: re-plays, not independent trials."""
    return sum(1 for r in runs if r.model_source == "replayed")


def print_experiment_report(
    console: Console,
    experiment: ExperimentRecord,
    runs: Sequence[RunRecord],
    *,
    forecast_m: int = 10,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
) -> Accounting:
    """Print the whole report in `lang`; return the accounting (for --strict).

    At most `limit` cases are listed in each table (None: all); figures cover all."""
    accounting = experiment_accounting(experiment, runs)
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
            replayed=replayed_runs(runs),
        )
    else:
        console.print(Text(t("no_counted_run", lang), style="bold red"))
        for line in shortfall_lines(accounting, lang):
            console.print(Text("  " + line))
        if replayed_runs(runs):
            console.print(Text(t("replayed_line", lang, n=replayed_runs(runs)), "yellow"))
    by_case: dict[str, list[ItemStability]] = {}
    for item in item_stability(runs):
        by_case.setdefault(item.case, []).append(item)
    listed = list(by_case.items()) if limit is None else list(by_case.items())[:limit]
    for case, items in listed:
        console.print(items_table(case, items, lang=lang))
    if len(listed) < len(by_case):
        more = f"{len(by_case) - len(listed):,}"
        console.print(Text(t("more_item_cases", lang, n=more)))
    per_case = limit is None or len(accounting.cases) <= limit
    uses = tool_profile(runs, experiment.tools, per_case=per_case)
    if uses:
        console.print(tools_table(uses, lang=lang))
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
    return accounting


def experiment_dict(
    experiment: ExperimentRecord, runs: Sequence[RunRecord], *, forecast_m: int = 10
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
    return data
