"""An experiment's report: header, the three numbers with accounting, item stability,
the tool-use profile; as rich renderables and as JSON-ready data.

Everything that came from a case file, a model or a tool enters as `Text`, never
as markup. Labels come from `passhat.report.i18n` in the `lang` asked for; data
(case ids, items, tools, error messages) is shown as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress, repeat
from operator import attrgetter, countOf, gt
from typing import TYPE_CHECKING, Any

from rich import box
from rich import table as rich_table
from rich.console import Console
from rich.text import Text

from passhat._gc import without_gc
from passhat.accounting import Accounting, Ledger, duplicate_run
from passhat.analysis import (
    ItemStability,
    RunColumns,
    ToolUse,
    item_dicts,
    item_stability,
    run_columns,
    tool_dicts,
    tool_profile,
)
from passhat.limits import limit_dicts, limit_runs
from passhat.records import COMMAND_AGENT, ExperimentRecord, RunRecord, RunSummary, agent_label
from passhat.report.digest import Digest, ToolTally, digest, tool_tallies
from passhat.report.i18n import LABELS, t, tn, verdict_label
from passhat.report.summary import case_dict, summary_with_uncertainty
from passhat.report.table import Fitted, Table
from passhat.report.terminal import (
    ROWS_SHOWN,
    case_width,
    print_metrics,
    shortfall_lines,
    shown_cases,
)
from passhat.sources import source_figures_line, source_line
from passhat.stats import Uncertainty, uncertainty
from passhat.usage import Prices, TokenUsage, usage_by_case, usage_row

if TYPE_CHECKING:
    from passhat.report.why import CaseWhy
    from passhat.signatures import Why

ReportRun = RunRecord | RunSummary
"""A report reads `Store.summaries` (fast); whole records work too."""

LoadRuns = Callable[[Sequence[str]], Sequence[ReportRun]]
"""The runs of some cases, per-item results read (`Store.summaries(cases=...)`)."""


@without_gc
def experiment_accounting(experiment: ExperimentRecord, runs: Sequence[ReportRun]) -> Accounting:
    """Requested / completed / counted per planned case, from the stored runs."""
    cases: dict[str, dict[int, str]] = {case_id: {} for case_id in experiment.case_ids}
    for run in runs:  # Ledger.add inlined: 100,000 runs
        case_runs = cases.get(run.case_id)
        if case_runs is None:
            case_runs = cases[run.case_id] = {}
        elif run.run_index in case_runs:
            raise duplicate_run(run.case_id, run.run_index)
        case_runs[run.run_index] = run.status
    return Ledger.of(cases).close(experiment.k_requested, experiment.case_k)


def experiments_table(
    experiments: Sequence[ExperimentRecord],
    counts: dict[str, dict[str, int]],
    *,
    title: str = "",
    lang: str = "en",
) -> Table:
    """`passhat list`: one row per experiment. Runs are counted / planned, then errored:
    an experiment whose runs all errored never reads as done. No text is cut short;
    a long name or model folds onto another line. Two lines an experiment at 80
    columns (it took four, with a blank line between experiments)."""
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
        title=Text(t("experiments_in", lang, path=title)),
        title_justify="left",
        caption=Text(t("list_caption", lang)),
        caption_justify="left",
    )
    # at 80 columns a 28-character model or agent fits whole; a longer name folds
    table.add_column(t("experiment", lang), overflow="fold", min_width=8, max_width=18)
    table.add_column(t("created", lang), no_wrap=True)
    table.add_column(t("configuration", lang), overflow="fold", min_width=20)
    table.add_column("k", justify="right", no_wrap=True)
    for key in ("counted", "errored"):  # never squeezed: they are the point of the list
        table.add_column(t(key, lang), justify="right", no_wrap=True, min_width=len(t(key, lang)))
    for e in experiments:
        status = counts.get(e.id, {})
        counted = status.get("passed", 0) + status.get("failed", 0)
        errored = status.get("errored", 0)
        planned = e.runs_requested
        ref = Text(e.id)
        if e.name:
            ref.append("\n").append(e.name, style="bold")
        # two lines an experiment at 80 columns: suite · agent, then the model
        configuration = Text(e.suite_name, style="bold")
        configuration.append(" · ").append(agent_label(e.agent))
        configuration.append("\n").append(e.model or t("no_model", lang), style="dim")
        table.add_row(
            ref,
            e.created_at[:16].replace("T", " "),
            configuration,
            str(e.k_requested),
            Text(f"{counted}/{planned}", style="" if counted == planned else "bold yellow"),
            Text(str(errored), style="bold red" if errored else ""),
        )
    return table


def made_model_calls(runs: Sequence[ReportRun]) -> bool:
    """Did any run get a model answer? A run says so by its model source (live or
    replayed); one recorded before runs kept their source shows it by its tokens.
    With no run yet, calls are still to come."""
    return not runs or any(r.model_source is not None or r.input_tokens for r in runs)


def recorded_note(recorded: dict[str, Any], lang: str = "en") -> str:
    """What a cassette says about its recording, in words: `model gpt-5.4-mini, prompt
    version cd590b9ba593, ...`; a nested description (replayed from) in parentheses,
    empty values left out. Never a Python repr."""
    parts = []
    for key, value in recorded.items():
        if value is None or value == "" or value == {} or value == []:
            continue
        name = LABELS[lang].get(f"cassette_{key}") or str(key).replace("_", " ")
        if isinstance(value, dict):
            parts.append(f"{name} ({recorded_note(value, lang)})")
        elif isinstance(value, list):
            parts.append(f"{name} " + ", ".join(str(v) for v in value))
        else:
            parts.append(f"{name} {value}")
    return ", ".join(parts)


def _requested_k(e: ExperimentRecord, lang: str) -> str:
    """`5`, or `2 to 6, per case` when an adaptive rule asked cases for different k."""
    if not e.case_k:
        return str(e.k_requested)
    least = min(min(e.case_k.values()), e.k_requested)
    return t("k_range", lang, least=least, most=e.k_requested)


def header_rows(
    e: ExperimentRecord, runs: Sequence[ReportRun] = (), *, lang: str = "en"
) -> list[tuple[str, str]]:
    """(label key, value) of the report's header, for the terminal and the HTML page."""
    rows = [
        ("experiment", f"{e.id}" + (f" ({e.name})" if e.name else "")),
        ("suite", f"{e.suite_name}  {t('suite_hash', lang)} {e.suite_hash[:12]}"),
        ("agent", agent_label(e.agent)),
        ("model", e.model or t("no_model", lang)),
        ("prompt_version", e.prompt_version or "–"),
        ("requested_k", _requested_k(e, lang)),
        ("fingerprint", e.fingerprint),
        ("created", e.created_at),
    ]
    recorded = e.model_config.get("recorded") if isinstance(e.model_config, dict) else None
    if isinstance(recorded, dict) and recorded:
        # a cassette's note describes answers; an experiment that got none used none of it
        if made_model_calls(runs):
            rows.append(("cassette", recorded_note(recorded, lang)))
        else:
            rows.append(("cassette", t("cassette_unused", lang)))
    sealing = isolation_of(e)
    if sealing is not None:
        rows.append(("isolation", t(f"isolation_{sealing['level']}", lang)))
    origin = source_line(e)
    if origin is not None:
        rows.append(("source", origin))
    figures = source_figures_line(e)
    if figures is not None:
        rows.append(("source_figures", figures))
    return rows


