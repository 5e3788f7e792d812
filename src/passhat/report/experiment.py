"""An experiment's report: the accounting of its runs, the whole terminal report
(header, the three numbers with accounting, item stability, the tool-use profile,
tokens, errored runs) and the JSON-ready data of `report --json`. The tables and values
the report is made of are in `passhat.report.parts`.

Everything that came from a case file, a model or a tool enters as `Text`, never
as markup. Labels come from `passhat.report.i18n` in the `lang` asked for; data
(case ids, items, tools, error messages) is shown as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import compress, repeat
from operator import attrgetter, countOf, gt
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

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
from passhat.limits import limit_dicts
from passhat.records import ExperimentRecord
from passhat.report.digest import Digest, ToolTally, digest, pass_rate_dict, tool_tallies
from passhat.report.i18n import t, tn
from passhat.report.json_frame import (
    _accounting_dict,
    _error,
    _experiment_head,
    errored_dicts,
    json_bytes,
    json_head,
    json_tail,
)
from passhat.report.json_frame import (
    experiment_uncertainty as experiment_uncertainty,
)
from passhat.report.parts import (
    ReportRun,
    _runs,
    header_table,
    items_table,
    tools_table,
    usage_dict,
    usage_table,
)
from passhat.report.summary import case_dict, summary_with_uncertainty
from passhat.report.table import Fitted
from passhat.report.terminal import ROWS_SHOWN, print_metrics, shortfall_lines, shown_cases
from passhat.usage import Prices

if TYPE_CHECKING:
    from passhat.report.why import CaseWhy
    from passhat.signatures import Why

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


_ATTEMPT = attrgetter("attempt")
_MODEL_SOURCE = attrgetter("model_source")


MAX_ERRORED_LINES = 20


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
    counted: tuple[Digest, Accounting] | None = None,
) -> Accounting:
    """Print the whole report in `lang`; return the accounting (for --strict).

    At most `limit` cases are listed in each table (None: all); figures cover all.
    `signatures` (`Explainer.overview`): the failure signatures, last, capped.
    `load`: the runs of the listed cases with their per-item results, when `runs`
    were read without them (`Store.summaries(read_items=False)`). `counted`: the
    digest and accounting of runs counted in SQL (`digest.tallied`), when `runs` are
    not read at all (then empty): `limit` cases are listed, and `load` reads them."""
    if counted is None:
        read = digest(runs, experiment.case_ids)  # every run read once, for every part
        accounting = Ledger.of(read.statuses).close(experiment.k_requested, experiment.case_k)
    else:
        read, accounting = counted
    print_figures(
        console,
        experiment,
        accounting,
        forecast_m=forecast_m,
        limit=limit,
        lang=lang,
        replayed=read.replayed,
        runs=runs,
        calls=read.model_calls,
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

        lines = signatures_lines(signatures, experiment.command_ref)
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
    calls: bool | None = None,
) -> None:
    """The header, the three numbers with intervals and forecasts, and the accounting:
    all of it from the accounting and the count of `replayed` runs (a summary needs
    no run loaded). `calls`: whether a run got a model answer, when known (else read
    from `runs`)."""
    console.print(header_table(experiment, runs, lang=lang, calls=calls))
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
        console.print(Text(t("errored_line", lang, **_error(r)), "red"))
    if len(errored) > MAX_ERRORED_LINES:
        more = tn("n_more_errored", lang, len(errored) - MAX_ERRORED_LINES)
        console.print(Text(t("more_errored", lang, more=more)))
    for case, indices in read.limited.items():
        line = t("limit_line", lang, case=case, n=len(indices), runs=_runs(indices, lang))
        console.print(Text(line, "yellow"))
    retried = read.retry or (retry_summary(runs) if read.retried else None)
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
        ref = experiment.command_ref
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
    if read.runs <= limit or not read.ordered:  # tools named in (case, run) order
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
    return pass_rate_dict(len(runs), counted, passed)


def _rate(rate: dict[str, Any]) -> str:
    if not rate["counted"]:
        return f"–/{rate['runs']}"
    return f"{rate['passed']}/{rate['counted']} ({rate['pass_rate']:.0%})"


def _errored_dicts(runs: Sequence[ReportRun], columns: RunColumns) -> list[dict[str, Any]]:
    return errored_dicts(compress(runs, map("errored".__eq__, columns.statuses)))


def _retried(runs: Sequence[ReportRun]) -> dict[str, Any] | None:
    # no run was tried again (the usual case): known in C, without a pass in Python
    return retry_summary(runs) if runs and max(map(_ATTEMPT, runs)) > 1 else None


class JsonOptions(TypedDict, total=False):
    """What the report's JSON is made with besides the experiment and its runs
    (`experiment_dict`, `experiment_json`): the forecast's horizon (default 10), the
    prices of its costs, `unseen` (`Unseen.to_dict`: tokens billed beyond the
    recorded runs, written last when given), and `kept_items` (`Store.kept_items`: each
    case's items text the store keeps, taken by `experiment_json` as it is)."""

    forecast_m: int
    prices: Prices | None
    unseen: Mapping[str, Any] | None
    kept_items: Mapping[str, str] | None


def _json_options(options: JsonOptions) -> tuple[int, Prices | None, Mapping[str, Any] | None]:
    """(forecast_m, prices, unseen), defaults filled; a misspelt option is a TypeError
    naming it, as a keyword parameter's would be, never silently ignored."""
    unknown = options.keys() - JsonOptions.__annotations__.keys()
    if unknown:
        raise TypeError(f"unexpected keyword argument {min(unknown)!r}")
    return options.get("forecast_m", 10), options.get("prices"), options.get("unseen")


@without_gc
def experiment_dict(
    experiment: ExperimentRecord, runs: Sequence[ReportRun], **options: Unpack[JsonOptions]
) -> dict[str, Any]:
    """The report as JSON-ready data, intervals and forecasts included (`JsonOptions`)."""
    forecast_m, prices, unseen = _json_options(options)
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
    data["accounting"] = _accounting_dict(accounting, replayed_runs(runs))
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
    experiment: ExperimentRecord, runs: Sequence[ReportRun], **options: Unpack[JsonOptions]
) -> tuple[Accounting, Iterator[bytes]]:
    """The accounting, and `experiment_dict` as compact JSON (NaN as null) in pieces:
    what `report --json` writes to a pipe. The cases are written shape by shape
    (`passhat.report.summary_json`: intervals and forecasts only for one case of each
    counted runs and passes); every other part is serialised and let go before the
    next is built, so the whole report is never held at once (at 100,000 runs: 80 MB
    less, 0.1 s less). tests/test_report_json.py checks it byte for byte."""
    forecast_m, prices, unseen = _json_options(options)
    accounting = experiment_accounting(experiment, runs)
    pieces = _json_pieces(
        experiment, runs, accounting, forecast_m, prices, unseen, options.get("kept_items")
    )
    return accounting, pieces


def _json_pieces(
    experiment: ExperimentRecord,
    runs: Sequence[ReportRun],
    accounting: Accounting,
    forecast_m: int,
    prices: Prices | None,
    unseen: Mapping[str, Any] | None = None,
    kept: Mapping[str, str] | None = None,
) -> Iterator[bytes]:
    from passhat.report.parts_json import item_json, tool_json, usage_json

    columns = run_columns(runs)
    yield from json_head(experiment, accounting, forecast_m, replayed_runs(runs))
    yield b',"items":'
    for piece in item_json(runs, columns, kept):
        yield piece.encode()
    yield b',"tools":'
    for piece in tool_json(runs, experiment.tools, columns):
        yield piece.encode()
    usage = usage_json(runs, columns) if prices is None else None
    if usage is None:  # costs, or runs as no store gives them: the dict
        yield b',"usage":' + json_bytes(usage_dict(runs, prices, columns))
    else:
        yield b',"usage":'
        for piece in usage:
            yield piece.encode()
    errored = list(compress(runs, map("errored".__eq__, columns.statuses)))
    yield from json_tail(errored, limit_dicts(runs), _retried(runs), unseen)
