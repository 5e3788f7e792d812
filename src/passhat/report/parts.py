"""The parts of an experiment's terminal report that are tables and values of their own:
the header (and the recorded cassette in words), the item stability and tool-use tables,
tokens and cost (as a table and as JSON-ready data), and `passhat list`'s table of
experiments.

Everything that came from a case file, a model or a tool enters as `Text`, never as
markup. Labels come from `passhat.report.i18n` in the `lang` asked for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from rich import table as rich_table
from rich.text import Text

from passhat.analysis import ItemStability, RunColumns, ToolUse, run_columns
from passhat.records import ExperimentRecord, RunRecord, RunSummary, agent_label
from passhat.report.console import one_line
from passhat.report.digest import Digest, ToolTally, digest
from passhat.report.i18n import LABELS, t, tn, verdict_label
from passhat.report.json_frame import isolation_of as isolation_of
from passhat.report.table import Table, titled_table
from passhat.report.terminal import ROWS_SHOWN, case_width
from passhat.usage import Prices, TokenUsage, usage_by_case, usage_row

ReportRun = RunRecord | RunSummary
"""A report reads `Store.summaries` (fast); whole records work too."""


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
    table = titled_table(
        Text(t("experiments_in", lang, path=title)),
        padding=(0, 1, 0, 0),
        show_edge=False,
        collapse_padding=True,
        caption=Text(t("list_caption", lang)),
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
    e: ExperimentRecord,
    runs: Sequence[ReportRun] = (),
    *,
    lang: str = "en",
    calls: bool | None = None,
) -> list[tuple[str, str]]:
    """(label key, value) of the report's header, for the terminal and the HTML page.
    `calls`: whether a run got a model answer, when known (else read from `runs`)."""
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
        answered = made_model_calls(runs) if calls is None else calls
        if answered:
            rows.append(("cassette", recorded_note(recorded, lang)))
        else:
            rows.append(("cassette", t("cassette_unused", lang)))
    sealing = isolation_of(e)
    if sealing is not None:
        rows.append(("isolation", t(f"isolation_{sealing['level']}", lang)))
    if isinstance(e.source, dict):  # runs passhat did not make (none: both lines None)
        from passhat.sources import source_figures_line, source_line

        origin = source_line(e)
        if origin is not None:
            rows.append(("source", origin))
        figures = source_figures_line(e)
        if figures is not None:
            rows.append(("source_figures", figures))
    return rows


def header_table(
    e: ExperimentRecord,
    runs: Sequence[ReportRun] = (),
    *,
    lang: str = "en",
    calls: bool | None = None,
) -> rich_table.Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, value in header_rows(e, runs, lang=lang, calls=calls):
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
    table = titled_table(title, padding=(0, 1, 0, 0))
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
        table.add_row(Text(one_line(s.item)), found, missed, verdict)
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
    table = titled_table(title, padding=(0, 1, 0, 0))
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
    total = TokenUsage(read.runs, input_tokens, output_tokens, cost)
    if total.tokens == 0 and prices is None:
        return None
    shown = read.order if limit is None else read.order[:limit]
    if read.case_usage is not None:  # counted in SQL: no run to read
        by_case = {
            case: TokenUsage(n, i, o, prices.cost(i, o) if prices is not None else None)
            for case, (n, i, o) in ((case, read.case_usage[case]) for case in shown)
        }
    else:
        shown_runs = runs if len(shown) == len(read.order) else read.runs_of(runs, shown)
        by_case = usage_by_case(
            ((r.case_id, r.input_tokens, r.output_tokens) for r in shown_runs), prices
        )
    caption = t("price_note", lang, prices=prices.text()) if prices else t("price_hint", lang)
    table = titled_table(
        t("usage_title" if prices else "usage_title_tokens", lang),
        padding=(0, 1, 0, 0),
        caption=Text(caption),
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