def isolation_of(e: ExperimentRecord) -> dict[str, Any] | None:
    """How sealed the runs of an experiment passhat ran were (None for runs it imported or
    audited): a command agent at its level, an in-process agent not at all."""
    if e.kind != "run":
        return None
    if not e.agent.startswith(COMMAND_AGENT):
        return {"level": "in-process", "sealed": False}
    level = str(e.params.get("isolation", "namespace"))
    return {"level": level, "sealed": level == "namespace"}


def header_table(
    e: ExperimentRecord, runs: Sequence[ReportRun] = (), *, lang: str = "en"
) -> rich_table.Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, value in header_rows(e, runs, lang=lang):
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
    return tally_cell(Counter(calls), lang)


def tally_cell(tally: Mapping[int, int], lang: str = "en") -> str:
    """Runs by calls made, most runs first: `1 in 9,500 runs, 0 in 500 runs`."""
    ordered = sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))
    return t("list_sep", lang).join(
        t("calls_in_runs", lang, calls=n, runs=tn("n_run", lang, runs)) for n, runs in ordered
    )


def tools_table(
    uses: Sequence[ToolUse | ToolTally], *, limit: int | None = ROWS_SHOWN, lang: str = "en"
) -> Table:
    """Per tool: how many runs called it and how often; one section per case.

    Past `limit` runs (None: no limit) the calls per run are tallied (a `ToolTally`
    comes tallied)."""
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
            (
                tally_cell(u.tally, lang)
                if isinstance(u, ToolTally)
                else calls_cell(u.calls_per_run, limit, lang)
            ),
            str(u.errors),
        ]
        table.add_row(*(row if single else [Text(u.case or t("all", lang)), *row]))
    return table


def money(value: float | None) -> str:
    """A cost: enough digits for a cent's fraction (a run often costs less than a cent)."""
    if value is None:
        return "–"
    return f"{value:,.2f}" if value >= 100 else f"{value:.4g}"


def _per_run(u: TokenUsage) -> str:
    per = u.per_run(u.tokens)
    return "–" if per is None else f"{per:,.0f}"


def usage_table(
    runs: Sequence[ReportRun],
    prices: Prices | None,
    *,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
    read: Digest | None = None,
) -> Table | None:
    """Tokens (and cost, with prices) per case and for the whole experiment; None when
    no run used a token and no price was given (an agent that calls no model). The
    totals come from `read`, the runs' digest (made here when not given); per-case
    totals only for the cases listed."""
    read = digest(runs) if read is None else read
    input_tokens, output_tokens = read.input_tokens, read.output_tokens
    cost = prices.cost(input_tokens, output_tokens) if prices is not None else None
    total = TokenUsage(len(runs), input_tokens, output_tokens, cost)
    if total.tokens == 0 and prices is None:
        return None
    shown = read.order
    shown_runs: Iterable[ReportRun] = runs
    if limit is not None and len(shown) > limit:
        shown_runs = read.runs_of(runs, shown[:limit])
    by_case = usage_by_case(
        ((r.case_id, r.input_tokens, r.output_tokens) for r in shown_runs), prices
    )
    caption = t("price_note", lang, prices=prices.text()) if prices else t("price_hint", lang)
    table = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        title=t("usage_title" if prices else "usage_title_tokens", lang),
        title_justify="left",
        caption=Text(caption),
        caption_justify="left",
    )
    listed = list(by_case.items())
    listed = listed if limit is None else listed[:limit]
    table.add_column(t("case", lang), overflow="fold", min_width=case_width(c for c, _ in listed))
    for key in ("runs", "tokens_in", "tokens_out", "tokens_per_run"):
        table.add_column(t(key, lang), justify="right")
    if prices:
        table.add_column(t("cost", lang), justify="right")
        table.add_column(t("cost_per_run", lang), justify="right")

    def row(name: Text, u: TokenUsage) -> list[Text | str]:
        cells: list[Text | str] = [
            name,
            str(u.runs),
            f"{u.input_tokens:,}",
            f"{u.output_tokens:,}",
            _per_run(u),
        ]
        if prices:
            cells += [money(u.cost), money(u.per_run(u.cost))]
        return cells

    for case, u in listed:
        table.add_row(*row(Text(case), u))
    table.add_section()
    table.add_row(*row(Text(t("usage_all", lang), style="bold"), total))
    return table


def usage_dict(
    runs: Sequence[ReportRun], prices: Prices | None, columns: RunColumns | None = None
) -> dict[str, Any]:
    """Tokens and cost per experiment, per case and per run, as JSON-ready data."""
    columns = run_columns(runs) if columns is None else columns
    cases = columns.cases
    tokens_in = list(map(_INPUT_TOKENS, runs))
    tokens_out = list(map(_OUTPUT_TOKENS, runs))
    if columns.ordered:  # each case's runs in one stretch: sums of slices, in C
        per_case = []
        start = 0
        for case, size in columns.sizes.items():
            end = start + size
            row = usage_row(size, sum(tokens_in[start:end]), sum(tokens_out[start:end]), prices)
            per_case.append({"case": case, **row})
            start = end
    else:
        by_case = usage_by_case(zip(cases, tokens_in, tokens_out, strict=True), prices)
        per_case = [{"case": case, **u.to_dict()} for case, u in by_case.items()]
    indices = columns.indices
    if prices is None:
        per_run = [
            {"case": c, "run": i, "input_tokens": a, "output_tokens": b, "cost": None}
            for c, i, a, b in zip(cases, indices, tokens_in, tokens_out, strict=True)
        ]
    else:
        cost = prices.cost
        per_run = [
            {"case": c, "run": i, "input_tokens": a, "output_tokens": b, "cost": cost(a, b)}
            for c, i, a, b in zip(cases, indices, tokens_in, tokens_out, strict=True)
        ]
    return {
        "prices_per_million": (
            {"input": prices.input, "output": prices.output} if prices else None
        ),
        # the total of the per-case sums, as `usage_total` makes it
        "experiment": usage_row(len(runs), sum(tokens_in), sum(tokens_out), prices),
        "cases": per_case,
        "runs": per_run,
    }


_INPUT_TOKENS = attrgetter("input_tokens")
_OUTPUT_TOKENS = attrgetter("output_tokens")
_ATTEMPT = attrgetter("attempt")
_MODEL_SOURCE = attrgetter("model_source")


MAX_ERRORED_LINES = 20


def experiment_uncertainty(
    accounting: Accounting, forecast_m: int, only: set[str] | None = None
) -> Uncertainty:
    """Intervals and forecasts with the defaults of `passhat metrics` (seeded: reproducible)."""
    return uncertainty(accounting, m=forecast_m, seed=0, only=only)


def replayed_runs(runs: Sequence[ReportRun]) -> int:
    """Runs whose model answers came from a cassette: re-plays, not independent trials."""
    return countOf(map(_MODEL_SOURCE, runs), "replayed")


def print_experiment_report(
    console: Console,
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    *,
    forecast_m: int = 10,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
    prices: Prices | None = None,
    why: Callable[[str], CaseWhy] | None = None,
    signatures: Why | None = None,
    load: LoadRuns | None = None,
) -> Accounting:
    """Print the whole report in `lang`; return the accounting (for --strict).

    At most `limit` cases are listed in each table (None: all); figures cover all.
    `signatures` (`Explainer.overview`): the failure signatures, last, capped.
    `load`: the runs of the listed cases with their per-item results, when `runs`
    were read without them (`Store.summaries(read_items=False)`)."""
    read = digest(runs, experiment.case_ids)  # every run read once, for every part
    accounting = Ledger.of(read.statuses).close(experiment.k_requested, experiment.case_k)
    print_figures(
        console,
        experiment,
        accounting,
        forecast_m=forecast_m,
        limit=limit,
        lang=lang,
        replayed=read.replayed,
        runs=runs,
    )
    print_details(
        console,
        experiment,
        runs,
        accounting,
        limit=limit,
        lang=lang,
        prices=prices,
        read=read,
        why=why,
        load=load,
    )
    if signatures is not None:
        from passhat.report.why import signatures_lines

        lines = signatures_lines(signatures, experiment.name or experiment.id)
        if lines:
            console.print()
        for style, line in lines:
            console.print(Text(line, style=style), soft_wrap=True)
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
    runs: Sequence[ReportRun] = (),
) -> None:
    """The header, the three numbers with intervals and forecasts, and the accounting:
    all of it from the accounting and the count of `replayed` runs (a summary needs
    no run loaded)."""
    console.print(header_table(experiment, runs, lang=lang))
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
        listed = shortfall_lines(accounting, lang, limit)  # every case, when every run errored
        for line in listed:
            console.print(Text("  " + line))
        short = sum(1 for c in accounting.cases if not c.complete)
        if len(listed) < short:
            more = tn("n_more_case", lang, short - len(listed))
            console.print(Text("  " + t("more_short", lang, more=more)))
        if replayed:
            line = t("replayed_line", lang, runs=tn("n_run", lang, replayed))
            console.print(Text(line, "yellow"))
    print_adaptive(console, experiment, lang)


def print_adaptive(console: Console, experiment: ExperimentRecord, lang: str = "en") -> None:
    """The stored adaptive rounds: the rule used, each look, why they stopped and the
    runs they spent (plain text: no model output is in them)."""
    if not experiment.adaptive:
        return  # passhat.adaptive (and its imports) only for an experiment that has rounds
    from passhat.adaptive import record_lines

    for record in experiment.adaptive:
        console.print()
        console.print(Text(t("adaptive_rounds", lang), style="bold"))
        for line in record_lines(record):
            console.print(Text(line), soft_wrap=True)


def print_details(
    console: Console,
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    accounting: Accounting,
    *,
    limit: int | None = ROWS_SHOWN,
    lang: str = "en",
    prices: Prices | None = None,
    read: Digest | None = None,
    why: Callable[[str], CaseWhy] | None = None,
    load: LoadRuns | None = None,
) -> None:
    """Item stability, tool use, tokens and the errored runs, `limit` cases at most each
    (from `read`, the runs' digest, when the caller has it); with `why` (a case's
    divergence tree and item evidence, `passhat.report.why.Explainer`), each case's
    items are followed by them. With `load`, the listed cases' runs are read again
    with their per-item results (`runs` have none)."""
    read = digest(runs) if read is None else read
    # item stability of the first `limit` cases that have graded items: only their runs
    listed = read.graded if limit is None else read.graded[:limit]
    by_case: dict[str, list[ItemStability]] = {}
    graded = read.runs_of(runs, listed) if load is None or not listed else load(listed)
    for item in item_stability(graded):
        by_case.setdefault(item.case, []).append(item)
    for case, items in by_case.items():
        console.print(Fitted(items_table(case, items, lang=lang)))
        if why is not None:  # the divergence tree and item evidence, beside the items
            print_why(console, why(case), lang)
    if why is not None and not by_case:  # no item graded (e.g. imported): the trees alone
        recorded = list(dict.fromkeys(r.case_id for r in runs))
        for case in recorded if limit is None else recorded[:limit]:
            print_why(console, why(case), lang)
    if len(listed) < len(read.graded):
        more = tn("n_more_case", lang, len(read.graded) - len(listed))
        console.print(Text(t("more_item_cases", lang, more=more)))
    uses = tool_rows(runs, experiment.tools, len(accounting.cases), limit, read)
    if uses:
        console.print(Fitted(tools_table(uses, limit=limit, lang=lang)))
    usage = usage_table(runs, prices, limit=limit, lang=lang, read=read)
    if usage is not None:
        console.print(Fitted(usage))
    errored = read.errored
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
        more = tn("n_more_errored", lang, len(errored) - MAX_ERRORED_LINES)
        console.print(Text(t("more_errored", lang, more=more)))
    for case, indices in limit_runs(runs).items():
        line = t("limit_line", lang, case=case, n=len(indices), runs=_runs(indices, lang))
        console.print(Text(line, "yellow"))
    retried = retry_summary(runs) if read.retried else None
    if retried is not None:
        line = t(
            "retried_line",
            lang,
            again=tn("n_run_again", lang, retried["runs_retried"]),
            earlier=retried["earlier_attempts"],
            retried=_rate(retried["retried"]),
            first=_rate(retried["first_attempt"]),
        )
        console.print(Text(line, "yellow"))
    if any(r.traceback for r in errored):
        ref = experiment.name or experiment.id
        console.print(Text(t("see_traceback", lang, ref=ref), style="dim"))


def print_why(console: Console, why: CaseWhy, lang: str = "en") -> None:
    """A case's divergence tree and item evidence (`passhat.report.diff`)."""
    from passhat.report.diff import why_renderables

    for part in why_renderables(why, lang):
        console.print(part)


def tool_rows(
    runs: Sequence[ReportRun],
    tools: Sequence[str],
    cases: int,
    limit: int | None,
    read: Digest,
) -> Sequence[ToolUse | ToolTally]:
    """The tool-use table's rows: per case when every case is listed, else for the whole
    experiment, tallied when its runs are too many to list (`tools_table`)."""
    if limit is None or cases <= limit:
        return tool_profile(runs, tools, per_case=True)
    if len(runs) <= limit or not read.ordered:  # tools named in (case, run) order
        return tool_profile(runs, tools, per_case=False)
    return tool_tallies(read, tools)


def retry_summary(runs: Sequence[ReportRun]) -> dict[str, Any] | None:
    """How many runs `resume --errored` ran again, and the pass rates of retried runs and
    of first attempts (retrying only failures can bias figures); None when none was."""
    retried = list(compress(runs, map(gt, map(_ATTEMPT, runs), repeat(1))))
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


def _experiment_head(experiment: ExperimentRecord) -> dict[str, Any]:
    return {
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
        "case_k": dict(experiment.case_k),
        "fingerprint": experiment.fingerprint,
        "harness_version": experiment.harness_version,
        "kind": experiment.kind,
        "source": experiment.source,
        "isolation": isolation_of(experiment),
    }


def _accounting_dict(accounting: Accounting, runs: Sequence[ReportRun]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "k_requested": accounting.k_requested,
        "complete": accounting.complete,
        "runs_requested": accounting.runs_requested,
        "runs_completed": accounting.runs_completed,
        "runs_counted": accounting.runs_counted,
        "runs_errored": accounting.runs_errored,
        "runs_missing": accounting.runs_missing,
        "runs_replayed": replayed_runs(runs),
    }
    if accounting.k_varies:  # an adaptive rule asked cases for different k
        out["k_least"] = accounting.k_least
        out["k_per_case"] = {str(k): n for k, n in accounting.held().items()}
    return out


def _errored_dicts(runs: Sequence[ReportRun], columns: RunColumns) -> list[dict[str, Any]]:
    return [
        {
            "case": r.case_id,
            "run": r.run_index,
            "type": r.error_type,
            "message": r.error_message,
            "traceback": r.traceback,
        }
        for r in compress(runs, map("errored".__eq__, columns.statuses))
    ]


def _retried(runs: Sequence[ReportRun]) -> dict[str, Any] | None:
    # no run was tried again (the usual case): known in C, without a pass in Python
    return retry_summary(runs) if runs and max(map(_ATTEMPT, runs)) > 1 else None


@without_gc
def experiment_dict(
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    *,
    forecast_m: int = 10,
    prices: Prices | None = None,
    unseen: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report as JSON-ready data, intervals and forecasts included; `unseen`
    (`Unseen.to_dict`: tokens billed beyond the recorded runs) goes last when given."""
    columns = run_columns(runs)  # read once: every part below reads them
    accounting = experiment_accounting(experiment, runs)
    data: dict[str, Any] = {"experiment": _experiment_head(experiment)}
    if accounting.runs_counted:
        from passhat.report.summary_json import representatives

        # intervals and forecasts depend on a case's counted runs and passes alone:
        # computed for one case of each, copied to the others
        u = experiment_uncertainty(accounting, forecast_m, representatives(accounting))
        data.update(summary_with_uncertainty(accounting, u, twins=True))
    else:  # no figures yet, but the accounting still says which runs are missing
        data["dataset"] = None
        data["cases"] = [case_dict(c) for c in accounting.cases]
    data["adaptive"] = [dict(r) for r in experiment.adaptive]
    data["accounting"] = _accounting_dict(accounting, runs)
    data["items"] = item_dicts(runs, columns)
    data["tools"] = tool_dicts(runs, experiment.tools, columns)
    data["usage"] = usage_dict(runs, prices, columns)
    data["errored"] = _errored_dicts(runs, columns)
    data["limit"] = limit_dicts(runs)
    data["retried"] = _retried(runs)
    if unseen is not None:
        data["unseen"] = dict(unseen)
    return data


def experiment_json(
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    *,
    forecast_m: int = 10,
    prices: Prices | None = None,
    unseen: Mapping[str, Any] | None = None,
) -> tuple[Accounting, Iterator[bytes]]:
    """The accounting, and `experiment_dict` as compact JSON (NaN as null) in pieces:
    what `report --json` writes to a pipe. The cases are written shape by shape
    (`passhat.report.summary_json`: intervals and forecasts only for one case of each
    counted runs and passes); every other part is serialised and let go before the
    next is built, so the whole report is never held at once (at 100,000 runs: 80 MB
    less, 0.1 s less). tests/test_report_json.py checks it byte for byte."""
    accounting = experiment_accounting(experiment, runs)
    return accounting, _json_pieces(experiment, runs, accounting, forecast_m, prices, unseen)


def _json_pieces(
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    accounting: Accounting,
    forecast_m: int,
    prices: Prices | None,
    unseen: Mapping[str, Any] | None = None,
) -> Iterator[bytes]:
    from pydantic_core import to_json

    from passhat.report.parts_json import item_json, tool_json, usage_json

    def dumps(value: Any) -> bytes:
        return to_json(value, inf_nan_mode="null")

    columns = run_columns(runs)
    yield b'{"experiment":' + dumps(_experiment_head(experiment))
    if accounting.runs_counted:
        from passhat.report.summary_json import representatives, summary_json_chunks

        u = experiment_uncertainty(accounting, forecast_m, representatives(accounting))
        # one object {"dataset": ..., "cases": [...]}: its keys go into the report's
        pieces = summary_json_chunks(accounting, u)
        previous = "," + next(pieces).removeprefix("{")
        for piece in pieces:
            yield previous.encode()
            previous = piece
        yield previous.removesuffix("}").encode()
    else:
        yield b',"dataset":null,"cases":' + dumps([case_dict(c) for c in accounting.cases])
    yield b',"adaptive":' + dumps([dict(r) for r in experiment.adaptive])
    yield b',"accounting":' + dumps(_accounting_dict(accounting, runs))
    yield b',"items":'
    for piece in item_json(runs, columns):
        yield piece.encode()
    yield b',"tools":'
    for piece in tool_json(runs, experiment.tools, columns):
        yield piece.encode()
    usage = usage_json(runs, columns) if prices is None else None
    if usage is None:  # costs, or runs as no store gives them: the dict
        yield b',"usage":' + dumps(usage_dict(runs, prices, columns))
    else:
        yield b',"usage":'
        for piece in usage:
            yield piece.encode()
    yield b',"errored":' + dumps(_errored_dicts(runs, columns))
    yield b',"limit":' + dumps(limit_dicts(runs))
    yield b',"retried":' + dumps(_retried(runs))
    yield (b"" if unseen is None else b',"unseen":' + dumps(dict(unseen))) + b"}"
